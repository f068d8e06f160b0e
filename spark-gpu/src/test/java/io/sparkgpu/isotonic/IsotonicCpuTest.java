package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The least-squares engines against each other, against the KKT conditions and on adversarial inputs. */
class IsotonicCpuTest {

    private static void assertAllAgree(IsoPoints p, IsoScales sc) {
        L2Blocks ref = IsotonicCpu.pava(p);
        IsoTestData.assertKkt(p, ref, sc);
        for (int chunk : new int[] {1, 2, 3, 7, 64, 1000}) {
            for (int threads : new int[] {1, 3}) {
                L2Blocks pm = IsotonicCpu.pavaMerge(p, chunk, threads);
                assertTrue(ref.sameAs(pm), "PAVA-merge chunk=" + chunk + " threads=" + threads + " differs");
            }
        }
        if (p.n <= 3000) {
            assertTrue(ref.sameAs(IsotonicCpu.mls(p, 2)), "MLS differs from PAVA");
        }
    }

    @Test
    void randomDataWithTiesAllEnginesBitwiseEqualAndOptimal() {
        for (long seed = 1; seed <= 12; seed++) {
            IsoTestData d = IsoTestData.noisy(500 + (int) seed * 97, 40 + (int) seed * 13, seed, seed % 2 == 0);
            IsoScales sc = IsoScales.forData(d.y, d.w, d.x.length);
            assertAllAgree(d.points(), sc);
        }
    }

    @Test
    void matchesTextbookPavaInDoubles() {
        SplittableRandom r = new SplittableRandom(5);
        int n = 2000;
        double[] s = new double[n];
        double[] wt = new double[n];
        for (int i = 0; i < n; i++) {
            wt[i] = 0.25 + r.nextDouble();
            s[i] = (i / 300.0 + r.nextGaussian());
        }
        IsoPoints p = IsoTestData.sums(s, wt);
        IsoScales sc = IsoScales.forData(s, wt, n);
        L2Blocks b = IsotonicCpu.pava(p);
        // naive PAVA works on pooled (sum, weight) = (w*y, w)
        double[] ws = new double[n];
        for (int i = 0; i < n; i++) {
            ws[i] = wt[i] * s[i];
        }
        double[] naive = IsoTestData.naivePavaValues(ws, wt);
        int k = 0;
        for (int blk = 0; blk < b.m; blk++) {
            double v = b.mean(blk, sc);
            while (k < n && p.x[k] <= b.xEnd[blk]) {
                assertEquals(naive[k], v, 1e-12 * Math.max(1, Math.abs(v)), "point " + k);
                k++;
            }
        }
    }

    @Test
    void decompositionPropertyOnRandomSplits() {
        SplittableRandom r = new SplittableRandom(99);
        for (int t = 0; t < 300; t++) {
            IsoTestData d = IsoTestData.noisy(50 + r.nextInt(400), 5 + r.nextInt(200), r.nextLong(), r.nextBoolean());
            IsoPoints p = d.points();
            int cut = r.nextInt(p.n + 1);
            L2Blocks whole = IsotonicCpu.pava(p);
            L2Blocks merged = L2Blocks.merge(IsotonicCpu.pava(IsoTestData.slice(p, 0, cut)),
                    IsotonicCpu.pava(IsoTestData.slice(p, cut, p.n)));
            assertTrue(whole.sameAs(merged), "PAV(PAV(a) ++ PAV(b)) != PAV(a ++ b) at cut " + cut + " of " + p.n);
            // three pieces merged in the other grouping
            int c2 = cut + r.nextInt(p.n - cut + 1);
            L2Blocks a = IsotonicCpu.pava(IsoTestData.slice(p, 0, cut));
            L2Blocks b = IsotonicCpu.pava(IsoTestData.slice(p, cut, c2));
            L2Blocks c = IsotonicCpu.pava(IsoTestData.slice(p, c2, p.n));
            assertTrue(whole.sameAs(L2Blocks.merge(a, L2Blocks.merge(b, c))), "right-grouped merge differs");
        }
    }

