package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.common.FixedPoint;

/**
 * CPU twins of the S2G and G2S + Phi2Force kernels (tsne_s2g_d*, tsne_g2s_d*): the same operations in the same
 * order, one rounding each, so the same bits; the dispatcher is {@link GridRepulsion}.
 */
final class GridRepulsionCpu {
    private GridRepulsionCpu() {
    }

    /** CPU twin of tsne_s2g_d{1,2,3}. */
    static long[] s2g(InterpGrid g, long nTotal, double[] y, int rows) {
        final int dim = g.dim;
        final int nodes = g.nodes();
        final int charges = g.charges();
        long[] acc = new long[GridRepulsion.chargesLength(g)];
        double[] mult = GridRepulsion.multipliers(GridRepulsion.chargeShifts(g, nTotal));
        double[] c = GridRepulsion.centre(g);
        Stencil st = new Stencil(g);
        double[] q = new double[5];
        for (int i = 0; i < rows; i++) {
            st.locate(y, i * dim);
            double sq = 0;
            for (int a = 0; a < dim; a++) {
                double u = y[i * dim + a] - c[a];
                q[1 + a] = u;
                sq += u * u;
            }
            q[dim + 1] = sq;
            for (int k = 0; k < st.count; k++) {
                double w = st.weight[k];
                int node = st.node[k];
                FixedPoint.add(acc, 2 * node, w, mult[0], mult[1]);
                for (int ch = 1; ch < charges; ch++) {
                    FixedPoint.add(acc, 2 * (ch * nodes + node), w * q[ch], mult[2 * ch], mult[2 * ch + 1]);
                }
            }
        }
        return acc;
    }

    /** CPU twin of tsne_g2s_d{1,2,3}. */
    static Repulsion g2s(InterpGrid g, long nTotal, int zShift, double[] phi, double[] y, int rows) {
        return g2s(g, nTotal, zShift, phi, y, rows, false);
    }

    /** CPU twin of tsne_g2s_d{1,2,3}; {@code perRow}: each row's z_i as well (the kernel's zrow). */
    static Repulsion g2s(InterpGrid g, long nTotal, int zShift, double[] phi, double[] y, int rows, boolean perRow) {
        final int dim = g.dim;
        final double[] zRows = perRow ? new double[rows] : null;
        final int nodes = g.nodes();
        final int charges = g.charges();
        double[] force = new double[rows * dim];
        long[] z = new long[2];
        double[] zm = FixedPoint.multipliers(zShift);
        double zMax = GridRepulsion.zMax(nTotal);
        double[] c = GridRepulsion.centre(g);
        Stencil st = new Stencil(g);
        double[] s = new double[5];
        double[] u = new double[3];
        for (int i = 0; i < rows; i++) {
            st.locate(y, i * dim);
            java.util.Arrays.fill(s, 0.0);
            for (int k = 0; k < st.count; k++) {
                double w = st.weight[k];
                int node = st.node[k];
                for (int ch = 0; ch < charges; ch++) {
                    s[ch] += w * phi[ch * nodes + node];
                }
            }
            double sq = 0;
            double dot = 0;
            for (int a = 0; a < dim; a++) {
                u[a] = y[i * dim + a] - c[a];
                sq += u[a] * u[a];
                dot += u[a] * s[1 + a];
                force[i * dim + a] = u[a] * s[0] - s[1 + a];
            }
            // z_i = sum_j K(d2) (1 + d2 / dof), d2 = sq - 2 u.y_j + |y_j|^2 (K: G2G's force kernel)
            double zi = g.dof == 1.0 ? ((1.0 + sq) * s[0] - 2.0 * dot) + s[dim + 1]
                    : s[0] + (((sq * s[0]) - 2.0 * dot) + s[dim + 1]) / g.dof;
            zi = zi > zMax ? zMax : zi < 0 ? 0 : zi; // true z_i lies in [1, n]: bounds interpolation garbage
            if (zRows != null) {
                zRows[i] = zi;
            }
            FixedPoint.add(z, 0, zi, zm[0], zm[1]);
        }
        return new Repulsion(force, z, zShift, zRows);
    }

    /**
     * The p^dim nodes of a point's box and their Lagrange weights, in the fixed order (x fastest) shared with the
     * kernels. Per axis: s = (y - lo) / h, cell = clamp(floor(s), 0, nodesPerDim - 1), box b = cell / p,
     * t = s - b p, and w_k = prod_{m != k} (t - (m + 1/2)) / prod_{m != k} (k - m) (nodes at t = k + 1/2).
     */
    static final class Stencil {
        final int dim;
        final int p;
        final int npd;
        final double h;
        final double[] lo;
        final double[] denom;
        final double[][] w = new double[3][8];
        final int[] base = new int[3];
        final int count;
        final double[] weight;
        final int[] node;

        Stencil(InterpGrid g) {
            dim = g.dim;
            p = g.p;
            npd = g.nodesPerDim();
            h = g.spacing();
            lo = g.lo.clone();
            denom = denominators(p);
            int cnt = 1;
            for (int a = 0; a < dim; a++) {
                cnt *= p;
            }
            count = cnt;
            weight = new double[cnt];
            node = new int[cnt];
        }

        static double[] denominators(int p) {
            double[] d = new double[p];
            for (int k = 0; k < p; k++) {
                double v = 1;
                for (int m = 0; m < p; m++) {
                    if (m != k) {
                        v *= k - m;
                    }
                }
                d[k] = v;
            }
            return d;
        }

        void locate(double[] y, int at) {
            for (int a = 0; a < dim; a++) {
                double s = (y[at + a] - lo[a]) / h;
                double f = Math.floor(s);
                int cell = f < 0 ? 0 : f > npd - 1 ? npd - 1 : (int) f;
                int b = cell / p;
                base[a] = b * p;
                double t = s - (double) (b * p);
                t = t < 0 ? 0 : t > p ? p : t; // only points outside the grid (caller error) are clamped
                for (int k = 0; k < p; k++) {
                    double num = 1;
                    for (int m = 0; m < p; m++) {
                        if (m != k) {
                            num *= t - (m + 0.5);
                        }
                    }
                    w[a][k] = num / denom[k];
                }
            }
            int t = 0;
            if (dim == 1) {
                for (int k0 = 0; k0 < p; k0++, t++) {
                    weight[t] = w[0][k0];
                    node[t] = base[0] + k0;
                }
            } else if (dim == 2) {
                for (int k1 = 0; k1 < p; k1++) {
                    for (int k0 = 0; k0 < p; k0++, t++) {
                        weight[t] = w[0][k0] * w[1][k1];
                        node[t] = base[0] + k0 + npd * (base[1] + k1);
                    }
                }
            } else {
                for (int k2 = 0; k2 < p; k2++) {
                    for (int k1 = 0; k1 < p; k1++) {
                        for (int k0 = 0; k0 < p; k0++, t++) {
                            weight[t] = (w[0][k0] * w[1][k1]) * w[2][k2];
                            node[t] = base[0] + k0 + npd * ((base[1] + k1) + npd * (base[2] + k2));
                        }
                    }
                }
            }
        }
    }
}
