package io.sparkgpu.tsne;

import static io.sparkgpu.ml.ParamChecks.doubleValidator;
import static io.sparkgpu.ml.ParamChecks.intValidator;
import static io.sparkgpu.ml.ParamChecks.longValidator;
import static io.sparkgpu.ml.ParamChecks.validator;

import io.sparkgpu.ml.HasFeaturesCol;
import io.sparkgpu.ml.HasSeed;
import io.sparkgpu.ml.HasWeightCol;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.LongParam;
import org.apache.spark.ml.param.Param;

/**
 * The params of {@link GpuTsne}: those of {@link GpuTsneModelParams}, the input columns (featuresCol, or srcCol,
 * dstCol and weightCol in graph mode) and every setting of {@link TsneConfig}, whose static checks are the
 * validators. {@link #toConfig()} is the config they describe.
 */
public interface GpuTsneParams<T extends GpuTsneParams<T>>
        extends GpuTsneModelParams<T>, HasFeaturesCol<T>, HasWeightCol<T>, HasSeed<T> {

    // ------------------------------------------------------------------ declarations (name, doc, rule)

    default Param<String> srcCol() {
        return slot("srcCol", o -> new Param<>(o, "srcCol", "Graph mode: source vertex column (int, long or string); "
                + "when set, the input is a weighted graph used as P."));
    }

    default Param<String> dstCol() {
        return slot("dstCol", o -> new Param<>(o, "dstCol", "Graph mode: destination vertex column (same type as "
                + "srcCol)."));
    }

    default IntParam dimension() {
        return slot("dimension", o -> new IntParam(o, "dimension", "Embedding dimension: 1, 2 or 3.",
                intValidator(TsneConfig::checkDimension)));
    }

    default DoubleParam perplexity() {
        return slot("perplexity", o -> new DoubleParam(o, "perplexity", "Target perplexity of the conditional "
                + "affinities (> 1, < k, so < n - 1).", doubleValidator(TsneConfig::checkPerplexity)));
    }

    default IntParam k() {
        return slot("k", o -> new IntParam(o, "k", "Neighbours per point (> perplexity, <= n - 1); 0 means "
                + "min(ceil(3 * perplexity), n - 1).", intValidator(TsneConfig::checkK)));
    }

    default IntParam knnProbes() {
        return slot("knnProbes", o -> new IntParam(o, "knnProbes", "0: the exact kNN (default). P > 0: the "
                + "approximate kNN, searching each point's neighbours in the P cells of about 2048 points nearest to "
                + "its own (single-device mode).", intValidator(v -> TsneConfig.checkKnnProbes(v, true))));
    }

    default DoubleParam earlyExaggeration() {
        return slot("earlyExaggeration", o -> new DoubleParam(o, "earlyExaggeration", "Factor on P during the first "
                + "exaggerationIterations iterations (> 0).", doubleValidator(TsneConfig::checkEarlyExaggeration)));
    }

    default IntParam exaggerationIterations() {
        return slot("exaggerationIterations", o -> new IntParam(o, "exaggerationIterations", "Iterations with early "
                + "exaggeration and initial momentum (>= 0).", intValidator(TsneConfig::checkExaggerationIterations)));
    }

    default DoubleParam lateExaggeration() {
        return slot("lateExaggeration", o -> new DoubleParam(o, "lateExaggeration", "Factor on P from iteration "
                + "lateExaggerationIter on, after the early phase (>= 1; 1: off).",
                doubleValidator(TsneConfig::checkLateExaggeration)));
    }

    default IntParam lateExaggerationIter() {
        return slot("lateExaggerationIter", o -> new IntParam(o, "lateExaggerationIter", "First iteration (0-based) "
                + "of the late exaggeration (>= 0; iterations of the early phase keep earlyExaggeration).",
                intValidator(TsneConfig::checkLateExaggerationIter)));
    }

    default DoubleParam learningRate() {
        return slot("learningRate", o -> new DoubleParam(o, "learningRate", "Gradient step (finite, > 0); 0 means "
                + "auto = max(n / earlyExaggeration, 200).", doubleValidator(TsneConfig::checkLearningRate)));
    }

    default DoubleParam initialMomentum() {
        return slot("initialMomentum", o -> new DoubleParam(o, "initialMomentum", "Momentum during the exaggeration "
                + "phase, in [0, 1).", doubleValidator(TsneConfig::checkInitialMomentum)));
    }

    default DoubleParam finalMomentum() {
        return slot("finalMomentum", o -> new DoubleParam(o, "finalMomentum", "Momentum after the exaggeration phase, "
                + "in [0, 1).", doubleValidator(TsneConfig::checkFinalMomentum)));
    }

    default DoubleParam minGain() {
        return slot("minGain", o -> new DoubleParam(o, "minGain", "Floor of the delta-bar-delta gains, in (0, 1].",
                doubleValidator(TsneConfig::checkMinGain)));
    }

    default IntParam maxIter() {
        return slot("maxIter", o -> new IntParam(o, "maxIter", "Gradient iterations (>= 0).",
                intValidator(TsneConfig::checkMaxIter)));
    }

    default Param<String> init() {
        return slot("init", o -> new Param<>(o, "init", "Initialisation: 'pca' (first principal components, scaled to "
                + "std 1e-4) or 'random' (seeded Gaussian, std 1e-4).", validator(TsneConfig::parseInit)));
    }

    default IntParam pcaDimension() {
        return slot("pcaDimension", o -> new IntParam(o, "pcaDimension", "Reduce the features to this many principal "
                + "components (MLlib PCA) before the kNN; 0 = no reduction.", intValidator(TsneConfig::checkPcaDimension)));
    }

    default Param<String> mode() {
        return slot("mode", o -> new Param<>(o, "mode", "'single' (P and Y on the driver's device), 'distributed' (P "
                + "sliced over executors, grids reduced on the driver) or 'auto' (single when nnz(P) + n (dimension + "
                + "features) <= singleModeMaxEntries).", validator(TsneConfig::parseMode)));
    }

    default LongParam singleModeMaxEntries() {
        return slot("singleModeMaxEntries", o -> new LongParam(o, "singleModeMaxEntries", "Auto mode threshold, see "
                + "mode (>= 0).", longValidator(TsneConfig::checkSingleModeMaxEntries)));
    }

    default IntParam gridNodesPerInterval() {
        return slot("gridNodesPerInterval", o -> new IntParam(o, "gridNodesPerInterval", "Interpolation nodes per grid "
                + "box per axis, 1..8.", intValidator(TsneConfig::checkGridNodesPerInterval)));
    }

    default DoubleParam gridIntervalsPerUnit() {
        return slot("gridIntervalsPerUnit", o -> new DoubleParam(o, "gridIntervalsPerUnit", "Grid boxes per unit of "
                + "embedding extent (finite, > 0).", doubleValidator(TsneConfig::checkGridIntervalsPerUnit)));
    }

    default IntParam gridMinIntervals() {
        return slot("gridMinIntervals", o -> new IntParam(o, "gridMinIntervals", "Fewest grid boxes per axis (>= 1, "
                + "<= gridMaxIntervals when that is set).", intValidator(TsneConfig::checkGridMinIntervals)));
    }

    default IntParam gridMaxIntervals() {
        return slot("gridMaxIntervals", o -> new IntParam(o, "gridMaxIntervals", "Most grid boxes per axis (>= "
                + "gridMinIntervals; the grid, (gridMaxIntervals x gridNodesPerInterval)^dimension nodes, must fit the "
                + "convolution); 0 = the default for the dimension (2000, 320, 40 in 1-, 2-, 3-D).",
                intValidator(TsneConfig::checkGridMaxIntervals)));
    }

    default IntParam distributedPartitions() {
        return slot("distributedPartitions", o -> new IntParam(o, "distributedPartitions", "Distributed mode: coalesce "
                + "the row slices of P into at most this many partitions (e.g. one per executor or GPU; each sends one "
                + "grid per iteration); 0 keeps the input's partitions.",
                intValidator(TsneConfig::checkDistributedPartitions)));
    }

    default Param<String> convolution() {
        return slot("convolution", o -> new Param<>(o, "convolution", "Grid convolution: 'auto', 'direct' or 'fft'.",
                validator(v -> TsneConfig.parseConvolution(v, "convolution"))));
    }

    default Param<String> repulsion() {
        return slot("repulsion", o -> new Param<>(o, "repulsion", "Repulsive term: 'exact' (all n^2 pairs), 'grid' "
                + "(interpolation on a grid sized from the embedding's extent) or 'auto' (exact when n <= "
                + TsneConfig.EXACT_MAX_POINTS + ", else grid); the same on every backend.",
                validator(TsneConfig::parseRepulsion)));
    }

    default IntParam klEvery() {
        return slot("klEvery", o -> new IntParam(o, "klEvery", "Report KL every this many iterations (0: only the "
                + "final one).", intValidator(TsneConfig::checkKlEvery)));
    }

    default IntParam qualitySampleSize() {
        return slot("qualitySampleSize", o -> new IntParam(o, "qualitySampleSize", "Points of the seeded sample on "
                + "which trustworthiness and kNN preservation are computed (0: skip).",
                intValidator(TsneConfig::checkQualitySampleSize)));
    }

    // ------------------------------------------------------------------ getters

    default String getSrcCol() { return valueOrNull(srcCol()); }
    default String getDstCol() { return valueOrNull(dstCol()); }
    default int getDimension() { return (Integer) getOrDefault(dimension()); }
    default double getPerplexity() { return (Double) getOrDefault(perplexity()); }
    default int getK() { return (Integer) getOrDefault(k()); }
    default int getKnnProbes() { return (Integer) getOrDefault(knnProbes()); }
    default double getEarlyExaggeration() { return (Double) getOrDefault(earlyExaggeration()); }
    default int getExaggerationIterations() { return (Integer) getOrDefault(exaggerationIterations()); }
    default double getLearningRate() { return (Double) getOrDefault(learningRate()); }
    default double getInitialMomentum() { return (Double) getOrDefault(initialMomentum()); }
    default double getFinalMomentum() { return (Double) getOrDefault(finalMomentum()); }
    default double getMinGain() { return (Double) getOrDefault(minGain()); }
    default int getMaxIter() { return (Integer) getOrDefault(maxIter()); }
    default String getInit() { return valueOrNull(init()); }
    default int getPcaDimension() { return (Integer) getOrDefault(pcaDimension()); }
    default String getMode() { return valueOrNull(mode()); }
    default long getSingleModeMaxEntries() { return (Long) getOrDefault(singleModeMaxEntries()); }
    default int getGridNodesPerInterval() { return (Integer) getOrDefault(gridNodesPerInterval()); }
    default double getGridIntervalsPerUnit() { return (Double) getOrDefault(gridIntervalsPerUnit()); }
    default int getGridMinIntervals() { return (Integer) getOrDefault(gridMinIntervals()); }
    default int getGridMaxIntervals() { return (Integer) getOrDefault(gridMaxIntervals()); }
    default int getDistributedPartitions() { return (Integer) getOrDefault(distributedPartitions()); }
    default String getConvolution() { return valueOrNull(convolution()); }
    default String getRepulsion() { return valueOrNull(repulsion()); }
    default int getKlEvery() { return (Integer) getOrDefault(klEvery()); }
    default int getQualitySampleSize() { return (Integer) getOrDefault(qualitySampleSize()); }

    // ------------------------------------------------------------------ setters (null clears a string param)

    default T setSrcCol(String v) { return withOrClear(srcCol(), v); }
    default T setDstCol(String v) { return withOrClear(dstCol(), v); }
    default T setDimension(int v) { return with(dimension(), v); }
    default T setPerplexity(double v) { return with(perplexity(), v); }
    default T setK(int v) { return with(k(), v); }
    default T setKnnProbes(int v) { return with(knnProbes(), v); }
    default T setEarlyExaggeration(double v) { return with(earlyExaggeration(), v); }
    default T setExaggerationIterations(int v) { return with(exaggerationIterations(), v); }
    default T setLateExaggeration(double v) { return with(lateExaggeration(), v); }
    default T setLateExaggerationIter(int v) { return with(lateExaggerationIter(), v); }
    default double getLateExaggeration() { return (Double) getOrDefault(lateExaggeration()); }
    default int getLateExaggerationIter() { return (Integer) getOrDefault(lateExaggerationIter()); }
    default T setLearningRate(double v) { return with(learningRate(), v); }
    default T setInitialMomentum(double v) { return with(initialMomentum(), v); }
    default T setFinalMomentum(double v) { return with(finalMomentum(), v); }
    default T setMinGain(double v) { return with(minGain(), v); }
    default T setMaxIter(int v) { return with(maxIter(), v); }
    default T setInit(String v) { return withOrClear(init(), v == null ? null : TsneConfig.parseInit(v)); }
    default T setPcaDimension(int v) { return with(pcaDimension(), v); }
    default T setMode(String v) { return withOrClear(mode(), v == null ? null : TsneConfig.parseMode(v)); }
    default T setSingleModeMaxEntries(long v) { return with(singleModeMaxEntries(), v); }
    default T setGridNodesPerInterval(int v) { return with(gridNodesPerInterval(), v); }
    default T setGridIntervalsPerUnit(double v) { return with(gridIntervalsPerUnit(), v); }
    default T setGridMinIntervals(int v) { return with(gridMinIntervals(), v); }
    default T setGridMaxIntervals(int v) { return with(gridMaxIntervals(), v); }
    default T setDistributedPartitions(int v) { return with(distributedPartitions(), v); }
    default T setConvolution(String v) { return withOrClear(convolution(), v == null ? null : v.trim().toLowerCase(java.util.Locale.ROOT)); }
    default T setRepulsion(String v) { return withOrClear(repulsion(), v == null ? null : TsneConfig.parseRepulsion(v)); }
    default T setKlEvery(int v) { return with(klEvery(), v); }
    default T setQualitySampleSize(int v) { return with(qualitySampleSize(), v); }

    // ------------------------------------------------------------------ the config

    /** Graph mode: srcCol is set. */
    default boolean graphMode() {
        String s = getSrcCol();
        return s != null && !s.isEmpty();
    }

    /** The engine settings these params describe (validated by the trainer: {@link TsneConfig#validate()}). */
    default TsneConfig toConfig() {
        TsneConfig c = new TsneConfig();
        c.dimension = getDimension();
        c.perplexity = getPerplexity();
        c.k = getK();
        c.knnProbes = getKnnProbes();
        c.earlyExaggeration = getEarlyExaggeration();
        c.exaggerationIterations = getExaggerationIterations();
        c.dof = getDof();
        c.lateExaggeration = getLateExaggeration();
        c.lateExaggerationIter = getLateExaggerationIter();
        c.learningRate = getLearningRate();
        c.initialMomentum = getInitialMomentum();
        c.finalMomentum = getFinalMomentum();
        c.minGain = getMinGain();
        c.maxIter = getMaxIter();
        c.init = getInit();
        c.seed = getSeed();
        c.backend = backendSetting();
        c.mode = getMode();
        c.klEvery = getKlEvery();
        c.singleModeMaxEntries = getSingleModeMaxEntries();
        c.distributedPartitions = getDistributedPartitions();
        c.pcaDimension = getPcaDimension();
        c.qualitySampleSize = getQualitySampleSize();
        c.grid = TsneConfig.gridOptions(getGridNodesPerInterval(), getGridIntervalsPerUnit(), getGridMinIntervals(),
                getGridMaxIntervals());
        c.convolution = TsneConfig.parseConvolution(getConvolution(), "convolution");
        c.repulsion = getRepulsion() == null ? TsneConfig.REPULSION_AUTO : getRepulsion();
        return c;
    }
}
