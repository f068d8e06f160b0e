package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.cuda.KernelTimer;

/**
 * GPU isotonic regression (weighted least squares) of one partition's pooled points through the
 * {@code isotonic} module; the CPU twins are {@link IsotonicCpu#pavaMerge} and {@link IsotonicCpu#mls}, which
 * give the same blocks and bits (all comparisons are exact, see {@link L2Blocks}).
 *
 * <p><b>PAVA-merge</b> (default): chunks of {@code chunk} points are solved by PAVA in parallel, one GPU thread
 * per chunk (PAVA: Ayer, Brunk, Ewing, Reid and Silverman, Ann. Math. Statist. 26, 1955), then adjacent chunk
 * solutions are merged in log2(chunks) rounds by the decomposition theorem of PAVA (PAVA applied to the
 * concatenated solutions of two adjacent ranges solves their union): one thread per pair pools A's last blocks
 * with B's first while they violate, then a device-wide copy makes each merged group contiguous. Work O(n) per
 * round, O(n log(n/chunk)) in all; the merge of one pair is serial in the number of blocks it pools.
 *
 * <p><b>MLS</b> (on request): exact prefix sums, then one thread per i finds the largest j >= i minimising the
 * mean of points i..j (O(n - i), shared-memory tiles), then a max-scan of those j marks the blocks (minimum
 * lower sets: Best and Chakravarti, Math. Programming 47, 1990; lower sets that overlap are nested, so the
 * block of i is the one of the first i whose lower set reaches it). O(n^2) work: fast only for small n.
 *
 * <p>{@link IsoPoolGpu} sorts and pools raw rows on the device and runs PAVA-merge on the resident sums.
 */
final class IsotonicGpu {
    public static final String MODULE = "isotonic";
    public static final String PROBE_KERNEL = "iso_chunk_pava";
    /** Points per chunk of the first PAVA round (one GPU thread each). */
    public static final int DEFAULT_CHUNK = 256;
    /** MLS is O(n^2): partitions with more distinct features than this are refused. */
    public static final int MLS_MAX_POINTS = 1 << 20;
    static final int CHUNK_BLOCK = 128;
    static final int COPY_BLOCK = 256;
    static final int MLS_BLOCK = 256;
    static final int SCAN_THREADS = 1024;

    /** Dynamic shared memory of iso_mls_argmin for blocks of {@code threads}: one 32-byte record of z per thread. */
    static int argminSharedBytes(int threads) {
        return 32 * threads;
    }

    private IsotonicGpu() {
    }

