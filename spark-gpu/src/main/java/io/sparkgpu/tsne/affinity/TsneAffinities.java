package io.sparkgpu.tsne.affinity;

import io.sparkgpu.common.DetMath;
import io.sparkgpu.common.ParallelScan;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import io.sparkgpu.tsne.TsneConfig;
import java.util.Arrays;

/**
 * kNN graph and perplexity-calibrated affinities (local, one process): the dispatcher of phases
 * {@value #KNN_PHASE} and {@value #AFFINITIES_PHASE}, whose CPU twins are {@link TsneAffinitiesCpu} and GPU side
 * {@link TsneAffinitiesGpu}; P from them (or from weighted edges) is {@link JointProbabilities}. The distributed
 * version is {@link TsneAffinitiesSpark}; it produces exactly the same bits for any partitioning.
 *
 * <h2>Pipeline</h2>
 * <pre>{@code
 * KnnGraph g = TsneAffinities.knn(x, n, d, k, backend);              // exact kNN, k = TsneConfig.defaultK usually
 * double[] pc = TsneAffinities.conditional(g, perplexity, backend);  // p_{j|i}, rows of g x k
 * SparseRows p = TsneAffinities.symmetrize(g, pc, backend, null);    // P = (P_cond + P_cond^T) / (2n)
 * SparseRows p = TsneAffinities.joint(g, perplexity, backend, null); // the two above in one step (the fit's
 *                                                                    // call: p_{j|i} stays on the device)
 * }</pre>
 *
 * <h2>Arithmetic (identical on the CPU twin and the GPU)</h2>
 * <ul>
 * <li>Squared distance of float rows a, b: {@code acc = 0f; for t in 0..d-1: diff = a[t] - b[t];
 * acc = fma(diff, diff, acc)} (float, each step correctly rounded, dimension order; Math.fma on the CPU,
 * __fmaf_rn on the GPU). Neighbours are ordered by (dist2, index); the point itself is never its own
 * neighbour (but an exact duplicate at another index is, at distance 0).</li>
 * <li>Bandwidths: per row a bisection on beta (see {@link #conditional}) with the deterministic
 * {@link DetMath#exp}/{@link DetMath#log}, every double operation correctly rounded in the same order on both
 * sides.</li>
 * </ul>
 *
 * <h2>Partial graphs</h2>
 * {@link #knnBlock} against a reference block with fewer than k candidates pads each row's tail with index -1
 * and dist2 +Infinity; {@link #merge} removes the padding as real neighbours arrive (-1 sorts after every real
 * index: indices compare as unsigned). {@link #conditional} refuses graphs that still hold padding.
 *
 * <h2>Backends</h2>
 * {@code GPU}: the {@code tsne} kernels on the device of the
 * current Spark task's {@code gpu} resource (else {@code spark.sparkgpu.device}, else 0); {@code CPU}: the Java
 * twin (multi-threaded over rows); {@code AUTO}: the GPU when usable, else the twin, also when the GPU fails part-way
 * ({@link BackendChooser#run}: phases {@value #KNN_PHASE} and {@value #AFFINITIES_PHASE}). Results are bitwise equal.
 * The GPU kNN keeps each block's top-k lists in shared memory, so it supports k up to about 330 on an H100
 * (k &gt; that: {@code AUTO} falls back to the twin with a warning, {@code GPU} throws); inputs are chunked to
 * at most 1 GiB of device memory per chunk of queries and of references.
 *
 * <h2>kNN over cells</h2>
 * {@link #knn} of at least {@link KnnCells#minPoints} (50,000) points runs {@link KnnCells}: the points grouped into
 * cells, each cell's points scanning their own and the nearest cells, then every cell a triangle-inequality bound
 * cannot exclude ({@code tsne_knn_cells}, the arithmetic below); the lists are the brute force's bit for bit on both
 * backends, and clustered data skips most pairs. On the GPU it keeps the points and lists of the whole set on the
 * device (the points uploaded once; their cell order gathered and the lists put back in point order there); when
 * they do not fit (80% of the device, or the memory budget) the brute force below runs in chunks.
 * {@link #knnApproximate} scans a fixed number of cells (no bound): faster, with a recall below 1.
 *
 * <h2>GPU kNN kernels</h2>
 * On sm_80+ (tensor cores) with more than 2C references: a 3xTF32 tensor-core filter ({@code tsne_knn_tc}) keeps
 * C = k + max(16, k/2) candidates per query (system property {@code sparkgpu.tsne.knnMargin} sets C - k) ranked by
 * a key whose error bound ({@link TsneKnnBound}) makes key - c ||y_q||^2 a lower bound of the squared distance; the
 * candidates are re-ranked with the exact arithmetic above ({@code tsne_knn_cand_exact}, {@code tsne_knn_final}),
 * and a query whose k-th exact distance is not below the bound for the references left out is re-run with the
 * exact kernel ({@code tsne_knn_tile8_idx}). So the graph is the twin's, bit for bit, whatever the data; only the
 * time depends on how many queries the bound certifies (logged). Other devices, or
 * {@code -Dsparkgpu.tsne.knnTensorCores=true} turns the tensor-core filter on; by default the exact kernel
 * ({@code tsne_knn_tile8}) runs alone, as the filter measured slower (BENCHMARKS.md).
 * Symmetrisation ({@link #symmetrize}, phase {@value #SYMMETRIZE_PHASE}) runs as {@code tsne_sym_*}, the same bits
 * as {@link JointProbabilities#symmetrize}.
 *
 * <h2>Cost (H100, one GPU; 20 Gaussian clusters, k = 90, perplexity 30)</h2>
 * Before the tensor-core filter and the GPU symmetrisation: 70,000 x 784: knn 0.69 s, conditional 0.06 s,
 * symmetrize 0.7 s (CPU, 16 cores). 1,000,000 x 50: knn 7.2 s, conditional 0.7 s, symmetrize 3.7 s. Now (H200, 10
 * blobs, BENCHMARKS.md): 1,000,000 x 50: kNN over cells 1.9 s, {@link #joint} 1.0 s. Memory: the graph is 8 n k
 * bytes, P about 1.7 x 12 n k bytes; the GPU symmetrisation needs about 40 n k bytes of device memory.
 */
