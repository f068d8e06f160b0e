package io.sparkgpu.tsne;

import io.sparkgpu.common.DetMath;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;
import java.math.BigDecimal;
import java.util.Arrays;
import java.util.stream.IntStream;

/**
 * kNN graph and perplexity-calibrated affinities (local, one process). The distributed version is
 * {@link TsneAffinitiesSpark}; it produces exactly the same bits for any partitioning.
 *
 * <h2>Pipeline</h2>
 * <pre>{@code
 * KnnGraph g = TsneAffinities.knn(x, n, d, k, backend);              // exact kNN, k = TsneConfig.defaultK usually
 * double[] pc = TsneAffinities.conditional(g, perplexity, backend);  // p_{j|i}, rows of g x k
 * SparseRows p = TsneAffinities.symmetrize(g, pc);                    // P = (P_cond + P_cond^T) / (2n)
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
 * {@code GPU}: the {@code tsne} kernels ({@code tsne_knn_tile8}, {@code tsne_aff_cond}) on the device of the
 * current Spark task's {@code gpu} resource (else {@code spark.sparkgpu.device}, else 0); {@code CPU}: the Java
 * twin (multi-threaded over rows); {@code AUTO}: the GPU when usable, else the twin, also when the GPU fails part-way
 * ({@link BackendChooser#run}: phases {@value #KNN_PHASE} and {@value #AFFINITIES_PHASE}). Results are bitwise equal.
 * The GPU kNN keeps each block's top-k lists in shared memory, so it supports k up to about 330 on an H100
 * (k &gt; that: {@code AUTO} falls back to the twin with a warning, {@code GPU} throws); inputs are chunked to
 * at most 1 GiB of device memory per chunk of queries and of references.
 *
 * <h2>Cost (H100, one GPU; 20 Gaussian clusters, k = 90, perplexity 30)</h2>
 * 70,000 x 784: knn 0.69 s, conditional 0.06 s, symmetrize 0.7 s (CPU, 16 cores). 1,000,000 x 50: knn 7.2 s,
 * conditional 0.7 s, symmetrize 3.7 s. Memory: the graph is 8 n k bytes, P about 1.7 x 12 n k bytes.
 */
