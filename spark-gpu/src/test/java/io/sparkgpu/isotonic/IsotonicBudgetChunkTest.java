package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.DeviceMemoryBudget;
import org.junit.jupiter.api.Test;

/**
 * Isotonic regression under a device-memory budget (CPU, no GPU needed): the chunked solve that the GPU runs over the
 * budget ({@link IsotonicGpu#inChunks} on the planner's ranges), here with the CPU twins as the per-chunk solver,
 * gives the unchunked blocks bit for bit, for budgets from one point per chunk to all points in one.
 */
class IsotonicBudgetChunkTest {

    @Test
    void chunksMergedExactlyGiveTheUnchunkedBlocks() {
        IsoPoints p = IsoTestData.noisy(4000, 700, 18, true).points();
        L2Blocks whole = IsotonicCpu.pava(p);
        L2Blocks mls = IsotonicCpu.mls(p, 1);
        assertTrue(mls.sameAs(whole));
        assertTrue(whole.m > 5, "a solution with several blocks: " + whole.m);
        for (long perChunk : new long[] {1, 7, 64, 333, p.n - 1, p.n}) {
            long[] plan = DeviceMemoryBudget.chunks("isotonic", p.n, IsotonicGpu.BUDGET_FIXED_BYTES,
                    IsotonicGpu.BUDGET_BYTES_PER_POINT, IsotonicGpu.BUDGET_FIXED_BYTES
                            + perChunk * IsotonicGpu.BUDGET_BYTES_PER_POINT);
            assertEquals((p.n + perChunk - 1) / perChunk + 1, plan.length);
            assertTrue(IsotonicGpu.inChunks(p, plan, IsotonicCpu::pava).sameAs(whole), "PAVA, " + perChunk);
            assertTrue(IsotonicGpu.inChunks(p, plan, q -> IsotonicCpu.mls(q, 1)).sameAs(whole), "MLS, " + perChunk);
        }
    }

    @Test
    void rawRowsOverTheBudgetArePooledOnTheHost() {
        String old = System.getProperty(DeviceMemoryBudget.KEY);
        try {
            System.clearProperty(DeviceMemoryBudget.KEY);
            assertFalse(IsoPoolGpu.overBudget(1L << 40));
            System.setProperty(DeviceMemoryBudget.KEY, "1m");
            assertFalse(IsoPoolGpu.overBudget(1000));
            assertTrue(IsoPoolGpu.overBudget(10_000));
            assertTrue(IsoPoolGpu.overBudget(Long.MAX_VALUE / 2));
        } finally {
            if (old == null) {
                System.clearProperty(DeviceMemoryBudget.KEY);
            } else {
                System.setProperty(DeviceMemoryBudget.KEY, old);
            }
        }
    }
}
