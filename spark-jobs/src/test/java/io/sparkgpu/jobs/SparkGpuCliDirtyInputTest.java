package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18 item 8 on the command line: seeded dirty CSV files (NaN, Inf, huge, subnormal, -0.0, empty fields,
 * negative and zero weights, duplicate rows) through k-means, isotonic and scan. Each run must succeed, or fail with
 * exit code 1 or 2 and an "error:" line naming one of the file's columns or an option, never a stack trace (without
 * --verbose). Two seeds per command, kept small: every run starts Spark.
 */
class SparkGpuCliDirtyInputTest {
    private static final String[] DIRTY = {"NaN", "Inf", "-Inf", "1e308", "-1.7976931348623157E308", "4.9E-324",
        "-0.0", "", "1e-300"};

    @TempDir
    Path tmp;

    /** A CSV with the given header; column j of row i is clean(i, j) or, at random, a dirty value. */
    private Path csv(String name, long seed, String header, java.util.function.BiFunction<Integer, Integer, String> clean)
            throws Exception {
        Random r = new Random(seed);
        int cols = header.split(",").length;
        StringBuilder sb = new StringBuilder(header).append('\n');
        String previous = null;
        for (int i = 0; i < 30; i++) {
            StringBuilder row = new StringBuilder();
            for (int j = 0; j < cols; j++) {
                row.append(j == 0 ? "" : ",").append(r.nextInt(12) == 0 ? DIRTY[r.nextInt(DIRTY.length)]
                        : clean.apply(i, j));
            }
            String line = previous != null && r.nextInt(8) == 0 ? previous : row.toString(); // duplicates
            sb.append(line).append('\n');
            previous = line;
        }
        Path f = tmp.resolve(name + seed + ".csv");
        Files.writeString(f, sb.toString());
        return f;
    }

    private static void check(String what, CliRun r, String... names) {
        if (r.exitCode == 0) {
            return;
        }
        assertTrue(r.exitCode == SparkGpuCli.EXIT_ERROR || r.exitCode == SparkGpuCli.EXIT_USAGE, what + ": " + r);
        assertFalse(r.err.contains("\tat "), what + ": a stack trace without --verbose: " + r);
        boolean named = false;
        for (String n : names) {
            named |= r.err.contains(n);
        }
        assertTrue(r.err.contains("error") && named, what + ": the error names none of " + List.of(names) + ": " + r);
    }

    @Test
    void kmeansIsotonicAndScanOnDirtyCsv() throws Exception {
        for (long seed = 1; seed <= 2; seed++) {
            Path km = csv("km", seed, "a,b,w", (i, j) -> j == 2 ? String.valueOf((i % 4) * 0.5)
                    : String.valueOf((i % 3) * 5 + 0.25 * j + i * 0.01));
            check("kmeans " + seed, CliRun.of("kmeans", "--input", km.toString(), "--features", "a,b", "--weight", "w",
                    "-k", "2", "--backend", "cpu", "--master", "local[2]"), "'a'", "'b'", "'w'", "--features",
                    "--weight", "featuresCol", "weightCol");
            Path iso = csv("iso", seed, "x,y,w", (i, j) -> j == 0 ? String.valueOf(i % 10) : j == 1
                    ? String.valueOf(i * 0.1 + (i % 3)) : "1");
            check("isotonic " + seed, CliRun.of("isotonic", "--input", iso.toString(), "--feature", "x", "--label",
                    "y", "--backend", "cpu", "--master", "local[2]"), "'x'", "'y'", "--feature", "--label",
                    "featuresCol", "labelCol");
            Path scan = csv("scan", seed, "x,cases,pop", (i, j) -> j == 0 ? String.valueOf(i % 9) : j == 1
                    ? String.valueOf(i % 4) : String.valueOf(20 + i));
            check("scan " + seed, CliRun.of("scan", "--input", scan.toString(), "--coords", "x", "--cases", "cases",
                    "--baseline", "pop", "--replicas", "3", "--backend", "cpu", "--master", "local[2]"), "'x'",
                    "'cases'", "'pop'", "--coords", "--cases", "--baseline", "coordinateCols", "casesCol",
                    "baselineCol");
        }
    }
}
