package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The scan benchmark's options and a tiny CPU-only run (no timing assertions). */
class ScanBenchmarkTest {

    @Test
    void optionsParse() {
        ScanBenchmark.Options o = ScanBenchmark.Options.parse(new String[] {"--grids", "1d:1e3,2d:32x16,3d:8",
                "--replicas", "9", "--impls", "cpu,naive", "--threads", "2"});
        List<int[]> g = o.grids;
        assertArrayEquals(new int[] {1000}, g.get(0));
        assertArrayEquals(new int[] {32, 16}, g.get(1));
        assertArrayEquals(new int[] {8, 8, 8}, g.get(2));
        assertEquals(9, o.replicas);
        assertFalse(o.impls.contains("gpu"));
        assertThrows(IllegalArgumentException.class, () -> ScanBenchmark.Options.parse(new String[] {"--grids", "4d:3"}));
        assertThrows(IllegalArgumentException.class, () -> ScanBenchmark.Options.parse(new String[] {"--impls", "tpu"}));
    }

    @Test
    void smallRunAgreesWithTheNaiveScan() {
        ScanBenchmark.Options o = ScanBenchmark.Options.parse(new String[] {"--grids", "1d:40,2d:9", "--replicas", "3",
                "--cpu-replicas", "3", "--impls", "cpu,naive", "--threads", "2"});
        ScanBenchmark.Report rep = new ScanBenchmark(o).run();
        String md = rep.markdown();
        assertFalse(rep.mismatch, md);
        assertEquals(4, rep.rows.size(), md);
        assertTrue(md.contains("same range: yes"), md);
        assertTrue(md.contains("| 2-D 9x9 | ours CPU, 2 threads | 2025 |"), md);
    }
}
