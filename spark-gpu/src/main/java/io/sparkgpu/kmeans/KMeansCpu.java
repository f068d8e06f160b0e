package io.sparkgpu.kmeans;

import io.sparkgpu.common.FixedPoint;

/**
 * CPU twin of the {@code kmeans_step_*} kernels: the same contract and the same floating-point operation
 * order (distances summed in dimension order, no fused multiply-add, ties to the lower centre index,
 * exact fixed-point sums), so its results equal the GPU's bit for bit. O(n*k*d) per call; the Euclidean
 * search stops a candidate early once its partial sum reaches the best distance, which cannot change the
 * answer because partial sums of non-negative terms never decrease under round-to-nearest.
 */
public final class KMeansCpu {
    private KMeansCpu() {
    }

    /**
     * One assignment pass over {@code data}.
     *
     * @param centres    k*d row-major
     * @param accumulate add sums, weights, counts and cost to a fresh accumulator (returned), else return null
     * @param labels     optional output of nearest-centre indices (length >= n)
     * @param dists      optional output of nearest distances; with {@code minUpdate} keeps min(old, new)
     */
    public static long[] step(KMeansData data, double[] centres, int k, boolean cosine, KMeansScales scales,
                              boolean accumulate, int[] labels, double[] dists, boolean minUpdate) {
        final int n = data.n;
        final int d = data.d;
        final double[] x = data.x;
        final double[] w = data.w;
        long[] acc = accumulate ? new long[KMeansAccumulator.length(k, d)] : null;
        final double[] m = accumulate ? scales.multipliers : null;
        final int costAt = KMeansAccumulator.costAt(k, d);
        for (int i = 0; i < n; i++) {
            final int base = i * d;
            int best = 0;
            double bestD = cosine ? cosineDistance(x, base, centres, 0, d) : fullSquared(x, base, centres, 0, d);
            for (int c = 1; c < k; c++) {
                final int cb = c * d;
                if (cosine) {
                    double dc = cosineDistance(x, base, centres, cb, d);
                    if (dc < bestD) {
                        bestD = dc;
                        best = c;
                    }
                } else {
                    double acc2 = 0.0;
                    int j = 0;
                    boolean pruned = false;
                    while (j < d) {
                        int end = Math.min(d, j + 8);
                        for (; j < end; j++) {
                            double t = x[base + j] - centres[cb + j];
                            acc2 += t * t;
                        }
                        if (acc2 >= bestD) {
                            pruned = true;
                            break;
                        }
                    }
                    if (!pruned && acc2 < bestD) {
                        bestD = acc2;
                        best = c;
                    }
                }
            }
            if (labels != null) {
                labels[i] = best;
            }
            if (dists != null) {
                dists[i] = (minUpdate && dists[i] <= bestD) ? dists[i] : bestD;
            }
            if (accumulate) {
                final double wi = w[i];
                final int row = 2 * best * d;
                for (int j = 0; j < d; j++) {
                    FixedPoint.add(acc, row + 2 * j, wi * x[base + j], m[2 * j], m[2 * j + 1]);
                }
                FixedPoint.add(acc, KMeansAccumulator.weightAt(best, k, d), wi, m[2 * d], m[2 * d + 1]);
                acc[KMeansAccumulator.countAt(best, k, d)]++;
                FixedPoint.add(acc, costAt, wi * bestD, m[2 * d + 2], m[2 * d + 3]);
            }
        }
        return acc;
    }

    static double fullSquared(double[] x, int xb, double[] c, int cb, int d) {
        double acc = 0.0;
        for (int j = 0; j < d; j++) {
            double t = x[xb + j] - c[cb + j];
            acc += t * t;
        }
        return acc;
    }

    static double cosineDistance(double[] x, int xb, double[] c, int cb, int d) {
        double dot = 0.0;
        for (int j = 0; j < d; j++) {
            dot += x[xb + j] * c[cb + j];
        }
        return 1.0 - dot;
    }

    /** Nearest centre of one point (same rules as the kernel), for single-row prediction. */
    public static int nearest(double[] point, double[] centres, int k, int d, boolean cosine) {
        int best = 0;
        double bestD = cosine ? cosineDistance(point, 0, centres, 0, d) : fullSquared(point, 0, centres, 0, d);
        for (int c = 1; c < k; c++) {
            double dc = cosine ? cosineDistance(point, 0, centres, c * d, d) : fullSquared(point, 0, centres, c * d, d);
            if (dc < bestD) {
                bestD = dc;
                best = c;
            }
        }
        return best;
    }
}
