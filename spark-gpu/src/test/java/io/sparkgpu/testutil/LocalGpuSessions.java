package io.sparkgpu.testutil;

import io.sparkgpu.spark.LocalGpuSpark;
import java.util.List;
import org.apache.spark.sql.SparkSession;

/**
 * Embedded local-cluster sessions with GPUs as task resources ({@link LocalGpuSpark}) for tests: one at a
 * time per JVM, so starting one stops whatever session ran before (the shared {@link SparkTestSession}
 * starts afresh when next asked for).
 */
public final class LocalGpuSessions {
    private static SparkSession current;
    private static String currentKey;

    private LocalGpuSessions() {
    }

    /**
     * A session with one executor of {@code cores} cores whose tasks share each GPU {@code tasksPerGpu} at a
     * time; reused when the last call asked for the same.
     */
    public static synchronized SparkSession start(int cores, int tasksPerGpu, List<String> addresses, long memoryMb) {
        return start(LocalGpuSpark.of(cores, tasksPerGpu, addresses, memoryMb));
    }

    /** A session as {@code lgs} describes it (e.g. several executors); reused when the last call asked for the same. */
    public static synchronized SparkSession start(LocalGpuSpark spec) {
        LocalGpuSpark lgs = spec.appName("spark-gpu-tests-gpu-resources").config("spark.sql.codegen.wholeStage", "false");
        String key = lgs.toString() + lgs.settings(java.nio.file.Paths.get("discovery")); // conf included
        if (current != null && !current.sparkContext().isStopped() && key.equals(currentKey)) {
            return current;
        }
        stopAll();
        current = lgs.getOrCreate();
        currentKey = key;
        current.sparkContext().setLogLevel("WARN");
        System.err.println("[spark-gpu] test session: " + key);
        return current;
    }

    /** Stops the running session, ours or any other, and forgets it. */
    public static synchronized void stopAll() {
        SparkSession active = SparkSession.getActiveSession().isDefined() ? SparkSession.getActiveSession().get() : null;
        SparkSession dflt = SparkSession.getDefaultSession().isDefined() ? SparkSession.getDefaultSession().get() : null;
        for (SparkSession s : new SparkSession[] {current, active, dflt}) {
            if (s != null && !s.sparkContext().isStopped()) {
                s.stop();
            }
        }
        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
        current = null;
        currentKey = null;
    }
}
