package io.sparkgpu.kmeans;

import io.sparkgpu.common.FixedPoint;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KMeansCpuTest {

    static KMeansData random(Random r, int n, int d, boolean weights, boolean grid) {
        double[] x = new double[n * d];
        double[] w = new double[n];
        for (int i = 0; i < x.length; i++) {
            x[i] = grid ? r.nextInt(4) : r.nextGaussian() * 3 + (i % d);
        }
        for (int i = 0; i < n; i++) {
            w[i] = weights ? r.nextInt(4) * 0.5 : 1.0;
        }
        return new KMeansData(x, w, n, d, null);
    }

    static KMeansScales scalesFor(KMeansData p, boolean cosine) {
        double[] maxAbs = new double[p.d];
        double maxW = 0;
        for (int i = 0; i < p.n; i++) {
            for (int j = 0; j < p.d; j++) {
                maxAbs[j] = Math.max(maxAbs[j], Math.abs(p.x[i * p.d + j]));
            }
            maxW = Math.max(maxW, p.w[i]);
        }
        return KMeansScales.fromBounds(p.n, maxW, maxAbs, cosine);
    }

    /** Brute force: nearest centre by plain loops (ties to the lowest index), sums in BigDecimal. */
    @Test
    void matchesBruteForce() {
        Random r = new Random(7);
        for (int trial = 0; trial < 30; trial++) {
            int n = 1 + r.nextInt(300);
            int d = 1 + r.nextInt(12);
            int k = 2 + r.nextInt(9);
            boolean grid = trial % 3 == 0; // many exact ties between centres
            KMeansData p = random(r, n, d, trial % 2 == 0, grid);
            double[] centres = new double[k * d];
            for (int c = 0; c < k; c++) {
                int src = r.nextInt(n);
                System.arraycopy(p.x, src * d, centres, c * d, d);
            }
            KMeansScales s = scalesFor(p, false);
            int[] labels = new int[n];
            double[] dists = new double[n];
            long[] acc = KMeansCpu.step(p, centres, k, false, s, true, labels, dists, false);
            BigDecimal[] sums = new BigDecimal[k * d];
            java.util.Arrays.fill(sums, BigDecimal.ZERO);
            long[] counts = new long[k];
            for (int i = 0; i < n; i++) {
                int best = -1;
                double bestD = Double.POSITIVE_INFINITY;
                for (int c = 0; c < k; c++) {
                    double dd = 0;
                    for (int j = 0; j < d; j++) {
                        double t = p.x[i * d + j] - centres[c * d + j];
                        dd = Math.fma(t, t, dd);
                    }
                    if (dd < bestD) {
                        bestD = dd;
                        best = c;
                    }
                }
                assertEquals(best, labels[i], "label of point " + i);
                assertEquals(bestD, dists[i], 0.0, "distance of point " + i);
                counts[best]++;
                for (int j = 0; j < d; j++) {
                    sums[best * d + j] = sums[best * d + j].add(new BigDecimal(p.w[i] * p.x[i * d + j]));
                }
            }
            for (int c = 0; c < k; c++) {
                assertEquals(counts[c], acc[KMeansAccumulator.countAt(c, k, d)]);
                for (int j = 0; j < d; j++) {
                    double got = FixedPoint.toDouble(acc, KMeansAccumulator.sumAt(c, j, d), s.shifts[j]);
                    assertEquals(sums[c * d + j].doubleValue(), got, Math.ulp(got), "sum c=" + c + " j=" + j);
                }
            }
        }
    }

    /** Full distance with Math.fma in dimension order, as the kernels compute it (no pruning). */
    static double fmaDistance(double[] x, int xb, double[] c, int cb, int d, boolean cosine) {
        double acc = 0.0;
        for (int j = 0; j < d; j++) {
            if (cosine) {
                acc = Math.fma(x[xb + j], c[cb + j], acc);
            } else {
                double t = x[xb + j] - c[cb + j];
                acc = Math.fma(t, t, acc);
            }
        }
        return cosine ? 1.0 - acc : acc;
    }

    /**
     * The pruned search of {@link KMeansCpu#step} and {@link KMeansCpu#nearest} against a plain argmin over
     * full Math.fma distances (first strictly smaller wins, so ties go to the lowest index), on data built to
     * tie a lot: small-integer coordinates, duplicated centres (also as neighbours c, c+1, which the kernels
     * evaluate together) and points placed exactly on centres. Distances must be bitwise equal.
     */
    @Test
    void prunedSearchEqualsPlainFmaArgminWithManyTies() {
        Random r = new Random(2024);
        int ties = 0;
        int fusedDiffers = 0;
        for (int trial = 0; trial < 200; trial++) {
            boolean cosine = trial % 4 == 3;
            int d = 1 + r.nextInt(trial % 2 == 0 ? 40 : 9); // beyond 8 the pruning checkpoints come into play
            int n = 1 + r.nextInt(120);
            int k = 1 + r.nextInt(12);
            boolean integers = trial % 5 != 4;
            double[] x = new double[n * d];
            for (int i = 0; i < n; i++) {
                double ss = 0;
                for (int j = 0; j < d; j++) {
                    double v = integers ? r.nextInt(3) - 1 : r.nextGaussian() * (1 + j % 3);
                    x[i * d + j] = v;
                    ss += v * v;
                }
                if (cosine) {
                    if (ss == 0) {
                        x[i * d] = 1;
                        ss = 1;
                    }
                    double norm = Math.sqrt(ss);
                    for (int j = 0; j < d; j++) {
                        x[i * d + j] /= norm;
                    }
                }
            }
            double[] centres = new double[k * d];
            for (int c = 0; c < k; c++) {
                int from = c > 0 && r.nextInt(3) == 0 ? r.nextInt(c) * d : -1; // copy an earlier centre
                if (from >= 0) {
                    System.arraycopy(centres, from, centres, c * d, d);
                } else {
                    System.arraycopy(x, r.nextInt(n) * d, centres, c * d, d);
                }
            }
            KMeansData p = new KMeansData(x, new double[n], n, d, null);
            int[] labels = new int[n];
            double[] dists = new double[n];
            KMeansCpu.step(p, centres, k, cosine, null, false, labels, dists, false);
            for (int i = 0; i < n; i++) {
                int best = 0;
                double bestD = fmaDistance(x, i * d, centres, 0, d, cosine);
                int equalToBest = 0;
                for (int c = 1; c < k; c++) {
                    double dc = fmaDistance(x, i * d, centres, c * d, d, cosine);
                    if (dc < bestD) {
                        bestD = dc;
                        best = c;
                        equalToBest = 0;
                    } else if (dc == bestD) {
                        equalToBest++;
                    }
                }
                ties += equalToBest > 0 ? 1 : 0;
                String what = "trial " + trial + " point " + i + " (n=" + n + " d=" + d + " k=" + k
                        + (cosine ? " cosine)" : ")");
                assertEquals(best, labels[i], "label of " + what);
                assertEquals(Double.doubleToRawLongBits(bestD), Double.doubleToRawLongBits(dists[i]), "distance of " + what);
                assertEquals(best, KMeansCpu.nearest(java.util.Arrays.copyOfRange(x, i * d, i * d + d), centres, k, d, cosine),
                        "nearest() of " + what);
                if (!integers && !cosine) {
                    double plain = 0;
                    for (int j = 0; j < d; j++) {
                        double t = x[i * d + j] - centres[best * d + j];
                        plain += t * t;
                    }
                    fusedDiffers += plain != bestD ? 1 : 0;
                }
            }
        }
        assertTrue(ties > 500, "points with a tie for the nearest centre: " + ties);
        // the reference really is the fused one: separate multiply and add round differently now and then
        assertTrue(fusedDiffers > 0, "no distance where fma and mul+add differ");
    }

    /**
     * Well-separated blobs make the triangle-inequality test skip most centres; points placed exactly half-way
     * between two centres and duplicated centres create exact ties. Labels and distances must equal a plain
     * argmin over every centre (ties to the lowest index).
     */
    @Test
    void triangleInequalityPruningKeepsTheExactArgmin() {
        Random r = new Random(21);
        for (int trial = 0; trial < 20; trial++) {
            int d = 1 + r.nextInt(40);
            int k = 3 + r.nextInt(60);
            double[] centres = new double[k * d];
            for (int i = 0; i < centres.length; i++) {
                centres[i] = r.nextInt(41) - 20;
            }
            if (k > 4) { // a duplicated centre: the lower index must win every tie
                System.arraycopy(centres, 0, centres, (k - 1) * d, d);
            }
            int n = 4 * k + r.nextInt(400);
            double[] x = new double[n * d];
            for (int i = 0; i < n; i++) {
                int a = r.nextInt(k);
                int b = r.nextInt(k);
                for (int j = 0; j < d; j++) {
                    x[i * d + j] = i % 5 == 0 ? (centres[a * d + j] + centres[b * d + j]) / 2 // half-way: ties
                            : centres[a * d + j] + (i % 3 == 0 ? 0.0 : r.nextGaussian() * 0.7);
                }
            }
            KMeansData p = new KMeansData(x, new double[n], n, d, null);
            assertTrue(KMeansCpu.triangleTable(centres, k, d, false) != null, "pruning table in use");
            int[] labels = new int[n];
            double[] dists = new double[n];
            KMeansCpu.step(p, centres, k, false, null, false, labels, dists, false);
            for (int i = 0; i < n; i++) {
                int best = -1;
                double bestD = Double.POSITIVE_INFINITY;
                for (int c = 0; c < k; c++) {
                    double dd = 0;
                    for (int j = 0; j < d; j++) {
                        double t = x[i * d + j] - centres[c * d + j];
                        dd = Math.fma(t, t, dd);
                    }
                    if (dd < bestD) {
                        bestD = dd;
                        best = c;
                    }
                }
                assertEquals(best, labels[i], "trial " + trial + " point " + i);
                assertEquals(bestD, dists[i], 0.0, "trial " + trial + " point " + i);
            }
        }
    }

    @Test
    void splittingAPartitionGivesIdenticalBits() {
        Random r = new Random(11);
        KMeansData p = random(r, 1000, 5, true, false);
        double[] centres = java.util.Arrays.copyOf(p.x, 7 * 5);
        KMeansScales s = scalesFor(p, false);
        long[] whole = KMeansCpu.step(p, centres, 7, false, s, true, null, null, false);
        long[] merged = new long[whole.length];
        int[] cuts = {0, 1, 1, 333, 900, 1000};
        for (int i = 0; i + 1 < cuts.length; i++) {
            int a = cuts[i];
            int b = cuts[i + 1];
            KMeansData part = new KMeansData(java.util.Arrays.copyOfRange(p.x, a * 5, b * 5),
                    java.util.Arrays.copyOfRange(p.w, a, b), b - a, 5, null);
            KMeansAccumulator.merge(merged, KMeansCpu.step(part, centres, 7, false, s, true, null, null, false), 7, 5);
        }
        assertArrayEquals(whole, merged);
    }

    @Test
    void minUpdateKeepsTheSmallerDistanceAndCosineUsesUnitVectors() {
        double[] x = {1, 0, 0, 1};
        KMeansData p = new KMeansData(x, new double[] {1, 1}, 2, 2, null);
        double[] dists = {0.25, 5.0};
        KMeansCpu.step(p, new double[] {1, 0}, 1, false, null, false, null, dists, true);
        assertArrayEquals(new double[] {0.0, 2.0}, dists);
        int[] labels = new int[2];
        double[] cd = new double[2];
        KMeansCpu.step(p, new double[] {0.6, 0.8, 1, 0}, 2, true, null, false, labels, cd, false);
        assertArrayEquals(new int[] {1, 0}, labels);
        assertEquals(1.0 - 0.8, cd[1], 1e-15);
    }
}