public final class TsneAffinities {
    /** Kernel module and the kernel that proves it loads. */
    static final String MODULE = "tsne";
    static final String PROBE_KERNEL = "tsne_knn_tile";
    /** Phase names of the kNN and of the perplexity calibration (logs, errors, {@link BackendUsage}, test faults). */
    public static final String KNN_PHASE = "t-SNE kNN";
    public static final String AFFINITIES_PHASE = "t-SNE affinities";
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
    static KnnGraph knn(float[] x, int n, int d, int k, Backend backend, BackendUsage usage) {
        if (n < 2) {
            throw new IllegalArgumentException("kNN needs at least 2 points, got n=" + n);
        }
        TsneConfig.checkNeighbourCount(k, n);
        return knnBlock(x, 0, n, x, 0, n, d, k, n, backend, usage);
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
    static KnnGraph knnBlock(float[] query, int queryOffset, int nq, float[] ref, int refOffset, int nr,
            int d, int k, int n, Backend backend, BackendUsage usage) {
        checkBlock(query, queryOffset, nq, ref, refOffset, nr, d, k, n);
        if (nq == 0) {
            return new KnnGraph(n, queryOffset, 0, k, new int[0], new float[0]);
        }
        BackendChooser.Ran<KnnGraph> r = BackendChooser.run(backend, MODULE, PROBE_KERNEL, KNN_PHASE, dev -> {
            requireKnnFits(dev, k);
            return TsneAffinitiesGpu.knnBlock(dev, query, queryOffset, nq, ref, refOffset, nr, d, k, n);
        }, () -> knnBlockCpu(query, queryOffset, nq, ref, refOffset, nr, d, k, n));
        record(usage, KNN_PHASE, r);
        return r.value;
    }

    static void record(BackendUsage usage, String phase, BackendChooser.Ran<?> r) {
        if (usage != null) {
            usage.record(phase, r);
        }
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
        checkFinite(query, queryOffset, d);
        if (ref != query) {
            checkFinite(ref, refOffset, d);
        }
    }

    private static void checkFinite(float[] x, int offset, int d) {
        for (int i = 0; i < x.length; i++) {
            if (!Float.isFinite(x[i])) {
                throw new IllegalArgumentException("point " + (offset + i / d) + " has a non-finite value " + x[i]
                        + " at dimension " + (i % d) + "; t-SNE needs finite features");
            }
        }
    }

    /** (d1, i1) before (d2, i2): smaller distance, then smaller index as unsigned (-1 padding last). */
    static boolean before(float d1, int i1, float d2, int i2) {
        return d1 < d2 || (d1 == d2 && Integer.compareUnsigned(i1, i2) < 0);
    }

    /** CPU twin of the GPU kNN: same distances, same order. */
    static KnnGraph knnBlockCpu(float[] query, int queryOffset, int nq, float[] ref, int refOffset, int nr, int d,
            int k, int n) {
        int[] index = new int[nq * k];
        float[] dist2 = new float[nq * k];
        Arrays.fill(index, -1);
        Arrays.fill(dist2, Float.POSITIVE_INFINITY);
        final int chunk = 16;
        IntStream.range(0, (nq + chunk - 1) / chunk).parallel().forEach(c -> {
            int end = Math.min(nq, (c + 1) * chunk);
            for (int q = c * chunk; q < end; q++) {
                knnRow(query, q, queryOffset + q, ref, refOffset, nr, d, k, index, dist2, q * k);
            }
        });
        return new KnnGraph(n, queryOffset, nq, k, index, dist2);
    }

    private static void knnRow(float[] query, int q, int gq, float[] ref, int refOffset, int nr, int d, int k,
            int[] index, float[] dist2, int at) {
        final int qa = q * d;
        final int last = at + k - 1;
        float worstD = Float.POSITIVE_INFINITY;
        int worstI = -1;
        for (int r = 0; r < nr; r++) {
            int gi = refOffset + r;
            if (gi == gq) {
                continue;
            }
            int ra = r * d;
            float acc = 0f;
            boolean out = false;
            for (int t = 0; t < d; t++) {
                float diff = query[qa + t] - ref[ra + t];
                acc = Math.fma(diff, diff, acc);
                if (acc > worstD) { // partial sums never decrease: it cannot make the list
                    out = true;
                    break;
                }
            }
            if (out || !before(acc, gi, worstD, worstI)) {
                continue;
            }
            int pos = last;
            while (pos > at && before(acc, gi, dist2[pos - 1], index[pos - 1])) {
                dist2[pos] = dist2[pos - 1];
                index[pos] = index[pos - 1];
                pos--;
            }
            dist2[pos] = acc;
            index[pos] = gi;
            worstD = dist2[last];
            worstI = index[last];
        }
    }

    /** The squared distance of the arithmetic above (for tests and checks). */
    static float dist2(float[] a, int ai, float[] b, int bi, int d) {
        float acc = 0f;
        for (int t = 0; t < d; t++) {
            float diff = a[ai * d + t] - b[bi * d + t];
            acc = Math.fma(diff, diff, acc);
        }
        return acc;
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
                boolean takeA = ib >= endB || (ia < endA && !before(b.dist2[ib], b.index[ib], a.dist2[ia], a.index[ia]));
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
    static double[] conditional(KnnGraph g, double perplexity, Backend backend, BackendUsage usage) {
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
                    int[] status = new int[g.rows];
                    final int chunk = 64;
                    IntStream.range(0, (g.rows + chunk - 1) / chunk).parallel().forEach(c -> {
                        int end = Math.min(g.rows, (c + 1) * chunk);
                        for (int r = c * chunk; r < end; r++) {
                            status[r] = conditionalRow(g.dist2, r * g.k, g.k, target, out);
                        }
                    });
                    return new Calibrated(out, status);
                });
        record(usage, AFFINITIES_PHASE, ran);
        double[] out = ran.value.pcond();
        int[] status = ran.value.status();
        for (int r = 0; r < g.rows; r++) {
            if (status[r] != 0) {
                throw new IllegalStateException("perplexity search did not converge for point " + (g.rowOffset + r)
                        + " (perplexity " + perplexity + ", k=" + g.k + ", squared distances "
                        + Arrays.toString(Arrays.copyOfRange(g.dist2, r * g.k, Math.min((r + 1) * g.k, r * g.k + 8)))
                        + "...)");
            }
        }
        return out;
    }

