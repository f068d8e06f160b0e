package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The spline benchmark's options, rank error and a tiny CPU-only run (no timing assertions). */
class SplineBenchmarkTest {

    @Test
    void optionsParse() {
        SplineBenchmark.Options o = SplineBenchmark.Options.parse(new String[] {"--n", "1e3,2_000", "--queries",
                "5000", "--backends", "cpu", "--cdf-rows", "0", "--partitions", "4", "--reps", "1"});
        assertEquals(List.of(1000L, 2000L), o.n);
        assertEquals(5000, o.queries);
        assertEquals(List.of("cpu"), o.backends);
        assertEquals(0, o.cdfRows);
        assertThrows(IllegalArgumentException.class, () -> SplineBenchmark.Options.parse(new String[] {"--n", "1"}));
        assertThrows(IllegalArgumentException.class, () -> SplineBenchmark.Options.parse(new String[] {"--backends",
                "tpu"}));
        assertThrows(IllegalArgumentException.class, () -> SplineBenchmark.Options.parse(new String[] {"--cdf-rows",
                "1"}));
        assertEquals(List.of("zipf"), SplineBenchmark.Options.parse(new String[] {"--dists", "zipf"}).dists);
        assertEquals(List.of("cdf", "partition"), SplineBenchmark.Options.parse(new String[] {"--ops",
                "cdf,partition"}).ops);
        assertThrows(IllegalArgumentException.class, () -> SplineBenchmark.Options.parse(new String[] {"--dists",
                "pareto"}));
    }

    @Test
    void rankErrorAgainstTheSortedColumn() {
        double[] sorted = new double[1001];
        for (int i = 0; i < sorted.length; i++) {
            sorted[i] = i;
        }
        double[] exact = new double[SplineBenchmark.PROBS.length];
        for (int i = 0; i < exact.length; i++) {
            exact[i] = Math.round(SplineBenchmark.PROBS[i] * 1000);
        }
        assertTrue(SplineBenchmark.rankError(sorted, exact) <= 0.5 / 1001);
        exact[4] += 10; // the median 10 ranks off
        assertEquals(10.0 / 1001, SplineBenchmark.rankError(sorted, exact), 1e-12);
    }

    @Test
    void smallCpuRunReportsEveryRow() {
        SplineBenchmark.Options o = SplineBenchmark.Options.parse(new String[] {"--n", "3000", "--queries", "20000",
                "--backends", "cpu", "--cdf-rows", "20000", "--partitions", "4", "--reps", "1"});
        BenchArgs.Outcome out = SplineBenchmark.run(o);
        String md = out.markdown();
        assertEquals(0, out.status(), md);
        assertTrue(md.contains("| section | case | size | backend | ms | rate | notes |"), md);
        assertEquals(2, md.split("\\| build \\|").length - 1, md);
        assertEquals(8, md.split("\\| eval \\|").length - 1, md); // 2 kinds x value/inverse x random/sorted
        assertTrue(md.contains("approxQuantile, relativeError 0.001") && md.contains("GpuMonotoneCdf, whole column"),
                md);
        assertTrue(md.contains("SplineRangePartitioner, zipf") && md.contains("repartitionByRange, bimodal"), md);
        assertEquals(3, md.split("sizes = the counted ones").length - 1, md);
        assertEquals(4, md.split("\\| data \\|").length - 1, md); // the generation of each data set is timed
        // the exact ranks come from counts: the whole column's spline quantiles are a few ranks from exact
        String whole = md.lines().filter(l -> l.contains("whole column")).findFirst().orElseThrow();
        double err = Double.parseDouble(whole.replaceAll(".*max rank error (\\S+) n.*", "$1"));
        assertTrue(err < 1e-3, whole);
    }

    @Test
    void cdfAloneSkipsTheKernels() {
        SplineBenchmark.Options o = SplineBenchmark.Options.parse(new String[] {"--backends", "cpu", "--cdf-rows",
                "5000", "--ops", "cdf", "--reps", "1"});
        String md = SplineBenchmark.run(o).markdown();
        assertEquals(0, md.split("\\| build \\|").length - 1, md);
        assertEquals(0, md.split("\\| eval \\|").length - 1, md);
        assertEquals(0, md.split("\\| partition \\|").length - 1, md);
        assertEquals(3, md.split("\\| quantiles \\|").length - 1, md); // whole column, 2 x approxQuantile (the
        // 10^6 sample is skipped: the column is smaller)
    }

    @Test
    void opsOrdersAndCpuMaxSizeSelectTheCases() {
        SplineBenchmark.Options o = SplineBenchmark.Options.parse(new String[] {"--n", "3000", "--queries", "2000",
                "--backends", "cpu", "--cdf-rows", "0", "--ops", "value", "--orders", "random", "--reps", "1"});
        String md = SplineBenchmark.run(o).markdown();
        assertEquals(0, md.split("\\| build \\|").length - 1, md);
        assertEquals(2, md.split("\\| eval \\|").length - 1, md); // 2 kinds x value x random
        assertTrue(md.contains("schumaker value, random") && !md.contains("inverse"), md);
        // above --cpu-max-size the twin is not timed (no row without a GPU)
        o = SplineBenchmark.Options.parse(new String[] {"--n", "3000", "--queries", "2000", "--backends", "cpu",
                "--cdf-rows", "0", "--cpu-max-size", "2500", "--reps", "1"});
        md = SplineBenchmark.run(o).markdown();
        assertEquals(0, md.split("\\| build \\|").length - 1, md);
        assertEquals(0, md.split("\\| eval \\|").length - 1, md);
        assertThrows(IllegalArgumentException.class, () -> SplineBenchmark.Options.parse(new String[] {"--ops",
                "sort"}));
        assertThrows(IllegalArgumentException.class, () -> SplineBenchmark.Options.parse(new String[] {"--orders",
                "reversed"}));
    }
}
