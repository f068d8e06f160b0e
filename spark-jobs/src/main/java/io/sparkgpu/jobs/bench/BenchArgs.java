package io.sparkgpu.jobs.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.ISetter;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.PicocliException;
import picocli.CommandLine.TypeConversionException;

/**
 * The command-line convention of the benchmarks, through picocli: each benchmark's {@code Options} class is a
 * {@code @Command} whose {@code @Option}s are fields (numbers: picocli's, or {@link Count}/{@link IntCount} for
 * counts written 1e6) or setter methods taking the raw text where an option has its own syntax or rule (lists,
 * choices, 2^16); {@code --name value} and {@code --name=value}, a repeated option's last value wins, and
 * {@code --help}/{@code -h} prints the options with their descriptions.
 */
final class BenchArgs {
    private BenchArgs() {
    }

    /**
     * The picocli command of {@code options} (an {@code @Command} object), with --help/-h added; a value a setter
     * cannot read as a number is reported with its option's name.
     */
    static CommandLine command(Object options) {
        CommandLine cl = new CommandLine(options);
        CommandSpec spec = cl.getCommandSpec();
        for (OptionSpec o : List.copyOf(spec.options())) {
            spec.remove(o);
            spec.addOption(o.toBuilder().setter(naming(o.longestName(), o.setter())).build());
        }
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true).order(Integer.MAX_VALUE)
                .description("Show this help and exit.")
                .build());
        spec.usageMessage().width(120);
        cl.setOverwrittenOptionsAllowed(true);
        return cl;
    }

    private static ISetter naming(String option, ISetter setter) {
        return new ISetter() {
            @Override
            public <T> T set(T value) throws Exception {
                try {
                    return setter.set(value);
                } catch (PicocliException e) {
                    if (e.getCause() instanceof NumberFormatException) {
                        throw new IllegalArgumentException(option + ": not a number: '" + value + "'", e.getCause());
                    }
                    throw e;
                }
            }
        };
    }

    /** An option's whole number written 1000000, 1_000_000 or 1e6 ({@link KMeansBenchmark.Options#count}). */
    public static final class Count implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                return KMeansBenchmark.Options.count(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException("'" + value + "' is not a whole number (1000000, 1_000_000 or 1e6)");
            }
        }
    }

    /** {@link Count} for an int option. */
    public static final class IntCount implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            long v = new Count().convert(value);
            if (v != (int) v) {
                throw new TypeConversionException("'" + value + "' is too large (at most " + Integer.MAX_VALUE + ")");
            }
            return (int) v;
        }
    }

    /** The usage text of the benchmark whose options {@code options} holds. */
    static String usage(Object options) {
        return command(options).getUsageMessage(CommandLine.Help.Ansi.OFF);
    }

    /**
     * Applies {@code args} to {@code options} (its setters run in order); returns true when --help or -h was
     * given. Any problem (an unknown option or argument, a missing value, a value a setter rejects) is an
     * IllegalArgumentException whose message names it.
     */
    static boolean parse(Object options, String[] args) {
        try {
            return command(options).parseArgs(args).isUsageHelpRequested();
        } catch (PicocliException e) {
            for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
                if (c instanceof IllegalArgumentException && !(c instanceof PicocliException)) {
                    throw (IllegalArgumentException) c; // a setter's own message
                }
            }
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /**
     * The comma-separated values of {@code option}, each matched without regard to case against {@code allowed}
     * and returned in its allowed spelling, in the given order without repeats; blank items are skipped. An
     * unknown value or an empty list is an IllegalArgumentException naming the option.
     */
    static List<String> choices(String option, String value, List<String> allowed) {
        List<String> out = new ArrayList<>();
        for (String s : value.split(",")) {
            String t = s.trim();
            if (t.isEmpty()) {
                continue;
            }
            String match = allowed.stream().filter(x -> x.equalsIgnoreCase(t)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException(option + ": unknown value '" + t
                            + "' (choose from " + String.join(",", allowed) + ")"));
            if (!out.contains(match)) {
                out.add(match);
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(option + ": no value given (choose from " + String.join(",", allowed)
                    + ")");
        }
        return out;
    }

    /** One value of {@code option} from {@code allowed} (see {@link #choices}). */
    static String choice(String option, String value, List<String> allowed) {
        List<String> c = choices(option, value, allowed);
        if (c.size() != 1) {
            throw new IllegalArgumentException(option + ": expected one of " + String.join(",", allowed) + ", got '"
                    + value + "'");
        }
        return c.get(0);
    }

    /** Prints the report and, when {@code markdownFile} is set, writes it there too (creating its folder). */
    static void emit(String md, String markdownFile) throws IOException {
        System.out.println(md);
        if (markdownFile != null) {
            Path p = Paths.get(markdownFile);
            if (p.getParent() != null) {
                Files.createDirectories(p.getParent());
            }
            Files.writeString(p, md, StandardCharsets.UTF_8);
            System.err.println("[bench] wrote " + p.toAbsolutePath());
        }
    }

    /** The report's first lines: wrapper command (if any), JVM command, date, host. */
    static List<String> runHeader(String[] argv) {
        List<String> h = new ArrayList<>();
        String wrapper = System.getenv("SPARKGPU_BENCH_COMMAND");
        if (wrapper != null && !wrapper.isBlank()) {
            h.add("command: `" + wrapper.trim() + "`");
        }
        h.add("JVM command: `" + KMeansBenchmark.jvmCommand(argv) + "`");
        h.add("date: " + Instant.now().truncatedTo(ChronoUnit.SECONDS));
        h.add("host: " + Runtime.getRuntime().availableProcessors() + " cores (" + KMeansBenchmark.cpuModel()
                + "), max heap " + (Runtime.getRuntime().maxMemory() >> 20) + " MiB, Java "
                + System.getProperty("java.version") + ", load average at start " + KMeansBenchmark.loadAverage());
        return h;
    }

    /** What one benchmark run returns: its Markdown report and its exit status (0; 3 when GPU and CPU differ; ...). */
    record Outcome(String markdown, int status) {
    }

    /** A benchmark's body: runs with parsed options. */
    interface Body<O> {
        Outcome run(O options) throws Exception;
    }

    /**
     * The benchmarks' main(): a bad argument prints the error and the usage and exits with 2; --help prints the
     * usage; otherwise runs the body, prints the report (and writes it to the --markdown file) and exits with the
     * body's status (System.exit: Spark's non-daemon threads could otherwise keep the JVM alive).
     */
    static <O> void main(String[] args, Supplier<O> blank, Function<String[], O> parse, Predicate<O> help,
            Function<O, String> markdownFile, Body<O> body) throws Exception {
        O o;
        try {
            o = parse.apply(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.print(usage(blank.get()));
            System.exit(2);
            return;
        }
        if (help.test(o)) {
            System.out.print(usage(blank.get()));
            return;
        }
        Outcome out = body.run(o);
        emit(out.markdown(), markdownFile.apply(o));
        System.exit(out.status());
    }
}
