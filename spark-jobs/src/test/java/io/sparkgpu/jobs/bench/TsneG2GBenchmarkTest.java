package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The G2G benchmark's options and a tiny CPU-only run (no timing assertions). */
class TsneG2GBenchmarkTest {

    @Test
    void optionsParse() {
        TsneG2GBenchmark.Options o = TsneG2GBenchmark.Options.parse(new String[] {"--grids", "1d:1200,2d:60,3d:9",
                "--reps", "3", "--impls", "cpu"});
        assertArrayEquals(new int[] {1, 1200}, o.grids.get(0));
        assertArrayEquals(new int[] {2, 60}, o.grids.get(1));
        assertArrayEquals(new int[] {3, 9}, o.grids.get(2));
        assertEquals(3, o.reps);
        assertFalse(o.gpu);
        assertTrue(o.cpu);
        assertThrows(IllegalArgumentException.class, () -> TsneG2GBenchmark.Options.parse(new String[] {"--grids", "4d:3"}));
        assertThrows(IllegalArgumentException.class, () -> TsneG2GBenchmark.Options.parse(new String[] {"--impls", "tpu"}));
        assertThrows(IllegalArgumentException.class, () -> TsneG2GBenchmark.Options.parse(new String[] {"--reps", "0"}));
    }

    @Test
    void smallCpuRunAgrees() {
        TsneG2GBenchmark.Options o = TsneG2GBenchmark.Options.parse(new String[] {"--grids", "1d:31,2d:9,3d:5",
                "--impls", "cpu"});
        TsneG2GBenchmark.Report rep = new TsneG2GBenchmark(o).run();
        String md = rep.markdown();
        assertFalse(rep.mismatch, md);
        assertEquals(3, rep.rows.size(), md);
        for (TsneG2GBenchmark.Row r : rep.rows) {
            assertTrue(r.relFftDirect < 1e-6, md); // float transforms: about 1e-7 here (FFT_DIRECT_LIMIT 1e-5)
        }
        assertTrue(md.contains("| 2-D 9^2 | 81 | 9 = 3*3 |"), md); // radices 2..5 below G2GPlan.FUSED_MAX_M
    }
}
