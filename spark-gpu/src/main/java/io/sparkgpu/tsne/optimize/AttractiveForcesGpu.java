package io.sparkgpu.tsne.optimize;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.cuda.KernelTimer;
import io.sparkgpu.cuda.ScratchBuffers;
import io.sparkgpu.tsne.affinity.SparseRows;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * GPU side of {@link AttractiveForces} (module {@code tsne}, kernels tsne_attr_sell_d*). P is uploaded once per
 * slice and device (SELL-32-256, {@link SellRows}) into the {@link DeviceResidentCache} under a key bound to the
 * identity of the {@link SparseRows} object; per call only y goes up and the result comes down. Per-call buffers come
 * from {@link ScratchBuffers}, so iterations do not allocate device memory. Every method is thread-safe: each call
 * has its own stream and buffers, and resident P is shared read-only.
 */
final class AttractiveForcesGpu {
    static final int BLOCK = 256;

    private static final AtomicLong NEXT_ID = new AtomicLong();

    /** Identity of each P slice seen here (without a caller key) -> its residency id. */
    private static final Map<SparseRows, Long> IDS = new WeakHashMap<>();

    /** Per residency key seen in this JVM: {entries of col/val (SELL padded + hub CSR), meta ints, hub rows}. */
    private static final Map<String, int[]> SHAPES = new ConcurrentHashMap<>();

    /** Device time of the kernel of this thread's last GPU call, in ms (CUDA events: no transfers). */
    static final ThreadLocal<double[]> LAST_KERNEL_MS = ThreadLocal.withInitial(() -> new double[] {Double.NaN});

    private AttractiveForcesGpu() {
    }

    /** The residency key of P: "tsne-P#<id>/" for an identity-tracked slice, "tsne-P:<caller key>/" otherwise. */
    static String residencyKey(SparseRows p) {
        synchronized (IDS) {
            Long id = IDS.get(p);
            return id == null ? null : "tsne-P#" + id + "/";
        }
    }

    private static String keyOf(SparseRows p, String callerKey) {
        if (callerKey != null) {
            return "tsne-P:" + callerKey + ":" + p.rowOffset + ":" + p.rows + ":" + p.nnz() + "/";
        }
        synchronized (IDS) {
            return "tsne-P#" + IDS.computeIfAbsent(p, k -> NEXT_ID.incrementAndGet()) + "/";
        }
    }

    /**
     * P's SELL-32-256 arrays on the device while this is open: the resident copy under P's key (uploaded on first
     * use), or a private copy when the resident cache cannot hold it or another thread is filling it.
     */
    static final class DeviceP implements AutoCloseable {
        final SparseRows p;
        final int nSlices;
        final int nHubs;
        final DeviceBuffer meta;
        final DeviceBuffer col;
        final DeviceBuffer val;
        private final List<AutoCloseable> held;

        private DeviceP(SparseRows p, int nSlices, int nHubs, DeviceBuffer meta, DeviceBuffer col, DeviceBuffer val,
                List<AutoCloseable> held) {
            this.p = p;
            this.nSlices = nSlices;
            this.nHubs = nHubs;
            this.meta = meta;
            this.col = col;
            this.val = val;
            this.held = held;
        }

        @Override
        public void close() {
            closeAll(held);
        }
    }

    /** P on {@code dev}, uploaded through stream {@code s} (synchronised before return when anything was copied). */
    static DeviceP deviceP(CudaDevice dev, SparseRows p, String callerKey, GpuStream s) {
        final String key = keyOf(p, callerKey);
        SellRows sell = null;
        int[] shape = SHAPES.get(key);
        if (shape == null) {
            sell = SellRows.layout(p);
            shape = new int[] {sell.entries, sell.meta.length, sell.nHubs};
            SHAPES.put(key, shape);
        }
        final long padded = shape[0];
        final int nSlices = (p.rows + SellRows.C - 1) / SellRows.C;
        final int nHubs = shape[2];
        final long metaBytes = 4L * shape[1];
        DeviceResidentCache cache = DeviceResidentCache.of(dev);
        List<AutoCloseable> held = new ArrayList<>();
        boolean ok = false;
        try {
            DeviceResidentCache.Lease lm = hold(held, cache.acquire(key + "meta", metaBytes));
            DeviceResidentCache.Lease lc = hold(held, cache.acquire(key + "col", Math.max(4L * padded, 8)));
            DeviceResidentCache.Lease lv = hold(held, cache.acquire(key + "val", Math.max(8L * padded, 8)));
            DeviceBuffer meta;
            DeviceBuffer col;
            DeviceBuffer val;
            if (lm == null || lc == null || lv == null) { // does not fit or being filled by another thread: private
                sell = sell != null ? sell : SellRows.layout(p);
                meta = hold(held, DeviceBuffer.allocate(dev, metaBytes));
                col = hold(held, DeviceBuffer.allocate(dev, Math.max(4L * padded, 8)));
                val = hold(held, DeviceBuffer.allocate(dev, Math.max(8L * padded, 8)));
                upload(sell, p, meta, col, val, true, true, true, s);
                s.synchronize("upload of t-SNE P (" + p.nnz() + " entries)");
            } else {
                meta = lm.buffer();
                col = lc.buffer();
                val = lv.buffer();
                if (!lm.wasPresent() || !lc.wasPresent() || !lv.wasPresent()) {
                    sell = sell != null ? sell : SellRows.layout(p);
                    upload(sell, p, meta, col, val, !lm.wasPresent(), !lc.wasPresent(), !lv.wasPresent(), s);
                    s.synchronize("upload of t-SNE P (" + p.nnz() + " entries)");
                    lm.markFilled();
                    lc.markFilled();
                    lv.markFilled();
                }
            }
            DeviceP d = new DeviceP(p, nSlices, nHubs, meta, col, val, held);
            ok = true;
            return d;
        } finally {
            if (!ok) {
                closeAll(held);
            }
        }
    }

