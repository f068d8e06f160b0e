package io.sparkgpu.jobs;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** Base of the commands that run Spark: common options, console output and usage errors. */
abstract class SparkCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common = new CommonOptions();

    @CommandLine.Option(names = "--backend", paramLabel = "BACKEND",
            description = "auto, gpu or cpu. Default: spark.sparkgpu.backend if set, else auto (GPU when usable).")
    String backend;

    boolean verbose() {
        return common.verbose;
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    /** A usage error naming the offending option; the CLI reports it with exit code 2. */
    ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** Parses a --backend value; null means "spark.sparkgpu.backend, else auto" (decided once Spark runs). */
    Backend parseBackend(String value, String option) {
        if (value == null) {
            return null;
        }
        try {
            return Backend.parse(value, option);
        } catch (IllegalArgumentException e) {
            throw usage("Invalid value for option '" + option + "': expected auto, gpu or cpu, got '" + value + "'");
        }
    }

    static Backend backendOrConfigured(Backend explicit) {
        return explicit != null ? explicit : SparkGpuConf.backend();
    }

    SparkSession startSpark(String appName) {
        if (!common.verbose) {
            Logs.quietTaskFailures();
        }
        return SparkSessions.builder(appName).master(common.master).ui(common.ui).getOrCreate();
    }

    /**
     * Checks an output path: null (not asked for) passes; it must differ from {@code input}, and must not exist
     * unless {@code overwrite}. Usage errors name {@code option}.
     */
    void checkTarget(SparkSession spark, String path, String option, String input, boolean overwrite) {
        if (path == null) {
            return;
        }
        if (path.replaceAll("/+$", "").equals(input.replaceAll("/+$", ""))) {
            throw usage(option + ": must not be the same path as --input (" + input + ")");
        }
        if (!overwrite && InputData.exists(spark, path)) {
            throw usage(option + ": " + path + " already exists (pass --overwrite to replace it)");
        }
    }

    /** Seconds since {@code startNanos}. */
    static double secondsSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    CommandLine commandLine() {
        return spec.commandLine();
    }
}