public final class TsneAffinities {

    /** Kernel module and the kernel that proves it loads. */
    static final String MODULE = "tsne";

    static final String PROBE_KERNEL = "tsne_knn_tile";

    /** Phase names of the kNN and of the perplexity calibration (logs, errors, {@link BackendUsage}, test faults). */
    public static final String KNN_PHASE = "t-SNE kNN";

    public static final String AFFINITIES_PHASE = "t-SNE affinities";

    public static final String SYMMETRIZE_PHASE = "t-SNE symmetrize";

    /** Bisection stops when |H - ln(perplexity)| is at most this (H in nats). */
    static final double ENTROPY_TOL = 1e-10;

    /** Bisection steps at most (doubling plus halving; double precision is reached well before). */
    static final int MAX_STEPS = 200;

    /** A row that ends further than this from the target entropy is an error (never seen in practice). */
    static final double ENTROPY_FAIL = 1e-7;

    private TsneAffinities() {
    }

    // ------------------------------------------------------------------------------------------------ kNN

    /**
     * Exact k nearest neighbours of all n rows of x (row-major n x d floats), self excluded, ordered by
     * (dist2, index).
     *
     * @param k 1 &lt;= k &lt;= n - 1
     * @throws IllegalArgumentException for bad sizes, k out of range or non-finite values (naming the row)
     */
    public static KnnGraph knn(float[] x, int n, int d, int k, Backend backend) {
        return knn(x, n, d, k, backend, null);
    }

    /** {@link #knn}, recording where it ran in {@code usage} (null: not recorded). */
    public static KnnGraph knn(float[] x, int n, int d, int k, Backend backend, BackendUsage usage) {
        if (n < 2) {
            throw new IllegalArgumentException("kNN needs at least 2 points, got n=" + n);
        }
        TsneConfig.checkNeighbourCount(k, n);
        if (n < KnnCells.minPoints) {
            return knnBlock(x, 0, n, x, 0, n, d, k, n, backend, usage);
        }
        checkShape(x, 0, n, x, 0, n, d, k, n);
        // the input check for non-finite values runs on the device over the copy the cells' path makes anyway
        BackendChooser.Ran<KnnGraph> r = BackendChooser.run(backend, MODULE, PROBE_KERNEL, KNN_PHASE, dev -> {
            requireKnnFits(dev, k);
            if (KnnCells.fitsDevice(dev, n, d, k)) {
                return KnnCells.exactGpu(dev, x, n, d, k);
            }
            checkFinite(x, 0, d);
            return TsneAffinitiesGpu.knnBlock(dev, x, 0, n, x, 0, n, d, k, n);
        }, () -> {
            checkFinite(x, 0, d);
            return KnnCells.exactCpu(x, n, d, k);
        });
        BackendUsage.recordIfAny(usage, KNN_PHASE, r);
        return r.value;
    }

