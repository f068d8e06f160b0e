package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * k-means under a device-memory budget (CPU, no GPU needed): the rows per streamed chunk that the GPU pass takes from
 * the planner, and the CPU twin run chunk by chunk on that plan, whose merged accumulator, labels and distances must
 * equal one pass over all rows bit for bit (exact fixed-point sums).
 */
class KMeansBudgetChunkTest {

    @Test
    void chunkedPassesMergeToTheUnchunkedBits() {
        Random r = new Random(7);
        int n = 3001;
        int d = 3;
        int k = 5;
        for (boolean cosine : new boolean[] {false, true}) {
            KMeansData all = KMeansGpuTest.data(r, n, d, cosine);
            double[] centres = KMeansGpuTest.centresFrom(all, k, r);
            KMeansScales sc = KMeansCpuTest.scalesFor(all, cosine);
            int[] labels = new int[n];
            double[] dists = new double[n];
            long[] whole = KMeansCpu.step(all, centres, k, cosine, sc, true, labels, dists, false);

            long rowBytes = 8L * (d + 1);
            long perRow = rowBytes + 4 + 8;
            long fixed = KMeansGpu.fixedBytes(k, d, true, null, false);
            long budget = fixed + 250 * perRow + 11; // 250 rows per chunk: 13 chunks
            int rows = KMeansGpu.chunkRows(n, fixed, perRow, rowBytes, budget);
            assertEquals(250, rows);
            assertFalse(KMeansGpu.fitsBudget(fixed, perRow, n, budget), "the block must not be made resident");
            long[] plan = DeviceMemoryBudget.chunks("k-means", n, fixed, perRow, budget);
            assertEquals(14, plan.length);

            long[] acc = new long[KMeansAccumulator.length(k, d)];
            int[] lab = new int[n];
            double[] dis = new double[n];
            for (int c = 0; c + 1 < plan.length; c++) {
                int a = (int) plan[c];
                int m = (int) (plan[c + 1] - a);
                KMeansData part = new KMeansData(Arrays.copyOfRange(all.x, a * d, (a + m) * d),
                        Arrays.copyOfRange(all.w, a, a + m), m, d, null);
                int[] pl = new int[m];
                double[] pd = new double[m];
                KMeansAccumulator.merge(acc, KMeansCpu.step(part, centres, k, cosine, sc, true, pl, pd, false), k, d);
                System.arraycopy(pl, 0, lab, a, m);
                System.arraycopy(pd, 0, dis, a, m);
            }
            assertArrayEquals(whole, acc, "cosine=" + cosine);
            assertArrayEquals(labels, lab);
            assertArrayEquals(dists, dis);
        }
    }

    @Test
    void unlimitedKeepsTheStreamingChunkAndTooSmallABudgetIsADeviceFailure() {
        long rowBytes = 8L * 4;
        assertEquals(1000, KMeansGpu.chunkRows(1000, 100, rowBytes, rowBytes, DeviceMemoryBudget.UNLIMITED));
        assertTrue(KMeansGpu.fitsBudget(100, rowBytes, 1000, DeviceMemoryBudget.UNLIMITED));
        CudaException e = assertThrows(CudaException.class,
                () -> KMeansGpu.chunkRows(1000, 100, rowBytes, rowBytes, 100 + rowBytes - 1));
        assertTrue(e.getMessage().contains("a k-means pass") && e.getMessage().contains(DeviceMemoryBudget.KEY),
                e.getMessage());
    }
}
