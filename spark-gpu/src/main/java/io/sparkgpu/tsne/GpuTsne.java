package io.sparkgpu.tsne;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.ml.ParamsIO;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.LongParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.types.StructType;

/**
 * t-distributed stochastic neighbour embedding as a Spark ML {@link Estimator}: the rows of a DataFrame (dense
 * feature vectors, or the vertices of a weighted graph) are embedded in 1, 2 or 3 dimensions.
 *
 * <p><b>Algorithm.</b> t-SNE (L. van der Maaten, G. Hinton, "Visualizing Data using t-SNE", JMLR 9:2579-2605,
 * 2008) on the sparse kNN affinities of L. van der Maaten, "Accelerating t-SNE using Tree-Based Algorithms", JMLR
 * 15:3221-3245, 2014 (exact k nearest neighbours, k = 3 perplexity, bandwidths by bisection to the perplexity,
 * P = (P_cond + P_cond^T) / 2n), or, in graph mode, on a given sparse stochastic graph as in SG-t-SNE-Pi
 * (N. Pitsianis, A.-S. Iliopoulos, D. Floros, X. Sun, "Spaceland Embedding of Sparse Stochastic Graphs", IEEE
 * HPEC 2019). The attractive term is a sparse product over P; the repulsive term and Z use polynomial
 * interpolation on a regular grid with a convolution between grid nodes, as in FIt-SNE (G. C. Linderman, M. Rachh,
 * J. G. Hoskins, S. Steinerberger, Y. Kluger, "Fast interpolation-based t-SNE for improved visualization of
 * single-cell RNA-seq data", Nature Methods 16:243-245, 2019) and SG-t-SNE-Pi, instead of the Barnes-Hut tree of
 * the 2014 paper. The optimiser ({@link TsneOptimizer}) uses early exaggeration, momentum and gains.
 *
 * <p><b>Cost.</b> kNN O(n^2 d / devices) (exact, tiled), affinities O(n k), per iteration O(n k dim) for the
 * attractive term, O(n p^dim) for the interpolation and O(G log G) (FFT) or O(G^2) (direct) for the G-node grid.
 *
 * <p><b>Execution and exactness.</b> {@code mode=single} keeps P and Y on the driver and its device;
 * {@code mode=distributed} keeps P as row slices on the executors and runs all iterations in one barrier stage
 * (one task per scheduled GPU, each holding Y: one task runs the single-device loop, several exchange their rows'
 * forces and exact partial sums of Z, O(n dim) per iteration; KL history and progress reach the driver at the end);
 * its fallback ({@link TsneTrainer#DISTRIBUTED_STAGE} false, dynamic allocation) broadcasts Y per iteration, the
 * executors return partial grids in exact 128-bit fixed point (O(grid) each), the driver sums and convolves them and
 * broadcasts the potentials, and the executors return their rows' forces and exact partial sums of Z. Every sum
 * that mixes slices is exact and every other value is computed per row with the same operations, so the embedding
 * is bit-for-bit the same in both modes, for any partitioning, and on GPU or CPU twin; it differs from the exact
 * O(n^2) gradient only by the interpolation error (about 1e-4 relative with the defaults).
 *
 * <p>The fitted {@link GpuTsneModel} holds the embedding of the training rows (by id) and a {@link GpuTsneSummary}
 * (KL history, trustworthiness and kNN preservation on a seeded sample, time per phase). Persistence uses MLlib's
 * metadata layout ({@link ParamsIO}).
 */
