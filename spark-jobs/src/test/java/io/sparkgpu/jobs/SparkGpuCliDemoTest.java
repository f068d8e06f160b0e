package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The demo at a reduced size (20,000 generated points), Spark on local[2]. */
class SparkGpuCliDemoTest {
    @TempDir
    Path tmp;

    @Test
    void irisResourceHas150RowsAnd50PerSpecies() throws Exception {
        Map<String, Integer> counts = new HashMap<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                SparkGpuCliDemoTest.class.getResourceAsStream(DemoData.IRIS_RESOURCE), StandardCharsets.UTF_8))) {
            assertEquals("sepal_length,sepal_width,petal_length,petal_width,species", r.readLine());
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                String[] p = line.split(",");
                assertEquals(5, p.length, line);
                for (int j = 0; j < 4; j++) {
                    double v = Double.parseDouble(p[j]);
                    assertTrue(v > 0 && v < 10, line);
                }
                counts.merge(p[4], 1, Integer::sum);
            }
        }
        assertEquals(Map.of("setosa", 50, "versicolor", 50, "virginica", 50), counts);
        assertNotNull(SparkGpuCliDemoTest.class.getResource("/io/sparkgpu/jobs/data/iris.ATTRIBUTION.txt"));
    }

    @Test
    void demoRunsIrisAndBlobsAndWritesPlots() throws Exception {
        Path outDir = tmp.resolve("demo");
        CliRun r = CliRun.of("demo", "--only", "kmeans", "--points", "20000", "--out-dir", outDir.toString(),
                "--master", "local[2]");
        assertEquals(0, r.exitCode, r::toString);

        List<Double> purities = values(r.out, "purity +([0-9.]+)");
        assertEquals(2, purities.size(), r::toString);
        // k-means with k=3 recovers setosa exactly and mixes some versicolor/virginica (about 0.89)
        assertTrue(purities.get(0) >= 0.85 && purities.get(0) < 1.0, "Iris purity " + purities.get(0));
        assertTrue(purities.get(1) >= 0.99, "blob purity " + purities.get(1));
        List<Double> centreError = values(r.out, "centre error +([0-9.]+)");
        assertEquals(1, centreError.size(), r::toString);
        assertTrue(centreError.get(0) < 0.1, "found blob centres are near the true ones: " + centreError);

        assertTrue(r.out.contains("points        150 (d=4)"), r::toString);
        assertTrue(r.out.contains("points        20,000 (d=2)"), r::toString);
        Matcher sizes = Pattern.compile("cluster sizes \\[([0-9, ]+)\\]").matcher(r.out);
        assertTrue(sizes.find(), r::toString);
        assertEquals(150, sum(sizes.group(1)));
        assertTrue(sizes.find(), r::toString);
        assertEquals(20000, sum(sizes.group(1)));
        Matcher backend = Pattern.compile("backend +(cpu|gpu|mixed)\\n").matcher(r.out);
        assertTrue(backend.find() && backend.find(), "a backend line for each data set\n" + r);
        assertEquals(2, values(r.out, "train time +([0-9.]+) s").size(), r::toString);

        for (String name : new String[] {"iris-kmeans.png", "iris-species.png", "blobs-kmeans.png", "blobs-cost.png"}) {
            Path png = outDir.resolve(name);
            assertTrue(Files.isRegularFile(png), png + " exists\n" + r);
            BufferedImage img = ImageIO.read(png.toFile());
            assertNotNull(img, name + " decodes");
            assertEquals(Plots.WIDTH, img.getWidth(), name);
            assertEquals(Plots.HEIGHT, img.getHeight(), name);
            assertTrue(SparkGpuCliKMeansTest.distinctColours(img) > 8, name + " is not blank");
        }
    }

    /** Every other capability's demo, in one run (--only all but k-means), each with its plot (issue 21 item 7). */
    @Test
    void demoRunsEveryOtherCapabilityWithPlots() throws Exception {
        Path outDir = tmp.resolve("all");
        List<String> others = DemoCommand.DEMOS.subList(1, DemoCommand.DEMOS.size());
        CliRun r = CliRun.of("demo", "--only", String.join(",", others), "--out-dir", outDir.toString(),
                "--master", "local[2]", "--backend", "cpu");
        assertEquals(0, r.exitCode, r::toString);
        for (String d : others) {
            assertTrue(r.out.contains("== " + d + " =="), d + "\n" + r);
            Path png = outDir.resolve(DemoCommand.PLOT_OF.get(d));
            BufferedImage img = ImageIO.read(png.toFile());
            assertNotNull(img, d + ": " + png + " decodes\n" + r);
            assertTrue(SparkGpuCliKMeansTest.distinctColours(img) > 4, d + ": " + png + " is not blank");
        }
        for (String done : new String[] {"isotonic finished", "scan finished", "t-SNE finished", "sort finished",
            "spline finished", "cdf finished"}) {
            assertTrue(r.out.contains(done), done + "\n" + r);
        }
        assertTrue(r.out.contains("demo finished"), r::toString);
        assertTrue(!r.out.contains("== kmeans =="), r::toString);

        // the outputs are checked before any work: a second run without --overwrite refuses at once
        CliRun again = CliRun.of("demo", "--only", "fhn", "--out-dir", outDir.toString(), "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_USAGE, again.exitCode, again::toString);
        CliRun bad = CliRun.of("demo", "--only", "kmeans,nope", "--out-dir", tmp.resolve("x").toString());
        assertEquals(SparkGpuCli.EXIT_USAGE, bad.exitCode, bad::toString);
        assertTrue(bad.err.contains("--only") && bad.err.contains("nope"), bad::toString);
    }

    @Test
    void purityOfContingencyTables() {
        assertEquals(1.0, DemoCommand.purity(new long[][] {{5, 0}, {0, 7}}));
        assertEquals(0.75, DemoCommand.purity(new long[][] {{3, 1}, {2, 6}}), 1e-12);
        assertTrue(Double.isNaN(DemoCommand.purity(new long[][] {{0, 0}})));
    }

    private static List<Double> values(String text, String regex) {
        List<Double> out = new ArrayList<>();
        Matcher m = Pattern.compile(regex).matcher(text);
        while (m.find()) {
            out.add(Double.parseDouble(m.group(1)));
        }
        return out;
    }

    private static long sum(String list) {
        long s = 0;
        for (String p : list.split(",")) {
            s += Long.parseLong(p.trim());
        }
        return s;
    }
}
