package io.sparkgpu.scan;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The outcome of a scan: the clusters (most likely first, then non-overlapping secondary clusters), the
 * maximum LLR of every Monte Carlo replica and the settings that produced them. {@link #compute} is the one
 * algorithm behind every surface (local engine, Spark estimator, CLI); only the {@link Runner} that executes
 * the scans and replicas differs.
 */
public final class ScanResult implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Executes full scans and replica batches (on local threads, a GPU or Spark tasks). */
    public interface Runner {
        /** The best range over all ranges [0, M) under {@code spec}. */
        ScanBest best(ScanSpec spec);

        /** Maximum LLR of replicas 0 .. count-1 of {@code seed}. */
        double[] replicaMaxima(ScanSpec spec, long seed, int count);

        /** "gpu", "cpu" or "mixed": where the work ran so far. */
        String backend();
    }

    private final ScanShape shape;
    private final ScanModel model;
    private final ScanSpec spec;
    private final List<ScanCluster> clusters;
    private final double[] replicaLlrs;
    private final long seed;
    private final double totalCases;
    private final double totalBaseline;
    private final String backend;

    public ScanResult(ScanShape shape, ScanModel model, ScanSpec spec, List<ScanCluster> clusters, double[] replicaLlrs,
                      long seed, double totalCases, double totalBaseline, String backend) {
        this.shape = shape;
        this.model = model;
        this.spec = spec;
        this.clusters = List.copyOf(clusters);
        this.replicaLlrs = replicaLlrs.clone();
        this.seed = seed;
        this.totalCases = totalCases;
        this.totalBaseline = totalBaseline;
        this.backend = backend;
    }

    /**
     * Monte Carlo p-value of an LLR against the replica maxima: (1 + #{r : max_r >= llr}) / (R + 1)
     * (the rank convention of Dwass 1957 and SaTScan, never 0); NaN when R = 0.
     */
    public static double pValue(double llr, double[] replicaMaxima) {
        if (replicaMaxima.length == 0) {
            return Double.NaN;
        }
        long atLeast = 0;
        for (double m : replicaMaxima) {
            if (m >= llr) {
                atLeast++;
            }
        }
        return (1.0 + atLeast) / (replicaMaxima.length + 1.0);
    }

    /** A cluster with the sums of {@code best}'s box read from the tables (p-value still NaN). */
    static ScanCluster cluster(ScanTables t, int rank, ScanBest best) {
        int[] box = t.shape.decode(best.index);
        long dc = t.boxSum(t.casesPrefix, box);
        long db = t.boxSum(t.basePrefix, box);
        double[] oe = t.observedExpected(dc, db);
        double base = t.model == ScanModel.BERNOULLI || t.model == ScanModel.NORMAL ? db
                : Math.scalb((double) db, -t.baseShift);
        return new ScanCluster(rank, best.index, box, best.llr, oe[0], oe[1], t.relativeRisk(dc, db), base, Double.NaN);
    }

    /**
     * The scan: the most likely cluster, then up to {@code numClusters - 1} secondary clusters (each the best
     * range overlapping none of the earlier ones, so one more full scan each), stopping early when no range
     * with a positive LLR is left; then {@code numReplicas} replicas scanned under the same constraints
     * (without the exclusions) and every cluster's p-value from their maxima.
     */
    public static ScanResult compute(ScanTables t, ScanSpec spec, int numClusters, int numReplicas, long seed,
                                     Runner runner) {
        if (numClusters < 1 || numClusters > ScanSpec.MAX_EXCLUDED + 1) {
            throw new IllegalArgumentException("numClusters must be in [1, " + (ScanSpec.MAX_EXCLUDED + 1) + "], got "
                    + numClusters);
        }
        if (numReplicas < 0) {
            throw new IllegalArgumentException("numReplicas must be >= 0, got " + numReplicas);
        }
        if (numReplicas > 0) {
            ScanReplicas.checkSupported(t);
        }
        List<ScanCluster> found = new ArrayList<>();
        ScanSpec s = spec;
        for (int k = 1; k <= numClusters; k++) {
            ScanBest b = runner.best(s);
            if (!b.found() || !(b.llr > 0)) {
                break;
            }
            ScanCluster c = cluster(t, k, b);
            found.add(c);
            if (k < numClusters) {
                s = s.excluding(c.box());
            }
        }
        double[] reps = numReplicas > 0 ? runner.replicaMaxima(spec, seed, numReplicas) : new double[0];
        List<ScanCluster> withP = new ArrayList<>();
        for (ScanCluster c : found) {
            withP.add(c.withPValue(pValue(c.llr(), reps)));
        }
        return new ScanResult(t.shape, t.model, spec, withP, reps, seed, t.totalCases(), t.totalBaseline(),
                runner.backend());
    }

    public ScanShape shape() {
        return shape;
    }

    public ScanModel model() {
        return model;
    }

    public ScanSpec spec() {
        return spec;
    }

    /** Clusters by rank; empty when no range has a positive LLR. */
    public List<ScanCluster> clusters() {
        return Collections.unmodifiableList(clusters);
    }

    /** Maximum LLR of each replica, in replica order (length = number of replicas). */
    public double[] replicaLlrs() {
        return replicaLlrs.clone();
    }

    public int numReplicas() {
        return replicaLlrs.length;
    }

    public long seed() {
        return seed;
    }

    public double totalCases() {
        return totalCases;
    }

    public double totalBaseline() {
        return totalBaseline;
    }

    /** "gpu", "cpu" or "mixed". */
    public String backend() {
        return backend;
    }

    @Override
    public String toString() {
        return "ScanResult(" + model.id() + " " + shape + ", " + clusters.size() + " clusters, " + replicaLlrs.length
                + " replicas, backend " + backend + ")";
    }
}
