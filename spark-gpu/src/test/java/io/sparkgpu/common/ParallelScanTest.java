package io.sparkgpu.common;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The smallest failing index, whatever the blocks and their order; -1 when none fails. */
class ParallelScanTest {
    @Test
    void findsTheSmallestFailingIndexAcrossBlocks() {
        int n = 3_000_001; // several blocks of at least 2^16
        boolean[] bad = new boolean[n];
        assertEquals(-1, ParallelScan.firstIndex(n, i -> bad[i]));
        bad[n - 1] = true;
        assertEquals(n - 1, ParallelScan.firstIndex(n, i -> bad[i]));
        bad[2_000_000] = true;
        bad[70_000] = true; // in the second block
        assertEquals(70_000, ParallelScan.firstIndex(n, i -> bad[i]));
        bad[0] = true;
        assertEquals(0, ParallelScan.firstIndex(n, (from, to) -> {
            for (int i = from; i < to; i++) {
                if (bad[i]) {
                    return i;
                }
            }
            return -1;
        }));
    }

    @Test
    void smallAndEmptyRanges() {
        assertEquals(-1, ParallelScan.firstIndex(0, i -> true));
        assertEquals(0, ParallelScan.firstIndex(1, i -> true));
        assertEquals(4, ParallelScan.firstIndex(10, i -> i >= 4));
    }
}
