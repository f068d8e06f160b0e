package io.sparkgpu.kmeans;

import io.sparkgpu.common.FixedPoint;

/**
 * Layout of the exact per-partition result of one k-means step, shared with the kernel:
 * {@code [sums 2kd][weight sums 2k][cost 2][counts k]} as 64-bit words; pairs are (lo, hi) 128-bit
 * fixed-point integers (see {@link FixedPoint}). Combining partials is word-wise 128-bit addition:
 * exact, associative and commutative, so the combined result does not depend on partitioning or order.
 */
final class KMeansAccumulator {
    private KMeansAccumulator() {
    }

    public static int length(int k, int d) {
        long len = 2L * k * d + 2L * k + 2 + k;
        if (len > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("k*d too large for one accumulator: k=" + k + ", d=" + d);
        }
        return (int) len;
    }

    public static int sumAt(int c, int j, int d) {
        return 2 * (c * d + j);
    }

    public static int weightAt(int c, int k, int d) {
        return 2 * k * d + 2 * c;
    }

    public static int costAt(int k, int d) {
        return 2 * k * d + 2 * k;
    }

    public static int countAt(int c, int k, int d) {
        return 2 * k * d + 2 * k + 2 + c;
    }

    /** Adds {@code b} into {@code a} (same k, d) exactly. */
    public static long[] merge(long[] a, long[] b, int k, int d) {
        if (a.length != b.length) {
            throw new IllegalArgumentException("accumulators of different shapes: " + a.length + " vs " + b.length);
        }
        int pairsEnd = countAt(0, k, d);
        for (int at = 0; at < pairsEnd; at += 2) {
            FixedPoint.addPair(a, at, b[at], b[at + 1]);
        }
        for (int at = pairsEnd; at < a.length; at++) {
            a[at] += b[at];
        }
        return a;
    }

    /**
     * The centres one Lloyd step moves to, from a combined accumulator: each cluster's exact weighted sum
     * divided by its weight (for the cosine distance then scaled to unit length). A cluster that received
     * no point, or whose centroid has zero length under the cosine distance, keeps its old centre. Lives
     * here rather than in the Spark trainer so that programs without Spark (benchmarks, the GPU bundle) run
     * exactly the trainer's update.
     */
    public static double[] centres(long[] acc, double[] old, int k, int d, boolean cosine, KMeansScales scales) {
        double[] next = old.clone();
        for (int c = 0; c < k; c++) {
            double wsum = FixedPoint.toDouble(acc, weightAt(c, k, d), scales.weightShift());
            if (acc[countAt(c, k, d)] == 0 || wsum == 0) {
                continue;
            }
            double ss = 0;
            for (int j = 0; j < d; j++) {
                double v = FixedPoint.toDouble(acc, sumAt(c, j, d), scales.shifts[j]) / wsum;
                next[c * d + j] = v;
                ss += v * v;
            }
            if (cosine) {
                double norm = Math.sqrt(ss);
                if (norm == 0) {
                    System.arraycopy(old, c * d, next, c * d, d);
                } else {
                    for (int j = 0; j < d; j++) {
                        next[c * d + j] /= norm;
                    }
                }
            }
        }
        return next;
    }
}
