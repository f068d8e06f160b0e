package io.sparkgpu.tsne.optimize;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.spark.BarrierExchange;
import io.sparkgpu.spark.BarrierStages;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneGridOptions;
import io.sparkgpu.tsne.TsneProgress;
import io.sparkgpu.tsne.TsneResult;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.TsneTrainer;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.affinity.SparseRowsOps;
import io.sparkgpu.tsne.repulsion.ExactRepulsion;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import io.sparkgpu.tsne.repulsion.Repulsion;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Function1;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;

/**
 * Distributed t-SNE with all iterations in one Spark barrier stage over the cached row slices of P (the pattern of
 * the k-means single-stage fit, {@link BarrierStages}): one task per GPU that Spark schedules (or
 * {@link io.sparkgpu.spark.GpuTasks#TASKS}), each reading its cached slices (grouped by where they are cached) from the block
 * manager and holding a copy of all of Y.
 * <ul>
 * <li><b>One task</b>: nothing is exchanged; the task joins its slices into P and runs the single-device loop
 * ({@link TsneOptimizer#single}: on a GPU the device-resident iteration of {@link TsneDeviceState}).</li>
 * <li><b>Several tasks</b> ({@link Source}): per iteration every task plans the grid from all of Y, spreads all
 * points (S2G over all n points is O(n p^dim) and needs only Y, while exchanging partial grids would cost
 * O(grid) = up to 16 (dim + 2) bytes x 10^6 nodes per task) and convolves (G2G) on its own; it then computes, for
 * its own rows, the attractive term, G2S and the exact partial sums of z_i (and of KL when asked), exactly as a
 * slice of the per-iteration path does. The tasks exchange those rows' terms and sums (O(n dim) per iteration
 * and task), and every task applies the
 * same update ({@link TsneOptimizer.HostState}) to all of Y, so all tasks hold the same bits. The exchange is
 * {@link BarrierExchange}: TCP through task 0 (Spark's allGather costs about a second per call).</li>
 * </ul>
 * Either way every value has the bits of the single-device mode and of the per-iteration path. Task 0 returns the
 * result; KL history, progress callbacks, phase times and task 0's {@link TsneTimings#backends()} reach the driver
 * when the stage ends. A failed task makes
 * Spark rerun the stage, which recomputes the same bits. A cached slice that cannot be read fails the stage with
 * {@link BarrierStages.MissingBlock}, after which the trainer runs the per-iteration path.
 */
final class TsneBarrier {
    private static final Logger LOG = LoggerFactory.getLogger(TsneBarrier.class);
    /**
     * Largest exchange per iteration of the host loop with several tasks (every row's attractive and repulsive
     * terms, base64 when it falls back to allGather, whose messages pass Spark's RPC size limit): about 1.5 x 10^6
     * points in 2-D. The device loop copies rows device to device and has no such limit.
     */
    static final long MAX_EXCHANGE_BYTES = 64L << 20;
    /**
     * Fewest points per task when the task count follows the GPUs ({@link io.sparkgpu.spark.GpuTasks#TASKS} unset):
     * each task redoes S2G and G2G over all points and the tasks meet twice per iteration, so small fits run faster
     * on one GPU. On 2 H200s the iterations of 10^5 points took 1.55 s on one GPU and 2.55 s on two, those of 10^6
     * points 5.09 and 5.03 s.
     */
    static final int MIN_POINTS_PER_TASK = 500_000;

    private TsneBarrier() {
    }

    /** Whether {@link TsneTrainer#DISTRIBUTED_STAGE} allows the one-stage mode (true|false; else an error). */
    static boolean enabled() {
        String v = SparkGpuConf.get(TsneTrainer.DISTRIBUTED_STAGE, "true");
        String s = v.trim().toLowerCase(Locale.ROOT);
        if (s.equals("true")) {
            return true;
        }
        if (s.equals("false")) {
            return false;
        }
        throw new IllegalArgumentException(TsneTrainer.DISTRIBUTED_STAGE + " must be true or false, got '" + v + "'");
    }