    @Test
    void strictlyDecreasingIsOneBlock() {
        int n = 10_000;
        double[] s = new double[n];
        double[] wt = new double[n];
        for (int i = 0; i < n; i++) {
            s[i] = n - i;
            wt[i] = 1;
        }
        IsoPoints p = IsoTestData.sums(s, wt);
        L2Blocks b = IsotonicCpu.pava(p);
        assertEquals(1, b.m);
        assertEquals((n + 1) / 2.0, b.mean(0, IsoScales.forData(s, wt, n)), 1e-12);
        assertAllAgree(p, IsoScales.forData(s, wt, n));
    }

    @Test
    void sawToothAllEqualAndSinglePoint() {
        int n = 4001;
        double[] s = new double[n];
        double[] wt = new double[n];
        for (int i = 0; i < n; i++) {
            s[i] = (i % 2 == 0) ? i : i - 3; // alternating up/down, rising overall
            wt[i] = 1;
        }
        IsoPoints saw = IsoTestData.sums(s, wt);
        assertAllAgree(saw, IsoScales.forData(s, wt, n));
        L2Blocks sb = IsotonicCpu.pava(saw);
        assertTrue(sb.m > 1 && sb.m < n, "saw-tooth pools pairs: " + sb.m);

        double[] c = new double[n];
        java.util.Arrays.fill(c, 2.5);
        IsoPoints flat = IsoTestData.sums(c, wt);
        L2Blocks fb = IsotonicCpu.pava(flat);
        assertEquals(1, fb.m, "equal values form one block (merge on >=)");
        assertEquals(2.5, fb.mean(0, IsoScales.forData(c, wt, n)));
        assertAllAgree(flat, IsoScales.forData(c, wt, n));

        IsoPoints one = IsoTestData.sums(new double[] {-4.0}, new double[] {3.0});
        L2Blocks ob = IsotonicCpu.pava(one);
        assertEquals(1, ob.m);
        assertEquals(-4.0, ob.mean(0, IsoScales.forData(new double[] {-4.0}, new double[] {3.0}, 1)));
        assertAllAgree(one, IsoScales.forData(new double[] {-4.0}, new double[] {3.0}, 1));
    }

    @Test
    void hugeInputWithFewDistinctFeaturesPoolsExactly() {
        int n = 2_000_000;
        double[] x = new double[n];
        double[] y = new double[n];
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < n; i++) {
            x[i] = r.nextInt(5);
            y[i] = (x[i] == 2 ? 10 : x[i]) + r.nextInt(3);
        }
        IsotonicResult res = IsotonicLocal.fitCpu(x, y, null, true);
        // x=2 (mean about 11) pools with x=3 and x=4 (means about 4 and 5)
        assertEquals(n, res.numRows);
        assertEquals(3, res.numBlocks);
        double[] expectedB = {0, 1, 2, 4};
        assertArrayEquals(expectedB, res.boundaries);
        // a different split of the same rows gives the same bits
        IsotonicConfig cfg = new IsotonicConfig();
        cfg.backend = io.sparkgpu.cuda.Backend.CPU;
        IsotonicResult split = IsotonicLocal.fit(x, y, null, cfg, new double[] {1, 2, 3}, IsoColumns.DEFAULT);
        assertArrayEquals(res.boundaries, split.boundaries);
        assertArrayEquals(res.predictions, split.predictions);
    }

    @Test
    void antitonicIsIsotonicOfNegatedLabels() {
        IsoTestData d = IsoTestData.noisy(3000, 300, 17, true);
        double[] neg = d.y.clone();
        for (int i = 0; i < neg.length; i++) {
            neg[i] = -neg[i];
        }
        IsotonicResult down = IsotonicLocal.fitCpu(d.x, neg, d.w, false);
        IsotonicResult up = IsotonicLocal.fitCpu(d.x, d.y, d.w, true);
        assertArrayEquals(up.boundaries, down.boundaries);
        for (int i = 0; i < up.predictions.length; i++) {
            assertEquals(-up.predictions[i], down.predictions[i], 0.0);
        }
        assertTrue(!down.isotonic);
    }
}
