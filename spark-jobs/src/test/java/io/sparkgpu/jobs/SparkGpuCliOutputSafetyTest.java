package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.kmeans.GpuKMeansModel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18's data-loss hazards through the real commands (Spark on local[2]): each is refused before the work with
 * a usage error naming the option, and the input (and its directory) stays byte-identical; --overwrite replaces a
 * previous model only once the new one is complete, and a failure just before the move leaves the old one intact.
 */
class SparkGpuCliOutputSafetyTest {
    @TempDir
    Path tmp;

    @AfterEach
    void noHook() {
        SafeOutput.beforeMoveForTests = null;
    }

    private Path pointsCsv(Path dir) throws Exception {
        Random rnd = new Random(3);
        StringBuilder sb = new StringBuilder("x,y\n");
        for (int i = 0; i < 60; i++) {
            sb.append(String.format(Locale.ROOT, "%.4f,%.4f%n", (i % 2) * 10 + rnd.nextGaussian(), rnd.nextGaussian()));
        }
        return Files.writeString(Files.createDirectories(dir).resolve("pts.csv"), sb.toString(), StandardCharsets.UTF_8);
    }

    private static void assertRefused(CliRun r, String option, String rule) {
        assertEquals(SparkGpuCli.EXIT_USAGE, r.exitCode, r::toString);
        assertTrue(r.err.contains(option + ": ") && r.err.contains(rule), r::toString);
    }

    @Test
    void outputsOverTheInputItsDirectoryOrAForeignDirectoryAreRefused() throws Exception {
        Path data = tmp.resolve("data");
        Path in = pointsCsv(data);
        Files.writeString(data.resolve("notes.txt"), "unrelated");
        Path png = Files.writeString(tmp.resolve("old.png"), "not replaced without --overwrite");
        Map<String, String> before = SafeOutputTest.snapshot(tmp);
        String relative = "./" + Path.of("").toAbsolutePath().relativize(in);

        // kmeans --input data/pts.csv --output ./data/pts.csv --overwrite (the guard used to compare strings)
        assertRefused(CliRun.of("kmeans", "--input", in.toString(), "--features", "x,y", "--output", relative,
                "--overwrite", "--master", "local[2]"), "--output", "is the input");
        // --model-out the input's directory (would have deleted it recursively)
        assertRefused(CliRun.of("kmeans", "--input", in.toString(), "--features", "x,y", "--model-out",
                data + "/", "--overwrite", "--master", "local[2]"), "--model-out", "contains the input");
        // a directory that is not a previous model
        assertRefused(CliRun.of("isotonic", "--input", in.toString(), "--feature", "x", "--label", "y", "--model-out",
                tmp.toString(), "--overwrite", "--master", "local[2]"), "--model-out", "contains the input");
        // scan --csv had no check at all
        assertRefused(CliRun.of("scan", "--input", in.toString(), "--coords", "x", "--baseline", "y",
                "--csv", data + "/../data/pts.csv", "--overwrite", "--master", "local[2]"), "--csv", "is the input");
        // --plot used to overwrite without --overwrite
        assertRefused(CliRun.of("tsne", "--input", in.toString(), "--features", "x,y", "--plot", png.toString(),
                "--master", "local[2]"), "--plot", "already exists (pass --overwrite");
        // sort (added after the others: routed through the same SafeOutput)
        assertRefused(CliRun.of("sort", "--input", in.toString(), "--key", "x", "--output", relative,
                "--overwrite", "--master", "local[2]"), "--output", "is the input");
        assertRefused(CliRun.of("sort", "--input", in.toString(), "--key", "x", "--plot", png.toString(),
                "--master", "local[2]"), "--plot", "already exists (pass --overwrite");
        assertEquals(before, SafeOutputTest.snapshot(tmp), "nothing written, nothing changed");
    }

    @Test
    void overwriteReplacesAModelOnlyWhenTheNewOneIsComplete() throws Exception {
        Path in = pointsCsv(tmp.resolve("in"));
        Path model = tmp.resolve("out/model");
        String[] args = {"kmeans", "--input", in.toString(), "--features", "x,y", "-k", "2", "--backend", "cpu",
            "--model-out", model.toString(), "--master", "local[2]"};
        CliRun first = CliRun.of(args);
        assertEquals(0, first.exitCode, first::toString);
        Map<String, String> saved = SafeOutputTest.snapshot(tmp.resolve("out"));

        String[] again = java.util.Arrays.copyOf(args, args.length + 3);
        again[args.length] = "--overwrite";
        again[args.length + 1] = "--seed";
        again[args.length + 2] = "5";
        SafeOutput.beforeMoveForTests = () -> {
            throw new IllegalStateException("driver killed before the move (injected)");
        };
        CliRun failed = CliRun.of(again);
        assertEquals(SparkGpuCli.EXIT_ERROR, failed.exitCode, failed::toString);
        assertEquals(saved, SafeOutputTest.snapshot(tmp.resolve("out")), "the previous model is intact, no temp left");

        SafeOutput.beforeMoveForTests = null;
        CliRun replaced = CliRun.of(again);
        assertEquals(0, replaced.exitCode, replaced::toString);
        Map<String, String> now = SafeOutputTest.snapshot(tmp.resolve("out"));
        assertNotEquals(saved, now, "replaced");
        assertFalse(now.keySet().stream().anyMatch(n -> !n.startsWith("model/")), now.keySet().toString());
        assertTrue(Files.readString(model.resolve(ModelOutput.SUMMARY)).contains("\"seed\": 5"));
        org.apache.spark.sql.SparkSession spark = org.apache.spark.sql.SparkSession.builder().master("local[2]")
                .appName("verify").config("spark.ui.enabled", "false").getOrCreate();
        try {
            assertEquals(2, GpuKMeansModel.load(model.toString()).getK());
        } finally {
            spark.stop();
        }
    }
}
