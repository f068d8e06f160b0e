package io.sparkgpu.testutil;

import org.apache.spark.sql.SparkSession;

/**
 * One local[2] SparkSession per test JVM with the spark-gpu SQL extensions (Spark tests share it; it is stopped
 * at JVM exit). Test classes that build and stop their own session may stop this one too, since getOrCreate hands
 * them the active session, so a stopped session is replaced by a fresh one; an active session of another class
 * that lacks the extensions (getOrCreate ignores static settings of an existing session) is replaced as well.
 */
public final class SparkTestSession {
    static final String EXTENSIONS = "io.sparkgpu.sql.SparkGpuExtensions";
    private static SparkSession spark;
    private static boolean hookAdded;

    private SparkTestSession() {
    }

    private static SparkSession build() {
        return SparkSession.builder()
                .master("local[2]")
                .appName("spark-gpu-tests")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.sql.extensions", EXTENSIONS)
                .getOrCreate();
    }

    private static boolean usable(SparkSession s) {
        return s != null && !s.sparkContext().isStopped() && s.catalog().functionExists("sparkgpu_kmeans_predict");
    }

    public static synchronized SparkSession get() {
        if (!usable(spark)) {
            spark = build();
            if (!usable(spark)) { // another class's session, without our extensions, was still active
                spark.stop();
                SparkSession.clearActiveSession();
                SparkSession.clearDefaultSession();
                spark = build();
            }
            spark.sparkContext().setLogLevel("WARN");
            if (!hookAdded) {
                hookAdded = true;
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    synchronized (SparkTestSession.class) {
                        spark.stop();
                    }
                }));
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
