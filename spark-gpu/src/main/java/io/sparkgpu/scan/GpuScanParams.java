package io.sparkgpu.scan;

import io.sparkgpu.ml.HasBackend;
import io.sparkgpu.ml.HasSeed;
import io.sparkgpu.ml.ParamChecks;
import org.apache.spark.ml.param.DoubleArrayParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntArrayParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.LongParam;
import org.apache.spark.ml.param.Param;

/**
 * The params of {@link GpuScanStatistic}: those of {@link GpuScanModelParams} plus the input columns, grid and the
 * scan settings. Validators are the rules of {@link ScanConfig} (scan settings) and {@link ScanInput} (input);
 * {@link #toConfig()} and {@link #toInput()} are what the params describe.
 */
public interface GpuScanParams<T extends GpuScanParams<T>> extends GpuScanModelParams<T>, HasSeed<T>, HasBackend<T> {
    String DEFAULT_CASES = "cases";
    String DEFAULT_BASELINE = "baseline";

    /**
     * Cases per row, finite and &gt;= 0: whole or fractional counts for poisson and ebp (fractional counts are used
     * exactly in the observed statistic; a poisson replica allocates C rounded half up cases, at least 1, each
     * carrying C / N so that its total is the observed C; ebp replicas are whole Poisson counts), whole counts or
     * 0/1 flags for bernoulli; the observed value for the normal model. See {@link ScanModel}.
     */
    default Param<String> casesCol() {
        return slot("casesCol", o -> new Param<>(o, "casesCol", "Cases per row, finite >= 0: counts (cells), 0/1 flags "
                + "or counts (points), fractional allowed for poisson and ebp (a poisson replica allocates N = C rounded "
                + "half up cases of C / N each), whole for bernoulli; the observed value for the normal model."));
    }

    default Param<String> baselineCol() {
        return slot("baselineCol", o -> new Param<>(o, "baselineCol", "Baseline per row: population or expected count "
                + "(Poisson), population (Bernoulli), expected count (ebp), number of observations (normal). Optional "
                + "for points (1 each)."));
    }

    default Param<String> sumSquaresCol() {
        return slot("sumSquaresCol", o -> new Param<>(o, "sumSquaresCol", "Normal model with cells input: per-cell sum "
                + "of squared observations (optional)."));
    }

    default IntArrayParam gridSize() {
        return slot("gridSize", o -> new IntArrayParam(this, "gridSize", "Bins per axis (points, required); for cells "
                + "an optional grid size with 0-based coordinates.",
                ParamChecks.<int[]>validator(ScanInput::checkGridSize)));
    }

    default DoubleArrayParam extent() {
        return slot("extent", o -> new DoubleArrayParam(this, "extent", "Points only, optional: lo, hi of each axis "
                + "(default: the data's range)."));
    }

    default LongParam minCells() {
        return slot("minCells", o -> new LongParam(o, "minCells", "Smallest range in cells (>= 1).",
                ParamChecks.longValidator(ScanConfig::checkMinCells)));
    }

    default LongParam maxCells() {
        return slot("maxCells", o -> new LongParam(o, "maxCells", "Largest range in cells (>= minCells; 0 = no limit).",
                ParamChecks.longValidator(ScanConfig::checkMaxCells)));
    }

    default DoubleParam maxBaselineFraction() {
        return slot("maxBaselineFraction", o -> new DoubleParam(o, "maxBaselineFraction", "Largest share of the total "
                + "baseline inside a range, in (0, 1] (SaTScan's usual limit is 0.5).",
                ParamChecks.doubleValidator(ScanConfig::checkMaxBaselineFraction)));
    }

    default IntParam numClusters() {
        return slot("numClusters", o -> new IntParam(o, "numClusters", "Clusters to report: the most likely one and up "
                + "to numClusters-1 non-overlapping secondary clusters (1.." + (ScanSpec.MAX_EXCLUDED + 1) + ").",
                ParamChecks.intValidator(ScanConfig::checkNumClusters)));
    }

    default IntParam numReplicas() {
        return slot("numReplicas", o -> new IntParam(o, "numReplicas", "Monte Carlo replicas for the p-values "
                + "(0 = none).", ParamChecks.intValidator(ScanConfig::checkNumReplicas)));
    }

