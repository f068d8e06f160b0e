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
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Predicate;

/** The command-line convention of the benchmarks: {@code --name value} or {@code --name=value}, and --help/-h. */
final class BenchArgs {
    private BenchArgs() {
    }

    /**
     * Calls {@code option} with each option name and its value in order; returns true when --help or -h was
     * given. A missing value is an IllegalArgumentException.
     */
    static boolean forEach(String[] args, BiConsumer<String, String> option) {
        boolean help = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                help = true;
                continue;
            }
            String v;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                v = a.substring(eq + 1);
                a = a.substring(0, eq);
            } else {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("missing value after " + a);
                }
                v = args[++i];
            }
            option.accept(a, v);
        }
        return help;
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
    static <O> void main(String[] args, String usage, Function<String[], O> parse, Predicate<O> help,
            Function<O, String> markdownFile, Body<O> body) throws Exception {
        O o;
        try {
            o = parse.apply(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(usage);
            System.exit(2);
            return;
        }
        if (help.test(o)) {
            System.out.println(usage);
            return;
        }
        Outcome out = body.run(o);
        emit(out.markdown(), markdownFile.apply(o));
        System.exit(out.status());
    }
}
