package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Weighted L1 (median) isotonic regression against a dynamic program and the maximin formula. */
class IsotonicL1Test {

    private static IsotonicConfig l1() {
        IsotonicConfig c = new IsotonicConfig();
        c.loss = IsotonicConfig.Loss.L1;
        c.backend = Backend.CPU;
        return c;
    }

    /** Random small data: integer-ish labels (many ties), features with repeats, weights with repeats. */
    private static IsoTestData small(SplittableRandom r) {
        int n = 1 + r.nextInt(60);
        int distinct = 1 + r.nextInt(25);
        double[] x = new double[n];
        double[] y = new double[n];
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = r.nextInt(distinct);
            y[i] = r.nextBoolean() ? r.nextInt(7) + 0.5 * x[i] : r.nextGaussian() * 3 + 0.3 * x[i];
            w[i] = 1 + r.nextInt(3) * 0.5;
        }
        return new IsoTestData(x, y, w);
    }

    /** Fitted value of every row from the model (features are boundaries or between a block's two ends). */
    private static double[] fitted(IsotonicResult res, double[] x) {
        IsotonicPredictor p = new IsotonicPredictor(res.boundaries, res.predictions, IsotonicConfig.OutOfBounds.CLIP);
        double[] f = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            f[i] = p.predict(x[i]);
        }
        return f;
    }

    private static double cost(IsoTestData d, double[] f) {
        double c = 0;
        for (int i = 0; i < d.x.length; i++) {
            c += d.w[i] * Math.abs(d.y[i] - f[i]);
        }
        return c;
    }

    /** Minimal L1 cost over non-decreasing functions of x: DP over candidate values (the labels). */
    private static double dpOptimum(IsoTestData d) {
        double[] xs = Arrays.stream(d.x).distinct().sorted().toArray();
        double[] cand = Arrays.stream(d.y).distinct().sorted().toArray();
        double[] f = new double[cand.length];
        for (double xv : xs) {
            double[] g = new double[cand.length];
            double best = Double.POSITIVE_INFINITY;
            for (int j = 0; j < cand.length; j++) {
                best = Math.min(best, f[j]);
                double c = 0;
                for (int i = 0; i < d.x.length; i++) {
                    if (d.x[i] == xv) {
                        c += d.w[i] * Math.abs(d.y[i] - cand[j]);
                    }
                }
                g[j] = best + c;
            }
            f = g;
        }
        return Arrays.stream(f).min().getAsDouble();
    }

    /** Lower weighted median of the rows whose feature is in [lo, hi]. */
    private static double lowerMedian(IsoTestData d, double lo, double hi) {
        List<double[]> rows = new ArrayList<>();
        double total = 0;
        for (int i = 0; i < d.x.length; i++) {
            if (d.x[i] >= lo && d.x[i] <= hi) {
                rows.add(new double[] {d.y[i], d.w[i]});
                total += d.w[i];
            }
        }
        rows.sort((a, b) -> Double.compare(a[0], b[0]));
        double cum = 0;
        for (double[] r : rows) {
            cum += r[1];
            if (2 * cum >= total) {
                return r[0];
            }
        }
        throw new AssertionError("empty range");
    }

    @Test
    void optimalAgainstDynamicProgramAndEqualToMaximin() {
        SplittableRandom r = new SplittableRandom(2024);
        for (int t = 0; t < 400; t++) {
            IsoTestData d = small(r);
            IsotonicResult res = IsotonicLocal.fit(d.x, d.y, d.w, l1());
            double[] f = fitted(res, d.x);
            double opt = dpOptimum(d);
            assertEquals(opt, cost(d, f), 1e-9 * Math.max(1, opt), "trial " + t + ": L1 cost is not minimal");
            // maximin u(x) = max_{a <= x} min_{b >= x} lowerMedian([a, b]) (weights are multiples of 0.5: exact)
            double[] xs = Arrays.stream(d.x).distinct().sorted().toArray();
            for (int i = 0; i < d.x.length; i++) {
                double u = Double.NEGATIVE_INFINITY;
                for (double a : xs) {
                    if (a > d.x[i]) {
                        continue;
                    }
                    double m = Double.POSITIVE_INFINITY;
                    for (double b : xs) {
                        if (b >= d.x[i]) {
                            m = Math.min(m, lowerMedian(d, a, b));
                        }
                    }
                    u = Math.max(u, m);
                }
                assertEquals(u, f[i], 0.0, "trial " + t + ": maximin differs at row " + i);
            }
        }
    }

    @Test
    void blockValuesAreWeightedMediansAndMonotone() {
        SplittableRandom r = new SplittableRandom(7);
        for (int t = 0; t < 100; t++) {
            IsoTestData d = small(r);
            IsoPoints p = IsoPoints.pool(d.x, d.y, d.w, d.x.length, false, IsoScales.forData(d.y, d.w, d.x.length),
                    true, IsoColumns.DEFAULT);
            L1Blocks b = L1Blocks.pava(p);
            for (int k = 0; k < b.size(); k++) {
                if (k > 0) {
                    assertTrue(b.median(k - 1) < b.median(k), "medians must strictly increase");
                }
                double v = b.median(k);
                double below = 0;
                double above = 0;
                double total = 0;
                for (int i = 0; i < d.x.length; i++) {
                    if (d.x[i] >= b.xStart(k) && d.x[i] <= b.xEnd(k)) {
                        total += d.w[i];
                        below += d.y[i] < v ? d.w[i] : 0;
                        above += d.y[i] > v ? d.w[i] : 0;
                    }
                }
                assertTrue(2 * below <= total && 2 * above <= total, "block " + k + " value " + v + " is not a median");
            }
        }
    }

    @Test
    void decompositionAndPartitionIndependence() {
        SplittableRandom r = new SplittableRandom(31);
        for (int t = 0; t < 100; t++) {
            IsoTestData d = small(r);
            IsotonicResult whole = IsotonicLocal.fit(d.x, d.y, d.w, l1());
            double[] cuts = Arrays.stream(d.x).distinct().sorted().filter(v -> r.nextInt(3) == 0).toArray();
            IsotonicResult parts = IsotonicLocal.fit(d.x, d.y, d.w, l1(), cuts, IsoColumns.DEFAULT);
            assertArrayEquals(whole.boundaries, parts.boundaries, "trial " + t);
            assertArrayEquals(whole.predictions, parts.predictions, "trial " + t);
        }
    }

    @Test
    void strictlyDecreasingLabelsGiveOneMedianBlock() {
        int n = 20_001;
        double[] x = new double[n];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = i;
            y[i] = n - i;
        }
        IsotonicResult res = IsotonicLocal.fit(x, y, null, l1());
        assertEquals(1, res.numBlocks);
        assertArrayEquals(new double[] {(n + 1) / 2.0, (n + 1) / 2.0}, res.predictions);
    }
}
