package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import javax.imageio.ImageIO;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** End-to-end {@code sparkgpu sort} on a generated CSV, Spark on local[2]: output order, plot, refusals. */
class SparkGpuCliSortTest {
    @TempDir
    Path tmp;

    @Test
    void sortsDescendingWithNullsLastWritesParquetAndPlots() throws Exception {
        Random rnd = new Random(5);
        int n = 600;
        StringBuilder sb = new StringBuilder("id,hour\n");
        List<long[]> rows = new ArrayList<>(); // (hour or -1 for null, id)
        for (int i = 0; i < n; i++) {
            boolean isNull = rnd.nextInt(15) == 0;
            int hour = rnd.nextInt(168);
            sb.append(String.format(Locale.ROOT, "%d,%s%n", i, isNull ? "" : Integer.toString(hour)));
            rows.add(new long[] {isNull ? -1 : hour, i});
        }
        Path csv = tmp.resolve("events.csv");
        Files.writeString(csv, sb.toString(), StandardCharsets.UTF_8);
        Path out = tmp.resolve("sorted");
        Path plot = tmp.resolve("hours.png");
        CliRun r = CliRun.of("sort", "--master", "local[2]", "--input", csv.toString(), "--key", "hour",
                "--descending", "--backend", "cpu", "--partitions", "3", "--output", out.toString(), "--plot",
                plot.toString(), "--plot-bins", "24");
        assertEquals(0, r.exitCode, r.toString());
        assertTrue(r.out.contains("sort finished") && r.out.contains("600 rows"), r.out);

        // expected: hour descending, nulls last (the default when descending), ties by input order (id)
        rows.sort((a, b) -> {
            if ((a[0] < 0) != (b[0] < 0)) {
                return a[0] < 0 ? 1 : -1;
            }
            int c = Long.compare(b[0], a[0]);
            return c != 0 ? c : Long.compare(a[1], b[1]);
        });
        SparkSession spark = SparkSession.builder().master("local[2]").getOrCreate();
        List<Row> got = spark.read().parquet(out.toString()).collectAsList();
        assertEquals(n, got.size());
        for (int j = 0; j < n; j++) {
            assertEquals(rows.get(j)[1], ((Number) got.get(j).getAs("id")).longValue(), "row " + j);
        }
        BufferedImage img = ImageIO.read(plot.toFile());
        assertNotNull(img);
        assertTrue(img.getWidth() > 500);

        // the output exists: refused without --overwrite, before any work
        CliRun again = CliRun.of("sort", "--master", "local[2]", "--input", csv.toString(), "--key", "hour",
                "--output", out.toString());
        assertEquals(SparkGpuCli.EXIT_USAGE, again.exitCode, again.toString());
        assertTrue(again.err.contains("already exists"), again.err);
        CliRun badKey = CliRun.of("sort", "--master", "local[2]", "--input", csv.toString(), "--key", "nope",
                "--output", tmp.resolve("x").toString());
        assertEquals(SparkGpuCli.EXIT_USAGE, badKey.exitCode, badKey.toString());
        assertTrue(badKey.err.contains("--key: column 'nope' does not exist"), badKey.err);
    }

    @Test
    void refusalsAreUsageErrorsBeforeSparkStarts() {
        String[] base = {"sort", "--input", "x.csv", "--key", "k"};
        String[][] cases = {{"--partitions", "-1"}, {"--plot-bins", "0"}, {"--backend", "fpga"},
            {"--plot", "h.jpg"}};
        for (String[] c : cases) {
            List<String> a = new ArrayList<>(List.of(base));
            a.addAll(List.of(c));
            a.addAll(List.of("--output", "o"));
            CliRun r = CliRun.of(a.toArray(new String[0]));
            assertEquals(SparkGpuCli.EXIT_USAGE, r.exitCode, r::toString);
            assertTrue(r.err.contains("Invalid value for option '" + c[0] + "'"), r::toString);
        }
        CliRun both = CliRun.of("sort", "--input", "x.csv", "--key", "k", "--nulls-first", "--nulls-last", "--output", "o");
        assertEquals(SparkGpuCli.EXIT_USAGE, both.exitCode, both::toString);
        CliRun nothing = CliRun.of("sort", "--input", "x.csv", "--key", "k");
        assertEquals(SparkGpuCli.EXIT_USAGE, nothing.exitCode, nothing::toString);
        assertTrue(nothing.err.contains("nothing to do"), nothing::toString);
    }
}
