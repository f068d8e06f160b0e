package io.sparkgpu.tsne.affinity;

import io.sparkgpu.common.DetMath;
import java.util.Arrays;
import java.util.stream.IntStream;

/**
 * CPU twins of the kNN and calibration kernels (tsne_knn_tile8, tsne_aff_cond): the same distances in the same
 * order and the same bisection, operation for operation (see {@link TsneAffinities} for the arithmetic), so the
 * same bits; multi-threaded over rows.
 */
final class TsneAffinitiesCpu {
    private TsneAffinitiesCpu() {
    }

    /** (d1, i1) before (d2, i2): smaller distance, then smaller index as unsigned (-1 padding last). */
    static boolean before(float d1, int i1, float d2, int i2) {
        return d1 < d2 || (d1 == d2 && Integer.compareUnsigned(i1, i2) < 0);
    }

    /** CPU twin of the GPU kNN: same distances, same order. */
    static KnnGraph knnBlock(float[] query, int queryOffset, int nq, float[] ref, int refOffset, int nr, int d,
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
        final int last = at + k - 1;
        for (int r = 0; r < nr; r++) {
            int gi = refOffset + r;
            if (gi == gq) {
                continue;
            }
            float acc = dist2Within(query, q * d, ref, r * d, d, dist2[last]);
            if (before(acc, gi, dist2[last], index[last])) {
                insert(dist2, index, at, k, acc, gi);
            }
        }
    }

    /**
     * The squared distance of rows a[aa..aa+d) and b[ba..ba+d) (the kNN arithmetic), or +Infinity as soon as a
     * partial sum exceeds {@code bound} (partial sums never decrease: such a pair cannot beat the bound).
     */
    static float dist2Within(float[] a, int aa, float[] b, int ba, int d, float bound) {
        float acc = 0f;
        for (int t = 0; t < d; t++) {
            float diff = a[aa + t] - b[ba + t];
            acc = Math.fma(diff, diff, acc);
            if (acc > bound) {
                return Float.POSITIVE_INFINITY;
            }
        }
        return acc;
    }

    /** Inserts (acc, gi) into the list dist2/index[at..at+k), ascending by (dist2, index); the last entry drops out. */
    static void insert(float[] dist2, int[] index, int at, int k, float acc, int gi) {
        int pos = at + k - 1;
        while (pos > at && before(acc, gi, dist2[pos - 1], index[pos - 1])) {
            dist2[pos] = dist2[pos - 1];
            index[pos] = index[pos - 1];
            pos--;
        }
        dist2[pos] = acc;
        index[pos] = gi;
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

    /** Rows of {@link TsneAffinities#conditional} into out (rows x k); the search status of each row (0: on target). */
    static int[] conditional(KnnGraph g, double target, double[] out) {
        int[] status = new int[g.rows];
        final int chunk = 64;
        IntStream.range(0, (g.rows + chunk - 1) / chunk).parallel().forEach(c -> {
            int end = Math.min(g.rows, (c + 1) * chunk);
            for (int r = c * chunk; r < end; r++) {
                status[r] = conditionalRow(g.dist2, r * g.k, g.k, target, out);
            }
        });
        return status;
    }

    /**
     * One row of {@link TsneAffinities#conditional} (the CPU twin of kernel tsne_aff_cond, operation for operation);
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
            if (Math.abs(diff) <= TsneAffinities.ENTROPY_TOL || step >= TsneAffinities.MAX_STEPS) {
                if (!(Math.abs(diff) <= TsneAffinities.ENTROPY_FAIL)) {
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
                if (!(Math.abs(diff) <= TsneAffinities.ENTROPY_FAIL)) {
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
}
