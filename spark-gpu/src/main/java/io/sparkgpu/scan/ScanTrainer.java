package io.sparkgpu.scan;

import io.sparkgpu.common.SparkErrors;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.spark.GpuTasks;
import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;

/**
 * The scan on Spark. The grid is built from the DataFrame ({@link ScanInput}, two jobs) and turned into tables.
 * <ul>
 *   <li><b>Small work</b> (cells x (replicas + 1) at most {@value #LOCAL_WORK}, default {@value #DEFAULT_LOCAL_WORK}):
 *       the scans and replicas run on the driver ({@link LocalScan}: its GPU when the backend policy gives one,
 *       else the CPU twin on the driver's threads), with no further Spark job.</li>
 *   <li>Otherwise the tables are broadcast and every full scan is one job of P tasks, task p taking the p-th of P
 *       equal contiguous shares of the M range indices; the Monte Carlo replicas are one job whose tasks take
 *       contiguous shares of the replica numbers. P is {@code numPartitions} when set, else with a GPU backend one
 *       task per GPU that Spark schedules ({@link GpuTasks#count}: one launch per GPU instead of one per core),
 *       else the default parallelism (the CPU twin: one task per core).</li>
 * </ul>
 * The driver keeps the best range by (LLR, then smallest index), which is exact and associative, and replica r
 * is a function of (seed, r) only, so neither the clusters nor the p-values depend on the path or on P. The
 * seconds of each phase and where it ran are in {@link ScanResult#timings()} and
 * {@link ScanResult#phaseBackends()}.
 */
final class ScanTrainer {
    /**
     * Setting: largest cells x (replicas + 1) scanned on the driver without Spark jobs; 0 turns the driver path
     * off. The default, 2^16, admits e.g. an 8x8 grid with 999 replicas (1.3 million range evaluations, tens of
     * milliseconds on one core) or a 25x25 grid with 99 (10 million, a fraction of a second on one core, a few
     * milliseconds on a GPU): less than the broadcast and the scan and replica jobs cost on local[N], and small
     * enough that a driver with few cores is not a bottleneck on a cluster.
     */
    public static final String LOCAL_WORK = "spark.sparkgpu.scan.localWork";
    /** Default of {@link #LOCAL_WORK}. */
    public static final long DEFAULT_LOCAL_WORK = 1L << 16;

    private ScanTrainer() {
    }

    /** The grid, where it lies, and the scan result. */
    public static final class Fitted {
        public final ScanInput.Built input;
        public final ScanResult result;

        Fitted(ScanInput.Built input, ScanResult result) {
            this.input = input;
            this.result = result;
        }
    }

    /** Result of one task: its best range or replica maxima, where it ran and its seconds in GPU calls. */
    static final class TaskOut implements Serializable {
        private static final long serialVersionUID = 1L;
        final ScanBest best;
        final int from;
        final double[] maxima;
        final String backend;
        final double gpuSeconds;

        TaskOut(ScanBest best, int from, double[] maxima, String backend, double gpuSeconds) {
            this.best = best;
            this.from = from;
            this.maxima = maxima;
            this.backend = backend;
            this.gpuSeconds = gpuSeconds;
        }
    }

    /** Runs scans and replicas as Spark jobs over a broadcast of the tables. */
    static final class SparkRunner implements ScanResult.Runner {
        private final JavaSparkContext jsc;
        private final Broadcast<ScanTables> tables;
        private final Backend backend;
        private final int parts;
        private final ScanResult.Tally tally = new ScanResult.Tally();
        private double gpuSeconds;

        SparkRunner(JavaSparkContext jsc, Broadcast<ScanTables> tables, Backend backend, int parts) {
            this.jsc = jsc;
            this.tables = tables;
            this.backend = backend;
            this.parts = parts;
        }

        /** One job's tasks: the job's backend, and its longest task's GPU seconds (the tasks run side by side). */
        private void record(List<TaskOut> outs, int tasks) {
            String job = null;
            double longest = 0;
            for (TaskOut o : outs) {
                if (o.maxima != null && o.maxima.length == 0) {
                    continue; // a task with no replicas ran nothing
                }
                job = BackendUsage.combine(job, o.backend);
                longest = Math.max(longest, o.gpuSeconds);
            }
            if (job != null) {
                tally.record(job, "in " + tasks + (tasks == 1 ? " task" : " tasks"));
            }
            gpuSeconds += longest;
        }

        @Override
        public ScanBest best(ScanSpec spec) {
            final Broadcast<ScanTables> bt = tables;
            final Backend be = backend;
            final int p = parts;
            final long m = bt.value().shape.ranges();
            List<Integer> ids = IntStream.range(0, p).boxed().collect(Collectors.toList());
            List<TaskOut> outs;
            String desc = jsc.getLocalProperty("spark.job.description");
            try {
                jsc.setJobDescription("spark-gpu scan: " + m + " ranges in " + p + (p == 1 ? " task" : " tasks"));
                outs = jsc.parallelize(ids, p).map(i -> {
                    long[] sh = ScanShape.share(m, i, p);
                    BackendChooser.Ran<ScanBest> b = ScanStep.best(be, bt.value(), spec, sh[0], sh[1]);
                    return new TaskOut(b.value, 0, null, b.backend(), b.gpuSeconds());
                }).collect();
            } catch (Exception e) {
                throw SparkErrors.unwrap(e);
            } finally {
                jsc.setJobDescription(desc);
            }
            ScanBest best = ScanBest.NONE;
            for (TaskOut o : outs) {
                best = ScanBest.max(best, o.best);
            }
            record(outs, p);
            return best;
        }