    /**
     * PAVA-merge of {@code p} on {@code dev}.
     *
     * @param kernelMillis if not null, element 0 receives the device time of the kernels alone (CUDA events:
     *                     no transfers)
     */
    public static L2Blocks pavaMerge(CudaDevice dev, IsoPoints p, int chunk, double[] kernelMillis) {
        IsotonicConfig.checkChunk(chunk); // the setting's one rule
        final int n = p.n;
        if (n == 0) {
            return L2Blocks.EMPTY;
        }
        long[] plan = DeviceMemoryBudget.chunks("isotonic PAVA-merge", n, BUDGET_FIXED_BYTES, BUDGET_BYTES_PER_POINT,
                DeviceMemoryBudget.bytes());
        if (plan.length > 2) {
            return inChunks(p, plan, part -> pavaMerge(dev, part, chunk, null));
        }
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer acc = DeviceBuffer.allocate(dev, 32L * n);
             KernelTimer ev = kernelMillis != null ? new KernelTimer(dev) : null) {
            acc.upload(p.acc, 0, 4 * n, 0, s);
            if (ev != null) {
                ev.start(s);
            }
            return pavaMergeResident(dev, s, acc, n, chunk, ev, kernelMillis, p, null);
        }
    }

    /** Device bytes per pooled point of a PAVA-merge (sums, their copy, block starts, counts; rounded up). */
    static final long BUDGET_BYTES_PER_POINT = 96;
    /** Device bytes of a PAVA-merge that do not grow with its points (flags, counters). */
    static final long BUDGET_FIXED_BYTES = 4096;

    /**
     * PAVA-merge over the device-memory budget: the points' contiguous ranges of the planner's {@code plan}
     * ({@link DeviceMemoryBudget#chunks}) are solved on the device one after the other and their solutions combined
     * by {@link L2Blocks#merge} (PAVA's decomposition theorem with exact comparisons, the combiner of partitions), so
     * the blocks and their bits are those of one PAVA-merge of all points.
     */
    static L2Blocks inChunks(IsoPoints p, long[] plan, java.util.function.Function<IsoPoints, L2Blocks> solve) {
        L2Blocks out = L2Blocks.EMPTY;
        for (int i = 0; i + 1 < plan.length; i++) {
            int a = (int) plan[i];
            int b = (int) plan[i + 1];
            IsoPoints part = IsoPoints.ofSums(java.util.Arrays.copyOfRange(p.x, a, b),
                    java.util.Arrays.copyOfRange(p.acc, 4 * a, 4 * b));
            out = L2Blocks.merge(out, solve.apply(part));
        }
        return out;
    }

    /**
     * PAVA-merge of {@code n} pooled points already on the device in {@code acc0} (overwritten). The block
     * bounds come from {@code p.x} or, when {@code p} is null, from the device-resident distinct features
     * {@code ux}. If {@code ev} is not null it was started by the caller; it is stopped after the last kernel
     * and its time goes to {@code kernelMillis[0]}.
     */
    static L2Blocks pavaMergeResident(CudaDevice dev, GpuStream s, DeviceBuffer acc0, int n, int chunk,
                                      KernelTimer ev, double[] kernelMillis, IsoPoints p, DeviceBuffer ux) {
        final int chunks = (int) ((n + (long) chunk - 1) / chunk);
        final int pairsMax = (chunks + 1) / 2;
        try (DeviceBuffer acc1 = DeviceBuffer.allocate(dev, chunks > 1 ? 32L * n : 8);
             DeviceBuffer st0 = DeviceBuffer.allocate(dev, 4L * n);
             DeviceBuffer st1 = DeviceBuffer.allocate(dev, chunks > 1 ? 4L * n : 8);
             DeviceBuffer cnt0 = DeviceBuffer.allocate(dev, 4L * chunks);
             DeviceBuffer cnt1 = DeviceBuffer.allocate(dev, 4L * pairsMax);
             DeviceBuffer info = DeviceBuffer.allocate(dev, 12L * pairsMax)) {
            KernelLauncher.launch(s, MODULE, "iso_chunk_pava", grid(chunks, CHUNK_BLOCK), CHUNK_BLOCK, 0,
                    acc0, st0, n, chunk, chunks, cnt0);
            DeviceBuffer acc = acc0;
            DeviceBuffer accNext = acc1;
            DeviceBuffer st = st0;
            DeviceBuffer stNext = st1;
            DeviceBuffer cnt = cnt0;
            DeviceBuffer cntNext = cnt1;
            long region = chunk;
            int groups = chunks;
            int copyGrid = Math.min(grid(n, COPY_BLOCK), 32 * dev.multiprocessors());
            while (groups > 1) {
                int pairs = (groups + 1) / 2;
                KernelLauncher.launch(s, MODULE, "iso_merge_pairs", grid(pairs, CHUNK_BLOCK), CHUNK_BLOCK, 0,
                        acc, st, n, region, groups, cnt, cntNext, info);
                KernelLauncher.launch(s, MODULE, "iso_compact", copyGrid, COPY_BLOCK, 0,
                        acc, st, accNext, stNext, n, region, info);
                DeviceBuffer t = acc;
                acc = accNext;
                accNext = t;
                t = st;
                st = stNext;
                stNext = t;
                t = cnt;
                cnt = cntNext;
                cntNext = t;
                region *= 2;
                groups = pairs;
            }
            if (ev != null) {
                ev.stop(s);
            }
            int[] m = new int[1];
            cnt.download(m, 1, s);
            s.synchronize("isotonic PAVA-merge (n=" + n + ", chunk=" + chunk + ")");
            if (ev != null) {
                kernelMillis[0] = ev.millis();
            }
            long[] out = new long[4 * m[0]];
            acc.download(out, out.length, s);
            if (p != null) {
                int[] start = new int[m[0]];
                st.download(start, m[0], s);
                s.synchronize("download of isotonic blocks (" + m[0] + ")");
                return L2Blocks.fromStarts(p, start, out, m[0]);
            }
            double[] xs = new double[m[0]];
            double[] xe = new double[m[0]];
            try (DeviceBuffer xsD = DeviceBuffer.ofDoubles(dev, m[0]);
                 DeviceBuffer xeD = DeviceBuffer.ofDoubles(dev, m[0])) {
                KernelLauncher.launch(s, MODULE, "iso_sp_bounds", grid(m[0], COPY_BLOCK), COPY_BLOCK, 0,
                        ux, st, m[0], n, xsD, xeD);
                xsD.download(xs, m[0], s);
                xeD.download(xe, m[0], s);
                s.synchronize("download of isotonic blocks (" + m[0] + ")");
            }
            return new L2Blocks(m[0], xs, xe, out);
        }
    }

    /** Parallel MLS of {@code p} on {@code dev} (see the class comment); kernelMillis as {@link #pavaMerge}. */
    public static L2Blocks mls(CudaDevice dev, IsoPoints p, double[] kernelMillis) {
        final int n = p.n;
        if (n == 0) {
            return L2Blocks.EMPTY;
        }
        checkMlsSize(n);
        // z holds n + 1 prefix sums; over the budget, chunks merged exactly as for PAVA-merge (the solution is unique)
        long[] plan = DeviceMemoryBudget.chunks("isotonic MLS", n, 32 + BUDGET_FIXED_BYTES, 104,
                DeviceMemoryBudget.bytes());
        if (plan.length > 2) {
            return inChunks(p, plan, part -> mls(dev, part, null));
        }
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer acc = DeviceBuffer.allocate(dev, 32L * n);
             DeviceBuffer z = DeviceBuffer.allocate(dev, 32L * (n + 1));
             DeviceBuffer jstar = DeviceBuffer.allocate(dev, 4L * n);
             DeviceBuffer out = DeviceBuffer.allocate(dev, 32L * n);
             DeviceBuffer starts = DeviceBuffer.allocate(dev, 4L * n);
             DeviceBuffer count = DeviceBuffer.allocate(dev, 4);
             KernelTimer ev = kernelMillis != null ? new KernelTimer(dev) : null) {
            acc.upload(p.acc, 0, 4 * n, 0, s);
            if (ev != null) {
                ev.start(s);
            }
            KernelLauncher.launch(s, MODULE, "iso_mls_prefix", 1, SCAN_THREADS, 0, acc, n, z);
            KernelLauncher.launch(s, MODULE, "iso_mls_argmin", grid(n, MLS_BLOCK), MLS_BLOCK,
                    argminSharedBytes(MLS_BLOCK), z, n, jstar);
            KernelLauncher.launch(s, MODULE, "iso_mls_blocks", 1, SCAN_THREADS, 0, z, jstar, n, out, starts, count);
            if (ev != null) {
                ev.stop(s);
            }
            int[] m = new int[1];
            count.download(m, 1, s);
            s.synchronize("isotonic MLS (n=" + n + ")");
            if (ev != null) {
                kernelMillis[0] = ev.millis();
            }
            long[] sums = new long[4 * m[0]];
            int[] start = new int[m[0]];
            out.download(sums, sums.length, s);
            starts.download(start, m[0], s);
            s.synchronize("download of isotonic MLS blocks (" + m[0] + ")");
            return L2Blocks.fromStarts(p, start, sums, m[0]);
        }
    }

    static void checkMlsSize(int n) {
        if (n > MLS_MAX_POINTS) {
            throw new IllegalArgumentException("algorithm=mls is O(n^2) and accepts at most " + MLS_MAX_POINTS
                    + " distinct features per partition, got " + n + "; use algorithm=pava or more partitions");
        }
    }

    private static int grid(long items, int block) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (items + block - 1) / block));
    }
}
