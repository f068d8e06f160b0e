package io.sparkgpu.kmeans;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.spark.BarrierExchange;
import io.sparkgpu.spark.BarrierStages;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Function1;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;

/**
 * A whole Lloyd fit in one Spark stage, for GPUs: the packed blocks (cached, most already resident on the
 * device from packing) are grouped, without a shuffle, into one task per GPU, and those tasks run as a
 * barrier stage. Every task passes over its blocks on its GPU (one launch per block into one device
 * accumulator, one download), the tasks exchange their exact partials through task 0 ({@link BarrierExchange}:
 * TCP, since {@link BarrierTaskContext#allGather} waits about a second per call), and each adds all of them and applies the same deterministic update
 * ({@link KMeansLloyd}), so every task holds the same centres after every iteration, and the bits equal those
 * of one Spark job per pass or of the CPU twin. With one task there is nothing to exchange: the iteration is
 * the GPU pass plus the update. The stage is a shuffle-map stage ({@link BarrierStages#collectRetryable}), so a
 * failed task makes Spark rerun the whole stage, which recomputes the same bits.
 */
final class KMeansBarrier {
    private static final Logger LOG = LoggerFactory.getLogger(KMeansBarrier.class);
    /** Largest accumulator (bytes) exchanged per task and iteration before the fit uses one job per pass instead. */
    static final long MAX_EXCHANGE_BYTES = 16L << 20;

    private KMeansBarrier() {
    }

    /**
     * How many barrier tasks a GPU fit of {@code partitions} input partitions should use on this cluster, or 0
     * when the single-stage fit does not apply (dynamic allocation, or an accumulator too large to exchange).
     */
    static int tasks(SparkContext sc, int partitions, int k, int d) {
        int t = BarrierStages.tasks(sc, partitions);
        long accBytes = 8L * KMeansAccumulator.length(k, d);
        if (t > 1 && accBytes > MAX_EXCHANGE_BYTES) {
            return 0;
        }
        return t;
    }

    /** What every barrier task gets. */
    private static final class Job implements Serializable {
        private static final long serialVersionUID = 1L;
        final KMeansLloyd.Spec spec;
        final double[] start;
        final Backend backend;
        final String fitId;
        /** Random per stage: authenticates the tasks' exchange connections. */
        final String key = java.util.UUID.randomUUID().toString();
        /** Which run of the stage within the fit (0, then 1 after lost blocks were recomputed). */
        final int run;

        Job(KMeansLloyd.Spec spec, double[] start, Backend backend, String fitId, int run) {
            this.spec = spec;
            this.start = start;
            this.backend = backend;
            this.fitId = fitId;
            this.run = run;
        }
    }

    /**
     * Runs the loop and the final pass in one barrier stage of {@code tasks} tasks; the outcome of task 0. Spark
     * does not allow a barrier stage to narrow-depend on an RDD of another partition count (so no coalesce), so
     * the stage is a fresh RDD of {@code tasks} groups of packed-partition ids, grouped and placed by where their
     * blocks are cached, and every task reads its blocks from the block manager (in place when local). The
     * packing job has just cached every block; if one cannot be read the stage fails with
     * {@link BarrierStages.MissingBlock}.
     */
    static KMeansLloyd.Outcome fit(JavaRDD<KMeansData> packed, int tasks, KMeansLloyd.Spec spec, double[] start,
                                   Backend backend, String fitId, int run) {
        final Job job = new Job(spec, start, backend, fitId, run);
        final int rddId = packed.id();
        final int parts = packed.getNumPartitions();
        RDD<int[]> grouped = BarrierStages.groups(packed.context(), rddId, parts, tasks);
        Function1<scala.collection.Iterator<int[]>, scala.collection.Iterator<KMeansLloyd.Outcome>> f =
                (Function1<scala.collection.Iterator<int[]>, scala.collection.Iterator<KMeansLloyd.Outcome>>
                        & Serializable) it -> CollectionConverters.asScala(runTask(job, BarrierStages.readBlocks(rddId,
                        CollectionConverters.asJava(it), KMeansData.class, "k-means block").iterator()));
        RDD<KMeansLloyd.Outcome> out = grouped.barrier().mapPartitions(f, false,
                ClassTag$.MODULE$.apply(KMeansLloyd.Outcome.class));
        List<KMeansLloyd.Outcome> all = BarrierStages.collectRetryable(out);
        if (all.size() != 1) {
            throw new IllegalStateException("the k-means barrier stage returned " + all.size() + " outcomes instead of one");
        }
        return all.get(0);
    }

