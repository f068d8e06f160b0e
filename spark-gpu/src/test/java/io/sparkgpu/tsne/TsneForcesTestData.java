package io.sparkgpu.tsne;

import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import java.util.Arrays;
import java.util.Random;

/** Inputs for the forces tests: clustered embeddings, random CSR slices, and a brute-force G2G on the support. */
public final class TsneForcesTestData {
    private TsneForcesTestData() {
    }

    /** n points in dim dimensions: Gaussian clusters (sd 1) with centres uniform in a cube of side extent. */
    public static double[] clusters(int n, int dim, int clusters, double extent, long seed) {
        Random r = new Random(seed);
        double[][] c = new double[clusters][dim];
        for (double[] cc : c) {
            for (int a = 0; a < dim; a++) {
                cc[a] = (r.nextDouble() - 0.5) * extent;
            }
        }
        double[] y = new double[n * dim];
        for (int i = 0; i < n; i++) {
            double[] cc = c[r.nextInt(clusters)];
            for (int a = 0; a < dim; a++) {
                y[i * dim + a] = cc[a] + r.nextGaussian();
            }
        }
        return y;
    }

    /**
     * Rows [rowOffset, rowOffset + rows) of a random n x n matrix: row lengths between minLen and maxLen (clamped to
     * n - 1), a few empty rows and one long "hub" row when longRow > 0, columns strictly increasing, values > 0.
     */
    public static SparseRows randomRows(int n, int rowOffset, int rows, int minLen, int maxLen, int longRow,
            long seed) {
        Random r = new Random(seed);
        int[] rowPtr = new int[rows + 1];
        int[][] cols = new int[rows][];
        for (int q = 0; q < rows; q++) {
            int len = minLen + r.nextInt(Math.max(1, maxLen - minLen + 1));
            if (q % 97 == 13) {
                len = 0;
            }
            if (q == rows / 2 && longRow > 0) {
                len = longRow;
            }
            if (q == rows / 3 && longRow > 0) { // hub rows (SellRows.HUB_LEN): a long one, and one of exactly
                len = 5 * longRow;              // three 224-entry rounds of the GPU hub block
            }
            if (q == rows / 5 && longRow > 0) {
                len = 3 * 224;
            }
            len = Math.min(len, n - 1);
            int i = rowOffset + q;
            int[] c = r.ints(0, n).filter(j -> j != i).distinct().limit(len).sorted().toArray();
            cols[q] = c;
            rowPtr[q + 1] = rowPtr[q] + c.length;
        }
        int[] col = new int[rowPtr[rows]];
        double[] val = new double[col.length];
        for (int q = 0; q < rows; q++) {
            System.arraycopy(cols[q], 0, col, rowPtr[q], cols[q].length);
            for (int e = rowPtr[q]; e < rowPtr[q + 1]; e++) {
                val[e] = (0.1 + r.nextDouble()) / (n * 90.0);
            }
        }
        return new SparseRows(n, rowOffset, rows, rowPtr, col, val);
    }

    /**
     * phi_c(a) = sum_b K(a - b) q_c(b), K(delta) = (1 + h^2 |delta|^2)^-2 (delta in nodes), by brute force but only
     * for the nodes a and b where some charge is nonzero (the nodes of the points' stencils, the only ones G2S
     * reads); other nodes get 0.
     */
    public static double[] convolveOnSupport(InterpGrid g, double[] q) {
        int nodes = g.nodes();
        int charges = g.charges();
        int npd = g.nodesPerDim();
        double h2 = g.spacing() * g.spacing();
        int[] support = java.util.stream.IntStream.range(0, nodes).filter(m -> {
            for (int c = 0; c < charges; c++) {
                if (q[c * nodes + m] != 0) {
                    return true;
                }
            }
            return false;
        }).toArray();
        int s = support.length;
        int[][] ix = new int[s][3];
        double[][] qs = new double[s][charges];
        for (int t = 0; t < s; t++) {
            int m = support[t];
            ix[t][0] = m % npd;
            ix[t][1] = (m / npd) % npd;
            ix[t][2] = m / npd / npd;
            for (int c = 0; c < charges; c++) {
                qs[t][c] = q[c * nodes + m];
            }
        }
        double[] phi = new double[charges * nodes];
        double[] acc = new double[charges];
        for (int t = 0; t < s; t++) {
            Arrays.fill(acc, 0);
            for (int u = 0; u < s; u++) {
                double dx = ix[t][0] - ix[u][0];
                double dy = ix[t][1] - ix[u][1];
                double dz = ix[t][2] - ix[u][2];
                double k = 1.0 / (1.0 + h2 * (dx * dx + dy * dy + dz * dz));
                k *= k;
                for (int c = 0; c < charges; c++) {
                    acc[c] += k * qs[u][c];
                }
            }
            for (int c = 0; c < charges; c++) {
                phi[c * nodes + support[t]] = acc[c];
            }
        }
        return phi;
    }

    /** The grid of the first n points of y, planned from their exact min and max. */
    public static InterpGrid plan(double[] y, int n, int dim, TsneGridOptions opt) {
        return GridRepulsion.plan(min(y, n, dim), max(y, n, dim), dim, opt);
    }

    public static double[] min(double[] y, int n, int dim) {
        return bound(y, n, dim, -1);
    }

    public static double[] max(double[] y, int n, int dim) {
        return bound(y, n, dim, 1);
    }

    /** Per-axis max of sign * y, times sign (sign -1: the minimum). */
    private static double[] bound(double[] y, int n, int dim, double sign) {
        double[] m = new double[dim];
        Arrays.fill(m, Double.NEGATIVE_INFINITY);
        for (int i = 0; i < n; i++) {
            for (int a = 0; a < dim; a++) {
                m[a] = Math.max(m[a], sign * y[i * dim + a]);
            }
        }
        for (int a = 0; a < dim; a++) {
            m[a] *= sign;
        }
        return m;
    }

    /** Rows [from, to) of y (row-major, dim per row). */
    public static double[] rows(double[] y, int dim, int from, int to) {
        return Arrays.copyOfRange(y, from * dim, to * dim);
    }

    /**
     * FIt-SNE's usual grid (p = 3, one box per unit, at least 50 boxes, at most 400 / 200 boxes; 20..40 in 3-D):
     * the coarser grid the error bounds of these tests are stated for (TsneGridOptions.defaults() is finer).
     */
    public static TsneGridOptions options(int dim) {
        return dim == 3 ? new TsneGridOptions(3, 1.0, 20, new int[] {0, 400, 200, 40})
                : new TsneGridOptions(3, 1.0, 50, new int[] {0, 400, 200, 50});
    }

    /** |approx - exact| / |exact| (Euclidean norms). */
    public static double relNorm(double[] approx, double[] exact) {
        double d = 0;
        double e = 0;
        for (int t = 0; t < exact.length; t++) {
            d += (approx[t] - exact[t]) * (approx[t] - exact[t]);
            e += exact[t] * exact[t];
        }
        return Math.sqrt(d / e);
    }
}
