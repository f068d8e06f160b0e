package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class IsotonicBenchmarkTest {

    @Test
    void smallRunHasEveryRowAndOursAgreeBitwise() throws Exception {
        IsotonicBenchmark.Options o = IsotonicBenchmark.Options.parse(new String[] {"--n", "3000", "--small-n", "500",
            "--shapes", "antitone", "--impls", "cpu1,cpuN,spark,mllib,gpu", "--threads", "2", "--reps", "1"});
        IsotonicBenchmark b = new IsotonicBenchmark(o);
        String md = b.run();
        assertFalse(b.mismatch, md);
        assertTrue(md.contains("| ours CPU, 1 thread"), md);
        assertTrue(md.contains("| ours CPU, 2 threads"), md);
        assertTrue(md.contains("| ours GpuIsotonicRegression.fit, local[2]"), md);
        assertTrue(md.contains("| MLlib IsotonicRegression, local[2]"), md);
        if (!md.contains("GPU rows not run")) {
            assertTrue(md.contains("| ours GPU sort+pool+PAVA-merge (device)"), md);
        }
        // MLlib's predictions differ from ours by rounding only
        Matcher m = Pattern.compile("\\| MLlib IsotonicRegression[^|]*\\|([^|]*\\|){8} ([0-9.e+-]+) \\|").matcher(md);
        int seen = 0;
        while (m.find()) {
            assertTrue(Double.parseDouble(m.group(2)) < 1e-12, m.group());
            seen++;
        }
        assertEquals(2, seen, md);
    }

    @Test
    void optionsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> IsotonicBenchmark.Options.parse(new String[] {"--impls", "foo"}));
        assertThrows(IllegalArgumentException.class, () -> IsotonicBenchmark.Options.parse(new String[] {"--n", "0"}));
        assertEquals(1_000_000L, IsotonicBenchmark.Options.parse(new String[] {"--n", "1e6"}).ns[0]);
    }

    @Test
    void parallelCpuPathEqualsSerialOnTiesAndOddThreadCounts() throws Exception {
        double[][] d = IsotonicBenchmark.generate(20_000, "noisy", 5);
        for (int i = 0; i < d[0].length; i++) {
            d[0][i] = Math.floor(d[0][i] * 300) / 300; // many ties: equal features must stay in one range
        }
        io.sparkgpu.isotonic.IsotonicResult serial = io.sparkgpu.isotonic.IsotonicEngine.fitCpu(d[0], d[1], null, true);
        for (int t : new int[] {1, 3, 7}) {
            io.sparkgpu.isotonic.IsotonicResult par = IsotonicBenchmark.cpuParallel(d[0], d[1], d[0].length, t,
                    io.sparkgpu.isotonic.IsoScales.forData(d[1], null, d[0].length));
            assertTrue(java.util.Arrays.equals(serial.boundaries, par.boundaries), "threads " + t);
            assertTrue(java.util.Arrays.equals(serial.predictions, par.predictions), "threads " + t);
        }
    }
}
