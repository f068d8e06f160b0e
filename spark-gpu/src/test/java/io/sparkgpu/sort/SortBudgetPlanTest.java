package io.sparkgpu.sort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import org.junit.jupiter.api.Test;

/** The sort's sizes under a device-memory budget (CPU, no GPU needed); the bits are checked on the GPU host. */
class SortBudgetPlanTest {

    @Test
    void keysOnlyChunksFitNextToThePyramidAndResidentSortsShrinkToWindows() {
        int m = 1000; // 1024 leaves: a pyramid of 2047 counters
        long pyramid = 4 * SortGpu.pyramidEntries(SortGpu.levels(m)) + 4;
        assertEquals(Math.max(SortGpu.CHUNK, Math.min(1 << 20, SortGpu.transferChunk)),
                SortGpu.chunk(1 << 20, m, DeviceMemoryBudget.UNLIMITED));
        assertEquals(1000, SortGpu.chunk(1 << 20, m, pyramid + 4 * 1000 + 3));
        assertEquals(7, SortGpu.chunk(7, m, pyramid + 4 * 1000));
        CudaException e = assertThrows(CudaException.class, () -> SortGpu.chunk(10, m, pyramid + 3));
        assertTrue(e.getMessage().contains("keys-only sort") && e.getMessage().contains(DeviceMemoryBudget.KEY),
                e.getMessage());

        assertEquals(Long.MAX_VALUE, SortGpu.budgetCapacity(2, false, DeviceMemoryBudget.UNLIMITED));
        assertEquals(1000, SortGpu.budgetCapacity(2, false, 17 * 1000 + 16));
        assertEquals(1000, SortGpu.budgetCapacity(1, true, 13 * 1000));
    }
}
