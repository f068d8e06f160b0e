package io.sparkgpu.kmeans;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import jcuda.Pointer;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;

/**
 * GPU implementation of {@link KMeansCpu#step} through the {@code kmeans} module. A partition's rows are
 * uploaded once and stay in the device's {@link DeviceResidentCache} across iterations when they fit in
 * its budget; otherwise they are streamed in chunks whose results accumulate into the same exact
 * accumulator (integer sums, so chunking does not change a bit).
 */
final class KMeansGpu {
    public static final String MODULE = "kmeans";
    public static final String PROBE_KERNEL = "kmeans_step_dany";
    static final int BLOCK = 256;
    /** Rows per streamed chunk are limited to this many bytes of x. */
    static long chunkBytes = 256L << 20; // not final: tests shrink it to exercise streaming

    private KMeansGpu() {
    }

    static String kernelFor(int d) {
        if (d <= 8) {
            return "kmeans_step_d8";
        } else if (d <= 16) {
            return "kmeans_step_d16";
        } else if (d <= 32) {
            return "kmeans_step_d32";
        } else if (d <= 64) {
            return "kmeans_step_d64";
        }
        return "kmeans_step_dany";
    }

    /**
     * Row stride of the centres as the kernels read them: d rounded up to a multiple of 4, the extra entries
     * zero (see {@link #paddedCentres}), so that each block of 4 dimensions is two aligned 16-byte loads.
     */
    static int paddedDim(int d) {
        return (d + 3) & ~3;
    }

    /** The k*d row-major centres laid out with row stride {@link #paddedDim}, zero-padded. */
    static double[] paddedCentres(double[] centres, int k, int d) {
        final int dp = paddedDim(d);
        if (dp == d) {
            return centres;
        }
        double[] out = new double[k * dp];
        for (int c = 0; c < k; c++) {
            System.arraycopy(centres, c * d, out, c * dp, d);
        }
        return out;
    }

    /** Points each thread takes per grid-stride step: two in the register kernels for d <= 32, else one. */
    static int pointsPerThread(int d) {
        return d <= 32 ? 2 : 1;
    }

    /** Blocks that have work for m rows, capped by the resident limit. */
    static int gridFor(int m, int d, int maxGrid) {
        long perBlock = (long) BLOCK * pointsPerThread(d);
        return (int) Math.max(1, Math.min(maxGrid, (m + perBlock - 1) / perBlock));
    }

    /**
     * The FP32 screening kernels (kmeans_filt_*) are used when this is true and {@link #plan} finds them
     * applicable; tests turn it off to compare against the FP64 kernels. Not final: tests and benchmarks switch it.
     * The JVM property {@code sparkgpu.kmeans.screening=false} starts with it off (for benchmarking both).
     */
    static volatile boolean useFilter = !"false".equalsIgnoreCase(System.getProperty("sparkgpu.kmeans.screening", "true"));
    /** Largest d of the FP32 screening kernels (their x' rows live in registers). */
    static final int FILTER_MAX_D = 64;

    /** The FP32 screening kernel for d <= {@link #FILTER_MAX_D}. */
    static String filterKernelFor(int d) {
        if (d <= 8) {
            return "kmeans_filt_d8";
        } else if (d <= 16) {
            return "kmeans_filt_d16";
        } else if (d <= 32) {
            return "kmeans_filt_d32";
        }
        return "kmeans_filt_d64";
    }

    /** Points per thread and grid-stride step of the FP32 screening kernels: 4 (d <= 16), 2 (d <= 32), else 1. */
    static int filterPointsPerThread(int d) {
        return d <= 16 ? 4 : d <= 32 ? 2 : 1;
    }

    /** Bytes of shared memory the screening kernels need for the FP32 centres -2c' and their norms. */
    static long filterFloatBytes(int k, int d) {
        long k2 = (k + 1) & ~1L;
        return 4L * (k2 * paddedDim(d) + ((k2 + 3) & ~3L));
    }

    /**
     * Accumulation variant of the register kernels (d <= 64): {@code false} = "atomic" (every point's d + 1
     * quantized values added with 128-bit shared/global atomics), {@code true} = "sorted" (the *_sorted kernels: a
     * block-local counting sort by label, register sums per cluster segment, one atomic per (cluster, dimension)
     * and segment; see kmeans.cu, "Sorted accumulation"). Same bits either way. The JVM property
     * {@code sparkgpu.kmeans.accumulate=sorted|atomic} sets the start value (default atomic until the sorted
     * kernels have passed the GPU exactness tests on hardware); not final: tests switch it.
     */
    static volatile boolean useSorted = parseAccumulateMode(System.getProperty("sparkgpu.kmeans.accumulate"));

