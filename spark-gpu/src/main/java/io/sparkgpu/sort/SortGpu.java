package io.sparkgpu.sort;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.cuda.KernelTimer;
import java.util.Arrays;
import java.util.Locale;
import jcuda.Pointer;

/**
 * GPU implementation of {@link SortCpu} through the {@code sort} module ({@code sort.cu}; its header describes the
 * kernels). Outputs equal the twin's exactly: the histogram and the sorted keys are determined by the counts, and
 * the stable order is the unique stable permutation.
 *
 * <p>Keys-only ({@link #histogram}, {@link #sortKeys}): the keys are copied in chunks of {@link #transferChunk}
 * elements into one device staging buffer and added to the histogram chunk by chunk; the pyramid is built in one
 * or two launches; the sorted keys are generated chunk by chunk into the same staging buffer and copied back. Device
 * memory: the pyramid (8 bytes per key value of the padded range) plus one chunk, whatever n is. Key ranges above
 * {@link #KEYS_RADIX_ABOVE} whose keys are {@link #spread} are sorted instead by the stable order's onesweep passes
 * without indices (keys resident: 8 bytes a key), unless the keys do not fit on the device.
 *
 * <p>Stable order ({@link #order}, {@link #orderLong}): LSD passes of at most 8 bits ({@link #passBits}) over keys
 * resident on the device (16 bytes per element for two or more passes; 8, or 12 with long indices, for one). When
 * that does not fit ({@link #residentCapacity}), the key range is cut into windows on the host ({@link
 * SortCpu#windows}): a stable host partition groups the indices by window, each window of several keys is sorted
 * on the device (keys rebased to the window), and a window of a single key is already in order.
 *
 * <p>Keys outside [0, m) are counted by no kernel and written nowhere outside the buffers; the lowest offending
 * index is recorded on the device, and the call throws {@link SortCpu#badKey}'s error, the same as the twin's.
 */
final class SortGpu {
    public static final String MODULE = "sort";
    public static final String PROBE_KERNEL = "sort_hist_global";

    static final int HIST_THREADS = 512;
    static final int PYR_SEG_LOG = 12;
    static final int OUT_THREADS = 256;
    static final int CHUNK = 4096;
    static final int SORT_THREADS = 256;
    static final int TILE = 4096;
    static final int SCAN_THREADS = 256;
    static final int MAX_PASS_BITS = 8;
    static final int NO_BAD = Integer.MAX_VALUE;
    /** Largest key range histogrammed in shared memory (128 KiB per copy); larger ranges use global atomics. */
    static final int SHARED_HIST_MAX_BINS = 1 << 15;
    /** Shared memory the privatised histogram copies of one block aim at. */
    static final int SHARED_HIST_TARGET_BYTES = 64 << 10;
    static final int MAX_COPIES = 8;
    /** Device memory left free next to a resident stable sort. */
    static final long MEMORY_RESERVE = 256L << 20;

    /** Elements per host-device copy and per keys-only launch group (tests lower it to exercise chunking). */
    static volatile int transferChunk = Integer.getInteger("sparkgpu.sort.chunk", 1 << 26);
    /** Most elements a stable sort keeps on the device; below 0: from free memory (tests lower it). */
    static volatile long residentLimit = Long.getLong("sparkgpu.sort.maxResident", -1L);
    /**
     * Output kernel of the keys-only sort: auto, runs, descent or radix (sparkgpu.sort.keysKernel; radix: the
     * onesweep passes without indices, for two or more passes, else the automatic pyramid kernel).
     */
    static volatile String keysKernel = System.getProperty("sparkgpu.sort.keysKernel", "auto");
    /**
     * Kernels of a stable sort of two or more passes: onesweep (one histogram read for every pass, then one kernel
     * a pass with a decoupled look-back; the default) or classic (count, row scan and scatter a pass);
     * sparkgpu.sort.stableKernel. One pass always runs the classic kernels. Both give the same bits.
     */
    static volatile String stableKernel = System.getProperty("sparkgpu.sort.stableKernel", "onesweep");
    /** Passes of one stable sort that the onesweep histogram array holds (include/layout/sort.cuh OS_MAX_PASSES). */
    static final int OS_MAX_PASSES = 8;
    /** Blocks a sort_os_hist launch runs per SM (a grid-stride loop over the keys). */
    static final int OS_HIST_BLOCKS_PER_SM = 4;
    /** {@link #outputKernel}'s name for the keys-only sort by radix passes. */
    static final String RADIX_KEYS = "radix";
    /**
     * Key ranges above this sort keys-only by radix passes under keysKernel=auto when the keys are spread ({@link
     * #spread}): there the pyramid's global histogram over many touched bins and its 8 bytes a key value cost more
     * than three passes; keys concentrated on fewer values keep the pyramid, which is then faster (BENCHMARKS.md,
     * 2026-12-07: at 2^24, uniform 20 -> 40 G keys/s; Zipf 1.2 93 by the pyramid, 42 by radix).
     */
    static final int KEYS_RADIX_ABOVE = 1 << 20;
    /** Keys {@link #spread} samples. */
    static final int SPREAD_SAMPLE = 1024;

