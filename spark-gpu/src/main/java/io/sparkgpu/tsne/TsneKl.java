package io.sparkgpu.tsne;

import io.sparkgpu.common.FixedPoint;

/**
 * The KL divergence KL(P || Q) = sum_{p_ij > 0} p_ij log(p_ij (1 + |y_i - y_j|^2)) + (sum p_ij) log Z, accumulated
 * from the stored entries of P in exact 128-bit fixed point (two sums: the first term and sum p_ij), so that row
 * slices can be combined in any order and the value does not depend on the partitioning. Cost O(nnz(P) dim).
 */
final class TsneKl {
    /** Both sums are bounded by this: sum p = 1, and |log(p (1 + d^2))| < 2^11 for every finite double. */
    static final int SHIFT = FixedPoint.shiftFor(1 << 12);
    private static final double[] MUL = FixedPoint.multipliers(SHIFT);

    private TsneKl() {
    }

    /** A fresh accumulator: {A lo, A hi, S lo, S hi}. */
    static long[] empty() {
        return new long[4];
    }

    /** The slice's exact partial sums; y holds all n points. */
    static long[] partial(SparseRows p, double[] y, int dim) {
        long[] acc = empty();
        for (int r = 0; r < p.rows; r++) {
            int i = p.rowOffset + r;
            for (int e = p.rowPtr[r]; e < p.rowPtr[r + 1]; e++) {
                double pij = p.val[e];
                if (pij > 0) {
                    int j = p.col[e];
                    double d2 = 0;
                    for (int a = 0; a < dim; a++) {
                        double diff = y[i * dim + a] - y[j * dim + a];
                        d2 += diff * diff;
                    }
                    FixedPoint.add(acc, 0, pij * Math.log(pij * (1.0 + d2)), MUL[0], MUL[1]);
                    FixedPoint.add(acc, 2, pij, MUL[0], MUL[1]);
                }
            }
        }
        return acc;
    }

    /** acc += part, exactly. */
    static long[] add(long[] acc, long[] part) {
        FixedPoint.addPair(acc, 0, part[1], part[0]);
        FixedPoint.addPair(acc, 2, part[3], part[2]);
        return acc;
    }

    /** The divergence for normalisation Z. */
    static double value(long[] acc, double z) {
        return FixedPoint.toDouble(acc, 0, SHIFT) + FixedPoint.toDouble(acc, 2, SHIFT) * Math.log(z);
    }
}
