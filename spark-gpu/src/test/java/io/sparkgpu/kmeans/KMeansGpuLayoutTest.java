package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Host-side layout and launch arithmetic of {@link KMeansGpu}; runs without a GPU. */
class KMeansGpuLayoutTest {

    @Test
    void centreRowsArePaddedWithZerosToAMultipleOfFour() {
        assertEquals(4, KMeansGpu.paddedDim(1));
        assertEquals(4, KMeansGpu.paddedDim(4));
        assertEquals(8, KMeansGpu.paddedDim(5));
        assertEquals(68, KMeansGpu.paddedDim(65));
        double[] c = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        assertArrayEquals(new double[] {1, 2, 3, 4, 5, 0, 0, 0, 6, 7, 8, 9, 10, 0, 0, 0, 11, 12, 13, 14, 15, 0, 0, 0},
                KMeansGpu.paddedCentres(c, 3, 5));
        double[] aligned = new double[2 * 8];
        assertSame(aligned, KMeansGpu.paddedCentres(aligned, 2, 8), "no copy when d is already a multiple of 4");
    }

    /** The register kernels for d <= 32 take two points per thread; the grid must still cover every row. */
    @Test
    void gridCoversAllRowsForOneAndTwoPointsPerThread() {
        for (int d : new int[] {1, 8, 9, 16, 17, 32, 33, 64, 65, 300}) {
            String kernel = KMeansGpu.kernelFor(d);
            int ppt = KMeansGpu.pointsPerThread(d);
            boolean twoPointKernel = kernel.equals("kmeans_step_d8") || kernel.equals("kmeans_step_d16")
                    || kernel.equals("kmeans_step_d32");
            assertEquals(twoPointKernel ? 2 : 1, ppt, "points per thread of " + kernel);
            for (int m : new int[] {1, 2, 255, 256, 257, 511, 512, 513, 1_000_003}) {
                int grid = KMeansGpu.gridFor(m, d, Integer.MAX_VALUE);
                assertTrue((long) grid * KMeansGpu.BLOCK * ppt >= m, "m=" + m + " d=" + d);
                assertTrue((long) (grid - 1) * KMeansGpu.BLOCK * ppt < m, "a block without work: m=" + m + " d=" + d);
                assertEquals(Math.min(grid, 7), KMeansGpu.gridFor(m, d, 7), "capped by the resident limit");
            }
        }
    }
}
