package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** End-to-end runs of {@code sparkgpu scan} on small generated CSV files, Spark on local[2]. */
class SparkGpuCliScanTest {
    @TempDir
    Path tmp;

    /** A 16 x 12 grid of cells (x from 100) with a hot block at x 104..106, y 8..10. */
    private Path cellsCsv() throws Exception {
        Random r = new Random(3);
        StringBuilder sb = new StringBuilder("x,y,cases,pop\n");
        for (int x = 0; x < 16; x++) {
            for (int y = 0; y < 12; y++) {
                int pop = 200 + r.nextInt(200);
                boolean hot = x >= 4 && x <= 6 && y >= 8 && y <= 10;
                double mean = pop * (hot ? 0.06 : 0.02);
                int c = 0;
                double p = r.nextDouble();
                double l = Math.exp(-mean);
                while (p > l) {
                    p *= r.nextDouble();
                    c++;
                }
                sb.append(100 + x).append(',').append(y).append(',').append(c).append(',').append(pop).append('\n');
            }
        }
        Path f = tmp.resolve("cells.csv");
        Files.writeString(f, sb.toString(), StandardCharsets.UTF_8);
        return f;
    }

    @Test
    void scanWritesReportCsvAndHeatMap() throws Exception {
        Path in = cellsCsv();
        Path json = tmp.resolve("out/scan.json");
        Path csv = tmp.resolve("out/clusters.csv");
        Path png = tmp.resolve("out/grid.png");
        CliRun r = CliRun.of("scan", "--input", in.toString(), "--coords", "x,y", "--baseline", "pop",
                "--replicas", "19", "--clusters", "3", "--backend", "cpu", "--partitions", "3", "--report", json.toString(),
                "--csv", csv.toString(), "--heatmap", png.toString(), "--master", "local[2]");
        assertEquals(0, r.exitCode, r::toString);
        assertTrue(r.out.contains("scan finished"), r::toString);
        assertTrue(r.out.contains("16x12 poisson from 192 rows"), r::toString);
        assertTrue(r.out.contains("x 10"), r::toString);

        JsonNode rep = new ObjectMapper().readTree(json.toFile());
        assertEquals("poisson", rep.get("statistic").asText());
        assertEquals(16, rep.get("grid").get("sizes").get(0).asInt());
        assertEquals(100.0, rep.get("grid").get("origin").get(0).asDouble());
        assertEquals(19, rep.get("replicaMaxLlr").size());
        JsonNode top = rep.get("clusters").get(0);
        assertEquals(1, top.get("rank").asInt());
        assertEquals(0.05, top.get("pValue").asDouble(), 1e-12, "the hot block beats all 19 replicas");
        int xlo = top.get("cellLo").get(0).asInt();
        int xhi = top.get("cellHi").get(0).asInt();
        assertTrue(xlo <= 6 && xhi >= 4, top.toString());
        assertEquals(100.0 + xlo, top.get("coordLo").get(0).asDouble());
        assertEquals("cpu", rep.get("backend").asText());

        List<String> lines = Files.readAllLines(csv);
        assertTrue(lines.get(0).startsWith("rank,llr,p_value,observed,expected,relative_risk,baseline,cells,x_cell_lo"),
                lines.get(0));
        assertEquals(rep.get("clusters").size() + 1, lines.size());
        assertTrue(lines.get(1).startsWith("1,"), lines.get(1));

        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(ScanReport.WIDTH, img.getWidth());
        assertTrue(img.getHeight() > 200);

        // the same again without --overwrite is refused
        CliRun again = CliRun.of("scan", "--input", in.toString(), "--coords", "x,y", "--baseline", "pop",
                "--report", json.toString(), "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_USAGE, again.exitCode, again::toString);
        assertTrue(again.err.contains("already exists"), again::toString);
    }

    /** Fractional case counts (issue 18 item 4): poisson takes them as they are; bernoulli refuses them saying why. */
    @Test
    void fractionalCaseCounts() throws Exception {
        StringBuilder sb = new StringBuilder("x,cases,pop\n");
        for (int x = 0; x < 20; x++) {
            double c = x >= 12 && x <= 14 ? 7.3 + 0.1 * x : 1.0 / 3 + 0.05 * (x % 4);
            sb.append(x).append(',').append(c).append(',').append(100 + x % 3).append('\n');
        }
        Path f = tmp.resolve("allocated.csv");
        Files.writeString(f, sb.toString(), StandardCharsets.UTF_8);
        Path json = tmp.resolve("frac.json");
        CliRun ok = CliRun.of("scan", "--input", f.toString(), "--coords", "x", "--baseline", "pop", "--replicas", "9",
                "--backend", "cpu", "--report", json.toString(), "--master", "local[2]");
        assertEquals(0, ok.exitCode, ok::toString);
        JsonNode top = new ObjectMapper().readTree(json.toFile()).get("clusters").get(0);
        assertEquals(12, top.get("cellLo").get(0).asInt(), top.toString());
        assertEquals(14, top.get("cellHi").get(0).asInt(), top.toString());
        assertEquals(7.3 + 1.2 + 7.3 + 1.3 + 7.3 + 1.4, top.get("observed").asDouble(), 1e-12, "the fractional count");

        CliRun bern = CliRun.of("scan", "--input", f.toString(), "--coords", "x", "--baseline", "pop", "--statistic",
                "bernoulli", "--replicas", "0", "--backend", "cpu", "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_ERROR, bern.exitCode, bern::toString);
        assertTrue(bern.err.contains("casesCol: column 'cases' must hold whole case counts"), bern::toString);
        assertTrue(bern.err.contains("each case is one of the cell's individuals"), bern::toString);
        assertTrue(!bern.err.contains("\tat "), "no stack trace: " + bern);
    }

    @Test
    void pointsInputOneDimensionalAndErrors() throws Exception {
        Random r = new Random(5);
        StringBuilder sb = new StringBuilder("t,sick\n");
        for (int i = 0; i < 2000; i++) {
            double t = r.nextDouble() * 100;
            boolean hot = t >= 60 && t < 70;
            sb.append(String.format(Locale.ROOT, "%.4f", t)).append(',').append(r.nextDouble() < (hot ? 0.4 : 0.1) ? 1 : 0)
                    .append('\n');
        }
        Path f = tmp.resolve("events.csv");
        Files.writeString(f, sb.toString(), StandardCharsets.UTF_8);
        Path png = tmp.resolve("strip.png");
        CliRun r1 = CliRun.of("scan", "--input", f.toString(), "--input-type", "points", "--coords", "t", "--cases", "sick",
                "--grid", "50", "--extent", "0,100", "--statistic", "bernoulli", "--replicas", "9", "--backend", "cpu",
                "--heatmap", png.toString(), "--master", "local[2]");
        assertEquals(0, r1.exitCode, r1::toString);
        assertTrue(r1.out.matches("(?s).*t in \\[6\\d\\.?\\d*, 7\\d.*"), r1::toString);
        assertTrue(Files.size(png) > 1000);

        CliRun bad = CliRun.of("scan", "--input", f.toString(), "--coords", "t", "--statistic", "gauss");
        assertEquals(SparkGpuCli.EXIT_USAGE, bad.exitCode, bad::toString);
        assertTrue(bad.err.contains("statistic"), bad::toString);
        CliRun noGrid = CliRun.of("scan", "--input", f.toString(), "--input-type", "points", "--coords", "t");
        assertEquals(SparkGpuCli.EXIT_USAGE, noGrid.exitCode, noGrid::toString);
        assertTrue(noGrid.err.contains("gridSize"), noGrid::toString);
        CliRun cellsOfReals = CliRun.of("scan", "--input", f.toString(), "--coords", "t", "--cases", "sick",
                "--baseline", "sick", "--replicas", "0", "--backend", "cpu", "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_ERROR, cellsOfReals.exitCode, cellsOfReals::toString);
        assertTrue(cellsOfReals.err.contains("whole cell coordinates"), cellsOfReals::toString);
    }
}
