package io.sparkgpu.tsne.optimize;

import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
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
    private final long[] keyInit;
    private final long[] keyOut;
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
        this.keyInit = new long[2 * dim];
        this.keyOut = new long[2 * dim];
        java.util.Arrays.fill(keyInit, 0, dim, -1L); // min keys start at the largest unsigned key, max keys at 0
        GpuStream st = new GpuStream(dev);
        s = st;
        boolean ok = false;
        try {
            dp = span == null ? null : AttractiveForcesGpu.deviceP(dev, span, null, st);
            int len = n * dim;
            y = own(DeviceBuffer.ofDoubles(dev, Math.max(1, len)));
            upd = own(DeviceBuffer.ofDoubles(dev, Math.max(1, len)));
            gains = own(DeviceBuffer.ofDoubles(dev, Math.max(1, len)));
            attr = own(DeviceBuffer.ofDoubles(dev, Math.max(1, len)));
            rep = own(DeviceBuffer.ofDoubles(dev, Math.max(1, len)));
            keys = own(DeviceBuffer.allocate(dev, 16L * dim));
            prm = own(DeviceBuffer.ofDoubles(dev, 8 + 2 * 5));
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
        int c = g.charges();
        int nodes = g.nodes();
        ensureGrid(g);
        int[] shifts = GridRepulsion.chargeShifts(g, n);
        int[] sh = new int[5];
        System.arraycopy(shifts, 0, sh, 0, c);
        acc.zero(s);
        prm.upload(GridRepulsionGpu.s2gParams(g, n), s);
        BackendChooser.faultPoint(AttractiveForces.MODULE, GridRepulsion.S2G_PHASE);
        GridRepulsionGpu.launchS2GPreferred(s, g, n, y, prm, acc, boxes);
        KernelLauncher.launch(s, AttractiveForces.MODULE, "tsne_fixed_to_double", blocks((long) c * nodes), BLOCK, 0,
                acc, nodes, c, sh[0], sh[1], sh[2], sh[3], sh[4], q);
        s.synchronize("t-SNE S2G (" + n + " points, " + nodes + " nodes)");
        long t1 = System.nanoTime();
        BackendChooser.faultPoint(AttractiveForces.MODULE, GridConvolution.PHASE);
        G2GGpu.convolve(s, g, q, phi, method);
        long t2 = System.nanoTime();
        int zShift = GridRepulsion.zShift(n);
        prm.upload(GridRepulsionGpu.g2sParams(g, n, zShift), s);
        zacc.zero(s);
        BackendChooser.faultPoint(AttractiveForces.MODULE, GridRepulsion.G2S_PHASE);
        for (SparseRows p : slices) {
            GridRepulsionGpu.launchG2S(s, g, p.rows, rowsOf(y, p), prm, phi, rowsOf(rep, p), zacc, null);
        }
        zacc.download(zOut, 2, s);
        s.synchronize("t-SNE G2S (" + n + " points, " + nodes + " nodes)");
        long t3 = System.nanoTime();
        timings.add(TsneTimings.Phase.S2G, t1 - t0);
        timings.add(TsneTimings.Phase.G2G, t2 - t1);
        timings.add(TsneTimings.Phase.G2S, t3 - t2);
        return totalZ(zShift);
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
     * naming the first non-finite coordinate ({@link LocalGradientSource#bounds}).
     */
    private double[][] bounds() {
        keys.upload(keyInit, s);
        KernelLauncher.launch(s, AttractiveForces.MODULE, "tsne_minmax", Math.max(1, Math.min(blocks(n),
                8 * dev.multiprocessors())), BLOCK, 0, y, n, dim, keys);
        keys.download(keyOut, 2 * dim, s);
        s.synchronize("t-SNE bounds (" + n + " points)");
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
        double[] out = new double[n * dim];
        y.download(out, out.length, s);
        s.synchronize("download of the t-SNE positions");
        return out;
    }

    @Override
    public double exactZ(double[] pos) {
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
}
