package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** {@link TsneBarrier#byPoints}: small fits on fewer GPUs unless the task count is set. */
class TsneBarrierTasksTest {

    @Test
    void atMostOneTaskPerMinimumPointsUnlessTheCountIsSet() {
        int m = TsneBarrier.MIN_POINTS_PER_TASK;
        assertEquals(1, TsneBarrier.byPoints(2, 100_000, false), "10^5 points: one GPU");
        assertEquals(1, TsneBarrier.byPoints(8, m - 1, false));
        assertEquals(2, TsneBarrier.byPoints(2, 1_000_000, false), "10^6 points: two GPUs");
        assertEquals(3, TsneBarrier.byPoints(8, 3 * m + 1, false));
        assertEquals(8, TsneBarrier.byPoints(8, 100 * m, false));
        assertEquals(2, TsneBarrier.byPoints(2, 1_000, true), "a set task count is kept");
        assertEquals(0, TsneBarrier.byPoints(0, 10_000_000, false), "no stage stays no stage");
        assertEquals(1, TsneBarrier.byPoints(1, 10, false));
    }
}