    private static void checkConditional(KnnGraph g, double perplexity) {
        TsneConfig.checkPerplexity(perplexity);
        TsneConfig.checkKAbovePerplexity(g.k, perplexity);
        final int k = g.k;
        for (int r = 0; r < g.rows; r++) {
            int base = r * k;
            for (int m = 0; m < k; m++) {
                if (g.index[base + m] == -1) {
                    throw new IllegalArgumentException("kNN row of point " + (g.rowOffset + r) + " has only " + m
                            + " neighbours, fewer than k=" + k + " (an unmerged partial graph?)");
                }
                if (!Float.isFinite(g.dist2[base + m])) {
                    throw new IllegalArgumentException("squared distance from point " + (g.rowOffset + r)
                            + " to point " + g.index[base + m] + " is " + g.dist2[base + m]
                            + " (float overflow); rescale the features");
                }
            }
            float d0 = g.dist2[base];
            int ties = 1;
            while (ties < k && g.dist2[base + ties] == d0) {
                ties++;
            }
            if (ties >= perplexity) {
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
                throw new IllegalArgumentException("perplexity " + perplexity + " cannot be reached for point "
                        + (g.rowOffset + r) + ": " + (ties >= k ? "all " + k + " of its nearest neighbours" : ties
                        + " of its nearest neighbours") + " are " + what + " (points " + sb
                        + "); the perplexity must exceed the number of equally near neighbours. Remove the duplicate "
                        + "points (or add jitter), or raise the perplexity above " + ties
                        + (ties >= k ? " together with k" : ""));
            }
        }
    }

    /**
     * One row of {@link #conditional} (the CPU twin of kernel tsne_aff_cond, operation for operation);
     * writes p_{j|i} to out[base..base+k) and returns 0, or 1 when the search ended off target.
     */
    static int conditionalRow(float[] dist2, int base, int k, double target, double[] out) {
        final double d0 = dist2[base];
        double mean = 0.0;
        for (int m = 0; m < k; m++) {
            mean = mean + ((double) dist2[base + m] - d0);
        }
        mean = mean / k;
        double beta = 1.0 / mean;
        double lo = 0.0;
        double hi = Double.POSITIVE_INFINITY;
        double z = 0.0;
        for (int step = 0; ; step++) {
            z = 0.0;
            double s = 0.0;
            final double nb = -beta;
            for (int m = 0; m < k; m++) {
                double dd = (double) dist2[base + m] - d0;
                double p = DetMath.exp(nb * dd);
                z = z + p;
                s = s + p * dd;
            }
            double h = DetMath.log(z) + (beta * s) / z;
            double diff = h - target;
            if (Math.abs(diff) <= ENTROPY_TOL || step >= MAX_STEPS) {
                if (!(Math.abs(diff) <= ENTROPY_FAIL)) {
                    return 1;
                }
                break;
            }
            double next;
            if (diff > 0.0) { // too flat: sharpen
                lo = beta;
                next = hi == Double.POSITIVE_INFINITY ? beta * 2.0 : (beta + hi) * 0.5;
            } else {
                hi = beta;
                next = (beta + lo) * 0.5;
            }
            if (next == beta) { // bracket collapsed to adjacent doubles: take this beta
                if (!(Math.abs(diff) <= ENTROPY_FAIL)) {
                    return 1;
                }
                break;
            }
            beta = next;
        }
        final double nb = -beta;
        for (int m = 0; m < k; m++) {
            double dd = (double) dist2[base + m] - d0;
            out[base + m] = DetMath.exp(nb * dd) / z;
        }
        return 0;
    }

    // ------------------------------------------------------------------------------------------ symmetrise

