package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The benchmarks' command lines, through picocli: every {@code run bench NAME ...} / {@code run bench-e2e ...}
 * command quoted in BENCHMARKS.md (its code spans, which record how each figure was measured) still parses with
 * today's options, for every benchmark the Spark bundle's run script names; every option has a description in
 * --help; unknown options and bad values are clear IllegalArgumentExceptions.
 */
class BenchCommandLinesTest {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    /** A quoted command: an optional path ending in "run", then "bench NAME" or "bench-e2e", then its arguments. */
    private static final Pattern COMMAND = Pattern.compile("^(?:\\S*/)?run (bench(?:-e2e)?)\\b\\s*(.*)$");

    /** NAME -> benchmark class, from scripts/spark-bundle/run's case list ("bench-e2e" for EndToEndBenchmark). */
    static Map<String, String> benchmarks() throws IOException {
        String run = Files.readString(ROOT.resolve("scripts/spark-bundle/run"), StandardCharsets.UTF_8);
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^\\s*([a-z0-9-]+)\\) main=(io\\.sparkgpu\\.jobs\\.bench\\.\\w+) ;;").matcher(run);
        while (m.find()) {
            out.put(m.group(1), m.group(2));
        }
        Matcher e2e = Pattern.compile("(io\\.sparkgpu\\.jobs\\.bench\\.EndToEndBenchmark)").matcher(run);
        assertTrue(e2e.find(), "scripts/spark-bundle/run runs EndToEndBenchmark");
        out.put("bench-e2e", e2e.group(1));
        assertTrue(out.size() >= 10, "benchmarks named by scripts/spark-bundle/run: " + out);
        return out;
    }

    static Object parse(String className, String[] args) throws Exception {
        Method parse = Class.forName(className + "$Options").getDeclaredMethod("parse", String[].class);
        parse.setAccessible(true);
        try {
            return parse.invoke(null, (Object) args);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
    }

    static Object blank(String className) throws Exception {
        var c = Class.forName(className + "$Options").getDeclaredConstructor();
        c.setAccessible(true);
        return c.newInstance();
    }

    /** The words of a command as the shell splits them (single and double quotes; no expansions). */
    static List<String> words(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean inWord = false;
        char quote = 0;
        for (char ch : line.toCharArray()) {
            if (quote != 0) {
                if (ch == quote) {
                    quote = 0;
                } else {
                    w.append(ch);
                }
            } else if (ch == '\'' || ch == '"') {
                quote = ch;
                inWord = true;
            } else if (Character.isWhitespace(ch)) {
                if (inWord) {
                    out.add(w.toString());
                    w.setLength(0);
                    inWord = false;
                }
            } else {
                w.append(ch);
                inWord = true;
            }
        }
        if (inWord) {
            out.add(w.toString());
        }
        return out;
    }

    /** The code spans of a Markdown text (single backticks; a span may wrap lines), whitespace collapsed. */
    static List<String> codeSpans(String markdown) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("(?<!`)`([^`]+)`(?!`)").matcher(markdown.replaceAll("(?s)```.*?```", ""));
        while (m.find()) {
            out.add(m.group(1).replaceAll("\\s+", " ").trim());
        }
        return out;
    }

    @Test
    void everyBenchCommandInBenchmarksMdParses() throws Exception {
        Map<String, String> benchmarks = benchmarks();
        String md = Files.readString(ROOT.resolve("BENCHMARKS.md"), StandardCharsets.UTF_8);
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (String span : codeSpans(md)) {
            Matcher m = COMMAND.matcher(span);
            if (!m.matches() || span.contains("...")) {
                continue; // not a command, or an elided one ("--capabilities kmeans ...")
            }
            List<String> w = words(m.group(2));
            if (w.stream().anyMatch(x -> x.matches("[A-Z]+"))) {
                continue; // a template with placeholders ("--n N --iso-n N")
            }
            String name = m.group(1).equals("bench-e2e") ? "bench-e2e" : w.isEmpty() ? "" : w.remove(0);
            String cls = benchmarks.get(name);
            if (cls == null) {
                continue; // a benchmark that no longer exists under that name
            }
            try {
                parse(cls, w.toArray(new String[0]));
                checked++;
            } catch (IllegalArgumentException e) {
                problems.add("`" + span + "`: " + e.getMessage());
            }
        }
        assertTrue(checked >= 20, "only " + checked + " bench commands found in BENCHMARKS.md");
        assertEquals(List.of(), problems, "bench commands in BENCHMARKS.md that no longer parse");
    }

    @Test
    void everyOptionIsDescribedInHelp() throws Exception {
        for (Map.Entry<String, String> b : benchmarks().entrySet()) {
            Object options = blank(b.getValue());
            List<OptionSpec> specs = BenchArgs.command(options).getCommandSpec().options();
            assertTrue(specs.size() > 3, b.getKey());
            String usage = BenchArgs.usage(options);
            for (OptionSpec o : specs) {
                assertTrue(o.description().length > 0 && !String.join("", o.description()).isBlank(),
                        b.getKey() + " " + o.longestName() + " has no description");
                assertTrue(usage.contains(o.longestName()), b.getKey() + " --help lists " + o.longestName());
            }
            assertTrue(usage.contains("--markdown"), b.getKey() + " --help: " + usage);
            assertTrue((Boolean) options.getClass().getDeclaredField("help").get(parse(b.getValue(),
                    new String[] {"--help"})), b.getKey() + " --help");
            assertFalse((Boolean) options.getClass().getDeclaredField("help").get(parse(b.getValue(),
                    new String[0])), b.getKey());
        }
    }

    @Test
    void badCommandLinesAreClearErrors() throws Exception {
        for (Map.Entry<String, String> b : benchmarks().entrySet()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> parse(b.getValue(), new String[] {"--bogus", "1"}), b.getKey());
            assertTrue(e.getMessage().contains("--bogus"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> parse(b.getValue(), new String[] {"--markdown"}), b.getKey());
            assertTrue(e.getMessage().contains("--markdown"), e.getMessage());
            e = assertThrows(IllegalArgumentException.class,
                    () -> parse(b.getValue(), new String[] {"stray"}), b.getKey());
            assertTrue(e.getMessage().contains("stray"), e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KMeansBenchmark.Options.parse(new String[] {"--seed", "x"}));
        assertTrue(e.getMessage().contains("--seed"), e.getMessage());
    }

    @Test
    void bothValueFormsAndTheLastRepeatWin() {
        KMeansBenchmark.Options o = KMeansBenchmark.Options.parse(new String[] {"--d=5", "--k", "7", "--k", "9",
                "--n", "1e4"});
        assertEquals(5, o.d);
        assertEquals(9, o.k);
        assertEquals(10_000L, o.ns[0]);
    }

    @Test
    void wordsSplitLikeTheShell() {
        assertEquals(List.of("--small-n", "", "--n", "1e7"), words("--small-n '' --n 1e7"));
        assertEquals(List.of("a b", "c"), words("\"a b\" c"));
        assertEquals(List.of("run bench kmeans --n 1"), codeSpans("x `run bench kmeans\n --n 1` y"));
    }
}
