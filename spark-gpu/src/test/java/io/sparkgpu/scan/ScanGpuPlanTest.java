package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The GPU kernel's work plan, replayed in Java without a GPU: the items of {@link ScanGpu#params} and the
 * kernel's per-thread walk (start, then fixed steps of the block size through the range-mapping rectangle)
 * visit every index of the slice exactly once, each thread in increasing order (which its tie-break needs).
 */
class ScanGpuPlanTest {

    /** Java replay of the loop structure of scan_best_body in scan.cu. */
    static void replay(ScanShape sh, long[] p, int grid, int block, BitSet seen, long lo) {
        int nx = sh.size(0);
        long tx = p[ScanGpu.P_TX];
        int w = (int) p[ScanGpu.P_WX];
        int dRow = block / w;
        int dCol = block - dRow * w;
        long q = p[ScanGpu.P_Q];
        long k = p[ScanGpu.P_K];
        for (int bid = 0; bid < grid; bid++) {
            long[] lastOfThread = new long[block];
            java.util.Arrays.fill(lastOfThread, -1);
            for (long u = p[ScanGpu.P_U0] + bid; u < p[ScanGpu.P_U1]; u += grid) {
                long s = u / q;
                long gs = s * tx;
                long iStart = (u - s * q) * k;
                long iEnd = Math.min(iStart + k, tx);
                iStart = Math.max(iStart, p[ScanGpu.P_LO] - gs);
                iEnd = Math.min(iEnd, p[ScanGpu.P_HI] - gs);
                for (int tid = 0; tid < block; tid++) {
                    long i = iStart + tid;
                    if (i >= iEnd) {
                        continue;
                    }
                    int row = (int) (i / w);
                    int col = (int) (i - (long) row * w);
                    for (; i < iEnd; i += block) {
                        int a = RangeMapping.lo(nx, row, col);
                        int b = RangeMapping.hi(nx, row, col);
                        assertEquals(i, RangeMapping.encode(nx, a, b), sh + ": walk position vs index");
                        long g = gs + i;
                        assertTrue(g > lastOfThread[tid], "thread indices increase");
                        lastOfThread[tid] = g;
                        assertTrue(!seen.get((int) (g - lo)), sh + ": index " + g + " visited twice");
                        seen.set((int) (g - lo));
                        row += dRow;
                        col += dCol;
                        if (col >= w) {
                            col -= w;
                            row++;
                        }
                    }
                }
            }
        }
    }

    @Test
    void itemsAndThreadWalksCoverEverySliceExactlyOnce() {
        Random r = new Random(4);
        for (ScanShape sh : List.of(new ScanShape(1), new ScanShape(2), new ScanShape(100), new ScanShape(513),
                new ScanShape(1, 40), new ScanShape(40, 1), new ScanShape(23, 18), new ScanShape(8, 7, 6),
                new ScanShape(3, 1, 2))) {
            ScanTables t = ScanTables.of(ScanTestData.grid(ScanModel.POISSON, sh, 5));
            for (int trial = 0; trial < 6; trial++) {
                long lo = trial == 0 ? 0 : (long) (r.nextDouble() * sh.ranges());
                long hi = trial == 0 ? sh.ranges() : Math.min(sh.ranges(), lo + 1 + (long) (r.nextDouble() * sh.ranges()));
                int resident = 1 + r.nextInt(40);
                int block = new int[] {32, 64, 256}[r.nextInt(3)];
                long[] p = ScanGpu.params(t, ScanSpec.all(ScanDirection.HIGH), lo, hi, resident);
                int grid = (int) Math.max(1, Math.min(resident, p[ScanGpu.P_U1] - p[ScanGpu.P_U0]));
                BitSet seen = new BitSet();
                replay(sh, p, grid, block, seen, lo);
                assertEquals(hi - lo, seen.cardinality(), sh + " slice [" + lo + ", " + hi + ") with K=" + p[ScanGpu.P_K]);
            }
        }
    }

    @Test
    void oneDimensionalGridsAboveTheSharedLimitReadGlobalMemory() {
        assertTrue(ScanGpu.sharedStrip(new ScanShape(6000)));
        assertTrue(!ScanGpu.sharedStrip(new ScanShape(7000)));
        assertTrue(ScanGpu.sharedStrip(new ScanShape(4096, 2)));
        assertEquals("scan_best_poisson_g", ScanGpu.kernel(ScanModel.POISSON, false));
        assertEquals("scan_best_ebp_s", ScanGpu.kernel(ScanModel.EBP, true));
    }
}