    /** Pairs scanned by the last exact kNN over cells, {round 1, round 2} (benchmarks, logs). */
    public static long[] lastKnnCellPairs() {
        return new long[] {KnnCells.lastPairsRound1, KnnCells.lastPairsRound2};
    }

    /**
     * Approximate k nearest neighbours of all n rows (the option {@code knnProbes} of t-SNE): the points are grouped
     * in about n / 2048 cells ({@link KnnCells}) and each point's neighbours are searched only in its cell and the
     * {@code probes - 1} cells whose centres are nearest to its cell's (more when those hold fewer than k + 1
     * points). Each found neighbour is a true distance with the exact arithmetic, so the lists are ordered as
     * {@link #knn}'s; a true neighbour in a cell not probed is missed (recall below 1). The GPU and the CPU twin give
     * the same bits. {@code probes} at least the number of cells gives {@link #knn}'s lists.
     *
     * @param probes cells searched per point, >= 1
     */
    public static KnnGraph knnApproximate(float[] x, int n, int d, int k, int probes, Backend backend,
            BackendUsage usage) {
        if (n < 2) {
            throw new IllegalArgumentException("kNN needs at least 2 points, got n=" + n);
        }
        TsneConfig.checkNeighbourCount(k, n);
        TsneConfig.checkKnnProbes(probes);
        checkShape(x, 0, n, x, 0, n, d, k, n);
        BackendChooser.Ran<KnnGraph> r = BackendChooser.run(backend, MODULE, PROBE_KERNEL, KNN_PHASE, dev -> {
            requireKnnFits(dev, k);
            DeviceMemoryBudget.check("t-SNE approximate kNN of " + n + " x " + d + " points",
                    KnnCells.deviceBytes(n, d, k, KnnCells.cellCount(n)));
            return KnnCells.approximateGpu(dev, x, n, d, k, probes); // checks for non-finite values on the device
        }, () -> {
            checkFinite(x, 0, d);
            return KnnCells.approximateCpu(x, n, d, k, probes);
        });
        BackendUsage.recordIfAny(usage, KNN_PHASE, r);
        return r.value;
    }

    /**
     * kNN of the query rows (global indices queryOffset..queryOffset+nq-1) among the reference rows (global
     * indices refOffset..refOffset+nr-1), self excluded (a reference row with the query's global index is
     * skipped); n is the total number of points. Rows with fewer than k candidates are padded with index -1 /
     * dist2 +Infinity. Combine the results for several disjoint reference blocks with {@link #merge}: merging
     * the blocks of a partition of 0..n-1 gives exactly {@link #knn}'s rows.
     */
    public static KnnGraph knnBlock(float[] query, int queryOffset, int nq, float[] ref, int refOffset, int nr,
            int d, int k, int n, Backend backend) {
        return knnBlock(query, queryOffset, nq, ref, refOffset, nr, d, k, n, backend, null);
    }

    /** {@link #knnBlock}, recording where it ran in {@code usage} (null: not recorded). */
    public static KnnGraph knnBlock(float[] query, int queryOffset, int nq, float[] ref, int refOffset, int nr,
            int d, int k, int n, Backend backend, BackendUsage usage) {
        checkBlock(query, queryOffset, nq, ref, refOffset, nr, d, k, n);
        if (nq == 0) {
            return new KnnGraph(n, queryOffset, 0, k, new int[0], new float[0]);
        }
        BackendChooser.Ran<KnnGraph> r = BackendChooser.run(backend, MODULE, PROBE_KERNEL, KNN_PHASE, dev -> {
            requireKnnFits(dev, k);
            return TsneAffinitiesGpu.knnBlock(dev, query, queryOffset, nq, ref, refOffset, nr, d, k, n);
        }, () -> TsneAffinitiesCpu.knnBlock(query, queryOffset, nq, ref, refOffset, nr, d, k, n));
        BackendUsage.recordIfAny(usage, KNN_PHASE, r);
        return r.value;
    }

