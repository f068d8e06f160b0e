package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.GeneratedBlobs;
import io.sparkgpu.testutil.LocalGpuSessions;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The single-stage k-means fit on a real cluster (local-cluster, one executor with two fake GPUs as task resources,
 * so two barrier tasks that exchange partials): when the executor dies in the middle of the fit, Spark reruns the
 * stage on a new executor and the fit gives the same bits as one job per pass. Runs without a GPU (backend auto
 * falls back to the CPU twin inside the tasks).
 */
@Tag("gpu-spark")
class KMeansBarrierFaultTest {
    @AfterAll
    static void stop() {
        LocalGpuSessions.stopAll();
    }

    @Test
    void anExecutorKilledMidFitRerunsTheStageAndGivesTheSameBits() {
        SparkSession spark = LocalGpuSessions.start(4, 2, List.of("0", "1"), 1024);
        Dataset<Row> df = GeneratedBlobs.frame(spark, 20_000, 4, 5, 6, 7).cache();
        df.count();
        double[][] init = GeneratedBlobs.firstRows(5, 4, 5, 7);
        java.util.function.Supplier<GpuKMeansModel> fit = () -> new GpuKMeans().setK(5).setMaxIter(6).setTol(0)
                .setInitialCenters(init).setBackend("auto").fit(df);
        GpuKMeansModel ref = KMeansTrainerSparkTest.inMode("job-per-pass", null, fit);
        assertEquals("job-per-pass", ref.summary().mode());

        AtomicInteger removed = new AtomicInteger();
        SparkListener l = new SparkListener() {
            @Override
            public void onExecutorRemoved(SparkListenerExecutorRemoved e) {
                removed.incrementAndGet();
            }
        };
        spark.sparkContext().addSparkListener(l);
        spark.sparkContext().setLocalProperty(KMeansBarrier.KILL_AT, "3");
        GpuKMeansModel killed;
        try {
            killed = KMeansTrainerSparkTest.inMode("single-stage", null, fit);
        } finally {
            spark.sparkContext().setLocalProperty(KMeansBarrier.KILL_AT, null);
            spark.sparkContext().removeSparkListener(l);
        }
        assertEquals("single-stage", killed.summary().mode());
        assertTrue(removed.get() >= 1, "the executor was not killed: the fault injection did not run");
        for (int c = 0; c < 5; c++) {
            assertArrayEquals(ref.clusterCentersArray()[c], killed.clusterCentersArray()[c], 0.0, "centre " + c);
        }
        assertEquals(ref.summary().trainingCost(), killed.summary().trainingCost(), 0.0);
        assertArrayEquals(ref.summary().clusterSizes(), killed.summary().clusterSizes());
        df.unpersist(true);
    }
}