    private SortGpu() {
    }

    // ------------------------------------------------------------------------------------------ plans

    /** L with 2^L the smallest power of two >= m (the pyramid's leaf count). */
    static int levels(int m) {
        return SortCpu.keyBits(m);
    }

    /** Pyramid entries for 2^L leaves: 2^(L+1) - 1. */
    static long pyramidEntries(int L) {
        return (2L << L) - 1;
    }

    /** Bits of each LSD pass of the stable order, lowest digit first: as even as possible, at most 8 each. */
    public static int[] passBits(int m) {
        int bits = Math.max(1, SortCpu.keyBits(m));
        int passes = (bits + MAX_PASS_BITS - 1) / MAX_PASS_BITS;
        int[] out = new int[passes];
        for (int p = 0; p < passes; p++) {
            out[p] = bits / passes + (p < bits % passes ? 1 : 0);
        }
        return out;
    }

    /** Radix width of the kernels running a pass of {@code bits} bits (sort_count_r4/_r8, sort_scatter_r4/_r8). */
    static int radixOf(int bits) {
        return bits <= 4 ? 4 : 8;
    }

    static int tiles(int n) {
        return (int) ((n + (long) TILE - 1) / TILE);
    }

    /** Device bytes per element of a resident stable sort. */
    static long bytesPerElement(int passes, boolean longIndex) {
        return passes > 1 ? 16 : (longIndex ? 12 : 8);
    }

    /** Device bytes per key of the keys-only radix passes ({@link Stable#keysOnly}: keys in and out, no indices). */
    static final long KEYS_ONLY_BYTES = 8;

    /** Elements a resident stable sort may hold on {@code dev} now. */
    static long residentCapacity(CudaDevice dev, int passes, boolean longIndex) {
        return residentCapacity(dev, bytesPerElement(passes, longIndex));
    }

    /** Elements of {@code bytes} device bytes each a resident sort may hold on {@code dev} now. */
    static long residentCapacity(CudaDevice dev, long bytes) {
        long limit = residentLimit;
        long free = dev.memoryInfo()[0];
        long cap = Math.max(0, (long) (0.9 * (free - MEMORY_RESERVE))) / (bytes + 1);
        cap = Math.min(cap, budgetCapacity(bytes, DeviceMemoryBudget.bytes()));
        return limit >= 0 ? Math.min(limit, cap) : cap;
    }

    /**
     * Elements a resident stable sort may hold under the device-memory budget (the same bytes per element as
     * {@link #residentCapacity}); above it the stable order runs in key windows ({@code windows}: exact, same bits)
     * and the wide-key order on the CPU twin.
     */
    static long budgetCapacity(int passes, boolean longIndex, long budget) {
        return budgetCapacity(bytesPerElement(passes, longIndex), budget);
    }

    private static long budgetCapacity(long bytes, long budget) {
        return budget == DeviceMemoryBudget.UNLIMITED ? Long.MAX_VALUE : budget / (bytes + 1);
    }

    /** The keys-only output kernel for n keys in [0, m). */
    static String outputKernel(int m, int n) {
        return outputKernel(m, n, null);
    }

    /**
     * Whether at least three quarters of {@link #SPREAD_SAMPLE} keys taken at a fixed stride are distinct: keys
     * spread over many values, for which the radix passes beat the pyramid's histogram at large key ranges.
     */
    static boolean spread(int[] keys) {
        int n = keys.length;
        int c = Math.min(n, SPREAD_SAMPLE);
        if (c == 0) {
            return true;
        }
        int[] sample = new int[c];
        for (int i = 0; i < c; i++) {
            sample[i] = keys[(int) ((long) i * n / c)];
        }
        Arrays.sort(sample);
        int distinct = 1;
        for (int i = 1; i < c; i++) {
            if (sample[i] != sample[i - 1]) {
                distinct++;
            }
        }
        return 4L * distinct >= 3L * c;
    }

    /** The keys-only output kernel for these keys in [0, m) ({@code keys} null: taken as {@link #spread}). */
    static String outputKernel(int m, int n, int[] keys) {
        String k = keysKernel == null ? "auto" : keysKernel.trim().toLowerCase(Locale.ROOT);
        switch (k) {
            case "runs":
                return "sort_keys_runs";
            case "descent":
                return "sort_keys_descent";
            case "radix":
                return passBits(m).length > 1 ? RADIX_KEYS : pyramidKernel(m, n);
            case "auto":
                return m > KEYS_RADIX_ABOVE && (keys == null || spread(keys)) ? RADIX_KEYS : pyramidKernel(m, n);
            default:
                throw new IllegalArgumentException(
                        "sparkgpu.sort.keysKernel must be auto, runs, descent or radix, got '" + keysKernel + "'");
        }
    }

    /** The pyramid's output kernel for n keys in [0, m). */
    static String pyramidKernel(int m, int n) {
        // runs walks every key of its chunk (4m/n windows of 1024 per chunk): fine unless keys are sparse
        return (long) m <= 16L * Math.max(1, n) ? "sort_keys_runs" : "sort_keys_descent";
    }

