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
public final class KMeansGpu {
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

    /** Launch configuration of a step: which kernel, what goes to shared memory, and the grid limit. */
    private static final class Plan {
        final String kernel;
        final boolean centresInShared;
        final boolean accInShared;
        final int shared;
        final int maxGrid;

        Plan(String kernel, boolean centresInShared, boolean accInShared, int shared, int maxGrid) {
            this.kernel = kernel;
            this.centresInShared = centresInShared;
            this.accInShared = accInShared;
            this.shared = shared;
            this.maxGrid = maxGrid;
        }
    }

    private static Plan plan(CudaDevice dev, int k, int d, boolean accumulate) {
        final String kernel = kernelFor(d);
        final long centresBytes = 8L * k * paddedDim(d);
        final long accBytes = 8L * KMeansAccumulator.length(k, d);
        final int maxShared = dev.maxSharedMemoryOptin() - 1024;
        final boolean accInShared = accumulate && accBytes <= maxShared;
        final boolean centresInShared = centresBytes + (accInShared ? accBytes : 0) <= maxShared;
        final int shared = (int) ((centresInShared ? centresBytes : 0) + (accInShared ? accBytes : 0));
        final int maxGrid = KernelLauncher.residentBlocks(dev, MODULE, kernel, BLOCK, shared);
        return new Plan(kernel, centresInShared, accInShared, shared, maxGrid);
    }