        @Override
        public double[] replicaMaxima(ScanSpec spec, long seed, int from, int count) {
            final Broadcast<ScanTables> bt = tables;
            final Backend be = backend;
            final int p = Math.max(1, Math.min(parts, count));
            List<Integer> ids = IntStream.range(0, p).boxed().collect(Collectors.toList());
            List<TaskOut> outs;
            String desc = jsc.getLocalProperty("spark.job.description");
            try {
                jsc.setJobDescription("spark-gpu scan: Monte Carlo replicas " + (from + 1) + ".." + (from + count));
                outs = jsc.parallelize(ids, p).map(i -> {
                    long[] sh = ScanShape.share(count, i, p);
                    BackendChooser.Ran<double[]> mx = ScanStep.replicaMaxima(be, bt.value(), spec, seed,
                            from + (int) sh[0], from + (int) sh[1], null);
                    return new TaskOut(null, (int) sh[0], mx.value, mx.backend(), mx.gpuSeconds());
                }).collect();
            } catch (Exception e) {
                throw SparkErrors.unwrap(e);
            } finally {
                jsc.setJobDescription(desc);
            }
            double[] all = new double[count];
            for (TaskOut o : outs) {
                System.arraycopy(o.maxima, 0, all, o.from, o.maxima.length);
            }
            record(outs, p);
            return all;
        }

        @Override
        public String backend() {
            return tally.backend();
        }

        @Override
        public String takePhaseBackend() {
            return tally.takePhase();
        }

        @Override
        public double gpuSeconds() {
            return gpuSeconds;
        }
    }

    /** The driver-path threshold: {@value #LOCAL_WORK}, an integer >= 0 (errors name the setting). */
    static long localWork() {
        String v = SparkGpuConf.get(LOCAL_WORK, Long.toString(DEFAULT_LOCAL_WORK));
        try {
            long n = Long.parseLong(v.trim());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(LOCAL_WORK + " must be an integer >= 0 (cells x (replicas + 1); 0 turns the "
                + "driver path off), got '" + v + "'");
    }

    /**
     * Tasks of each scan and replica job: {@code numPartitions} when set, else with the GPU one per GPU Spark
     * schedules ({@link GpuTasks#count}, so each GPU gets one large launch), else the default parallelism.
     */
    static int tasks(SparkContext sc, int numPartitions, boolean gpu) {
        if (numPartitions > 0) {
            return numPartitions;
        }
        return gpu ? GpuTasks.count(sc) : Math.max(1, sc.defaultParallelism());
    }

    /** The work measure of {@link #LOCAL_WORK}: cells x (replicas + 1). */
    static long work(ScanTables tables, int numReplicas) {
        return (long) tables.shape.cells() * (numReplicas + 1L);
    }

    /** Builds the grid of {@code data} and scans it. */
    public static Fitted fit(Dataset<?> data, ScanInput input, ScanConfig cfg) {
        long fit0 = System.nanoTime();
        cfg.validate();
        localWork(); // a bad setting fails before the input is read
        ScanInput.Built built;
        ScanTables tables;
        try {
            built = input.build(data, cfg.model);
            tables = ScanTables.of(built.grid);
        } catch (Exception e) {
            throw SparkErrors.unwrap(e);
        }
        return new Fitted(built, run(data.sparkSession(), tables, cfg, fit0));
    }

    /** Scans prepared tables, on the driver when the work is small, else with Spark tasks. */
    public static ScanResult scan(SparkSession spark, ScanTables tables, ScanConfig cfg) {
        cfg.validate();
        return run(spark, tables, cfg, System.nanoTime());
    }

    /** Scans with {@code cfg} already validated (its backend resolved). */
    private static ScanResult run(SparkSession spark, ScanTables tables, ScanConfig cfg, long fit0) {
        if (cfg.numReplicas > 0) {
            ScanReplicas.checkSupported(tables);
        }
        long limit = localWork();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        SparkContext sc = jsc.sc();
        Backend backend = cfg.backend;
        Map<String, Double> before = new LinkedHashMap<>();
        if (work(tables, cfg.numReplicas) <= limit) {
            int threads = Math.max(1, sc.isLocal() ? jsc.defaultParallelism() : Runtime.getRuntime().availableProcessors());
            before.put(ScanResult.INPUT, (System.nanoTime() - fit0) / 1e9);
            ScanResult r = LocalScan.run(tables, cfg.spec(), cfg.numClusters, cfg.numReplicas, cfg.seed, backend,
                    threads);
            return r.withOuterPhases(before, Map.of(), (System.nanoTime() - fit0) / 1e9);
        }
        int parts = tasks(sc, cfg.numPartitions, GpuTasks.gpuFit(sc, backend, ScanGpu.MODULE, ScanGpu.PROBE_KERNEL));
        Broadcast<ScanTables> bt = jsc.broadcast(tables);
        before.put(ScanResult.INPUT, (System.nanoTime() - fit0) / 1e9);
        ScanResult r;
        long c0;
        try {
            r = ScanResult.compute(tables, cfg.spec(), cfg.numClusters, cfg.numReplicas, cfg.seed,
                    new SparkRunner(jsc, bt, backend, parts));
        } finally {
            c0 = System.nanoTime();
            bt.unpersist(false);
        }
        return r.withOuterPhases(before, Map.of(ScanResult.RESULT, (System.nanoTime() - c0) / 1e9),
                (System.nanoTime() - fit0) / 1e9);
    }
}
