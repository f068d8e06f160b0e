package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendFaults;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.testutil.SparkTestSession;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The backend policy for k-means, on any machine: a device failure injected into the k-means pass under
 * {@code auto} gives exactly the CPU twin's fit and reports the CPU; under {@code gpu} it is an error naming the
 * phase. (On a GPU host the passes before a late fault run on the GPU, and the fit reports "mixed".)
 */
class KMeansBackendFallbackTest {
    private static final int K = 4;

    private static List<KMeansData> blocks() {
        return List.of(KMeansCpuTest.random(new Random(11), 700, 5, true, false),
                KMeansCpuTest.random(new Random(12), 500, 5, false, false));
    }

    /** Scales that cover every block. */
    private static KMeansScales scales(List<KMeansData> blocks) {
        int d = blocks.get(0).d;
        int n = 0;
        for (KMeansData b : blocks) {
            n += b.n;
        }
        double[] x = new double[n * d];
        double[] w = new double[n];
        int at = 0;
        for (KMeansData b : blocks) {
            System.arraycopy(b.x, 0, x, at * d, b.n * d);
            System.arraycopy(b.w, 0, w, at, b.n);
            at += b.n;
        }
        return KMeansCpuTest.scalesFor(new KMeansData(x, w, n, d, null), false);
    }

    private static KMeansLloyd.Outcome fit(List<KMeansData> blocks, Backend backend) {
        KMeansData first = blocks.get(0);
        KMeansScales sc = scales(blocks);
        KMeansLloyd.Spec spec = new KMeansLloyd.Spec(K, first.d, 15, 0, false, sc);
        double[] start = java.util.Arrays.copyOf(first.x, K * first.d);
        return KMeansLloyd.run(spec, start, KMeansBlocks.local(blocks, K, false, sc, backend)::pass, null);
    }

    private static void assertSameFit(KMeansLloyd.Outcome ref, KMeansLloyd.Outcome o) {
        assertArrayEquals(ref.centres, o.centres, "centre bits");
        assertArrayEquals(ref.sizes, o.sizes);
        assertEquals(Double.doubleToLongBits(ref.trainingCost), Double.doubleToLongBits(o.trainingCost));
        assertEquals(Double.doubleToLongBits(ref.finalCost), Double.doubleToLongBits(o.finalCost));
        assertEquals(ref.iterations, o.iterations);
        for (int i = 0; i < ref.history.size(); i++) {
            assertArrayEquals(ref.history.get(i), o.history.get(i), "history " + i);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void autoFallsBackToTheCpuTwinsBits(String kind) {
        List<KMeansData> blocks = blocks();
        KMeansLloyd.Outcome ref = fit(blocks, Backend.CPU);
        assertEquals("cpu", KMeansLloyd.backendName(ref.gpuPasses, ref.cpuPasses));
        try (BackendFaults f = BackendFaults.of(kind, KMeansStep.PHASE)) {
            KMeansLloyd.Outcome o = fit(blocks, Backend.AUTO);
            assertTrue(f.fired() > 0, "the fault struck");
            assertSameFit(ref, o);
            assertEquals(0, o.gpuPasses);
            assertEquals("cpu", KMeansLloyd.backendName(o.gpuPasses, o.cpuPasses));
        }
    }

    @Test
    void aLateFaultLeavesTheEarlierGpuPasses() {
        List<KMeansData> blocks = blocks();
        KMeansLloyd.Outcome ref = fit(blocks, Backend.CPU);
        boolean gpu = BackendChooser.gpuUsable(KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL);
        try (BackendFaults f = BackendFaults.midCall(KMeansStep.PHASE, 3)) {
            KMeansLloyd.Outcome o = fit(blocks, Backend.AUTO);
            assertTrue(f.fired() > 0);
            assertSameFit(ref, o);
            assertEquals(gpu ? "mixed" : "cpu", KMeansLloyd.backendName(o.gpuPasses, o.cpuPasses));
        }
    }

    @Test
    void singlePassReportsWhereItRan() {
        KMeansData p = KMeansCpuTest.random(new Random(5), 300, 3, true, false);
        double[] centres = java.util.Arrays.copyOf(p.x, K * p.d);
        int[] cpuLabels = new int[p.n];
        long[] cpu = KMeansCpu.step(p, centres, K, false, null, false, cpuLabels, null, false);
        try (BackendFaults f = BackendFaults.fakeDevice(KMeansStep.PHASE)) {
            int[] labels = new int[p.n];
            BackendChooser.Ran<long[]> r = KMeansStep.runReporting(Backend.AUTO, p, centres, K, false, null, false,
                    labels, null, false);
            assertEquals("cpu", r.backend());
            assertTrue(r.fallbackReason().contains(KMeansStep.PHASE), r.fallbackReason());
            assertArrayEquals(cpu, r.value);
            assertArrayEquals(cpuLabels, labels);
            assertEquals(1, f.fired());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void gpuBackendFailsNamingThePhase(String kind) {
        List<KMeansData> blocks = blocks();
        KMeansScales sc = scales(blocks);
        double[] centres = java.util.Arrays.copyOf(blocks.get(0).x, K * 5);
        try (BackendFaults f = BackendFaults.of(kind, KMeansStep.PHASE)) {
            CudaException e = assertThrows(CudaException.class,
                    () -> KMeansStep.runBlocks(Backend.GPU, blocks, centres, K, false, sc));
            assertTrue(e.getMessage().contains(KMeansStep.PHASE) && e.getMessage().contains("injected"), e.getMessage());
            assertEquals(1, f.fired());
        }
    }

    @Test
    void estimatorFitUnderAutoEqualsTheCpuFitAndUnderGpuFails() {
        Dataset<Row> blobs = KMeansTestData.blobs(SparkTestSession.get()).cache();
        GpuKMeans est = new GpuKMeans().setK(3).setSeed(1L).setFeaturesCol("vec").setMaxIter(20);
        GpuKMeansModel cpu = est.copy(new org.apache.spark.ml.param.ParamMap()).setBackend("cpu").fit(blobs);
        assertEquals("cpu", cpu.summary().backend());
        try (BackendFaults f = BackendFaults.midCall(KMeansStep.PHASE)) {
            GpuKMeansModel auto = est.copy(new org.apache.spark.ml.param.ParamMap()).setBackend("auto").fit(blobs);
            assertTrue(f.fired() > 0);
            double[][] a = auto.clusterCentersArray();
            double[][] c = cpu.clusterCentersArray();
            for (int i = 0; i < c.length; i++) {
                assertArrayEquals(c[i], a[i], "centre " + i);
            }
            assertEquals(Double.doubleToLongBits(cpu.summary().trainingCost()),
                    Double.doubleToLongBits(auto.summary().trainingCost()));
            assertArrayEquals(cpu.summary().clusterSizes(), auto.summary().clusterSizes());
            assertEquals("cpu", auto.summary().backend(), "every pass was recomputed on the CPU");

            CudaException e = assertThrows(CudaException.class,
                    () -> est.copy(new org.apache.spark.ml.param.ParamMap()).setBackend("gpu").fit(blobs));
            String msg = e.getMessage();
            assertTrue(msg.contains(KMeansStep.PHASE) && msg.contains("injected") && msg.contains("backend=gpu"), msg);
        } finally {
            blobs.unpersist();
        }
        assertTrue(Set.of("cpu", "gpu").contains(
                est.copy(new org.apache.spark.ml.param.ParamMap()).setBackend("auto").fit(blobs).summary().backend()));
    }
}
