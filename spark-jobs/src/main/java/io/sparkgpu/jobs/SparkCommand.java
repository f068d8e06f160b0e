package io.sparkgpu.jobs;

import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

    /** Description of the --seed option of the commands that take one (the estimators' default, MLlib's rule). */
    static final String SEED_DEFAULT = "Default: the estimator's, ${DEFAULT-VALUE} (the hash code of its class name, "
            + "as MLlib's).";

    /** Option-to-param map turned around (param to option), for {@link #settings}. */
    static Map<String, String> invert(Map<String, String> paramOfOption) {
        Map<String, String> m = new java.util.HashMap<>();
        paramOfOption.forEach((option, param) -> m.put(param, option));
        return m;
    }

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

    /**
     * Hands an option's value to the estimator's setter: the estimator's param applies the one rule of the setting
     * (the capability config's check), and a refused value is a usage error naming the option. Options not given
     * are not set, so the estimator's defaults apply.
     */
    void option(String option, Runnable setter) {
        try {
            setter.run();
        } catch (IllegalArgumentException e) {
            throw usage("Invalid value for option '" + option + "': " + e.getMessage());
        }
    }

    /** {@link #option} for the common --backend; when absent the param stays unset (spark.sparkgpu.backend, else auto). */
    void backendOption(io.sparkgpu.ml.HasBackend<?> estimator) {
        if (backend != null) {
            option("--backend", () -> estimator.setBackend(backend));
        }
    }

    /**
     * Runs the config's {@code validate()} (the rules between settings) before Spark starts; a refusal is a usage
     * error naming the option of the first param its message names ({@code optionOfParam}: param name to option).
     */
    void settings(Map<String, String> optionOfParam, Runnable validate) {
        try {
            validate.run();
        } catch (IllegalArgumentException e) {
            String msg = e.getMessage();
            String option = null;
            int first = Integer.MAX_VALUE;
            for (Map.Entry<String, String> p : optionOfParam.entrySet()) {
                Matcher m = Pattern.compile("\\b" + Pattern.quote(p.getKey()) + "\\b").matcher(msg);
                if (m.find() && m.start() < first) {
                    first = m.start();
                    option = p.getValue();
                }
            }
            throw usage(option == null ? "Invalid option values: " + msg
                    : "Invalid value for option '" + option + "': " + msg);
        }
    }

    SparkSession startSpark(String appName) {
        if (!common.verbose) {
            Logs.quietTaskFailures();
        }
        PrintWriter console = out();
        io.sparkgpu.common.Progress.setSink(common.quiet ? line -> { } : line -> {
            console.println("  " + line);
            console.flush();
        });
        return SparkSessions.builder(appName).master(common.master).ui(common.ui).quiet(common.quiet).getOrCreate();
    }

    /** The CSV inputs this run read (explained by {@link SparkGpuCli} when a malformed row fails the job). */
    final java.util.List<String> csvInputs = new java.util.ArrayList<>();

    /** The outputs this run has checked: a later one must not overlap them. */
    private final java.util.List<SafeOutput> targets = new java.util.ArrayList<>();

    /**
     * Checks an output before the work and returns it, to be written with its {@code write*} methods (temporary
     * sibling, then moved into place; see {@link SafeOutput}); null {@code path} (not asked for) gives null. The
     * kind is the option's conventional one ({@link SafeOutput#kindOf}: {@code --output} a dataset,
     * {@code --model-out} a model, any other a file). A refusal is a usage error naming {@code option}.
     */
    SafeOutput checkTarget(SparkSession spark, String path, String option, String input, boolean overwrite) {
        return checkTarget(spark, path, option, SafeOutput.kindOf(option), overwrite, input);
    }

    /** {@link #checkTarget(SparkSession, String, String, String, boolean)} with an explicit kind and any inputs. */
    SafeOutput checkTarget(SparkSession spark, String path, String option, SafeOutput.Kind kind, boolean overwrite,
                           String... inputs) {
        return register(() -> SafeOutput.check(hadoopConf(spark), option, path, kind, overwrite,
                java.util.Arrays.asList(inputs), targets));
    }

    /** A local one-file output ({@code --plot}, reports): checked as {@link #checkTarget} does, kept local. */
    SafeOutput checkFile(SparkSession spark, java.nio.file.Path file, String option, boolean overwrite,
                         String... inputs) {
        return register(() -> SafeOutput.checkLocal(hadoopConf(spark), option, file, SafeOutput.Kind.FILE, overwrite,
                java.util.Arrays.asList(inputs), targets));
    }

    private SafeOutput register(java.util.function.Supplier<SafeOutput> check) {
        SafeOutput t;
        try {
            t = check.get();
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage());
        }
        if (t != null) {
            targets.add(t);
            // repairs of what a killed run left behind (SafeOutput.recover): tell the user
            t.notes.forEach(n -> spec.commandLine().getErr().println("note: " + n));
        }
        return t;
    }

    private static org.apache.hadoop.conf.Configuration hadoopConf(SparkSession spark) {
        return spark != null ? spark.sparkContext().hadoopConfiguration() : new org.apache.hadoop.conf.Configuration();
    }

    /** A {@code --plot} path (null: not asked for) must name a .png file; the usage error names the option. */
    void checkPng(java.nio.file.Path plot) {
        if (plot != null && !plot.getFileName().toString().toLowerCase(java.util.Locale.ROOT).endsWith(".png")) {
            throw usage("Invalid value for option '--plot': the file name must end in .png, got " + plot);
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
