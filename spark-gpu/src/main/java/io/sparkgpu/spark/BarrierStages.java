package io.sparkgpu.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.rdd.RDD;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.BlockResult;
import org.apache.spark.storage.RDDBlockId;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;

/**
 * Helpers shared by the fits that run all their iterations in one barrier stage over the cached blocks of an RDD
 * (k-means, t-SNE). Spark forbids a barrier stage that narrow-depends on an RDD of another partition count (no
 * coalesce), so such a stage is a fresh RDD of groups of partition ids ({@link #groups}), each placed where most of
 * its blocks are cached, and every task reads its blocks from the block manager ({@link #readBlocks}); a block that
 * cannot be read throws {@link MissingBlock}, after which the caller runs its per-iteration path instead.
 */
public final class BarrierStages {

    private BarrierStages() {
    }

    /**
     * Tasks of a single-stage fit over {@code partitions} cached partitions: {@link GpuTasks#TASKS} when set (a positive
     * integer, else an error naming the setting), otherwise {@link GpuTasks#scheduledGpus}; at most {@code partitions}.
     * 0 under dynamic allocation (a barrier stage needs a fixed set of slots).
     */
    public static int tasks(SparkContext sc, int partitions) {
        if (sc.getConf().getBoolean("spark.dynamicAllocation.enabled", false)) {
            return 0;
        }
        return Math.max(1, Math.min(GpuTasks.count(sc), partitions));
    }

    /**
     * An RDD of {@code tasks} partitions, each holding the ids of about parts / tasks cached partitions of RDD
     * {@code rddId} (sizes differ by at most one, ids ascending within a group), preferring the executor that caches
     * most of them. The partitions are grouped by where their blocks are cached: ordered by executor, then id, and cut
     * into {@code tasks} consecutive runs, so a task reads its blocks in place and at most the runs that straddle two
     * executors fetch a few blocks remotely. (Contiguous id ranges would, with one executor per GPU, make every task
     * fetch about half of its blocks from the other executor: on 2 H200s, 28 s for the 25.6 GB of a 10^8 x 32
     * k-means fit.) The callers' results do not depend on the grouping: k-means sums in fixed point, and t-SNE's
     * slices carry their row offsets.
     */
    public static RDD<int[]> groups(SparkContext sc, int rddId, int parts, int tasks) {
        List<scala.Tuple2<int[], scala.collection.immutable.Seq<String>>> groups = new ArrayList<>();
        for (Group g : byExecutor(rddId, parts, tasks)) {
            List<String> pref = g.executor == null ? List.of() : List.of(g.executor);
            groups.add(new scala.Tuple2<>(g.ids, CollectionConverters.asScala(pref).toList()));
        }
        return sc.makeRDD(CollectionConverters.asScala(groups).toSeq(), ClassTag$.MODULE$.apply(int[].class));
    }

    /** Ids of cached partitions that go together, and the executor caching most of them (null when none does). */
    static final class Group {
        final int[] ids;
        final String executor;

        Group(int[] ids, String executor) {
            this.ids = ids;
            this.executor = executor;
        }
    }

    /**
     * Partitions 0..parts-1 of RDD {@code rddId} in {@code tasks} groups by where their blocks are cached
     * ({@link #groupByLocation}), each with its preferred executor location (the one caching most of its blocks).
     */
    static List<Group> byExecutor(int rddId, int parts, int tasks) {
        BlockId[] ids = new BlockId[parts];
        for (int p = 0; p < parts; p++) {
            ids[p] = new RDDBlockId(rddId, p);
        }
        scala.collection.immutable.IndexedSeq<scala.collection.immutable.Seq<BlockManagerId>> locs =
                SparkEnv.get().blockManager().master().getLocations(ids);
        String[] where = new String[parts];
        for (int p = 0; p < parts; p++) {
            scala.collection.Iterator<BlockManagerId> it = locs.apply(p).iterator();
            where[p] = it.hasNext() ? executorLocation(it.next()) : "";
        }
        List<Group> out = new ArrayList<>();
        for (List<Integer> run : groupByLocation(where, tasks)) {
            int[] g = run.stream().mapToInt(Integer::intValue).sorted().toArray();
            Map<String, Integer> votes = new HashMap<>();
            for (int p : g) {
                scala.collection.Iterator<BlockManagerId> it = locs.apply(p).iterator();
                while (it.hasNext()) {
                    votes.merge(executorLocation(it.next()), 1, Integer::sum);
                }
            }
            String pref = votes.entrySet().stream().max(Map.Entry.<String, Integer>comparingByValue()
                    .thenComparing(Map.Entry.comparingByKey())).map(Map.Entry::getKey).orElse(null);
            out.add(new Group(g, pref));
        }
        return out;
    }

    private static String executorLocation(BlockManagerId bm) {
        return "executor_" + bm.host() + "_" + bm.executorId();
    }