    /** Whether a stable sort with these passes runs the onesweep kernels ({@link #stableKernel}). */
    static boolean onesweep(int[] bits) {
        return onesweep(bits, stableKernel);
    }

    /** Whether a stable sort with these passes runs the onesweep kernels when {@code kernel} is asked for. */
    static boolean onesweep(int[] bits, String kernel) {
        String k = kernel == null ? "onesweep" : kernel.trim().toLowerCase(Locale.ROOT);
        switch (k) {
            case "onesweep":
                return bits.length > 1 && bits.length <= OS_MAX_PASSES;
            case "classic":
                return false;
            default:
                throw new IllegalArgumentException("sparkgpu.sort.stableKernel must be onesweep or classic, got '"
                        + kernel + "'");
        }
    }

    /** The bits of passes [from, from + count) packed a nibble each, pass from lowest (sort_os_hist). */
    static int packBits(int[] bits, int from, int count) {
        if (count > 4) {
            throw new IllegalArgumentException("one histogram read covers at most 4 passes, got " + count);
        }
        int packed = 0;
        for (int q = 0; q < count; q++) {
            packed |= bits[from + q] << (4 * q);
        }
        return packed;
    }

    /** Whether the histogram of m bins is privatised in shared memory, and with how many copies (0: global). */
    static int sharedCopies(int m, int maxSharedBytes) {
        if (m > SHARED_HIST_MAX_BINS || 4L * m > maxSharedBytes) {
            return 0;
        }
        int copies = Math.max(1, Math.min(MAX_COPIES, SHARED_HIST_TARGET_BYTES / (4 * m)));
        while (copies > 1 && 4L * m * copies > maxSharedBytes) {
            copies--;
        }
        return copies;
    }

    // ------------------------------------------------------------------------------------------ keys only

    /** Device state of a keys-only sort: the pyramid (level 0 = histogram) and the bad-key slot. */
    static final class Pyramid implements AutoCloseable {
        final CudaDevice dev;
        final GpuStream s;
        final int m;
        final int L;
        final DeviceBuffer pyr;
        final DeviceBuffer bad;
        private final int copies;
        private final String histKernel;
        private final int histGrid;

        Pyramid(CudaDevice dev, GpuStream s, int m) {
            this.dev = dev;
            this.s = s;
            this.m = m;
            this.L = levels(m);
            copies = sharedCopies(m, dev.maxSharedMemoryOptin());
            histKernel = copies > 0 ? "sort_hist_shared" : "sort_hist_global";
            int shared = copies * m * 4;
            histGrid = KernelLauncher.residentBlocks(dev, MODULE, histKernel, HIST_THREADS, shared);
            DeviceBuffer p = DeviceBuffer.allocate(dev, 4 * pyramidEntries(L));
            try {
                bad = DeviceBuffer.allocate(dev, 4);
            } catch (RuntimeException e) {
                p.close();
                throw e;
            }
            pyr = p;
        }

        /** Zeroes the histogram and the bad-key slot. */
        void reset() {
            zero();
            bad.upload(new int[] {NO_BAD}, s);
        }

        /** Zeroes the histogram (a device memset). */
        void zero() {
            pyr.zero(s);
        }

        /** Adds keys[0, n) of {@code keys} (a device array; element i is input index base + i). */
        void add(Pointer keys, int n, int base) {
            if (n == 0) {
                return;
            }
            long vec = Math.max(1, n / 4);
            int grid = (int) Math.max(1, Math.min(histGrid, (vec + HIST_THREADS - 1) / HIST_THREADS));
            if (copies > 0) {
                KernelLauncher.launch(s, MODULE, histKernel, grid, HIST_THREADS, copies * m * 4, keys, n, m, L, copies,
                        pyr, bad, base);
            } else {
                KernelLauncher.launch(s, MODULE, histKernel, grid, HIST_THREADS, 0, keys, n, m, L, pyr, bad, base);
            }
        }

        /** Levels 1..L above the histogram: one launch for L <= 12, two above. */
        void build() {
            if (L == 0) {
                return;
            }
            if (L <= PYR_SEG_LOG) {
                KernelLauncher.launch(s, MODULE, "sort_pyramid", 1, 512, 0, pyr, L, 0, L);
            } else {
                KernelLauncher.launch(s, MODULE, "sort_pyramid", 1 << (L - PYR_SEG_LOG), 512, 0, pyr, L, 0, PYR_SEG_LOG);
                KernelLauncher.launch(s, MODULE, "sort_pyramid", 1, 512, 0, pyr, L, PYR_SEG_LOG, L - PYR_SEG_LOG);
            }
        }

        /** Sorted keys at positions [p0, p0 + count) into out[0, count) with {@code kernel}. */
        void output(String kernel, int p0, int count, Pointer out) {
            if (count == 0) {
                return;
            }
            int grid = (int) ((count + (long) CHUNK - 1) / CHUNK);
            KernelLauncher.launch(s, MODULE, kernel, grid, OUT_THREADS, 0, pyr, L, p0, count, out);
        }

