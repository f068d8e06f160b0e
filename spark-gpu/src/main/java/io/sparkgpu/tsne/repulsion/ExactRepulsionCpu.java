package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.common.FixedPoint;
import java.util.stream.IntStream;

/**
 * CPU twin of tsne_exact_d{1,2,3} (include/tsne/exact.cuh): the exact O(n^2) repulsive term of a row slice with the
 * kernel's order of operations. For row i, 32 lanes l sum j = l, l + 32, ... ascending (diff, d2, w = 1 / (1 + d2),
 * f += w^2 diff, z += w, the self pair included: it adds 0 to f and 1 to z), then the lane sums are halved in place
 * (v[l] += v[l + h] for h = 16, 8, 4, 2, 1), the warp butterfly's value in lane 0. Rows are independent, so they run
 * in parallel chunks; the z_i are added in exact fixed point, so neither the chunking nor the thread count changes
 * a bit. About 1.2 ns per pair and thread (2-D, one division per pair).
 */
final class ExactRepulsionCpu {
    static final int LANES = 32;
    /** Rows per parallel task. */
    static final int CHUNK = 16;

    private ExactRepulsionCpu() {
    }

    /** Forces of rows [rowOffset, rowOffset + rows) (rows x dim) and the fixed-point sum of their z_i at zShift. */
    static Repulsion repulsion(double[] y, int n, int dim, int rowOffset, int rows, int zShift) {
        return repulsion(y, n, dim, rowOffset, rows, zShift, TsneKernel.STANDARD);
    }

    /** As above for the kernel of {@code dof} (dof != 1: {@link #rowHeavy}). */
    static Repulsion repulsion(double[] y, int n, int dim, int rowOffset, int rows, int zShift, double dof) {
        return repulsion(y, n, dim, rowOffset, rows, zShift, dof, false);
    }

    /**
     * As above; {@code perRow}: each row's z_i as well (the kernel's zrow). Rows may lie past n (y holding them):
     * they sum over the n points only.
     */
    static Repulsion repulsion(double[] y, int n, int dim, int rowOffset, int rows, int zShift, double dof,
            boolean perRow) {
        double[] force = new double[rows * dim];
        double[] zRows = perRow ? new double[rows] : null;
        double[] zm = FixedPoint.multipliers(zShift);
        int chunks = (rows + CHUNK - 1) / CHUNK;
        IntStream range = IntStream.range(0, chunks);
        long[][] parts = (chunks > 1 ? range.parallel() : range).mapToObj(c -> {
            long[] z = new long[2];
            double[] lanes = new double[LANES * 4];
            for (int r = c * CHUNK; r < Math.min(rows, (c + 1) * CHUNK); r++) {
                double zi = dof == 1.0 ? row(y, n, dim, rowOffset + r, lanes, force, r * dim)
                        : rowHeavy(y, n, dim, rowOffset + r, dof, lanes, force, r * dim);
                if (zRows != null) {
                    zRows[r] = zi;
                }
                FixedPoint.add(z, 0, zi, zm[0], zm[1]);
            }
            return z;
        }).toArray(long[][]::new);
        long[] z = new long[2];
        for (long[] part : parts) {
            FixedPoint.addPair(z, 0, part[0], part[1]);
        }
        return new Repulsion(force, z, zShift, zRows);
    }

    /** Row i: writes its force at out[at..at + dim), returns z_i. {@code lanes}: scratch of 4 x 32 doubles. */
    static double row(double[] y, int n, int dim, int i, double[] lanes, double[] out, int at) {
        switch (dim) {
            case 1:
                lanes1(y, n, i, lanes);
                break;
            case 2:
                lanes2(y, n, i, lanes);
                break;
            default:
                lanes3(y, n, i, lanes);
                break;
        }
        return reduceLanes(dim, lanes, out, at);
    }

