package io.sparkgpu.tsne.optimize;

import io.sparkgpu.common.DetMath;
import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.tsne.affinity.SparseRows;

/**
 * The KL divergence KL(P || Q) = sum_{p_ij > 0} p_ij log(p_ij (1 + |y_i - y_j|^2)) + (sum p_ij) log Z, accumulated
 * from the stored entries of P: per row in double (CSR order), then over rows in exact 128-bit fixed point (two sums:
 * the first term and sum p_ij), so that row slices and threads can be combined in any order and the value does not
 * depend on the partitioning. Cost O(nnz(P) dim), parallel over chunks of rows. The logarithm is {@link DetMath#log},
 * so the device-resident fit's kernel (tsne_kl_sell_d*, {@link AttractiveForcesGpu#launchKl}) gives the same bits.
 */
final class TsneKl {
    /** Both sums are bounded by this: sum p = 1, and |log(p (1 + d^2))| < 2^11 for every finite double. */
    static final int SHIFT = FixedPoint.shiftFor(1 << 12);
    static final double[] MUL = FixedPoint.multipliers(SHIFT);

    private TsneKl() {
    }

    /** A fresh accumulator: {A lo, A hi, S lo, S hi}. */
    static long[] empty() {
        return new long[4];
    }

    /** Rows per parallel chunk; slices with fewer rows run on the calling thread. */
    static final int CHUNK = 8192;

    /**
     * The slice's exact partial sums; y holds all n points. Each row's two sums are taken in double in CSR order
     * (row-local, so independent of the slicing), then added to the accumulator in exact fixed point, so chunks of
     * rows may run on several threads in any order.
     */
    static long[] partial(SparseRows p, double[] y, int dim) {
        return partial(p, y, dim, io.sparkgpu.tsne.repulsion.TsneKernel.STANDARD);
    }

    /** {@link #partial(SparseRows, double[], int)} for the kernel of {@code dof}: -log w = dof log(1 + d2 / dof). */
    static long[] partial(SparseRows p, double[] y, int dim, double dof) {
        int chunks = (p.rows + CHUNK - 1) / CHUNK;
        if (chunks <= 1) {
            return rows(p, y, dim, 0, p.rows, dof);
        }
        // each chunk its own accumulator, summed afterwards: add() mutates its first argument, so it must not be
        // a parallel reduce's shared identity (that made KL wrong and run-dependent beyond one chunk)
        long[][] parts = java.util.stream.IntStream.range(0, chunks).parallel()
                .mapToObj(c -> rows(p, y, dim, c * CHUNK, Math.min(p.rows, (c + 1) * CHUNK), dof))
                .toArray(long[][]::new);
        long[] acc = empty();
        for (long[] part : parts) {
            add(acc, part);
        }
        return acc;
    }

    private static long[] rows(SparseRows p, double[] y, int dim, int r0, int r1, double dof) {
        long[] acc = empty();
        for (int r = r0; r < r1; r++) {
            int i = p.rowOffset + r;
            double a = 0;
            double s = 0;
            for (int e = p.rowPtr[r]; e < p.rowPtr[r + 1]; e++) {
                double pij = p.val[e];
                if (pij > 0) {
                    int j = p.col[e];
                    double d2 = 0;
                    for (int t = 0; t < dim; t++) {
                        double diff = y[i * dim + t] - y[j * dim + t];
                        d2 += diff * diff;
                    }
                    a += dof == 1.0 ? pij * DetMath.log(pij * (1.0 + d2))
                            : pij * (DetMath.log(pij) + io.sparkgpu.tsne.repulsion.TsneKernel.negLogWeight(d2, dof));
                    s += pij;
                }
            }
            FixedPoint.add(acc, 0, a, MUL[0], MUL[1]);
            FixedPoint.add(acc, 2, s, MUL[0], MUL[1]);
        }
        return acc;
    }

    /** acc += part, exactly. */
    static long[] add(long[] acc, long[] part) {
        FixedPoint.addPair(acc, 0, part[0], part[1]);
        FixedPoint.addPair(acc, 2, part[2], part[3]);
        return acc;
    }

    /** The divergence for normalisation Z. */
    static double value(long[] acc, double z) {
        return FixedPoint.toDouble(acc, 0, SHIFT) + FixedPoint.toDouble(acc, 2, SHIFT) * Math.log(z);
    }
}
