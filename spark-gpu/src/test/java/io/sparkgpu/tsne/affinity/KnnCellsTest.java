package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The kNN over cells (CPU twin): the exact pruned kNN gives the brute force's lists bit for bit on clustered,
 * unstructured, tied and one-dimensional data, and prunes on clustered data; the approximate kNN is the brute force
 * when it probes every cell, and otherwise finds true distances in the right order with a recall that grows with the
 * probes. Small cells (64 points) so that small data has many.
 */
class KnnCellsTest {
    private int cellPoints;
    private int minPoints;

    @BeforeEach
    void smallCells() {
        cellPoints = KnnCells.cellPoints;
        minPoints = KnnCells.minPoints;
        KnnCells.cellPoints = 64;
        KnnCells.minPoints = 1;
    }

    @AfterEach
    void restore() {
        KnnCells.cellPoints = cellPoints;
        KnnCells.minPoints = minPoints;
    }

    /** c Gaussian blobs of unit spread, centres uniform in [-s, s]^d, interleaved by row. */
    static float[] blobs(Random r, int n, int d, int c, double s) {
        double[] cen = new double[c * d];
        for (int i = 0; i < cen.length; i++) {
            cen[i] = s * (2 * r.nextDouble() - 1);
        }
        float[] x = new float[n * d];
        for (int i = 0; i < n; i++) {
            for (int t = 0; t < d; t++) {
                x[i * d + t] = (float) (cen[(i % c) * d + t] + r.nextGaussian());
            }
        }
        return x;
    }

    private static KnnGraph brute(float[] x, int n, int d, int k) {
        return TsneAffinitiesCpu.knnBlock(x, 0, n, x, 0, n, d, k, n);
    }

    @Test
    void exactPrunedIsTheBruteForceBitForBit() {
        Random r = new Random(5);
        Object[][] cases = {
            {"blobs d=10", blobs(r, 3000, 10, 8, 20), 3000, 10, 30},
            {"blobs d=3", blobs(r, 2500, 3, 5, 10), 2500, 3, 90},
            {"gaussian d=8", TsneAffinitiesTest.data(r, 2000, 8, false), 2000, 8, 20},
            {"ties d=4", TsneAffinitiesTest.data(r, 1500, 4, true), 1500, 4, 25},
            {"d=1 ties", TsneAffinitiesTest.data(r, 1800, 1, true), 1800, 1, 12},
            {"blobs d=50", blobs(r, 1200, 50, 4, 10), 1200, 50, 90},
        };
        for (Object[] c : cases) {
            float[] x = (float[]) c[1];
            int n = (Integer) c[2];
            int d = (Integer) c[3];
            int k = (Integer) c[4];
            TsneAffinitiesGpuTest.assertSame(brute(x, n, d, k), KnnCells.exactCpu(x, n, d, k), (String) c[0]);
            // and through the dispatcher, which takes the cells from minPoints on
            TsneAffinitiesGpuTest.assertSame(brute(x, n, d, k), TsneAffinities.knn(x, n, d, k, Backend.CPU),
                    c[0] + " (dispatcher)");
        }
    }

    @Test
    void clusteredDataIsPruned() {
        Random r = new Random(9);
        int n = 4000;
        int d = 10;
        float[] x = blobs(r, n, d, 10, 30);
        KnnCells.exactCpu(x, n, d, 30);
        long scanned = KnnCells.lastPairsRound1 + KnnCells.lastPairsRound2;
        // ten well separated blobs: about a tenth of the pairs (each point's own blob), far below all n^2
        assertTrue(scanned < (long) n * n / 4, "scanned " + scanned + " of " + (long) n * n + " pairs");
        assertTrue(scanned >= (long) n * (n / 10 - 1), "scanned " + scanned + ": fewer than the own blob");
    }

    @Test
    void approximateProbingEveryCellIsExactAndFewerProbesLoseRecall() {
        Random r = new Random(13);
        int n = 3000;
        int d = 6;
        int k = 20;
        float[] x = TsneAffinitiesTest.data(r, n, d, false);
        KnnGraph exact = brute(x, n, d, k);
        int nc = KnnCells.cellCount(n);
        TsneAffinitiesGpuTest.assertSame(exact, KnnCells.approximateCpu(x, n, d, k, nc), "probes = cells");
        double last = 0;
        for (int probes : new int[] {1, 4, 16}) {
            KnnGraph g = TsneAffinities.knnApproximate(x, n, d, k, probes, Backend.CPU, null);
            double recall = recall(exact, g);
            assertTrue(recall > last, probes + " probes: recall " + recall + " not above " + last);
            assertTrue(recall < 1, probes + " probes: recall 1 on unstructured data");
            last = recall;
            for (int i = 0; i < n; i++) { // true distances, ascending, never self
                for (int m = 0; m < k; m++) {
                    int j = g.index[i * k + m];
                    assertTrue(j >= 0 && j != i, "row " + i);
                    assertEquals(TsneAffinitiesCpu.dist2(x, i, x, j, d), g.dist2[i * k + m], "row " + i);
                    if (m > 0) {
                        assertTrue(TsneAffinitiesCpu.before(g.dist2[i * k + m - 1], g.index[i * k + m - 1],
                                g.dist2[i * k + m], j), "row " + i + " is not ordered");
                    }
                }
            }
        }
    }

    /** Share of the exact neighbours found. */
    static double recall(KnnGraph exact, KnnGraph got) {
        long hit = 0;
        int k = exact.k;
        for (int i = 0; i < exact.rows; i++) {
            java.util.Set<Integer> want = new java.util.HashSet<>();
            for (int m = 0; m < k; m++) {
                want.add(exact.index[i * k + m]);
            }
            for (int m = 0; m < k; m++) {
                hit += want.contains(got.index[i * k + m]) ? 1 : 0;
            }
        }
        return hit / (double) ((long) exact.rows * k);
    }

    @Test
    void badProbesAreRefused() {
        float[] x = TsneAffinitiesTest.data(new Random(1), 100, 2, false);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TsneAffinities.knnApproximate(x, 100, 2, 5, 0, Backend.CPU, null));
        assertTrue(e.getMessage().contains("knnProbes=0"), e.getMessage());
    }

    /** The cells' path checks its input in its backend (the GPU on the device): the first non-finite value is named. */
    @Test
    void nonFiniteInputIsNamedByTheCellsPath() {
        float[] x = blobs(new Random(2), 500, 3, 4, 10);
        x[321 * 3 + 2] = Float.NaN;
        x[400 * 3] = Float.POSITIVE_INFINITY;
        for (String m : new String[] {
            assertThrows(IllegalArgumentException.class, () -> TsneAffinities.knn(x, 500, 3, 5, Backend.CPU))
                    .getMessage(),
            assertThrows(IllegalArgumentException.class,
                    () -> TsneAffinities.knnApproximate(x, 500, 3, 5, 2, Backend.CPU, null)).getMessage()}) {
            assertEquals("point 321 has a non-finite value NaN at dimension 2; t-SNE needs finite features", m);
        }
    }
}
