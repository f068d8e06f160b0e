package io.sparkgpu.tsne.optimize;

import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuEvent;
import io.sparkgpu.cuda.GpuResources;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.cuda.PinnedHostBuffer;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneGridOptions;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.repulsion.ExactRepulsion;
import io.sparkgpu.tsne.repulsion.ExactRepulsionGpu;
import io.sparkgpu.tsne.repulsion.G2GGpu;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.GridRepulsionGpu;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * t-SNE with the whole iteration on one GPU (tsne.cu, section "device-resident iteration"): P (SELL,
 * resident), the positions, momentum update, gains, both force terms and the interpolation grids live in device
 * memory for the whole run (with the exact repulsion, {@link TsneConfig#exactRepulsion}, there is no grid: one kernel
 * sums all pairs). Per iteration only 2 * dim order keys (the bounds that fix the grid, planned on the host
 * exactly as {@link LocalGradientSource#plan}), the kernel parameters and the 128-bit z sum cross PCIe; the charges
 * are converted from fixed point to doubles on the device with {@link GridRepulsion#toDouble}'s rounding, G2G runs on
 * device buffers ({@link G2GGpu#convolve(GpuStream, InterpGrid, DeviceBuffer, DeviceBuffer, GridConvolution.Method)})
 * and the update is {@link TsneOptimizer#step} with explicitly rounded operations. Every value therefore has the bits
 * of the host loop with the CPU twins ({@link TsneOptimizer.HostState} over {@link LocalGradientSource}).
 *
 * <p>KL partial sums are computed on the host from a downloaded copy of the positions, on the common fork-join pool,
 * while the GPU goes on iterating. Device memory: P's SELL arrays plus 5 n dim doubles plus the largest grid seen
 * (2 x 8 (dim + 2) nodes for the double grids and 16 (dim + 2) nodes for the fixed-point charges). Not thread-safe:
 * one run owns one state (several runs may share a GPU; each has its own stream and buffers). The
 * {@link BackendChooser#faultPoint}s before each phase let tests make the run fail part-way (no-ops otherwise).
 *
 * <p><b>One of several barrier tasks</b> ({@link TsneBarrier}): constructed with the task's row slices of P and a
 * {@link TsnePeers}, the state holds all of Y but computes the attractive term, G2S (or the exact repulsion), the KL
 * partial sums and the update only for its own rows; S2G and G2G run over all n points (they need only Y). Per
 * iteration the tasks sum their exact z (and KL) partials, each updates its own rows, and {@link TsnePeers#shareRows}
 * brings the other tasks' new rows into this device's Y (device to device between processes where CUDA IPC allows,
 * else through the host). Every task then holds the bits of the single-device run.
 *
 * <p><b>The loop of one device</b> (alone, on the grid) waits for the GPU once per iteration, for the bounds: the
 * attractive term runs on a second stream beside the bounds, the host's planning and the repulsion; G2G is ordered
 * after S2G and G2S after G2G by events, not by the host; the parameters go up from pinned memory; and the update
 * ({@code tsne_step_dz}) reads Z from G2S's exact sum on the device. The host checks that Z
 * ({@link TsneOptimizer#checkZ}, same message, same iteration number) when the next iteration's bounds come down, or
 * when the positions are read, before it looks at the bounds, so a collapsed run still fails with the Z message.
 * Phase times come from events (the attractive term's overlaps the others). Barrier tasks and the exact repulsion
 * keep the loop that waits after each phase.
 */
final class TsneDeviceState implements TsneOptimizer.State {
    /** A kernel of this section: loading it proves the module has the device-resident iteration. */
    static final String PROBE_KERNEL = "tsne_step";
    static final int BLOCK = 256;
    private static final long SIGN = Long.MIN_VALUE;

    private final CudaDevice dev;
    /** The rows of P this state owns: all of them for one device, a task's slices among several tasks. */
    private final List<SparseRows> slices;
    private final int n;
    private final int dim;
    private final TsneGridOptions gridOptions;
    private final GridConvolution.Method method;
    /** The exact O(n^2) repulsion ({@link TsneConfig#exactRepulsion}) instead of the grid. */
    private final boolean exact;
    /** Degrees of freedom of the kernel ({@link io.sparkgpu.tsne.repulsion.TsneKernel}). */
    private final double dof;
    private final GpuStream s;
    private final List<DeviceBuffer> owned = new ArrayList<>();
    /** Doubles of S2G's or G2S's parameter block (GridRepulsionGpu.params: 8 + 2 per charge, at most 5 charges). */
    private static final int PARAMS = 8 + 2 * 5;
    /**
     * P's device copy: the span of this state's slices ({@link io.sparkgpu.tsne.affinity.SparseRowsOps#span}; the
     * rows between them empty), so that the attractive and KL kernels run in one launch. Launched slice by slice,
     * their tiny grids would each wait for the longest row's chain of dependent loads (on 2 H200s, 4 ms an
     * iteration for 16 slices of 6,250 rows against 0.3 ms in one launch).
     */
    private final SparseRows span; // null when this task owns no rows
    private AttractiveForcesGpu.DeviceP dp;
    /** The other barrier tasks, or null alone. */
    private TsnePeers peers;
    private final DeviceBuffer y;
    private final DeviceBuffer upd;
    private final DeviceBuffer gains;
    private final DeviceBuffer attr;
    private final DeviceBuffer rep;
    private final DeviceBuffer keys;
    private final DeviceBuffer prm;
    private final DeviceBuffer zacc;
    /** The KL divergence's partial sums of one evaluation (tsne_kl_sell_d*). */
    private final DeviceBuffer klAcc;
    private DeviceBuffer acc;
    /** S2G by boxes: the points' counting sort by box, reused every iteration. */
    private final io.sparkgpu.tsne.repulsion.S2GBoxes boxes = new io.sparkgpu.tsne.repulsion.S2GBoxes();
    private DeviceBuffer q;
    private DeviceBuffer phi;
    private long gridNodesAllocated;
    /** G2S's parameters (S2G's go to {@code prm}); both go up from pinned memory ({@link #stageS2g}, {@link #stageG2s}). */
    private final DeviceBuffer prmG2s;
    private final PinnedHostBuffer stageS2g;
    private final PinnedHostBuffer stageG2s;
    /** The bounds' 2 dim order keys, then the bits of the last update's Z (tsne_step_dz). */
    private final long[] keyOut;
    /** The one-device loop's stream, events and pending checks; null until the first such iteration. */
    private Pipeline pipe;
    /** Host clock after S2G, G2G and G2S of the last waiting {@link #queueRepulsion}. */
    private final long[] marks = new long[3];
    private final long[] zOut = new long[2];
    private final long[] klOut = new long[4];

    /** P holds all rows and y0 n x dim values (checked by {@link TsneOptimizer#single}). */
    TsneDeviceState(CudaDevice dev, SparseRows p, double[] y0, TsneConfig cfg) {
        this(dev, List.of(p), p.n, y0, cfg, null);
    }

    /**
     * A state owning the row slices {@code slices} of P (n rows in all; disjoint, possibly none) with all of Y from y0;
     * with several barrier tasks {@code connect} (called once Y is on the device) links it to the other tasks, else
     * it is null and the slices must cover all n rows.
     */
    TsneDeviceState(CudaDevice dev, List<SparseRows> slices, int n, double[] y0, TsneConfig cfg,
            java.util.function.Function<TsneDeviceState, TsnePeers> connect) {
        this.dev = dev;
        this.slices = List.copyOf(slices);
        this.span = this.slices.isEmpty() ? null : io.sparkgpu.tsne.affinity.SparseRowsOps.span(this.slices);
        this.n = n;
        this.dim = cfg.dimension;
        this.gridOptions = cfg.grid;
        this.method = cfg.convolution;
        this.exact = cfg.exactRepulsion(n);
        this.dof = cfg.dof;
        this.keyOut = new long[2 * dim + 1];
        GpuStream st = new GpuStream(dev);
        s = st;
        PinnedHostBuffer a = null;
        PinnedHostBuffer b = null;
        try {
            a = PinnedHostBuffer.allocate(dev, 8L * PARAMS);
            b = PinnedHostBuffer.allocate(dev, 8L * PARAMS);
        } catch (RuntimeException e) {
            GpuResources.closeAfter(e, a, st);
            throw e;
        }
        stageS2g = a;
        stageG2s = b;
        boolean ok = false;
        try {
            dp = span == null ? null : AttractiveForcesGpu.deviceP(dev, span, null, st);
            int len = n * dim;
            y = own(DeviceBuffer.ofDoubles(dev, Math.max(1, len)));
            upd = own(DeviceBuffer.ofDoubles(dev, Math.max(1, len)));
            gains = own(DeviceBuffer.ofDoubles(dev, Math.max(1, len)));
            attr = own(DeviceBuffer.ofDoubles(dev, Math.max(1, len)));
            rep = own(DeviceBuffer.ofDoubles(dev, Math.max(1, len)));
            keys = own(DeviceBuffer.allocate(dev, 16L * dim + 8));
            prm = own(DeviceBuffer.ofDoubles(dev, PARAMS));
            prmG2s = own(DeviceBuffer.ofDoubles(dev, PARAMS));
            zacc = own(DeviceBuffer.allocate(dev, 16));
            klAcc = own(DeviceBuffer.allocate(dev, 32));
            double[] ones = new double[len];
            java.util.Arrays.fill(ones, 1.0);
            y.upload(y0, st);
            gains.upload(ones, st);
            upd.zero(st);
            st.synchronize("upload of the t-SNE state (" + n + " points)");
            peers = connect == null ? null : connect.apply(this);
            ok = true;
        } finally {
            if (!ok) {
                close();
            }
        }
    }

    /** The device this state runs on. */
    CudaDevice device() {
        return dev;
    }

    /** The positions on the device (n x dim doubles): every task's copy has the same bits after each iteration. */
    DeviceBuffer positionsBuffer() {
        return y;
    }

    /** The stream of this state's work. */
    GpuStream stream() {
        return s;
    }

    /** The rows this state owns. */
    List<SparseRows> slices() {
        return slices;
    }

    private DeviceBuffer own(DeviceBuffer b) {
        owned.add(b);
        return b;
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
    public TsneOptimizer.Step iterate(int iteration, double alpha, double mu, double eta, double minGain,
            boolean withKl, TsneTimings timings) {
        if (alone() && !exact) {
            return iterateAlone(iteration, alpha, mu, eta, minGain, withKl, timings);
        }
        long t0 = System.nanoTime();
        if (peers != null) {
            peers.beforeEvaluation();
        }
        double z = repulsion(timings, t0);
        long t3 = System.nanoTime();
        BackendChooser.faultPoint(AttractiveForces.MODULE, AttractiveForces.ATTRACTIVE_PHASE);
        if (dp != null) {
            AttractiveForcesGpu.launchAttractive(s, dp, dim, dof, y, rowsOf(attr, span)); // span's empty rows: 0
        }
        s.synchronize("t-SNE attractive term (n " + n + ", nnz " + nnz() + ")");
        long t4 = System.nanoTime();
        timings.add(TsneTimings.Phase.ATTRACTIVE, t4 - t3);
        TsneOptimizer.checkZ(z, iteration); // z is the same in every task: all stop here together
        CompletableFuture<long[]> kl = null;
        if (withKl) { // on the device at the positions before the update: TsneKl.partial's bits
            kl = CompletableFuture.completedFuture(klOnDevice());
            long t5 = System.nanoTime();
            timings.add(TsneTimings.Phase.KL, t5 - t4);
            t4 = t5;
        }
        BackendChooser.faultPoint(AttractiveForces.MODULE, TsneOptimizer.PHASE);
        for (SparseRows p : slices) { // elementwise: each task updates its own rows with the single device's bits
            long off = (long) p.rowOffset * dim;
            int len = p.rows * dim;
            KernelLauncher.launch(s, AttractiveForces.MODULE, "tsne_step", blocks(len), BLOCK, 0,
                    at(y, off), at(upd, off), at(gains, off), at(attr, off), at(rep, off), len, alpha, mu, eta, minGain,
                    z);
        }
        s.synchronize("t-SNE update (n " + n + ")");
        if (peers != null) {
            peers.shareRows(this);
        }
        timings.add(TsneTimings.Phase.UPDATE, System.nanoTime() - t4);
        return new TsneOptimizer.Step(z, kl);
    }

    /**
     * One iteration of the one-device loop on the grid (class comment): the host waits only for the bounds (and, on
     * KL iterations, for Z and the KL sums). The returned Step's Z is NaN except on KL iterations, where the
     * optimizer needs it; every other Z is checked when the next bounds come down ({@link #checkPendingZ}).
     */
    private TsneOptimizer.Step iterateAlone(int iteration, double alpha, double mu, double eta, double minGain,
            boolean withKl, TsneTimings timings) {
        if (pipe == null) {
            pipe = new Pipeline(dev);
        }
        Pipeline.Marks pl = pipe.next();
        pl.start.record(s);
        boolean attractive = dp != null;
        if (attractive) { // y is final for this iteration: the attractive term runs beside everything below
            BackendChooser.faultPoint(AttractiveForces.MODULE, AttractiveForces.ATTRACTIVE_PHASE);
            pl.start.waitOn(pipe.side);
            pl.sideStart.record(pipe.side);
            AttractiveForcesGpu.launchAttractive(pipe.side, dp, dim, dof, y, rowsOf(attr, span));
            pl.sideEnd.record(pipe.side);
        }
        double[][] b = bounds(); // the one wait; checks the last iteration's Z and collects its phase times first
        InterpGrid g = GridRepulsion.plan(b[0], b[1], dim, gridOptions, dof);
        int zShift = queueRepulsion(g, pl);
        if (attractive) {
            pl.sideEnd.waitOn(s);
        }
        double z = Double.NaN;
        CompletableFuture<long[]> kl = null;
        if (withKl) { // Z for the KL value, and the KL sums at the positions before the update
            zacc.download(zOut, 2, s);
            s.synchronize("t-SNE G2S (" + n + " points, " + g.nodes() + " nodes)");
            z = totalZ(zShift);
            TsneOptimizer.checkZ(z, iteration);
            kl = CompletableFuture.completedFuture(klOnDevice());
            pl.kl.record(s);
        }
        BackendChooser.faultPoint(AttractiveForces.MODULE, TsneOptimizer.PHASE);
        for (SparseRows p : slices) {
            long off = (long) p.rowOffset * dim;
            int len = p.rows * dim;
            KernelLauncher.launch(s, AttractiveForces.MODULE, "tsne_step_dz", blocks(len), BLOCK, 0,
                    at(y, off), at(upd, off), at(gains, off), at(attr, off), at(rep, off), len, alpha, mu, eta, minGain,
                    zacc, zShift, (double) n, keys.pointer().withByteOffset(16L * dim));
        }
        pl.end.record(s);
        pendingZ = withKl ? 0 : iteration;
        pl.queued(timings, attractive, withKl);
        return new TsneOptimizer.Step(z, kl);
    }

    /** The iteration whose Z (in the keys buffer's last slot) the host has not checked yet, or 0. */
    private int pendingZ;

    /** Checks the Z that came down with the bounds in keyOut, if one is pending ({@link #iterateAlone}). */
    private void checkPendingZ() {
        if (pendingZ > 0) {
            int it = pendingZ;
            pendingZ = 0;
            TsneOptimizer.checkZ(Double.longBitsToDouble(keyOut[2 * dim]), it);
        }
    }

    /**
     * Waits for the one-device loop's queued work, then checks its pending Z and collects its phase times: before the
     * host reads or replaces the positions.
     */
    private void settle() {
        if (pipe == null || (pendingZ == 0 && !pipe.pending())) {
            return;
        }
        if (pendingZ > 0) {
            keys.download(keyOut, 2 * dim, 1, 2L * dim, s);
        }
        s.synchronize("t-SNE iterations (n " + n + ")");
        checkPendingZ();
        pipe.collect();
    }

    /** The rows of slice p in buffer b (n x dim doubles): a device address for kernels that take slice rows. */
    private jcuda.driver.CUdeviceptr rowsOf(DeviceBuffer b, SparseRows p) {
        return at(b, (long) p.rowOffset * dim);
    }

    private static jcuda.driver.CUdeviceptr at(DeviceBuffer b, long elems) {
        return b.pointer().withByteOffset(elems * Double.BYTES);
    }

    private long nnz() {
        return span == null ? 0 : span.nnz();
    }

    /** Whether this state is alone (its slices are all rows). */
    private boolean alone() {
        return peers == null;
    }

    /**
     * Bounds, grid, S2G, fixed point to double, G2G, G2S + Phi2Force and Z at the device positions y; the forces
     * stay in {@code rep}. Returns Z; adds the S2G (bounds and plan included), G2G and G2S times from {@code t0}.
     */
    private double repulsion(TsneTimings timings, long t0) {
        if (exact) {
            double z = exactZ();
            timings.add(TsneTimings.Phase.EXACT, System.nanoTime() - t0);
            return z;
        }
        InterpGrid g = plan();
        int zShift = queueRepulsion(g, null);
        zacc.download(zOut, 2, s);
        s.synchronize("t-SNE G2S (" + n + " points, " + g.nodes() + " nodes)");
        long t3 = System.nanoTime();
        timings.add(TsneTimings.Phase.S2G, marks[0] - t0);
        timings.add(TsneTimings.Phase.G2G, marks[1] - marks[0]);
        timings.add(TsneTimings.Phase.G2S, t3 - marks[1]);
        return totalZ(zShift);
    }

    /**
     * Queues S2G, the charges' conversion to doubles, G2G and G2S + Phi2Force of this state's rows (forces into
     * {@code rep}, Z's exact partial sum into {@code zacc}) on grid g at the device positions y. With {@code pl} the
     * phases are marked by its events; without, the host waits after S2G and G2G ({@link #marks}). Returns Z's shift.
     */
    private int queueRepulsion(InterpGrid g, Pipeline.Marks pl) {
        int c = g.charges();
        int nodes = g.nodes();
        ensureGrid(g);
        int[] shifts = GridRepulsion.chargeShifts(g, n);
        int[] sh = new int[5];
        System.arraycopy(shifts, 0, sh, 0, c);
        acc.zero(s);
        upload(prm, stageS2g, GridRepulsionGpu.s2gParams(g, n));
        BackendChooser.faultPoint(AttractiveForces.MODULE, GridRepulsion.S2G_PHASE);
        GridRepulsionGpu.launchS2GPreferred(s, g, n, y, prm, acc, boxes);
        KernelLauncher.launch(s, AttractiveForces.MODULE, "tsne_fixed_to_double", blocks((long) c * nodes), BLOCK, 0,
                acc, nodes, c, sh[0], sh[1], sh[2], sh[3], sh[4], q);
        if (pl != null) {
            pl.s2g.record(s);
        } else {
            s.synchronize("t-SNE S2G (" + n + " points, " + nodes + " nodes)");
            marks[0] = System.nanoTime();
        }
        BackendChooser.faultPoint(AttractiveForces.MODULE, GridConvolution.PHASE);
        G2GGpu.enqueue(s, g, q, phi, method);
        if (pl != null) {
            pl.g2g.record(s);
        } else {
            s.synchronize("t-SNE G2G (" + nodes + " nodes)");
            marks[1] = System.nanoTime();
        }
        int zShift = GridRepulsion.zShift(n);
        upload(prmG2s, stageG2s, GridRepulsionGpu.g2sParams(g, n, zShift));
        zacc.zero(s);
        BackendChooser.faultPoint(AttractiveForces.MODULE, GridRepulsion.G2S_PHASE);
        for (SparseRows p : slices) {
            GridRepulsionGpu.launchG2S(s, g, p.rows, rowsOf(y, p), prmG2s, phi, rowsOf(rep, p), zacc, null);
        }
        if (pl != null) {
            pl.g2s.record(s);
        }
        return zShift;
    }

    /**
     * Queues the upload of {@code params} through the pinned {@code stage}: every earlier copy from the stage has run,
     * since the host has waited for the bounds (queued after them) since it last wrote the stage.
     */
    private void upload(DeviceBuffer dst, PinnedHostBuffer stage, double[] params) {
        stage.put(params, 0, params.length);
        dst.upload(stage, params.length, s);
    }

    /** Z from this state's exact partial sum in zOut, summed over the tasks first when there are several. */
    private double totalZ(int zShift) {
        if (!alone()) {
            System.arraycopy(peers.sum(zOut), 0, zOut, 0, 2);
        }
        return LocalGradientSource.z(zOut, zShift, n);
    }

    /** The exact repulsion of this state's rows, Z summed over the tasks ({@link #exactZ(boolean)}). */
    private double exactZ() {
        return exactZ(false);
    }

    /**
     * The exact repulsion ({@link ExactRepulsionGpu}) at the device positions y into {@code rep}: of every row on this
     * device alone when {@code allRows} (every task gets the same bits), else of this state's rows with Z summed over
     * the tasks. Returns Z.
     */
    private double exactZ(boolean allRows) {
        bounds(); // a diverged run fails here as on the grid path
        int zShift = GridRepulsion.zShift(n);
        zacc.zero(s);
        BackendChooser.faultPoint(AttractiveForces.MODULE, ExactRepulsion.PHASE);
        if (allRows) {
            ExactRepulsionGpu.launch(s, dim, y, n, 0, n, zShift, dof, rep, zacc);
        } else {
            for (SparseRows p : slices) {
                ExactRepulsionGpu.launch(s, dim, y, n, p.rowOffset, p.rows, zShift, dof, rowsOf(rep, p), zacc);
            }
        }
        zacc.download(zOut, 2, s);
        s.synchronize("t-SNE exact repulsion (" + n + " points)");
        return allRows ? LocalGradientSource.z(zOut, zShift, n) : totalZ(zShift);
    }

    /** The grid of the current positions: exact per-axis bounds on the device, then {@link GridRepulsion#plan}. */
    private InterpGrid plan() {
        double[][] b = bounds();
        return GridRepulsion.plan(b[0], b[1], dim, gridOptions, dof);
    }

    /**
     * Exact per-axis {min, max} of the device positions (order keys), or the host's {@link ArithmeticException}
     * naming the first non-finite coordinate ({@link LocalGradientSource#bounds}). Waits for the GPU; a pending Z
     * ({@link #iterateAlone}) comes down in the same copy and is checked first.
     */
    private double[][] bounds() {
        keys.fill(0, 8L * dim, (byte) 0xFF, s); // min keys start at the largest unsigned key, max keys at 0
        keys.fill(8L * dim, 8L * dim, (byte) 0, s);
        KernelLauncher.launch(s, AttractiveForces.MODULE, "tsne_minmax", Math.max(1, Math.min(blocks(n),
                8 * dev.multiprocessors())), BLOCK, 0, y, n, dim, keys);
        keys.download(keyOut, 2 * dim + 1, s);
        s.synchronize("t-SNE bounds (" + n + " points)");
        checkPendingZ();
        if (pipe != null) {
            pipe.collect();
        }
        double[] min = new double[dim];
        double[] max = new double[dim];
        for (int a = 0; a < dim; a++) {
            min[a] = fromKey(keyOut[a]);
            max[a] = fromKey(keyOut[dim + a]);
            if (!Double.isFinite(min[a]) || !Double.isFinite(max[a])) {
                // a coordinate diverged: the host check names it (and throws)
                return LocalGradientSource.bounds(positions(), n, dim);
            }
        }
        return new double[][] {min, max};
    }

    /** Inverse of the kernel's order key: bits ^ (sign ? ~0 : 2^63). */
    static double fromKey(long key) {
        long bits = key < 0 ? key ^ SIGN : ~key;
        return Double.longBitsToDouble(bits);
    }

    /** Grid buffers for g, grown (to at most twice the need, capped at the largest grid the options allow). */
    private void ensureGrid(InterpGrid g) {
        long nodes = g.nodes();
        if (nodes <= gridNodesAllocated) {
            return;
        }
        long maxNpd = (long) gridOptions.maxIntervals[dim] * g.p;
        long cap = 1;
        for (int a = 0; a < dim; a++) {
            cap *= maxNpd;
        }
        long alloc = Math.max(nodes, Math.min(2 * nodes, cap));
        int c = g.charges();
        s.synchronize("t-SNE grid buffers"); // no queued kernel may still read the buffers freed below
        for (DeviceBuffer b : new DeviceBuffer[] {acc, q, phi}) {
            if (b != null) {
                owned.remove(b);
                b.close();
            }
        }
        acc = null;
        q = null;
        phi = null;
        acc = own(DeviceBuffer.allocate(dev, 16L * c * alloc));
        q = own(DeviceBuffer.ofDoubles(dev, (long) c * alloc));
        phi = own(DeviceBuffer.ofDoubles(dev, (long) c * alloc));
        gridNodesAllocated = alloc;
    }

    @Override
    public double[] positions() {
        settle();
        double[] out = new double[n * dim];
        y.download(out, out.length, s);
        s.synchronize("download of the t-SNE positions");
        return out;
    }

    @Override
    public double exactZ(double[] pos) {
        settle();
        checkPositions(pos);
        y.upload(pos, s);
        return exactZ(true);
    }

    private void checkPositions(double[] pos) {
        if (pos.length != n * dim) {
            throw new IllegalArgumentException("positions hold " + pos.length + " values, expected " + n * dim);
        }
    }

    @Override
    public GradientSource.Forces evaluate(double[] pos) {
        settle();
        checkPositions(pos);
        y.upload(pos, s);
        double z = repulsion(new TsneTimings(), System.nanoTime());
        return new GradientSource.Forces(null, null, z, klOnDevice());
    }

    /**
     * The KL divergence's exact partial sums at the device positions y (tsne_kl_sell_d*: TsneKl.partial's bits), over
     * all rows (summed over the tasks when there are several).
     */
    private long[] klOnDevice() {
        klAcc.zero(s);
        if (dp != null) {
            AttractiveForcesGpu.launchKl(s, dp, dim, dof, y, klAcc);
        }
        klAcc.download(klOut, klOut.length, s);
        s.synchronize("t-SNE KL divergence (n " + n + ", nnz " + nnz() + ")");
        if (alone()) {
            return klOut.clone();
        }
        return peers.sum(klOut);
    }

    /**
     * The kernel tsne_fixed_to_double on its own, for tests: {@code acc} holds charges * nodes fixed-point pairs
     * (lo, hi), charge c at shift {@code shifts[c]}; returns the doubles.
     */
    static double[] fixedToDouble(CudaDevice dev, long[] acc, int nodes, int[] shifts) {
        int c = shifts.length;
        int[] sh = new int[5];
        System.arraycopy(shifts, 0, sh, 0, c);
        double[] out = new double[c * nodes];
        try (GpuStream st = new GpuStream(dev);
             DeviceBuffer a = DeviceBuffer.allocate(dev, Math.max(16, 8L * acc.length));
             DeviceBuffer o = DeviceBuffer.ofDoubles(dev, Math.max(1, out.length))) {
            a.upload(acc, st);
            KernelLauncher.launch(st, AttractiveForces.MODULE, "tsne_fixed_to_double", blocks(out.length), BLOCK, 0,
                    a, nodes, c, sh[0], sh[1], sh[2], sh[3], sh[4], o);
            o.download(out, out.length, st);
            st.synchronize("tsne_fixed_to_double test");
        }
        return out;
    }

    private static int blocks(long items) {
        return (int) Math.max(1, (items + BLOCK - 1) / BLOCK);
    }

    private void closeBuffers() {
        for (DeviceBuffer b : owned) {
            b.close();
        }
        owned.clear();
        boxes.close();
        stageS2g.close();
        stageG2s.close();
    }

    /** Closes the link to the other tasks, frees the state's buffers and stream and P's resident copies. */
    @Override
    public void close() {
        try {
            if (peers != null) {
                TsnePeers pe = peers;
                peers = null;
                pe.close();
            }
        } finally {
            try {
                try {
                    s.synchronize("t-SNE state"); // nothing queued may still use what is freed below
                    if (pipe != null) {
                        pipe.side.synchronize("t-SNE attractive term");
                    }
                } catch (RuntimeException ignored) {
                    // a failed run is closing: its own exception is the one to report
                }
                if (pipe != null) {
                    pipe.close();
                    pipe = null;
                }
                if (dp != null) {
                    dp.close();
                    dp = null;
                }
                closeBuffers();
                s.close();
            } finally {
                if (span != null) {
                    AttractiveForces.release(span);
                }
            }
        }
    }

    /**
     * The one-device loop's second stream (the attractive term) and two sets of phase events, used by turns: the host
     * reads an iteration's times after the next iteration's bounds came down, while that iteration records the other
     * set.
     */
    private static final class Pipeline implements AutoCloseable {
        final GpuStream side;
        private final Marks[] sets = new Marks[2];
        private int cur = 1;

        Pipeline(CudaDevice dev) {
            GpuStream st = new GpuStream(dev);
            try {
                sets[0] = new Marks(dev);
                sets[1] = new Marks(dev);
            } catch (RuntimeException e) {
                GpuResources.closeAfter(e, sets[0], sets[1], st);
                throw e;
            }
            side = st;
        }

        /** The set for the next iteration, after collecting the times of the iteration that last used it. */
        Marks next() {
            cur ^= 1;
            sets[cur].collect();
            return sets[cur];
        }

        boolean pending() {
            return sets[0].timings != null || sets[1].timings != null;
        }

        /** Adds the times of every queued iteration whose events have completed (the caller has waited for them). */
        void collect() {
            sets[cur ^ 1].collect(); // the older one first
            sets[cur].collect();
        }

        @Override
        public void close() {
            GpuResources.closeAll(sets[0], sets[1], side);
        }

        /** The events of one iteration. */
        static final class Marks implements AutoCloseable {
            final GpuEvent start;
            final GpuEvent s2g;
            final GpuEvent g2g;
            final GpuEvent g2s;
            final GpuEvent kl;
            final GpuEvent end;
            final GpuEvent sideStart;
            final GpuEvent sideEnd;
            private final GpuEvent[] all;
            /** Where the queued iteration's times go, or null when none is waiting to be read. */
            private TsneTimings timings;
            private boolean attractive;
            private boolean withKl;

            Marks(CudaDevice dev) {
                GpuEvent[] made = new GpuEvent[8];
                try {
                    for (int i = 0; i < made.length; i++) {
                        made[i] = new GpuEvent(dev, true);
                    }
                } catch (RuntimeException e) {
                    GpuResources.closeAfter(e, made);
                    throw e;
                }
                all = made;
                start = made[0];
                s2g = made[1];
                g2g = made[2];
                g2s = made[3];
                kl = made[4];
                end = made[5];
                sideStart = made[6];
                sideEnd = made[7];
            }

            /** The iteration is queued; its times go to {@code t} once read. */
            void queued(TsneTimings t, boolean attractive, boolean withKl) {
                this.timings = t;
                this.attractive = attractive;
                this.withKl = withKl;
            }

            /**
             * Adds the queued iteration's phase times (S2G from the iteration's start: the bounds, the host's wait and
             * plan included, as in the waiting loop; the update from G2S, or from the KL sums, to its end, waiting for
             * the attractive term included; the attractive term's own span on its stream).
             */
            void collect() {
                TsneTimings t = timings;
                if (t == null) {
                    return;
                }
                timings = null;
                t.add(TsneTimings.Phase.S2G, nanos(s2g.millisSince(start)));
                t.add(TsneTimings.Phase.G2G, nanos(g2g.millisSince(s2g)));
                t.add(TsneTimings.Phase.G2S, nanos(g2s.millisSince(g2g)));
                if (withKl) {
                    t.add(TsneTimings.Phase.KL, nanos(kl.millisSince(g2s)));
                }
                t.add(TsneTimings.Phase.UPDATE, nanos(end.millisSince(withKl ? kl : g2s)));
                if (attractive) {
                    t.add(TsneTimings.Phase.ATTRACTIVE, nanos(sideEnd.millisSince(sideStart)));
                }
            }

            private static long nanos(double ms) {
                return Math.round(ms * 1e6);
            }

            @Override
            public void close() {
                GpuResources.closeAll(all);
            }
        }
    }
}
