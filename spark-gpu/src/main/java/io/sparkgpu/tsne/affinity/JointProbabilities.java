package io.sparkgpu.tsne.affinity;

import java.math.BigDecimal;
import java.util.Arrays;
import java.util.stream.IntStream;

/**
 * The joint affinities P of t-SNE as {@link SparseRows}: symmetrised from the conditional affinities of a kNN graph
 * ({@link #symmetrize}, {@link #assemble}: shared with {@link TsneAffinitiesSpark}), or normalised from the weighted
 * edges of a graph (stochastic-graph mode: {@link #fromEdges}, {@link #edgeRows}). Host arithmetic only, the same
 * bits for any partitioning.
 */
public final class JointProbabilities {
    private JointProbabilities() {
    }

    // ------------------------------------------------------------------------------------------ symmetrise

    /**
     * P = (P_cond + P_cond^T) / (2n) as one slice holding all n rows: entry (i, j) is (p_{j|i} + p_{i|j}) / (2n),
     * a missing conditional counting as 0. Columns strictly increasing per row; exactly symmetric (a + b = b + a
     * in IEEE arithmetic); sums to 1 up to rounding. g must hold all n rows.
     */
    static void checkSymmetrize(KnnGraph g, double[] pcond) {
        checkWhole(g);
        if (pcond.length != g.index.length) {
            throw new IllegalArgumentException("pcond has " + pcond.length + " entries, graph has " + g.index.length);
        }
    }

    /** The graph must hold all n rows (symmetrisation pairs every row with the rows that list it). */
    static void checkWhole(KnnGraph g) {
        if (g.rowOffset != 0 || g.rows != g.n) {
            throw new IllegalArgumentException("symmetrize needs the graph of all n=" + g.n + " rows, got rows ["
                    + g.rowOffset + ", +" + g.rows + ")");
        }
    }

    /**
     * P = (P_cond + P_cond^T) / (2n) as one slice holding all n rows: entry (i, j) is (p_{j|i} + p_{i|j}) / (2n),
     * a missing conditional counting as 0. Columns strictly increasing per row; exactly symmetric (a + b = b + a
     * in IEEE arithmetic); sums to 1 up to rounding. g must hold all n rows. (The CPU twin of
     * {@link TsneAffinities#symmetrize}'s GPU side.)
     */
    public static SparseRows symmetrize(KnnGraph g, double[] pcond) {
        checkSymmetrize(g, pcond);
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