    static final String ACCUMULATE_PROPERTY = "sparkgpu.kmeans.accumulate";

    /** "sorted" -> true, "atomic" or unset/empty -> false (the default), anything else is rejected. */
    static boolean parseAccumulateMode(String v) {
        if (v == null || v.trim().isEmpty() || "atomic".equalsIgnoreCase(v.trim())) {
            return false;
        }
        if ("sorted".equalsIgnoreCase(v.trim())) {
            return true;
        }
        throw new IllegalArgumentException(ACCUMULATE_PROPERTY + " must be sorted or atomic, not '" + v + "'");
    }

    /** Largest d of the register kernels, the only ones with a sorted variant. */
    static final int SORTED_MAX_D = 64;

    /**
     * Shared bytes of the sorted kernels' sort region (KMEANS_SORT_INTS, include/layout/kmeans.cuh): cnt int[k],
     * off int[k+1], and the tile's sorted indices and labels, int[BLOCK * pointsPerThread] each.
     */
    static long sortBytes(int k, int pointsPerThread) {
        return 4L * ((long) k + (k + 1) + 2L * BLOCK * pointsPerThread);
    }

    /** Launch configuration of a step: which kernel, what goes to shared memory, and the grid limit. */
    static final class Plan {
        final String kernel;
        final boolean filter;
        /** The kernel is a *_sorted variant (its shared block ends with {@link #sortBytes}). */
        final boolean sorted;
        final int pointsPerThread;
        final boolean centresInShared;
        final boolean accInShared;
        final int shared;
        final int maxGrid;

        Plan(String kernel, boolean filter, boolean sorted, int pointsPerThread, boolean centresInShared,
             boolean accInShared, int shared, int maxGrid) {
            this.kernel = kernel;
            this.filter = filter;
            this.sorted = sorted;
            this.pointsPerThread = pointsPerThread;
            this.centresInShared = centresInShared;
            this.accInShared = accInShared;
            this.shared = shared;
            this.maxGrid = maxGrid;
        }

        int grid(int m) {
            long perBlock = (long) BLOCK * pointsPerThread;
            return (int) Math.max(1, Math.min(maxGrid, (m + perBlock - 1) / perBlock));
        }
    }

    /**
     * Which kernel runs a step. The FP32 screening kernels (see kmeans.cu, "FP32 screening kernels") are
     * chosen for the Euclidean distance with d <= {@link #FILTER_MAX_D} when their FP32 centres fit in shared
     * memory and the centres give a finite {@link Filter} (null {@code filter} here means they did not);
     * the accumulator and then the FP64 centres go to shared memory as far as they fit. Everything else
     * (cosine, d > 64, e.g. the 10^6 x 3000, k = 1000 shape, k*d too large for shared memory, non-finite
     * centres) runs the FP64 kernels kmeans_step_*, where every distance is computed in FP64.
     */
    static Plan plan(CudaDevice dev, int k, int d, boolean accumulate, Filter filter) {
        return plan(k, d, accumulate, filter, dev.maxSharedMemoryOptin() - 1024, dev);
    }

    /** {@link #plan} for a given shared-memory limit; dev may be null (no occupancy query, maxGrid unbounded). */
    static Plan plan(int k, int d, boolean accumulate, Filter filter, long maxShared, CudaDevice dev) {
        return plan(k, d, accumulate, filter, maxShared, dev, useSorted);
    }

