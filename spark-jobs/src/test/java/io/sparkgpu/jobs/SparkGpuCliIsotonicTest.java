package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.isotonic.IsotonicEngine;
import io.sparkgpu.isotonic.IsotonicResult;
import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;
import javax.imageio.ImageIO;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** End-to-end {@code sparkgpu isotonic} on a generated CSV, Spark on local[2]. */
class SparkGpuCliIsotonicTest {
    @TempDir
    Path tmp;

    @Test
    void fitsWritesModelPredictionsAndPlot() throws Exception {
        Random rnd = new Random(3);
        int n = 400;
        double[] x = new double[n];
        double[] y = new double[n];
        StringBuilder sb = new StringBuilder("score,clicked\n");
        for (int i = 0; i < n; i++) {
            x[i] = rnd.nextInt(80) / 8.0;
            y[i] = Math.round(10 * (Math.tanh(x[i] - 5) + rnd.nextGaussian() * 0.3)) / 10.0;
            sb.append(String.format(Locale.ROOT, "%s,%s%n", x[i], y[i]));
        }
        Path csv = tmp.resolve("scores.csv");
        Files.writeString(csv, sb.toString(), StandardCharsets.UTF_8);
        Path model = tmp.resolve("model");
        Path plot = tmp.resolve("fit.png");
        Path out = tmp.resolve("pred");
        CliRun r = CliRun.of("isotonic", "--master", "local[2]", "--input", csv.toString(), "--feature", "score",
                "--label", "clicked", "--backend", "cpu", "--partitions", "3", "--model-out", model.toString(),
                "--output", out.toString(), "--plot", plot.toString());
        assertEquals(0, r.exitCode, r.toString());
        assertTrue(r.out.contains("isotonic finished"), r.out);
        // progress (issue 21): one line per phase, with elapsed time and time left; the last says done
        java.util.regex.Matcher ph = java.util.regex.Pattern.compile(
                "isotonic: phase (\\d+)/(\\d+) \\(([a-z+ ]+) done\\), [0-9.]+ s elapsed(, about [0-9.]+ s left|, done)?")
                .matcher(r.out);
        int phases = 0;
        boolean done = false;
        while (ph.find()) {
            phases++;
            done = ", done".equals(ph.group(4));
        }
        assertTrue(phases >= 3 && done, r.out);
        assertTrue(r.out.contains("about "), r.out);
        CliRun quiet = CliRun.of("isotonic", "--master", "local[2]", "--input", csv.toString(), "--feature", "score",
                "--label", "clicked", "--backend", "cpu", "--quiet");
        assertEquals(0, quiet.exitCode, quiet.toString());
        assertTrue(quiet.out.contains("isotonic finished") && !quiet.out.contains("isotonic: phase"), quiet.out);
        BufferedImage img = ImageIO.read(plot.toFile());
        assertNotNull(img);
        assertTrue(img.getWidth() > 500);
        assertTrue(Files.exists(model.resolve("summary.json")));

        IsotonicResult local = IsotonicEngine.fitCpu(x, y, null, true);
        SparkSession spark = SparkSession.builder().master("local[2]").getOrCreate();
        GpuIsotonicRegressionModel m = GpuIsotonicRegressionModel.read().session(spark).load(model.toString());
        assertArrayEquals(local.boundaries, m.boundaryArray());
        assertArrayEquals(local.predictions, m.predictionArray());
        assertEquals(n, spark.read().parquet(out.toString()).count());

        CliRun bad = CliRun.of("isotonic", "--input", csv.toString(), "--feature", "score", "--label", "clicked",
                "--loss", "l3");
        assertEquals(SparkGpuCli.EXIT_USAGE, bad.exitCode);
        assertTrue(bad.err.contains("--loss"), bad.err);
    }
}
