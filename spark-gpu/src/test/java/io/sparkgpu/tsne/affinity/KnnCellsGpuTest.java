package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Tag;

/**
 * tsne_knn_cells (the exact kNN pruned by cells, the approximate kNN) against the CPU: the exact path equals the
 * brute force bit for bit (clustered, unstructured, tied, d = 1, 50, 784, cells smaller than a query tile), and the
 * approximate path equals its CPU twin (so the cells, whose means the GPU computes, are the twin's); the default
 * cell size on 60,000 clustered points through the dispatcher; the device's input check names the twin's value.
 */
@Tag("gpu")
class KnnCellsGpuTest {
    private int cellPoints;
    private int minPoints;

    @BeforeEach
    void save() {
        cellPoints = KnnCells.cellPoints;
        minPoints = KnnCells.minPoints;
    }

    @AfterEach
    void restore() {
        KnnCells.cellPoints = cellPoints;
        KnnCells.minPoints = minPoints;
    }

    @Test
    void exactAndApproximateMatchTheCpu() {
        GpuTestSupport.deviceOrSkip();
        Random r = new Random(17);
        Object[][] cases = {
            {"blobs d=10 cells of 200", KnnCellsTest.blobs(r, 20000, 10, 10, 20), 20000, 10, 90, 200},
            {"blobs d=50 cells of 40", KnnCellsTest.blobs(r, 6000, 50, 6, 10), 6000, 50, 30, 40},
            {"gaussian d=8 cells of 300", TsneAffinitiesTest.data(r, 9000, 8, false), 9000, 8, 45, 300},
            {"ties d=4", TsneAffinitiesTest.data(r, 5000, 4, true), 5000, 4, 25, 128},
            {"d=1 ties", TsneAffinitiesTest.data(r, 4000, 1, true), 4000, 1, 12, 100},
            {"blobs d=784", KnnCellsTest.blobs(r, 3000, 784, 5, 3), 3000, 784, 90, 100},
        };
        for (Object[] c : cases) {
            float[] x = (float[]) c[1];
            int n = (Integer) c[2];
            int d = (Integer) c[3];
            int k = (Integer) c[4];
            KnnCells.cellPoints = (Integer) c[5];
            KnnCells.minPoints = 1;
            String what = (String) c[0];
            KnnGraph want = TsneAffinities.knnBlock(x, 0, n, x, 0, n, d, k, n, Backend.GPU); // the brute force
            TsneAffinitiesGpuTest.assertSame(KnnCells.exactCpu(x, n, d, k), want, what + ": CPU cells vs brute");
            TsneAffinitiesGpuTest.assertSame(want, TsneAffinities.knn(x, n, d, k, Backend.GPU), what + ": exact");
            for (int probes : new int[] {1, 3}) {
                TsneAffinitiesGpuTest.assertSame(KnnCells.approximateCpu(x, n, d, k, probes),
                        TsneAffinities.knnApproximate(x, n, d, k, probes, Backend.GPU, null),
                        what + ": approximate, " + probes + " probes");
            }
        }
    }

    @Test
    void nonFiniteInputGivesTheTwinsError() {
        GpuTestSupport.deviceOrSkip();
        KnnCells.cellPoints = 100;
        KnnCells.minPoints = 1;
        int n = 3000;
        int d = 8;
        float[] x = KnnCellsTest.blobs(new Random(5), n, d, 4, 10);
        x[2500 * d + 1] = Float.NEGATIVE_INFINITY;
        x[1234 * d + 5] = Float.NaN;
        x[2999 * d + 7] = Float.NaN;
        String want = "point 1234 has a non-finite value NaN at dimension 5; t-SNE needs finite features";
        assertEquals(want, assertThrows(IllegalArgumentException.class,
                () -> TsneAffinities.knn(x, n, d, 10, Backend.CPU)).getMessage());
        assertEquals(want, assertThrows(IllegalArgumentException.class,
                () -> TsneAffinities.knn(x, n, d, 10, Backend.GPU)).getMessage());
        assertEquals(want, assertThrows(IllegalArgumentException.class,
                () -> TsneAffinities.knnApproximate(x, n, d, 10, 2, Backend.GPU, null)).getMessage());
        x[1234 * d + 5] = 0f;
        assertEquals("point 2500 has a non-finite value -Infinity at dimension 1; t-SNE needs finite features",
                assertThrows(IllegalArgumentException.class, () -> TsneAffinities.knn(x, n, d, 10, Backend.GPU))
                        .getMessage());
    }

    @Test
    void defaultCellsPruneClusteredData() {
        GpuTestSupport.deviceOrSkip();
        int n = 60000;
        int d = 50;
        int k = 90;
        float[] x = KnnCellsTest.blobs(new Random(3), n, d, 10, 10);
        KnnGraph got = TsneAffinities.knn(x, n, d, k, Backend.GPU);
        long scanned = KnnCells.lastPairsRound1 + KnnCells.lastPairsRound2;
        assertTrue(scanned < (long) n * n / 5, "scanned " + scanned + " of " + (long) n * n + " pairs");
        TsneAffinitiesGpuTest.assertSame(KnnCells.exactCpu(x, n, d, k), got, "60,000 x 50");
        TsneAffinitiesGpuTest.assertSame(TsneAffinities.knnBlock(java.util.Arrays.copyOf(x, 4000 * d), 0, 4000, x, 0, n, d, k, n,
                Backend.GPU),
                new KnnGraph(n, 0, 4000, k, java.util.Arrays.copyOf(got.index, 4000 * k),
                        java.util.Arrays.copyOf(got.dist2, 4000 * k)), "60,000 x 50, brute force of 4000 rows");
    }
}