    /**
     * {@link #plan} with the accumulation variant given: {@code sorted} picks the *_sorted kernel when the step
     * accumulates, d <= {@link #SORTED_MAX_D} and its sort region fits next to what the kernel family needs
     * (the FP32 centres for the screening kernels); the sort region is reserved first, the accumulator and the
     * FP64 centres then go to shared memory as far as the rest allows.
     */
    static Plan plan(int k, int d, boolean accumulate, Filter filter, long maxShared, CudaDevice dev, boolean sorted) {
        final long centresBytes = 8L * k * paddedDim(d);
        final long accBytes = 8L * KMeansAccumulator.length(k, d);
        final long fBytes = filterFloatBytes(k, d);
        final boolean sortable = sorted && accumulate && d <= SORTED_MAX_D;
        if (filter != null && fBytes <= maxShared) {
            final int ppt = filterPointsPerThread(d);
            final long sortB = sortBytes(k, ppt);
            final boolean srt = sortable && fBytes + sortB <= maxShared;
            final long room = maxShared - (srt ? sortB : 0);
            final String kernel = filterKernelFor(d) + (srt ? "_sorted" : "");
            final boolean accInShared = accumulate && fBytes + accBytes <= room;
            final long used = fBytes + (accInShared ? accBytes : 0);
            final boolean centresInShared = used + centresBytes <= room;
            final int shared = (int) (used + (centresInShared ? centresBytes : 0) + (srt ? sortB : 0));
            final int maxGrid = dev == null ? Integer.MAX_VALUE
                    : KernelLauncher.residentBlocks(dev, MODULE, kernel, BLOCK, shared);
            return new Plan(kernel, true, srt, ppt, centresInShared, accInShared, shared, maxGrid);
        }
        final int ppt = pointsPerThread(d);
        final long sortB = sortBytes(k, ppt);
        final boolean srt = sortable && sortB <= maxShared;
        final long room = maxShared - (srt ? sortB : 0);
        final String kernel = kernelFor(d) + (srt ? "_sorted" : "");
        final boolean accInShared = accumulate && accBytes <= room;
        final boolean centresInShared = centresBytes + (accInShared ? accBytes : 0) <= room;
        final int shared = (int) ((centresInShared ? centresBytes : 0) + (accInShared ? accBytes : 0) + (srt ? sortB : 0));
        final int maxGrid = dev == null ? Integer.MAX_VALUE
                : KernelLauncher.residentBlocks(dev, MODULE, kernel, BLOCK, shared);
        return new Plan(kernel, false, srt, ppt, centresInShared, accInShared, shared, maxGrid);
    }

    /** The screening data of a centre set, or null where the FP32 kernels do not apply (cosine, d, switch). */
    static Filter filterFor(double[] centres, int k, int d, boolean cosine) {
        if (!useFilter || cosine || d > FILTER_MAX_D || k < 1) {
            return null;
        }
        return Filter.of(centres, k, d);
    }

    /**
     * Host side of the FP32 screening kernels: origin m, scale s, FP32 centres and the coefficients of the
     * error bound B = c2*R^2 + c1*R + c0 derived in kmeans.cu. Every coefficient is computed in double and
     * rounded up to float (Rlim down), so the kernel's bound is at least the derived one.
     */
    static final class Filter {
        /**
         * Safety factor on the whole derived bound: a looser bound costs rechecks only (the recheck rate grows
         * in proportion, and is ~0 on separated data), a bound that is too tight would break exactness. At
         * d = 1 the derived bound is nearly attained (KMeansFilterBoundTest measures up to ~0.85 of it), so
         * the margin is 4x rather than 2x.
         */
        static final double SAFETY = 4.0;
        final double[] origin;
        final double s;
        /** -2c' as float bits, k2 rows of paddedDim(d), zero-padded; k2 = k rounded up to even. */
        final int[] fcBits;
        /** ||c'||^2 as float bits, k2 entries (the dummy centre: +inf), padded to a multiple of 4. */
        final int[] fncBits;
        final float cn;
        final float c2;
        final float c1;
        final float c0;
        final float rlim;

        private Filter(double[] origin, double s, int[] fcBits, int[] fncBits, float cn, float c2, float c1, float c0,
                       float rlim) {
            this.origin = origin;
            this.s = s;
            this.fcBits = fcBits;
            this.fncBits = fncBits;
            this.cn = cn;
            this.c2 = c2;
            this.c1 = c1;
            this.c0 = c0;
            this.rlim = rlim;
        }

        static float roundUp(double v) {
            float f = (float) v;
            return f < v ? Math.nextUp(f) : f;
        }

        static float roundDown(double v) {
            float f = (float) v;
            return f > v ? Math.nextDown(f) : f;
        }

