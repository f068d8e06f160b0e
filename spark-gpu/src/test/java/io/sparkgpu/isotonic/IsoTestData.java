package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;

/** Generated inputs and algorithm-independent checks of isotonic solutions (no Spark types: GPU tests use it). */
final class IsoTestData {
    final double[] x;
    final double[] y;
    final double[] w;

    IsoTestData(double[] x, double[] y, double[] w) {
        this.x = x;
        this.y = y;
        this.w = w;
    }

    /** Noisy increasing data with ties: features from {@code distinct} values, weights in [0.5, 2) or 1. */
    static IsoTestData noisy(int n, int distinct, long seed, boolean weighted) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] x = new double[n];
        double[] y = new double[n];
        double[] w = weighted ? new double[n] : null;
        for (int i = 0; i < n; i++) {
            x[i] = r.nextInt(distinct) * 0.25 - 3;
            y[i] = Math.sin(x[i]) + 0.2 * x[i] + r.nextGaussian();
            if (weighted) {
                w[i] = 0.5 + 1.5 * r.nextDouble();
            }
        }
        return new IsoTestData(x, y, w);
    }

    /** Pooled points of the data (increasing fit). */
    IsoPoints points() {
        return IsoPoints.pool(x, y, w, x.length, false, IsoScales.forData(y, w, x.length), false, IsoColumns.DEFAULT);
    }

    /** Points with sums given directly: pooled point i has label sum s[i] and weight sum wt[i] (as doubles). */
    static IsoPoints sums(double[] labels, double[] weights) {
        int n = labels.length;
        double[] x = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = i;
        }
        return IsoPoints.pool(x, labels, weights, n, false, IsoScales.forData(labels, weights, n), false,
                IsoColumns.DEFAULT);
    }

    /**
     * KKT conditions of weighted least squares under the order of the pooled points, checked from the data alone:
     * (1) the fitted sequence is non-decreasing; (2) on every block (level set) the weighted residuals sum to 0,
     * i.e. the value is the block's weighted mean; (3) within a block every prefix has residual sum >= 0 (no
     * split of the block would lower the loss), and the strict order of adjacent block values holds.
     */
    static void assertKkt(IsoPoints p, L2Blocks b, IsoScales sc) {
        double[] fit = new double[p.n];
        int k = 0;
        for (int blk = 0; blk < b.m; blk++) {
            double v = b.mean(blk, sc);
            if (blk > 0) {
                assertTrue(b.mean(blk - 1, sc) < v, "block values must strictly increase at block " + blk);
            }
            double prefix = 0;
            double scale = 0;
            int first = k;
            while (k < p.n && p.x[k] <= b.xEnd[blk]) {
                assertTrue(p.x[k] >= b.xStart[blk], "blocks must tile the points");
                double wi = sc.weight(p.acc[4 * k + 2], p.acc[4 * k + 3]);
                double si = Math.scalb(io.sparkgpu.common.Int128.toDouble(p.acc[4 * k], p.acc[4 * k + 1]), -sc.labelShift);
                prefix += si - wi * v;
                scale += Math.abs(si) + Math.abs(wi * v);
                fit[k] = v;
                if (p.x[k] < b.xEnd[blk]) {
                    assertTrue(prefix >= -1e-9 * scale, "prefix of block " + blk + " ending at point " + k
                            + " has negative residual sum " + prefix);
                }
                k++;
            }
            assertTrue(k > first, "empty block " + blk);
            assertEquals(0.0, prefix, 1e-9 * scale + 1e-300, "block " + blk + " value is not its weighted mean");
        }
        assertEquals(p.n, k, "blocks must cover every point");
        for (int i = 1; i < p.n; i++) {
            assertTrue(fit[i - 1] <= fit[i], "fit must be monotone at " + i);
        }
    }

    /** Textbook PAVA in doubles (merge while the previous mean is >= the current one), for comparisons. */
    static double[] naivePavaValues(double[] s, double[] wt) {
        int n = s.length;
        double[] bs = new double[n];
        double[] bw = new double[n];
        int[] len = new int[n];
        int top = -1;
        for (int i = 0; i < n; i++) {
            top++;
            bs[top] = s[i];
            bw[top] = wt[i];
            len[top] = 1;
            while (top > 0 && bs[top - 1] / bw[top - 1] >= bs[top] / bw[top]) {
                bs[top - 1] += bs[top];
                bw[top - 1] += bw[top];
                len[top - 1] += len[top];
                top--;
            }
        }
        double[] out = new double[n];
        int k = 0;
        for (int b = 0; b <= top; b++) {
            Arrays.fill(out, k, k + len[b], bs[b] / bw[b]);
            k += len[b];
        }
        return out;
    }

    /** Sub-range [from, to) of pooled points, as its own points. */
    static IsoPoints slice(IsoPoints p, int from, int to) {
        return IsoPoints.ofSums(Arrays.copyOfRange(p.x, from, to), Arrays.copyOfRange(p.acc, 4 * from, 4 * to));
    }
}
