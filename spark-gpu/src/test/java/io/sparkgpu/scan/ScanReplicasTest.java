package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.BitSet;
import org.junit.jupiter.api.Test;

/** Null replicas: reproducible per (seed, replica), right totals, right distributions (loosely). */
class ScanReplicasTest {

    @Test
    void keyedPermutationIsABijectionForEveryDomainSize() {
        for (long n = 1; n <= 300; n++) {
            long key = ScanRandom.streamKey(42, n);
            BitSet seen = new BitSet();
            for (long x = 0; x < n; x++) {
                long y = ScanRandom.permute(key, x, n);
                assertTrue(y >= 0 && y < n);
                assertFalse(seen.get((int) y), "n=" + n + " hits " + y + " twice");
                seen.set((int) y);
            }
        }
    }

    @Test
    void boundedIntegersStayInRangeAndLookUniform() {
        long key = ScanRandom.streamKey(1, 2);
        int[] hist = new int[10];
        for (long k = 0; k < 100_000; k++) {
            long u = ScanRandom.uniformBelow(key, k, 10);
            assertTrue(u >= 0 && u < 10);
            hist[(int) u]++;
        }
        for (int h : hist) {
            assertTrue(Math.abs(h - 10_000) < 500, Arrays.toString(hist));
        }
        long big = (1L << 62) - 12345;
        for (long k = 0; k < 10_000; k++) {
            long u = ScanRandom.uniformBelow(key, k, big);
            assertTrue(u >= 0 && u < big);
        }
    }

    @Test
    void poissonSamplerHasTheRightMoments() {
        for (double mean : new double[] {0.7, 6.5, 80, 12_345.5}) {
            int n = 20_000;
            double s = 0;
            double s2 = 0;
            for (int i = 0; i < n; i++) {
                long k = ScanRandom.poisson(ScanRandom.streamKey(9, i), mean);
                assertTrue(k >= 0);
                s += k;
                s2 += (double) k * k;
            }
            double m = s / n;
            double v = s2 / n - m * m;
            assertEquals(mean, m, 5 * Math.sqrt(mean / n), "mean for " + mean);
            assertEquals(mean, v, 0.06 * mean + 0.05, "variance for " + mean);
        }
    }

    @Test
    void replicasAreReproducibleAndKeepTheTotals() {
        long seed = 1;
        for (ScanModel model : ScanModel.values()) {
            ScanGrid g = ScanTestData.grid(model, new ScanShape(9, 7), seed++);
            ScanTables t = ScanTables.of(g);
            long[] a = ScanReplicas.cells(t, 77, 5);
            assertArrayEquals(a, ScanReplicas.cells(t, 77, 5), model.id() + " same (seed, replica)");
            assertFalse(Arrays.equals(a, ScanReplicas.cells(t, 77, 6)), model.id() + " other replica");
            assertFalse(Arrays.equals(a, ScanReplicas.cells(t, 78, 5)), model.id() + " other seed");
            long sum = Arrays.stream(a).sum();
            long[] bq = ScanTestData.quantizedBase(t);
            switch (model) {
                case POISSON:
                    assertEquals(t.casesTotalQ, sum);
                    break;
                case BERNOULLI:
                    assertEquals(t.casesTotalQ, sum);
                    for (int c = 0; c < a.length; c++) {
                        assertTrue(a[c] <= bq[c], "cell " + c + " has more cases than people");
                    }
                    break;
                case NORMAL: {
                    long[] orig = ScanTestData.quantizedCases(g, t);
                    long[] x = a.clone();
                    Arrays.sort(x);
                    Arrays.sort(orig);
                    assertArrayEquals(orig, x, "normal replicas permute the values");
                    break;
                }
                default:
                    assertEquals(ScanReplicas.casesOf(t, 77, 5), sum);
                    break;
            }
            for (int c = 0; c < a.length; c++) {
                if (bq[c] == 0) {
                    assertEquals(0, a[c], model.id() + ": cell without baseline got cases");
                }
            }
        }
    }

    @Test
    void poissonAllocationFollowsTheBaseline() {
        ScanShape sh = new ScanShape(4);
        double[] b = {1, 2, 3, 4};
        double[] c = {2000, 0, 0, 0};
        ScanTables t = ScanTables.of(ScanGrid.of(ScanModel.POISSON, sh, c, b, null, null));
        long[] total = new long[4];
        for (int r = 0; r < 50; r++) {
            long[] x = ScanReplicas.cells(t, 3, r);
            for (int i = 0; i < 4; i++) {
                total[i] += x[i];
            }
        }
        for (int i = 0; i < 4; i++) {
            double want = 100_000 * b[i] / 10;
            assertEquals(want, total[i], 5 * Math.sqrt(want), Arrays.toString(total));
        }
    }

    @Test
    void replicaPrefixMatchesItsCells() {
        ScanGrid g = ScanTestData.grid(ScanModel.POISSON, new ScanShape(5, 4, 3), 8);
        ScanTables t = ScanTables.of(g);
        long[] cells = ScanReplicas.cells(t, 1, 2);
        assertArrayEquals(ScanTables.prefix(t.shape, cells), ScanReplicas.prefix(t, 1, 2));
    }
}