        /** Null when the centres are not all finite (or their mean or spread is not): the FP64 kernels then run. */
        static Filter of(double[] centres, int k, int d) {
            final int dp = paddedDim(d);
            final int k2 = (k + 1) & ~1;
            double[] m = new double[d];
            for (int c = 0; c < k; c++) {
                for (int j = 0; j < d; j++) {
                    m[j] += centres[c * d + j];
                }
            }
            double maxAbs = 0;
            for (int j = 0; j < d; j++) {
                m[j] /= k;
                if (!Double.isFinite(m[j])) {
                    return null;
                }
                for (int c = 0; c < k; c++) {
                    double t = centres[c * d + j] - m[j];
                    if (!Double.isFinite(t)) {
                        return null;
                    }
                    maxAbs = Math.max(maxAbs, Math.abs(t));
                }
            }
            // power of two bringing the largest |c - m| into [1, 2): keeps FP32 values away from under/overflow
            final int sExp = maxAbs > 0 ? -Math.getExponent(maxAbs) : 0;
            final double s = Math.scalb(1.0, sExp);
            int[] fc = new int[k2 * dp];
            int[] fnc = new int[(k2 + 3) & ~3];
            double maxNorm2 = 0;
            for (int c = 0; c < k; c++) {
                double n2 = 0;
                for (int j = 0; j < d; j++) {
                    float cp = (float) ((centres[c * d + j] - m[j]) * s); // the kernel's x' formula
                    if (!Float.isFinite(cp)) {
                        return null;
                    }
                    fc[c * dp + j] = Float.floatToRawIntBits(-2.0f * cp);
                    n2 += (double) cp * cp; // exact products; d <= 64 roundings of 2^-53
                }
                fnc[c] = Float.floatToRawIntBits((float) n2);
                maxNorm2 = Math.max(maxNorm2, n2);
            }
            for (int c = k; c < fnc.length; c++) {
                fnc[c] = Float.floatToRawIntBits(Float.POSITIVE_INFINITY); // dummy (odd k) and padding
            }
            final float cn = roundUp(Math.sqrt(maxNorm2) * (1 + 1e-9));
            final double u = 0x1p-24;
            final double v = 0x1p-53;
            final double gamma = d * u / (1 - d * u);
            final double gamma64 = (d + 2) * v / (1 - (d + 2) * v);
            final double rho = (1 + u) * (1 + v) - 1;
            final double ex = rho / (1 - rho);
            final double h = 2 * Math.sqrt(d) * 0x1p-148 * (1 + 1e-9);
            final double c2 = SAFETY * (1.01 * u + 1.01 * gamma + 2.01 * ex + 2.01 * gamma64);
            final double c1 = SAFETY * 2.01 * h;
            final double twinUnderflow = Math.scalb((double) d, 2 * sExp - 1075); // s^2 * d * 2^-1075
            final double c0 = SAFETY * (h * h + (d + 1) * 0x1p-150 + 2 * gamma64 * h * h + twinUnderflow);
            final double rlim = Math.min(0x1p62, Math.scalb(s, 499));
            return new Filter(m, s, fc, fnc, cn, roundUp(c2), roundUp(c1), roundUp(c0), roundDown(rlim));
        }
    }

    private static final ThreadLocal<long[]> LAST = ThreadLocal.withInitial(() -> new long[2]);
    private static final ThreadLocal<String> LAST_KERNEL = ThreadLocal.withInitial(() -> "");

    /**
     * Points of the calling thread's last {@link #step} or {@link #kernelMillis} launch (the last timed
     * launch) whose FP32 screening could not prove the nearest centre and that were rechecked in FP64; 0 after
     * an FP64 kernel.
     */
    public static long lastRecheckCount() {
        return LAST.get()[0];
    }

    /** Points that launch processed (the denominator of {@link #lastRecheckCount}). */
    public static long lastPointCount() {
        return LAST.get()[1];
    }

    /** Name of the kernel the calling thread's last step or timing ran. */
    public static String lastKernel() {
        return LAST_KERNEL.get();
    }

    /** Device buffers of a filter launch. */
    private static final class FilterBuffers implements AutoCloseable {
        final DeviceBuffer fc;
        final DeviceBuffer fnc;
        final DeviceBuffer origin;
        final DeviceBuffer recheck;

        FilterBuffers(CudaDevice dev, Filter f, GpuStream s) {
            DeviceBuffer a = null;
            DeviceBuffer b = null;
            DeviceBuffer c = null;
            DeviceBuffer r = null;
            try {
                a = DeviceBuffer.allocate(dev, 4L * f.fcBits.length);
                b = DeviceBuffer.allocate(dev, 4L * f.fncBits.length);
                c = DeviceBuffer.ofDoubles(dev, Math.max(1, f.origin.length));
                r = DeviceBuffer.allocate(dev, 8);
                a.upload(f.fcBits, s);
                b.upload(f.fncBits, s);
                c.upload(f.origin, s);
                r.zero(s);
            } catch (RuntimeException e) {
                for (DeviceBuffer x : new DeviceBuffer[] {a, b, c, r}) {
                    if (x != null) {
                        x.close();
                    }
                }
                throw e;
            }
            fc = a;
            fnc = b;
            origin = c;
            recheck = r;
        }

