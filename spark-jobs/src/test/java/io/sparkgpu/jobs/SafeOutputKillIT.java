package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sparkgpu.kmeans.GpuKMeansModel;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18 item 1: a CLI process killed (SIGKILL, no shutdown hooks, no {@code finally}) while it replaces a saved
 * model with {@code --overwrite} never loses the model. The CLI runs in its own JVM (this JVM's java and class
 * path); {@link SafeOutput#PAUSE_KEY} holds it at one step of {@link SafeOutput#write} and this test kills it
 * there, at each {@link SafeOutput.PauseStep} in turn: while the new model is half-written, when it is complete
 * aside, after the previous model was moved aside (the target is missing for that instant), and after the new one
 * was moved in. At every step the target holds a complete model (the previous one byte for byte, or the new one)
 * or, at the move-aside step, the previous one lies complete aside and the next run moves it back; the next run
 * removes every other leftover and still succeeds.
 */
class SafeOutputKillIT {
    static final long START_LIMIT_SECONDS = 180;

    @TempDir
    Path tmp;

    @Test
    void aRunKilledAtAnyStepOfReplacingAModelLeavesACompleteModel() throws Exception {
        Path in = Files.createDirectories(tmp.resolve("in")).resolve("pts.csv");
        Random rnd = new Random(3);
        StringBuilder sb = new StringBuilder("x,y\n");
        for (int i = 0; i < 60; i++) {
            sb.append(String.format(Locale.ROOT, "%.4f,%.4f%n", (i % 2) * 10 + rnd.nextGaussian(), rnd.nextGaussian()));
        }
        Files.writeString(in, sb, StandardCharsets.UTF_8);
        Path out = Files.createDirectories(tmp.resolve("out"));
        Path model = out.resolve("model");
        CliRun first = CliRun.of(args(in, model, 1, false));
        assertEquals(0, first.exitCode, first::toString);
        final Map<String, String> old = SafeOutputTest.snapshot(model);
        assertTrue(old.containsKey(ModelOutput.SUMMARY), old.keySet().toString());

        // killed while writing: the new model has its data but not its summary.json yet
        killAt(SafeOutput.PauseStep.WRITING, in, model);
        assertEquals(old, SafeOutputTest.snapshot(model), "the previous model is intact");
        Path half = only(out, SafeOutput.TMP_MARK);
        assertTrue(Files.isDirectory(half.resolve("metadata")) && !Files.exists(half.resolve(ModelOutput.SUMMARY)),
                "the kill came mid-write: " + SafeOutputTest.snapshot(half).keySet());
        assertRecovered(out, model, old, "removed what a stopped run left next to", half);

        // killed with the new model complete aside, before the move
        killAt(SafeOutput.PauseStep.WRITTEN, in, model);
        assertEquals(old, SafeOutputTest.snapshot(model), "the previous model is intact");
        Path complete = only(out, SafeOutput.TMP_MARK);
        assertTrue(Files.exists(complete.resolve(ModelOutput.SUMMARY)));
        assertRecovered(out, model, old, "removed what a stopped run left next to", complete);

        // killed between the two moves: the target is missing, the previous model lies complete aside, and the next
        // run (a real one, without --overwrite) moves it back before it looks at the target
        killAt(SafeOutput.PauseStep.ASIDE, in, model);
        assertFalse(Files.exists(model), "killed after moving the previous model aside");
        Path aside = only(out, SafeOutput.ASIDE_MARK);
        assertEquals(old, SafeOutputTest.snapshot(aside), "the previous model is complete aside");
        CliRun next = CliRun.of(args(in, model, 1, false));
        assertEquals(SparkGpuCli.EXIT_USAGE, next.exitCode, next::toString);
        assertTrue(next.err.contains("--model-out: moved the previous " + model + " back into place from "
                + aside.getFileName()) && next.err.contains("already exists (pass --overwrite"), next::toString);
        assertEquals(old, SafeOutputTest.snapshot(model), "the previous model is back, byte for byte");
        assertEquals(List.of(model), list(out), "and nothing else is left");

        // killed after the new model was moved in, before the previous one was deleted: the new one is complete
        killAt(SafeOutput.PauseStep.MOVED, in, model);
        Map<String, String> killedNew = SafeOutputTest.snapshot(model);
        assertNotEquals(old, killedNew);
        assertTrue(Files.readString(model.resolve(ModelOutput.SUMMARY)).contains("\"seed\": 5"));
        assertEquals(2, loadK(model), "the new model loads");
        assertEquals(old, SafeOutputTest.snapshot(only(out, SafeOutput.ASIDE_MARK)), "the previous one is aside");

        // a later run still succeeds and removes the leftover
        CliRun last = CliRun.of(args(in, model, 9, true));
        assertEquals(0, last.exitCode, last::toString);
        assertTrue(last.err.contains("note: --model-out: removed what a stopped run left next to"), last::toString);
        assertEquals(List.of(model), list(out));
        assertTrue(Files.readString(model.resolve(ModelOutput.SUMMARY)).contains("\"seed\": 9"));
        assertEquals(2, loadK(model));
    }

    /** kmeans on {@code in} saving its model at {@code model}. */
    private static String[] args(Path in, Path model, long seed, boolean overwrite) {
        List<String> a = new ArrayList<>(List.of("kmeans", "--input", in.toString(), "--features", "x,y", "-k", "2",
                "--backend", "cpu", "--seed", Long.toString(seed), "--model-out", model.toString(),
                "--master", "local[2]", "--no-ui", "--quiet"));
        if (overwrite) {
            a.add("--overwrite");
        }
        return a.toArray(new String[0]);
    }

    /**
     * Runs the CLI (--overwrite, seed 5) in a new JVM held at {@code step}, kills it there with SIGKILL and waits
     * for it to end.
     */
    private void killAt(SafeOutput.PauseStep step, Path in, Path model) throws Exception {
        Path marker = tmp.resolve("paused-" + step);
        Path log = tmp.resolve("cli-" + step + ".log");
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(Arrays.asList(System.getProperty("sparkgpu.jvmOpens", ConsumerProjectIT.DEFAULT_OPENS).trim()
                .split("\\s+")));
        cmd.addAll(List.of("-Xmx512m", "-XX:TieredStopAtLevel=1", "-Dspark.ui.enabled=false",
                "-D" + SafeOutput.PAUSE_KEY + "=" + step + ":" + marker,
                "-cp", System.getProperty("java.class.path"), SparkGpuCli.class.getName()));
        cmd.addAll(List.of(args(in, model, 5, true)));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        Process p = pb.start();
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_LIMIT_SECONDS);
            while (!Files.exists(marker)) {
                if (!p.isAlive()) {
                    fail("the CLI ended (exit " + p.exitValue() + ") before pausing at " + step + "\n" + read(log));
                }
                if (System.nanoTime() > end) {
                    fail("the CLI did not pause at " + step + " within " + START_LIMIT_SECONDS + " s\n" + read(log));
                }
                Thread.sleep(20);
            }
            p.destroyForcibly(); // SIGKILL on Linux: no shutdown hook, no finally block runs
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the killed CLI ended");
            assertEquals(128 + 9, p.exitValue(), "ended by SIGKILL\n" + read(log));
        } finally {
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }
    }

    /** What the next run's check does first: the target holds {@code expected} again, nothing else is left. */
    private static void assertRecovered(Path out, Path model, Map<String, String> expected, String note, Path leftover)
            throws IOException {
        SafeOutput t = SafeOutput.check(new Configuration(), "--model-out", model.toString(), SafeOutput.Kind.MODEL,
                true, List.of(), List.of());
        assertEquals(List.of("--model-out: " + note + " " + model + ": " + leftover.getFileName()), t.notes);
        assertEquals(expected, SafeOutputTest.snapshot(model));
        assertEquals(List.of(model), list(out));
    }

    /** The one entry of {@code dir} whose name holds {@code mark}. */
    private static Path only(Path dir, String mark) throws IOException {
        List<Path> m = list(dir).stream().filter(p -> p.getFileName().toString().contains(mark))
                .collect(Collectors.toList());
        assertEquals(1, m.size(), "one " + mark + " sibling: " + list(dir));
        return m.get(0);
    }

    private static List<Path> list(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().collect(Collectors.toList());
        }
    }

    private static String read(Path log) throws IOException {
        return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "(no output)";
    }

    private static int loadK(Path model) {
        org.apache.spark.sql.SparkSession spark = org.apache.spark.sql.SparkSession.builder().master("local[2]")
                .appName("verify").config("spark.ui.enabled", "false").getOrCreate();
        try {
            return GpuKMeansModel.load(model.toString()).getK();
        } finally {
            spark.stop();
        }
    }
}
