package io.sparkgpu.scan;

import io.sparkgpu.common.Progress;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The outcome of a scan: the clusters (most likely first, then non-overlapping secondary clusters), the
 * maximum LLR of every Monte Carlo replica and the settings that produced them. {@link #compute} is the one
 * algorithm behind every surface (local engine, Spark estimator, CLI); only the {@link Runner} that executes
 * the scans and replicas differs.
 */
public final class ScanResult implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Monte Carlo replicas are drawn in at most this many batches, each reported by a progress line. */
    static final int PROGRESS_BATCHES = 10;
    /** Fewest replicas per batch, so that a batch still keeps every task and GPU of a Spark scan busy. */
    static final int MIN_BATCH = 64;

    /** Executes full scans and replica batches (on local threads, a GPU or Spark tasks). */
    public interface Runner {
        /** The best range over all ranges [0, M) under {@code spec}. */
        ScanBest best(ScanSpec spec);

        /** Maximum LLR of replicas from .. from+count-1 of {@code seed}. */
        double[] replicaMaxima(ScanSpec spec, long seed, int from, int count);

        /** "gpu", "cpu" or "mixed": where the work ran so far. */
        String backend();

        /**
         * Where the calls since the previous one of this method ran, e.g. "gpu on the driver" or "cpu in 16 tasks"
         * (null when there were none), for the phase timings.
         */
        default String takePhaseBackend() {
            return null;
        }

        /** Seconds inside GPU calls so far (a Spark job counts its longest task); 0 where none ran. */
        default double gpuSeconds() {
            return 0;
        }
    }

    /** Backends of a runner's calls: overall ("gpu", "cpu", "mixed") and per phase (distinct descriptions). */
    static final class Tally {
        private String used;
        private final LinkedHashSet<String> phase = new LinkedHashSet<>();

        /** One call (or one job) that ran on {@code backend} ("gpu", "cpu" or "mixed"), described by {@code where}. */
        void record(String backend, String where) {
            used = io.sparkgpu.cuda.BackendUsage.combine(used, backend);
            phase.add(backend + " " + where);
        }

        String backend() {
            return used == null ? "none" : used;
        }

        String takePhase() {
            String s = phase.isEmpty() ? null : String.join("; ", phase);
            phase.clear();
            return s;
        }
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
    /** Not saved with a model: a loaded result has no timings. */
    private final LinkedHashMap<String, Double> timings = new LinkedHashMap<>();
    private final LinkedHashMap<String, String> phaseBackends = new LinkedHashMap<>();

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

    /** Phase of {@link #timings()}: reading the input and building (and broadcasting) the tables. */
    public static final String INPUT = "input+tables";
    /** Phase: the scan for the most likely cluster. */
    public static final String SCAN = "scan";
    /** Phase: the scans for the secondary clusters (one per cluster after the first, plus the last empty one). */
    public static final String SECONDARY = "secondary clusters";
    /** Phase: the Monte Carlo replicas. */
    public static final String REPLICAS = "replicas";
    /** Phase: p-values, the result and clean-up. */
    public static final String RESULT = "result";
    /** Seconds inside GPU calls (a Spark job counts its longest task), a part of the phases above. */
    public static final String GPU_CALLS = "GPU calls";
    /** The whole fit (Spark estimator) or scan (local engine). */
    public static final String TOTAL = "total";

    private static long lap(Map<String, Double> times, Map<String, String> where, String phase, long since,
                            Runner runner) {
        long now = System.nanoTime();
        times.merge(phase, (now - since) / 1e9, Double::sum);
        String b = runner.takePhaseBackend();
        if (b != null) {
            where.merge(phase, b, (x, y) -> x.equals(y) ? x : x + "; " + y);
        }
        return now;
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
        ScanConfig.checkNumClusters(numClusters); // the config's rules (LocalScan and the benchmark call this too)
        ScanConfig.checkNumReplicas(numReplicas);
        if (numReplicas > 0) {
            ScanReplicas.checkSupported(t);
        }
        List<ScanCluster> found = new ArrayList<>();
        Map<String, Double> times = new LinkedHashMap<>();
        Map<String, String> where = new LinkedHashMap<>();
        ScanSpec s = spec;
        long clock = System.nanoTime();
        for (int k = 1; k <= numClusters; k++) {
            ScanBest b = runner.best(s);
            String phase = k == 1 ? SCAN : SECONDARY;
            clock = lap(times, where, phase, clock, runner);
            if (!b.found() || !(b.llr > 0)) {
                break;
            }
            ScanCluster c = cluster(t, k, b);
            found.add(c);
            if (k < numClusters) {
                s = s.excluding(c.box());
            }
        }
        double[] reps = new double[0];
        if (numReplicas > 0) {
            // in up to PROGRESS_BATCHES batches, one progress line each (replica r depends only on (seed, r), so the
            // batches give the bits of one call)
            reps = new double[numReplicas];
            int batch = Math.max(MIN_BATCH, (numReplicas + PROGRESS_BATCHES - 1) / PROGRESS_BATCHES);
            Progress progress = Progress.start("spark-gpu scan", numReplicas);
            for (int from = 0; from < numReplicas; from += batch) {
                int count = Math.min(batch, numReplicas - from);
                System.arraycopy(runner.replicaMaxima(spec, seed, from, count), 0, reps, from, count);
                progress.step(from + count, "replicas", "");
            }
            clock = lap(times, where, REPLICAS, clock, runner);
        }
        List<ScanCluster> withP = new ArrayList<>();
        for (ScanCluster c : found) {
            withP.add(c.withPValue(pValue(c.llr(), reps)));
        }
        ScanResult r = new ScanResult(t.shape, t.model, spec, withP, reps, seed, t.totalCases(), t.totalBaseline(),
                runner.backend());
        r.timings.putAll(times);
        r.phaseBackends.putAll(where);
        r.timings.put(RESULT, (System.nanoTime() - clock) / 1e9);
        r.timings.put(GPU_CALLS, runner.gpuSeconds());
        return r;
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

    /**
     * Seconds of each phase, in the order they ran: {@value #INPUT} (Spark estimator only), {@value #SCAN},
     * {@value #SECONDARY} (when more than one cluster was asked for and the first was found), {@value #REPLICAS}
     * (when there are replicas), {@value #RESULT}, then {@value #GPU_CALLS} (seconds inside GPU calls, already
     * part of the phases; 0 on the CPU twin) and {@value #TOTAL}. Empty for a loaded model.
     */
    public Map<String, Double> timings() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(timings));
    }

    /**
     * Where each phase that runs scans ran, e.g. {@code gpu on the driver}, {@code cpu in 16 tasks} or
     * {@code gpu in 1 task}; empty for a loaded model.
     */
    public Map<String, String> phaseBackends() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(phaseBackends));
    }

    /** One line "phase s [backend], ..." of {@link #timings()}. */
    public String timingsLine() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Double> e : timings.entrySet()) {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(e.getKey()).append(' ').append(String.format(Locale.ROOT, "%.3f s", e.getValue()));
            String b = phaseBackends.get(e.getKey());
            if (b != null) {
                sb.append(" [").append(b).append(']');
            }
        }
        return sb.toString();
    }

    /**
     * This result with {@code before} (seconds) ahead of its phases, {@code after} added to its phases (a
     * phase already present is summed) and {@value #TOTAL} set.
     */
    ScanResult withOuterPhases(Map<String, Double> before, Map<String, Double> after, double total) {
        ScanResult r = new ScanResult(shape, model, spec, clusters, replicaLlrs, seed, totalCases, totalBaseline,
                backend);
        r.timings.putAll(before);
        for (Map.Entry<String, Double> e : timings.entrySet()) {
            r.timings.merge(e.getKey(), e.getValue(), Double::sum);
        }
        for (Map.Entry<String, Double> e : after.entrySet()) {
            r.timings.merge(e.getKey(), e.getValue(), Double::sum);
        }
        r.timings.remove(GPU_CALLS);
        r.timings.remove(TOTAL);
        r.timings.put(GPU_CALLS, timings.getOrDefault(GPU_CALLS, 0.0));
        r.timings.put(TOTAL, total);
        r.phaseBackends.putAll(phaseBackends);
        return r;
    }

    @Override
    public String toString() {
        return "ScanResult(" + model.id() + " " + shape + ", " + clusters.size() + " clusters, " + replicaLlrs.length
                + " replicas, backend " + backend + ")";
    }
}
