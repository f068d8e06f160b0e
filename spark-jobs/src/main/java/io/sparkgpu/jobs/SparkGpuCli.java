package io.sparkgpu.jobs;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Command-line entry point: {@code sparkgpu kmeans ...}, {@code sparkgpu isotonic ...}, {@code sparkgpu scan ...},
 * {@code sparkgpu tsne ...},
 * {@code sparkgpu demo ...},
 * {@code sparkgpu sort ...},
 * {@code sparkgpu fhn ...}.
 *
 * <p>Works as a plain {@code java -cp} main class (bin/sparkgpu) and as a spark-submit application class.
 * Exit codes: 0 success, 2 bad arguments (the message names the option), 1 any other error (for errors of the
 * library, typically IllegalArgumentException, only the message is printed unless {@code --verbose}).
 */
@Command(name = "sparkgpu", mixinStandardHelpOptions = true, versionProvider = SparkGpuCli.Version.class,
        description = "GPU-accelerated statistics for Apache Spark.",
        subcommands = {KMeansCommand.class, IsotonicCommand.class, ScanCommand.class, TsneCommand.class, DemoCommand.class,
                SortCommand.class,
                FhnCommand.class,
                SplineCommand.class, CdfCommand.class,
                CommandLine.HelpCommand.class},
        footer = {"", "Run 'sparkgpu COMMAND --help' for the options of a command."})
public final class SparkGpuCli implements Callable<Integer> {
    public static final int EXIT_OK = 0;
    public static final int EXIT_ERROR = 1;
    public static final int EXIT_USAGE = 2;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "Missing command: choose one of kmeans, isotonic, scan, tsne, demo"
                + ", sort"
                + ", fhn, spline, cdf");
    }

    public static void main(String[] args) {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        int code = run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
        System.exit(code);
    }

    /** Runs the CLI without exiting the JVM; returns the exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        CommandLine cl = commandLine();
        cl.setOut(out);
        cl.setErr(err);
        try {
            return cl.execute(args);
        } finally {
            io.sparkgpu.common.Progress.setSink(null); // a command's console is not the next caller's
            out.flush();
            err.flush();
        }
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new SparkGpuCli());
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setParameterExceptionHandler(USAGE_HANDLER);
        cl.setExecutionExceptionHandler(ERROR_HANDLER);
        cl.setExitCodeExceptionMapper(t -> EXIT_ERROR);
        return cl;
    }

    private static final IParameterExceptionHandler USAGE_HANDLER = (ex, args) -> {
        CommandLine cl = ex.getCommandLine();
        PrintWriter err = cl.getErr();
        String message = ex.getMessage();
        if (!(ex instanceof CommandLine.UnmatchedArgumentException) && !cl.getUnmatchedArguments().isEmpty()) {
            // picocli checks required options before it complains about unknown ones; the unknown one is
            // the more useful message (it is often a misspelt required option)
            message = new CommandLine.UnmatchedArgumentException(cl, cl.getUnmatchedArguments()).getMessage();
        }
        err.println(qualifiedName(cl) + ": " + message);
        CommandLine.UnmatchedArgumentException.printSuggestions(ex, err);
        err.println("Try '" + qualifiedName(cl) + " --help' for more information.");
        return EXIT_USAGE;
    };

    private static final IExecutionExceptionHandler ERROR_HANDLER = (ex, cl, parseResult) -> {
        PrintWriter err = cl.getErr();
        boolean verbose = cl.getCommand() instanceof SparkCommand && ((SparkCommand) cl.getCommand()).verbose();
        IllegalArgumentException iae = find(ex, IllegalArgumentException.class);
        String malformed = cl.getCommand() instanceof SparkCommand && InputData.isMalformedCsv(ex)
                ? explainMalformedCsv(((SparkCommand) cl.getCommand()).csvInputs) : null;
        if (malformed != null) {
            err.println(qualifiedName(cl) + ": error: --input: " + malformed);
        } else if (iae != null) {
            err.println(qualifiedName(cl) + ": error: " + iae.getMessage());
        } else {
            Throwable shown = rootOfSparkFailure(ex);
            err.println(qualifiedName(cl) + ": error: " + shown.getClass().getName()
                    + (shown.getMessage() == null ? "" : ": " + shown.getMessage()));
            if (!verbose) {
                err.println("(run again with --verbose for the stack trace)");
            }
        }
        if (verbose) {
            ex.printStackTrace(err);
        }
        return EXIT_ERROR;
    };

    /** The first malformed row of the inputs, or a general message when it cannot be found. */
    private static String explainMalformedCsv(java.util.List<String> inputs) {
        for (String input : inputs) {
            try {
                String why = InputData.explainMalformedCsv(input, new org.apache.hadoop.conf.Configuration());
                if (why != null) {
                    return why;
                }
            } catch (java.io.IOException | RuntimeException e) {
                return "a CSV row of " + input + " does not have the header's number of fields (cannot find it: "
                        + e.getMessage() + ")";
            }
        }
        return inputs.isEmpty() ? null : "a CSV row of " + String.join(", ", inputs) + " is malformed (a value does "
                + "not parse as its column's type)";
    }

    static String qualifiedName(CommandLine cl) {
        return cl.getCommandSpec().qualifiedName();
    }

    /** The first throwable of {@code type} in the cause chain of {@code t}, or null. */
    static <T extends Throwable> T find(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }

    /** For a Spark job failure the task's own exception (the cause) is the informative one. */
    static Throwable rootOfSparkFailure(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c && c.getClass().getName().startsWith("org.apache.spark.")) {
            c = c.getCause();
        }
        return c;
    }


    /** Version from the jar manifest (Implementation-Version). */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = SparkGpuCli.class.getPackage().getImplementationVersion();
            return new String[] {"sparkgpu " + (v == null ? "(development build)" : v)};
        }
    }
}