        /** Throws the twin's error if a key was outside [0, m) (synchronises the stream). */
        void checkBad(int[] keys, String what) {
            int[] b = new int[1];
            bad.download(b, 1, s);
            s.synchronize(what);
            if (b[0] != NO_BAD) {
                throw SortCpu.badKey(keys, b[0], m);
            }
        }

        @Override
        public void close() {
            pyr.close();
            bad.close();
        }
    }

    /** histogram[k] = number of keys equal to k (same as {@link SortCpu#histogram}). */
    public static int[] histogram(CudaDevice dev, int[] keys, int m) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        if (keys.length == 0) {
            return new int[m];
        }
        try (GpuStream s = new GpuStream(dev); Pyramid py = new Pyramid(dev, s, m);
             DeviceBuffer stage = count(py, keys)) {
            int[] h = new int[m];
            py.pyr.download(h, 0, m, 0, s);
            s.synchronize("download of a histogram of " + m + " bins");
            return h;
        }
    }

    /** The keys in ascending order (same as {@link SortCpu#sortKeys}). */
    public static int[] sortKeys(CudaDevice dev, int[] keys, int m) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        int n = keys.length;
        if (n == 0) {
            return new int[0];
        }
        String kernel = outputKernel(m, n, keys);
        if (kernel.equals(RADIX_KEYS)) {
            if (n <= residentCapacity(dev, KEYS_ONLY_BYTES)) {
                int[] out = new int[n];
                try (GpuStream s = new GpuStream(dev); Stable st = Stable.keysOnly(dev, s, n, m)) {
                    st.upload(keys, 0, n);
                    st.run(0);
                    st.checkBad(keys);
                    st.download(out, null, 0);
                    s.synchronize("keys-only sort of " + n + " keys in [0, " + m + ") (radix passes)");
                }
                return out;
            }
            kernel = pyramidKernel(m, n); // the pyramid streams keys that do not fit on the device at once
        }
        try (GpuStream s = new GpuStream(dev); Pyramid py = new Pyramid(dev, s, m);
             DeviceBuffer stage = count(py, keys)) {
            py.build();
            int[] out = new int[n];
            int chunk = chunk(n, m, DeviceMemoryBudget.bytes());
            for (int p = 0; p < n; p += chunk) {
                int c = Math.min(chunk, n - p);
                py.output(kernel, p, c, stage.pointer());
                stage.download(out, p, c, 0, s);
            }
            s.synchronize("keys-only sort of " + n + " keys in [0, " + m + ") (" + kernel + ")");
            return out;
        }
    }

    private static int chunk(int n) {
        return chunk(n, Integer.MAX_VALUE, DeviceMemoryBudget.UNLIMITED);
    }

    /**
     * Keys per copy and launch group of a keys-only sort of n keys in [0, m): {@link #transferChunk}, and under the
     * device-memory budget the planner's chunk next to the pyramid ({@link DeviceMemoryBudget#itemsPerChunk}; a
     * pyramid over the budget is a CudaException, so the policy falls back or reports). The histogram is exact
     * integer counts: any chunking, same bits.
     */
    static int chunk(int n, int m, long budget) {
        int c = Math.max(CHUNK, Math.min(n, transferChunk));
        if (budget == DeviceMemoryBudget.UNLIMITED || n == 0) {
            return c;
        }
        long pyramid = 4 * pyramidEntries(levels(m)) + 4;
        return Math.min(c, DeviceMemoryBudget.intItemsPerChunk("a keys-only sort of " + n + " keys in [0, " + m + ")",
                n, pyramid, 4, budget));
    }

    /** Histograms keys through a staging buffer of one chunk, checks the keys; returns the staging buffer. */
    private static DeviceBuffer count(Pyramid py, int[] keys) {
        int n = keys.length;
        int chunk = chunk(n, py.m, DeviceMemoryBudget.bytes());
        DeviceBuffer stage = DeviceBuffer.allocate(py.dev, 4L * chunk);
        try {
            py.reset();
            for (int b = 0; b < n; b += chunk) {
                int c = Math.min(chunk, n - b);
                stage.upload(keys, b, c, 0, py.s);
                py.add(stage.pointer(), c, b);
            }
            py.checkBad(keys, "histogram of " + n + " keys in [0, " + py.m + ")");
            return stage;
        } catch (RuntimeException e) {
            stage.close();
            throw e;
        }
    }

    // ------------------------------------------------------------------------------------------ stable order

    /** The stable sorting permutation (same as {@link SortCpu#order}). */
    public static int[] order(CudaDevice dev, int[] keys, int m) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        int[] out = new int[keys.length];
        stable(dev, keys, m, out, null, 0);
        return out;
    }

    /** The stable sorting permutation as first + index (same as {@link SortCpu#orderLong}). */
    public static long[] orderLong(CudaDevice dev, int[] keys, int m, long first) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        SortCpu.checkFirst(first, keys.length);
        long[] out = new long[keys.length];
        stable(dev, keys, m, null, out, first);
        return out;
    }

    private static void stable(CudaDevice dev, int[] keys, int m, int[] out, long[] outLong, long first) {
        int n = keys.length;
        if (n == 0) {
            return;
        }
        int passes = passBits(m).length;
        long cap = residentCapacity(dev, passes, outLong != null);
        if (n <= cap) {
            try (GpuStream s = new GpuStream(dev); Stable st = new Stable(dev, s, n, m, outLong != null)) {
                st.upload(keys, 0, n);
                st.run(first);
                st.checkBad(keys);
                st.download(out, outLong, 0);
                s.synchronize("stable order of " + n + " keys in [0, " + m + ")");
            }
            return;
        }
        windows(dev, keys, m, out, outLong, first, Math.max(1, cap));
    }

    /**
     * The stable order when the keys do not fit on the device at once: key windows of at most {@code cap} elements
     * (or one key) from the host histogram, a stable host partition of the indices by window, then per window of
     * several keys a device sort of its keys rebased to the window, mapped back through the partition.
     */
    private static void windows(CudaDevice dev, int[] keys, int m, int[] out, long[] outLong, long first, long cap) {
        int n = keys.length;
        int threads = SortCpu.defaultThreads();
        int[] hist = SortCpu.counts(keys, m, threads); // also checks the keys
        int[] bounds = SortCpu.windows(hist, cap);
        int w = bounds.length - 1;
        int[] start = new int[w + 1];
        int[] byWindow = SortCpu.partitionByWindow(keys, bounds, start, threads);
        for (int q = 0; q < w; q++) {
            int a = start[q];
            int len = start[q + 1] - a;
            int ka = bounds[q];
            int span = bounds[q + 1] - ka;
            if (len == 0) {
                continue;
            }
            if (span == 1) { // one key: the partition already lists its indices in order
                for (int j = 0; j < len; j++) {
                    put(out, outLong, a + j, first, byWindow[a + j]);
                }
                continue;
            }
            int[] sub = new int[len];
            for (int j = 0; j < len; j++) {
                sub[j] = keys[byWindow[a + j]] - ka;
            }
            int[] local = new int[len];
            try (GpuStream s = new GpuStream(dev); Stable st = new Stable(dev, s, len, span, false)) {
                st.upload(sub, 0, len);
                st.run(0);
                st.download(local, null, 0);
                s.synchronize("stable order of key window [" + ka + ", " + bounds[q + 1] + ") (" + len + " keys)");
            }
            for (int j = 0; j < len; j++) {
                put(out, outLong, a + j, first, byWindow[a + local[j]]);
            }
        }
    }

    private static void put(int[] out, long[] outLong, int pos, long first, int idx) {
        if (out != null) {
            out[pos] = idx;
        } else {
            outLong[pos] = first + idx;
        }
    }

    // ------------------------------------------------------------------------------------------ wide keys

    /**
     * The stable order of unsigned keys of at most {@code bits} bits (same as {@link SortCpu#orderWide}): LSD
     * passes of at most 8 bits over the low 32-bit words with the stable-pass kernels, then (bits > 32) the high
     * words gathered into that order ({@code sort_gather}) and sorted by further passes that carry the indices.
     * Resident only (16 bytes per element, 8 for one pass): input that does not fit throws a {@link CudaException}
     * (with {@code auto}, the CPU twin then runs).
     */
    public static int[] orderWide(CudaDevice dev, long[] keys, int bits) {
        SortCpu.checkWideKeys(keys, bits);
        int n = keys.length;
        int[] out = new int[n];
        if (n == 0) {
            return out;
        }
        int[] low = SortCpu.splitBits(Math.min(bits, 32), MAX_PASS_BITS);
        int[] high = bits > 32 ? SortCpu.splitBits(bits - 32, MAX_PASS_BITS) : new int[0];
        int[] all = new int[low.length + high.length];
        System.arraycopy(low, 0, all, 0, low.length);
        System.arraycopy(high, 0, all, low.length, high.length);
        long cap = residentCapacity(dev, all.length, false);
        if (n > cap) {
            throw new CudaException("stable order of " + n + " wide keys needs " + bytesPerElement(all.length, false)
                    + " bytes per key on the device; room for " + cap + " keys (free memory, and the budget "
                    + DeviceMemoryBudget.KEY + "=" + DeviceMemoryBudget.describe(DeviceMemoryBudget.bytes()) + ")");
        }
        int[] lo = new int[n];
        for (int i = 0; i < n; i++) {
            lo[i] = (int) keys[i];
        }
        int[] hi = null;
        if (bits > 32) {
            hi = new int[n];
            for (int i = 0; i < n; i++) {
                hi[i] = (int) (keys[i] >>> 32);
            }
        }
        try (GpuStream s = new GpuStream(dev); Stable st = new Stable(dev, s, n, 0, false, all, high.length)) {
            st.upload(lo, 0, n);
            st.run(0, hi);
            st.download(out, null, 0);
            s.synchronize("stable order of " + n + " keys of " + bits + " bits");
        }
        return out;
    }

    /**
     * Device state of a resident stable sort of n keys: two buffers of 8n bytes (keys then indices; one pass needs
     * only the keys and the output), the per-(digit, tile) counts, the row totals and the bad-key slot.
     */
    static final class Stable implements AutoCloseable {
        final CudaDevice dev;
        final GpuStream s;
        final int n;
        final int m;
        final boolean longIndex;
        final int[] bits;
        final int tiles;
        /** Onesweep kernels ({@link #onesweep}): counts holds the look-back status, rowTotals the histograms. */
        final boolean onesweep;
        /** Keys only (onesweep passes without indices): the result is the sorted keys. */
        final boolean keysOnly;
        private final DeviceBuffer a;
        private final DeviceBuffer b;
        private final DeviceBuffer counts;
        private final DeviceBuffer rowTotals;
        private final DeviceBuffer bad;
        /** The buffer holding the result after {@link #run}. */
        private DeviceBuffer result;

        /** Passes of the high words (wide keys of more than 32 bits), else 0: they follow the low words' passes. */
        private final int highPasses;

        Stable(CudaDevice dev, GpuStream s, int n, int m, boolean longIndex) {
            this(dev, s, n, m, longIndex, passBits(m), 0);
        }

        Stable(CudaDevice dev, GpuStream s, int n, int m, boolean longIndex, int[] bits, int highPasses) {
            this(dev, s, n, m, longIndex, bits, highPasses, onesweep(bits));
        }

        /**
         * A stable sort with the given passes; m > 0: pass 0 also checks that every key lies in [0, m); m = 0: no
         * check (wide keys, checked on the host). The last {@code highPasses} passes sort the high words ({@link
         * #run(long, int[])}). {@code onesweep}: the onesweep kernels (two or more passes only).
         */
        Stable(CudaDevice dev, GpuStream s, int n, int m, boolean longIndex, int[] bits, int highPasses,
               boolean onesweep) {
            this(dev, s, n, m, longIndex, bits, highPasses, onesweep, false);
        }

        /** The keys-only sort of n keys in [0, m) by onesweep radix passes (m needs two or more passes). */
        static Stable keysOnly(CudaDevice dev, GpuStream s, int n, int m) {
            int[] bits = passBits(m);
            if (bits.length < 2) {
                throw new IllegalArgumentException("radix keys-only sort needs two or more passes, m = " + m);
            }
            return new Stable(dev, s, n, m, false, bits, 0, true, true);
        }

        private Stable(CudaDevice dev, GpuStream s, int n, int m, boolean longIndex, int[] bits, int highPasses,
                       boolean onesweep, boolean keysOnly) {
            this.dev = dev;
            this.s = s;
            this.n = n;
            this.m = m;
            this.longIndex = longIndex;
            this.bits = bits;
            this.highPasses = highPasses;
            tiles = tiles(n);
            this.onesweep = onesweep && bits.length > 1;
            this.keysOnly = keysOnly;
            long nb = 4L * n;
            DeviceBuffer[] bufs = new DeviceBuffer[5];
            try {
                boolean multi = bits.length > 1 && !keysOnly;
                bufs[0] = DeviceBuffer.allocate(dev, multi ? 2 * nb : nb);
                bufs[1] = DeviceBuffer.allocate(dev, multi || longIndex ? 2 * nb : nb);
                // onesweep: a 64-bit status word per (tile, digit); the histograms of every pass, then a tile
                // counter per pass. Classic: per-(digit, tile) counts and the row totals of one pass.
                bufs[2] = DeviceBuffer.allocate(dev, (this.onesweep ? 8L : 4L) * (1 << MAX_PASS_BITS) * tiles);
                bufs[3] = DeviceBuffer.allocate(dev,
                        this.onesweep ? 4L * OS_MAX_PASSES * ((1 << MAX_PASS_BITS) + 1) : 4L * (1 << MAX_PASS_BITS));
                bufs[4] = DeviceBuffer.allocate(dev, 4);
            } catch (RuntimeException e) {
                for (DeviceBuffer x : bufs) {
                    if (x != null) {
                        x.close();
                    }
                }
                throw e;
            }
            a = bufs[0];
            b = bufs[1];
            counts = bufs[2];
            rowTotals = bufs[3];
            bad = bufs[4];
            bad.upload(new int[] {NO_BAD}, s);
        }

        /** Copies keys[from, from + n) to the device (in chunks). */
        void upload(int[] keys, int from, int count) {
            upload(a, keys, from, count);
        }

        /** Copies src[from, from + count) to the start of dst (in chunks). */
        private void upload(DeviceBuffer dst, int[] src, int from, int count) {
            int chunk = chunk(count);
            for (int o = 0; o < count; o += chunk) {
                int c = Math.min(chunk, count - o);
                dst.upload(src, from + o, c, o, s);
            }
        }

        /** The keys buffer (the first n ints of the first buffer), e.g. for benchmarks to restore the input. */
        DeviceBuffer keys() {
            return a;
        }

        /** All passes; indices of the last one are written as first + index (long) or index (int). */
        void run(long first) {
            run(first, null);
        }

        /**
         * All passes. With {@code highWords} (wide keys: the keys uploaded were the low words), after the low words'
         * passes the high words are uploaded, gathered into the order reached ({@code sort_gather}) and sorted by
         * the last {@code highPasses} passes, which carry the indices on. Each pass is sort_count, sort_rowscan and
         * sort_scatter, or with {@link #onesweep} one sort_os_pass after sort_os_hist's count of every pass's digits
         * (sort.cu's "onesweep stable passes").
         */
        void run(long first, int[] highWords) {
            long nb = 4L * n;
            int lowPasses = bits.length - highPasses;
            if (onesweep) { // the look-back status and the histograms of every pass, then one read of the keys
                counts.zero(s);
                rowTotals.zero(s);
                histogram(a, 0, lowPasses, m, bad);
            }
            DeviceBuffer in = a;
            DeviceBuffer out = b;
            int shift = 0;
            for (int p = 0; p < bits.length; p++) {
                boolean last = p == bits.length - 1;
                if (highWords != null && p == lowPasses) {
                    gatherHighWords(in, out, highWords);
                    if (onesweep) {
                        histogram(in, lowPasses, highPasses, 0, null);
                    }
                    shift = 0;
                }
                Object idxIn = p == 0 || keysOnly ? new Pointer() : in.pointer().withByteOffset(nb);
                Object keysOut = last && !keysOnly ? new Pointer() : out.pointer();
                Object idxOut = keysOnly ? new Pointer() : last ? out.pointer() : out.pointer().withByteOffset(nb);
                boolean wide = last && longIndex;
                if (onesweep) {
                    KernelLauncher.launch(s, MODULE, wide ? "sort_os_pass_i64" : "sort_os_pass_i32", tiles,
                            SORT_THREADS, 0, in.pointer(), idxIn, n, shift, bits[p], p, rowTotals,
                            rowTotals.pointer().withByteOffset(4L * (OS_MAX_PASSES * (1 << MAX_PASS_BITS) + p)),
                            counts, keysOut, idxOut, wide ? first : 0L);
                } else {
                    int rb = radixOf(bits[p]);
                    KernelLauncher.launch(s, MODULE, "sort_count_r" + rb, tiles, SORT_THREADS, 0, in.pointer(), n,
                            shift, bits[p], tiles, counts, m, p == 0 && m > 0 ? bad : new Pointer());
                    KernelLauncher.launch(s, MODULE, "sort_rowscan", 1 << bits[p], SCAN_THREADS, 0, counts, tiles,
                            rowTotals);
                    KernelLauncher.launch(s, MODULE, "sort_scatter_r" + rb + (wide ? "_i64" : "_i32"), tiles,
                            SORT_THREADS, 0, in.pointer(), idxIn, n, shift, bits[p], tiles, counts, rowTotals,
                            keysOut, idxOut, wide ? first : 0L);
                }
                shift += bits[p];
                DeviceBuffer t = in;
                in = out;
                out = t;
            }
            result = in;
        }

        /** Throws the twin's error if a key was outside [0, m) (synchronises the stream). */
        void checkBad(int[] keys) {
            int[] v = new int[1];
            bad.download(v, 1, s);
            s.synchronize("stable order of " + n + " keys in [0, " + m + ")");
            if (v[0] != NO_BAD) {
                throw SortCpu.badKey(keys, v[0], m);
            }
        }

        /**
         * Wide keys, after the low words' passes: {@code out} is free, so the high words go there in input order, and
         * sort_gather puts them into {@code in}'s order: in.keys[i] = high[in.idx[i]].
         */
        private void gatherHighWords(DeviceBuffer in, DeviceBuffer out, int[] highWords) {
            upload(out, highWords, 0, n);
            KernelLauncher.launch(s, MODULE, "sort_gather", (int) ((n + 255L) / 256), 256, 0, out,
                    in.pointer().withByteOffset(4L * n), n, in);
        }

        /** sort_os_hist: the histograms of passes [from, from + count) from the keys at the start of {@code keys}. */
        private void histogram(DeviceBuffer keys, int from, int count, int range, DeviceBuffer badSlot) {
            int grid = (int) Math.max(1, Math.min((n + 4L * SORT_THREADS - 1) / (4L * SORT_THREADS),
                    (long) OS_HIST_BLOCKS_PER_SM * dev.multiprocessors()));
            KernelLauncher.launch(s, MODULE, "sort_os_hist", grid, SORT_THREADS, 0, keys, n, count,
                    packBits(bits, from, count), from, rowTotals, range, badSlot != null ? badSlot : new Pointer());
        }

        /** Copies the result to out[at, at + n) (int) or outLong[at, at + n) (long indices). */
        void download(int[] out, long[] outLong, int at) {
            if (result == null) {
                throw new IllegalStateException("stable sort not run");
            }
            int chunk = chunk(n);
            for (int o = 0; o < n; o += chunk) {
                int c = Math.min(chunk, n - o);
                if (longIndex) {
                    result.download(outLong, at + o, c, o, s);
                } else {
                    result.download(out, at + o, c, o, s);
                }
            }
        }

        @Override
        public void close() {
            for (DeviceBuffer x : new DeviceBuffer[] {a, b, counts, rowTotals, bad}) {
                x.close();
            }
        }
    }

    // ------------------------------------------------------------------------------------------ timing

    /** What {@link #kernelMillis} times. */
    public enum Op {
        /** Histogram, pyramid and sorted keys. */
        KEYS,
        /** Stable order with int indices. */
        ORDER,
        /** Stable order with long indices. */
        ORDER_LONG
    }

    /**
     * Milliseconds (CUDA events) of {@code reps} runs of the kernels of {@code op} on keys already on the device:
     * no allocation, transfer or host work inside the measured interval (keys-only: zeroing the histogram, the
     * histogram, the pyramid and the output; stable: all passes). The keys are checked once first, and the stable
     * sort's input is restored between runs outside the interval. {@code kernel} names the keys-only output kernel
     * (sort_keys_runs, sort_keys_descent, or {@link #RADIX_KEYS}: the radix passes),
     * or for a stable order its kernels (onesweep or classic, as {@link #stableKernel}); null: the default choice.
     * Needs the whole input and output on the device.
     */
    public static double[] kernelMillis(CudaDevice dev, int[] keys, int m, Op op, String kernel, int reps) {
        SortCpu.checkKeys(keys, m);
        int n = keys.length;
        double[] ms = new double[reps];
        if (n == 0) {
            return ms;
        }
        String k = op != Op.KEYS || kernel != null ? kernel : outputKernel(m, n, keys);
        try (GpuStream s = new GpuStream(dev); KernelTimer timer = new KernelTimer(dev)) {
            if (op == Op.KEYS && RADIX_KEYS.equals(k)) {
                try (Stable st = Stable.keysOnly(dev, s, n, m)) {
                    timeStable(st, timer, keys, ms, "timed keys-only sort (radix passes)");
                    st.checkBad(keys);
                }
            } else if (op == Op.KEYS) {
                try (Pyramid py = new Pyramid(dev, s, m); DeviceBuffer in = DeviceBuffer.allocate(dev, 4L * n);
                     DeviceBuffer out = DeviceBuffer.allocate(dev, 4L * n)) {
                    in.upload(keys, 0, n, 0, s);
                    py.reset();
                    for (int r = 0; r < reps; r++) {
                        timer.start(s);
                        py.zero();
                        py.add(in.pointer(), n, 0);
                        py.build();
                        py.output(k, 0, n, out.pointer());
                        timer.stop(s);
                        s.synchronize("timed keys-only sort (" + k + ")");
                        ms[r] = timer.millis();
                    }
                    py.checkBad(keys, "timed keys-only sort");
                }
            } else {
                boolean wide = op == Op.ORDER_LONG;
                int[] bits = passBits(m);
                boolean os = onesweep(bits, k != null ? k : stableKernel);
                try (Stable st = new Stable(dev, s, n, m, wide, bits, 0, os)) {
                    timeStable(st, timer, keys, ms, "timed stable order");
                    st.checkBad(keys);
                }
            }
        }
        return ms;
    }

    /**
     * Milliseconds (CUDA events) of {@code reps} runs of the stable order of full-range 32-bit keys (the wide path of
     * {@link #orderWide} with 32 bits: four 8-bit LSD passes, int indices) on keys already on the device, as {@link
     * #kernelMillis}: the input restored between runs outside the interval. {@code kernel}: onesweep or classic (null:
     * {@link #stableKernel}).
     */
    public static double[] wideKernelMillis(CudaDevice dev, int[] keys, String kernel, int reps) {
        int n = keys.length;
        double[] ms = new double[reps];
        if (n == 0) {
            return ms;
        }
        int[] passes = SortCpu.splitBits(32, MAX_PASS_BITS);
        try (GpuStream s = new GpuStream(dev); KernelTimer timer = new KernelTimer(dev);
             Stable st = new Stable(dev, s, n, 0, false, passes, 0,
                     onesweep(passes, kernel != null ? kernel : stableKernel))) {
            timeStable(st, timer, keys, ms, "timed stable order of 32-bit keys");
        }
        return ms;
    }

    /** Times ms.length runs of {@code st} on {@code keys}, the input restored from a device copy before each. */
    private static void timeStable(Stable st, KernelTimer timer, int[] keys, double[] ms, String what) {
        int n = keys.length;
        try (DeviceBuffer pristine = DeviceBuffer.allocate(st.dev, 4L * n)) {
            pristine.upload(keys, 0, n, 0, st.s);
            for (int r = 0; r < ms.length; r++) {
                st.keys().copyFrom(pristine, 4L * n, st.s);
                timer.start(st.s);
                st.run(0);
                timer.stop(st.s);
                st.s.synchronize(what);
                ms[r] = timer.millis();
            }
        }
    }
}