public class GpuTsne extends Estimator<GpuTsneModel> implements MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final Param<String> featuresCol;
    private final Param<String> srcCol;
    private final Param<String> dstCol;
    private final Param<String> weightCol;
    private final IntParam dimension;
    private final DoubleParam perplexity;
    private final IntParam k;
    private final DoubleParam earlyExaggeration;
    private final IntParam exaggerationIterations;
    private final DoubleParam learningRate;
    private final DoubleParam initialMomentum;
    private final DoubleParam finalMomentum;
    private final DoubleParam minGain;
    private final IntParam maxIter;
    private final Param<String> init;
    private final LongParam seed;
    private final IntParam pcaDimension;
    private final Param<String> mode;
    private final LongParam singleModeMaxEntries;
    private final IntParam gridNodesPerInterval;
    private final DoubleParam gridIntervalsPerUnit;
    private final IntParam gridMinIntervals;
    private final IntParam gridMaxIntervals;
    private final IntParam distributedPartitions;
    private final Param<String> convolution;
    private final IntParam klEvery;
    private final IntParam qualitySampleSize;
    private final Param<String> idCol;
    private final Param<String> outputCol;
    private final Param<String> backend;
    private transient TsneProgress progress;

    public GpuTsne() {
        this(Identifiable.randomUID("gputsne"));
    }

    public GpuTsne(String uid) {
        this.uid = uid;
        featuresCol = new Param<>(this, "featuresCol", "Features column: ml Vector or array of numbers (feature mode).");
        srcCol = new Param<>(this, "srcCol", "Graph mode: source vertex column (int, long or string); when set, the input is a weighted graph used as P.");
        dstCol = new Param<>(this, "dstCol", "Graph mode: destination vertex column (same type as srcCol).");
        weightCol = new Param<>(this, "weightCol", "Graph mode: non-negative edge weights (numeric); when unset every edge has weight 1.");
        dimension = new IntParam(this, "dimension", "Embedding dimension: 1, 2 or 3.", ParamValidators.<Object>inRange(1, 3));
        perplexity = new DoubleParam(this, "perplexity", "Target perplexity of the conditional affinities (> 0, < n).", ParamValidators.<Object>gt(0));
        k = new IntParam(this, "k", "Neighbours per point (< n); 0 means ceil(3 * perplexity).", ParamValidators.<Object>gtEq(0));
        earlyExaggeration = new DoubleParam(this, "earlyExaggeration", "Factor on P during the first exaggerationIterations iterations (> 0).", ParamValidators.<Object>gt(0));
        exaggerationIterations = new IntParam(this, "exaggerationIterations", "Iterations with early exaggeration and initial momentum (>= 0).", ParamValidators.<Object>gtEq(0));
        learningRate = new DoubleParam(this, "learningRate", "Gradient step; 0 means auto = max(n / earlyExaggeration, 200).", ParamValidators.<Object>gtEq(0));
        initialMomentum = new DoubleParam(this, "initialMomentum", "Momentum during the exaggeration phase, in [0, 1).", ParamValidators.<Object>inRange(0, 1, true, false));
        finalMomentum = new DoubleParam(this, "finalMomentum", "Momentum after the exaggeration phase, in [0, 1).", ParamValidators.<Object>inRange(0, 1, true, false));
        minGain = new DoubleParam(this, "minGain", "Floor of the delta-bar-delta gains, in (0, 1].", ParamValidators.<Object>inRange(0, 1, false, true));
        maxIter = new IntParam(this, "maxIter", "Gradient iterations (>= 0).", ParamValidators.<Object>gtEq(0));
        init = new Param<>(this, "init", "Initialisation: 'pca' (first principal components, scaled to std 1e-4) or 'random' (seeded Gaussian, std 1e-4).", GpuTsneParams.oneOf("pca", "random"));
        seed = new LongParam(this, "seed", "Random seed (random initialisation and samples).");
        pcaDimension = new IntParam(this, "pcaDimension", "Reduce the features to this many principal components (MLlib PCA) before the kNN; 0 = no reduction.", ParamValidators.<Object>gtEq(0));
        mode = new Param<>(this, "mode", "'single' (P and Y on the driver's device), 'distributed' (P sliced over executors, grids reduced on the driver) or 'auto' (single when nnz(P) + n (dimension + features) <= singleModeMaxEntries).", GpuTsneParams.oneOf("auto", "single", "distributed"));
        singleModeMaxEntries = new LongParam(this, "singleModeMaxEntries", "Auto mode threshold, see mode (>= 0).", ParamValidators.<Object>gtEq(0));
        gridNodesPerInterval = new IntParam(this, "gridNodesPerInterval", "Interpolation nodes per grid box per axis, 1..8.", ParamValidators.<Object>inRange(1, 8));
        gridIntervalsPerUnit = new DoubleParam(this, "gridIntervalsPerUnit", "Grid boxes per unit of embedding extent (> 0).", ParamValidators.<Object>gt(0));
        gridMinIntervals = new IntParam(this, "gridMinIntervals", "Fewest grid boxes per axis (>= 1, <= the most).", ParamValidators.<Object>gtEq(1));
        distributedPartitions = new IntParam(this, "distributedPartitions", "Distributed mode: coalesce the row slices of P into at most this many partitions (e.g. one per executor or GPU; each sends one grid per iteration); 0 keeps the input's partitions.", ParamValidators.<Object>gtEq(0));
        gridMaxIntervals = new IntParam(this, "gridMaxIntervals", "Most grid boxes per axis (>= gridMinIntervals); 0 = the default for the dimension (2000, 320, 40 in 1-, 2-, 3-D).", ParamValidators.<Object>gtEq(0));
        convolution = new Param<>(this, "convolution", "Grid convolution: 'auto', 'direct' or 'fft'.", GpuTsneParams.oneOf("auto", "direct", "fft"));
        klEvery = new IntParam(this, "klEvery", "Report KL every this many iterations (0: only the final one).", ParamValidators.<Object>gtEq(0));
        qualitySampleSize = new IntParam(this, "qualitySampleSize", "Points of the seeded sample on which trustworthiness and kNN preservation are computed (0: skip).", ParamValidators.<Object>gtEq(0));
        idCol = GpuTsneParams.idCol(this);
        outputCol = GpuTsneParams.outputCol(this);
        backend = GpuTsneParams.backend(this);
        setDefault(featuresCol, "features");
        setDefault(dimension, 2);
        setDefault(perplexity, 30.0);
        setDefault(k, 0);
        setDefault(earlyExaggeration, 12.0);
        setDefault(exaggerationIterations, 250);
        setDefault(learningRate, 0.0);
        setDefault(initialMomentum, 0.5);
        setDefault(finalMomentum, 0.8);
        setDefault(minGain, 0.01);
        setDefault(maxIter, 1000);
        setDefault(init, "pca");
        setDefault(pcaDimension, 0);
        setDefault(mode, "auto");
        setDefault(singleModeMaxEntries, 1L << 27);
        setDefault(gridNodesPerInterval, TsneGridOptions.defaults().p);
        setDefault(gridIntervalsPerUnit, TsneGridOptions.defaults().intervalsPerUnit);
        setDefault(gridMinIntervals, TsneGridOptions.defaults().minIntervals);
        setDefault(gridMaxIntervals, 0);
        setDefault(distributedPartitions, 0);
        setDefault(convolution, "auto");
        setDefault(klEvery, 50);
        setDefault(qualitySampleSize, 1000);
        setDefault(seed, (long) GpuTsne.class.getName().hashCode());
        setDefault(outputCol, GpuTsneParams.DEFAULT_OUTPUT);
        setDefault(backend, "auto");
    }

    @Override
    public String uid() {
        return uid;
    }

    // ------------------------------------------------------------------ params

    /** Features column: ml Vector or array of numbers (feature mode). */
    public Param<String> featuresCol() {
        return featuresCol;
    }

    public String getFeaturesCol() {
        return isDefined(featuresCol) ? getOrDefault(featuresCol) : null;
    }

    /** Sets featuresCol; null clears it. */
    public GpuTsne setFeaturesCol(String value) {
        if (value == null) {
            clear(featuresCol);
        } else {
            set(featuresCol, value);
        }
        return this;
    }

    /** Graph mode: source vertex column (int, long or string); when set, the input is a weighted graph used as P. */
    public Param<String> srcCol() {
        return srcCol;
    }

    public String getSrcCol() {
        return isDefined(srcCol) ? getOrDefault(srcCol) : null;
    }

    /** Sets srcCol; null clears it. */
    public GpuTsne setSrcCol(String value) {
        if (value == null) {
            clear(srcCol);
        } else {
            set(srcCol, value);
        }
        return this;
    }

    /** Graph mode: destination vertex column (same type as srcCol). */
    public Param<String> dstCol() {
        return dstCol;
    }

    public String getDstCol() {
        return isDefined(dstCol) ? getOrDefault(dstCol) : null;
    }

    /** Sets dstCol; null clears it. */
    public GpuTsne setDstCol(String value) {
        if (value == null) {
            clear(dstCol);
        } else {
            set(dstCol, value);
        }
        return this;
    }

    /** Graph mode: non-negative edge weights (numeric); when unset every edge has weight 1. */
    public Param<String> weightCol() {
        return weightCol;
    }

    public String getWeightCol() {
        return isDefined(weightCol) ? getOrDefault(weightCol) : null;
    }

    /** Sets weightCol; null clears it. */
    public GpuTsne setWeightCol(String value) {
        if (value == null) {
            clear(weightCol);
        } else {
            set(weightCol, value);
        }
        return this;
    }

    /** Embedding dimension: 1, 2 or 3. */
    public IntParam dimension() {
        return dimension;
    }

    public int getDimension() {
        return (Integer) getOrDefault(dimension);
    }

    public GpuTsne setDimension(int value) {
        set(dimension, value);
        return this;
    }

    /** Target perplexity of the conditional affinities (> 0, < n). */
    public DoubleParam perplexity() {
        return perplexity;
    }

    public double getPerplexity() {
        return (Double) getOrDefault(perplexity);
    }

    public GpuTsne setPerplexity(double value) {
        set(perplexity, value);
        return this;
    }

    /** Neighbours per point (< n); 0 means ceil(3 * perplexity). */
    public IntParam k() {
        return k;
    }

    public int getK() {
        return (Integer) getOrDefault(k);
    }

    public GpuTsne setK(int value) {
        set(k, value);
        return this;
    }

    /** Factor on P during the first exaggerationIterations iterations (> 0). */
    public DoubleParam earlyExaggeration() {
        return earlyExaggeration;
    }

    public double getEarlyExaggeration() {
        return (Double) getOrDefault(earlyExaggeration);
    }

    public GpuTsne setEarlyExaggeration(double value) {
        set(earlyExaggeration, value);
        return this;
    }

    /** Iterations with early exaggeration and initial momentum (>= 0). */
    public IntParam exaggerationIterations() {
        return exaggerationIterations;
    }

    public int getExaggerationIterations() {
        return (Integer) getOrDefault(exaggerationIterations);
    }

    public GpuTsne setExaggerationIterations(int value) {
        set(exaggerationIterations, value);
        return this;
    }

    /** Gradient step; 0 means auto = max(n / earlyExaggeration, 200). */
    public DoubleParam learningRate() {
        return learningRate;
    }

    public double getLearningRate() {
        return (Double) getOrDefault(learningRate);
    }

    public GpuTsne setLearningRate(double value) {
        set(learningRate, value);
        return this;
    }

    /** Momentum during the exaggeration phase, in [0, 1). */
    public DoubleParam initialMomentum() {
        return initialMomentum;
    }

    public double getInitialMomentum() {
        return (Double) getOrDefault(initialMomentum);
    }

    public GpuTsne setInitialMomentum(double value) {
        set(initialMomentum, value);
        return this;
    }

    /** Momentum after the exaggeration phase, in [0, 1). */
    public DoubleParam finalMomentum() {
        return finalMomentum;
    }

    public double getFinalMomentum() {
        return (Double) getOrDefault(finalMomentum);
    }

    public GpuTsne setFinalMomentum(double value) {
        set(finalMomentum, value);
        return this;
    }

    /** Floor of the delta-bar-delta gains, in (0, 1]. */
    public DoubleParam minGain() {
        return minGain;
    }

    public double getMinGain() {
        return (Double) getOrDefault(minGain);
    }

    public GpuTsne setMinGain(double value) {
        set(minGain, value);
        return this;
    }

    /** Gradient iterations (>= 0). */
    public IntParam maxIter() {
        return maxIter;
    }

    public int getMaxIter() {
        return (Integer) getOrDefault(maxIter);
    }

    public GpuTsne setMaxIter(int value) {
        set(maxIter, value);
        return this;
    }

    /** Initialisation: 'pca' (first principal components, scaled to std 1e-4) or 'random' (seeded Gaussian, std 1e-4). */
    public Param<String> init() {
        return init;
    }

    public String getInit() {
        return isDefined(init) ? getOrDefault(init) : null;
    }

    /** Sets init; null clears it. */
    public GpuTsne setInit(String value) {
        if (value == null) {
            clear(init);
        } else {
            set(init, value);
        }
        return this;
    }

    /** Random seed (random initialisation and samples). */
    public LongParam seed() {
        return seed;
    }

    public long getSeed() {
        return (Long) getOrDefault(seed);
    }

    public GpuTsne setSeed(long value) {
        set(seed, value);
        return this;
    }

    /** Reduce the features to this many principal components (MLlib PCA) before the kNN; 0 = no reduction. */
    public IntParam pcaDimension() {
        return pcaDimension;
    }

    public int getPcaDimension() {
        return (Integer) getOrDefault(pcaDimension);
    }

    public GpuTsne setPcaDimension(int value) {
        set(pcaDimension, value);
        return this;
    }

    /** 'single' (P and Y on the driver's device), 'distributed' (P sliced over executors, grids reduced on the driver) or 'auto' (single when nnz(P) + n (dimension + features) <= singleModeMaxEntries). */
    public Param<String> mode() {
        return mode;
    }

    public String getMode() {
        return isDefined(mode) ? getOrDefault(mode) : null;
    }

    /** Sets mode; null clears it. */
    public GpuTsne setMode(String value) {
        if (value == null) {
            clear(mode);
        } else {
            set(mode, value);
        }
        return this;
    }

    /** Auto mode threshold, see mode (>= 0). */
    public LongParam singleModeMaxEntries() {
        return singleModeMaxEntries;
    }

    public long getSingleModeMaxEntries() {
        return (Long) getOrDefault(singleModeMaxEntries);
    }

    public GpuTsne setSingleModeMaxEntries(long value) {
        set(singleModeMaxEntries, value);
        return this;
    }

    /** Interpolation nodes per grid box per axis, 1..8. */
    public IntParam gridNodesPerInterval() {
        return gridNodesPerInterval;
    }

    public int getGridNodesPerInterval() {
        return (Integer) getOrDefault(gridNodesPerInterval);
    }

    public GpuTsne setGridNodesPerInterval(int value) {
        set(gridNodesPerInterval, value);
        return this;
    }

    /** Grid boxes per unit of embedding extent (> 0). */
    public DoubleParam gridIntervalsPerUnit() {
        return gridIntervalsPerUnit;
    }

    public double getGridIntervalsPerUnit() {
        return (Double) getOrDefault(gridIntervalsPerUnit);
    }

    public GpuTsne setGridIntervalsPerUnit(double value) {
        set(gridIntervalsPerUnit, value);
        return this;
    }

    /** Fewest grid boxes per axis (>= 1; at most 50 so that the 3-D bound holds). */
    public IntParam gridMinIntervals() {
        return gridMinIntervals;
    }

    public int getGridMinIntervals() {
        return (Integer) getOrDefault(gridMinIntervals);
    }

    public GpuTsne setGridMinIntervals(int value) {
        set(gridMinIntervals, value);
        return this;
    }

    /** Distributed mode: at most this many partitions of P slices (0: the input's). */
    public IntParam distributedPartitions() {
        return distributedPartitions;
    }

    public int getDistributedPartitions() {
        return (Integer) getOrDefault(distributedPartitions);
    }

    public GpuTsne setDistributedPartitions(int value) {
        set(distributedPartitions, value);
        return this;
    }

    /** Most grid boxes per axis; 0 = the default for the dimension. */
    public IntParam gridMaxIntervals() {
        return gridMaxIntervals;
    }

    public int getGridMaxIntervals() {
        return (Integer) getOrDefault(gridMaxIntervals);
    }

    public GpuTsne setGridMaxIntervals(int value) {
        set(gridMaxIntervals, value);
        return this;
    }

    /** Grid convolution: 'auto', 'direct' or 'fft'. */
    public Param<String> convolution() {
        return convolution;
    }

    public String getConvolution() {
        return isDefined(convolution) ? getOrDefault(convolution) : null;
    }

    /** Sets convolution; null clears it. */
    public GpuTsne setConvolution(String value) {
        if (value == null) {
            clear(convolution);
        } else {
            set(convolution, value);
        }
        return this;
    }

    /** Report KL every this many iterations (0: only the final one). */
    public IntParam klEvery() {
        return klEvery;
    }

    public int getKlEvery() {
        return (Integer) getOrDefault(klEvery);
    }

    public GpuTsne setKlEvery(int value) {
        set(klEvery, value);
        return this;
    }

    /** Points of the seeded sample on which trustworthiness and kNN preservation are computed (0: skip). */
    public IntParam qualitySampleSize() {
        return qualitySampleSize;
    }

    public int getQualitySampleSize() {
        return (Integer) getOrDefault(qualitySampleSize);
    }

    public GpuTsne setQualitySampleSize(int value) {
        set(qualitySampleSize, value);
        return this;
    }

    /** Column identifying rows (unset: the row index, as column "id" of the embedding). */
    public Param<String> idCol() {
        return idCol;
    }

    public String getIdCol() {
        return isDefined(idCol) ? getOrDefault(idCol) : null;
    }

    /** Sets idCol; null or "" means the generated row index. */
    public GpuTsne setIdCol(String value) {
        if (value == null || value.isEmpty()) {
            clear(idCol);
        } else {
            set(idCol, value);
        }
        return this;
    }

    /** Output column of the model's transform and embedding (default "embedding"). */
    public Param<String> outputCol() {
        return outputCol;
    }

    public String getOutputCol() {
        return getOrDefault(outputCol);
    }

    public GpuTsne setOutputCol(String value) {
        set(outputCol, value);
        return this;
    }

    /** "auto" (default), "gpu" or "cpu". */
    public Param<String> backend() {
        return backend;
    }

    public String getBackend() {
        return getOrDefault(backend);
    }

    /** "auto", "gpu" or "cpu" (case-insensitive; stored in lower case). */
    public GpuTsne setBackend(String value) {
        set(backend, Backend.parse(value, "backend").id());
        return this;
    }

    /** Listener of the KL reports (not a Param: neither copied to models nor saved). */
    public GpuTsne setProgress(TsneProgress listener) {
        this.progress = listener;
        return this;
    }

    public TsneProgress getProgress() {
        return progress;
    }

    // ------------------------------------------------------------------ fitting

    boolean graphMode() {
        String s = getSrcCol();
        return s != null && !s.isEmpty();
    }

    /** The engine settings these params describe, validated (errors name the param). */
    public TsneConfig toConfig() {
        TsneConfig c = new TsneConfig();
        c.dimension = getDimension();
        c.perplexity = getPerplexity();
        c.k = getK();
        c.earlyExaggeration = getEarlyExaggeration();
        c.exaggerationIterations = getExaggerationIterations();
        c.learningRate = getLearningRate();
        c.initialMomentum = getInitialMomentum();
        c.finalMomentum = getFinalMomentum();
        c.minGain = getMinGain();
        c.maxIter = getMaxIter();
        c.init = getInit();
        c.seed = getSeed();
        c.backend = Backend.parse(getBackend(), "backend");
        c.mode = getMode();
        c.klEvery = getKlEvery();
        c.singleModeMaxEntries = getSingleModeMaxEntries();
        c.distributedPartitions = getDistributedPartitions();
        c.grid = TsneConfig.gridOptions(getGridNodesPerInterval(), getGridIntervalsPerUnit(), getGridMinIntervals(),
                getGridMaxIntervals());
        c.convolution = TsneConfig.parseConvolution(getConvolution(), "convolution");
        return c.validate();
    }

    /**
     * Embeds the rows of {@code dataset}: validates params and columns ({@link IllegalArgumentException} naming the
     * param or column), runs {@link TsneTrainer}, and returns a model with the embedding and a summary.
     */
    @Override
    public GpuTsneModel fit(Dataset<?> dataset) {
        TsneConfig cfg = toConfig();
        transformSchema(dataset.schema());
        TsneFit f;
        if (graphMode()) {
            if (getDstCol() == null) {
                throw new IllegalArgumentException("dstCol must be set in graph mode (srcCol is set)");
            }
            f = TsneTrainer.fitGraph(dataset, getSrcCol(), getDstCol(), getWeightCol(), cfg, progress);
        } else {
            f = TsneTrainer.fitFeatures(dataset, getFeaturesCol(), getIdCol(), getPcaDimension(), cfg,
                    getQualitySampleSize(), progress);
        }
        String idName = GpuTsneParams.idName(getIdCol());
        GpuTsneModel model = new GpuTsneModel(uid, f.ids, f.idType, f.result.embedding, f.result.dim);
        copyValues(model, ParamMap.empty());
        if (!isDefined(idCol)) {
            model.setIdCol(idName);
        }
        model.setSummary(GpuTsneSummary.from(f));
        return model.setParent(this);
    }

    /** Checks the input columns; the schema of {@link GpuTsneModel#embedding()}-joined rows is returned. */
    @Override
    public StructType transformSchema(StructType schema) {
        if (graphMode()) {
            io.sparkgpu.common.SchemaColumns.index(schema, getSrcCol(), "srcCol");
            io.sparkgpu.common.SchemaColumns.index(schema, getDstCol(), "dstCol");
            if (getWeightCol() != null) {
                io.sparkgpu.common.SchemaColumns.numeric(schema, getWeightCol(), "weightCol");
            }
            return schema;
        }
        io.sparkgpu.kmeans.Features.checkFeatures(schema, getFeaturesCol());
        String id = getIdCol();
        if (id != null) {
            int i = io.sparkgpu.common.SchemaColumns.index(schema, id, "idCol");
            if (!TsneTrainer.isIdType(schema.fields()[i].dataType())) {
                throw new IllegalArgumentException("idCol '" + id + "' must be numeric or string, but has type "
                        + schema.fields()[i].dataType().simpleString());
            }
        }
        return GpuTsneParams.appendOutput(schema, getOutputCol());
    }

    @Override
    public GpuTsne copy(ParamMap extra) {
        GpuTsne c = defaultCopy(extra);
        c.progress = progress;
        return c;
    }

    // ------------------------------------------------------------------ persistence

    @Override
    public MLWriter write() {
        return new Writer(this);
    }

    public static MLReader<GpuTsne> read() {
        return new Reader();
    }

    public static GpuTsne load(String path) {
        return read().load(path);
    }

    private static final class Writer extends MLWriter {
        private final GpuTsne instance;

        Writer(GpuTsne instance) {
            this.instance = instance;
        }

        @Override
        public void saveImpl(String path) {
            ParamsIO.saveMetadata(instance, path, sparkSession(), null);
        }
    }

    private static final class Reader extends MLReader<GpuTsne> {
        @Override
        public GpuTsne load(String path) {
            ParamsIO.Metadata md = ParamsIO.loadMetadata(path, sparkSession(), GpuTsne.class.getName());
            GpuTsne e = new GpuTsne(md.uid());
            md.applyTo(e);
            return e;
        }
    }
}