        long rechecks(GpuStream s) {
            long[] v = new long[1];
            recheck.download(v, 1, s);
            s.synchronize("k-means recheck counter");
            return v[0];
        }

        @Override
        public void close() {
            fc.close();
            fnc.close();
            origin.close();
            recheck.close();
        }
    }

    /** Kernel arguments of one launch over m rows at x / w. */
    private static Object[] args(Plan plan, Filter f, FilterBuffers fb, Pointer x, Pointer w, int m, int d,
                                 DeviceBuffer dCentres, int k, boolean cosine, DeviceBuffer dScale, DeviceBuffer dAcc,
                                 boolean accumulate, Object labels, Object dists, boolean minUpdate) {
        if (plan.filter) {
            return new Object[] {x, w, m, d, dCentres, k, fb.fc, fb.fnc, fb.origin, f.s, f.cn, f.c2, f.c1, f.c0,
                    f.rlim, dScale, dAcc, accumulate ? 1 : 0, plan.centresInShared ? 1 : 0, plan.accInShared ? 1 : 0,
                    labels, dists, minUpdate ? 1 : 0, fb.recheck};
        }
        return new Object[] {x, w, m, d, dCentres, k, cosine ? 1 : 0, dScale, dAcc, accumulate ? 1 : 0,
                plan.centresInShared ? 1 : 0, plan.accInShared ? 1 : 0, labels, dists, minUpdate ? 1 : 0};
    }

    /** Same contract as {@link KMeansCpu#step}. */
    public static long[] step(CudaDevice dev, KMeansData data, double[] centres, int k, boolean cosine,
                              KMeansScales scales, boolean accumulate, int[] labels, double[] dists, boolean minUpdate) {
        return pass(dev, java.util.List.of(data), data.d, centres, k, cosine, scales, accumulate, labels, dists,
                minUpdate);
    }