    /**
     * P = (P_cond + P_cond^T) / (2n) as one slice holding all n rows: entry (i, j) is (p_{j|i} + p_{i|j}) / (2n),
     * a missing conditional counting as 0. Columns strictly increasing per row; exactly symmetric (a + b = b + a
     * in IEEE arithmetic); sums to 1 up to rounding. g must hold all n rows.
     */
    public static SparseRows symmetrize(KnnGraph g, double[] pcond) {
        if (g.rowOffset != 0 || g.rows != g.n) {
            throw new IllegalArgumentException("symmetrize needs the graph of all n=" + g.n + " rows, got rows ["
                    + g.rowOffset + ", +" + g.rows + ")");
        }
        if (pcond.length != g.index.length) {
            throw new IllegalArgumentException("pcond has " + pcond.length + " entries, graph has " + g.index.length);
        }
        final int n = g.n;
        final int k = g.k;
        // incoming p_{i|j} for row i = index[j*k+m]: counting sort by target row, in parallel over T chunks of
        // source rows (chunk t writes after chunks < t within each target row), so columns ascend within a row
        final int threads = Math.max(1, Math.min(java.util.concurrent.ForkJoinPool.commonPool().getParallelism() + 1,
                (int) Math.min(32, Math.max(1, (64L << 20) / Math.max(1, n)))));
        final int span = (n + threads - 1) / threads;
        final int[][] cnt = new int[threads][];
        IntStream.range(0, threads).parallel().forEach(t -> {
            int[] c = new int[n];
            for (int e = t * span * k; e < Math.min(n, (t + 1) * span) * k; e++) {
                c[g.index[e]]++;
            }
            cnt[t] = c;
        });
        final int[] inPtr = new int[n + 1];
        for (int i = 0; i < n; i++) {
            int tot = 0;
            for (int t = 0; t < threads; t++) {
                tot += cnt[t][i];
            }
            inPtr[i + 1] = inPtr[i] + tot;
        }
        final int chunk = 1 << 16;
        IntStream.range(0, (n + chunk - 1) / chunk).parallel().forEach(c -> {
            for (int i = c * chunk; i < Math.min(n, (c + 1) * chunk); i++) {
                int run = inPtr[i];
                for (int t = 0; t < threads; t++) {
                    int v = cnt[t][i];
                    cnt[t][i] = run;
                    run += v;
                }
            }
        });
        final int[] inCol = new int[g.index.length];
        final double[] inVal = new double[g.index.length];
        IntStream.range(0, threads).parallel().forEach(t -> {
            int[] fill = cnt[t];
            for (int j = t * span; j < Math.min(n, (t + 1) * span); j++) {
                for (int m = 0; m < k; m++) {
                    int at = fill[g.index[j * k + m]]++;
                    inCol[at] = j;
                    inVal[at] = pcond[j * k + m];
                }
            }
        });
        return assemble(n, 0, n, k, g.index, pcond, inPtr, inCol, inVal);
    }

    /**
     * Rows [rowOffset, rowOffset + rows) of the symmetrised P from their own kNN entries (rows x k: neighbour
     * ownIdx, value p_{j|i}) and their incoming entries (CSR inPtr/inCol/inVal by local row, columns strictly
     * increasing: the source point j and p_{i|j}). Shared by {@link #symmetrize} and the Spark version.
     */
    static SparseRows assemble(int n, int rowOffset, int rows, int k, int[] ownIdx, double[] ownVal, int[] inPtr,
            int[] inCol, double[] inVal) {
        final double scale = 2.0 * n;
        final int[] rowPtr = new int[rows + 1];
        final int[] order = new int[rows * k]; // own entries of each row by ascending column: slot order per row
        final int chunk = 4096;
        final int chunks = (rows + chunk - 1) / chunk;
        IntStream.range(0, chunks).parallel().forEach(c -> {
            long[] keys = new long[k];
            for (int r = c * chunk; r < Math.min(rows, (c + 1) * chunk); r++) {
                for (int m = 0; m < k; m++) {
                    keys[m] = ((long) ownIdx[r * k + m] << 32) | m;
                }
                Arrays.sort(keys);
                for (int m = 0; m < k; m++) {
                    order[r * k + m] = (int) keys[m];
                }
                rowPtr[r + 1] = mergeRow(r, k, ownIdx, ownVal, order, inPtr, inCol, inVal, scale, null, null, 0);
            }
        });
        for (int r = 0; r < rows; r++) {
            rowPtr[r + 1] += rowPtr[r];
        }
        final int nnz = rowPtr[rows];
        final int[] col = new int[nnz];
        final double[] val = new double[nnz];
        IntStream.range(0, chunks).parallel().forEach(c -> {
            for (int r = c * chunk; r < Math.min(rows, (c + 1) * chunk); r++) {
                mergeRow(r, k, ownIdx, ownVal, order, inPtr, inCol, inVal, scale, col, val, rowPtr[r]);
            }
        });
        return new SparseRows(n, rowOffset, rows, rowPtr, col, val);
    }

