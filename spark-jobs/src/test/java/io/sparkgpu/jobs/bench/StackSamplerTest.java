package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class StackSamplerTest {
    private static volatile double sink;

    /** A method the sampled thread spends its time in, so its name must top the report. */
    private static void busyForMillis(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        double x = 1;
        while (System.nanoTime() < end) {
            x = Math.sqrt(x + 1);
        }
        sink = x;
    }

    @Test
    void reportNamesWhereTheThreadSpentItsTime() {
        String report;
        try (StackSampler s = new StackSampler(Thread.currentThread(), 2)) {
            busyForMillis(300);
            long end = System.nanoTime() + 100_000_000L; // a tenth of a second outside busyForMillis
            while (System.nanoTime() < end) {
                sink = Math.sqrt(sink + 1);
            }
            s.close();
            report = s.report("test", 10);
        }
        assertTrue(report.startsWith("stack samples of test: "), report);
        String frame = StackSamplerTest.class.getName() + ".busyForMillis";
        assertTrue(report.contains(frame), report);
        int inclusive = report.indexOf("inclusive:");
        int self = report.indexOf("self (top frame):");
        // the trunk (this test method, on every sample) is left out of the inclusive list; the busy method is in it
        assertTrue(inclusive >= 0 && self > inclusive, report);
        assertTrue(report.substring(inclusive, self).contains(frame), report);
        assertTrue(!report.substring(inclusive, self).contains(".reportNamesWhereTheThreadSpentItsTime"), report);
    }
}