    /**
     * The GPU kNN keeps each block's top-k lists in shared memory: a k too large for {@code dev} is a device
     * limit (under {@code auto} the twin runs, under {@code gpu} this error names it).
     */
    private static void requireKnnFits(CudaDevice dev, int k) {
        if (!TsneAffinitiesGpu.knnFits(dev, k)) {
            throw new CudaException("GPU kNN: k=" + k + " neighbours need " + TsneAffinitiesGpu.knnSharedBytes(k)
                    + " B of shared memory per block, more than " + dev + " allows (" + dev.maxSharedMemoryOptin()
                    + " B); lower k");
        }
    }

    static void checkBlock(float[] query, int queryOffset, int nq, float[] ref, int refOffset, int nr, int d,
            int k, int n) {
        checkShape(query, queryOffset, nq, ref, refOffset, nr, d, k, n);
        checkFinite(query, queryOffset, d);
        if (ref != query) {
            checkFinite(ref, refOffset, d);
        }
    }

    /** {@link #checkBlock} but the scan for non-finite values (which the kNN over cells does on the device). */
    private static void checkShape(float[] query, int queryOffset, int nq, float[] ref, int refOffset, int nr, int d,
            int k, int n) {
        if (d < 1) {
            throw new IllegalArgumentException("dimension d must be >= 1, got " + d);
        }
        if (k < 1) {
            throw new IllegalArgumentException("k must be >= 1, got " + k);
        }
        if (nq < 0 || nr < 0 || queryOffset < 0 || refOffset < 0 || (long) queryOffset + nq > n
                || (long) refOffset + nr > n) {
            throw new IllegalArgumentException("blocks out of range: query [" + queryOffset + ", +" + nq + "), ref ["
                    + refOffset + ", +" + nr + ") of n=" + n);
        }
        if ((long) nq * k > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(nq + " query rows x k=" + k + " neighbours exceed one Java array; "
                    + "split the queries into blocks (TsneAffinitiesSpark does) or lower k");
        }
        if (query == null || ref == null || query.length != (long) nq * d || ref.length != (long) nr * d) {
            throw new IllegalArgumentException("point arrays must hold rows x d = " + nq + " x " + d + " and " + nr
                    + " x " + d + " floats, got " + (query == null ? "null" : query.length) + " and "
                    + (ref == null ? "null" : ref.length));
        }
    }

    private static void checkFinite(float[] x, int offset, int d) {
        int i = ParallelScan.firstIndex(x.length, (from, to) -> {
            for (int j = from; j < to; j++) {
                if (!Float.isFinite(x[j])) {
                    return j;
                }
            }
            return -1;
        });
        if (i >= 0) {
            throw nonFinite(x, offset, d, i);
        }
    }

    /** The input error for x[i], the first non-finite value of the rows x holds from row {@code offset} on. */
    static IllegalArgumentException nonFinite(float[] x, int offset, int d, int i) {
        return new IllegalArgumentException("point " + (offset + i / d) + " has a non-finite value " + x[i]
                + " at dimension " + (i % d) + "; t-SNE needs finite features");
    }

    /**
     * Top-k merge of two graphs of the same rows (same n, rowOffset, rows and k), ordered by (dist2, index); an
     * index present in both is kept once. Merging the {@link #knnBlock} results of disjoint reference blocks in
     * any order and grouping gives the kNN over their union.
     */
    public static KnnGraph merge(KnnGraph a, KnnGraph b) {
        if (a.n != b.n || a.rowOffset != b.rowOffset || a.rows != b.rows || a.k != b.k) {
            throw new IllegalArgumentException("cannot merge kNN graphs of different rows: (n=" + a.n + ", rows ["
                    + a.rowOffset + ", +" + a.rows + "), k=" + a.k + ") and (n=" + b.n + ", rows [" + b.rowOffset
                    + ", +" + b.rows + "), k=" + b.k + ")");
        }
        final int k = a.k;
        int[] index = new int[a.rows * k];
        float[] dist2 = new float[a.rows * k];
        for (int r = 0; r < a.rows; r++) {
            int base = r * k;
            int ia = base;
            int ib = base;
            int endA = base + k;
            int endB = base + k;
            for (int m = 0; m < k; m++) {
                float dv;
                int iv;
                boolean takeA = ib >= endB || (ia < endA && !TsneAffinitiesCpu.before(b.dist2[ib], b.index[ib], a.dist2[ia], a.index[ia]));
                if (takeA) {
                    dv = a.dist2[ia];
                    iv = a.index[ia];
                    ia++;
                    if (ib < endB && iv != -1 && b.index[ib] == iv && b.dist2[ib] == dv) {
                        ib++; // same neighbour in both
                    }
                } else {
                    dv = b.dist2[ib];
                    iv = b.index[ib];
                    ib++;
                }
                dist2[base + m] = dv;
                index[base + m] = iv;
            }
        }
        return new KnnGraph(a.n, a.rowOffset, a.rows, k, index, dist2);
    }

