package io.sparkgpu.kmeans;

/**
 * Layout of the exact per-partition result of one k-means step, shared with the kernel:
 * {@code [sums 2kd][weight sums 2k][cost 2][counts k]} as 64-bit words; pairs are (lo, hi) 128-bit
 * fixed-point integers (see {@link FixedPoint}). Combining partials is word-wise 128-bit addition:
 * exact, associative and commutative, so the combined result does not depend on partitioning or order.
 */
public final class KMeansAccumulator {
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
            FixedPoint.addPair(a, at, b[at + 1], b[at]);
        }
        for (int at = pairsEnd; at < a.length; at++) {
            a[at] += b[at];
        }
        return a;
    }
}
