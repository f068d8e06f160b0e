package io.sparkgpu.tsne;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Numbers describing one {@link GpuTsne#fit}: KL divergence history (the final value exact, see {@link #finalKl}),
 * quality figures <b>sampled</b> on a seeded sample of {@link #qualitySampleSize()} points (trustworthiness and kNN
 * preservation, see {@link TsneQuality}; all points when there are fewer), time per phase and how the run was
 * executed. Small and serializable; saved with the model.
 */
public final class GpuTsneSummary implements Serializable {
    private static final long serialVersionUID = 1L;

    private final long numPoints;
    private final int dimension;
    private final int iterations;
    private final int[] klIterations;
    private final double[] klValues;
    private final double trustworthiness;
    private final double knnPreservation;
    private final int qualitySampleSize;
    private final int qualityK;
    private final String mode;
    private final String backend;
    private final String input;
    private final double learningRate;
    private final Map<String, Double> timings;
    /** Where the GPU-capable phases ran (not saved: "unknown" and empty for a loaded model). */
    private String backendUsed = "unknown";
    private LinkedHashMap<String, String> phaseBackends = new LinkedHashMap<>();

    GpuTsneSummary(long numPoints, int dimension, int iterations, int[] klIterations, double[] klValues,
            double trustworthiness, double knnPreservation, int qualitySampleSize, int qualityK, String mode,
            String backend, String input, double learningRate, Map<String, Double> timings) {
        if (klIterations.length != klValues.length) {
            throw new IllegalArgumentException("klIterations and klValues differ in length");
        }
        this.numPoints = numPoints;
        this.dimension = dimension;
        this.iterations = iterations;
        this.klIterations = klIterations.clone();
        this.klValues = klValues.clone();
        this.trustworthiness = trustworthiness;
        this.knnPreservation = knnPreservation;
        this.qualitySampleSize = qualitySampleSize;
        this.qualityK = qualityK;
        this.mode = mode;
        this.backend = backend;
        this.input = input;
        this.learningRate = learningRate;
        this.timings = new LinkedHashMap<>(timings);
    }

    static GpuTsneSummary from(TsneFit f) {
        TsneResult r = f.result;
        GpuTsneSummary s = new GpuTsneSummary(r.n, r.dim, r.timings.iterations(), r.klIterations, r.klValues,
                f.trustworthiness, f.knnPreservation, f.qualitySample, f.qualityK, r.mode, f.backend, f.input,
                f.learningRate, r.timings.toMap());
        s.backendUsed = r.timings.backends().backend();
        s.phaseBackends = new LinkedHashMap<>(r.timings.backends().phaseBackends());
        return s;
    }

    public long numPoints() {
        return numPoints;
    }

    public int dimension() {
        return dimension;
    }

    /** Gradient iterations run. */
    public int iterations() {
        return iterations;
    }

    /** Iterations at which KL was evaluated (the last one: the final embedding). */
    public int[] klIterations() {
        return klIterations.clone();
    }

    public double[] klHistory() {
        return klValues.clone();
    }

    /**
     * KL(P || Q) of the final (centred) embedding, exact: its Z is summed over all n^2 pairs once
     * ({@link TsneConfig#EXACT_KL_MAX_POINTS}, 2^17 points at most; always with the exact repulsion), not taken from
     * the interpolation grid, whose Z reads high on coarse grids. Above that size, the Z of the grid. The earlier
     * values of {@link #klHistory()} use the Z of their iteration's repulsion.
     */
    public double finalKl() {
        return klValues.length == 0 ? Double.NaN : klValues[klValues.length - 1];
    }

    /**
     * Trustworthiness T(k) with k = {@link #qualityK()}, <b>sampled</b>: computed on the seeded sample of
     * {@link #qualitySampleSize()} points (input and embedding distances among the sample only; all n points when
     * n is at most the qualitySampleSize setting). NaN in graph mode or without sample.
     */
    public double trustworthiness() {
        return trustworthiness;
    }

    /** Mean fraction of the k input-space neighbours kept in the embedding, <b>sampled</b> as {@link #trustworthiness}. */
    public double knnPreservation() {
        return knnPreservation;
    }

    /** Points of the quality sample (0: none); equal to {@link #numPoints()} when every point was used. */
    public int qualitySampleSize() {
        return qualitySampleSize;
    }

    public int qualityK() {
        return qualityK;
    }

    /** "single" or "distributed". */
    public String mode() {
        return mode;
    }

    /** The backend setting ("auto", "gpu" or "cpu"). */
    public String backend() {
        return backend;
    }

    /**
     * Where the GPU-capable phases of the fit ran: "gpu" (all on a GPU), "cpu" (none; e.g. backend auto without a
     * usable GPU, or after a GPU failure recomputed on the CPU twins) or "mixed"; "none" when no such phase ran and
     * "unknown" for a loaded model (not saved). In the one-stage distributed mode, as the iteration times, those of
     * its task 0.
     */
    public String backendUsed() {
        return backendUsed;
    }

    /** {@link #backendUsed()} per phase (e.g. "t-SNE kNN" -&gt; "gpu"), in the order they first ran; empty when loaded. */
    public Map<String, String> phaseBackends() {
        return new LinkedHashMap<>(phaseBackends);
    }

    /** "features" or "graph". */
    public String input() {
        return input;
    }

    public double learningRate() {
        return learningRate;
    }

    /** Seconds per phase (prepare, knn, affinities, attractive, s2g, g2g, g2s, update, kl, total). */
    public Map<String, Double> timings() {
        return new LinkedHashMap<>(timings);
    }

    @Override
    public String toString() {
        return "GpuTsneSummary(numPoints=" + numPoints + ", dimension=" + dimension + ", iterations=" + iterations
                + ", finalKl=" + finalKl() + ", sampled quality (" + qualitySampleSize + " of " + numPoints
                + " points, k=" + qualityK + "): trustworthiness=" + trustworthiness + ", knnPreservation="
                + knnPreservation + ", mode=" + mode + ", timings=" + timings + ")";
    }

    // ------------------------------------------------------------------ persistence (one row)

    static final StructType SCHEMA = new StructType()
            .add("numPoints", DataTypes.LongType, false)
            .add("dimension", DataTypes.IntegerType, false)
            .add("iterations", DataTypes.IntegerType, false)
            .add("klIterations", DataTypes.createArrayType(DataTypes.IntegerType, false), false)
            .add("klValues", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
            .add("trustworthiness", DataTypes.DoubleType, false)
            .add("knnPreservation", DataTypes.DoubleType, false)
            .add("qualitySampleSize", DataTypes.IntegerType, false)
            .add("qualityK", DataTypes.IntegerType, false)
            .add("mode", DataTypes.StringType, false)
            .add("backend", DataTypes.StringType, false)
            .add("input", DataTypes.StringType, false)
            .add("learningRate", DataTypes.DoubleType, false)
            .add("timingNames", DataTypes.createArrayType(DataTypes.StringType, false), false)
            .add("timingSeconds", DataTypes.createArrayType(DataTypes.DoubleType, false), false);

    Row toRow() {
        List<Integer> its = new ArrayList<>();
        for (int v : klIterations) {
            its.add(v);
        }
        List<Double> kls = new ArrayList<>();
        for (double v : klValues) {
            kls.add(v);
        }
        return RowFactory.create(numPoints, dimension, iterations, its, kls, trustworthiness, knnPreservation,
                qualitySampleSize, qualityK, mode, backend, input, learningRate, new ArrayList<>(timings.keySet()),
                new ArrayList<>(timings.values()));
    }

    static GpuTsneSummary fromRow(Row r) {
        List<String> names = r.getList(r.fieldIndex("timingNames"));
        List<Double> secs = r.getList(r.fieldIndex("timingSeconds"));
        Map<String, Double> t = new LinkedHashMap<>();
        for (int i = 0; i < names.size(); i++) {
            t.put(names.get(i), secs.get(i));
        }
        return new GpuTsneSummary(r.getLong(r.fieldIndex("numPoints")), r.getInt(r.fieldIndex("dimension")),
                r.getInt(r.fieldIndex("iterations")),
                r.<Integer>getList(r.fieldIndex("klIterations")).stream().mapToInt(Integer::intValue).toArray(),
                r.<Double>getList(r.fieldIndex("klValues")).stream().mapToDouble(Double::doubleValue).toArray(),
                r.getDouble(r.fieldIndex("trustworthiness")), r.getDouble(r.fieldIndex("knnPreservation")),
                r.getInt(r.fieldIndex("qualitySampleSize")), r.getInt(r.fieldIndex("qualityK")),
                r.getString(r.fieldIndex("mode")), r.getString(r.fieldIndex("backend")),
                r.getString(r.fieldIndex("input")), r.getDouble(r.fieldIndex("learningRate")), t);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof GpuTsneSummary)) {
            return false;
        }
        GpuTsneSummary s = (GpuTsneSummary) o;
        return numPoints == s.numPoints && dimension == s.dimension && iterations == s.iterations
                && Arrays.equals(klIterations, s.klIterations) && Arrays.equals(klValues, s.klValues)
                && Double.compare(trustworthiness, s.trustworthiness) == 0
                && Double.compare(knnPreservation, s.knnPreservation) == 0 && mode.equals(s.mode)
                && timings.equals(s.timings);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(numPoints) * 31 + Arrays.hashCode(klValues);
    }
}