    /** Union of a row's own and incoming entries by column; writes them from {@code at} when col != null; returns the count. */
    private static int mergeRow(int r, int k, int[] ownIdx, double[] ownVal, int[] order, int[] inPtr, int[] inCol,
            double[] inVal, double scale, int[] col, double[] val, int at) {
        int a = 0;
        int b = inPtr[r];
        final int bEnd = inPtr[r + 1];
        int cnt = 0;
        while (a < k || b < bEnd) {
            int slot = a < k ? r * k + order[r * k + a] : -1;
            int ca = a < k ? ownIdx[slot] : Integer.MAX_VALUE;
            int cb = b < bEnd ? inCol[b] : Integer.MAX_VALUE;
            double v;
            if (ca == cb) {
                v = ownVal[slot] + inVal[b];
                a++;
                b++;
            } else if (ca < cb) {
                v = ownVal[slot];
                a++;
            } else {
                v = inVal[b];
                b++;
            }
            if (col != null) {
                col[at + cnt] = Math.min(ca, cb);
                val[at + cnt] = v / scale;
            }
            cnt++;
        }
        return cnt;
    }

    // ------------------------------------------------------------------------------------------ from edges

    /**
     * Stochastic-graph mode: weighted edges (i[e], j[e], w[e]) of a graph on n points, symmetrised and normalised:
     * P_ab = S_ab / T with S_ab the sum of the weights of all edges (a, b) and (b, a) (duplicates summed), T the
     * sum of all S_ab. Entries with S_ab = 0 are not stored. Points without any edge (isolated points) are
     * allowed: their rows are empty, and t-SNE then moves them by repulsion alone.
     *
     * <p>Determinism: the weights of one (a, b) group are added in ascending order of value, and T is summed
     * exactly (BigDecimal) and rounded once, so the result does not depend on the order of the edges; the Spark
     * version gives the same bits.
     *
     * @throws IllegalArgumentException for n &lt; 2, arrays of different lengths, an index outside 0..n-1, a self
     *         loop, a negative or non-finite weight (each naming the edge) or a total weight of 0
     */
    public static SparseRows fromEdges(int n, int[] i, int[] j, double[] w) {
        if (n < 2) {
            throw new IllegalArgumentException("a graph for t-SNE needs n >= 2 points, got n=" + n);
        }
        if (i == null || j == null || w == null || i.length != j.length || i.length != w.length) {
            throw new IllegalArgumentException("edge arrays i, j, w must have equal lengths, got "
                    + (i == null ? "null" : i.length) + ", " + (j == null ? "null" : j.length) + ", "
                    + (w == null ? "null" : w.length));
        }
        for (int e = 0; e < i.length; e++) {
            checkEdge(n, i[e], j[e], w[e], "edge " + e);
        }
        EdgeRows er = edgeRows(n, 0, n, i, j, w, true);
        BigDecimal total = er.total;
        if (total.signum() == 0) {
            throw new IllegalArgumentException("all edge weights are 0; the graph has no affinity to normalise");
        }
        return er.normalised(total.doubleValue());
    }