    /** The warp's butterfly over the 32 lane sums of f and z; writes the force, returns z_i. */
    private static double reduceLanes(int dim, double[] lanes, double[] out, int at) {
        // the warp butterfly read in lane 0: v[l] = v[l] + v[l ^ h] equals v[l] + v[l + h] for l < h
        for (int h = LANES / 2; h >= 1; h >>= 1) {
            for (int v = 0; v <= dim; v++) {
                int base = v * LANES;
                for (int l = 0; l < h; l++) {
                    lanes[base + l] = lanes[base + l] + lanes[base + l + h];
                }
            }
        }
        for (int a = 0; a < dim; a++) {
            out[at + a] = lanes[a * LANES];
        }
        return lanes[dim * LANES];
    }

    /**
     * Row i for the heavy-tailed kernel of {@code dof != 1} (include/tsne/exact.cuh's other branch): per pair
     * t = 1 + d2 / dof, w = t^-dof, f += (w / t) diff, z += w; the lanes and their tree as in {@link #row}.
     */
    static double rowHeavy(double[] y, int n, int dim, int i, double dof, double[] lanes, double[] out, int at) {
        double[] diff = new double[dim];
        for (int l = 0; l < LANES; l++) {
            double[] f = new double[dim];
            double z = 0;
            for (int j = l; j < n; j += LANES) {
                double d2 = 0;
                for (int a = 0; a < dim; a++) {
                    diff[a] = y[i * dim + a] - y[j * dim + a];
                    double sq = diff[a] * diff[a];
                    d2 = a == 0 ? sq : d2 + sq;
                }
                double t = TsneKernel.base(d2, dof);
                double w = TsneKernel.pow(t, dof);
                double w2 = w / t;
                for (int a = 0; a < dim; a++) {
                    f[a] += w2 * diff[a];
                }
                z += w;
            }
            for (int a = 0; a < dim; a++) {
                lanes[a * LANES + l] = f[a];
            }
            lanes[dim * LANES + l] = z;
        }
        return reduceLanes(dim, lanes, out, at);
    }

    // lanes layout: [f_0 of lanes 0..31 | f_1 ... | z of lanes 0..31] (dim + 1 blocks of 32)

    private static void lanes1(double[] y, int n, int i, double[] lanes) {
        double yi = y[i];
        for (int l = 0; l < LANES; l++) {
            double f = 0;
            double z = 0;
            for (int j = l; j < n; j += LANES) {
                double d = yi - y[j];
                double w = 1.0 / (1.0 + d * d);
                f += (w * w) * d;
                z += w;
            }
            lanes[l] = f;
            lanes[LANES + l] = z;
        }
    }

    private static void lanes2(double[] y, int n, int i, double[] lanes) {
        double y0 = y[2 * i];
        double y1 = y[2 * i + 1];
        for (int l = 0; l < LANES; l++) {
            double f0 = 0;
            double f1 = 0;
            double z = 0;
            for (int j = l; j < n; j += LANES) {
                double d0 = y0 - y[2 * j];
                double d1 = y1 - y[2 * j + 1];
                double w = 1.0 / (1.0 + (d0 * d0 + d1 * d1));
                double w2 = w * w;
                f0 += w2 * d0;
                f1 += w2 * d1;
                z += w;
            }
            lanes[l] = f0;
            lanes[LANES + l] = f1;
            lanes[2 * LANES + l] = z;
        }
    }

    private static void lanes3(double[] y, int n, int i, double[] lanes) {
        double y0 = y[3 * i];
        double y1 = y[3 * i + 1];
        double y2 = y[3 * i + 2];
        for (int l = 0; l < LANES; l++) {
            double f0 = 0;
            double f1 = 0;
            double f2 = 0;
            double z = 0;
            for (int j = l; j < n; j += LANES) {
                double d0 = y0 - y[3 * j];
                double d1 = y1 - y[3 * j + 1];
                double d2 = y2 - y[3 * j + 2];
                double w = 1.0 / (1.0 + ((d0 * d0 + d1 * d1) + d2 * d2));
                double w2 = w * w;
                f0 += w2 * d0;
                f1 += w2 * d1;
                f2 += w2 * d2;
                z += w;
            }
            lanes[l] = f0;
            lanes[LANES + l] = f1;
            lanes[2 * LANES + l] = f2;
            lanes[3 * LANES + l] = z;
        }
    }
}
