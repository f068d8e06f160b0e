package io.sparkgpu.cuda;

import java.util.Optional;
import java.util.OptionalInt;

/**
 * The only class of the runtime that touches Spark. It is loaded only when Spark is on the classpath, so
 * the kernels and CPU twins also run without Spark (GPU bundle, plain JVM programs).
 */
final class SparkBridge {
    private static final boolean AVAILABLE = detect();

    private SparkBridge() {
    }

    static boolean available() {
        return AVAILABLE;
    }

    private static boolean detect() {
        try {
            Class.forName("org.apache.spark.TaskContext", false, SparkBridge.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    static Optional<String> confValue(String key) {
        if (!AVAILABLE) {
            return Optional.empty();
        }
        return Inner.confValue(key);
    }

    /** GPU address Spark assigned to the current task, if any. */
    static OptionalInt taskGpu() {
        if (!AVAILABLE) {
            return OptionalInt.empty();
        }
        return Inner.taskGpu();
    }

    /** Kept in a nested class so that Spark types are resolved only after {@link #AVAILABLE} is known. */
    private static final class Inner {
        static Optional<String> confValue(String key) {
            org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
            if (env == null) {
                return Optional.empty();
            }
            scala.Option<String> v = env.conf().getOption(key);
            return v.isDefined() ? Optional.of(v.get()) : Optional.empty();
        }

        static OptionalInt taskGpu() {
            org.apache.spark.TaskContext tc = org.apache.spark.TaskContext.get();
            if (tc == null) {
                return OptionalInt.empty();
            }
            scala.Option<org.apache.spark.resource.ResourceInformation> gpu = tc.resources().get("gpu");
            if (gpu.isEmpty() || gpu.get().addresses().length == 0) {
                return OptionalInt.empty();
            }
            // a map that does not fit the addresses is a settings error, never a device failure: it must not send
            // backend=auto to the CPU twin silently, so the IllegalArgumentException fails the task as it is
            return OptionalInt.of(SparkGpuConf.ordinalOfAddress(gpu.get().addresses()[0].trim()));
        }
    }
}
