package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The sort benchmark's options, data and a tiny CPU-only run (no timing assertions). */
class SortBenchmarkTest {

    @Test
    void optionsParse() {
        SortBenchmark.Options o = SortBenchmark.Options.parse(new String[] {"--n", "1e3,2_000", "--m", "2^8,300,2^24",
                "--dists", "hot,uniform", "--ops", "kv", "--impls", "cpu", "--index", "long", "--keys-kernel", "both"});
        assertEquals(List.of(1000, 2000), o.ns);
        assertEquals(List.of(256, 300, 1 << 24), o.ms);
        assertEquals(List.of("hot", "uniform"), List.copyOf(o.dists));
        assertEquals(List.of("kv"), List.copyOf(o.ops));
        assertTrue(o.longIndex);
        assertEquals("both", o.keysKernel);
        assertEquals(List.of("onesweep"), o.stableKernels);
        assertEquals(List.of("classic", "onesweep"), SortBenchmark.Options.parse(
                new String[] {"--stable-kernel", "classic,onesweep"}).stableKernels);
        assertThrows(IllegalArgumentException.class,
                () -> SortBenchmark.Options.parse(new String[] {"--stable-kernel", "cub"}));
        assertThrows(IllegalArgumentException.class, () -> SortBenchmark.Options.parse(new String[] {"--m", "2^25"}));
        assertThrows(IllegalArgumentException.class, () -> SortBenchmark.Options.parse(new String[] {"--m", "0"}));
        assertThrows(IllegalArgumentException.class, () -> SortBenchmark.Options.parse(new String[] {"--dists", "normal"}));
        assertThrows(IllegalArgumentException.class, () -> SortBenchmark.Options.parse(new String[] {"--index", "short"}));
    }

    @Test
    void dataIsDeterministicAndInRange() {
        for (String d : SortBenchmark.ALL_DISTS) {
            int[] a = SortBenchmark.keys(d, 3_000_000, 1 << 12, 1.2, 7);
            assertArrayEquals(a, SortBenchmark.keys(d, 3_000_000, 1 << 12, 1.2, 7), d);
            for (int k : a) {
                assertTrue(k >= 0 && k < (1 << 12), d + ": key " + k);
            }
        }
        int[] hot = SortBenchmark.keys("hot", 1_000_000, 1 << 16, 1.2, 3);
        int[] h = io.sparkgpu.sort.SortEngine.histogram(hot, 1 << 16);
        int max = 0;
        for (int c : h) {
            max = Math.max(max, c);
        }
        assertTrue(max > 480_000 && max < 520_000, "one key holds about half: " + max);
    }

    @Test
    void smallCpuRunReportsEveryRow() {
        SortBenchmark.Options o = SortBenchmark.Options.parse(new String[] {"--n", "10000", "--m", "2^4,2^20",
                "--impls", "cpu,gpu", "--threads", "2", "--reps", "1", "--cpu-reps", "1"});
        SortBenchmark.Report rep = new SortBenchmark(o).run();
        String md = rep.markdown();
        assertFalse(rep.mismatch, md);
        assertEquals(2 * 3 * 2 * 2, rep.rows.size(), md); // m x dists x ops x impls
        assertTrue(md.contains("| 10000 | 2^20 | zipf-1.2 | kv (stable order, int) | ours CPU, 2 threads |"), md);
        assertTrue(md.contains("| n | m | keys | op | implementation | ms | G keys/s | notes |"), md);
    }

    @Test
    void maxSecondsEndsTheRunWithSkippedRows() {
        SortBenchmark.Options o = SortBenchmark.Options.parse(new String[] {"--n", "1000", "--m", "2^4,2^8",
                "--dists", "uniform", "--impls", "cpu", "--max-seconds", "1e-9", "--reps", "1", "--cpu-reps", "1"});
        SortBenchmark.Report rep = new SortBenchmark(o).run();
        String md = rep.markdown();
        // past the limit before the first case: every case's keys and kv rows say so, nothing runs
        assertEquals(4, rep.rows.size(), md);
        assertTrue(md.contains("| 1000 | 2^4 | uniform | kv (stable order, int) | all | n/a | n/a | skipped"), md);
        assertTrue(md.contains("| 1000 | 2^8 | uniform | keys only | all | n/a | n/a | skipped: --max-seconds"), md);
        // 0: no limit
        o = SortBenchmark.Options.parse(new String[] {"--n", "1000", "--m", "2^4", "--dists", "uniform", "--impls",
            "cpu", "--max-seconds", "0", "--reps", "1", "--cpu-reps", "1"});
        md = new SortBenchmark(o).run().markdown();
        assertTrue(md.contains("| 1000 | 2^4 | uniform | kv (stable order, int) | ours CPU,") && !md.contains("skipped"),
                md);
        assertThrows(IllegalArgumentException.class, () -> SortBenchmark.Options.parse(new String[] {"--max-seconds",
                "-1"}));
    }
}