    /** Same contract as {@link KMeansCpu#step}. */
    public static long[] step(CudaDevice dev, KMeansData data, double[] centres, int k, boolean cosine,
                              KMeansScales scales, boolean accumulate, int[] labels, double[] dists, boolean minUpdate) {
        final int n = data.n;
        final int d = data.d;
        final int accLen = KMeansAccumulator.length(k, d);
        long[] acc = accumulate ? new long[accLen] : null;
        if (n == 0) {
            return acc;
        }
        final Plan plan = plan(dev, k, d, accumulate);
        final String kernel = plan.kernel;
        final boolean accInShared = plan.accInShared;
        final boolean centresInShared = plan.centresInShared;
        final int shared = plan.shared;
        final int maxGrid = plan.maxGrid;
        final long accBytes = 8L * accLen;
        final double[] scaleArr = scales != null ? scales.multipliers : new double[2 * (d + 2)];

        final int dp = paddedDim(d);
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dCentres = DeviceBuffer.ofDoubles(dev, (long) k * dp);
             DeviceBuffer dScale = DeviceBuffer.ofDoubles(dev, scaleArr.length);
             DeviceBuffer dAcc = DeviceBuffer.allocate(dev, accumulate ? accBytes : 8)) {
            dCentres.upload(paddedCentres(centres, k, d), 0, k * dp, 0, s);
            dScale.upload(scaleArr, s);
            dAcc.zero(s);
            long rowBytes = 8L * (d + 1);
            DeviceResidentCache.Lease lease = null;
            if (data.residencyKey != null) {
                lease = DeviceResidentCache.of(dev).acquire(data.residencyKey, rowBytes * n);
            }
            try {
                if (lease != null) {
                    DeviceBuffer rows = ensureUploaded(lease, data, s);
                    runChunk(s, kernel, rows, 0, (long) n * d, n, d, dCentres, k, cosine, dScale, dAcc, accumulate,
                            centresInShared, accInShared, shared, maxGrid, labels, dists, minUpdate, 0);
                } else {
                    int chunkRows = (int) Math.max(1, Math.min(n, chunkBytes / rowBytes));
                    try (DeviceBuffer rows = DeviceBuffer.allocate(dev, rowBytes * chunkRows)) {
                        for (int from = 0; from < n; from += chunkRows) {
                            int m = Math.min(chunkRows, n - from);
                            rows.upload(data.x, from * d, m * d, 0, s);
                            rows.upload(data.w, from, m, (long) m * d, s);
                            runChunk(s, kernel, rows, 0, (long) m * d, m, d, dCentres, k, cosine, dScale, dAcc,
                                    accumulate, centresInShared, accInShared, shared, maxGrid, labels, dists, minUpdate,
                                    from);
                        }
                    }
                }
            } finally {
                if (lease != null) {
                    lease.close();
                }
            }
            if (accumulate) {
                dAcc.download(acc, s);
            }
            s.synchronize("k-means step (" + kernel + ", n=" + n + ", d=" + d + ", k=" + k + ")");
        }
        return acc;
    }

    private static void runChunk(GpuStream s, String kernel, DeviceBuffer rows, long xOffset, long wOffset, int m, int d,
                                 DeviceBuffer dCentres, int k, boolean cosine, DeviceBuffer dScale, DeviceBuffer dAcc,
                                 boolean accumulate, boolean centresInShared, boolean accInShared, int shared,
                                 int maxGrid, int[] labels, double[] dists, boolean minUpdate, int from) {
        CudaDevice dev = s.device();
        DeviceBuffer dLabels = labels != null ? DeviceBuffer.allocate(dev, 4L * m) : null;
        DeviceBuffer dDists = dists != null ? DeviceBuffer.ofDoubles(dev, m) : null;
        try {
            if (dDists != null && minUpdate) {
                dDists.upload(dists, from, m, 0, s);
            }
            int grid = gridFor(m, d, maxGrid);
            KernelLauncher.launch(s, MODULE, kernel, grid, BLOCK, shared,
                    rows.pointer().withByteOffset(8 * xOffset), rows.pointer().withByteOffset(8 * wOffset),
                    m, d, dCentres, k, cosine ? 1 : 0, dScale, dAcc, accumulate ? 1 : 0,
                    centresInShared ? 1 : 0, accInShared ? 1 : 0,
                    KernelLauncher.nullable(dLabels), KernelLauncher.nullable(dDists), minUpdate ? 1 : 0);
            if (dLabels != null || dDists != null) {
                int[] lab = labels != null ? new int[m] : null;
                double[] dis = dists != null ? new double[m] : null;
                if (dLabels != null) {
                    dLabels.download(lab, m, s);
                }
                if (dDists != null) {
                    dDists.download(dis, m, s);
                }
                s.synchronize("k-means assignment (" + kernel + ")");
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
     * and is timed with CUDA events.
     *
     * @return the milliseconds of each timed launch
     * @throws IllegalArgumentException if {@code data} has no residency key
     * @throws IllegalStateException if the rows do not fit in the device's resident budget
     */
    public static double[] kernelMillis(CudaDevice dev, KMeansData data, double[] centres, int k, boolean cosine,
                                        KMeansScales scales, int reps) {
        if (data.residencyKey == null) {
            throw new IllegalArgumentException("kernel timing needs resident data: give the KMeansData a residencyKey");
        }
        final int n = data.n;
        final int d = data.d;
        final Plan plan = plan(dev, k, d, true);
        final int grid = gridFor(n, d, plan.maxGrid);
        final long rowBytes = 8L * (d + 1);
        double[] millis = new double[reps];
        final int dp = paddedDim(d);
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dCentres = DeviceBuffer.ofDoubles(dev, (long) k * dp);
             DeviceBuffer dScale = DeviceBuffer.ofDoubles(dev, scales.multipliers.length);
             DeviceBuffer dAcc = DeviceBuffer.allocate(dev, 8L * KMeansAccumulator.length(k, d))) {
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
                for (int r = -1; r < reps; r++) {
                    dAcc.zero(s);
                    cuEventRecord(start, s.handle());
                    KernelLauncher.launch(s, MODULE, plan.kernel, grid, BLOCK, plan.shared,
                            rows.pointer(), rows.pointer().withByteOffset(8L * n * d), n, d, dCentres, k,
                            cosine ? 1 : 0, dScale, dAcc, 1, plan.centresInShared ? 1 : 0, plan.accInShared ? 1 : 0,
                            new Pointer(), new Pointer(), 0);
                    cuEventRecord(stop, s.handle());
                    s.synchronize("timed k-means kernel (" + plan.kernel + ", n=" + n + ", d=" + d + ", k=" + k + ")");
                    cuEventElapsedTime(ms, start, stop);
                    if (r >= 0) {
                        millis[r] = ms[0];
                    }
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
        DeviceResidentCache.Lease lease = DeviceResidentCache.of(dev).acquire(data.residencyKey, 8L * (data.d + 1) * data.n);
        if (lease == null) {
            return;
        }
        try (GpuStream s = new GpuStream(dev)) {
            ensureUploaded(lease, data, s);
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
        final int d = scales.d;
        final int accLen = KMeansAccumulator.length(k, d);
        long[] acc = new long[accLen];
        final Plan plan = plan(dev, k, d, true);
        final int dp = paddedDim(d);
        final long rowBytes = 8L * (d + 1);
        java.util.List<DeviceResidentCache.Lease> leases = new java.util.ArrayList<>();
        java.util.List<DeviceBuffer> streamed = new java.util.ArrayList<>();
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dCentres = DeviceBuffer.ofDoubles(dev, (long) k * dp);
             DeviceBuffer dScale = DeviceBuffer.ofDoubles(dev, scales.multipliers.length);
             DeviceBuffer dAcc = DeviceBuffer.allocate(dev, 8L * accLen)) {
            try {
                dCentres.upload(paddedCentres(centres, k, d), 0, k * dp, 0, s);
                dScale.upload(scales.multipliers, s);
                dAcc.zero(s);
                for (KMeansData data : blocks) {
                    if (data.d != d) {
                        throw new IllegalArgumentException("block of dimension " + data.d + " in a pass of dimension " + d);
                    }
                    DeviceResidentCache.Lease lease = data.residencyKey == null ? null
                            : DeviceResidentCache.of(dev).acquire(data.residencyKey, rowBytes * data.n);
                    if (lease != null) {
                        leases.add(lease);
                        DeviceBuffer rows = ensureUploaded(lease, data, s);
                        runChunk(s, plan.kernel, rows, 0, (long) data.n * d, data.n, d, dCentres, k, cosine, dScale, dAcc,
                                true, plan.centresInShared, plan.accInShared, plan.shared, plan.maxGrid, null, null,
                                false, 0);
                        continue;
                    }
                    int chunkRows = (int) Math.max(1, Math.min(data.n, chunkBytes / rowBytes));
                    DeviceBuffer rows = DeviceBuffer.allocate(dev, rowBytes * chunkRows);
                    streamed.add(rows);
                    for (int from = 0; from < data.n; from += chunkRows) {
                        int m = Math.min(chunkRows, data.n - from);
                        rows.upload(data.x, from * d, m * d, 0, s);
                        rows.upload(data.w, from, m, (long) m * d, s);
                        runChunk(s, plan.kernel, rows, 0, (long) m * d, m, d, dCentres, k, cosine, dScale, dAcc, true,
                                plan.centresInShared, plan.accInShared, plan.shared, plan.maxGrid, null, null, false,
                                from);
                    }
                }
                dAcc.download(acc, s);
                s.synchronize("k-means pass over " + blocks.size() + " blocks (" + plan.kernel + ", d=" + d + ", k="
                        + k + ")");
            } finally {
                for (DeviceBuffer b : streamed) {
                    b.close();
                }
                for (DeviceResidentCache.Lease l : leases) {
                    l.close(); // after the synchronisation: no kernel reads a released entry
                }
            }
        }
        return acc;
    }
}
