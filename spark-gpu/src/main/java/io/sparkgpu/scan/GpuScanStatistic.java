package io.sparkgpu.scan;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.ml.ParamsIO;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.DoubleArrayParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntArrayParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.LongParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.StringArrayParam;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.types.StructType;

/**
 * The scan statistic as a Spark ML {@link Estimator}: finds the most anomalous axis-aligned ranges
 * (intervals, rectangles or boxes) of a 1-, 2- or 3-D grid by the likelihood-ratio test over every range,
 * with Monte Carlo p-values.
 *
 * <p><b>Method.</b> Kulldorff's spatial scan statistic (M. Kulldorff, "A spatial scan statistic", Comm.
 * Statist. Theory Methods 26(6), 1997) with the Poisson and Bernoulli models, the normal model (Kulldorff,
 * Huang, Konty, Int. J. Health Geographics 8:58, 2009) and the expectation-based Poisson statistic (Neill et
 * al., KDD 2005), over all M = prod_k n_k(n_k+1)/2 boxes of the grid. The boxes are enumerated through the
 * range mapping of G. Beliakov et al. ("Fast LRT implementation on parallel computer architectures"): each
 * axis's triangle of intervals is folded onto a rectangle, composed across axes in mixed radix, so that equal
 * index ranges are equal work for Spark tasks and GPU threads; each box costs O(1) from exact 64-bit prefix
 * tables (inclusion/exclusion). Secondary clusters are the best boxes overlapping no earlier cluster.
 * p = (1 + #replicas with max LLR >= LLR) / (R + 1), replicas drawn under the null hypothesis with
 * counter-based random numbers keyed by (seed, replica).
 *
 * <p><b>Cost.</b> Building the grid: two passes over the data. Each reported cluster: one scan, O(M) range
 * evaluations plus O(strips * n_x) table reads, split over {@code numPartitions} tasks. Replicas: R scans plus
 * O(cases log cells) drawing each.
 *
 * <p><b>Exactness of the combiner.</b> Tasks return (LLR, index) of their best range and the driver keeps the
 * largest LLR, then the smallest index: a total order, so the result is identical for any number of tasks and
 * any backend (the GPU kernels and the CPU twin compute the same LLR bits). Per-cell sums are exact (integers,
 * or DECIMAL), so the grid does not depend on the input's partitioning either.
 *
 * <p>Persistence uses MLlib's metadata layout ({@link ParamsIO}).
 */
