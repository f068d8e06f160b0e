package io.sparkgpu.kmeans;

import io.sparkgpu.common.FixedPoint;

/**
 * CPU twin of the {@code kmeans_step_*} kernels: the same contract and the same floating-point operation
 * order, so its results equal the GPU's bit for bit. Per dimension, in dimension order, the squared
 * Euclidean distance takes {@code t = x - c; acc = Math.fma(t, t, acc)} and the cosine distance
 * {@code dot = Math.fma(x, c, dot)}, then {@code 1 - dot}. {@link Math#fma} is IEEE 754 fusedMultiplyAdd
 * (exact product and sum, one rounding), the same operation as the kernel's explicit {@code __fma_rn}; no
 * other multiply-add is fused on either side (Java never contracts, nvcc runs with --fmad=false). Ties go
 * to the lower centre index and sums are exact fixed point. O(n*k*d) per call; the Euclidean search stops
 * a candidate early once its partial sum reaches the best distance, which cannot change the answer:
 * {@code fma(t, t, acc) >= acc} because t*t >= 0 and rounding to nearest is monotone, so partial sums never
 * decrease.
 */
final class KMeansCpu {
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
        final double[] bestOut = new double[1];
        final double[] tri = n >= 4 * k ? triangleTable(centres, k, d, cosine) : null;
        for (int i = 0; i < n; i++) {
            final int base = i * d;
            final int best = search(x, base, centres, k, d, cosine, tri, bestOut);
            final double bestD = bestOut[0];
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

    /** Largest k for which {@link #step} precomputes the k*k centre-distance table used for pruning. */
    static final int TRIANGLE_MAX_K = 2048;
    /** Relative safety margin of the triangle-inequality test, far above the rounding error of the distances. */
    static final double TRIANGLE_MARGIN = 1e-9;

    /**
     * Pruning thresholds for the Euclidean search: entry (a, b) is |c_a - c_b|^2 / 4 shrunk by
     * {@link #TRIANGLE_MARGIN}. If it exceeds the current best squared distance d(x, c_a)^2 then, by the
     * triangle inequality, |x - c_b| >= |c_a - c_b| - |x - c_a| > |x - c_a| with room to spare for rounding, so
     * c_b can be neither nearer nor tied and is not evaluated. Null for cosine or large k.
     */
    static double[] triangleTable(double[] cen, int k, int d, boolean cosine) {
        if (cosine || k > TRIANGLE_MAX_K || k < 3) {
            return null;
        }
        double[] t = new double[k * k];
        double f = 0.25 / (1.0 + TRIANGLE_MARGIN);
        for (int a = 0; a < k; a++) {
            for (int b = a + 1; b < k; b++) {
                double v = fullSquared(cen, a * d, cen, b * d, d) * f;
                t[a * k + b] = v;
                t[b * k + a] = v;
            }
        }
        return t;
    }

    /**
     * Index of the nearest centre to the point at x[base..base+d) (ties to the lower index); its distance is
     * stored in bestOut[0]. Candidates that the triangle inequality excludes (see {@link #triangleTable}) are
     * skipped; the others are evaluated four at a time so that the CPU keeps four independent FMA chains in
     * flight. Each distance is still summed in dimension order and candidates are compared in index order,
     * and a skipped candidate is provably farther than the best, so the result is bitwise that of the plain
     * one-centre-at-a-time search. A Euclidean group also stops early once every partial sum reaches the best
     * distance (partial sums never decrease).
     */
    static int search(double[] x, int base, double[] cen, int k, int d, boolean cosine, double[] tri,
                      double[] bestOut) {
        int best = 0;
        double bestD = cosine ? cosineDistance(x, base, cen, 0, d) : fullSquared(x, base, cen, 0, d);
        int c = 1;
        while (c < k) {
            int g0 = -1;
            int g1 = -1;
            int g2 = -1;
            int g3 = -1;
            int m = 0;
            final int row = best * k;
            while (c < k && m < 4) {
                if (tri == null || !(tri[row + c] > bestD)) {
                    if (m == 0) {
                        g0 = c;
                    } else if (m == 1) {
                        g1 = c;
                    } else if (m == 2) {
                        g2 = c;
                    } else {
                        g3 = c;
                    }
                    m++;
                }
                c++;
            }
            if (m < 4) {
                for (int q = 0; q < m; q++) {
                    final int cj = q == 0 ? g0 : q == 1 ? g1 : g2;
                    final double dc = cosine ? cosineDistance(x, base, cen, cj * d, d) : prunedSquared(x, base, cen, cj * d, d, bestD);
                    if (dc < bestD) {
                        bestD = dc;
                        best = cj;
                    }
                }
                continue;
            }
            final int c0 = g0 * d;
            final int c1 = g1 * d;
            final int c2 = g2 * d;
            final int c3 = g3 * d;
            double a0 = 0.0;
            double a1 = 0.0;
            double a2 = 0.0;
            double a3 = 0.0;
            if (cosine) {
                for (int j = 0; j < d; j++) {
                    final double xj = x[base + j];
                    a0 = Math.fma(xj, cen[c0 + j], a0);
                    a1 = Math.fma(xj, cen[c1 + j], a1);
                    a2 = Math.fma(xj, cen[c2 + j], a2);
                    a3 = Math.fma(xj, cen[c3 + j], a3);
                }
                a0 = 1.0 - a0;
                a1 = 1.0 - a1;
                a2 = 1.0 - a2;
                a3 = 1.0 - a3;
            } else {
                boolean pruned = false;
                int j = 0;
                while (j < d) {
                    final int end = Math.min(d, j + 8);
                    for (; j < end; j++) {
                        final double xj = x[base + j];
                        final double t0 = xj - cen[c0 + j];
                        final double t1 = xj - cen[c1 + j];
                        final double t2 = xj - cen[c2 + j];
                        final double t3 = xj - cen[c3 + j];
                        a0 = Math.fma(t0, t0, a0);
                        a1 = Math.fma(t1, t1, a1);
                        a2 = Math.fma(t2, t2, a2);
                        a3 = Math.fma(t3, t3, a3);
                    }
                    if (a0 >= bestD && a1 >= bestD && a2 >= bestD && a3 >= bestD) {
                        pruned = true;
                        break;
                    }
                }
                if (pruned) {
                    continue;
                }
            }
            if (a0 < bestD) {
                bestD = a0;
                best = g0;
            }
            if (a1 < bestD) {
                bestD = a1;
                best = g1;
            }
            if (a2 < bestD) {
                bestD = a2;
                best = g2;
            }
            if (a3 < bestD) {
                bestD = a3;
                best = g3;
            }
        }
        bestOut[0] = bestD;
        return best;
    }

    /** Squared distance, or any value >= bound once the partial sum reaches bound (it can then not win). */
    private static double prunedSquared(double[] x, int xb, double[] c, int cb, int d, double bound) {
        double acc = 0.0;
        int j = 0;
        while (j < d) {
            final int end = Math.min(d, j + 8);
            for (; j < end; j++) {
                final double t = x[xb + j] - c[cb + j];
                acc = Math.fma(t, t, acc);
            }
            if (acc >= bound) {
                break;
            }
        }
        return acc;
    }

    static double fullSquared(double[] x, int xb, double[] c, int cb, int d) {
        double acc = 0.0;
        for (int j = 0; j < d; j++) {
            double t = x[xb + j] - c[cb + j];
            acc = Math.fma(t, t, acc);
        }
        return acc;
    }

    static double cosineDistance(double[] x, int xb, double[] c, int cb, int d) {
        double dot = 0.0;
        for (int j = 0; j < d; j++) {
            dot = Math.fma(x[xb + j], c[cb + j], dot);
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
