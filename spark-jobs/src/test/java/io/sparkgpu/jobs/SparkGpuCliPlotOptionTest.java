package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Every command's {@code --plot} must name a .png file: one rule (SparkCommand.checkPng), a usage error. */
class SparkGpuCliPlotOptionTest {
    @Test
    void everyCommandRefusesAPlotThatIsNotPng() {
        List<String[]> commands = List.of(
                new String[] {"kmeans", "--input", "missing.csv", "--features", "x,y"},
                new String[] {"isotonic", "--input", "missing.csv", "--feature", "x", "--label", "y"},
                new String[] {"tsne", "--input", "missing.csv", "--features", "x,y"},
                new String[] {"sort", "--input", "missing.csv", "--key", "x"},
                new String[] {"spline", "--input", "missing.csv", "--x", "x", "--y", "y"},
                new String[] {"fhn"});
        for (String[] c : commands) {
            String[] args = java.util.Arrays.copyOf(c, c.length + 2);
            args[c.length] = "--plot";
            args[c.length + 1] = "out.jpg";
            CliRun r = CliRun.of(args);
            assertEquals(SparkGpuCli.EXIT_USAGE, r.exitCode, () -> String.join(" ", c) + "\n" + r);
            assertTrue(r.err.contains("'--plot': the file name must end in .png, got out.jpg"),
                    () -> String.join(" ", c) + "\n" + r);
        }
    }
}