    /**
     * Fault injection for tests, as a Spark local property of the fitting thread: the executor running task 0 of
     * the stage's first attempt halts at the start of this pass (1-based), as a killed executor would. Ignored in
     * the driver's JVM (local mode), on later attempts and when the fit runs the stage again.
     */
    static final String KILL_AT = "spark.sparkgpu.test.haltExecutorAtPass";

    private static int killAt(BarrierTaskContext ctx) {
        String v = ctx.getLocalProperty(KILL_AT);
        if (v == null || v.isBlank() || ctx.stageAttemptNumber() != 0 || ctx.partitionId() != 0
                || "driver".equals(SparkEnv.get().executorId())) {
            return -1;
        }
        return Integer.parseInt(v.trim());
    }

    private static java.util.Iterator<KMeansLloyd.Outcome> runTask(Job job, java.util.Iterator<KMeansData> it) {
        BarrierTaskContext ctx = BarrierTaskContext.get();
        List<KMeansData> blocks = new ArrayList<>();
        while (it.hasNext()) {
            KMeansData b = it.next();
            if (b.n > 0) {
                blocks.add(b);
            }
        }
        final int tasks = ctx.getTaskInfos().length;
        final KMeansLloyd.Spec s = job.spec;
        final int killAt = job.run == 0 ? killAt(ctx) : -1;
        final int[] passes = {0};
        // exchange through task 0 over TCP: BarrierTaskContext.allGather waits about a second per call
        final BarrierExchange ex = tasks == 1 ? null : BarrierExchange.open(ctx, job.key);
        KMeansLloyd.Pass pass = (centres, m) -> {
            ++passes[0];
            if (job.run == 0) {
                BarrierStages.pauseForTests(ctx, "k-means pass", passes[0]);
            }
            if (passes[0] == killAt) {
                LOG.warn("spark-gpu k-means: fault injection ({}): halting executor {} in pass {} of stage attempt 0",
                        KILL_AT, SparkEnv.get().executorId(), killAt);
                Runtime.getRuntime().halt(137);
            }
            KMeansLloyd.Partial p = KMeansStep.runBlocks(job.backend, blocks, centres, m, s.cosine, s.scales);
            if (ex == null) {
                return p;
            }
            byte[][] all = ex.allGather(p.encodeBytes());
            KMeansLloyd.Partial sum = KMeansLloyd.Partial.decode(all[0]);
            for (int i = 1; i < all.length; i++) {
                sum.add(KMeansLloyd.Partial.decode(all[i]), m, s.d);
            }
            return sum;
        };
        KMeansLloyd.Listener log = ctx.partitionId() != 0 ? null : (i, cost, shift) ->
                LOG.info("spark-gpu k-means iteration {} (single-stage GPU fit, {} task(s)): cost {} max centre shift {}",
                        i, tasks, cost, shift);
        try {
            KMeansLloyd.Outcome o = KMeansLloyd.run(s, job.start, pass, log);
            return ctx.partitionId() == 0 ? List.of(o).iterator() : Collections.emptyIterator();
        } finally {
            if (ex != null) {
                ex.close();
            }
            DeviceResidentCache.forEach(c -> c.evictPrefix(job.fitId));
        }
    }
}
