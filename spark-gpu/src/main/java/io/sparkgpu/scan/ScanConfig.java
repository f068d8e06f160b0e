package io.sparkgpu.scan;

import io.sparkgpu.cuda.Backend;
import java.io.Serializable;

/** Settings of one scan run (what the estimator's params and the CLI's options turn into). */
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
    public long seed = 42;
    /**
     * Spark tasks per scan and per replica job; 0 means one per GPU Spark schedules with a GPU backend
     * (spark.sparkgpu.fit.gpuTasks overrides), else the context's default parallelism.
     */
    public int numPartitions = 0;
    /** null means spark.sparkgpu.backend (default auto). */
    public Backend backend;

    /** The spec these settings describe; errors name the setting. */
    public ScanSpec spec() {
        if (maxCells < 0) {
            throw new IllegalArgumentException("maxCells must be >= 0 (0 = no limit), got " + maxCells);
        }
        long max = maxCells == 0 ? Long.MAX_VALUE : maxCells;
        return new ScanSpec(direction, minCells, max, maxBaselineFraction);
    }

    /** Validates everything but the data. */
    public void validate() {
        if (model == null || direction == null) {
            throw new IllegalArgumentException("model and direction are required");
        }
        spec();
        if (numClusters < 1 || numClusters > ScanSpec.MAX_EXCLUDED + 1) {
            throw new IllegalArgumentException("numClusters must be in [1, " + (ScanSpec.MAX_EXCLUDED + 1) + "], got "
                    + numClusters);
        }
        if (numReplicas < 0) {
            throw new IllegalArgumentException("numReplicas must be >= 0, got " + numReplicas);
        }
        if (numPartitions < 0) {
            throw new IllegalArgumentException("numPartitions must be >= 0, got " + numPartitions);
        }
    }
}
