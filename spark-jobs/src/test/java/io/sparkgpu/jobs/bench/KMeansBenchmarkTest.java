package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class KMeansBenchmarkTest {

    @Test
    void rowsDoNotDependOnHowTheyAreSplit() {
        BlobData gen = new BlobData(7, 5, 3, 0.5);
        double[] all = gen.generate(70_000); // more than one parallel fill block
        double[] piece = new double[5 * 1000];
        gen.fill(41_000, 1000, piece, 0);
        assertArrayEquals(Arrays.copyOfRange(all, 41_000 * 5, 42_000 * 5), piece);
        double[] one = new double[5];
        gen.row(69_999, one, 0);
        assertArrayEquals(Arrays.copyOfRange(all, 69_999 * 5, 70_000 * 5), one);
        assertFalse(Arrays.equals(all, new BlobData(8, 5, 3, 0.5).generate(70_000)), "the seed matters");
    }

    @Test
    void sampledRowsAreDistinctAndSeeded() {
        int[] a = BlobData.sampleRows(100, 100, 3);
        assertEquals(100, Arrays.stream(a).distinct().count());
        assertArrayEquals(BlobData.sampleRows(1000, 10, 3), BlobData.sampleRows(1000, 10, 3));
        assertThrows(IllegalArgumentException.class, () -> BlobData.sampleRows(5, 6, 1));
    }

    @Test
    void optionsParse() {
        KMeansBenchmark.Options o = KMeansBenchmark.Options.parse(new String[] {"--n", "1e6,2_000", "--k=8",
                "--impls", "CPU1,gpu", "--iters", "3"});
        assertArrayEquals(new long[] {1_000_000L, 2_000L}, o.ns);
        assertEquals(8, o.k);
        assertEquals(3, o.iters);
        assertTrue(o.wants("cpu1") && o.wants("gpu") && !o.wants("row"));
        assertThrows(IllegalArgumentException.class, () -> KMeansBenchmark.Options.parse(new String[] {"--n", "1.5"}));
        assertThrows(IllegalArgumentException.class, () -> KMeansBenchmark.Options.parse(new String[] {"--impls", "x"}));
        assertThrows(IllegalArgumentException.class, () -> KMeansBenchmark.Options.parse(new String[] {"--bogus", "1"}));
        assertThrows(IllegalArgumentException.class,
                () -> KMeansBenchmark.Options.parse(new String[] {"--n", "100000000", "--d", "32"}));
    }

    /** spark-rapids-ml's published shape: 10^6 x 3000, k = 1000; n*d > 2^31 runs the kernel row alone. */
    @Test
    void rapidsMlShapePreset() {
        KMeansBenchmark.Options o = KMeansBenchmark.Options.parse(new String[] {"--shape", "rapids-ml"});
        assertArrayEquals(new long[] {1_000_000L}, o.ns);
        assertEquals(3000, o.d);
        assertEquals(1000, o.k);
        assertTrue(o.wants("kernel") && !o.wants("gpu") && !o.wants("cpu1"));
        KMeansBenchmark.Options small = KMeansBenchmark.Options.parse(new String[] {"--shape", "RAPIDS-ML", "--n", "5000",
                "--impls", "kernel,cpu1"});
        assertArrayEquals(new long[] {5000L}, small.ns);
        assertEquals(3000, small.d);
        assertTrue(small.wants("cpu1"));
        assertThrows(IllegalArgumentException.class, () -> KMeansBenchmark.Options.parse(
                new String[] {"--shape", "rapids-ml", "--impls", "kernel,gpu"}), "n*d > 2^31 needs kernel only");
        assertThrows(IllegalArgumentException.class, () -> KMeansBenchmark.Options.parse(new String[] {"--shape", "x"}));
    }

    @Test
    void partitionedKernelRowExplainsAMissingGpu() {
        if (gpuExpected()) {
            return; // the real run is the lead's: --shape rapids-ml on the GPU host
        }
        KMeansBenchmark.Options o = KMeansBenchmark.Options.parse(new String[] {"--n", "800000", "--d", "3000",
                "--k", "3", "--impls", "kernel"});
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        String md = new KMeansBenchmark(o, new PrintStream(log, true, StandardCharsets.UTF_8)).run().markdown();
        assertTrue(md.contains("| ours GPU kernel only (10 launches per partition)"), md);
        assertTrue(md.contains("| 800000 ") && md.contains("| 3000 "), md);
        assertTrue(md.contains("n/a: "), md);
    }

    @Test
    void cpuRowsAgreeBitwiseAndGpuRowExplainsItsAbsence() {
        KMeansBenchmark.Options o = KMeansBenchmark.Options.parse(new String[] {"--n", "3000", "--d", "4", "--k", "6",
                "--iters", "3", "--threads", "3", "--impls", "cpu1,cpuN" + (gpuExpected() ? "" : ",gpu")});
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        KMeansBenchmark.Report r = new KMeansBenchmark(o, new PrintStream(log, true, StandardCharsets.UTF_8)).run();
        String md = r.markdown();
        assertFalse(r.mismatch, md);
        assertTrue(md.contains("ours CPU 1 thread vs 3 partitions final centres bitwise equal: yes"), md);
        assertTrue(md.contains("| ours CPU twin, 3 threads"), md);
        if (!gpuExpected()) {
            assertTrue(md.contains("| ours GPU (KMeansGpu.step, resident) | 3000 |"), md);
            assertTrue(md.contains("n/a: "), md);
        }
    }

    @Test
    void mllibStartsFromOurInitialCentresAndAgrees() {
        KMeansBenchmark.Options o = KMeansBenchmark.Options.parse(new String[] {"--n", "4000", "--d", "3", "--k", "5",
                "--iters", "3", "--threads", "2", "--impls", "cpu1,row,block"});
        KMeansBenchmark.Report r = new KMeansBenchmark(o, new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8)).run();
        String md = r.markdown();
        assertFalse(md.contains("WARNING"), md);
        assertTrue(md.contains("initial centres: MLlib KMeans initMode=random"), md);
        List<KMeansBenchmark.Row> mllib = r.rows.stream().filter(x -> x.impl.startsWith("MLlib")).toList();
        assertEquals(2, mllib.size(), md);
        for (KMeansBenchmark.Row row : mllib) {
            assertTrue(row.notes.contains("max rel. centre diff vs ours"), md);
            double diff = Double.parseDouble(row.notes.replaceAll(".*max rel. centre diff vs ours ([0-9.eE+-]+).*", "$1"));
            assertTrue(diff < 1e-9, "MLlib and ours should reach the same centres from the same start: " + md);
        }
    }

    /** The CPU-only machines of CI have no GPU; on a GPU host the gpu row is simply not requested here. */
    private static boolean gpuExpected() {
        return io.sparkgpu.cuda.CudaRuntime.status().available;
    }
}
