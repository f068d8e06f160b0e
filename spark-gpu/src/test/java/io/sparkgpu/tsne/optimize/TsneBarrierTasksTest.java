package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.spark.GpuTasks;
import io.sparkgpu.testutil.SparkTestSession;
import org.apache.spark.SparkContext;

import org.junit.jupiter.api.Test;

/**
 * {@link TsneBarrier#byPoints}: small fits on fewer GPUs unless the task count is set; {@link TsneBarrier#tasks}: the
 * host loop's exchange limit keeps many points out of the stage only when its tasks would not run on GPUs.
 */
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

    @Test
    void manyPointsKeepTheStageWhenItsTasksWouldRunOnGpus() {
        SparkContext sc = SparkTestSession.get().sparkContext();
        String before = System.getProperty(GpuTasks.TASKS);
        System.setProperty(GpuTasks.TASKS, "2");
        try {
            int many = 2_000_000;
            assertTrue(TsneBarrier.hostExchangeTooLarge(many, 2), "2 x 10^6 points in 2-D");
            assertFalse(TsneBarrier.hostExchangeTooLarge(1_000_000, 2), "10^6 points in 2-D");
            assertEquals(0, TsneBarrier.tasks(sc, 4, many, 2, 0, false), "host loop only: two jobs per iteration");
            assertEquals(2, TsneBarrier.tasks(sc, 4, many, 2, 0, true), "GPU fit: the device loop has no limit");
            assertEquals(2, TsneBarrier.tasks(sc, 4, 1_000_000, 2, 0, false), "within the host loop's limit");
        } finally {
            if (before == null) {
                System.clearProperty(GpuTasks.TASKS);
            } else {
                System.setProperty(GpuTasks.TASKS, before);
            }
        }
    }
}