    /**
     * Partitions 0..where.length-1 in {@code tasks} groups of nearly equal size (differing by at most one): ordered
     * by {@code where[p]} (a partition's location; "" for none), then by id, and cut into consecutive runs.
     */
    static List<List<Integer>> groupByLocation(String[] where, int tasks) {
        int parts = where.length;
        List<Integer> order = new ArrayList<>();
        for (int p = 0; p < parts; p++) {
            order.add(p);
        }
        order.sort(java.util.Comparator.<Integer, String>comparing(p -> where[p]).thenComparing(p -> p));
        List<List<Integer>> out = new ArrayList<>();
        for (int t = 0; t < tasks; t++) {
            int from = (int) ((long) parts * t / tasks);
            int to = (int) ((long) parts * (t + 1) / tasks);
            out.add(new ArrayList<>(order.subList(from, to)));
        }
        return out;
    }

    /**
     * The elements of the cached blocks of RDD {@code rddId} named by the group(s), in group order, from the block
     * manager (in place when local, fetched otherwise); {@link MissingBlock} when one is not available.
     *
     * @param what names the blocks in the error message (e.g. "k-means block")
     */
    public static <T> List<T> readBlocks(int rddId, java.util.Iterator<int[]> groups, Class<T> type, String what) {
        List<T> out = new ArrayList<>();
        while (groups.hasNext()) {
            for (int p : groups.next()) {
                scala.Option<BlockResult> r = SparkEnv.get().blockManager().get(new RDDBlockId(rddId, p),
                        ClassTag$.MODULE$.apply(type));
                if (r.isEmpty()) {
                    throw new MissingBlock("cached " + what + " " + p + " of RDD " + rddId + " is not available");
                }
                scala.collection.Iterator<Object> data = r.get().data();
                while (data.hasNext()) {
                    out.add(type.cast(data.next()));
                }
            }
        }
        return out;
    }

    /** Thrown in a barrier task when a cached block cannot be read; the driver then uses its per-iteration path. */
    public static final class MissingBlock extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public MissingBlock(String msg) {
            super(msg);
        }
    }

    /**
     * Whether {@code type} is in the cause chain of t, or named in one of its messages (a task's exception reaches
     * the driver as a SparkException whose message carries the original's class name).
     */
    public static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (int depth = 0; t != null && depth < 20; t = t.getCause(), depth++) {
            if (type.isInstance(t) || (t.getMessage() != null && t.getMessage().contains(type.getSimpleName()))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Collects the output of a barrier stage through a one-partition shuffle, so that the barrier stage is a
     * shuffle-map stage: Spark reruns a failed barrier shuffle-map stage (all its tasks, e.g. after an executor
     * was lost), while it aborts the job when a barrier result stage fails. The output is a few small objects.
     */
    public static <T> List<T> collectRetryable(RDD<T> barrierOut) {
        return barrierOut.toJavaRDD()
                .mapToPair(v -> new scala.Tuple2<>(0, v))
                .partitionBy(new org.apache.spark.HashPartitioner(1))
                .values()
                .collect();
    }

    /**
     * Test-only (issue 18 item 6: an executor killed inside a barrier stage), off unless set (Spark conf or system
     * property): {@code STEP:MILLIS}. Task 0 of a fit's barrier stage, on its first attempt and in an executor's
     * JVM (never the driver's, so never on {@code local[N]}), logs a line holding {@link #PAUSE_MARK} when it
     * reaches step STEP (k-means: Lloyd pass; t-SNE: force evaluation) and then sleeps MILLIS ms, so that a test
     * can kill that executor by pid while the stage is running. The other tasks wait for it in their exchange.
     */
    public static final String PAUSE_KEY = "spark.sparkgpu.test.barrierPause";
    /** Starts the line {@link #pauseForTests} logs (the test looks for it in the executors' logs). */
    public static final String PAUSE_MARK = "spark-gpu test: barrier task paused";
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(BarrierStages.class);

    /**
     * {@link #PAUSE_KEY}: pauses when this is task 0 of the stage's first attempt in an executor at {@code step}.
     *
     * @param what names the step in the logged line (e.g. "k-means pass")
     */
    public static void pauseForTests(org.apache.spark.BarrierTaskContext ctx, String what, int step) {
        String v = io.sparkgpu.cuda.SparkGpuConf.get(PAUSE_KEY, "").trim();
        if (v.isEmpty() || ctx.partitionId() != 0 || ctx.stageAttemptNumber() != 0
                || "driver".equals(SparkEnv.get().executorId())) {
            return;
        }
        int colon = v.indexOf(':');
        int at;
        long millis;
        try {
            at = Integer.parseInt(v.substring(0, colon).trim());
            millis = Long.parseLong(v.substring(colon + 1).trim());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(PAUSE_KEY + " must be STEP:MILLIS (two integers), got '" + v + "'");
        }
        if (step != at) {
            return;
        }
        LOG.warn("{} at {} {} of stage {} attempt 0 on executor {} for {} ms ({})", PAUSE_MARK, what, step,
                ctx.stageId(), SparkEnv.get().executorId(), millis, PAUSE_KEY);
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
