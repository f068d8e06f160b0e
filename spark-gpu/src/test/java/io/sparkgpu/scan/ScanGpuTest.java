package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * GPU kernels against the CPU twin on grids of awkward sizes (odd and even axes, single cells, axes of 1,
 * shared-memory and global-memory strips, slices that cut strips and work items). Both sides evaluate every
 * LLR with the same correctly rounded operations and our own logarithm, so the expected difference is zero:
 * the same best range and the same LLR bits (the requirement is 1e-12 relative; we check both).
 */
@Tag("gpu")
class ScanGpuTest {
    static final List<ScanShape> SHAPES = List.of(new ScanShape(1), new ScanShape(2), new ScanShape(3),
            new ScanShape(255), new ScanShape(256), new ScanShape(257), new ScanShape(1023), new ScanShape(7001),
            new ScanShape(1, 1), new ScanShape(1, 300), new ScanShape(300, 1), new ScanShape(17, 33),
            new ScanShape(64, 63), new ScanShape(129, 7), new ScanShape(5, 6, 7), new ScanShape(1, 1, 9),
            new ScanShape(16, 15, 3));

    static void assertSame(ScanBest cpu, ScanBest gpu, String what) {
        assertEquals(cpu.index, gpu.index, what + ": best range index (cpu LLR " + cpu.llr + ", gpu LLR " + gpu.llr + ")");
        double rel = Math.abs(cpu.llr - gpu.llr) / Math.max(Math.abs(cpu.llr), Double.MIN_NORMAL);
        assertTrue(cpu.llr == gpu.llr || rel <= 1e-12, what + ": LLR relative difference " + rel);
        assertEquals(Double.doubleToLongBits(cpu.llr), Double.doubleToLongBits(gpu.llr), what + ": LLR bits");
    }

