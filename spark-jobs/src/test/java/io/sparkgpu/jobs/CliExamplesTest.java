package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.common.Progress;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Every command-line example of README.md, spark-jobs/README.md and of each command's {@code --help} runs (issue 21 item 2), on the
 * shipped inputs of {@code examples/}: the examples are read from the README and from the help text themselves, so
 * they cannot drift. Outputs go to a temporary directory; the only changes are {@code --master local[2]} and, for
 * time, fewer iterations or replicas ({@link #FASTER}: given again at the end, picocli keeps the last); an example
 * of a command on an input that another example ran already is parsed, not run again. The demo's examples are
 * left to {@code SparkGpuCliDemoTest}.
 */
class CliExamplesTest {
    @TempDir
    Path tmp;

    /** Options whose value is an output: redirected into the temporary directory. */
    private static final Set<String> OUTPUTS = Set.of("--output", "--model-out", "--plot", "--report", "--csv",
            "--heatmap", "--out-dir");

    /** Options appended per command to keep CI lean (same code paths, smaller counts). */
    private static final Map<String, List<String>> FASTER = Map.of(
            "tsne", List.of("--max-iter", "60", "--exaggeration-iter", "30"),
            "scan", List.of("--replicas", "19"));

    static Path root() {
        return Paths.get(System.getProperty("sparkgpu.root", "..")).toAbsolutePath().normalize();
    }

    /** The READMEs' example command lines: indented or fenced lines starting with bin/sparkgpu, joined over "\". */
    static List<String> readmeExamples() throws Exception {
        List<String> out = new ArrayList<>();
        for (String readme : new String[] {"README.md", "spark-jobs/README.md"}) {
            out.addAll(examples(Files.readAllLines(root().resolve(readme), StandardCharsets.UTF_8), "bin/sparkgpu "));
        }
        return out;
    }

    static List<String> examples(List<String> lines, String start) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String t = lines.get(i).trim();
            if (!t.startsWith(start)) {
                continue;
            }
            StringBuilder cmd = new StringBuilder();
            while (true) {
                String part = t.replaceAll("\\s+#.*$", "");
                boolean more = part.endsWith("\\");
                cmd.append(more ? part.substring(0, part.length() - 1) : part).append(' ');
                if (!more || i + 1 >= lines.size()) {
                    break;
                }
                t = lines.get(++i).trim();
            }
            out.add(cmd.toString().substring(start.length()).trim().replaceAll("\\s+", " "));
        }
        return out;
    }

    private static CliRun run(List<String> args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = SparkGpuCli.commandLine();
        cl.setOverwrittenOptionsAllowed(true);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code;
        try {
            code = cl.execute(args.toArray(new String[0]));
        } finally {
            Progress.setSink(null);
        }
        return new CliRun(code, out.toString(), err.toString());
    }

    @Test
    void everyExampleOfTheReadmeAndOfTheHelpRuns() throws Exception {
        Map<String, String> examples = new LinkedHashMap<>();
        for (String e : readmeExamples()) {
            examples.putIfAbsent(e, "README.md");
        }
        int helpExamples = 0;
        for (String name : SparkGpuCli.commandLine().getSubcommands().keySet()) {
            if (name.equals("help")) {
                continue;
            }
            CliRun help = run(List.of(name, "--help"));
            assertEquals(0, help.exitCode, name + " --help\n" + help);
            // picocli wraps at 80 columns: a longer example line would reach the user (and this test) broken
            for (String line : SparkGpuCli.commandLine().getSubcommands().get(name).getCommandSpec().usageMessage()
                    .footer()) {
                assertTrue(line.length() < 80, name + " --help: an example line of 80 characters or more: " + line);
            }
            for (String e : examples(Arrays.asList(help.out.split("\n")), "sparkgpu ")) {
                examples.putIfAbsent(e, name + " --help");
                helpExamples++;
            }
        }
        assertTrue(helpExamples >= 9, "examples found in the help texts: " + helpExamples);
        assertTrue(examples.keySet().stream().anyMatch(e -> e.startsWith("tsne ") && e.contains("p0..p63")),
                examples.keySet().toString());
        int ran = 0;
        int parsed = 0;
        Set<String> inputsRun = new java.util.HashSet<>();
        for (Map.Entry<String, String> e : examples.entrySet()) {
            List<String> args = new ArrayList<>(Arrays.asList(e.getKey().split(" ")));
            String command = args.get(0);
            if (command.equals("demo") || args.contains("--help")) {
                continue; // the demo has its own test; --help ran above
            }
            Path dir = Files.createDirectories(tmp.resolve("ex" + ran + "-" + parsed));
            for (int i = 1; i < args.size() - 1; i++) {
                String v = args.get(i + 1);
                if (OUTPUTS.contains(args.get(i))) {
                    args.set(i + 1, dir.resolve(v).toString());
                } else if (v.startsWith("examples/")) {
                    Path in = root().resolve(v);
                    assertTrue(Files.isRegularFile(in), e.getValue() + ": the example's input " + v + " is shipped");
                    args.set(i + 1, in.toString());
                }
            }
            args.addAll(List.of("--master", "local[2]"));
            args.addAll(FASTER.getOrDefault(command, List.of()));
            String input = args.contains("--input") ? args.get(args.indexOf("--input") + 1) : "";
            if (!inputsRun.add(command + " " + input)) {
                // the same command on the same input ran already: its options must parse, without a second run
                CommandLine cl = SparkGpuCli.commandLine();
                cl.setOverwrittenOptionsAllowed(true);
                cl.parseArgs(args.toArray(new String[0]));
                parsed++;
                continue;
            }
            long t0 = System.nanoTime();
            CliRun r = run(args);
            System.out.printf("example (%.1f s): sparkgpu %s%n", (System.nanoTime() - t0) / 1e9, e.getKey());
            assertEquals(0, r.exitCode, e.getValue() + ": sparkgpu " + e.getKey() + "\n" + r);
            ran++;
        }
        assertTrue(ran >= 10 && parsed >= 3, "examples run: " + ran + ", parsed: " + parsed + " of " + examples.keySet());
    }

    @Test
    void featureRangesAndPrefixesExpandInTheInputsOrder() {
        org.apache.spark.sql.types.StructType s = new org.apache.spark.sql.types.StructType()
                .add("id", "int").add("p0", "double").add("p1", "double").add("p2", "double").add("q", "double");
        CommandLine cl = SparkGpuCli.commandLine();
        assertEquals(List.of("p0", "p1", "p2"), InputData.expand(s, "p0..p2", "--features", cl));
        assertEquals(List.of("p1", "p2", "q"), InputData.expand(s, "p1..q", "--features", cl));
        assertEquals(List.of("p0", "p1", "p2"), InputData.expand(s, "p*", "--features", cl));
        assertEquals(List.of("x"), InputData.expand(s, "x", "--features", cl));
        for (String bad : new String[] {"p2..p0", "p0..z", "..p2", "z*"}) {
            CommandLine.ParameterException ex = org.junit.jupiter.api.Assertions.assertThrows(
                    CommandLine.ParameterException.class, () -> InputData.expand(s, bad, "--features", cl));
            assertTrue(ex.getMessage().startsWith("--features: "), ex.getMessage());
        }
    }
}