public class GpuScanStatistic extends Estimator<GpuScanModel> implements MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final Param<String> inputType;
    private final StringArrayParam coordinateCols;
    private final Param<String> casesCol;
    private final Param<String> baselineCol;
    private final Param<String> sumSquaresCol;
    private final IntArrayParam gridSize;
    private final DoubleArrayParam extent;
    private final Param<String> statistic;
    private final Param<String> direction;
    private final LongParam minCells;
    private final LongParam maxCells;
    private final DoubleParam maxBaselineFraction;
    private final IntParam numClusters;
    private final IntParam numReplicas;
    private final LongParam seed;
    private final IntParam numPartitions;
    private final Param<String> backend;
    private final Param<String> clusterCol;

    public GpuScanStatistic() {
        this(Identifiable.randomUID("gpuscan"));
    }

    public GpuScanStatistic(String uid) {
        this.uid = uid;
        inputType = GpuScanParams.inputType(this);
        coordinateCols = GpuScanParams.coordinateCols(this);
        casesCol = GpuScanParams.casesCol(this);
        baselineCol = GpuScanParams.baselineCol(this);
        sumSquaresCol = GpuScanParams.sumSquaresCol(this);
        gridSize = GpuScanParams.gridSize(this);
        extent = GpuScanParams.extent(this);
        statistic = GpuScanParams.statistic(this);
        direction = GpuScanParams.direction(this);
        minCells = GpuScanParams.minCells(this);
        maxCells = GpuScanParams.maxCells(this);
        maxBaselineFraction = GpuScanParams.maxBaselineFraction(this);
        numClusters = GpuScanParams.numClusters(this);
        numReplicas = GpuScanParams.numReplicas(this);
        seed = GpuScanParams.seed(this);
        numPartitions = GpuScanParams.numPartitions(this);
        backend = GpuScanParams.backend(this);
        clusterCol = GpuScanParams.clusterCol(this);
        setDefault(inputType, ScanGridInfo.CELLS);
        setDefault(casesCol, GpuScanParams.DEFAULT_CASES);
        setDefault(baselineCol, GpuScanParams.DEFAULT_BASELINE);
        setDefault(statistic, ScanModel.POISSON.id());
        setDefault(direction, ScanDirection.HIGH.id());
        setDefault(minCells, 1L);
        setDefault(maxCells, 0L);
        setDefault(maxBaselineFraction, 1.0);
        setDefault(numClusters, 5);
        setDefault(numReplicas, 999);
        setDefault(seed, (long) GpuScanStatistic.class.getName().hashCode());
        setDefault(numPartitions, 0);
        setDefault(backend, "auto");
        setDefault(clusterCol, GpuScanParams.DEFAULT_CLUSTER);
    }

    @Override
    public String uid() {
        return uid;
    }

    // ------------------------------------------------------------------ params

    /** "cells" (default) or "points". */
    public Param<String> inputType() {
        return inputType;
    }

    /** 1 to 3 coordinate columns (required). */
    public StringArrayParam coordinateCols() {
        return coordinateCols;
    }

    /** Cases column (default "cases"). */
    public Param<String> casesCol() {
        return casesCol;
    }

    /** Baseline column (default "baseline"; for points input "" means 1 per point). */
    public Param<String> baselineCol() {
        return baselineCol;
    }

    /** Normal model, cells input: optional sum-of-squares column. */
    public Param<String> sumSquaresCol() {
        return sumSquaresCol;
    }

    /** Bins per axis (points); optional 0-based grid size (cells). */
    public IntArrayParam gridSize() {
        return gridSize;
    }

    /** Points: lo, hi per axis (default: the data's range). */
    public DoubleArrayParam extent() {
        return extent;
    }

    /** poisson (default), bernoulli, normal or ebp. */
    public Param<String> statistic() {
        return statistic;
    }

    /** high (default), low or both. */
    public Param<String> direction() {
        return direction;
    }

    public LongParam minCells() {
        return minCells;
    }

    /** 0 (default) = no limit. */
    public LongParam maxCells() {
        return maxCells;
    }

    /** In (0, 1], default 1 (every range). */
    public DoubleParam maxBaselineFraction() {
        return maxBaselineFraction;
    }

    /** Default 5. */
    public IntParam numClusters() {
        return numClusters;
    }

    /** Default 999. */
    public IntParam numReplicas() {
        return numReplicas;
    }

    public LongParam seed() {
        return seed;
    }

    /**
     * Spark tasks per scan and per replica job; 0 (default) = one per GPU that Spark schedules with a GPU backend
     * ({@code spark.sparkgpu.fit.gpuTasks} overrides), else the default parallelism. Small grids run on the
     * driver whatever this says ({@link ScanTrainer#LOCAL_WORK}).
     */
    public IntParam numPartitions() {
        return numPartitions;
    }

    /** "auto" (default), "gpu" or "cpu". */
    public Param<String> backend() {
        return backend;
    }

    /** Output column of the model's transform (default "cluster"). */
    public Param<String> clusterCol() {
        return clusterCol;
    }

    public String getInputType() {
        return getOrDefault(inputType);
    }

    public String[] getCoordinateCols() {
        return isDefined(coordinateCols) ? getOrDefault(coordinateCols) : null;
    }

    public String getCasesCol() {
        return getOrDefault(casesCol);
    }

    public String getBaselineCol() {
        return getOrDefault(baselineCol);
    }

    public String getSumSquaresCol() {
        return isDefined(sumSquaresCol) ? getOrDefault(sumSquaresCol) : null;
    }

    public int[] getGridSize() {
        return isDefined(gridSize) ? getOrDefault(gridSize) : null;
    }

    public double[] getExtent() {
        return isDefined(extent) ? getOrDefault(extent) : null;
    }

    public String getStatistic() {
        return getOrDefault(statistic);
    }

    public String getDirection() {
        return getOrDefault(direction);
    }

    public long getMinCells() {
        return (Long) getOrDefault(minCells);
    }

    public long getMaxCells() {
        return (Long) getOrDefault(maxCells);
    }

    public double getMaxBaselineFraction() {
        return (Double) getOrDefault(maxBaselineFraction);
    }

    public int getNumClusters() {
        return (Integer) getOrDefault(numClusters);
    }

    public int getNumReplicas() {
        return (Integer) getOrDefault(numReplicas);
    }

    public long getSeed() {
        return (Long) getOrDefault(seed);
    }

    public int getNumPartitions() {
        return (Integer) getOrDefault(numPartitions);
    }

    public String getBackend() {
        return getOrDefault(backend);
    }

    public String getClusterCol() {
        return getOrDefault(clusterCol);
    }

    public GpuScanStatistic setInputType(String v) {
        set(inputType, v);
        return this;
    }

    public GpuScanStatistic setCoordinateCols(String... v) {
        set(coordinateCols, v);
        return this;
    }

    public GpuScanStatistic setCasesCol(String v) {
        set(casesCol, v);
        return this;
    }

    public GpuScanStatistic setBaselineCol(String v) {
        set(baselineCol, v == null ? "" : v);
        return this;
    }

    public GpuScanStatistic setSumSquaresCol(String v) {
        if (v == null) {
            clear(sumSquaresCol);
        } else {
            set(sumSquaresCol, v);
        }
        return this;
    }

    public GpuScanStatistic setGridSize(int... v) {
        set(gridSize, v);
        return this;
    }

    public GpuScanStatistic setExtent(double... v) {
        set(extent, v);
        return this;
    }

    public GpuScanStatistic setStatistic(String v) {
        set(statistic, ScanModel.parse(v, "statistic").id());
        return this;
    }

    public GpuScanStatistic setDirection(String v) {
        set(direction, ScanDirection.parse(v, "direction").id());
        return this;
    }

    public GpuScanStatistic setMinCells(long v) {
        set(minCells, v);
        return this;
    }

    public GpuScanStatistic setMaxCells(long v) {
        set(maxCells, v);
        return this;
    }

    public GpuScanStatistic setMaxBaselineFraction(double v) {
        set(maxBaselineFraction, v);
        return this;
    }

    public GpuScanStatistic setNumClusters(int v) {
        set(numClusters, v);
        return this;
    }

    public GpuScanStatistic setNumReplicas(int v) {
        set(numReplicas, v);
        return this;
    }

    public GpuScanStatistic setSeed(long v) {
        set(seed, v);
        return this;
    }

    public GpuScanStatistic setNumPartitions(int v) {
        set(numPartitions, v);
        return this;
    }

    public GpuScanStatistic setBackend(String v) {
        set(backend, Backend.parse(v, "backend").id());
        return this;
    }

    public GpuScanStatistic setClusterCol(String v) {
        set(clusterCol, v);
        return this;
    }

    // ------------------------------------------------------------------ fitting

    /** The run settings these params describe (errors name the param). */
    public ScanConfig toConfig() {
        ScanConfig c = new ScanConfig();
        c.model = ScanModel.parse(getStatistic(), "statistic");
        c.direction = ScanDirection.parse(getDirection(), "direction");
        c.minCells = getMinCells();
        c.maxCells = getMaxCells();
        c.maxBaselineFraction = getMaxBaselineFraction();
        c.numClusters = getNumClusters();
        c.numReplicas = getNumReplicas();
        c.seed = getSeed();
        c.numPartitions = getNumPartitions();
        c.backend = Backend.parse(getBackend(), "backend");
        c.validate();
        return c;
    }

    /** The input description these params give (errors name the param). */
    public ScanInput toInput() {
        String[] coords = getCoordinateCols();
        if (coords == null) {
            throw new IllegalArgumentException("coordinateCols is not set: name 1 to 3 coordinate columns with "
                    + "setCoordinateCols");
        }
        return new ScanInput(getInputType(), coords, getCasesCol(), getBaselineCol(), getSumSquaresCol(), getGridSize(),
                getExtent());
    }

    /** Builds the grid, scans it (clusters and replicas) and returns the model with the result. */
    @Override
    public GpuScanModel fit(Dataset<?> dataset) {
        ScanConfig cfg = toConfig();
        ScanInput in = toInput();
        transformSchema(dataset.schema());
        ScanTrainer.Fitted f = ScanTrainer.fit(dataset, in, cfg);
        GpuScanModel m = copyValues(new GpuScanModel(uid, f.input.info, f.result), ParamMap.empty());
        return m.setParent(this);
    }

    /** Checks the coordinate columns and appends clusterCol (the model's transform output). */
    @Override
    public StructType transformSchema(StructType schema) {
        return GpuScanParams.appendCluster(schema, getCoordinateCols(), getClusterCol());
    }

    @Override
    public GpuScanStatistic copy(ParamMap extra) {
        return defaultCopy(extra);
    }

    // ------------------------------------------------------------------ persistence

    @Override
    public MLWriter write() {
        return new Writer(this);
    }

    public static MLReader<GpuScanStatistic> read() {
        return new Reader();
    }

    public static GpuScanStatistic load(String path) {
        return read().load(path);
    }

    private static final class Writer extends MLWriter {
        private final GpuScanStatistic instance;

        Writer(GpuScanStatistic instance) {
            this.instance = instance;
        }

        @Override
        public void saveImpl(String path) {
            ParamsIO.saveMetadata(instance, path, sparkSession(), null);
        }
    }

    private static final class Reader extends MLReader<GpuScanStatistic> {
        @Override
        public GpuScanStatistic load(String path) {
            ParamsIO.Metadata md = ParamsIO.loadMetadata(path, sparkSession(), GpuScanStatistic.class.getName());
            GpuScanStatistic e = new GpuScanStatistic(md.uid());
            md.applyTo(e);
            return e;
        }
    }
}
