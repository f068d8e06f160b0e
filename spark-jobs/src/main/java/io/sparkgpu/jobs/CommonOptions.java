package io.sparkgpu.jobs;

import picocli.CommandLine.Option;

/** Options every Spark-running command takes. */
public final class CommonOptions {
    @Option(names = "--master", paramLabel = "URL", order = 100,
            description = "Spark master URL. Default: the spark.master already configured (e.g. by spark-submit), "
                    + "else local[*].")
    String master;

    @Option(names = "--ui", negatable = true, defaultValue = "true", fallbackValue = "true", order = 101,
            description = "The Spark web UI, with a description of every job: on by default (as Spark's); --no-ui "
                    + "turns it off.")
    boolean ui = true;

    @Option(names = "--quiet", order = 102, description = "No progress output: neither Spark's console progress bar "
            + "nor the per-phase progress lines (iterations, phases, replicas, with elapsed time and time left).")
    boolean quiet;

    @Option(names = "--verbose", order = 103, description = "Print stack traces of errors and keep Spark's task-failure logs.")
    boolean verbose;

    @Option(names = "--skip-bad", order = 103, description = "CSV input: skip malformed rows (more or fewer fields "
            + "than the header) and report how many were skipped, with an example. Default: a malformed row fails the "
            + "run, naming its file and line.")
    boolean skipBad;
}
