package io.sparkgpu.testutil;

import org.apache.spark.sql.SparkSession;

/**
 * One local[2] SparkSession per test JVM (Spark tests share it; it is stopped at JVM exit). Test classes that
 * build their own session with {@code getOrCreate()} may be handed this one and stop it when they finish; the
 * next {@link #get()} then starts a fresh one instead of returning a stopped session.
 */
public final class SparkTestSession {
    private static SparkSession spark;

    private SparkTestSession() {
    }

    public static synchronized SparkSession get() {
        if (spark == null || spark.sparkContext().isStopped()) {
            spark = SparkSession.builder()
                    .master("local[2]")
                    .appName("spark-gpu-tests")
                    .config("spark.ui.enabled", "false")
                    .config("spark.sql.shuffle.partitions", "4")
                    .config("spark.driver.host", "127.0.0.1")
                    .getOrCreate();
            spark.sparkContext().setLogLevel("WARN");
            SparkSession started = spark;
            Runtime.getRuntime().addShutdownHook(new Thread(started::stop));
        }
        return spark;
    }
}