    /**
     * Spark tasks per scan and per replica job; 0 (default) = one per GPU that Spark schedules with a GPU backend
     * ({@code spark.sparkgpu.fit.gpuTasks} overrides), else the default parallelism. Small grids run on the
     * driver whatever this says ({@link ScanTrainer#LOCAL_WORK}).
     */
    default IntParam numPartitions() {
        return slot("numPartitions", o -> new IntParam(o, "numPartitions", "Spark tasks per scan (0 = automatic).",
                ParamChecks.intValidator(ScanConfig::checkNumPartitions)));
    }

    default String getCasesCol() {
        return getOrDefault(casesCol());
    }

    default String getBaselineCol() {
        return getOrDefault(baselineCol());
    }

    default String getSumSquaresCol() {
        return valueOrNull(sumSquaresCol());
    }

    default int[] getGridSize() {
        return valueOrNull(gridSize());
    }

    default double[] getExtent() {
        return valueOrNull(extent());
    }

    default long getMinCells() {
        return (Long) getOrDefault(minCells());
    }

    default long getMaxCells() {
        return (Long) getOrDefault(maxCells());
    }

    default double getMaxBaselineFraction() {
        return (Double) getOrDefault(maxBaselineFraction());
    }

    default int getNumClusters() {
        return (Integer) getOrDefault(numClusters());
    }

    default int getNumReplicas() {
        return (Integer) getOrDefault(numReplicas());
    }

    default int getNumPartitions() {
        return (Integer) getOrDefault(numPartitions());
    }

    default T setInputType(String v) {
        return with(inputType(), v);
    }

    default T setCasesCol(String v) {
        return with(casesCol(), v);
    }

    /** Baseline column; null or "" for points input means 1 per point. */
    default T setBaselineCol(String v) {
        return with(baselineCol(), v == null ? "" : v);
    }

    /** Normal model, cells input; null clears it. */
    default T setSumSquaresCol(String v) {
        return withOrClear(sumSquaresCol(), v);
    }

    /** Bins per axis; null clears it. */
    default T setGridSize(int... v) {
        return withOrClear(gridSize(), v);
    }

    /** lo, hi per axis (points); null clears it. */
    default T setExtent(double... v) {
        return withOrClear(extent(), v);
    }

    /**
     * poisson, bernoulli, normal or ebp (any case). poisson and ebp take fractional case counts (replica convention:
     * {@link #casesCol()}); bernoulli needs whole ones ({@link ScanModel#WHOLE_CASES_REASON}).
     */
    default T setStatistic(String v) {
        return with(statistic(), ScanConfig.checkStatistic(v).id());
    }

    /** high, low or both (any case). */
    default T setDirection(String v) {
        return with(direction(), ScanConfig.checkDirection(v).id());
    }

    default T setMinCells(long v) {
        return with(minCells(), v);
    }

    default T setMaxCells(long v) {
        return with(maxCells(), v);
    }

    default T setMaxBaselineFraction(double v) {
        return with(maxBaselineFraction(), v);
    }

    default T setNumClusters(int v) {
        return with(numClusters(), v);
    }

    default T setNumReplicas(int v) {
        return with(numReplicas(), v);
    }

    default T setNumPartitions(int v) {
        return with(numPartitions(), v);
    }

    /** The run settings these params describe (validated by {@link ScanTrainer#fit}). */
    default ScanConfig toConfig() {
        ScanConfig c = new ScanConfig();
        c.model = ScanConfig.checkStatistic(getStatistic());
        c.direction = ScanConfig.checkDirection(getDirection());
        c.minCells = getMinCells();
        c.maxCells = getMaxCells();
        c.maxBaselineFraction = getMaxBaselineFraction();
        c.numClusters = getNumClusters();
        c.numReplicas = getNumReplicas();
        c.seed = getSeed();
        c.numPartitions = getNumPartitions();
        c.backend = backendSetting();
        return c;
    }

    /** The input these params describe; errors name the param. */
    default ScanInput toInput() {
        String[] coords = getCoordinateCols();
        if (coords == null) {
            throw new IllegalArgumentException("coordinateCols is not set: name 1 to 3 coordinate columns with "
                    + "setCoordinateCols");
        }
        return new ScanInput(getInputType(), coords, getCasesCol(), getBaselineCol(), getSumSquaresCol(), getGridSize(),
                getExtent());
    }
}
