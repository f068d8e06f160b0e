package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18 item 8 on the command line: seeded dirty CSV files through every sub-command that reads user data
 * (k-means, isotonic, scan, t-SNE, sort, spline, CDF, the FHN sweep). Each run must succeed (and write its output),
 * or fail with exit code 1 or 2 and an "error:" line naming one of the file's columns or an option, never a stack
 * trace (without --verbose), never an unexplained exception class as the message, never a hang (the class has a time
 * limit). Three kinds of dirt: finite extremes (huge, subnormal, -0.0, duplicates; most runs succeed), non-finite
 * and missing values (NaN, +-Inf, empty fields) and wrong types (a word in a numeric column: the column is read as a
 * string). Kept small: every run starts Spark.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SparkGpuCliDirtyInputTest {
    /** Finite extremes and duplicates: a valid result, or an error naming a column (e.g. beyond an exact sum). */
    private static final String[] FINITE = {"1e154", "-1e154", "4.9E-324", "-0.0", "1e-300", "2.2250738585072014E-308",
        "0"};
    private static final String[] NON_FINITE = {"NaN", "Inf", "-Inf", "1e308", "-1.7976931348623157E308", "4.9E-324",
        "-0.0", "", "1e-300"};
    private static final String[] WRONG_TYPE = {"abc", "1,5"};
    private static final String[][] KINDS = {FINITE, NON_FINITE, WRONG_TYPE};

    @TempDir
    Path tmp;

    private final List<String> failures = new ArrayList<>();
    private final List<String> succeeded = new ArrayList<>();

    /**
     * A CSV with the given header; column j of row i is clean(i, j) or, at random, one of {@code dirty} (finite
     * extremes more rarely, so that some runs succeed); a few rows repeat the previous one. A value with a comma is
     * quoted.
     */
    private Path csv(String name, long seed, String[] dirty, String header, BiFunction<Integer, Integer, String> clean)
            throws Exception {
        Random r = new Random(seed);
        int cols = header.split(",").length;
        StringBuilder sb = new StringBuilder(header).append('\n');
        String previous = null;
        for (int i = 0; i < 30; i++) {
            StringBuilder row = new StringBuilder();
            for (int j = 0; j < cols; j++) {
                String v = r.nextInt(dirty == FINITE ? 40 : 12) == 0 ? dirty[r.nextInt(dirty.length)] : clean.apply(i, j);
                row.append(j == 0 ? "" : ",").append(v.contains(",") ? '"' + v + '"' : v);
            }
            String line = previous != null && r.nextInt(8) == 0 ? previous : row.toString(); // duplicates
            sb.append(line).append('\n');
            previous = line;
        }
        Path f = tmp.resolve(name + seed + ".csv");
        Files.writeString(f, sb.toString());
        return f;
    }

    /** Runs the CLI with --quiet --no-ui on local[2] and the CPU backend, and checks the property. */
    private void check(String what, Path output, String[] args, String... names) {
        List<String> a = new ArrayList<>(List.of(args));
        a.addAll(List.of("--backend", "cpu", "--master", "local[2]", "--quiet", "--no-ui"));
        CliRun r = CliRun.of(a.toArray(new String[0]));
        if (r.exitCode == 0) {
            if (output != null && !Files.exists(output)) {
                failures.add(what + ": exit 0 but no output " + output + ": " + r);
            }
            succeeded.add(what);
            return;
        }
        boolean named = false;
        for (String n : names) {
            named |= r.err.contains(n);
        }
        if (r.exitCode != SparkGpuCli.EXIT_ERROR && r.exitCode != SparkGpuCli.EXIT_USAGE) {
            failures.add(what + ": exit code " + r);
        } else if (r.err.contains("\tat ")) {
            failures.add(what + ": a stack trace without --verbose: " + r);
        } else if (r.err.matches("(?s).*error: (java|scala|org)\\.[\\w.$]+(Exception|Error).*")) {
            failures.add(what + ": an unexplained exception: " + r);
        } else if (!r.err.contains("error") && r.exitCode == SparkGpuCli.EXIT_ERROR || !named) {
            failures.add(what + ": the error names none of " + List.of(names) + ": " + r);
        }
    }

    @AfterEach
    void noFailures() {
        assertTrue(failures.isEmpty(), failures.size() + " failed:\n" + String.join("\n", failures));
        // the finite extremes must leave some runs that succeed, or the valid-result side is never tested
        assertTrue(succeeded.size() >= 2, "runs that succeeded: " + succeeded);
    }

    @Test
    void kmeansIsotonicAndScanOnDirtyCsv() throws Exception {
        for (int kind = 0; kind < KINDS.length; kind++) {
            String[] dirty = KINDS[kind];
            long seed = kind + 1;
            Path km = csv("km", seed, dirty, "a,b,w", (i, j) -> j == 2 ? String.valueOf((i % 4) * 0.5)
                    : String.valueOf((i % 3) * 5 + 0.25 * j + i * 0.01));
            Path kmp = tmp.resolve("km" + seed + ".png");
            check("kmeans " + seed, kmp, new String[] {"kmeans", "--input", km.toString(), "--features", "a,b",
                "--weight", "w", "-k", "2", "--plot", kmp.toString()}, "'a'", "'b'", "'w'", "--features", "--weight");
            Path iso = csv("iso", seed, dirty, "x,y,w", (i, j) -> j == 0 ? String.valueOf(i % 10) : j == 1
                    ? String.valueOf(i * 0.1 + (i % 3)) : "1");
            Path isp = tmp.resolve("iso" + seed + ".png");
            check("isotonic " + seed, isp, new String[] {"isotonic", "--input", iso.toString(), "--feature", "x",
                "--label", "y", "--weight", "w", "--plot", isp.toString()}, "'x'", "'y'", "'w'", "--feature", "--label", "--weight");
            Path scan = csv("scan", seed, dirty, "x,cases,pop", (i, j) -> j == 0 ? String.valueOf(i % 9) : j == 1
                    ? String.valueOf(i % 4) : String.valueOf(20 + i));
            check("scan " + seed, null, new String[] {"scan", "--input", scan.toString(), "--coords", "x", "--cases",
                "cases", "--baseline", "pop", "--replicas", "3"}, "'x'", "'cases'", "'pop'", "--coords", "--cases",
                "--baseline");
        }
    }

    @Test
    void tsneSortSplineCdfAndFhnOnDirtyCsv() throws Exception {
        for (int kind = 0; kind < KINDS.length; kind++) {
            String[] dirty = KINDS[kind];
            long seed = kind + 1;
            Path ts = csv("ts", seed, dirty, "id,a,b,c", (i, j) -> j == 0 ? String.valueOf(i)
                    : String.valueOf((i % 3) * 4 + 0.3 * j + i * 0.01));
            Path tso = tmp.resolve("tso" + seed);
            check("tsne " + seed, tso, new String[] {"tsne", "--input", ts.toString(), "--features", "a,b,c", "--id",
                "id", "--perplexity", "3", "--max-iter", "8", "--exaggeration-iter", "4", "--init", "random",
                "--quality-sample", "0", "--output", tso.toString(), "--output-format", "csv", "--plot",
                tmp.resolve("ts" + seed + ".png").toString()}, "'id'", "'a'", "'b'",
                "'c'", "--features a,b,c", "--id");
            Path so = csv("so", seed, dirty, "k,v", (i, j) -> j == 0 ? String.valueOf((i * 7919) % 23 - 11.5)
                    : String.valueOf(i));
            Path soo = tmp.resolve("soo" + seed);
            check("sort " + seed, soo, new String[] {"sort", "--input", so.toString(), "--key", "k", "--partitions",
                "2", "--output", soo.toString(), "--output-format", "csv", "--plot",
                tmp.resolve("so" + seed + ".png").toString(), "--plot-bins", "8"}, "'k'", "--key");
            Path sp = csv("sp", seed, dirty, "dose,resp,wt", (i, j) -> j == 0 ? String.valueOf(i * 0.5) : j == 1
                    ? String.valueOf(i * 0.25 + (i % 4 == 0 ? -0.5 : 0)) : String.valueOf(1 + i % 3));
            Path spo = tmp.resolve("spo" + seed);
            check("spline " + seed, spo, new String[] {"spline", "--input", sp.toString(), "--x", "dose", "--y",
                "resp", "--weight", "wt", "--output", spo.toString(), "--plot",
                tmp.resolve("sp" + seed + ".png").toString()}, "dose", "resp", "wt", "--x", "--y",
                "--weight");
            Path cdo = tmp.resolve("cdo" + seed);
            check("cdf " + seed, cdo, new String[] {"cdf", "--input", sp.toString(), "--column", "dose", "--weight",
                "wt", "--knots", "6", "--output", cdo.toString(), "--plot",
                tmp.resolve("cd" + seed + ".png").toString()}, "dose", "wt", "--column", "--weight");
            Path fh = csv("fh", seed, dirty, "id,a,eps,I", (i, j) -> j == 0 ? String.valueOf(i) : j == 1 ? "0.1"
                    : j == 2 ? "0.01" : String.valueOf(0.1 * (i % 3)));
            Path fho = tmp.resolve("fho" + seed);
            check("fhn " + seed, fho, new String[] {"fhn", "--cells", "11", "--length", "5", "--dt", "0.05",
                "--t-end", "0.5", "--input", fh.toString(), "--output", fho.toString(), "--output-format", "csv"},
                "'a'", "'eps'", "'I'", "--input", "dt must be");
        }
    }

    /**
     * Found by this class: keys at both ends of the double range made the histogram's bin width (max - min)
     * infinite, and infinite keys made min and max infinite; the plot library refused the data ("Series data ...
     * cannot be equal to Double.POSITIVE_INFINITY!!!"). Now every finite key is binned and the infinite ones are
     * reported.
     */
    @Test
    void sortHistogramOfTheWidestFiniteRangeAndInfiniteKeys() throws Exception {
        Path so = tmp.resolve("wide.csv");
        Files.writeString(so, "k\n1e308\n-1.7976931348623157E308\n0\n1\n1.7976931348623157E308\nNaN\n\nInf\n"
                + "-Inf\n");
        Path png = tmp.resolve("wide.png");
        CliRun r = CliRun.of("sort", "--input", so.toString(), "--key", "k", "--plot", png.toString(), "--plot-bins",
                "4", "--backend", "cpu", "--master", "local[2]", "--quiet", "--no-ui");
        assertTrue(r.exitCode == 0 && Files.exists(png), r.toString());
        assertTrue(r.out.contains("5 keys in 4 bins, 2 infinite keys not plotted"), r.toString());
        succeeded.add("sort, widest range");
        succeeded.add("sort, infinite keys");
    }
}
