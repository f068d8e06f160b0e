package io.sparkgpu.scan;

import static io.sparkgpu.ml.ParamChecks.require;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.ml.HasSeed;
import java.io.Serializable;

/**
 * Settings of one scan run, and the one place of their rules: the static checks below are the validators of the
 * estimator's params ({@link GpuScanParams}), {@link ScanSpec} (which the SQL function {@code sparkgpu_scan_best}
 * builds too) asserts them, and {@link #validate()} runs them all at {@link ScanTrainer}'s entry. The settings of
 * the input (columns, grid size, extent) are {@link ScanInput}'s. The initial values are the defaults of every
 * surface.
 */
public final class ScanConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    public ScanModel model = ScanModel.POISSON;
    public ScanDirection direction = ScanDirection.HIGH;
    public long minCells = 1;
    /** Largest range in cells; 0 means no limit. */
    public long maxCells = 0;
    public double maxBaselineFraction = 1.0;
    public int numClusters = 5;
    public int numReplicas = 999;
    public long seed = HasSeed.defaultSeed(GpuScanStatistic.class);
    /**
     * Spark tasks per scan and per replica job; 0 means one per GPU Spark schedules with a GPU backend
     * (spark.sparkgpu.fit.gpuTasks overrides), else the context's default parallelism.
     */
    public int numPartitions = 0;
    /** null: the setting spark.sparkgpu.backend, else auto (resolved by {@link #validate()}). */
    public Backend backend;

    /**
     * statistic: poisson, bernoulli, normal or ebp (any case). The case-count rule each implies (fractional counts for
     * poisson and ebp, whole for bernoulli) and the replica convention of fractional totals are {@link ScanModel}'s,
     * checked on the data by {@link ScanInput} and {@link ScanGrid}.
     */
    public static ScanModel checkStatistic(String statistic) {
        return ScanModel.parse(statistic, "statistic");
    }

    /** direction: high, low or both (any case). */
    public static ScanDirection checkDirection(String direction) {
        return ScanDirection.parse(direction, "direction");
    }

    /** minCells: the smallest range, &gt;= 1 cell. */
    public static void checkMinCells(long minCells) {
        require(minCells >= 1, "minCells", ">= 1", minCells);
    }

    /** maxCells: the largest range in cells, &gt;= 0 (0: no limit). */
    public static void checkMaxCells(long maxCells) {
        require(maxCells >= 0, "maxCells", ">= 0 (0 = no limit)", maxCells);
    }

    /** maxCells (0: no limit) and minCells together: a limit must admit minCells. */
    public static void checkCellRange(long minCells, long maxCells) {
        checkMinCells(minCells);
        checkMaxCells(maxCells);
        if (maxCells != 0 && maxCells < minCells) {
            throw new IllegalArgumentException("maxCells (" + maxCells + ") must be >= minCells (" + minCells
                    + "), or 0 for no limit");
        }
    }

    /** maxBaselineFraction: the largest share of the total baseline inside a range, in (0, 1]. */
    public static void checkMaxBaselineFraction(double f) {
        require(f > 0 && f <= 1, "maxBaselineFraction", "in (0, 1]", f);
    }

    /** numClusters: the most likely cluster and up to {@value ScanSpec#MAX_EXCLUDED} secondary ones. */
    public static void checkNumClusters(int numClusters) {
        require(numClusters >= 1 && numClusters <= ScanSpec.MAX_EXCLUDED + 1, "numClusters",
                "in [1, " + (ScanSpec.MAX_EXCLUDED + 1) + "]", numClusters);
    }

    /**
     * The most Monte Carlo replicas: their LLRs are held on the driver (8 bytes each) and every replica is a full
     * scan; 10^7 gives p-values down to 1e-7 (2 billion replicas used to end the JVM with an OutOfMemoryError).
     */
    public static final int MAX_REPLICAS = 10_000_000;

    /** numReplicas: Monte Carlo replicas, in [0, {@value #MAX_REPLICAS}] (0: no p-values). */
    public static void checkNumReplicas(int numReplicas) {
        require(numReplicas >= 0 && numReplicas <= MAX_REPLICAS, "numReplicas",
                "in [0, " + MAX_REPLICAS + "] (0 = no p-values)", numReplicas);
    }

    /** numPartitions: Spark tasks per scan, &gt;= 0 (0: automatic). */
    public static void checkNumPartitions(int numPartitions) {
        require(numPartitions >= 0, "numPartitions", ">= 0 (0 = automatic)", numPartitions);
    }

    /** The spec these settings describe; errors name the setting. */
    public ScanSpec spec() {
        checkCellRange(minCells, maxCells);
        long max = maxCells == 0 ? Long.MAX_VALUE : maxCells;
        return new ScanSpec(direction, minCells, max, maxBaselineFraction);
    }

    /** Every rule but those of the data; resolves a null backend. */
    public ScanConfig validate() {
        require(model != null, "statistic", "poisson, bernoulli, normal or ebp", null);
        require(direction != null, "direction", "high, low or both", null);
        spec();
        checkNumClusters(numClusters);
        checkNumReplicas(numReplicas);
        checkNumPartitions(numPartitions);
        backend = SparkGpuConf.backend(backend);
        return this;
    }
}
