package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** End-to-end runs of {@code sparkgpu kmeans} on small generated CSV files, Spark on local[2]. */
class SparkGpuCliKMeansTest {
    private static final double[][] TRUE_CENTRES = {{0, 0, 0}, {10, 10, 0}, {0, 10, 10}};

    @TempDir
    Path tmp;

    /** 3 well-separated blobs in 3-D, 100 rows each: id, a, b, c, label. */
    private static Path writeBlobsCsv(Path file) throws IOException {
        Random rnd = new Random(7);
        StringBuilder sb = new StringBuilder("id,a,b,c,label\n");
        for (int i = 0; i < 300; i++) {
            int l = i % 3;
            sb.append(i);
            for (int j = 0; j < 3; j++) {
                sb.append(',').append(String.format(Locale.ROOT, "%.5f", TRUE_CENTRES[l][j] + rnd.nextGaussian()));
            }
            sb.append(",L").append(l).append('\n');
        }
        Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
        return file;
    }

    private static SparkSession verifier() {
        return SparkSession.builder().master("local[2]").appName("verify").config("spark.ui.enabled", "false")
                .getOrCreate();
    }

    @Test
    void kmeansWritesPredictionsModelAndPlot() throws Exception {
        Path csv = writeBlobsCsv(tmp.resolve("points.csv"));
        Path pred = tmp.resolve("pred");
        Path model = tmp.resolve("model");
        Path png = tmp.resolve("plots/clusters.png");
        CliRun r = CliRun.of("kmeans", "--input", csv.toString(), "--features", "a,b,c", "-k", "3", "--seed", "1",
                "--output", pred.toString(), "--model-out", model.toString(), "--plot", png.toString(),
                "--master", "local[2]");
        assertEquals(0, r.exitCode, r::toString);

        // console: one progress line per iteration and the summary
        Matcher it = Pattern.compile(
                "k-means: iteration (\\d+)/\\d+ \\(cost ([0-9.e+-]+), max centre shift ([0-9.e+-]+)\\), [0-9.]+ s elapsed").matcher(r.out);
        int lines = 0;
        while (it.find()) {
            lines++;
            assertEquals(lines, Integer.parseInt(it.group(1)), r::toString);
        }
        assertTrue(lines >= 1, r::toString);
        assertTrue(r.out.contains("iterations    " + lines + " (converged)"), r::toString);
        assertTrue(r.out.contains("points        300 (d=3)"), r::toString);
        assertTrue(r.out.contains("cluster sizes [100, 100, 100]"), r::toString);
        assertTrue(Pattern.compile("backend +(cpu|gpu|mixed)").matcher(r.out).find(), r::toString);
        assertTrue(Pattern.compile("wall time +[0-9.]+ s").matcher(r.out).find(), r::toString);

        // plot
        assertTrue(Files.isRegularFile(png), png + " exists");
        BufferedImage img = ImageIO.read(png.toFile());
        assertNotNull(img, "the PNG decodes");
        assertEquals(Plots.WIDTH, img.getWidth());
        assertEquals(Plots.HEIGHT, img.getHeight());
        assertTrue(distinctColours(img) > 8, "the plot is not blank");

        // model directory
        String summary = Files.readString(model.resolve(ModelOutput.SUMMARY));
        assertTrue(summary.contains("\"k\": 3"), summary);
        assertTrue(summary.contains("\"numPoints\": 300"), summary);
        assertTrue(summary.contains("\"features\": [\"a\", \"b\", \"c\"]"), summary);
        assertTrue(summary.contains("\"clusterSizes\": [100, 100, 100]"), summary);

        SparkSession spark = verifier();
        try {
            Dataset<Row> out = spark.read().parquet(pred.toString());
            assertArrayEquals(new String[] {"id", "a", "b", "c", "label", "prediction"}, out.columns(),
                    "predictions are the input columns plus prediction");
            assertEquals(300, out.count());
            // each true blob maps to exactly one cluster and the three clusters differ
            Map<String, Set<Integer>> byLabel = new HashMap<>();
            for (Row row : out.select("label", "prediction").collectAsList()) {
                byLabel.computeIfAbsent(row.getString(0), x -> new HashSet<>()).add(row.getInt(1));
            }
            assertEquals(3, byLabel.size());
            Set<Integer> used = new HashSet<>();
            for (Set<Integer> s : byLabel.values()) {
                assertEquals(1, s.size(), "a blob split over clusters: " + byLabel);
                used.addAll(s);
            }
            assertEquals(Set.of(0, 1, 2), used);

            io.sparkgpu.kmeans.GpuKMeansModel loaded = io.sparkgpu.kmeans.GpuKMeansModel.load(model.toString());
            assertEquals(3, loaded.summary().k(), "the saved model carries its training summary");
            assertArrayEquals(new long[] {100, 100, 100}, java.util.Arrays.stream(loaded.summary().clusterSizes()).sorted().toArray());
            double[][] centres = loaded.clusterCentersArray();
            assertEquals(3, centres.length);
            for (int c = 0; c < 3; c++) {
                List<Double> centre = new java.util.ArrayList<>();
                for (double v : centres[c]) {
                    centre.add(v);
                }
                assertEquals(3, centre.size());
                double best = Double.POSITIVE_INFINITY;
                for (double[] t : TRUE_CENTRES) {
                    double d2 = 0;
                    for (int j = 0; j < 3; j++) {
                        d2 += (centre.get(j) - t[j]) * (centre.get(j) - t[j]);
                    }
                    best = Math.min(best, Math.sqrt(d2));
                }
                assertTrue(best < 0.5, "centre " + centre + " is near a true centre (" + best + ")");
            }
        } finally {
            spark.stop();
        }
    }