    @Test
    void bestRangeEqualsCpuTwinOnAwkwardShapes() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        long seed = 1;
        for (ScanModel model : ScanModel.values()) {
            for (ScanShape sh : SHAPES) {
                ScanTables t = ScanTables.of(ScanTestData.grid(model, sh, seed++));
                ScanDirection dir = ScanDirection.values()[(int) (seed % 3)];
                ScanSpec spec = ScanSpec.all(dir);
                try (ScanGpu.Session s = new ScanGpu.Session(dev, t)) {
                    assertSame(ScanCpu.scan(t, spec, 0, sh.ranges()), s.best(spec, 0, sh.ranges()),
                            model.id() + " " + sh + " " + dir.id());
                }
            }
        }
    }

    @Test
    void slicesThatCutStripsAndItemsMatchTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(3);
        long seed = 100;
        for (ScanModel model : ScanModel.values()) {
            for (ScanShape sh : List.of(new ScanShape(4001), new ScanShape(33, 20), new ScanShape(9, 8, 7))) {
                ScanTables t = ScanTables.of(ScanTestData.grid(model, sh, seed++));
                ScanSpec spec = ScanSpec.all(ScanDirection.BOTH);
                try (ScanGpu.Session s = new ScanGpu.Session(dev, t)) {
                    for (int trial = 0; trial < 12; trial++) {
                        long a = (long) (r.nextDouble() * sh.ranges());
                        long b = Math.min(sh.ranges(), a + 1 + (long) (r.nextDouble() * r.nextDouble() * sh.ranges()));
                        assertSame(ScanCpu.scan(t, spec, a, b), s.best(spec, a, b),
                                model.id() + " " + sh + " slice [" + a + ", " + b + ")");
                    }
                    // the union of shares gives the whole answer
                    ScanBest whole = s.best(spec, 0, sh.ranges());
                    ScanBest parts = ScanBest.NONE;
                    for (int p = 0; p < 7; p++) {
                        long[] sl = ScanShape.share(sh.ranges(), p, 7);
                        parts = ScanBest.max(parts, s.best(spec, sl[0], sl[1]));
                    }
                    assertEquals(whole, parts, model.id() + " " + sh + " in 7 shares");
                }
            }
        }
    }

    @Test
    void constraintsAndExclusionsMatchTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(9);
        long seed = 200;
        for (ScanModel model : ScanModel.values()) {
            for (ScanShape sh : List.of(new ScanShape(301), new ScanShape(20, 31), new ScanShape(7, 6, 9))) {
                ScanTables t = ScanTables.of(ScanTestData.grid(model, sh, seed++));
                try (ScanGpu.Session s = new ScanGpu.Session(dev, t)) {
                    for (int trial = 0; trial < 4; trial++) {
                        long min = 1 + r.nextInt(Math.max(1, sh.cells() / 4));
                        long max = min + r.nextInt(sh.cells());
                        ScanSpec spec = new ScanSpec(ScanDirection.values()[trial % 3], min, max, 0.1 + 0.9 * r.nextDouble());
                        for (int e = 0; e < trial; e++) {
                            spec = spec.excluding(ScanTestData.randomBox(sh, r));
                        }
                        assertSame(ScanCpu.scan(t, spec, 0, sh.ranges()), s.best(spec, 0, sh.ranges()),
                                model.id() + " " + sh + " " + spec);
                    }
                }
            }
        }
    }

    @Test
    void replicasAreDrawnAndScannedExactlyAsOnTheCpu() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        long seed = 300;
        for (ScanModel model : ScanModel.values()) {
            for (ScanShape sh : List.of(new ScanShape(997), new ScanShape(31, 24), new ScanShape(6, 7, 5))) {
                ScanTables t = ScanTables.of(ScanTestData.grid(model, sh, seed++));
                ScanSpec spec = new ScanSpec(ScanDirection.HIGH, 1, Long.MAX_VALUE, 0.5);
                try (ScanGpu.Session s = new ScanGpu.Session(dev, t)) {
                    for (int rep = 0; rep < 3; rep++) {
                        assertArrayEquals(ScanReplicas.prefix(t, 42, rep), s.replicaPrefix(42, rep),
                                model.id() + " " + sh + " replica " + rep + " table");
                    }
                    double[] gpu = s.replicaMaxima(spec, 42, 5, 12);
                    double[] cpu = ScanCpu.replicaMaxima(t, spec, 42, 5, 12, null);
                    assertArrayEquals(cpu, gpu, 0.0, model.id() + " " + sh + " replica maxima");
                }
            }
        }
    }

    /** Fractional counts (fixed point, issue 18 item 4): scans, replica tables (units per case) and maxima. */
    @Test
    void fractionalCountsMatchTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        long seed = 400;
        for (ScanModel model : List.of(ScanModel.POISSON, ScanModel.EBP)) {
            for (ScanShape sh : List.of(new ScanShape(997), new ScanShape(7001), new ScanShape(31, 24),
                    new ScanShape(6, 7, 5))) {
                ScanTables t = ScanTables.of(ScanTestData.fractional(model, sh, seed++));
                assertTrue(t.casesShift > 0);
                try (ScanGpu.Session s = new ScanGpu.Session(dev, t)) {
                    for (ScanDirection dir : ScanDirection.values()) {
                        ScanSpec spec = ScanSpec.all(dir);
                        assertSame(ScanCpu.scan(t, spec, 0, sh.ranges()), s.best(spec, 0, sh.ranges()),
                                model.id() + " " + sh + " " + dir.id() + " fractional");
                    }
                    for (int rep = 0; rep < 3; rep++) {
                        assertArrayEquals(ScanReplicas.prefix(t, 42, rep), s.replicaPrefix(42, rep),
                                model.id() + " " + sh + " fractional replica " + rep + " table");
                    }
                    ScanSpec spec = new ScanSpec(ScanDirection.HIGH, 1, Long.MAX_VALUE, 0.5);
                    assertArrayEquals(ScanCpu.replicaMaxima(t, spec, 42, 0, 6, null), s.replicaMaxima(spec, 42, 0, 6),
                            0.0, model.id() + " " + sh + " fractional replica maxima");
                }
            }
        }
    }

    @Test
    void exactTiesGoToTheLowestIndexOnTheGpuToo() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        ScanShape sh = new ScanShape(40, 30);
        double[] c = new double[sh.cells()];
        double[] b = new double[sh.cells()];
        java.util.Arrays.fill(b, 10);
        java.util.Arrays.fill(c, 1);
        for (int[] hot : new int[][] {{3, 2}, {30, 25}, {11, 17}}) {
            c[sh.cell(hot[0], hot[1], 0)] = 9;
        }
        ScanTables t = ScanTables.of(ScanGrid.of(ScanModel.POISSON, sh, c, b, null, null));
        ScanSpec spec = new ScanSpec(ScanDirection.HIGH, 1, 1, 1.0);
        try (ScanGpu.Session s = new ScanGpu.Session(dev, t)) {
            assertSame(ScanCpu.scan(t, spec, 0, sh.ranges()), s.best(spec, 0, sh.ranges()), "three tied cells");
        }
    }

    @Test
    void backendGpuRunsOnTheGpu() {
        GpuTestSupport.deviceOrSkip();
        ScanTables t = ScanTables.of(ScanTestData.grid(ScanModel.POISSON, new ScanShape(50, 40), 77));
        ScanSpec spec = ScanSpec.all(ScanDirection.HIGH);
        BackendChooser.Ran<ScanBest> g = ScanStep.best(Backend.GPU, t, spec, 0, t.shape().ranges());
        assertEquals("gpu", g.backend());
        assertTrue(g.gpuSeconds() > 0);
        assertEquals(ScanCpu.scan(t, spec, 0, t.shape().ranges()), g.value);
        BackendChooser.Ran<double[]> m = ScanStep.replicaMaxima(Backend.GPU, t, spec, 1, 0, 4, null);
        assertEquals("gpu", m.backend());
        assertArrayEquals(ScanCpu.replicaMaxima(t, spec, 1, 0, 4, null), m.value, 0.0);
    }
}
