package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuEvent;
import io.sparkgpu.cuda.GpuResources;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * GPU G2G through the {@code tsne} module (section G2G of tsne.cu); CPU twin {@link G2GCpu}, equal bits.
 *
 * <p>Device buffers are cached per grid shape (method, dimension, lattice or FFT size) in small pools of
 * workspaces: a call takes an idle workspace of its shape (or allocates one), runs on the workspace's own
 * stream and gives it back, so several Spark tasks can share one GPU without sharing buffers. At most
 * {@link #MAX_SHAPES} shapes are kept (least recently used first out) and {@link #MAX_IDLE} idle workspaces
 * per shape; the FFT workspace depends only on the FFT length m, so adaptive grids whose n round up to the same
 * m reuse it.
 */
public final class G2GGpu {
    public static final String MODULE = "tsne";
    public static final String PROBE_KERNEL = "tsne_g2g_pack";
    static final int BLOCK = 256;
    /** Threads per block of tsne_g2g_direct, which stages this many source nodes at a time (TSNE_G2G_TILE). */
    static final int DIRECT_TILE = 128;
    /**
     * Fused axis blocks: at most FUSED_EPT elements a thread loads before storing (TSNE_G2G_FUSED_EPT) and
     * FUSED_MAX_THREADS threads (TSNE_G2G_FUSED_MAX_THREADS); about CONTIGUOUS_ELEMS_PER_THREAD (first axis) or
     * STRIDED_ELEMS_PER_THREAD (the others) elements a thread and BLOCK_ELEMS elements a block, never fewer than one
     * line (two on strided axes). The kernels use about 64 registers a thread, so a block's threads decide how many
     * blocks share an SM, and one block alone leaves the memory idle while it runs its passes. Timed on the H200
     * (tsne_g2g_axis alone, 12 arrays of m^2, m = 640, 960, 1280, 2026-12-07): one line of 8 elements a thread was
     * fastest on the first axis (1280: 0.356 ms against 0.413 with 4 elements a thread), two lines of 5 elements a
     * thread on the others (1280: 0.506 ms against 0.690 with 4, whose 640-thread block fills an SM's registers
     * alone); four lines a block were slower on both axes. Those were complex doubles. With complex floats (H100,
     * 2026-12-07, the same sweep) 8 elements a thread won everywhere: first axis one line (1280: 0.235 ms against
     * 0.293 with 5), strided axes two lines (1280: 0.339 against 0.391 with 5; 960 and 640 within 5% with four),
     * the middle kernel two lines (1280: 0.471 against 0.530 with 5); the double kernels took 0.361 and 0.513 ms.
     */
    static final int FUSED_EPT = 8;
    static final int FUSED_MAX_THREADS = 1024;
    static final int CONTIGUOUS_ELEMS_PER_THREAD = 8;
    static final int STRIDED_ELEMS_PER_THREAD = 8;
    static final int BLOCK_ELEMS = 1024;
    /** Blocks per charge of tsne_g2g_exponents (each thread strides over the nodes). */
    static final int EXPONENT_BLOCKS = 128;
    /** Ints of the exponent buffer: one per charge, at most TSNE_MAX_CHARGES (3-D: 5). */
    static final int TOP_INTS = 5;
    static final int MAX_SHAPES = 4;
    static final int MAX_IDLE = 4;

    private static final Map<String, ArrayDeque<Workspace>> POOLS = new LinkedHashMap<>(16, 0.75f, true);

    private G2GGpu() {
    }

    /** Host arrays in and out; {@code kernelMillis}, if not null, gets the device time without transfers. */
    static double[] convolve(CudaDevice dev, G2GPlan plan, double h2, double dof, double[] q, int charges,
                             boolean fft, double[] kernelMillis) {
        int nodes = plan.gridNodes;
        dev.bind(); // a reused workspace allocates nothing, and copies need this thread's current context
        String key = key(dev, plan, fft);
        Workspace ws = acquire(key, dev, plan, charges, fft);
        boolean ok = false;
        try {
            ws.q.upload(q, 0, charges * nodes, 0, ws.stream);
            long t0 = 0;
            if (kernelMillis != null) {
                ws.stream.synchronize("G2G upload");
                t0 = System.nanoTime();
            }
            launches(ws, plan, h2, dof, charges, fft, ws.q, ws.phi);
            if (kernelMillis != null) {
                ws.stream.synchronize("G2G kernels");
                kernelMillis[0] = (System.nanoTime() - t0) / 1e6;
            }
            double[] phi = new double[charges * nodes];
            ws.phi.download(phi, phi.length, ws.stream);
            ws.stream.synchronize("G2G");
            ok = true;
            return phi;
        } finally {
            release(key, ws, ok);
        }
    }

    /**
     * Device-resident G2G for callers that keep the grids on the GPU (single-device t-SNE): {@code charges}
     * and {@code potentials} hold charges * nodes doubles laid out as in {@link InterpGrid}. Waits for the work
     * already queued on {@code stream} (which produced the charges), runs the kernels on a cached workspace's
     * stream and returns when the potentials are complete. Same bits as the host-array path.
     */
    public static void convolve(GpuStream stream, InterpGrid grid, DeviceBuffer charges, DeviceBuffer potentials,
                                GridConvolution.Method method) {
        enqueue(stream, grid, charges, potentials, method);
        stream.synchronize("G2G");
    }

    /**
     * {@link #convolve(GpuStream, InterpGrid, DeviceBuffer, DeviceBuffer, GridConvolution.Method)} without waiting
     * on the host: the workspace's stream waits (on the device) for the work queued on {@code stream} so far, and the
     * work queued on {@code stream} afterwards waits for the potentials. The workspace goes back to its pool at once;
     * whoever takes it next queues behind these kernels on its stream.
     */
    public static void enqueue(GpuStream stream, InterpGrid grid, DeviceBuffer charges, DeviceBuffer potentials,
                               GridConvolution.Method method) {
        G2GPlan plan = G2GPlan.of(grid);
        int c = grid.charges();
        long need = 8L * c * plan.gridNodes;
        if (charges.bytes() < need || potentials.bytes() < need) {
            throw new IllegalArgumentException("charges/potentials device buffers must hold " + need + " bytes");
        }
        boolean fft = GridConvolution.useFft(plan, c, method, true);
        double h = grid.spacing();
        CudaDevice dev = stream.device();
        dev.bind();
        String key = key(dev, plan, fft);
        Workspace ws = acquire(key, dev, plan, c, fft);
        boolean ok = false;
        try {
            ws.inputs.record(stream).waitOn(ws.stream);
            launches(ws, plan, h * h, grid.dof, c, fft, charges, potentials);
            ws.done.record(ws.stream).waitOn(stream);
            ok = true;
        } finally {
            release(key, ws, ok);
        }
    }

    private static void launches(Workspace ws, G2GPlan plan, double h2, double dof, int charges, boolean fft,
                                 DeviceBuffer q, DeviceBuffer phi) {
        GpuStream s = ws.stream;
        int nodes = plan.gridNodes;
        KernelLauncher.launch(s, MODULE, "tsne_g2g_kernel_table", grid(nodes), BLOCK, 0,
                ws.kt, plan.dim, plan.n, h2, nodes, dof);
        if (!fft) {
            KernelLauncher.launch(s, MODULE, "tsne_g2g_direct", (nodes + DIRECT_TILE - 1) / DIRECT_TILE, DIRECT_TILE,
                    0, q, ws.kt, phi, plan.dim, plan.n, nodes, charges);
            return;
        }
        int fn = plan.fftNodes;
        int slots = G2GPlan.slots(charges);
        double scale = 1.0 / ((double) plan.parities * (double) fn);
        // each charge's power of two for the float transforms (G2GPlan.chargeExponents): the largest exponent field
        ws.top.zero(s);
        int perCharge = Math.min(grid(nodes), EXPONENT_BLOCKS);
        KernelLauncher.launch(s, MODULE, "tsne_g2g_exponents", perCharge * charges, BLOCK, 0, q, ws.top, nodes,
                perCharge);
        if (fused(s.device(), plan)) {
            // one shared-memory kernel per axis and direction, but the last forward axis, the multiply and the first
            // inverse axis (the same axis: the inverse runs its axes in reverse) are one middle kernel whose spectra
            // stay in shared memory; pack rides in the first forward axis, accumulate in the last inverse one (in 1-D
            // both in the middle kernel). In 1-D and 2-D every parity runs in the same launch (parity = block /
            // blocksPerParity, its own arrays and terms), then tsne_g2g_sum adds the terms in parity order; in 3-D one
            // parity after the other.
            boolean together = parallelParities(plan);
            int m = plan.m;
            int dim = plan.dim;
            for (int sigma = 0; sigma < (together ? 1 : plan.parities); sigma++) {
                int last = sigma == plan.parities - 1 ? 1 : 0;
                int inner = 1;
                for (int axis = 0; axis < dim - 1; axis++) {
                    launchFused(s, ws, plan, axis == 0 ? "tsne_g2g_axis_pack" : "tsne_g2g_axis", false, inner,
                            (slots + 1) * (fn / m), 0, q, phi, charges, sigma, last, scale, axis, together);
                    inner *= m;
                }
                // lines = the axis's positions in one array; the block walks the arrays
                launchFused(s, ws, plan, dim == 1 ? "tsne_g2g_middle_pack_acc" : "tsne_g2g_middle", true, inner,
                        fn / m, 0, q, phi, charges, sigma, last, scale, dim - 1, together);
                for (int axis = dim - 2; axis >= 0; axis--) {
                    inner /= m;
                    launchFused(s, ws, plan, axis == 0 ? "tsne_g2g_axis_acc" : "tsne_g2g_axis", false, inner,
                            slots * (fn / m), 1, q, phi, charges, sigma, last, scale, axis, together);
                }
            }
            if (together) {
                long total = (long) charges * nodes;
                KernelLauncher.launch(s, MODULE, "tsne_g2g_sum", grid(total), BLOCK, 0, ws.acc, phi, total,
                        plan.parities, scale);
            }
            return;
        }
        for (int sigma = 0; sigma < plan.parities; sigma++) {
            KernelLauncher.launch(s, MODULE, "tsne_g2g_pack", grid(fn), BLOCK, 0,
                    q, ws.kt, ws.shift, ws.a, plan.dim, plan.n, plan.m, fn, nodes, charges, ws.top, sigma);
            DeviceBuffer[] ab = {ws.a, ws.b};
            transform(s, plan, ws.roots, ab, slots + 1, false);
            KernelLauncher.launch(s, MODULE, "tsne_g2g_multiply", grid((long) slots * fn), BLOCK, 0,
                    ab[0], slots, fn);
            transform(s, plan, ws.roots, ab, slots, true);
            KernelLauncher.launch(s, MODULE, "tsne_g2g_accumulate", grid(nodes), BLOCK, 0,
                    ab[0], ws.shift, ws.acc, phi, plan.dim, plan.n, plan.m, fn, nodes, charges, ws.top, sigma,
                    sigma == plan.parities - 1 ? 1 : 0, scale);
            // pack always writes ws.a: if the result ended in ws.b the next parity still starts from ws.a
        }
    }

    /** One fused axis or middle kernel over {@code lines} lines (of every parity when {@code together}). */
    private static void launchFused(GpuStream s, Workspace ws, G2GPlan plan, String kernel, boolean middle, int inner,
                                    int lines, int inverse, DeviceBuffer q, DeviceBuffer phi, int charges, int sigma,
                                    int last, double scale, int axis, boolean together) {
        boolean contiguous = inner == 1;
        int buffers = middle ? 3 : 2;
        int per = linesPerBlock(s.device().maxSharedMemoryOptin(), plan.m, contiguous, buffers);
        int blocks = (lines + per - 1) / per;
        KernelLauncher.launch(s, MODULE, kernel, together ? blocks * plan.parities : blocks,
                fusedThreads(plan.m * per, contiguous), bytes(plan.m, per, buffers), ws.a, ws.roots, plan.m, inner,
                lines, per, plan.radixCode(), plan.radices.length, inverse, q, ws.kt, ws.shift, ws.acc, phi, plan.dim,
                plan.n, plan.fftNodes, plan.gridNodes, charges, ws.top, sigma, last, scale, axis, together ? blocks : 0);
    }

    /**
     * All passes of the transform of the first {@code arrays} arrays of ab[0], one global-memory kernel each; the
     * inverse runs its axes in reverse order ({@link G2GCpu#transform}).
     */
    private static void transform(GpuStream s, G2GPlan plan, DeviceBuffer roots, DeviceBuffer[] ab, int arrays,
                                  boolean inverse) {
        for (int step = 0; step < plan.dim; step++) {
            int axis = inverse ? plan.dim - 1 - step : step;
            int inner = G2GPlan.pow(plan.m, axis);
            int ns = 1;
            for (int r : plan.radices) {
                long items = (long) arrays * plan.fftNodes / r;
                KernelLauncher.launch(s, MODULE, "tsne_g2g_pass_" + r, grid(items), BLOCK, 0,
                        ab[0], ab[1], roots, plan.m, ns, inner, items, inverse ? 1 : 0);
                DeviceBuffer t = ab[0];
                ab[0] = ab[1];
                ab[1] = t;
                ns *= r;
            }
        }
    }

    /**
     * Lines per block of tsne_g2g_axis: enough for about BLOCK_ELEMS points per block, at least 2 on strided axes
     * (two adjacent lines read 16 bytes of a row, half a 32-byte sector; the next block's lines the other half), at
     * most FUSED_EPT * FUSED_MAX_THREADS points, fewer if the device's
     * shared memory per block is smaller; 0 when not even one line fits (the caller then runs the global passes).
     */
    static int fusedLines(CudaDevice dev, int m, boolean contiguous) {
        return fusedLines(dev.maxSharedMemoryOptin(), m, contiguous);
    }

    /** {@link #fusedLines(CudaDevice, int, boolean)} for a device with {@code sharedBytes} per block. */
    static int fusedLines(long sharedBytes, int m, boolean contiguous) {
        return linesPerBlock(sharedBytes, m, contiguous, 2);
    }

    /** Lines per block of a fused kernel with {@code buffers} line buffers (see {@link #fusedLines}). */
    private static int linesPerBlock(long sharedBytes, int m, boolean contiguous, int buffers) {
        int lines = Math.max(contiguous ? 1 : 2, BLOCK_ELEMS / m);
        lines = Math.max(1, Math.min(lines, FUSED_EPT * FUSED_MAX_THREADS / m));
        int fit = (int) Math.min(Integer.MAX_VALUE, sharedBytes / bytes(m, 1, buffers));
        return Math.min(lines, fit);
    }

    /**
     * Positions per block of the middle kernel (tsne_g2g_middle*: three buffers of lines), chosen as
     * {@link #fusedLines} chooses lines; 0 when not even one fits (the caller then runs the global passes).
     */
    static int middleLines(CudaDevice dev, int m, boolean contiguous) {
        return middleLines(dev.maxSharedMemoryOptin(), m, contiguous);
    }

    /** {@link #middleLines(CudaDevice, int, boolean)} for a device with {@code sharedBytes} per block. */
    static int middleLines(long sharedBytes, int m, boolean contiguous) {
        return linesPerBlock(sharedBytes, m, contiguous, 3);
    }

    /**
     * Device bytes of the FFT workspace of a G2G on a lattice of n^dim nodes with {@code charges} charges: what a
     * {@code Workspace} allocates (charges and potentials, the kernel table, the terms, the complex arrays and the
     * FFT tables), with the fused path's parity sets where the plan can run fused (every device whose shared memory
     * per block holds one line pair; {@code io.sparkgpu.tsne.TsneDeviceBudget}'s estimate).
     */
    public static long fftWorkspaceBytes(int dim, int n, int charges) {
        G2GPlan plan = G2GPlan.of(dim, n);
        long bytes = 0;
        for (long b : fftWorkspaceBufferBytes(plan, charges, plan.fusable())) {
            bytes += b;
        }
        return bytes;
    }

    /**
     * Bytes of each buffer of an FFT workspace, in the order {q, phi, kt, acc, a, b, roots, shift, top}: doubles but for
     * the complex float arrays a and b and the float roots. The fused path with the parities side by side holds every
     * parity's complex arrays in a and their terms in acc, and leaves b (the global passes' ping-pong buffer) a token
     * 8 bytes.
     */
    static long[] fftWorkspaceBufferBytes(G2GPlan plan, int charges, boolean fused) {
        long fn = plan.fftNodes;
        boolean together = fused && parallelParities(plan);
        long sets = together ? plan.parities : 1;
        long arrayFloats = 2L * (G2GPlan.slots(charges) + 1) * fn;
        return new long[] {8 * charges * fn, 8 * charges * fn, 8 * fn, 8 * sets * charges * fn,
            4 * sets * arrayFloats, together ? 8 : 4 * arrayFloats, 4 * 2L * plan.m, 8 * 2L * plan.m,
            4L * TOP_INTS};
    }

    /** Whether the FFT runs in the fused shared-memory axis and middle kernels on this device. */
    static boolean fused(CudaDevice dev, G2GPlan plan) {
        return plan.fusable() && fusedLines(dev, plan.m, false) > 0 && middleLines(dev, plan.m, plan.dim == 1) > 0;
    }

    /**
     * Whether the fused path runs every parity in one launch per axis (1-D and 2-D: 2 and 4 parities). It needs
     * a set of arrays and of terms per parity: at the 2-D default cap (1280^2 nodes, 4 charges) 315 + 210 MB
     * instead of 158 + 52; in 3-D (8 parities of up to 160^3 points) that would be gigabytes, so 3-D keeps one
     * parity after the other.
     */
    static boolean parallelParities(G2GPlan plan) {
        return plan.dim <= 2;
    }

    /**
     * Dynamic shared memory of a fused axis block: two buffers of lines * m complex floats, each rounded up to 8,
     * and the lines' table (first element, array, coordinates: 24 bytes a line).
     */
    static int fusedBytes(int m, int lines) {
        return bytes(m, lines, 2);
    }

    /** Dynamic shared memory of a middle block: three buffers of lines * m complex floats and the lines' table. */
    static int middleBytes(int m, int lines) {
        return bytes(m, lines, 3);
    }

    private static int bytes(int m, int lines, int buffers) {
        return buffers * 8 * ((m * lines + 7) / 8 * 8) + 24 * lines;
    }

    /**
     * Threads of a fused axis block holding {@code elems} elements: about one per {@link #CONTIGUOUS_ELEMS_PER_THREAD}
     * (first axis) or {@link #STRIDED_ELEMS_PER_THREAD} elements, rounded up to whole warps, at most
     * {@link #FUSED_MAX_THREADS}, and never fewer than elems / {@link #FUSED_EPT} (each thread's loads of the first
     * phase live in registers, TSNE_G2G_FUSED_EPT elements at most).
     */
    static int fusedThreads(int elems, boolean contiguous) {
        int per = contiguous ? CONTIGUOUS_ELEMS_PER_THREAD : STRIDED_ELEMS_PER_THREAD;
        int t = (elems + per - 1) / per;
        t = Math.min(FUSED_MAX_THREADS, Math.max(32, (t + 31) / 32 * 32));
        if ((long) t * FUSED_EPT < elems) {
            throw new IllegalStateException("fused G2G block of " + elems + " elements exceeds " + FUSED_EPT + " x "
                    + FUSED_MAX_THREADS);
        }
        return t;
    }

    private static int grid(long items) {
        long g = (items + BLOCK - 1) / BLOCK;
        if (items > Integer.MAX_VALUE - BLOCK) { // kernels index items with 32-bit ints
            throw new IllegalArgumentException("G2G launch too large: " + items + " items");
        }
        return (int) Math.max(1, g);
    }

    // ------------------------------------------------------------------------------------------ workspaces

    private static String key(CudaDevice dev, G2GPlan plan, boolean fft) {
        return dev.ordinal() + (fft ? ":fft:" + plan.dim + ":" + plan.m : ":direct:" + plan.dim + ":" + plan.n);
    }

    private static Workspace acquire(String key, CudaDevice dev, G2GPlan plan, int charges, boolean fft) {
        synchronized (POOLS) {
            ArrayDeque<Workspace> idle = POOLS.computeIfAbsent(key, k -> new ArrayDeque<>());
            Workspace ws = idle.poll();
            if (ws != null) {
                return ws;
            }
        }
        return new Workspace(dev, plan, charges, fft);
    }

    private static void release(String key, Workspace ws, boolean healthy) {
        ArrayDeque<Workspace> drop = new ArrayDeque<>();
        synchronized (POOLS) {
            ArrayDeque<Workspace> idle = POOLS.computeIfAbsent(key, k -> new ArrayDeque<>());
            if (healthy && idle.size() < MAX_IDLE) {
                idle.push(ws);
            } else {
                drop.add(ws);
            }
            Iterator<Map.Entry<String, ArrayDeque<Workspace>>> it = POOLS.entrySet().iterator();
            while (POOLS.size() > MAX_SHAPES && it.hasNext()) {
                Map.Entry<String, ArrayDeque<Workspace>> e = it.next();
                if (!e.getKey().equals(key)) {
                    drop.addAll(e.getValue());
                    it.remove();
                }
            }
        }
        for (Workspace w : drop) {
            try {
                w.close();
            } catch (RuntimeException e) {
                if (healthy) {
                    throw e;
                } // else the call is already failing: keep its exception, not the cleanup's
            }
        }
    }

    /** Frees every idle cached workspace (tests, benchmarks). */
    public static void clearCache() {
        ArrayDeque<Workspace> drop = new ArrayDeque<>();
        synchronized (POOLS) {
            POOLS.values().forEach(drop::addAll);
            POOLS.clear();
        }
        drop.forEach(Workspace::close);
    }

    /** Buffers and stream of one call; FFT tables are uploaded once, at creation. */
    private static final class Workspace implements AutoCloseable {
        final GpuStream stream;
        final DeviceBuffer q;
        final DeviceBuffer phi;
        final DeviceBuffer kt;
        final DeviceBuffer acc;
        final DeviceBuffer a;
        final DeviceBuffer b;
        final DeviceBuffer roots;
        final DeviceBuffer shift;
        /** Each charge's largest exponent field (tsne_g2g_exponents), TSNE_MAX_CHARGES ints. */
        final DeviceBuffer top;
        /** Cross-stream order of {@link #enqueue}: the caller's inputs, then this workspace's kernels. */
        final GpuEvent inputs;
        final GpuEvent done;

        Workspace(CudaDevice dev, G2GPlan plan, int charges, boolean fft) {
            GpuStream st = new GpuStream(dev);
            DeviceBuffer[] made = new DeviceBuffer[9];
            GpuEvent in = null;
            GpuEvent out = null;
            try {
                in = new GpuEvent(dev, false);
                out = new GpuEvent(dev, false);
                if (fft) { // the FFT workspace serves every n with this m
                    long[] bytes = fftWorkspaceBufferBytes(plan, charges, fused(dev, plan));
                    for (int i = 0; i < bytes.length; i++) {
                        made[i] = DeviceBuffer.allocate(dev, bytes[i]);
                    }
                    made[6].upload(plan.roots, st);
                    made[7].upload(plan.shift, st);
                    st.synchronize("G2G tables");
                } else { // DIRECT: charges, potentials and the kernel table on the lattice itself
                    made[0] = DeviceBuffer.ofDoubles(dev, (long) charges * plan.gridNodes);
                    made[1] = DeviceBuffer.ofDoubles(dev, (long) charges * plan.gridNodes);
                    made[2] = DeviceBuffer.ofDoubles(dev, plan.gridNodes);
                }
            } catch (RuntimeException e) {
                GpuResources.closeAfter(e, made);
                GpuResources.closeAfter(e, in, out, st);
                throw e;
            }
            inputs = in;
            done = out;
            stream = st;
            q = made[0];
            phi = made[1];
            kt = made[2];
            acc = made[3];
            a = made[4];
            b = made[5];
            roots = made[6];
            shift = made[7];
            top = made[8];
        }

        @Override
        public void close() {
            try {
                stream.synchronize("G2G"); // kernels of an enqueue may still read these buffers
            } catch (RuntimeException ignored) {
                // a broken context: freeing is all that is left to do
            }
            GpuResources.closeAll(q, phi, kt, acc, a, b, roots, shift, top, inputs, done, stream);
        }
    }
}