    /**
     * The one pass behind {@link #step} and {@link #stepBlocks}: centres, scales and the accumulator are set up once,
     * each non-empty block (resident when its residency key is cached, else streamed in chunks) is launched into the
     * same device accumulator, which is downloaded once. Labels and distances (offsets within the block) are only
     * for a single block. Leases are released after the synchronisation, so no kernel reads a released entry.
     */
    private static long[] pass(CudaDevice dev, java.util.List<KMeansData> blocks, int d, double[] centres, int k,
                               boolean cosine, KMeansScales scales, boolean accumulate, int[] labels, double[] dists,
                               boolean minUpdate) {
        if ((labels != null || dists != null) && blocks.size() != 1) {
            throw new IllegalArgumentException("labels and distances are per block: pass one block, got " + blocks.size());
        }
        final int accLen = KMeansAccumulator.length(k, d);
        long[] acc = accumulate ? new long[accLen] : null;
        long points = 0;
        for (KMeansData b : blocks) {
            if (b.n > 0 && b.d != d) {
                throw new IllegalArgumentException("block of dimension " + b.d + " in a pass of dimension " + d);
            }
            points += b.n;
        }
        LAST.get()[0] = 0;
        LAST.get()[1] = (int) Math.min(Integer.MAX_VALUE, points);
        if (points == 0) {
            return acc;
        }
        final Filter filter = filterFor(centres, k, d, cosine);
        final Plan plan = plan(dev, k, d, accumulate, filter);
        LAST_KERNEL.set(plan.kernel);
        final double[] scaleArr = scales != null ? scales.multipliers : new double[2 * (d + 2)];
        final int dp = paddedDim(d);
        final long rowBytes = 8L * (d + 1);
        // the device-memory budget (issue 18): blocks over it are streamed in chunks, never made resident
        final long budget = io.sparkgpu.cuda.DeviceMemoryBudget.bytes();
        final long fixed = fixedBytes(k, d, accumulate, filter, plan.filter);
        final long perRow = rowBytes + (labels != null ? 4 : 0) + (dists != null ? 8 : 0);
        java.util.List<DeviceResidentCache.Lease> leases = new java.util.ArrayList<>();
        java.util.List<DeviceBuffer> streamed = new java.util.ArrayList<>();
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dCentres = DeviceBuffer.ofDoubles(dev, (long) k * dp);
             DeviceBuffer dScale = DeviceBuffer.ofDoubles(dev, scaleArr.length);
             DeviceBuffer dAcc = DeviceBuffer.allocate(dev, accumulate ? 8L * accLen : 8);
             FilterBuffers fb = plan.filter ? new FilterBuffers(dev, filter, s) : null) {
            try {
                dCentres.upload(paddedCentres(centres, k, d), 0, k * dp, 0, s);
                dScale.upload(scaleArr, s);
                dAcc.zero(s);
                for (KMeansData data : blocks) {
                    if (data.n == 0) {
                        continue;
                    }
                    DeviceResidentCache.Lease lease = data.residencyKey == null
                            || !fitsBudget(fixed, perRow, data.n, budget) ? null
                            : DeviceResidentCache.of(dev).acquire(data.residencyKey, rowBytes * data.n);
                    if (lease != null) {
                        leases.add(lease);
                        DeviceBuffer rows = ensureUploaded(lease, data, s);
                        runChunk(s, plan, filter, fb, rows, 0, (long) data.n * d, data.n, d, dCentres, k, cosine, dScale,
                                dAcc, accumulate, labels, dists, minUpdate, 0);
                        continue;
                    }
                    int chunkRows = chunkRows(data.n, fixed, perRow, rowBytes, budget);
                    DeviceBuffer rows = DeviceBuffer.allocate(dev, rowBytes * chunkRows);
                    streamed.add(rows);
                    for (int from = 0; from < data.n; from += chunkRows) {
                        int m = Math.min(chunkRows, data.n - from);
                        rows.upload(data.x, from * d, m * d, 0, s);
                        rows.upload(data.w, from, m, (long) m * d, s);
                        runChunk(s, plan, filter, fb, rows, 0, (long) m * d, m, d, dCentres, k, cosine, dScale, dAcc,
                                accumulate, labels, dists, minUpdate, from);
                    }
                }
                if (accumulate) {
                    dAcc.download(acc, s);
                }
                s.synchronize("k-means pass over " + blocks.size() + " block(s) (" + plan.kernel + ", n=" + points
                        + ", d=" + d + ", k=" + k + ")");
                if (fb != null) {
                    LAST.get()[0] = fb.rechecks(s);
                }
            } finally {
                for (DeviceBuffer b : streamed) {
                    b.close();
                }
                for (DeviceResidentCache.Lease l : leases) {
                    l.close();
                }
            }
        }
        return acc;
    }

    /**
     * Device bytes of a pass that do not grow with the rows: padded centres, scales, accumulator, screening bits.
     */
    static long fixedBytes(int k, int d, boolean accumulate, Filter filter, boolean withFilter) {
        long b = 8L * ((long) k * paddedDim(d) + 2L * (d + 2) + (accumulate ? KMeansAccumulator.length(k, d) : 1));
        if (withFilter && filter != null) {
            b += 4L * filter.fcBits.length + 4L * filter.fncBits.length + 8L * Math.max(1, filter.origin.length) + 8;
        }
        return b;
    }

    /** Whether a whole block of n rows (plus the fixed part) fits the device-memory budget. */
    static boolean fitsBudget(long fixed, long perRow, long n, long budget) {
        return io.sparkgpu.cuda.DeviceMemoryBudget.fits(fixed, perRow, n, budget);
    }

    /**
     * Rows per streamed chunk: at most {@link #chunkBytes} of rows, and within the device-memory budget (the
     * planner's {@link io.sparkgpu.cuda.DeviceMemoryBudget#itemsPerChunk}: it throws a CudaException when not even one
     * row fits next to the fixed part, so the policy falls back or reports). Integer sums: any chunking, same bits.
     */
    static int chunkRows(int n, long fixed, long perRow, long rowBytes, long budget) {
        int byBytes = (int) Math.max(1, Math.min(n, chunkBytes / rowBytes));
        return (int) Math.min(byBytes,
                io.sparkgpu.cuda.DeviceMemoryBudget.intItemsPerChunk("a k-means pass", n, fixed, perRow, budget));
    }

    private static void runChunk(GpuStream s, Plan plan, Filter filter, FilterBuffers fb, DeviceBuffer rows,
                                 long xOffset, long wOffset, int m, int d, DeviceBuffer dCentres, int k, boolean cosine,
                                 DeviceBuffer dScale, DeviceBuffer dAcc, boolean accumulate, int[] labels,
                                 double[] dists, boolean minUpdate, int from) {
        CudaDevice dev = s.device();
        DeviceBuffer dLabels = labels != null ? DeviceBuffer.allocate(dev, 4L * m) : null;
        DeviceBuffer dDists = dists != null ? DeviceBuffer.ofDoubles(dev, m) : null;
        try {
            if (dDists != null && minUpdate) {
                dDists.upload(dists, from, m, 0, s);
            }
            KernelLauncher.launch(s, MODULE, plan.kernel, plan.grid(m), BLOCK, plan.shared,
                    args(plan, filter, fb, rows.pointer().withByteOffset(8 * xOffset),
                            rows.pointer().withByteOffset(8 * wOffset), m, d, dCentres, k, cosine, dScale, dAcc,
                            accumulate, KernelLauncher.nullable(dLabels), KernelLauncher.nullable(dDists), minUpdate));
            if (dLabels != null || dDists != null) {
                int[] lab = labels != null ? new int[m] : null;
                double[] dis = dists != null ? new double[m] : null;
                if (dLabels != null) {
                    dLabels.download(lab, m, s);
                }
                if (dDists != null) {
                    dDists.download(dis, m, s);
                }
                s.synchronize("k-means assignment (" + plan.kernel + ")");
                if (lab != null) {
                    System.arraycopy(lab, 0, labels, from, m);
                }
                if (dis != null) {
                    System.arraycopy(dis, 0, dists, from, m);
                }
            }
        } finally {
            if (dLabels != null) {
                dLabels.close();
            }
            if (dDists != null) {
                dDists.close();
            }
        }
    }

    /**
     * Times the accumulating step kernel alone on rows resident on the device, for benchmarks: no
     * allocation, centre upload, result download or host work is inside the measured interval. The rows are
     * uploaded into the {@link DeviceResidentCache} under {@code data.residencyKey} first if they are not
     * there yet. Each of {@code reps} launches (after one untimed launch) starts from a zeroed accumulator
     * (and recheck counter) and is timed with CUDA events. The kernel is the one {@link #step} would choose;
     * afterwards {@link #lastKernel}, {@link #lastRecheckCount} and {@link #lastPointCount} describe the last
     * timed launch.
     *
     * @return the milliseconds of each timed launch
     * @throws IllegalArgumentException if {@code data} has no residency key
     * @throws IllegalStateException if the rows do not fit in the device's resident budget
     */
    public static double[] kernelMillis(CudaDevice dev, KMeansData data, double[] centres, int k, boolean cosine,
                                        KMeansScales scales, int reps) {
        return kernelMillis(dev, data, centres, k, cosine, scales, reps, false);
    }

    /**
     * {@link #kernelMillis}, or with {@code searchOnly} the same kernel, grid and shared memory launched with
     * accumulate = 0 and no labels or dists: only the nearest-centre search runs (and the screening kernels'
     * recheck count), so the difference to the accumulating launch is the accumulation's share of a pass.
     */
    public static double[] kernelMillis(CudaDevice dev, KMeansData data, double[] centres, int k, boolean cosine,
                                        KMeansScales scales, int reps, boolean searchOnly) {
        if (data.residencyKey == null) {
            throw new IllegalArgumentException("kernel timing needs resident data: give the KMeansData a residencyKey");
        }
        final int n = data.n;
        final int d = data.d;
        final Filter filter = filterFor(centres, k, d, cosine);
        final Plan plan = plan(dev, k, d, true, filter);
        final int grid = plan.grid(n);
        final long rowBytes = 8L * (d + 1);
        double[] millis = new double[reps];
        final int dp = paddedDim(d);
        LAST_KERNEL.set(plan.kernel);
        LAST.get()[0] = 0;
        LAST.get()[1] = n;
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dCentres = DeviceBuffer.ofDoubles(dev, (long) k * dp);
             DeviceBuffer dScale = DeviceBuffer.ofDoubles(dev, scales.multipliers.length);
             DeviceBuffer dAcc = DeviceBuffer.allocate(dev, 8L * KMeansAccumulator.length(k, d));
             FilterBuffers fb = plan.filter ? new FilterBuffers(dev, filter, s) : null) {
            dCentres.upload(paddedCentres(centres, k, d), 0, k * dp, 0, s);
            dScale.upload(scales.multipliers, s);
            DeviceResidentCache.Lease lease = DeviceResidentCache.of(dev).acquire(data.residencyKey, rowBytes * n);
            if (lease == null) {
                throw new IllegalStateException("k-means rows (" + rowBytes * n + " bytes) do not fit in the resident "
                        + "budget of " + dev + "; see " + io.sparkgpu.cuda.SparkGpuConf.RESIDENT_FRACTION);
            }
            CUevent start = new CUevent();
            CUevent stop = new CUevent();
            boolean eventsCreated = false;
            try {
                DeviceBuffer rows = ensureUploaded(lease, data, s);
                dev.bind();
                cuEventCreate(start, CUevent_flags.CU_EVENT_DEFAULT);
                cuEventCreate(stop, CUevent_flags.CU_EVENT_DEFAULT);
                eventsCreated = true;
                float[] ms = new float[1];
                Object[] a = args(plan, filter, fb, rows.pointer(), rows.pointer().withByteOffset(8L * n * d), n, d,
                        dCentres, k, cosine, dScale, dAcc, !searchOnly, new Pointer(), new Pointer(), false);
                for (int r = -1; r < reps; r++) {
                    dAcc.zero(s);
                    if (fb != null) {
                        fb.recheck.zero(s);
                    }
                    cuEventRecord(start, s.handle());
                    KernelLauncher.launch(s, MODULE, plan.kernel, grid, BLOCK, plan.shared, a);
                    cuEventRecord(stop, s.handle());
                    s.synchronize("timed k-means kernel (" + plan.kernel + ", n=" + n + ", d=" + d + ", k=" + k + ")");
                    cuEventElapsedTime(ms, start, stop);
                    if (r >= 0) {
                        millis[r] = ms[0];
                    }
                }
                if (fb != null) {
                    LAST.get()[0] = fb.rechecks(s);
                }
            } catch (jcuda.CudaException e) {
                throw new io.sparkgpu.cuda.CudaException("CUDA event timing failed on " + dev + ": " + e.getMessage(), e);
            } finally {
                lease.close();
                if (eventsCreated) {
                    try {
                        cuEventDestroy(start);
                        cuEventDestroy(stop);
                    } catch (RuntimeException ignored) {
                        // the context is already broken; the original failure is the one to report
                    }
                }
            }
        }
        return millis;
    }

    /** The leased resident buffer holding x then w, uploaded first if an earlier lease has not filled it. */
    private static DeviceBuffer ensureUploaded(DeviceResidentCache.Lease lease, KMeansData data, GpuStream s) {
        DeviceBuffer rows = lease.buffer();
        if (!lease.wasPresent()) {
            // through pinned staging: a pageable copy from a Java array is effectively synchronous and slow
            io.sparkgpu.cuda.HostToDevice.copy(data.x, 0, data.n * data.d, rows, 0, s);
            io.sparkgpu.cuda.HostToDevice.copy(data.w, 0, data.n, rows, 8L * data.n * data.d, s);
            s.synchronize("upload of k-means partition " + data.residencyKey);
            lease.markFilled();
        }
        return rows;
    }

    /**
     * Uploads {@code data} into the device's resident cache under its residency key (nothing when it is already
     * there or does not fit the budget), so that later passes find it on the device.
     */
    static void preload(CudaDevice dev, KMeansData data) {
        if (!fitsBudget(0, 8L * (data.d + 1), data.n, io.sparkgpu.cuda.DeviceMemoryBudget.bytes())) {
            return; // over the device-memory budget: the passes stream it in chunks
        }
        DeviceResidentCache.Lease lease = DeviceResidentCache.of(dev).acquire(data.residencyKey, 8L * (data.d + 1) * data.n);
        if (lease == null) {
            return;
        }
        try {
            if (!lease.wasPresent()) { // e.g. made resident while packing (io.sparkgpu.spark.ResidentBlockSink)
                try (GpuStream s = new GpuStream(dev)) {
                    ensureUploaded(lease, data, s);
                }
            }
        } finally {
            lease.close();
        }
    }

    /**
     * One accumulating pass over several non-empty blocks of dimension {@code scales.d}: centres and scales are
     * uploaded once, each block (resident when its residency key is cached, else streamed in chunks) is one
     * launch into the same device accumulator, and the accumulator is downloaded once. Integer sums, so the
     * result equals the sum of {@link #step} over the blocks.
     */
    static long[] stepBlocks(CudaDevice dev, java.util.List<KMeansData> blocks, double[] centres, int k, boolean cosine,
                             KMeansScales scales) {
        return pass(dev, blocks, scales.d, centres, k, cosine, scales, true, null, null, false);
    }
}
