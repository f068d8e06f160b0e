package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.pde.FhnConfig;
import io.sparkgpu.pde.FhnParams;
import io.sparkgpu.pde.FhnResult;
import io.sparkgpu.pde.FhnStep;
import io.sparkgpu.pde.GpuFitzHughNagumo;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.imageio.ImageIO;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sparkgpu fhn}: a single run prints the twin's observables and draws its field; a sweep from CSV writes one
 * result row per parameter set, equal to the twin's run of that row; misplaced options are usage errors.
 */
class SparkGpuCliFhnTest {
    @TempDir
    Path tmp;

    private static final String[] GRID = {"--cells", "81", "--length", "40", "--dt", "0.05", "--t-end", "12",
        "--backend", "cpu"};

    private static String[] args(String... more) {
        String[] a = new String[1 + GRID.length + more.length];
        a[0] = "fhn";
        System.arraycopy(GRID, 0, a, 1, GRID.length);
        System.arraycopy(more, 0, a, 1 + GRID.length, more.length);
        return a;
    }

    private static FhnConfig grid() {
        FhnConfig c = new FhnConfig();
        c.cells = 81;
        c.length = 40;
        c.dt = 0.05;
        c.tEnd = 12;
        return c;
    }

    @Test
    void singleRunPrintsTheTwinsResultAndPlotsIt() throws Exception {
        Path plot = tmp.resolve("run.png");
        CliRun r = CliRun.of(args("--initial", "gaussian", "--stimulus", "none", "--eps", "0.02",
                "--plot", plot.toString()));
        assertEquals(0, r.exitCode, r::toString);
        FhnConfig c = grid();
        c.initial = FhnConfig.GAUSSIAN;
        c.stimulus = FhnConfig.NONE;
        FhnResult want = FhnStep.run(c, new FhnParams[] {new FhnParams(0.1, 0.02, 0.5, 0.5, 1)}, 1).value[0];
        assertTrue(r.out.contains("maxV            " + want.maxV), r::toString);
        assertTrue(r.out.contains("pulseCount      " + want.pulseCount), r::toString);
        assertTrue(r.out.contains("backend         cpu"), r::toString);
        BufferedImage img = ImageIO.read(plot.toFile());
        assertNotNull(img);
        assertTrue(img.getWidth() >= 900 && img.getHeight() > 600, img.getWidth() + "x" + img.getHeight());
        // the heat map is not blank: the impulse's top row differs from the rest state at the map's corner
        assertTrue(img.getRGB(90 + 440, 51) != img.getRGB(92, 51 + 355), "heat map drawn");

        CliRun again = CliRun.of(args("--plot", plot.toString()));
        assertEquals(SparkGpuCli.EXIT_USAGE, again.exitCode, again::toString);
        assertTrue(again.err.contains("--plot") && again.err.contains("--overwrite"), again::toString);
    }

    @Test
    void sweepWritesOneRowPerParameterSet() throws Exception {
        Path csv = tmp.resolve("params.csv");
        Files.writeString(csv, "id,a,eps,I\n0,0.1,0.01,0.0\n1,0.1,0.01,0.8\n2,0.05,0.02,0.8\n");
        Path out = tmp.resolve("res");
        CliRun r = CliRun.of(args("--master", "local[2]", "--input", csv.toString(), "--output", out.toString(),
                "--partitions", "2", "--gamma", "0.4"));
        assertEquals(0, r.exitCode, r::toString);
        assertTrue(r.out.contains("rows            3"), r::toString);
        SparkSession spark = SparkSession.builder().master("local[2]").getOrCreate();
        List<Row> rows = spark.read().parquet(out.toString()).orderBy("id").collectAsList();
        assertEquals(3, rows.size());
        double[][] ps = {{0.1, 0.01, 0.0}, {0.1, 0.01, 0.8}, {0.05, 0.02, 0.8}};
        FhnParams[] given = new FhnParams[3];
        for (int j = 0; j < 3; j++) {
            given[j] = new FhnParams(ps[j][0], ps[j][1], 0.4, ps[j][2], 1);
        }
        FhnResult[] want = FhnStep.run(grid(), given, 1).value;
        for (int j = 0; j < 3; j++) {
            Row row = rows.get(j);
            assertEquals(want[j].maxV, row.getDouble(row.fieldIndex("maxV")), "row " + j);
            assertEquals(want[j].propagated, row.getBoolean(row.fieldIndex("propagated")), "row " + j);
            assertEquals(want[j].pulseCount, row.getInt(row.fieldIndex("pulseCount")), "row " + j);
        }
        for (String col : GpuFitzHughNagumo.OUTPUTS) {
            assertTrue(List.of(rows.get(0).schema().fieldNames()).contains(col), col);
        }
    }

    @Test
    void misplacedOrBadOptionsAreUsageErrors() {
        String[][] bad = {{"--output", "x"}, {"--input", "p.csv"}, {"--input", "p.csv", "--output", "o",
            "--plot", "p.png"}, {"--plot", "p.jpg"}, {"--boundary", "wrap"}, {"--cells", "2"}, {"--eps", "NaN"},
            {"--diffusion", "0"}};
        String[] named = {"--output", "--output", "--plot", "--plot", "--boundary", "--cells", "--eps", "--diffusion"};
        for (int q = 0; q < bad.length; q++) {
            String[] a = new String[bad[q].length + 1];
            a[0] = "fhn";
            System.arraycopy(bad[q], 0, a, 1, bad[q].length);
            CliRun r = CliRun.of(a);
            assertEquals(SparkGpuCli.EXIT_USAGE, r.exitCode, r::toString);
            assertTrue(r.err.contains(named[q]), r::toString);
            assertFalse(r.err.contains("\tat "), "no stack trace: " + r.err);
        }
        // the stability rule needs D and dt together: the run refuses it with the limit in the message
        CliRun r = CliRun.of(args("--diffusion", "50"));
        assertEquals(SparkGpuCli.EXIT_ERROR, r.exitCode, r::toString);
        assertTrue(r.err.contains("dx^2 / (2 D)"), r::toString);
    }
}
