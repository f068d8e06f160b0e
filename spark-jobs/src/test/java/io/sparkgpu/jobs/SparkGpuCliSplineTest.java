package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.spline.GpuMonotoneCdfModel;
import io.sparkgpu.spline.GpuMonotoneSplineModel;
import io.sparkgpu.spline.SplineConfig;
import io.sparkgpu.spline.SplineEngine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Random;
import javax.imageio.ImageIO;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** End-to-end {@code sparkgpu spline} and {@code sparkgpu cdf} on a generated CSV, Spark on local[2]. */
class SparkGpuCliSplineTest {
    @TempDir
    Path tmp;

    @Test
    void splineAndCdfWriteModelValuesAndPlot() throws Exception {
        Random rnd = new Random(3);
        int n = 300;
        double[] x = new double[n];
        double[] y = new double[n];
        StringBuilder sb = new StringBuilder("dose,response\n");
        for (int i = 0; i < n; i++) {
            x[i] = i * 0.05;
            y[i] = Math.tanh(x[i] - 7) + 0.001 * i;
            sb.append(String.format(Locale.ROOT, "%s,%s%n", x[i], y[i]));
        }
        Path csv = tmp.resolve("dose.csv");
        Files.writeString(csv, sb.toString(), StandardCharsets.UTF_8);
        Path model = tmp.resolve("spline");
        Path plot = tmp.resolve("spline.png");
        Path out = tmp.resolve("values");
        CliRun r = CliRun.of("spline", "--master", "local[2]", "--input", csv.toString(), "--x", "dose", "--y",
                "response", "--kind", "rational", "--backend", "cpu", "--derivative-col", "slope", "--model-out",
                model.toString(), "--output", out.toString(), "--plot", plot.toString());
        assertEquals(0, r.exitCode, r.toString());
        assertTrue(r.out.contains("spline finished"), r.out);
        assertNotNull(ImageIO.read(plot.toFile()));
        assertTrue(Files.exists(model.resolve("summary.json")));
        SparkSession spark = SparkSession.builder().master("local[2]").getOrCreate();
        GpuMonotoneSplineModel m = GpuMonotoneSplineModel.read().session(spark).load(model.toString());
        assertTrue(SplineEngine.buildCpu(SplineConfig.Kind.RATIONAL, x, y, null).sameBits(m.spline()));
        assertEquals(n, spark.read().option("header", "true").csv(out.toString()).count());

        Path cdf = tmp.resolve("cdf");
        Path cplot = tmp.resolve("cdf.png");
        CliRun c = CliRun.of("cdf", "--master", "local[2]", "--input", csv.toString(), "--column", "response",
                "--knots", "31", "--quantiles", "0.5,0.9", "--backend", "cpu", "--density-col", "pdf",
                "--model-out", cdf.toString(), "--plot", cplot.toString());
        assertEquals(0, c.exitCode, c.toString());
        assertTrue(c.out.contains("cdf finished") && c.out.contains("quantile      0.9"), c.out);
        assertNotNull(ImageIO.read(cplot.toFile()));
        spark = SparkSession.builder().master("local[2]").getOrCreate(); // the run stopped the one above
        GpuMonotoneCdfModel cm = GpuMonotoneCdfModel.read().session(spark).load(cdf.toString());
        assertEquals(31, cm.getNumKnots());
        assertEquals(cm.knotQuantiles()[15], cm.quantile(0.5), 0.0);

        CliRun bad = CliRun.of("cdf", "--input", csv.toString(), "--column", "response", "--quantiles", "1.5");
        assertEquals(SparkGpuCli.EXIT_USAGE, bad.exitCode);
        assertTrue(bad.err.contains("--quantiles") && bad.err.contains("p must be in [0, 1], got 1.5"), bad.err);
        CliRun badKind = CliRun.of("spline", "--input", csv.toString(), "--x", "dose", "--y", "response", "--kind",
                "cubic");
        assertEquals(SparkGpuCli.EXIT_USAGE, badKind.exitCode);
        assertTrue(badKind.err.contains("--kind") && badKind.err.contains("kind must be schumaker or rational"),
                badKind.err);
    }
}
