package io.sparkgpu.jobs;

/** Adjustments of Spark's log4j2 logging for the command line. */
final class Logs {
    /** Loggers that repeat a failed task's exception with its stack trace; the CLI reports the error itself. */
    private static final String[] TASK_FAILURE_LOGGERS = {
        "org.apache.spark.executor.Executor",
        "org.apache.spark.scheduler.TaskSetManager",
    };

    /** Warns (with the exception) when a cached block fails to compute, i.e. again for the same failure. */
    private static final String BLOCK_MANAGER = "org.apache.spark.storage.BlockManager";

    private Logs() {
    }

    static void quietTaskFailures() {
        try {
            for (String name : TASK_FAILURE_LOGGERS) {
                org.apache.logging.log4j.core.config.Configurator.setLevel(name, org.apache.logging.log4j.Level.OFF);
            }
            org.apache.logging.log4j.core.config.Configurator.setLevel(BLOCK_MANAGER, org.apache.logging.log4j.Level.ERROR);
        } catch (LinkageError e) {
            // log4j-core is not the logging backend here: leave logging as configured
        }
    }
}