    /** Validates one edge; {@code what} names it in the message. */
    static void checkEdge(int n, long a, long b, double w, String what) {
        if (a < 0 || a >= n || b < 0 || b >= n) {
            throw new IllegalArgumentException(what + " (" + a + ", " + b + ") has an index outside 0.." + (n - 1)
                    + " (n=" + n + ")");
        }
        if (a == b) {
            throw new IllegalArgumentException(what + " (" + a + ", " + b + ") is a self loop; t-SNE affinities "
                    + "have no diagonal, drop such edges");
        }
        if (!(w >= 0.0) || Double.isInfinite(w)) {
            throw new IllegalArgumentException(what + " (" + a + ", " + b + ") has weight " + w
                    + "; weights must be finite and >= 0");
        }
    }

    /** Symmetrised, unnormalised rows [rowOffset, rowOffset + rows) of an edge list and their exact total. */
    static final class EdgeRows implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        final int n;
        final int rowOffset;
        final int rows;
        final int[] rowPtr;
        final int[] col;
        final double[] sum;
        final BigDecimal total;

        EdgeRows(int n, int rowOffset, int rows, int[] rowPtr, int[] col, double[] sum, BigDecimal total) {
            this.n = n;
            this.rowOffset = rowOffset;
            this.rows = rows;
            this.rowPtr = rowPtr;
            this.col = col;
            this.sum = sum;
            this.total = total;
        }

        SparseRows normalised(double t) {
            double[] val = new double[sum.length];
            for (int e = 0; e < val.length; e++) {
                val[e] = sum[e] / t;
            }
            return new SparseRows(n, rowOffset, rows, rowPtr, col, val);
        }
    }

    /**
     * Rows [rowOffset, rowOffset + rows) from edge entries already validated; with {@code mirror} each edge (a, b)
     * is also entered as (b, a) (and entries outside the rows are ignored), without it the arrays already hold
     * both directions of every edge for these rows.
     */
    static EdgeRows edgeRows(int n, int rowOffset, int rows, int[] a, int[] b, double[] w, boolean mirror) {
        int m = a.length;
        long[] keys = new long[mirror ? 2 * m : m];
        double[] vals = new double[keys.length];
        int cnt = 0;
        for (int e = 0; e < m; e++) {
            int r1 = a[e] - rowOffset;
            if (r1 >= 0 && r1 < rows) {
                keys[cnt] = ((long) r1 << 32) | b[e];
                vals[cnt++] = w[e];
            }
            if (mirror) {
                int r2 = b[e] - rowOffset;
                if (r2 >= 0 && r2 < rows) {
                    keys[cnt] = ((long) r2 << 32) | a[e];
                    vals[cnt++] = w[e];
                }
            }
        }
        // sort by (key, value): value order inside a group makes the group sum order-independent
        Integer[] idx = new Integer[cnt];
        for (int e = 0; e < cnt; e++) {
            idx[e] = e;
        }
        final long[] fk = keys;
        final double[] fv = vals;
        Arrays.sort(idx, (x, y) -> {
            int c = Long.compare(fk[x], fk[y]);
            return c != 0 ? c : Double.compare(fv[x], fv[y]);
        });
        int[] rowPtr = new int[rows + 1];
        int[] col = new int[cnt];
        double[] sum = new double[cnt];
        int out = 0;
        BigDecimal total = BigDecimal.ZERO;
        int e = 0;
        while (e < cnt) {
            long key = keys[idx[e]];
            double s = 0.0;
            while (e < cnt && keys[idx[e]] == key) {
                s = s + vals[idx[e]];
                e++;
            }
            if (s > 0.0) {
                int r = (int) (key >>> 32);
                rowPtr[r + 1]++;
                col[out] = (int) key;
                sum[out++] = s;
                total = total.add(new BigDecimal(s));
            }
        }
        for (int r = 0; r < rows; r++) {
            rowPtr[r + 1] += rowPtr[r];
        }
        return new EdgeRows(n, rowOffset, rows, rowPtr, Arrays.copyOf(col, out), Arrays.copyOf(sum, out), total);
    }
}