    /**
     * Tasks of the one-stage fit of n points over {@code partitions} cached slices, or 0 when it does not apply
     * (switched off, dynamic allocation, or several tasks that can only run the host loop, whose exchange would be too
     * large: {@code gpuFit} false). At most {@code maxPartitions} when that is set (the distributedPartitions
     * parameter), and, unless the task count is set, one per {@link #MIN_POINTS_PER_TASK} points. A GPU fit of many
     * points gets its tasks: their device loop has no exchange limit, and should the tasks end up on the host loop
     * they fail with {@link ExchangeTooLarge} and the fit runs two Spark jobs per iteration.
     *
     * @param gpuFit whether the tasks would use GPUs ({@link io.sparkgpu.spark.GpuTasks#gpuFit})
     */
    static int tasks(SparkContext sc, int partitions, int n, int dim, int maxPartitions, boolean gpuFit) {
        if (!enabled()) {
            return 0;
        }
        int t = BarrierStages.tasks(sc, partitions);
        if (t > 0 && maxPartitions > 0) {
            t = Math.min(t, maxPartitions);
        }
        t = byPoints(t, n, !SparkGpuConf.get(io.sparkgpu.spark.GpuTasks.TASKS, "").isBlank());
        if (t > 1 && !gpuFit && hostExchangeTooLarge(n, dim)) {
            LOG.info("spark-gpu t-SNE: {} tasks would exchange {} bytes per iteration; one Spark job per evaluation "
                    + "instead", t, exchangeBytes(n, dim));
            return 0;
        }
        return t;
    }

    /** Whether several tasks' host loop would exchange more than {@link #MAX_EXCHANGE_BYTES} per iteration. */
    static boolean hostExchangeTooLarge(long n, int dim) {
        return exchangeBytes(n, dim) > MAX_EXCHANGE_BYTES;
    }

