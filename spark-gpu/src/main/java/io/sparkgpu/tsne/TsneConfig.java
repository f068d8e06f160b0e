package io.sparkgpu.tsne;

import static io.sparkgpu.ml.ParamChecks.require;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.ml.HasSeed;
import io.sparkgpu.tsne.affinity.TsneAffinities;
import io.sparkgpu.tsne.affinity.TsneAffinitiesSpark;
import io.sparkgpu.tsne.repulsion.ExactRepulsion;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import java.io.Serializable;
import java.util.Locale;

/**
 * Settings of one t-SNE run (the estimator's Params, the CLI through the estimator, and the benchmarks map onto
 * these), and the one place of their rules. Defaults follow van der Maaten and Hinton (2008) and the FIt-SNE /
 * SG-t-SNE-Pi practice: perplexity 30, k = {@link #defaultK min(ceil(3 perplexity), n - 1)} neighbours, early
 * exaggeration 12 for 250 iterations, momentum 0.5 then 0.8, delta-bar-delta gains with a floor of 0.01, learning
 * rate max(n / earlyExaggeration, 200), 1000 iterations, PCA initialisation scaled to a standard deviation of 1e-4
 * on the first axis. The initial values of the fields are the defaults of every surface.
 *
 * <p><b>Rules.</b> Each setting's rule is a static {@code check...} method below: it is the validator of the
 * estimator's param ({@link GpuTsneParams}), {@link #validate()} runs all of them (plus the rules between settings)
 * at the trainer's entry, and the inner layers ({@link TsneAffinities}, {@link TsneAffinitiesSpark},
 * {@link TsneGridOptions}, {@link InterpGrid}) call the same methods instead of re-deriving them. The rules that
 * need the number of points n are {@link #checkPoints} (any input) and {@link #neighbours} (feature mode: the kNN
 * affinities), run by {@link #validate(long)}. The mathematics behind them:
 * <ul>
 *   <li>A row's conditional affinities over its k neighbours have entropy H in [ln t, ln k), t the number of
 *       neighbours tied at the smallest distance (H = ln k only at bandwidth 0, H = ln t only at an infinite one), and
 *       the bandwidth search solves H = ln(perplexity). So {@code 1 < perplexity < k}: perplexity 1 needs an infinite
 *       bandwidth, perplexity k a zero one (the data adds perplexity &gt; t, checked per row).</li>
 *   <li>A point has n - 1 other points: {@code k <= n - 1}, hence {@code perplexity < n - 1}.</li>
 *   <li>The interpolation grid, FFT-padded, must fit the convolution's arrays ({@link #MAX_GRID_NODES}).</li>
 * </ul>
 * Every error names the setting.
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
    /** Repulsion: {@link #REPULSION_EXACT} for n <= {@link #EXACT_MAX_POINTS}, else {@link #REPULSION_GRID}. */
    public static final String REPULSION_AUTO = "auto";
    /** Repulsion: the exact O(n^2) sums over all pairs ({@link ExactRepulsion}). */
    public static final String REPULSION_EXACT = "exact";
    /** Repulsion: polynomial interpolation on a grid sized from the embedding's extent ({@link TsneGridOptions}). */
    public static final String REPULSION_GRID = "grid";
    /**
     * Most points for which {@link #REPULSION_AUTO} takes the exact repulsion. Costs per iteration: the exact sum is
     * n^2 pairs, measured at about 1.2 ns per pair and core on the CPU twin (n = 1797: 4 ms on one core; 10^4: about
     * 60 ms on two), and estimated at well under 1 ms for 10^4 points on an H100 (one warp per row, FP64); the grid
     * costs O(n) plus its convolution, whose size follows the embedding's extent and hardly n (the 1797 digits reach
     * an extent of about 130: 264 boxes, 1056^2 nodes, hundreds of ms per iteration on the CPU twin, 1.2 ms G2G on an
     * H100, BENCHMARKS.md). So up to this many points the exact sums cost about as much as the grid on a GPU and far
     * less on the CPU, without interpolation error.
     */
    public static final int EXACT_MAX_POINTS = 10_000;
    /**
     * Most points for which the final KL is the exact one (Z summed over all n^2 pairs once, {@link ExactRepulsion#z});
     * above, the final KL uses the Z of the repulsion method (interpolated on the grid). 2^17 = 131072: 1.7e10 pairs,
     * about 10 s on two CPU cores, tens of ms on a GPU.
     */
    public static final int EXACT_KL_MAX_POINTS = 1 << 17;
    /** Learning rate value meaning "auto": max(n / earlyExaggeration, 200). */
    public static final double LEARNING_RATE_AUTO = 0;
    /** Fewest points of a t-SNE fit. */
    public static final int MIN_POINTS = 4;
    /**
     * Most nodes of the interpolation grid, FFT-padded ({@link GridConvolution#fftSize}): the convolution's complex arrays of
     * 2^dim parities x nodes x (dim + 2) charges must stay within one Java array.
     */
    public static final int MAX_GRID_NODES = Integer.MAX_VALUE / 16;

    /** Embedding dimension, 1..3. */
    public int dimension = 2;
    public double perplexity = 30;
    /** Neighbours per point; 0 means {@link #defaultK}. */
    public int k;
    /**
     * 0: the exact kNN (the default). P &gt; 0: the approximate kNN searching each point's neighbours in the P cells
     * of about 2048 points nearest to its own ({@link io.sparkgpu.tsne.affinity.TsneAffinities#knnApproximate});
     * faster on data without cluster structure, where the exact kNN's pruning excludes little, at a recall the
     * benchmark measures. Feature mode, single device.
     */
    public int knnProbes;
    public double earlyExaggeration = 12;
    public int exaggerationIterations = 250;
    /**
     * Degrees of freedom of the similarity kernel (1 + d^2 / dof)^-dof ({@link io.sparkgpu.tsne.repulsion.TsneKernel}):
     * 1 is standard t-SNE, smaller values give heavier tails (finer clusters; Kobak et al. 2019).
     */
    public double dof = 1;
    /** Exaggeration of P from iteration {@link #lateExaggerationIter} on (after the early phase); 1: off. */
    public double lateExaggeration = 1;
    /** First (0-based) iteration of the late exaggeration; iterations of the early phase keep earlyExaggeration. */
    public int lateExaggerationIter;
    public double initialMomentum = 0.5;
    public double finalMomentum = 0.8;
    /** Gains floor of the delta-bar-delta rule (Jacobs 1988), as in van der Maaten's implementations. */
    public double minGain = 0.01;
    /** {@link #LEARNING_RATE_AUTO} (0) or a positive step. */
    public double learningRate = LEARNING_RATE_AUTO;
    public int maxIter = 1000;
    public String init = INIT_PCA;
    public long seed = HasSeed.defaultSeed(GpuTsne.class);
    /** null: the setting spark.sparkgpu.backend, else auto (resolved by {@link #validate()}). */
    public Backend backend;
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
    /** auto, exact or grid: see {@link #exactRepulsion}. */
    public String repulsion = REPULSION_AUTO;
    /** Feature mode: reduce the features to this many principal components before the kNN; 0: no reduction. */
    public int pcaDimension;
    /** Feature mode: points of the seeded sample for trustworthiness and kNN preservation; 0: skip. */
    public int qualitySampleSize = TsneTrainer.QUALITY_SAMPLE;

    /** A copy (the grid options are immutable and shared). */
    public TsneConfig copy() {
        TsneConfig c = new TsneConfig();
        c.dimension = dimension;
        c.perplexity = perplexity;
        c.k = k;
        c.knnProbes = knnProbes;
        c.earlyExaggeration = earlyExaggeration;
        c.exaggerationIterations = exaggerationIterations;
        c.dof = dof;
        c.lateExaggeration = lateExaggeration;
        c.lateExaggerationIter = lateExaggerationIter;
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
        c.repulsion = repulsion;
        c.pcaDimension = pcaDimension;
        c.qualitySampleSize = qualitySampleSize;
        return c;
    }

    // ------------------------------------------------------------------ rules of one setting

    public static void checkDimension(int dimension) {
        require(dimension >= 1 && dimension <= 3, "dimension", "1, 2 or 3", dimension);
    }

    /** perplexity: finite and &gt; 1 (and below k, see {@link #checkKAbovePerplexity}). */
    public static void checkPerplexity(double perplexity) {
        require(perplexity > 1 && !Double.isInfinite(perplexity), "perplexity", "a finite number > 1", perplexity);
    }

    /** k: &gt;= 0, 0 meaning {@link #defaultK} (and above the perplexity, see {@link #checkKAbovePerplexity}). */
    public static void checkK(int k) {
        require(k >= 0, "k", ">= 0 (0: min(ceil(3 perplexity), n - 1))", k);
    }

    /** The rule between k (the neighbours a row's affinities spread over; 0: default) and the perplexity. */
    public static void checkKAbovePerplexity(int k, double perplexity) {
        if (k != 0 && !(k > perplexity)) {
            throw new IllegalArgumentException("k=" + k + " must be > perplexity=" + perplexity + " (the entropy of "
                    + "k affinities is below ln k, so a perplexity of k or more is out of reach); raise k or lower the "
                    + "perplexity");
        }
    }

    public static void checkEarlyExaggeration(double v) {
        require(v > 0 && !Double.isInfinite(v), "earlyExaggeration", "a finite number > 0", v);
    }

    public static void checkExaggerationIterations(int v) {
        require(v >= 0, "exaggerationIterations", ">= 0", v);
    }

    /**
     * dof: finite, in (0, 2]. Above 2 the KL's per-pair term dof ln(1 + d^2 / dof) could leave the range of its exact
     * fixed-point sum ({@code TsneKl}); heavy tails are dof below 1.
     */
    public static double checkDof(double v) {
        require(v > 0 && v <= MAX_DOF, "dof", "in (0, " + (int) MAX_DOF + "]", v);
        return v;
    }

    /** Largest dof (see {@link #checkDof}). */
    public static final double MAX_DOF = 2;

    public static void checkLateExaggeration(double v) {
        require(v >= 1 && !Double.isInfinite(v), "lateExaggeration", "a finite number >= 1 (1: off)", v);
    }

    public static void checkLateExaggerationIter(int v) {
        require(v >= 0, "lateExaggerationIter", ">= 0", v);
    }

    /** The exaggeration of iteration {@code it} (0-based): early, then late from lateExaggerationIter, else 1. */
    public double exaggeration(int it) {
        return it < exaggerationIterations ? earlyExaggeration : it >= lateExaggerationIter ? lateExaggeration : 1.0;
    }

    public static void checkInitialMomentum(double v) {
        require(v >= 0 && v < 1, "initialMomentum", "in [0, 1)", v);
    }

    public static void checkFinalMomentum(double v) {
        require(v >= 0 && v < 1, "finalMomentum", "in [0, 1)", v);
    }

    public static void checkMinGain(double v) {
        require(v > 0 && v <= 1, "minGain", "in (0, 1]", v);
    }

    /** learningRate: finite and &gt;= 0, 0 ({@link #LEARNING_RATE_AUTO}) meaning max(n / earlyExaggeration, 200). */
    public static void checkLearningRate(double v) {
        require(v >= 0 && !Double.isInfinite(v), "learningRate", "a finite number > 0, or 0 for auto", v);
    }

    public static void checkMaxIter(int v) {
        require(v >= 0, "maxIter", ">= 0", v);
    }

    public static void checkKlEvery(int v) {
        require(v >= 0, "klEvery", ">= 0 (0: only the final KL)", v);
    }

    public static void checkSingleModeMaxEntries(long v) {
        require(v >= 0, "singleModeMaxEntries", ">= 0", v);
    }

    public static void checkDistributedPartitions(int v) {
        require(v >= 0, "distributedPartitions", ">= 0 (0: keep the input's)", v);
    }

    public static void checkPcaDimension(int v) {
        require(v >= 0, "pcaDimension", ">= 0 (0: no PCA)", v);
    }

    public static void checkQualitySampleSize(int v) {
        require(v >= 0, "qualitySampleSize", ">= 0 (0: skip)", v);
    }

    /** gridNodesPerInterval: interpolation nodes per box per axis, 1..8. */
    public static void checkGridNodesPerInterval(int p) {
        require(p >= 1 && p <= TsneGridOptions.MAX_P, "gridNodesPerInterval", "in 1.." + TsneGridOptions.MAX_P, p);
    }

    public static void checkGridIntervalsPerUnit(double v) {
        require(v > 0 && !Double.isInfinite(v), "gridIntervalsPerUnit", "a finite number > 0", v);
    }

    public static void checkGridMinIntervals(int v) {
        require(v >= 1, "gridMinIntervals", ">= 1", v);
    }

    /** gridMaxIntervals: &gt;= 0, 0 meaning the default of the dimension (and &gt;= gridMinIntervals otherwise). */
    public static void checkGridMaxIntervals(int v) {
        require(v >= 0, "gridMaxIntervals", ">= 0 (0: the default of the dimension)", v);
    }

    /** The rule between gridMinIntervals and gridMaxIntervals (0: the default, raised to the minimum). */
    public static void checkGridIntervals(int minIntervals, int maxIntervals) {
        checkGridMinIntervals(minIntervals);
        checkGridMaxIntervals(maxIntervals);
        if (maxIntervals > 0 && maxIntervals < minIntervals) {
            throw new IllegalArgumentException("gridMaxIntervals=" + maxIntervals + " must be >= gridMinIntervals="
                    + minIntervals);
        }
    }

    /**
     * The largest grid {@code grid} allows in {@code dimension}, (gridMaxIntervals x gridNodesPerInterval)^dimension
     * nodes padded to FFT lengths, must stay within {@link #MAX_GRID_NODES} (else the fit fails once the embedding
     * is wide enough to need it).
     */
    public static void checkGridSize(int dimension, TsneGridOptions grid) {
        long perAxis = (long) grid.maxIntervals[dimension] * grid.p;
        long padded = GridConvolution.fftSize((int) Math.min(perAxis, Integer.MAX_VALUE / 2));
        long nodes = 1;
        for (int a = 0; a < dimension && nodes <= MAX_GRID_NODES; a++) {
            nodes *= padded;
        }
        if (perAxis > Integer.MAX_VALUE / 2 || nodes > MAX_GRID_NODES) {
            throw new IllegalArgumentException("gridMaxIntervals=" + grid.maxIntervals[dimension] + " x "
                    + "gridNodesPerInterval=" + grid.p + " nodes per axis is too large for dimension " + dimension
                    + ": the grid (FFT-padded to " + padded + " per axis) must hold at most " + MAX_GRID_NODES
                    + " nodes; lower gridMaxIntervals");
        }
    }

    /** n: at least {@value #MIN_POINTS} points (any input: features or graph vertices). */
    public static void checkPoints(long n) {
        if (n < MIN_POINTS) {
            throw new IllegalArgumentException("t-SNE needs at least " + MIN_POINTS + " points, got n=" + n);
        }
    }

    /** The neighbours of a point among n points: 1 &lt;= k &lt;= n - 1 (also the kNN's own precondition). */
    public static void checkNeighbourCount(int k, long n) {
        if (k < 1 || k > n - 1) {
            throw new IllegalArgumentException("k=" + k + " must be in 1..n - 1 = " + (n - 1) + " (a point has n - 1 "
                    + "other points); lower k");
        }
    }

    /** The cells searched per point by the approximate kNN: >= 1. */
    public static void checkKnnProbes(int probes) {
        checkKnnProbes(probes, false);
    }

    /** knnProbes: >= 1, or 0 (the exact kNN) where {@code zeroAllowed}. */
    public static void checkKnnProbes(int probes, boolean zeroAllowed) {
        if (probes < (zeroAllowed ? 0 : 1)) {
            throw new IllegalArgumentException("knnProbes=" + probes + " must be " + (zeroAllowed
                    ? ">= 0 (0: the exact kNN; P > 0: the approximate kNN searching P cells per point)"
                    : ">= 1 (cells searched per point)"));
        }
    }

    /** The one formula of the default number of neighbours: min(ceil(3 perplexity), n - 1). */
    public static int defaultK(double perplexity, long n) {
        return (int) Math.min(n - 1, (long) Math.ceil(3 * perplexity));
    }

    /**
     * The neighbours of each point for n points in feature mode, after the rules that need n: {@code k} when set
     * (it must be at most n - 1), else {@link #defaultK}; either must exceed the perplexity (so perplexity &lt; n - 1).
     *
     * @param k the setting (0: default)
     */
    public static int neighbours(int k, double perplexity, long n) {
        checkPoints(n);
        if (k > 0) {
            checkNeighbourCount(k, n);
            checkKAbovePerplexity(k, perplexity);
            return k;
        }
        int d = defaultK(perplexity, n);
        if (!(perplexity < d)) {
            throw new IllegalArgumentException("perplexity=" + perplexity + " must be < n - 1 = " + (n - 1) + " for n="
                    + n + " points (it must be below the k = min(ceil(3 perplexity), n - 1) neighbours); lower the "
                    + "perplexity");
        }
        return d;
    }

    // ------------------------------------------------------------------ the settings together

    /** k as used for n points: the given value or {@link #defaultK} (after the rules of {@link #neighbours}). */
    public int effectiveK(long n) {
        return neighbours(k, perplexity, n);
    }

    /** The step for n points: the given learning rate or max(n / earlyExaggeration, 200). */
    public double effectiveLearningRate(long n) {
        return learningRate > 0 ? learningRate : Math.max(n / earlyExaggeration, 200.0);
    }

    /** Checks every setting that does not depend on the data; normalises init and mode, resolves a null backend. */
    public TsneConfig validate() {
        checkDimension(dimension);
        checkPerplexity(perplexity);
        checkK(k);
        checkKAbovePerplexity(k, perplexity);
        checkKnnProbes(knnProbes, true);
        checkEarlyExaggeration(earlyExaggeration);
        checkExaggerationIterations(exaggerationIterations);
        checkDof(dof);
        checkLateExaggeration(lateExaggeration);
        checkLateExaggerationIter(lateExaggerationIter);
        checkInitialMomentum(initialMomentum);
        checkFinalMomentum(finalMomentum);
        checkMinGain(minGain);
        checkLearningRate(learningRate);
        checkMaxIter(maxIter);
        init = parseInit(init);
        mode = parseMode(mode);
        repulsion = parseRepulsion(repulsion);
        checkKlEvery(klEvery);
        checkSingleModeMaxEntries(singleModeMaxEntries);
        checkDistributedPartitions(distributedPartitions);
        checkPcaDimension(pcaDimension);
        checkQualitySampleSize(qualitySampleSize);
        if (grid == null) {
            throw new IllegalArgumentException("grid options must be set");
        }
        checkGridSize(dimension, grid);
        if (convolution == null) {
            throw new IllegalArgumentException("convolution must be one of auto|direct|fft");
        }
        backend = SparkGpuConf.backend(backend);
        return this;
    }

    /** {@link #validate()} plus the rules that need the number of points n, for feature mode (kNN affinities). */
    public TsneConfig validate(long n) {
        validate();
        neighbours(k, perplexity, n);
        return this;
    }

    /** init: pca or random (any case); returns it in lower case. */
    public static String parseInit(String v) {
        String s = v == null ? "" : v.trim().toLowerCase(Locale.ROOT);
        if (!s.equals(INIT_PCA) && !s.equals(INIT_RANDOM)) {
            throw new IllegalArgumentException("init must be 'pca' or 'random', got '" + v + "'");
        }
        return s;
    }

    /** mode: auto, single or distributed (any case); returns it in lower case. */
    public static String parseMode(String v) {
        String s = v == null ? "" : v.trim().toLowerCase(Locale.ROOT);
        if (!s.equals(MODE_AUTO) && !s.equals(MODE_SINGLE) && !s.equals(MODE_DISTRIBUTED)) {
            throw new IllegalArgumentException("mode must be one of auto|single|distributed, got '" + v + "'");
        }
        return s;
    }

    /** repulsion: auto, exact or grid (any case); returns it in lower case. */
    public static String parseRepulsion(String v) {
        String s = v == null ? "" : v.trim().toLowerCase(Locale.ROOT);
        if (!s.equals(REPULSION_AUTO) && !s.equals(REPULSION_EXACT) && !s.equals(REPULSION_GRID)) {
            throw new IllegalArgumentException("repulsion must be one of auto|exact|grid, got '" + v + "'");
        }
        return s;
    }

    /**
     * The one rule of the repulsive term's method for n points, from the data only (never from the backend, so the
     * GPU and its CPU twin compute the same thing and give the same bits): {@code exact} always, {@code grid} never,
     * {@code auto} when n <= {@link #EXACT_MAX_POINTS}. The grid's size then follows the embedding's extent at each
     * iteration ({@link TsneGridOptions}: boxes per unit of extent, bounded).
     */
    public static boolean exactRepulsion(String repulsion, long n) {
        String r = parseRepulsion(repulsion);
        return r.equals(REPULSION_EXACT) || (r.equals(REPULSION_AUTO) && n <= EXACT_MAX_POINTS);
    }

    /** {@link #exactRepulsion(String, long)} with this config's setting. */
    public boolean exactRepulsion(long n) {
        return exactRepulsion(repulsion, n);
    }

    /** Whether the final KL of n points is exact ({@link #EXACT_KL_MAX_POINTS}; always with the exact repulsion). */
    public boolean exactFinalKl(long n) {
        return n <= EXACT_KL_MAX_POINTS || exactRepulsion(n);
    }

    /**
     * Grid options: p nodes per box, boxes per unit of extent, at least {@code minIntervals} boxes per axis and at
     * most {@code maxIntervals} (0: the defaults of {@link TsneGridOptions#defaults()} for 1-, 2-, 3-D, raised to minIntervals if below).
     */
    public static TsneGridOptions gridOptions(int p, double intervalsPerUnit, int minIntervals, int maxIntervals) {
        checkGridIntervals(minIntervals, maxIntervals);
        int[] max = TsneGridOptions.defaults().maxIntervals.clone();
        for (int d = 1; d <= 3; d++) {
            max[d] = maxIntervals > 0 ? maxIntervals : Math.max(max[d], minIntervals);
        }
        return new TsneGridOptions(p, intervalsPerUnit, minIntervals, max);
    }

    /** convolution: auto, direct or fft (case-insensitive); {@code what} names the parameter. */
    public static GridConvolution.Method parseConvolution(String v, String what) {
        String s = v == null ? "" : v.trim().toUpperCase(Locale.ROOT);
        for (GridConvolution.Method m : GridConvolution.Method.values()) {
            if (m.name().equals(s)) {
                return m;
            }
        }
        throw new IllegalArgumentException(what + " must be one of auto|direct|fft, got '" + v + "'");
    }
}
