package io.sparkgpu.tsne.affinity;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import java.util.Arrays;
import jcuda.Pointer;
import jcuda.Sizeof;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GPU side of {@link TsneAffinities} (kernels {@code tsne_knn_tile}, {@code tsne_aff_cond} of module
 * {@code tsne}; layouts and launch shapes are described in tsne.cu, section "kNN, affinities"). Large inputs are
 * chunked: queries in chunks whose data and top-k lists fit {@link #chunkBytes}, references in chunks of at most
 * {@link #chunkBytes}; the lists of a query chunk stay on the device across reference chunks, so the chunks
 * merge there. Results are bitwise those of the CPU twin.
 */
final class TsneAffinitiesGpu {
    private static final Logger LOG = LoggerFactory.getLogger(TsneAffinitiesGpu.class);
    static final int KQ = 64;
    /**
     * References per thread of the kNN kernel: 4 (tsne_knn_tile, 64-reference tiles) or 8 (tsne_knn_tile8,
     * 128-reference tiles); system property {@code sparkgpu.tsne.knnRefsPerThread}. Results are identical.
     */
    static final int RPT = Integer.getInteger("sparkgpu.tsne.knnRefsPerThread", 8) == 4 ? 4 : 8;
    static final int KR = 16 * RPT;
    static final String KNN_KERNEL = RPT == 4 ? "tsne_knn_tile" : "tsne_knn_tile8";
    static final int KD = 32;
    static final int KNN_THREADS = 256;
    static final int AFF_THREADS = 64;
    // (these sizes: include/layout/tsne.cuh, TSNE_KNN_* and TSNE_AFF_*; TsneKernelLayoutTest)
    /** Device bytes per chunk of queries (data + lists) and per chunk of references; tests shrink it. */
    static long chunkBytes = 1L << 30;

    private TsneAffinitiesGpu() {
    }

    /** Dynamic shared memory of tsne_knn_tile for k neighbours (query tile staged per chunk of KD dimensions). */
    static int knnSharedBytes(int k) {
        return knnSharedBytes(k, KD);
    }

    /** Dynamic shared memory of tsne_knn_tile with qDims dimensions of the query tile in shared memory. */
    static int knnSharedBytes(int k, int qDims) {
        long b = 4L * ((long) qDims * (KQ + 4) + KD * (KR + 4) + KQ * (KR + 1)) + 8L * KQ * k;
        return (int) Math.min(Integer.MAX_VALUE, b);
    }

    /** Dynamic shared memory of tsne_aff_cond for k neighbours: the block's k distances per row as floats. */
    static long affSharedBytes(int k) {
        return 4L * AFF_THREADS * k;
    }

    /** The exact kNN kernels' dynamic shared memory: the query tile resident (all d) or staged per KD dimensions. */
    static int knnSharedBytes(int k, int d, boolean resident) {
        return resident ? knnSharedBytes(k, (d + KD - 1) / KD * KD) : knnSharedBytes(k);
    }

    /** Whether the whole query tile (d rounded up to KD) fits in shared memory next to the rest. */
    static boolean queryResident(CudaDevice dev, int d, int k) {
        int qDims = (d + KD - 1) / KD * KD;
        return knnSharedBytes(k, qDims) <= dev.maxSharedMemoryOptin() - 1024;
    }

    static boolean knnFits(CudaDevice dev, int k) {
        return knnSharedBytes(k) <= dev.maxSharedMemoryOptin() - 1024
                && affSharedBytes(k) <= dev.maxSharedMemoryOptin();
    }

    /** src[from, from + count) to the start of dst; from and count are array positions (they fit an int). */
    static void upload(DeviceBuffer dst, float[] src, long from, long count, GpuStream s) {
        dst.upload(src, Math.toIntExact(from), Math.toIntExact(count), 0, s);
    }

    private static void upload(DeviceBuffer dst, int[] src, long from, long count, GpuStream s) {
        dst.upload(src, Math.toIntExact(from), Math.toIntExact(count), 0, s);
    }

    static KnnGraph knnBlock(CudaDevice dev, float[] query, int queryOffset, int nq, float[] ref, int refOffset,
            int nr, int d, int k, int n) {
        int c = candidates(k, nr);
        if (useTensorCores(dev, d, k, c, nr)) {
            return knnTensorCores(dev, query, queryOffset, nq, ref, refOffset, nr, d, k, n, c);
        }
        return knnExact(dev, query, queryOffset, null, nq, ref, refOffset, nr, d, k, n);
    }

    /**
     * The exact kernel (tsne_knn_tile / tsne_knn_tile8) on queries queryOffset.. (qIdx null) or on gathered query
     * rows whose global indices are qIdx (tsne_knn_tile8_idx).
     */
    private static KnnGraph knnExact(CudaDevice dev, float[] query, int queryOffset, int[] qIdx, int nq, float[] ref,
            int refOffset, int nr, int d, int k, int n) {
        int[] index = new int[nq * k];
        float[] dist2 = new float[nq * k];
        Arrays.fill(index, -1);
        Arrays.fill(dist2, Float.POSITIVE_INFINITY);
        if (nr == 0) {
            return new KnnGraph(n, queryOffset, nq, k, index, dist2);
        }
        final boolean resident = queryResident(dev, d, k);
        final int shared = knnSharedBytes(k, d, resident);
        long qRowBytes = 4L * d + 8L * k;
        int qChunk = (int) Math.max(KQ, Math.min(nq, chunkBytes / qRowBytes / KQ * KQ));
        qChunk = Math.min(qChunk, nq);
        int rChunk = (int) Math.max(KR, Math.min(nr, chunkBytes / (4L * d) / KR * KR));
        rChunk = Math.min(rChunk, nr);
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dq = DeviceBuffer.allocate(dev, 4L * qChunk * d);
             DeviceBuffer dr = DeviceBuffer.allocate(dev, 4L * rChunk * d);
             DeviceBuffer dd = DeviceBuffer.allocate(dev, 4L * qChunk * k);
             DeviceBuffer di = DeviceBuffer.allocate(dev, 4L * qChunk * k);
             DeviceBuffer dqi = DeviceBuffer.allocate(dev, qIdx == null ? 0 : 4L * qChunk)) {
            boolean refResident = rChunk == nr;
            if (refResident) {
                upload(dr, ref, 0, (long) nr * d, s);
            }
            for (int q0 = 0; q0 < nq; q0 += qChunk) {
                int qm = Math.min(qChunk, nq - q0);
                upload(dq, query, (long) q0 * d, (long) qm * d, s);
                if (qIdx != null) {
                    upload(dqi, qIdx, q0, qm, s);
                }
                upload(dd, dist2, (long) q0 * k, (long) qm * k, s);
                upload(di, index, (long) q0 * k, (long) qm * k, s);
                for (int r0 = 0; r0 < nr; r0 += rChunk) {
                    int rm = Math.min(rChunk, nr - r0);
                    if (!refResident) {
                        upload(dr, ref, (long) r0 * d, (long) rm * d, s);
                    }
                    if (qIdx == null) {
                        KernelLauncher.launch(s, TsneAffinities.MODULE, KNN_KERNEL, (qm + KQ - 1) / KQ, KNN_THREADS,
                                shared, dq, qm, queryOffset + q0, dr, rm, refOffset + r0, d, k, resident ? 1 : 0, dd,
                                di);
                    } else {
                        KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_tile8_idx", (qm + KQ - 1) / KQ,
                                KNN_THREADS, shared, dq, qm, dqi, dr, rm, refOffset + r0, d, k, resident ? 1 : 0, dd,
                                di);
                    }
                    if (!refResident) {
                        s.synchronize("tsne_knn_tile"); // dr is overwritten by the next chunk's upload
                    }
                }
                cuMemcpyDtoHAsync(Pointer.to(dist2).withByteOffset((long) q0 * k * Sizeof.FLOAT), dd.pointer(),
                        (long) qm * k * Sizeof.FLOAT, s.handle());
                cuMemcpyDtoHAsync(Pointer.to(index).withByteOffset((long) q0 * k * Sizeof.INT), di.pointer(),
                        (long) qm * k * Sizeof.INT, s.handle());
                s.synchronize("tsne_knn_tile");
            }
        }
        return new KnnGraph(n, queryOffset, nq, k, index, dist2);
    }

    // ------------------------------------------------------------------ tensor-core kNN (filter + exact re-rank)

    /**
     * System property {@code sparkgpu.tsne.knnTensorCores=true} turns the tensor-core filter on (off by default: on
     * the H200 it certified every query of 10^6 x 50 blobs but took 20.8 s against the exact kernel's 7.6 s, its
     * shared memory holding it to one block per SM; BENCHMARKS.md).
     */
    static volatile boolean tensorCores = "true".equals(System.getProperty("sparkgpu.tsne.knnTensorCores"));
    /** Extra candidates per query beyond k (system property {@code sparkgpu.tsne.knnMargin}; -1: max(16, k / 2)). */
    static int margin = Integer.getInteger("sparkgpu.tsne.knnMargin", -1);
    static final int TC_KR = 128;
    static final int TC_RLD = 36;
    static final int TC_DLD = 132;
    // (include/layout/tsne.cuh TSNE_TC_*; AffinityKernelLayout)
    /** Queries the last tensor-core kNN call could not certify and re-ran exactly (tests, benchmarks). */
    static volatile long lastUncertified;
    /** Queries of the last tensor-core kNN call (0: the exact kernel ran). */
    static volatile long lastTensorCoreQueries;

    /** Candidates kept per query by the filter. */
    static int candidates(int k, int nr) {
        int m = margin >= 0 ? margin : Math.max(16, k / 2);
        return (int) Math.min((long) k + m, Math.max(k, nr));
    }

    /** Dynamic shared memory of tsne_knn_tc: query tiles (hi, lo: [64][qDims + 4]), the staging/dot tile, lists. */
    static long tcSharedBytes(int c, int qDims) {
        long tile = Math.max(2L * TC_KR * TC_RLD, (long) KQ * TC_DLD);
        return 4L * (2L * KQ * (qDims + 4) + tile) + 8L * KQ * c;
    }

    /**
     * The filter runs on sm_80+ (TF32 tensor cores), with the default 128-reference exact kernel for re-runs, when
     * its lists fit in shared memory and there are clearly more references than candidates.
     */
    static boolean useTensorCores(CudaDevice dev, int d, int k, int c, int nr) {
        return tensorCores && RPT == 8 && dev.computeCapability() >= 80 && nr > 2L * c
                && tcSharedBytes(c, KD) <= dev.maxSharedMemoryOptin() - 1024 - 1024;
    }

    /** Mean of (at most 4096, evenly strided) reference rows: the filter's centre (any centre gives exact results). */
    static float[] centre(float[] ref, int nr, int d) {
        double[] sum = new double[d];
        int step = Math.max(1, nr / 4096);
        int cnt = 0;
        for (int r = 0; r < nr; r += step) {
            for (int t = 0; t < d; t++) {
                sum[t] += ref[r * d + t];
            }
            cnt++;
        }
        float[] mu = new float[d];
        for (int t = 0; t < d; t++) {
            mu[t] = (float) (sum[t] / Math.max(1, cnt));
        }
        return mu;
    }

    /**
     * kNN by the 3xTF32 filter (C candidates per query, tsne_knn_tc), the exact re-rank (tsne_knn_cand_exact,
     * tsne_knn_final) and an exact re-run of the queries the bound cannot certify ({@link TsneKnnBound}); bitwise
     * the CPU twin's graph.
     */
    static KnnGraph knnTensorCores(CudaDevice dev, float[] query, int queryOffset, int nq, float[] ref, int refOffset,
            int nr, int d, int k, int n, int c) {
        final TsneKnnBound b = new TsneKnnBound(d);
        final int dp = b.dp;
        final float[] mu = centre(ref, nr, d);
        final long optin = dev.maxSharedMemoryOptin() - 2048;
        final boolean resident = tcSharedBytes(c, dp) <= optin;
        final int shared = (int) tcSharedBytes(c, resident ? dp : KD);
        int[] index = new int[nq * k];
        float[] dist2 = new float[nq * k];
        int[] flag = new int[nq];
        long qRowBytes = 4L * d + 8L * dp + 8 + 12L * c + 8L * k + 4;
        int qChunk = (int) Math.min(nq, Math.max(KQ, chunkBytes / qRowBytes / KQ * KQ));
        long rRowBytes = 4L * d + 8L * dp + 8;
        int rChunk = (int) Math.min(nr, Math.max(TC_KR, chunkBytes / rRowBytes / TC_KR * TC_KR));
        final boolean refResident = rChunk == nr;
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dmu = DeviceBuffer.allocate(dev, 4L * d);
             DeviceBuffer dxq = DeviceBuffer.allocate(dev, 4L * qChunk * d);
             DeviceBuffer dzq = DeviceBuffer.allocate(dev, 4L * qChunk * dp);
             DeviceBuffer dlq = DeviceBuffer.allocate(dev, 4L * qChunk * dp);
             DeviceBuffer dnq = DeviceBuffer.allocate(dev, 4L * qChunk);
             DeviceBuffer dmq = DeviceBuffer.allocate(dev, 4L * qChunk);
             DeviceBuffer dxr = DeviceBuffer.allocate(dev, 4L * rChunk * d);
             DeviceBuffer dzr = DeviceBuffer.allocate(dev, 4L * rChunk * dp);
             DeviceBuffer dlr = DeviceBuffer.allocate(dev, 4L * rChunk * dp);
             DeviceBuffer dnr = DeviceBuffer.allocate(dev, 4L * rChunk);
             DeviceBuffer dmr = DeviceBuffer.allocate(dev, 4L * rChunk);
             DeviceBuffer dK = DeviceBuffer.allocate(dev, 4L * qChunk * c);
             DeviceBuffer dI = DeviceBuffer.allocate(dev, 4L * qChunk * c);
             DeviceBuffer dD = DeviceBuffer.allocate(dev, 4L * qChunk * c);
             DeviceBuffer dLD = DeviceBuffer.allocate(dev, 4L * qChunk * k);
             DeviceBuffer dLI = DeviceBuffer.allocate(dev, 4L * qChunk * k);
             DeviceBuffer dF = DeviceBuffer.allocate(dev, 4L * qChunk)) {
            upload(dmu, mu, 0, d, s);
            if (refResident) {
                upload(dxr, ref, 0, (long) nr * d, s);
                prep(s, dxr, nr, d, dmu, dp, b.cm, dzr, dlr, dnr, dmr);
            }
            for (int q0 = 0; q0 < nq; q0 += qChunk) {
                int qm = Math.min(qChunk, nq - q0);
                upload(dxq, query, (long) q0 * d, (long) qm * d, s);
                prep(s, dxq, qm, d, dmu, dp, b.cm, dzq, dlq, dnq, dmq);
                KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_fill", gridFor(dev, (long) qm * c), 256, 0,
                        dK, dI, (long) qm * c);
                for (int pass = 0; pass < 2; pass++) { // 0: filter over all reference chunks, 1: exact candidates
                    for (int r0 = 0; r0 < nr; r0 += rChunk) {
                        int rm = Math.min(rChunk, nr - r0);
                        if (!refResident) {
                            s.synchronize("tsne_knn_tc"); // the previous chunk's kernels are done with dxr/dzr
                            upload(dxr, ref, (long) r0 * d, (long) rm * d, s);
                            if (pass == 0) {
                                prep(s, dxr, rm, d, dmu, dp, b.cm, dzr, dlr, dnr, dmr);
                            }
                        }
                        if (pass == 0) {
                            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_tc", (qm + KQ - 1) / KQ,
                                    KNN_THREADS, shared, dzq, dlq, dnq, qm, queryOffset + q0, dzr, dlr, dmr, rm,
                                    refOffset + r0, dp, c, resident ? 1 : 0, dK, dI);
                        } else {
                            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_cand_exact",
                                    gridFor(dev, (long) qm * c), 256, 0, dxq, qm, dxr, rm, refOffset + r0, d, c, dI,
                                    dD);
                        }
                    }
                }
                KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_final", (qm + 7) / 8, 256, 0, dK, dI, dD,
                        dnq, qm, c, k, b.c3, b.g, b.absSlack, dLD, dLI, dF);
                cuMemcpyDtoHAsync(Pointer.to(dist2).withByteOffset((long) q0 * k * Sizeof.FLOAT), dLD.pointer(),
                        (long) qm * k * Sizeof.FLOAT, s.handle());
                cuMemcpyDtoHAsync(Pointer.to(index).withByteOffset((long) q0 * k * Sizeof.INT), dLI.pointer(),
                        (long) qm * k * Sizeof.INT, s.handle());
                cuMemcpyDtoHAsync(Pointer.to(flag).withByteOffset((long) q0 * Sizeof.INT), dF.pointer(),
                        (long) qm * Sizeof.INT, s.handle());
                s.synchronize("tsne_knn_final");
            }
        }
        int bad = 0;
        for (int f : flag) {
            bad += f;
        }
        lastTensorCoreQueries = nq;
        lastUncertified = bad;
        LOG.info("spark-gpu t-SNE kNN on tensor cores (3xTF32 filter, {} candidates for k={}, d={}): {} of {} queries "
                + "not certified, re-run exactly", c, k, d, bad, nq);
        if (bad > 0) {
            rerunExact(dev, query, queryOffset, nq, flag, bad, ref, refOffset, nr, d, k, n, index, dist2);
        }
        return new KnnGraph(n, queryOffset, nq, k, index, dist2);
    }

    /** The flagged queries again with the exact kernel (gathered), their rows copied into index/dist2. */
    private static void rerunExact(CudaDevice dev, float[] query, int queryOffset, int nq, int[] flag, int bad,
            float[] ref, int refOffset, int nr, int d, int k, int n, int[] index, float[] dist2) {
        float[] sub = new float[bad * d];
        int[] gIdx = new int[bad];
        int[] rows = new int[bad];
        int f = 0;
        for (int q = 0; q < nq; q++) {
            if (flag[q] != 0) {
                System.arraycopy(query, q * d, sub, f * d, d);
                gIdx[f] = queryOffset + q;
                rows[f++] = q;
            }
        }
        KnnGraph g = knnExact(dev, sub, 0, gIdx, bad, ref, refOffset, nr, d, k, n);
        for (int e = 0; e < bad; e++) {
            System.arraycopy(g.index, e * k, index, rows[e] * k, k);
            System.arraycopy(g.dist2, e * k, dist2, rows[e] * k, k);
        }
    }

    private static void prep(GpuStream s, DeviceBuffer x, int rows, int d, DeviceBuffer mu, int dp, float cm,
            DeviceBuffer zhi, DeviceBuffer zlo, DeviceBuffer nrm, DeviceBuffer mnrm) {
        KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_prep", gridFor(s.device(), rows), 256, 0, x, rows, d,
                mu, dp, cm, zhi, zlo, nrm, mnrm);
    }

    /** Grid of a grid-stride kernel of 256 threads over count items. */
    static int gridFor(CudaDevice dev, long count) {
        return (int) Math.max(1, Math.min(dev.multiprocessors() * 16L, (count + 255) / 256));
    }

    /** Runs tsne_aff_cond on all rows of g; fills out (rows x k) and returns the per-row status. */
    static int[] conditional(CudaDevice dev, KnnGraph g, double target, double[] out) {
        final int rows = g.rows;
        final int k = g.k;
        int[] status = new int[rows];
        long rowBytes = 4L * k + 8L * k + 4;
        int chunk = (int) Math.max(AFF_THREADS, Math.min(rows, chunkBytes / rowBytes / AFF_THREADS * AFF_THREADS));
        chunk = Math.min(chunk, rows);
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dd = DeviceBuffer.allocate(dev, 4L * chunk * k);
             DeviceBuffer dp = DeviceBuffer.allocate(dev, 8L * chunk * k);
             DeviceBuffer ds = DeviceBuffer.allocate(dev, 4L * chunk)) {
            for (int r0 = 0; r0 < rows; r0 += chunk) {
                int rm = Math.min(chunk, rows - r0);
                upload(dd, g.dist2, (long) r0 * k, (long) rm * k, s);
                launchConditional(s, dd, rm, k, target, dp, ds);
                cuMemcpyDtoHAsync(Pointer.to(out).withByteOffset((long) r0 * k * Sizeof.DOUBLE), dp.pointer(),
                        (long) rm * k * Sizeof.DOUBLE, s.handle());
                cuMemcpyDtoHAsync(Pointer.to(status).withByteOffset((long) r0 * Sizeof.INT), ds.pointer(),
                        (long) rm * Sizeof.INT, s.handle());
                s.synchronize("tsne_aff_cond");
            }
        }
        return status;
    }

    /** Queues tsne_aff_cond on {@code rows} rows of k squared distances (dd): p_{j|i} into dp, the status into ds. */
    private static void launchConditional(GpuStream s, DeviceBuffer dd, int rows, int k, double target,
            DeviceBuffer dp, DeviceBuffer ds) {
        KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_aff_cond", (rows + AFF_THREADS - 1) / AFF_THREADS,
                AFF_THREADS, (int) affSharedBytes(k), dd, rows, k, target, TsneAffinities.ENTROPY_TOL,
                TsneAffinities.ENTROPY_FAIL, TsneAffinities.MAX_STEPS, dp, ds);
    }

    static final int SYM_THREADS = 128; // include/layout/tsne.cuh TSNE_SYM_THREADS
    /** Incoming entries of a row the sort keeps in shared memory (more: sorted in global memory, slower). */
    static final int SYM_CAP = 2048;

    /**
     * P = (P_cond + P_cond^T) / (2n) on the device (kernels tsne_sym_count, tsne_sym_fill, tsne_sym_sort,
     * tsne_sym_write): the bits of {@link JointProbabilities#symmetrize} (g holds all n rows). The two exclusive
     * scans (incoming entries per row, union entries per row) run here on the host ({@link #offsets}).
     */
    static SparseRows symmetrize(CudaDevice dev, KnnGraph g, double[] pcond) {
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dP = DeviceBuffer.allocate(dev, 8L * g.n * g.k)) {
            cuMemcpyHtoDAsync(dP.pointer(), Pointer.to(pcond), 8L * g.n * g.k, s.handle());
            return symmetrize(s, g, dP);
        }
    }

    /** The calibrated and symmetrised affinities of the whole graph g, and the search status of each row. */
    record Joint(SparseRows p, int[] status) {
    }

    /**
     * {@link #conditional} then {@link #symmetrize} with p_{j|i} kept on the device between them (no download and
     * upload of the n x k doubles); the same kernels, so the same bits. g holds all n rows.
     */
    static Joint joint(CudaDevice dev, KnnGraph g, double target) {
        final int n = g.n;
        final int k = g.k;
        final long nk = (long) n * k;
        int[] status = new int[n];
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dP = DeviceBuffer.allocate(dev, 8L * nk)) {
            try (DeviceBuffer dd = DeviceBuffer.allocate(dev, 4L * nk);
                 DeviceBuffer ds = DeviceBuffer.allocate(dev, 4L * Math.max(1, n))) {
                upload(dd, g.dist2, 0, nk, s);
                launchConditional(s, dd, n, k, target, dP, ds);
                ds.download(status, n, s);
                s.synchronize("tsne_aff_cond");
            }
            for (int st : status) {
                if (st != 0) {
                    return new Joint(null, status); // the caller reports the row
                }
            }
            return new Joint(symmetrize(s, g, dP), status);
        }
    }

    /** {@link #symmetrize} of the p_{j|i} already on the device (dP, n x k doubles), on stream s. */
    private static SparseRows symmetrize(GpuStream s, KnnGraph g, DeviceBuffer dP) {
        final CudaDevice dev = s.device();
        final int n = g.n;
        final int k = g.k;
        final long nk = (long) n * k;
        final int grid = (int) Math.max(1, Math.min(dev.multiprocessors() * 8L, (nk + 255) / 256));
        try (DeviceBuffer dIdx = DeviceBuffer.allocate(dev, 4L * nk);
             DeviceBuffer dCnt = DeviceBuffer.allocate(dev, 4L * (n + 1));
             DeviceBuffer dInPtr = DeviceBuffer.allocate(dev, 4L * (n + 1));
             DeviceBuffer dInCol = DeviceBuffer.allocate(dev, 4L * nk);
             DeviceBuffer dInVal = DeviceBuffer.allocate(dev, 8L * nk);
             DeviceBuffer dOrd = DeviceBuffer.allocate(dev, 4L * nk)) {
            upload(dIdx, g.index, 0, nk, s);
            dCnt.zero(s);
            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_sym_count", grid, 256, 0, dIdx, nk, dCnt);
            int[] cnt = new int[n];
            dCnt.download(cnt, n, s);
            s.synchronize("tsne_sym_count");
            int[] inPtr = toInts(offsets(cnt), "incoming affinities");
            dInPtr.upload(inPtr, s);
            dCnt.upload(inPtr, 0, n, 0, s); // the fill cursors start at each row's offset
            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_sym_fill", grid, 256, 0, dIdx, dP, nk, k, dCnt,
                    dInCol, dInVal);
            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_sym_sort", n, SYM_THREADS, 8 * k, dIdx, k, dInPtr,
                    dInCol, dInVal, dOrd, dCnt);
            dCnt.download(cnt, n, s);
            s.synchronize("tsne_sym_sort");
            long[] rowPtr = offsets(cnt);
            int[] rowPtrInt = toInts(rowPtr, "symmetrised affinities");
            int nnz = rowPtrInt[n];
            int[] col = new int[nnz];
            double[] val = new double[nnz];
            try (DeviceBuffer dRow = DeviceBuffer.allocate(dev, 8L * (n + 1));
                 DeviceBuffer dCol = DeviceBuffer.allocate(dev, 4L * nnz);
                 DeviceBuffer dVal = DeviceBuffer.allocate(dev, 8L * nnz)) {
                dRow.upload(rowPtr, s);
                KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_sym_write", n, SYM_THREADS, 4 * (2 * k + 1), dIdx, dP,
                        k, dInPtr, dInCol, dInVal, dOrd, dRow, 2.0 * n, dCol, dVal);
                dCol.download(col, nnz, s);
                dVal.download(val, nnz, s);
                s.synchronize("tsne_sym_write");
            }
            return new SparseRows(n, 0, n, rowPtrInt, col, val);
        }
    }

    /** Exclusive prefix sums of counts (length counts.length + 1). */
    static long[] offsets(int[] counts) {
        long[] out = new long[counts.length + 1];
        for (int i = 0; i < counts.length; i++) {
            out[i + 1] = out[i] + counts[i];
        }
        return out;
    }

    /** The offsets as ints; more entries than one Java array holds is an error naming what. */
    static int[] toInts(long[] offsets, String what) {
        long total = offsets[offsets.length - 1];
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(total + " " + what + " exceed one Java array; lower k or n");
        }
        int[] out = new int[offsets.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = (int) offsets[i];
        }
        return out;
    }

    /** exp and log of each x on the device (kernel tsne_aff_math), for the twin tests: {exp..., log...}. */
    static double[][] math(CudaDevice dev, double[] x) {
        double[] ex = new double[x.length];
        double[] lg = new double[x.length];
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dx = DeviceBuffer.ofDoubles(dev, x.length);
             DeviceBuffer de = DeviceBuffer.ofDoubles(dev, x.length);
             DeviceBuffer dl = DeviceBuffer.ofDoubles(dev, x.length)) {
            dx.upload(x, s);
            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_aff_math", Math.max(1, (x.length + 255) / 256), 256,
                    0, dx, x.length, de, dl);
            de.download(ex, x.length, s);
            dl.download(lg, x.length, s);
            s.synchronize("tsne_aff_math");
        }
        return new double[][] {ex, lg};
    }
}
