package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The t-SNE benchmark's options and a tiny CPU-only run (no timing assertions). */
class TsneBenchmarkTest {

    @Test
    void optionsParse() {
        TsneBenchmark.Options o = TsneBenchmark.Options.parse(new String[] {"--cases", "blobs:1e3x5,digits",
                "--backends", "cpu", "--max-iter", "10", "--perplexity", "5", "--error-sample", "0"});
        assertEquals(2, o.cases.size());
        assertFalse(o.backends.contains("gpu"));
        assertEquals(10, o.maxIter);
        assertEquals(1000, TsneBenchmark.Options.parseCase("blobs:1e3x5")[0]);
        assertThrows(IllegalArgumentException.class, () -> TsneBenchmark.Options.parse(new String[] {"--cases", "mnist"}));
        assertThrows(IllegalArgumentException.class, () -> TsneBenchmark.Options.parse(new String[] {"--backends", "tpu"}));
        assertEquals(4, o.grid.p);
        TsneBenchmark.Options f = TsneBenchmark.Options.parse(new String[] {"--grid-p", "3", "--grid-per-unit", "1"});
        assertEquals(3, f.grid.p);
        assertEquals(1.0, f.grid.intervalsPerUnit);
        assertThrows(IllegalArgumentException.class, () -> TsneBenchmark.Options.parse(new String[] {"--grid-p", "9"}));
    }

    @Test
    void shippedDigitsLoad() throws Exception {
        TsneBenchmark.Data d = TsneBenchmark.shipped("digits");
        assertEquals(1797, d.n);
        assertEquals(64, d.d);
        assertEquals(10, java.util.Arrays.stream(d.labels).distinct().count());
    }

    @Test
    void smallCpuRun() throws Exception {
        TsneBenchmark.Options o = TsneBenchmark.Options.parse(new String[] {"--cases", "blobs:240x8", "--backends",
                "gpu,cpu", "--max-iter", "300", "--perplexity", "10", "--clusters", "4", "--error-sample", "240",
                "--quality-sample", "240", "--grid-min", "10", "--grid-max", "40", "--learning-rate", "96",
                "--repulsion", "grid"}); // the grid, whose error the report measures (240 points: auto is exact)
        TsneBenchmark.Report rep = new TsneBenchmark(o).run();
        String md = rep.markdown();
        assertFalse(rep.mismatch, md);
        TsneBenchmark.Row cpu = rep.rows.stream().filter(r -> r.backend.equals("ours CPU")).findFirst().orElseThrow();
        assertTrue(cpu.labelAcc >= 0.95, md);
        assertTrue(cpu.repRelErr < 0.1, md); // 240 sparse points: the z_i cancellation dominates (see report)
        assertTrue(md.contains("| blobs 240 x 8 (4 clusters) | ours CPU |"), md);
    }

    @Test
    void sparkRunsGiveThePlainBits() throws Exception {
        TsneBenchmark.Options o = TsneBenchmark.Options.parse(new String[] {"--cases", "blobs:120x6", "--backends",
                "gpu,cpu", "--max-iter", "20", "--perplexity", "8", "--clusters", "3", "--error-sample", "0",
                "--quality-sample", "0", "--grid-min", "10", "--grid-max", "20", "--learning-rate", "12", "--spark", "2",
                "--spark-partitions", "3"});
        TsneBenchmark.Report rep = new TsneBenchmark(o).run();
        String md = rep.markdown();
        assertFalse(rep.mismatch, md);
        assertTrue(md.contains("Spark local[2], distributed, CPU embedding is identical to the plain run's"), md);
        assertTrue(md.contains("Spark local[2], single, CPU embedding is identical to the plain run's"), md);
        assertTrue(md.contains("exact repulsion (no interpolation error)"), "120 points: auto takes the exact sums\n" + md);
    }
}