    /**
     * Thrown by the barrier tasks (all of them: they decide alike) and by the driver when several tasks would have to
     * run the host loop with too large an exchange; the trainer then runs two Spark jobs per iteration.
     */
    static final class ExchangeTooLarge extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ExchangeTooLarge(String msg) {
            super(msg);
        }
    }

    /**
     * {@code tasks} for n points, at most one per {@link #MIN_POINTS_PER_TASK} points (at least one) unless the task
     * count was set; 0 (no stage) stays 0.
     */
    static int byPoints(int tasks, int n, boolean taskCountSet) {
        return tasks <= 1 || taskCountSet ? tasks : Math.max(1, Math.min(tasks, n / MIN_POINTS_PER_TASK));
    }

    /** Bytes every task receives per iteration: base64 of two doubles per coordinate. */
    static long exchangeBytes(long n, int dim) {
        return (16L * n * dim + 64) * 4 / 3;
    }

    /** What every task gets. */
    private static final class Job implements Serializable {
        private static final long serialVersionUID = 1L;
        final int n;
        final double[] y0;
        final TsneConfig cfg;
        final String key;
        /** Several tasks: each evaluates its forces phase by phase on the host ({@link Source}), never on the device. */
        final boolean hostLoop;

        Job(int n, double[] y0, TsneConfig cfg, String key, boolean hostLoop) {
            this.n = n;
            this.y0 = y0;
            this.cfg = cfg;
            this.key = key;
            this.hostLoop = hostLoop;
        }
    }

    /**
     * Thrown by a barrier task whose device-resident loop failed on the GPU under backend auto: the driver then reruns
     * the stage with the host loop, whose phases fall back to the CPU twins one by one (same bits).
     */
    static final class DeviceLoopFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DeviceLoopFailed(String msg, Throwable cause) {
            super(msg, cause);
        }
    }

    /**
     * All iterations, the centring and the final KL in one barrier stage of {@code tasks} tasks over the cached
     * slices {@code rows} (covering rows 0..n-1); the task phase times are added to {@code timings}, and the KL
     * values are passed to {@code progress} once the stage has ended.
     */
    static TsneResult fit(JavaRDD<SparseRows> rows, int tasks, int n, double[] y0, TsneConfig cfg,
            TsneTimings timings, TsneProgress progress) {
        try {
            return fit(rows, tasks, n, y0, cfg, timings, progress, false);
        } catch (RuntimeException e) {
            if (!BarrierStages.causedBy(e, DeviceLoopFailed.class)) {
                throw e;
            }
            if (hostExchangeTooLarge(n, cfg.dimension)) {
                throw new ExchangeTooLarge("the device-resident loop failed on a GPU (" + e.getMessage() + "), and "
                        + "the stage's host loop would exchange " + exchangeBytes(n, cfg.dimension) + " bytes per "
                        + "iteration");
            }
            LOG.warn("spark-gpu t-SNE: the device-resident loop failed on a GPU ({}); rerunning the stage phase by "
                    + "phase, each phase on the CPU twin where the GPU fails (same bits)", e.getMessage());
            return fit(rows, tasks, n, y0, cfg, timings, progress, true);
        }
    }

    private static TsneResult fit(JavaRDD<SparseRows> rows, int tasks, int n, double[] y0, TsneConfig cfg,
            TsneTimings timings, TsneProgress progress, boolean hostLoop) {
        final Job job = new Job(n, y0, cfg, "tsne-stage-" + java.util.UUID.randomUUID(), hostLoop);
        final int rddId = rows.id();
        RDD<int[]> grouped = BarrierStages.groups(rows.context(), rddId, rows.getNumPartitions(), tasks);
        Function1<scala.collection.Iterator<int[]>, scala.collection.Iterator<TsneResult>> f =
                (Function1<scala.collection.Iterator<int[]>, scala.collection.Iterator<TsneResult>> & Serializable)
                        it -> CollectionConverters.asScala(runTask(job, BarrierStages.readBlocks(rddId,
                                CollectionConverters.asJava(it), SparseRows.class, "t-SNE P slice")));
        RDD<TsneResult> out = grouped.barrier().mapPartitions(f, false, ClassTag$.MODULE$.apply(TsneResult.class));
        long t0 = System.nanoTime();
        List<TsneResult> all;
        try {
            all = BarrierStages.collectRetryable(out);
        } catch (RuntimeException e) {
            throw divergence(e);
        }
        long stage = System.nanoTime() - t0;
        if (all.size() != 1) {
            throw new IllegalStateException("the t-SNE barrier stage returned " + all.size() + " results instead of one");
        }
        TsneResult r = all.get(0);
        timings.addAll(r.timings);
        LOG.info("spark-gpu t-SNE: {} iterations in one barrier stage of {} task(s): stage {} s, iterations and final "
                + "KL in task 0 {} s", cfg.maxIter, tasks, stage / 1e9, r.timings.seconds(TsneTimings.Phase.TOTAL));
        for (int i = 0; i < r.klIterations.length; i++) {
            if (progress != null) {
                progress.onKl(r.klIterations[i], r.klValues[i]);
            }
        }
        return new TsneResult(r.n, r.dim, r.embedding, r.klIterations, r.klValues, TsneConfig.MODE_DISTRIBUTED,
                timings);
    }

    /** A divergence detected in a task, as the ArithmeticException the driver-side paths throw; else e. */
    private static RuntimeException divergence(RuntimeException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ArithmeticException) {
                return new ArithmeticException(t.getMessage());
            }
        }
        return e;
    }

    private static java.util.Iterator<TsneResult> runTask(Job job, List<SparseRows> read) {
        BarrierTaskContext ctx = BarrierTaskContext.get();
        List<SparseRows> mine = new ArrayList<>();
        for (SparseRows s : read) {
            if (s.rows > 0) {
                mine.add(s);
            }
        }
        mine.sort((a, b) -> Integer.compare(a.rowOffset, b.rowOffset));
        int tasks = ctx.getTaskInfos().length;
        TsneTimings timings = new TsneTimings();
        TsneResult r;
        if (tasks == 1) {
            BarrierStages.pauseForTests(ctx, "t-SNE start (one task)", 1);
            SparseRows p = SparseRowsOps.concat(mine.isEmpty() ? read : mine);
            r = TsneOptimizer.single(p, job.y0, job.cfg, null, timings);
        } else {
            try (BarrierExchange ex = BarrierExchange.open(ctx, job.key)) {
                CudaDevice dev = job.hostLoop ? null : agreedDevice(ex, job.cfg.backend);
                if (dev != null) {
                    r = deviceLoop(dev, ex, ctx, mine, job, timings);
                } else if (hostExchangeTooLarge(job.n, job.cfg.dimension)) {
                    throw new ExchangeTooLarge("t-SNE barrier task " + ctx.partitionId() + ": not every task has a "
                            + "usable GPU, and the host loop of " + tasks + " tasks would exchange "
                            + exchangeBytes(job.n, job.cfg.dimension) + " bytes per iteration");
                } else {
                    try (Source src = new Source(ex, mine, job.n, job.cfg, job.key, ctx)) {
                        r = TsneOptimizer.run(src, job.y0, job.cfg, null, timings, TsneConfig.MODE_DISTRIBUTED, null);
                    }
                }
            }
        }
        return ctx.partitionId() == 0 ? List.of(r).iterator() : Collections.emptyIterator();
    }

    /**
     * This task's GPU when every task of the stage has one that loads the t-SNE module (one gather), else null for
     * all: then every task evaluates phase by phase ({@link Source}). Under backend gpu a task without a usable GPU
     * fails with the reason.
     */
    private static CudaDevice agreedDevice(BarrierExchange ex, Backend backend) {
        CudaDevice dev = BackendChooser.resolve(backend, AttractiveForces.MODULE, TsneDeviceState.PROBE_KERNEL);
        byte[][] all = ex.allGather(new byte[] {(byte) (dev != null ? 1 : 0)});
        for (byte[] b : all) {
            if (b.length != 1 || b[0] != 1) {
                return null;
            }
        }
        return dev;
    }

    /**
     * Several tasks, each on its GPU: the device-resident iteration on this task's rows ({@link TsneDeviceState}
     * linked by {@link TsnePeers}). A device failure under backend auto becomes {@link DeviceLoopFailed}.
     */
    private static TsneResult deviceLoop(CudaDevice dev, BarrierExchange ex, BarrierTaskContext ctx,
            List<SparseRows> mine, Job job, TsneTimings timings) {
        try (TsneDeviceState st = new TsneDeviceState(dev, mine, job.n, job.y0, job.cfg,
                state -> TsnePeers.connect(ex, ctx, state, job.key))) {
            TsneTimings gpu = new TsneTimings();
            TsneResult r = TsneOptimizer.run(st, job.cfg, null, gpu, TsneConfig.MODE_DISTRIBUTED, null);
            timings.addAll(gpu);
            TsneOptimizer.recordDeviceResident(timings, job.cfg, job.n);
            return new TsneResult(r.n, r.dim, r.embedding, r.klIterations, r.klValues, r.mode, timings);
        } catch (RuntimeException | LinkageError e) {
            if (job.cfg.backend != Backend.GPU && BackendChooser.isDeviceFailure(e)) {
                throw new DeviceLoopFailed("t-SNE barrier task " + ctx.partitionId() + " on " + dev + ": " + e, e);
            }
            throw e;
        }
    }

    /**
     * The forces of one barrier task among several: S2G over all points and G2G locally, the attractive term, G2S
     * and the partial sums for the task's rows (or, when the fit's rule chose it, the exact repulsion of its rows
     * against all of Y), then one {@link BarrierExchange#allGather} of every task's rows and
     * sums. All tasks call
     * {@link #forces} equally often (the same optimiser loop), as the exchange requires.
     */
    static final class Source implements GradientSource {
        private final BarrierExchange ex;
        private final List<SparseRows> mine;
        private final int n;
        private final int dim;
        private final TsneGridOptions gridOptions;
        private final GridConvolution.Method method;
        private final Backend backend;
        private final boolean exact;
        private final double dof;
        private final String key;
        private final BarrierTaskContext ctx;
        /** Force evaluations so far (for {@link BarrierStages#pauseForTests}). */
        private int evaluations;

        Source(BarrierExchange ex, List<SparseRows> mine, int n, TsneConfig cfg, String key, BarrierTaskContext ctx) {
            this.ex = ex;
            this.mine = mine;
            this.n = n;
            this.dim = cfg.dimension;
            this.gridOptions = cfg.grid;
            this.method = cfg.convolution;
            this.backend = cfg.backend;
            this.exact = cfg.exactRepulsion(n);
            this.dof = cfg.dof;
            this.key = key;
            this.ctx = ctx;
        }

        @Override
        public int n() {
            return n;
        }

        @Override
        public int dim() {
            return dim;
        }

        @Override
        public Backend backend() {
            return backend;
        }

        @Override
        public double dof() {
            return dof;
        }

        @Override
        public Forces forces(double[] y, boolean withKl, TsneTimings timings) {
            BarrierStages.pauseForTests(ctx, "t-SNE force evaluation", ++evaluations);
            io.sparkgpu.cuda.BackendUsage usage = timings.backends();
            long t0 = System.nanoTime();
            // the grid path: S2G over all points and G2G here; the exact path needs neither (each row sums over all Y)
            double[][] bounds = LocalGradientSource.bounds(y, n, dim); // a diverged run fails here, either method
            InterpGrid grid = exact ? null : GridRepulsion.plan(bounds[0], bounds[1], dim, gridOptions, dof);
            long[] charges = exact ? null : GridRepulsion.s2g(grid, n, y, n, backend, usage);
            long t1 = System.nanoTime();
            double[] potentials = exact ? null
                    : LocalGradientSource.potentials(grid, n, charges, method, backend, usage);
            long t2 = System.nanoTime();
            int rows = 0;
            for (SparseRows s : mine) {
                rows += s.rows;
            }
            ByteBuffer out = ByteBuffer.allocate(4 + 8 * mine.size() + 16 * rows * dim + 16 + 1 + (withKl ? 32 : 0));
            out.putInt(mine.size());
            List<double[]> attrs = new ArrayList<>();
            for (SparseRows s : mine) {
                attrs.add(AttractiveForces.attractive(s, key, y, dim, dof, backend, usage));
            }
            long t3 = System.nanoTime();
            long[] z = new long[2];
            int zShift = GridRepulsion.zShift(n);
            for (int i = 0; i < mine.size(); i++) {
                SparseRows s = mine.get(i);
                Repulsion rep = exact ? ExactRepulsion.repulsion(y, n, dim, s.rowOffset, s.rows, dof, backend, usage)
                        : GridRepulsion.g2s(grid, n, potentials, SparkGradientSource.rowsOf(y, s, dim), s.rows,
                                backend, usage);
                if (rep.zShift != zShift) {
                    throw new IllegalStateException("row slices used different z scales: " + zShift + " and "
                            + rep.zShift);
                }
                GridRepulsion.addZ(z, rep);
                out.putInt(s.rowOffset).putInt(s.rows);
                for (double v : attrs.get(i)) {
                    out.putDouble(v);
                }
                for (double v : rep.force) {
                    out.putDouble(v);
                }
            }
            long t4 = System.nanoTime();
            out.putLong(z[0]).putLong(z[1]);
            long[] kl = null;
            if (withKl) {
                kl = TsneKl.empty();
                for (SparseRows s : mine) {
                    TsneKl.add(kl, TsneKl.partial(s, y, dim, dof));
                }
                out.put((byte) 1);
                for (long v : kl) {
                    out.putLong(v);
                }
            } else {
                out.put((byte) 0);
            }
            long t5 = System.nanoTime();
            byte[][] all = ex.allGather(out.array());
            double[] attr = new double[n * dim];
            double[] rep = new double[n * dim];
            long[] zTotal = new long[2];
            long[] klTotal = withKl ? TsneKl.empty() : null;
            long covered = 0;
            for (byte[] msg : all) {
                ByteBuffer in = ByteBuffer.wrap(msg);
                int slices = in.getInt();
                for (int s = 0; s < slices; s++) {
                    int off = in.getInt();
                    int len = in.getInt() * dim;
                    for (int t = 0; t < len; t++) {
                        attr[off * dim + t] = in.getDouble();
                    }
                    for (int t = 0; t < len; t++) {
                        rep[off * dim + t] = in.getDouble();
                    }
                    covered += len;
                }
                long zLo = in.getLong();
                long zHi = in.getLong();
                FixedPoint.addPair(zTotal, 0, zLo, zHi);
                boolean hasKl = in.get() != 0;
                if (hasKl != withKl) {
                    throw new IllegalStateException("barrier tasks disagree on the KL evaluation");
                }
                if (withKl) {
                    long[] part = {in.getLong(), in.getLong(), in.getLong(), in.getLong()};
                    TsneKl.add(klTotal, part);
                }
            }
            if (covered != (long) n * dim) {
                throw new IllegalStateException("the barrier tasks' row slices cover " + covered / dim + " of " + n
                        + " rows");
            }
            long t6 = System.nanoTime();
            if (exact) { // the bounds check
                timings.add(TsneTimings.Phase.EXACT, t2 - t0);
            } else {
                timings.add(TsneTimings.Phase.S2G, t1 - t0);
                timings.add(TsneTimings.Phase.G2G, t2 - t1);
            }
            timings.add(TsneTimings.Phase.ATTRACTIVE, t3 - t2);
            timings.add(exact ? TsneTimings.Phase.EXACT : TsneTimings.Phase.G2S, t4 - t3);
            timings.add(TsneTimings.Phase.KL, t5 - t4);
            timings.add(TsneTimings.Phase.UPDATE, t6 - t5); // the exchange; the optimiser adds the update itself
            return new Forces(attr, rep, LocalGradientSource.z(zTotal, zShift, n), klTotal);
        }

        /** Frees this task's device copies of its P slices. */
        @Override
        public void close() {
            AttractiveForces.release(key);
        }
    }
}
