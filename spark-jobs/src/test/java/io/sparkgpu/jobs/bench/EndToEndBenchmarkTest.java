package io.sparkgpu.jobs.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The end-to-end benchmark's GPU-free path at small n (what the dev machine and CI can run): every row runs,
 * ours-GPU (backend auto: the CPU twin here) and ours-CPU agree bitwise, MLlib agrees to rounding, and the
 * breakdown of our fits is complete.
 */
class EndToEndBenchmarkTest {

    @Test
    void optionsParse() {
        EndToEndBenchmark.Options o = EndToEndBenchmark.Options.parse(new String[] {"--n", "2e5", "--iters=3",
                "--cores", "4", "--impls", "ours-cpu,MLLIB-ROW", "--tasks-per-gpu", "2", "--gpu-addresses", "0,1"});
        assertEquals(200_000L, o.n);
        assertEquals(3, o.iters);
        assertEquals(4, o.partitions, "partitions default to cores");
        assertTrue(o.wants("ours-cpu") && o.wants("mllib-row") && !o.wants("ours-gpu"));
        assertEquals(List.of("0", "1"), o.gpuAddresses);
        assertThrows(IllegalArgumentException.class, () -> EndToEndBenchmark.Options.parse(new String[] {"--impls", "x"}));
        assertEquals("mllib", o.init);
        assertEquals("rows", EndToEndBenchmark.Options.parse(new String[] {"--init", "rows", "--impls", "ours-gpu"}).init);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> EndToEndBenchmark.Options.parse(
                new String[] {"--init", "rows"})).getMessage().contains("leave mllib-row and mllib-block out"));
        assertThrows(IllegalArgumentException.class, () -> EndToEndBenchmark.Options.parse(new String[] {"--init", "kpp"}));
        assertThrows(IllegalArgumentException.class,
                () -> EndToEndBenchmark.Options.parse(new String[] {"--gpu-backend", "cpu"}));
        assertThrows(IllegalArgumentException.class,
                () -> EndToEndBenchmark.Options.parse(new String[] {"--gpu-addresses", "0"}));
        assertThrows(IllegalArgumentException.class,
                () -> EndToEndBenchmark.Options.parse(new String[] {"--n", "3", "--k", "4"}));
    }

    @Test
    void smallRunOnTheCpuAgreesAndExplainsWhereTheTimeGoes() {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        EndToEndBenchmark.Report r = EndToEndBenchmark.runForTest(new String[] {"--capabilities", "kmeans",
                "--n", "20000", "--d", "4", "--k", "5",
                "--iters", "3", "--cores", "2", "--partitions", "5", "--warmup-n", "3000", "--gpu-backend", "auto"},
                new PrintStream(log, true, StandardCharsets.UTF_8));
        String md = r.markdown();
        String logText = log.toString(StandardCharsets.UTF_8);
        assertEquals(4, r.results.size(), logText);
        for (EndToEndBenchmark.Result res : r.results) {
            assertNull(res.failure, res.name + ": " + res.failure + "\n" + logText);
            assertEquals(3, res.iterations, res.name);
            assertNotNull(res.perIteration, res.name + " per-iteration times");
            assertEquals(3, res.perIteration.length, res.name);
        }
        assertFalse(r.mismatch(), md);
        assertEquals(0, r.exitCode(), md);
        EndToEndBenchmark.Result gpu = r.get("ours-gpu");
        EndToEndBenchmark.Result cpu = r.get("ours-cpu");
        assertTrue(Arrays.equals(gpu.centres, cpu.centres));
        for (String solver : new String[] {"mllib-row", "mllib-block"}) {
            EndToEndBenchmark.Result m = r.get(solver);
            double diff = KMeansBenchmark.maxRelDiff(m.centres, cpu.centres, 5, 4);
            assertTrue(diff < 1e-9, solver + " centres differ by " + diff + "\n" + md);
            assertEquals(cpu.cost, m.cost, 1e-9 * cpu.cost, solver + " cost");
        }
        for (String phase : new String[] {"pack", "initialisation", "iterations", "final pass", "clean-up", "total"}) {
            Double v = cpu.timings.get(phase);
            assertTrue(v != null && v >= 0, "breakdown has the phase " + phase + "\n" + md);
        }
        assertTrue(r.generation >= 0);
        assertEquals("local", cpu.mode, "20000 x 4 is small data: the driver's threads run the loop");
        assertTrue(md.contains("| ours, CPU twin (GpuKMeans backend cpu) |"), md);
        assertTrue(md.contains("MLlib KMeans, solver block"), md);
        assertTrue(md.contains("0 (bitwise equal)"), md);
        assertTrue(md.contains("| fit: pack |"), md);
        assertTrue(md.contains("steady iteration, mean of 2..I"), md);
        assertTrue(md.contains("| where the iterations ran | local |"), md);
        assertTrue(md.contains("bitwise equal"), md);
        double[] bits = Arrays.copyOf(gpu.centres, gpu.centres.length + 1);
        bits[gpu.centres.length] = gpu.cost;
        assertTrue(md.contains("- kmeans ours-gpu: " + EndToEndJobs.bits(bits) + " (")
                && md.contains("- kmeans ours-cpu: " + EndToEndJobs.bits(bits) + " ("), md);
    }

    @Test
    void isotonicAndScanJobsRunEveryWayAndAgree() {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        EndToEndBenchmark.Report r = EndToEndBenchmark.runForTest(new String[] {"--capabilities", "isotonic,scan",
                "--iso-n", "20000", "--scan-grid", "12", "--scan-replicas", "19", "--cores", "2", "--partitions", "3",
                "--gpu-backend", "auto"}, new PrintStream(log, true, StandardCharsets.UTF_8));
        String md = r.markdown();
        String logText = log.toString(StandardCharsets.UTF_8);
        assertTrue(r.results.isEmpty(), "k-means was not asked for");
        assertEquals(5, r.jobs.jobs.size(), logText);
        for (EndToEndJobs.Job j : r.jobs.jobs) {
            assertNull(j.failure, j.capability + " " + j.impl + ": " + j.failure + "\n" + logText);
            assertTrue(j.seconds > 0, j.capability + " " + j.impl);
        }
        EndToEndJobs.Job g = r.jobs.get("isotonic", "ours-gpu");
        EndToEndJobs.Job c = r.jobs.get("isotonic", "ours-cpu");
        EndToEndJobs.Job m = r.jobs.get("isotonic", "mllib");
        assertTrue(Arrays.equals(g.values, c.values), md);
        double diff = EndToEndJobs.isoMaxDiff(c.isoModel, m.isoModel);
        assertTrue(diff <= 1e-9, "MLlib and ours differ by " + diff + "\n" + md);
        assertTrue(Arrays.equals(r.jobs.get("scan", "ours-gpu").values, r.jobs.get("scan", "ours-cpu").values), md);
        assertTrue(r.jobs.get("scan", "ours-gpu").summary.startsWith("best ["), md);
        assertFalse(r.jobs.mismatch(), md);
        assertEquals(0, r.exitCode(), md);
        assertTrue(md.contains("### isotonic regression end to end on Spark"), md);
        assertTrue(md.contains("| MLlib IsotonicRegression |"), md);
        assertTrue(md.contains("### scan statistic end to end on Spark"), md);
        EndToEndJobs.Job sc = r.jobs.get("scan", "ours-cpu");
        assertEquals(List.of("input+tables", "scan", "secondary clusters", "replicas", "result", "GPU calls", "total"),
                List.copyOf(sc.timings.keySet()), md);
        assertEquals("cpu on the driver (2 threads)", sc.phaseBackends.get("replicas"), "a 12x12 grid is small: " + md);
        assertTrue(md.contains("| replicas | ") && md.contains("[cpu on the driver (2 threads)]"), md);
        assertTrue(md.contains("| GPU busy share: GPU calls / total fit |"), md);
        assertTrue(md.contains("bitwise equal"), md);
        // the result digests: equal bits give equal digests (GPU row = CPU twin row), other results other digests
        String isoBits = EndToEndJobs.bits(g.values);
        assertEquals(16, isoBits.length());
        assertTrue(md.contains("- isotonic ours-gpu: " + isoBits + " (") && md.contains("- isotonic ours-cpu: " + isoBits),
                md);
        assertTrue(md.contains("- scan ours-cpu: " + EndToEndJobs.bits(sc.values)), md);
        double[] flipped = g.values.clone();
        flipped[0] = Math.nextUp(flipped[0]);
        assertFalse(isoBits.equals(EndToEndJobs.bits(flipped)), "one ulp changes the digest");
        assertThrows(IllegalArgumentException.class,
                () -> EndToEndBenchmark.Options.parse(new String[] {"--capabilities", "pca"}));
    }

    @Test
    void tsneJobsRunInBothModesAndAgree() {
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        EndToEndBenchmark.Report r = EndToEndBenchmark.runForTest(new String[] {"--capabilities", "tsne",
                "--tsne-n", "300", "--tsne-d", "10", "--tsne-iters", "30", "--tsne-impls", "ours-gpu,ours-cpu",
                "--cores", "2", "--partitions", "3", "--gpu-backend", "auto"},
                new PrintStream(log, true, StandardCharsets.UTF_8));
        String md = r.markdown();
        String logText = log.toString(StandardCharsets.UTF_8);
        assertEquals(4, r.jobs.jobs.size(), logText);
        for (EndToEndJobs.Job j : r.jobs.jobs) {
            assertNull(j.failure, j.mode + " " + j.impl + ": " + j.failure + "\n" + logText);
            assertEquals(300 * 2, j.values.length, md);
            assertTrue(j.timings.get("total") > 0, md);
        }
        assertFalse(r.jobs.mismatch(), md);
        assertEquals(0, r.exitCode(), md);
        assertTrue(md.contains("### t-SNE end to end on Spark"), md);
        assertTrue(md.contains(", distributed mode |") && md.contains(", single mode |"), md);
        assertTrue(md.contains("bitwise equal to the GPU row"), md);
        assertTrue(md.contains("| g2g |") && md.contains("| device phases / whole fit"), md);
        // a changed bit is seen
        r.jobs.jobs.get(1).values[7] += 1e-9;
        assertTrue(r.jobs.mismatch(), md);
        assertThrows(IllegalArgumentException.class,
                () -> EndToEndBenchmark.Options.parse(new String[] {"--tsne-modes", "exact"}));
    }
}
