package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.BackendFaults;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.testutil.SparkTestSession;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;

/**
 * {@code backend=gpu} without a usable GPU fails at {@code fit}, on the driver, before any Spark job (issue 21): the
 * input's columns come from a UDF that throws when evaluated, so any job would fail with that message instead.
 * "No GPU" is simulated by an unusable fault on the module, so the test means the same on a GPU host.
 */
class GpuBackendAtFitTest {
    private static final String JOB_RAN = "a Spark job ran before the backend check";

    private static Dataset<Row> poisoned(SparkSession spark) {
        UDF1<Long, Double> boom = v -> {
            throw new IllegalStateException(JOB_RAN);
        };
        spark.udf().register("gpuAtFitBoom", boom, DataTypes.DoubleType);
        return spark.range(20).select(functions.callUDF("gpuAtFitBoom", functions.col("id")).as("x"),
                functions.col("id").cast("double").as("label"), functions.array(functions.callUDF("gpuAtFitBoom",
                        functions.col("id"))).as("features"));
    }

    @Test
    void kmeansAndIsotonicFailOnTheDriverBeforeAnyJob() {
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> df = poisoned(spark);
        try (BackendFaults f = BackendFaults.unusable("kmeans")) {
            CudaException e = assertThrows(CudaException.class,
                    () -> new GpuKMeans().setK(2).setBackend("gpu").fit(df));
            assertTrue(e.getMessage().contains("backend=gpu") && e.getMessage().contains("k-means")
                    && e.getMessage().contains("before any Spark job") && e.getMessage().contains("auto or cpu"),
                    e.getMessage());
            assertEquals(0, f.fired(), "the driver's check consumes no fault");
        }
        try (BackendFaults f = BackendFaults.unusable("isotonic")) {
            CudaException e = assertThrows(CudaException.class,
                    () -> new GpuIsotonicRegression().setFeaturesCol("x").setBackend("gpu").fit(df));
            assertTrue(e.getMessage().contains("isotonic regression") && e.getMessage().contains("before any Spark job"),
                    e.getMessage());
        }
        // the other backends never check: the job runs (and meets the poisoned column)
        for (String b : new String[] {"auto", "cpu"}) {
            Exception e = assertThrows(Exception.class, () -> new GpuKMeans().setK(2).setBackend(b).fit(df));
            assertTrue(String.valueOf(rootMessage(e)).contains(JOB_RAN), b + ": " + e);
        }
    }

    private static String rootMessage(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c.getMessage()).append(" | ");
        }
        return sb.toString();
    }
}