    /**
     * Queues the attractive kernel: out (slice rows x dim; a {@link DeviceBuffer} or a {@link jcuda.driver.CUdeviceptr}
     * into one) from y (all n points x dim), both on the device.
     */
    static void launchAttractive(GpuStream s, DeviceP dp, int dim, double dof, DeviceBuffer y, Object out) {
        // hub blocks first: they run longest, so they start while the SELL blocks fill the rest of the device
        long blocks = (long) dp.nHubs + grid((long) dp.nSlices * SellRows.C);
        if (blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("attractive launch too large: " + blocks + " blocks");
        }
        KernelLauncher.launch(s, AttractiveForces.MODULE, "tsne_attr_sell_d" + dim, (int) blocks,
                BLOCK, 0, dp.meta, dp.nSlices, dp.nHubs, dp.val, dp.col, dp.p.rowOffset, y, dof, out);
    }

    /**
     * Queues the KL divergence's exact partial sums of P at the device positions y into acc (4 longs, added to:
     * {A lo, A hi, S lo, S hi}), the bits of {@link TsneKl#partial} (kernel tsne_kl_sell_d*).
     */
    static void launchKl(GpuStream s, DeviceP dp, int dim, double dof, DeviceBuffer y, DeviceBuffer acc) {
        long threads = (long) dp.nSlices * SellRows.C + dp.nHubs;
        KernelLauncher.launch(s, AttractiveForces.MODULE, "tsne_kl_sell_d" + dim, grid(threads), BLOCK, 0, dp.meta,
                dp.nSlices, dp.nHubs, dp.val, dp.col, dp.p.rowOffset, y, dof, TsneKl.MUL[0], TsneKl.MUL[1], acc);
    }

    static double[] attractive(CudaDevice dev, SparseRows p, String callerKey, double[] y, int dim, double dof) {
        double[] out = new double[p.rows * dim];
        try (GpuStream s = new GpuStream(dev);
             DeviceP dp = deviceP(dev, p, callerKey, s);
             KernelTimer timer = new KernelTimer(dev);
             ScratchBuffers.Lease yb = ScratchBuffers.borrow(dev, 8L * y.length);
             ScratchBuffers.Lease ob = ScratchBuffers.borrow(dev, 8L * out.length)) {
            yb.buffer().upload(y, s);
            timer.start(s);
            launchAttractive(s, dp, dim, dof, yb.buffer(), ob.buffer());
            timer.stop(s);
            ob.buffer().download(out, out.length, s);
            s.synchronize("t-SNE attractive term (rows " + p.rows + ", nnz " + p.nnz() + ", dim " + dim + ")");
            LAST_KERNEL_MS.get()[0] = timer.millis();
        }
        return out;
    }

    /**
     * Fills the chosen SELL arrays: meta from the host layout, col and val from P's CSR uploaded as it is and
     * scattered into the layout on the device (tsne_sell_fill; padding zeroed first, as SellRows.of leaves it), so
     * the padded copy is never built on the host. Synchronises before the CSR copies are freed.
     */
    private static void upload(SellRows sell, SparseRows p, DeviceBuffer meta, DeviceBuffer col, DeviceBuffer val,
            boolean m, boolean c, boolean v, GpuStream s) {
        if (m) {
            meta.upload(sell.meta, s);
        }
        if (!(c || v) || sell.entries == 0) {
            return;
        }
        CudaDevice dev = s.device();
        try (DeviceBuffer rowPtr = DeviceBuffer.allocate(dev, 4L * (p.rows + 1));
             DeviceBuffer pcol = DeviceBuffer.allocate(dev, c ? Math.max(4L * p.nnz(), 8) : 8);
             DeviceBuffer pval = DeviceBuffer.allocate(dev, v ? Math.max(8L * p.nnz(), 8) : 8)) {
            rowPtr.upload(p.rowPtr, 0, p.rows + 1, 0, s);
            if (c && p.nnz() > 0) {
                pcol.upload(p.col, 0, p.nnz(), 0, s);
                col.zero(s);
            }
            if (v && p.nnz() > 0) {
                pval.upload(p.val, 0, p.nnz(), 0, s);
                val.zero(s);
            }
            long threads = (long) sell.nSlices * SellRows.C + sell.nHubs;
            KernelLauncher.launch(s, AttractiveForces.MODULE, "tsne_sell_fill", grid(threads), BLOCK, 0, meta,
                    sell.nSlices, sell.nHubs, rowPtr, pcol, pval, c ? (Object) col : (Object) 0L,
                    v ? (Object) val : (Object) 0L);
            s.synchronize("t-SNE P into the SELL layout (" + p.nnz() + " entries)");
        }
    }

    private static void closeAll(List<AutoCloseable> held) {
        for (AutoCloseable c : held) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        held.clear();
    }

    private static <T extends AutoCloseable> T hold(List<AutoCloseable> held, T c) {
        if (c != null) {
            held.add(c);
        }
        return c;
    }

    private static int grid(long items) {
        return (int) Math.max(1, (items + BLOCK - 1) / BLOCK);
    }
}