    // ------------------------------------------------------------------------------------------- affinities

    /**
     * Conditional affinities p_{j|i} (rows x k, entry r * k + m belongs to g.index[r * k + m]; each row sums to
     * 1 up to rounding). Per row i with squared distances d_m (ascending) the shifted distances
     * s_m = d_m - d_0 are weighted by exp(-beta s_m); beta is found by bisection (starting at 1 / mean(s),
     * doubling until bracketed, then halving) so that the entropy H = ln Z + beta sum(p s) / Z is within
     * 1e-10 of ln(perplexity), i.e. the row's perplexity exp(H) is within 1e-10 * perplexity of the target.
     *
     * @throws IllegalArgumentException when perplexity is not in (1, k), the graph holds padding (-1) or
     *         non-finite distances, or a row cannot reach the perplexity because at least {@code perplexity} of
     *         its neighbours are equally near (e.g. exact duplicates of the point; the message names them)
     */
    public static double[] conditional(KnnGraph g, double perplexity, Backend backend) {
        return conditional(g, perplexity, backend, null);
    }

    /** p_{j|i} and the search status of each row. */
    private record Calibrated(double[] pcond, int[] status) {
    }

    /** {@link #conditional}, recording where it ran in {@code usage} (null: not recorded). */
    public static double[] conditional(KnnGraph g, double perplexity, Backend backend, BackendUsage usage) {
        checkConditional(g, perplexity);
        if (g.rows == 0) {
            return new double[0];
        }
        double target = DetMath.log(perplexity);
        BackendChooser.Ran<Calibrated> ran = BackendChooser.run(backend, MODULE, PROBE_KERNEL, AFFINITIES_PHASE,
                dev -> {
                    requireKnnFits(dev, g.k); // as the kNN: both phases of a graph run on the same backend
                    double[] out = new double[g.rows * g.k];
                    return new Calibrated(out, TsneAffinitiesGpu.conditional(dev, g, target, out));
                }, () -> {
                    double[] out = new double[g.rows * g.k];
                    return new Calibrated(out, TsneAffinitiesCpu.conditional(g, target, out));
                });
        BackendUsage.recordIfAny(usage, AFFINITIES_PHASE, ran);
        checkStatus(g, perplexity, ran.value.status());
        return ran.value.pcond();
    }

    /**
     * P of the whole graph g in one step: {@link #conditional} then {@link #symmetrize}, with the same checks,
     * errors and bits, on one backend (dispatched as phase {@value #AFFINITIES_PHASE}, recorded for both phases).
     * On the GPU p_{j|i} stays on the device between the two (no download and upload of n x k doubles).
     */
    public static SparseRows joint(KnnGraph g, double perplexity, Backend backend, BackendUsage usage) {
        checkConditional(g, perplexity);
        JointProbabilities.checkWhole(g);
        double target = DetMath.log(perplexity);
        BackendChooser.Ran<TsneAffinitiesGpu.Joint> ran = BackendChooser.run(backend, MODULE, PROBE_KERNEL,
                AFFINITIES_PHASE, dev -> {
                    requireKnnFits(dev, g.k); // as the kNN: both phases of a graph run on the same backend
                    return TsneAffinitiesGpu.joint(dev, g, target);
                }, () -> {
                    double[] out = new double[g.rows * g.k];
                    int[] status = TsneAffinitiesCpu.conditional(g, target, out);
                    boolean ok = Arrays.stream(status).allMatch(st -> st == 0);
                    return new TsneAffinitiesGpu.Joint(ok ? JointProbabilities.symmetrize(g, out) : null, status);
                });
        BackendUsage.recordIfAny(usage, AFFINITIES_PHASE, ran);
        BackendUsage.recordIfAny(usage, SYMMETRIZE_PHASE, ran);
        checkStatus(g, perplexity, ran.value.status());
        return ran.value.p();
    }

