package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The ingest benchmark's options and a tiny run on local[2] without the upload rows (no timing assertions). */
class IngestBenchmarkTest {

    @Test
    void optionsParse() {
        IngestBenchmark.Options o = IngestBenchmark.Options.parse(new String[] {"--n", "1e4", "--d", "8", "--cores", "3",
                "--columns", "ARRAY", "--paths", "ingest,rows", "--sources", "parquet,cache", "--upload", "off"});
        assertEquals(10_000, o.n);
        assertEquals(8, o.d);
        assertEquals(3, o.partitions);
        assertEquals(3, o.threads);
        assertEquals(List.of("array"), o.columns);
        assertEquals(List.of("ingest", "rows"), o.paths);
        assertEquals(List.of("parquet", "cache"), o.sources);
        assertFalse(o.upload);
        assertThrows(IllegalArgumentException.class, () -> IngestBenchmark.Options.parse(new String[] {"--columns", "map"}));
        assertThrows(IllegalArgumentException.class, () -> IngestBenchmark.Options.parse(new String[] {"--n", "0"}));
        assertThrows(IllegalArgumentException.class, () -> IngestBenchmark.Options.parse(new String[] {"--bogus", "1"}));
    }

    @Test
    void tinyRunReportsEveryPathAndColumn() throws Exception {
        IngestBenchmark.Options o = IngestBenchmark.Options.parse(new String[] {"--n", "3000", "--d", "4", "--cores", "2",
                "--reps", "1", "--sources", "cache,parquet", "--upload", "off"});
        String md = new IngestBenchmark(o).run();
        assertEquals(12, md.lines().filter(l -> l.startsWith("| ") && !l.startsWith("| what") && !l.startsWith("| ---")).count(), md);
        assertTrue(md.contains("vector column, parquet: FeatureIngest path COLUMNAR"), md);
        assertTrue(md.contains("array column, cache: FeatureIngest path ROWS"), md);
    }
}
