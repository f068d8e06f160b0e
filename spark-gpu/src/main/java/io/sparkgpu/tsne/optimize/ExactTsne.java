package io.sparkgpu.tsne.optimize;

import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.repulsion.TsneKernel;






/**
 * Exact O(n^2) t-SNE terms (van der Maaten and Hinton, "Visualizing Data using t-SNE", JMLR 9, 2008), the reference
 * against which the interpolation-based forces are tested and measured. With w_ij = 1 / (1 + |y_i - y_j|^2),
 * Z = sum_{i != j} w_ij and q_ij = w_ij / Z, the gradient of KL(P || Q) is
 * dC/dy_i = 4 (sum_j p_ij w_ij (y_i - y_j) - (1/Z) sum_j w_ij^2 (y_i - y_j)). Time O(n^2 dim); not for large n.
 * The {@code dof} overloads use the heavy-tailed kernel w_ij = (1 + |y_i - y_j|^2 / dof)^-dof ({@link TsneKernel}),
 * whose gradient has w_ij / t_ij, t_ij = 1 + |y_i - y_j|^2 / dof, in place of w_ij (attractive) and w_ij^2
 * (repulsive); dof = 1 is the standard kernel, with the same bits.
 */
public final class ExactTsne {
    private ExactTsne() {
    }

    /** Attractive term sum_j p_ij w_ij (y_i - y_j) of the slice's rows (rows x dim); y holds all n points. */
    public static double[] attractive(SparseRows p, double[] y, int dim) {
        return attractive(p, y, dim, TsneKernel.STANDARD);
    }

    /** Attractive term sum_j p_ij (y_i - y_j) / (1 + |y_i - y_j|^2 / dof) of the slice's rows (rows x dim). */
    public static double[] attractive(SparseRows p, double[] y, int dim, double dof) {
        double[] out = new double[p.rows * dim];
        double[] diff = new double[dim];
        for (int r = 0; r < p.rows; r++) {
            int i = p.rowOffset + r;
            for (int e = p.rowPtr[r]; e < p.rowPtr[r + 1]; e++) {
                int j = p.col[e];
                double d2 = 0;
                for (int a = 0; a < dim; a++) {
                    diff[a] = y[i * dim + a] - y[j * dim + a];
                    d2 += diff[a] * diff[a];
                }
                double pw = p.val[e] / TsneKernel.base(d2, dof);
                for (int a = 0; a < dim; a++) {
                    out[r * dim + a] += pw * diff[a];
                }
            }
        }
        return out;
    }

    /** Unnormalised repulsive term sum_j w_ij^2 (y_i - y_j) of every point (n x dim). */
    public static double[] repulsive(double[] y, int n, int dim) {
        return repulsive(y, n, dim, TsneKernel.STANDARD);
    }

    /** Unnormalised repulsive term sum_j (w_ij / t_ij) (y_i - y_j) of every point (n x dim), kernel of {@code dof}. */
    public static double[] repulsive(double[] y, int n, int dim, double dof) {
        double[] out = new double[n * dim];
        double[] diff = new double[dim];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (j == i) {
                    continue;
                }
                double fw = TsneKernel.forceWeight(dist2(y, i, j, dim, diff), dof);
                for (int a = 0; a < dim; a++) {
                    out[i * dim + a] += fw * diff[a];
                }
            }
        }
        return out;
    }

    /** Z = sum over ordered pairs i != j of 1 / (1 + |y_i - y_j|^2). */
    public static double z(double[] y, int n, int dim) {
        return z(y, n, dim, TsneKernel.STANDARD);
    }

    /** Z = sum over ordered pairs i != j of (1 + |y_i - y_j|^2 / dof)^-dof. */
    public static double z(double[] y, int n, int dim, double dof) {
        double[] diff = new double[dim];
        double z = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    z += TsneKernel.weight(dist2(y, i, j, dim, diff), dof);
                }
            }
        }
        return z;
    }

    /** The exact gradient of KL(P || Q) with P multiplied by {@code exaggeration}; P given as one slice of all rows. */
    public static double[] gradient(SparseRows p, double[] y, int dim, double exaggeration) {
        return gradient(p, y, dim, exaggeration, TsneKernel.STANDARD);
    }

    /** {@link #gradient(SparseRows, double[], int, double)} for the kernel of {@code dof}. */
    public static double[] gradient(SparseRows p, double[] y, int dim, double exaggeration, double dof) {
        requireWhole(p);
        double[] attr = attractive(p, y, dim, dof);
        double[] rep = repulsive(y, p.n, dim, dof);
        double z = z(y, p.n, dim, dof);
        double[] g = new double[attr.length];
        for (int t = 0; t < g.length; t++) {
            g[t] = 4.0 * (exaggeration * attr[t] - rep[t] / z);
        }
        return g;
    }

    /** KL(P || Q) = sum_{p_ij > 0} p_ij log(p_ij / q_ij); P given as one slice of all rows. */
    public static double klDivergence(SparseRows p, double[] y, int dim) {
        return klDivergence(p, y, dim, TsneKernel.STANDARD);
    }

    /** KL(P || Q) for the kernel of {@code dof}: q_ij = w_ij / Z. */
    public static double klDivergence(SparseRows p, double[] y, int dim, double dof) {
        requireWhole(p);
        double z = z(y, p.n, dim, dof);
        double[] diff = new double[dim];
        double kl = 0;
        for (int i = 0; i < p.n; i++) {
            for (int e = p.rowPtr[i]; e < p.rowPtr[i + 1]; e++) {
                double pij = p.val[e];
                if (pij > 0) {
                    double q = TsneKernel.weight(dist2(y, i, p.col[e], dim, diff), dof) / z;
                    kl += pij * Math.log(pij / q);
                }
            }
        }
        return kl;
    }

    private static double dist2(double[] y, int i, int j, int dim, double[] diff) {
        double d2 = 0;
        for (int a = 0; a < dim; a++) {
            diff[a] = y[i * dim + a] - y[j * dim + a];
            d2 += diff[a] * diff[a];
        }
        return d2;
    }

    /** Throws unless P is one slice holding all n rows (the single-process t-SNE paths need every row). */
    static void requireWhole(SparseRows p) {
        if (p.rowOffset != 0 || p.rows != p.n) {
            throw new IllegalArgumentException("P must hold all " + p.n + " rows, got rows " + p.rowOffset + ".."
                    + (p.rowOffset + p.rows - 1));
        }
    }
}