    private static void checkStatus(KnnGraph g, double perplexity, int[] status) {
        for (int r = 0; r < g.rows; r++) {
            if (status[r] != 0) {
                throw new IllegalStateException("perplexity search did not converge for point " + (g.rowOffset + r)
                        + " (perplexity " + perplexity + ", k=" + g.k + ", squared distances "
                        + Arrays.toString(Arrays.copyOfRange(g.dist2, r * g.k, Math.min((r + 1) * g.k, r * g.k + 8)))
                        + "...)");
            }
        }
    }

    /**
     * P = (P_cond + P_cond^T) / (2n) (see {@link JointProbabilities#symmetrize}, the CPU twin) on the chosen
     * backend (phase {@value #SYMMETRIZE_PHASE}); the GPU gives the same bits. g must hold all n rows.
     */
    public static SparseRows symmetrize(KnnGraph g, double[] pcond, Backend backend, BackendUsage usage) {
        JointProbabilities.checkSymmetrize(g, pcond);
        BackendChooser.Ran<SparseRows> r = BackendChooser.run(backend, MODULE, "tsne_sym_sort", SYMMETRIZE_PHASE,
                dev -> TsneAffinitiesGpu.symmetrize(dev, g, pcond), () -> JointProbabilities.symmetrize(g, pcond));
        BackendUsage.recordIfAny(usage, SYMMETRIZE_PHASE, r);
        return r.value;
    }

    private static void checkConditional(KnnGraph g, double perplexity) {
        TsneConfig.checkPerplexity(perplexity);
        TsneConfig.checkKAbovePerplexity(g.k, perplexity);
        // rows checked in parallel; the first failing row's message is built once
        int first = ParallelScan.firstIndex(g.rows, r -> conditionalRowError(g, r, perplexity) != null);
        if (first >= 0) {
            throw new IllegalArgumentException(conditionalRowError(g, first, perplexity));
        }
    }

    /** Why {@link #checkConditional} rejects row r of g, or null when the row can be calibrated. */
    private static String conditionalRowError(KnnGraph g, int r, double perplexity) {
        final int k = g.k;
        final int base = r * k;
        for (int m = 0; m < k; m++) {
            if (g.index[base + m] == -1) {
                return "kNN row of point " + (g.rowOffset + r) + " has only " + m + " neighbours, fewer than k=" + k
                        + " (an unmerged partial graph?)";
            }
            if (!Float.isFinite(g.dist2[base + m])) {
                return "squared distance from point " + (g.rowOffset + r) + " to point " + g.index[base + m] + " is "
                        + g.dist2[base + m] + " (float overflow); rescale the features";
            }
        }
        float d0 = g.dist2[base];
        int ties = 1;
        while (ties < k && g.dist2[base + ties] == d0) {
            ties++;
        }
        if (ties < perplexity) {
            return null;
        }
        int show = Math.min(ties, 20);
        StringBuilder sb = new StringBuilder();
        for (int m = 0; m < show; m++) {
            sb.append(m == 0 ? "" : ", ").append(g.index[base + m]);
        }
        if (ties > show) {
            sb.append(", ...");
        }
        String what = d0 == 0f ? "exact duplicates of point " + (g.rowOffset + r) + " (squared distance 0)"
                : "at the same squared distance " + d0 + " from point " + (g.rowOffset + r);
        return "perplexity " + perplexity + " cannot be reached for point " + (g.rowOffset + r) + ": "
                + (ties >= k ? "all " + k + " of its nearest neighbours" : ties + " of its nearest neighbours")
                + " are " + what + " (points " + sb + "); the perplexity must exceed the number of equally near "
                + "neighbours. Remove the duplicate points (or add jitter), or raise the perplexity above " + ties
                + (ties >= k ? " together with k" : "");
    }
}