    @Test
    void csvOutputOverwriteAndExistingTargets() throws Exception {
        Path csv = writeBlobsCsv(tmp.resolve("points.csv"));
        Path pred = Files.createDirectories(tmp.resolve("pred-csv"));
        Files.writeString(pred.resolve("old.txt"), "stale");
        Files.writeString(pred.resolve("_SUCCESS"), ""); // a previous output: --overwrite may replace it

        CliRun refused = CliRun.of("kmeans", "--input", csv.toString(), "--features", "a,b", "-k", "3",
                "--output", pred.toString(), "--output-format", "csv", "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_USAGE, refused.exitCode, refused::toString);
        assertTrue(refused.err.contains("--output") && refused.err.contains("--overwrite"), refused::toString);

        CliRun r = CliRun.of("kmeans", "--input", csv.toString(), "--features", "a,b", "-k", "3",
                "--output", pred.toString(), "--output-format", "csv", "--overwrite", "--init", "random",
                "--distance", "cosine", "--backend", "cpu", "--master", "local[2]");
        assertEquals(0, r.exitCode, r::toString);
        assertTrue(r.out.contains("backend       cpu"), r::toString);
        assertFalse(Files.exists(pred.resolve("old.txt")), "--overwrite replaced the directory");
        List<String> rows = new ArrayList<>();
        try (Stream<Path> files = Files.list(pred)) {
            for (Path p : (Iterable<Path>) files.filter(p -> p.getFileName().toString().endsWith(".csv"))::iterator) {
                List<String> lines = Files.readAllLines(p);
                assertEquals("id,a,b,c,label,prediction", lines.get(0));
                rows.addAll(lines.subList(1, lines.size()));
            }
        }
        assertEquals(300, rows.size());
        for (String row : rows) {
            int p = Integer.parseInt(row.substring(row.lastIndexOf(',') + 1));
            assertTrue(p >= 0 && p < 3, row);
        }
    }

    @Test
    void unknownFeatureColumnIsAUsageError() throws Exception {
        Path csv = writeBlobsCsv(tmp.resolve("points.csv"));
        CliRun r = CliRun.of("kmeans", "--input", csv.toString(), "--features", "a,zz", "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_USAGE, r.exitCode, r::toString);
        assertTrue(r.err.contains("--features") && r.err.contains("'zz'") && r.err.contains("id, a, b, c, label"),
                r::toString);
        CliRun s = CliRun.of("kmeans", "--input", csv.toString(), "--features", "a,label", "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_USAGE, s.exitCode, s::toString);
        assertTrue(s.err.contains("'label'") && s.err.contains("string"), s::toString);
        CliRun missing = CliRun.of("kmeans", "--input", tmp.resolve("nope.csv").toString(), "--features", "a",
                "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_USAGE, missing.exitCode, missing::toString);
        assertTrue(missing.err.contains("--input") && missing.err.contains("does not exist"), missing::toString);
    }

    @Test
    void libraryErrorsExitWith1AndNoStackTraceUnlessVerbose() throws Exception {
        Path csv = tmp.resolve("nan.csv");
        Files.writeString(csv, "a,b\n1,2\n3,NaN\n5,6\n7,8\n");
        // NaN is rejected inside a Spark task: the message must survive the job failure
        CliRun r = CliRun.of("kmeans", "--input", csv.toString(), "--features", "a,b", "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_ERROR, r.exitCode, r::toString);
        assertTrue(r.err.contains("error: featuresCol 'features' contains NaN"), r::toString);
        assertTrue(r.err.contains("--features a,b"), r::toString);
        assertFalse(r.err.contains("\tat "), () -> "no stack trace without --verbose\n" + r);

        // rejected on the driver: more clusters than distinct points
        CliRun few = CliRun.of("kmeans", "--input", csv.toString(), "--features", "a", "-k", "5", "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_ERROR, few.exitCode, few::toString);
        assertTrue(few.err.contains("exceeds the number of distinct points (4)"), few::toString);
        assertFalse(few.err.contains("\tat "), few::toString);

        CliRun verbose = CliRun.of("kmeans", "--input", csv.toString(), "--features", "a", "-k", "5", "--verbose",
                "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_ERROR, verbose.exitCode, verbose::toString);
        assertTrue(verbose.err.contains("\tat io.sparkgpu.kmeans.KMeansTrainer"), verbose::toString);
    }

    /** {@code kmeans -k 2} on a CSV file {@code name} holding {@code text}, plus {@code more} options. */
    private CliRun kmeansOnCsv(String name, String text, String features, String... more) throws IOException {
        Path file = tmp.resolve(name);
        Files.writeString(file, text);
        List<String> args = new ArrayList<>(List.of("kmeans", "--input", file.toString(), "--features", features,
                "-k", "2", "--master", "local[2]"));
        args.addAll(List.of(more));
        return CliRun.of(args.toArray(new String[0]));
    }

    @Test
    void malformedCsvRowsFailNamingFileLineAndColumn() throws Exception {
        // Spark's permissive CSV mode used to drop the extra field and cluster the row silently
        CliRun r = kmeansOnCsv("extra.csv", "a,b\n1,2\n\n3,4,5\n6,7\n8,9\n", "a,b");
        assertEquals(SparkGpuCli.EXIT_ERROR, r.exitCode, r::toString);
        assertTrue(r.err.contains("error: --input: malformed CSV row at file:" + tmp.resolve("extra.csv")
                + " line 4: 3 fields where the header has 2 (a, b)"), r::toString);
        CliRun m = kmeansOnCsv("missing.csv", "a,b\n1,2\n3,4\n6\n8,9\n", "a");
        assertEquals(SparkGpuCli.EXIT_ERROR, m.exitCode, m::toString);
        assertTrue(m.err.contains("line 4: 1 fields where the header has 2 (a, b); column 'b' is missing"), m::toString);
    }

    @Test
    void skipBadDropsMalformedRowsAndReportsThem() throws Exception {
        Path out = tmp.resolve("pred");
        CliRun r = kmeansOnCsv("dirty.csv", "a,b\n1,2\n\n3,4,5\n6,7\n8,9\n10\n0,1\n", "a,b", "--skip-bad",
                "--output", out.toString());
        assertEquals(0, r.exitCode, r::toString);
        assertTrue(r.out.contains("--skip-bad: skipped 2 malformed CSV rows of " + tmp.resolve("dirty.csv")
                + " (not the header's 2 fields), e.g. in file:"), r::toString);
        assertTrue(r.out.contains("dirty.csv: 3,4,5\n"), r::toString);
        SparkSession spark = verifier();
        assertEquals(4, spark.read().parquet(out.toString()).count(), "the 4 good rows, each predicted");
        CliRun clean = kmeansOnCsv("clean.csv", "a,b\n1,2\n3,4\n8,9\n", "a,b", "--skip-bad");
        assertEquals(0, clean.exitCode, clean::toString);
        assertTrue(clean.out.contains("--skip-bad: no malformed CSV rows in "), clean::toString);
    }

    @Test
    void emptyOrHeaderOnlyCsvIsAUsageErrorSayingSo() throws Exception {
        CliRun h = kmeansOnCsv("header.csv", "a,b\n", "a,b");
        assertEquals(SparkGpuCli.EXIT_USAGE, h.exitCode, h::toString);
        assertTrue(h.err.contains("--input: " + tmp.resolve("header.csv") + " has a header (a, b) but no data rows"),
                h::toString);
        CliRun e = kmeansOnCsv("empty.csv", "", "a");
        assertEquals(SparkGpuCli.EXIT_USAGE, e.exitCode, e::toString);
        assertTrue(e.err.contains("--input: " + tmp.resolve("empty.csv") + " is empty (no header row, no data)"),
                e::toString);
    }

    static int distinctColours(BufferedImage img) {
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < img.getHeight(); y += 3) {
            for (int x = 0; x < img.getWidth(); x += 3) {
                colours.add(img.getRGB(x, y));
            }
        }
        return colours.size();
    }
}
