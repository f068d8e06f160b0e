package io.sparkgpu.tsne;

import io.sparkgpu.cuda.Backend;
import java.io.Serializable;
import java.util.Locale;

/**
 * Settings of one t-SNE run (the estimator's Params, the CLI and the benchmark map onto these). Defaults follow
 * van der Maaten and Hinton (2008) and the FIt-SNE / SG-t-SNE-Pi practice: perplexity 30, k = 3 * perplexity
 * neighbours, early exaggeration 12 for 250 iterations, momentum 0.5 then 0.8, delta-bar-delta gains with a floor of
 * 0.01, learning rate max(n / earlyExaggeration, 200), 1000 iterations, PCA initialisation scaled to a standard
 * deviation of 1e-4 on the first axis.
 *
 * <p>{@link #validate()} checks what does not depend on the data; {@link #validate(long)} adds the checks against the
 * number of points n (n >= 4, perplexity < n, k < n). Every error names the parameter.
 */
public final class TsneConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String INIT_PCA = "pca";
    public static final String INIT_RANDOM = "random";
    /** Mode: single-device when P and Y fit ({@link #singleModeMaxEntries}), else distributed. */
    public static final String MODE_AUTO = "auto";
    /** Mode: P and Y local to one process (the driver), the backend's device. */
    public static final String MODE_SINGLE = "single";
    /**
     * Mode: P sliced over executors; all iterations in one barrier stage (tasks exchange O(n dim) per iteration), or
     * two Spark jobs per iteration with O(grid) reductions as the fallback ({@link TsneTrainer#DISTRIBUTED_STAGE}).
     */
    public static final String MODE_DISTRIBUTED = "distributed";
    /** Learning rate value meaning "auto": max(n / earlyExaggeration, 200). */
    public static final double LEARNING_RATE_AUTO = 0;

    /** Embedding dimension, 1..3. */
    public int dimension = 2;
    public double perplexity = 30;
    /** Neighbours per point; 0 means 3 * perplexity (rounded up). */
    public int k;
    public double earlyExaggeration = 12;
    public int exaggerationIterations = 250;
    public double initialMomentum = 0.5;
    public double finalMomentum = 0.8;
    /** Gains floor of the delta-bar-delta rule (Jacobs 1988), as in van der Maaten's implementations. */
    public double minGain = 0.01;
    /** {@link #LEARNING_RATE_AUTO} (0) or a positive step. */
    public double learningRate = LEARNING_RATE_AUTO;
    public int maxIter = 1000;
    public String init = INIT_PCA;
    public long seed = 42L;
    public Backend backend = Backend.AUTO;
    public String mode = MODE_AUTO;
    /** KL divergence is reported every this many iterations (and after the last); 0 disables the periodic reports. */
    public int klEvery = 50;
    /**
     * Auto mode runs on a single device when nnz(P) + n * (dimension + features) stays below this many entries
     * (default 2^27: about 1 GiB of doubles on the driver), else distributed.
     */
    public long singleModeMaxEntries = 1L << 27;
    /**
     * Distributed mode: coalesce P's row slices into at most this many partitions (0: keep the input's), e.g. one
     * per executor or GPU; each partition sends one grid per iteration. In one barrier stage: at most this many
     * tasks.
     */
    public int distributedPartitions;
    public TsneGridOptions grid = TsneGridOptions.defaults();
    public GridConvolution.Method convolution = GridConvolution.Method.AUTO;

    /** A copy (the grid options are immutable and shared). */
    public TsneConfig copy() {
        TsneConfig c = new TsneConfig();
        c.dimension = dimension;
        c.perplexity = perplexity;
        c.k = k;
        c.earlyExaggeration = earlyExaggeration;
        c.exaggerationIterations = exaggerationIterations;
        c.initialMomentum = initialMomentum;
        c.finalMomentum = finalMomentum;
        c.minGain = minGain;
        c.learningRate = learningRate;
        c.maxIter = maxIter;
        c.init = init;
        c.seed = seed;
        c.backend = backend;
        c.mode = mode;
        c.klEvery = klEvery;
        c.singleModeMaxEntries = singleModeMaxEntries;
        c.distributedPartitions = distributedPartitions;
        c.grid = grid;
        c.convolution = convolution;
        return c;
    }

    /** k as used: the given value, or ceil(3 * perplexity). */
    public int effectiveK() {
        return k > 0 ? k : (int) Math.ceil(3 * perplexity);
    }

    /** The step for n points: the given learning rate or max(n / earlyExaggeration, 200). */
    public double effectiveLearningRate(long n) {
        return learningRate > 0 ? learningRate : Math.max(n / earlyExaggeration, 200.0);
    }

    /** Checks every setting that does not depend on the data. */
    public TsneConfig validate() {
        if (dimension < 1 || dimension > 3) {
            throw new IllegalArgumentException("dimension must be 1, 2 or 3, got " + dimension);
        }
        if (!(perplexity > 0) || Double.isInfinite(perplexity)) {
            throw new IllegalArgumentException("perplexity must be a finite number > 0, got " + perplexity);
        }
        if (k < 0) {
            throw new IllegalArgumentException("k must be > 0 (or 0 for 3 * perplexity), got " + k);
        }
        if (k > 0 && k < perplexity) {
            throw new IllegalArgumentException("k=" + k + " must be >= perplexity=" + perplexity
                    + " (a row with k neighbours reaches at most perplexity k)");
        }
        finite("earlyExaggeration", earlyExaggeration, 1e-300);
        if (exaggerationIterations < 0) {
            throw new IllegalArgumentException("exaggerationIterations must be >= 0, got " + exaggerationIterations);
        }
        momentum("initialMomentum", initialMomentum);
        momentum("finalMomentum", finalMomentum);
        if (!(minGain > 0) || !(minGain <= 1)) {
            throw new IllegalArgumentException("minGain must be in (0, 1], got " + minGain);
        }
        if (!(learningRate >= 0) || Double.isInfinite(learningRate)) {
            throw new IllegalArgumentException("learningRate must be a finite number > 0, or 0/auto, got " + learningRate);
        }
        if (maxIter < 0) {
            throw new IllegalArgumentException("maxIter must be >= 0, got " + maxIter);
        }
        init = parseInit(init);
        mode = parseMode(mode);
        if (backend == null) {
            throw new IllegalArgumentException("backend must be one of auto|gpu|cpu, got null");
        }
        if (klEvery < 0) {
            throw new IllegalArgumentException("klEvery must be >= 0, got " + klEvery);
        }
        if (singleModeMaxEntries < 0) {
            throw new IllegalArgumentException("singleModeMaxEntries must be >= 0, got " + singleModeMaxEntries);
        }
        if (distributedPartitions < 0) {
            throw new IllegalArgumentException("distributedPartitions must be >= 0 (0: keep), got "
                    + distributedPartitions);
        }
        if (grid == null) {
            throw new IllegalArgumentException("grid options must be set");
        }
        if (convolution == null) {
            throw new IllegalArgumentException("convolution must be one of auto|direct|fft");
        }
        return this;
    }

    /** {@link #validate()} plus the checks against the number of points. */
    public TsneConfig validate(long n) {
        validate();
        if (n < 4) {
            throw new IllegalArgumentException("t-SNE needs at least 4 points, got n=" + n);
        }
        if (perplexity >= n) {
            throw new IllegalArgumentException("perplexity=" + perplexity + " must be < the number of points n=" + n);
        }
        if (effectiveK() >= n) {
            throw new IllegalArgumentException("k=" + effectiveK() + (k > 0 ? "" : " (3 * perplexity)")
                    + " must be < the number of points n=" + n + "; lower perplexity or set k");
        }
        return this;
    }

    static String parseInit(String v) {
        String s = v == null ? "" : v.trim().toLowerCase(Locale.ROOT);
        if (!s.equals(INIT_PCA) && !s.equals(INIT_RANDOM)) {
            throw new IllegalArgumentException("init must be 'pca' or 'random', got '" + v + "'");
        }
        return s;
    }

    static String parseMode(String v) {
        String s = v == null ? "" : v.trim().toLowerCase(Locale.ROOT);
        if (!s.equals(MODE_AUTO) && !s.equals(MODE_SINGLE) && !s.equals(MODE_DISTRIBUTED)) {
            throw new IllegalArgumentException("mode must be one of auto|single|distributed, got '" + v + "'");
        }
        return s;
    }

    /**
     * Grid options: p nodes per box, boxes per unit of extent, at least {@code minIntervals} boxes per axis and at
     * most {@code maxIntervals} (0: the defaults of {@link TsneGridOptions#defaults()} for 1-, 2-, 3-D, raised to minIntervals if below).
     */
    public static TsneGridOptions gridOptions(int p, double intervalsPerUnit, int minIntervals, int maxIntervals) {
        int[] max = TsneGridOptions.defaults().maxIntervals.clone();
        for (int d = 1; d <= 3; d++) {
            max[d] = maxIntervals > 0 ? maxIntervals : Math.max(max[d], minIntervals);
        }
        if (maxIntervals > 0 && maxIntervals < minIntervals) {
            throw new IllegalArgumentException("gridMaxIntervals=" + maxIntervals + " must be >= gridMinIntervals="
                    + minIntervals);
        }
        return new TsneGridOptions(p, intervalsPerUnit, minIntervals, max);
    }

    /** Parses "auto", "direct" or "fft" (case-insensitive); {@code what} names the parameter. */
    public static GridConvolution.Method parseConvolution(String v, String what) {
        String s = v == null ? "" : v.trim().toUpperCase(Locale.ROOT);
        for (GridConvolution.Method m : GridConvolution.Method.values()) {
            if (m.name().equals(s)) {
                return m;
            }
        }
        throw new IllegalArgumentException(what + " must be one of auto|direct|fft, got '" + v + "'");
    }

    private static void finite(String name, double v, double min) {
        if (!(v >= min) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(name + " must be a finite number > 0, got " + v);
        }
    }

    private static void momentum(String name, double v) {
        if (!(v >= 0) || !(v < 1)) {
            throw new IllegalArgumentException(name + " must be in [0, 1), got " + v);
        }
    }
}
