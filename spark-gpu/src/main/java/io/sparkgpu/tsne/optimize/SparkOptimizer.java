package io.sparkgpu.tsne.optimize;

import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneProgress;
import io.sparkgpu.tsne.TsneResult;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.TsneTrainer;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.affinity.SparseRowsOps;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.storage.StorageLevel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The optimiser of a Spark fit ({@link TsneTrainer}): chooses single-device or distributed mode
 * ({@link TsneConfig#mode}) and runs it: {@link TsneOptimizer} on the driver, or the distributed optimiser on P's row
 * slices, in one barrier stage ({@link TsneBarrier}) or two Spark jobs per iteration ({@link SparkGradientSource}).
 * Every mode gives the same bits.
 */
public final class SparkOptimizer {
    private static final Logger LOG = LoggerFactory.getLogger(SparkOptimizer.class);

    private SparkOptimizer() {
    }

    /** Chooses the mode and runs the optimiser on P (all rows). */
    public static TsneResult optimize(JavaSparkContext jsc, SparseRows p, double[] y0, TsneConfig cfg,
            TsneTimings timings, int partitions, int numFeatures, TsneProgress progress) {
        int n = p.n;
        long entries = (long) p.nnz() + (long) n * (cfg.dimension + numFeatures);
        boolean single = TsneConfig.MODE_SINGLE.equals(cfg.mode)
                || (TsneConfig.MODE_AUTO.equals(cfg.mode) && entries <= cfg.singleModeMaxEntries);
        if (single) {
            return runSingle(jsc, p, y0, cfg, timings, progress);
        }
        List<SparseRows> slices = SparseRowsOps.split(p, partitions);
        JavaRDD<SparseRows> rdd = jsc.parallelize(slices, slices.size()).persist(StorageLevel.MEMORY_AND_DISK());
        try {
            jsc.setJobDescription("spark-gpu t-SNE: distribute P in " + slices.size() + " row slices");
            rdd.count();
            return runDistributed(jsc, rdd, n, y0, cfg, timings, progress);
        } finally {
            rdd.unpersist(false);
        }
    }

    /** Single-device mode on the driver ({@link TsneOptimizer#single}), under a Spark job description. */
    public static TsneResult runSingle(JavaSparkContext jsc, SparseRows p, double[] y0, TsneConfig cfg,
            TsneTimings timings, TsneProgress progress) {
        jsc.setJobDescription("spark-gpu t-SNE: single-device optimisation of " + p.n + " points");
        return TsneOptimizer.single(p, y0, cfg, progress, timings);
    }

    /**
     * The distributed optimiser on the cached slices {@code rdd}: in one barrier stage ({@link TsneBarrier}) unless
     * {@link TsneTrainer#DISTRIBUTED_STAGE} is false, dynamic allocation is on or the exchange would be too large;
     * else, or when a cached slice cannot be read in the stage, two Spark jobs per iteration
     * ({@link SparkGradientSource}).
     */
    public static TsneResult runDistributed(JavaSparkContext jsc, JavaRDD<SparseRows> rdd, int n, double[] y0,
            TsneConfig cfg, TsneTimings timings, TsneProgress progress) {
        int tasks = TsneBarrier.tasks(jsc.sc(), rdd.getNumPartitions(), n, cfg.dimension, cfg.distributedPartitions,
                io.sparkgpu.spark.GpuTasks.gpuFit(jsc.sc(), cfg.backend, AttractiveForces.MODULE,
                        TsneDeviceState.PROBE_KERNEL));
        if (tasks > 0) {
            jsc.setJobDescription("spark-gpu t-SNE: " + cfg.maxIter + " iterations of " + n + " points in one barrier "
                    + "stage (" + tasks + " task(s))");
            try {
                return TsneBarrier.fit(rdd, tasks, n, y0, cfg, timings, progress);
            } catch (Exception e) { // Spark's job failures are checked SparkExceptions thrown undeclared
                boolean missing = io.sparkgpu.spark.BarrierStages.causedBy(e,
                        io.sparkgpu.spark.BarrierStages.MissingBlock.class);
                if (!missing && !io.sparkgpu.spark.BarrierStages.causedBy(e, TsneBarrier.ExchangeTooLarge.class)) {
                    throw io.sparkgpu.common.SparkErrors.unwrap(e);
                }
                LOG.warn("spark-gpu t-SNE: {} ({}); running two Spark jobs per iteration instead", missing
                        ? "a cached P slice was not readable in the barrier stage" : "the barrier stage cannot run "
                        + "on the host with this many points", e.getMessage());
            }
        }
        return runPerIteration(jsc, rdd, n, y0, cfg, timings, progress);
    }

    /** Two Spark jobs per iteration ({@link SparkGradientSource}), Y on the driver. */
    private static TsneResult runPerIteration(JavaSparkContext jsc, JavaRDD<SparseRows> rdd, int n, double[] y0,
            TsneConfig cfg, TsneTimings timings, TsneProgress progress) {
        String[] lastKl = {""};
        TsneProgress withKl = (it, kl) -> {
            lastKl[0] = String.format(java.util.Locale.ROOT, ", KL %.5f at %d", kl, it);
            if (progress != null) {
                progress.onKl(it, kl);
            }
        };
        JavaRDD<SparseRows> slices = cfg.distributedPartitions > 0 && rdd.getNumPartitions() > cfg.distributedPartitions
                ? rdd.coalesce(cfg.distributedPartitions) : rdd;
        try (SparkGradientSource s = new SparkGradientSource(jsc, slices, n, cfg.dimension, cfg.grid, cfg.convolution,
                cfg.backend, cfg.exactRepulsion(n), cfg.dof)) {
            return TsneOptimizer.run(s, y0, cfg, withKl, timings, TsneConfig.MODE_DISTRIBUTED,
                    (it, max) -> s.setPhase("iteration " + it + "/" + max + lastKl[0]));
        }
    }
}
