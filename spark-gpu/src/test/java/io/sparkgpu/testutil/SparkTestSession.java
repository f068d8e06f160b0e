package io.sparkgpu.testutil;

import org.apache.spark.sql.SparkSession;

/**
 * One local[2] SparkSession per test JVM (Spark tests share it; it is stopped at JVM exit). Tests that need a
 * differently configured Spark (e.g. GPU resources on local-cluster) stop it; the next call here starts a
 * fresh one.
 */
public final class SparkTestSession {
    private static SparkSession spark;
    private static boolean hookAdded;

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
            if (!hookAdded) {
                hookAdded = true;
                Runtime.getRuntime().addShutdownHook(new Thread(SparkTestSession::stopIfRunning));
            }
        }
        return spark;
    }

    private static synchronized void stopIfRunning() {
        if (spark != null) {
            spark.stop();
        }
    }
}
