package io.sparkgpu.jobs;

import picocli.CommandLine.Option;

/** Options every Spark-running command takes. */
public final class CommonOptions {
    @Option(names = "--master", paramLabel = "URL", order = 100,
            description = "Spark master URL. Default: the spark.master already configured (e.g. by spark-submit), "
                    + "else local[*].")
    String master;

    @Option(names = "--ui", order = 101, description = "Enable the Spark web UI (off by default).")
    boolean ui;

    @Option(names = "--verbose", order = 102, description = "Print stack traces of errors and keep Spark's task-failure logs.")
    boolean verbose;

    @Option(names = "--skip-bad", order = 103, description = "CSV input: skip malformed rows (more or fewer fields "
            + "than the header) and report how many were skipped, with an example. Default: a malformed row fails the "
            + "run, naming its file and line.")
    boolean skipBad;
}
