package io.sparkgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.isotonic.IsoColumns;
import io.sparkgpu.isotonic.IsoPoints;
import io.sparkgpu.isotonic.IsoScales;
import io.sparkgpu.isotonic.IsotonicEngine;
import io.sparkgpu.isotonic.L2Blocks;
import io.sparkgpu.kmeans.KMeansData;
import io.sparkgpu.kmeans.KMeansEngine;
import io.sparkgpu.kmeans.KMeansScales;
import io.sparkgpu.pde.FhnConfig;
import io.sparkgpu.pde.FhnParams;
import io.sparkgpu.pde.FhnResult;
import io.sparkgpu.pde.FhnStep;
import io.sparkgpu.pde.FhnTestData;
import io.sparkgpu.sort.SortEngine;
import io.sparkgpu.spline.Spline;
import io.sparkgpu.spline.SplineConfig;
import io.sparkgpu.spline.SplineEngine;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.Arrays;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 item 7 on the GPU host: each capability run on the device under a tiny {@value DeviceMemoryBudget#KEY}
 * (64 KiB: many chunks) gives the bits of the unchunked device run and of the CPU twin; working sets that cannot be
 * chunked (spline build) fail under {@code gpu} naming the budget and give the CPU bits under {@code auto}. The sizes
 * below force several chunks (asserted through the planner, which the CPU tests cover).
 */
@Tag("gpu")
class DeviceMemoryBudgetGpuTest {
    static final String TINY = "64k";

    @AfterEach
    void clear() {
        System.clearProperty(DeviceMemoryBudget.KEY);
    }

    private static <T> T under(String budget, Supplier<T> body) {
        if (budget == null) {
            System.clearProperty(DeviceMemoryBudget.KEY);
        } else {
            System.setProperty(DeviceMemoryBudget.KEY, budget);
        }
        try {
            return body.get();
        } finally {
            System.clearProperty(DeviceMemoryBudget.KEY);
        }
    }

    @Test
    void kmeansPassInChunks() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(1);
        int n = 40_000;
        int d = 5;
        int k = 7;
        double[] x = new double[n * d];
        double[] w = new double[n];
        double[] maxAbs = new double[d];
        for (int i = 0; i < n * d; i++) {
            x[i] = r.nextGaussian() * (1 + i % d) + (i / d % k);
            maxAbs[i % d] = Math.max(maxAbs[i % d], Math.abs(x[i]));
        }
        Arrays.fill(w, 1.0);
        KMeansData data = new KMeansData(x, w, n, d, null);
        double[] centres = Arrays.copyOf(x, k * d);
        KMeansScales sc = KMeansScales.fromBounds(n, 1.0, maxAbs, false);
        assertTrue(DeviceMemoryBudget.chunks("k", n, 0, 8L * (d + 1) + 12, 64 << 10).length > 10);
        int[] lc = new int[n];
        double[] dc = new double[n];
        long[] cpu = KMeansEngine.cpuStep(data, centres, k, false, sc, true, lc, dc, false);
        for (String budget : new String[] {null, TINY}) {
            int[] lg = new int[n];
            double[] dg = new double[n];
            long[] gpu = under(budget, () -> KMeansEngine.gpuStep(dev, data, centres, k, false, sc, true, lg, dg, false));
            assertArrayEquals(cpu, gpu, "accumulator, budget " + budget);
            assertArrayEquals(lc, lg, "labels, budget " + budget);
            assertArrayEquals(dc, dg, "distances, budget " + budget);
            long[] acc = under(budget, () -> KMeansEngine.gpuStep(dev, data, centres, k, false, sc, true, null, null,
                    false));
            assertArrayEquals(cpu, acc, "accumulator alone, budget " + budget);
        }
    }

    @Test
    void splineQueriesInChunksAndBuildOverTheBudget() {
        GpuTestSupport.deviceOrSkip();
        int n = 300;
        double[] kx = new double[n];
        double[] ky = new double[n];
        Random r = new Random(2);
        for (int i = 0; i < n; i++) {
            kx[i] = i + r.nextDouble() * 0.5;
            ky[i] = (i == 0 ? 0 : ky[i - 1]) + r.nextDouble();
        }
        Spline s = SplineEngine.buildCpu(SplineConfig.Kind.SCHUMAKER, kx, ky, null);
        int q = 50_000;
        double[] z = new double[q];
        for (int i = 0; i < q; i++) {
            z[i] = -5 + r.nextDouble() * (n + 10);
        }
        double[] vc = new double[q];
        double[] dcv = new double[q];
        SplineEngine.evalCpu(s, z, SplineConfig.Extrapolate.LINEAR, vc, dcv);
        double[] ic = new double[q];
        SplineEngine.inverseCpu(s, vc, SplineConfig.Extrapolate.LINEAR, ic);
        for (String budget : new String[] {null, TINY}) {
            double[] vg = new double[q];
            double[] dg = new double[q];
            BackendChooser.Ran<Void> ran = under(budget, () -> SplineEngine.eval(s, z, SplineConfig.Extrapolate.LINEAR,
                    Backend.GPU, vg, dg));
            assertTrue(ran.onGpu());
            assertArrayEquals(vc, vg, "values, budget " + budget);
            assertArrayEquals(dcv, dg, "derivatives, budget " + budget);
            assertArrayEquals(ic, under(budget, () -> SplineEngine.inverse(s, vc, SplineConfig.Extrapolate.LINEAR,
                    Backend.GPU)), "inverse, budget " + budget);
        }
        // the first query outside the knots is reported with its global index, as without chunks
        double[] zo = new double[q];
        for (int i = 0; i < q; i++) {
            zo[i] = kx[0] + (kx[n - 1] - kx[0]) * (i / (double) q);
        }
        zo[q - 3] = n + 100;
        zo[q - 1] = -100;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> under(TINY,
                () -> SplineEngine.eval(s, zo, SplineConfig.Extrapolate.ERROR, Backend.GPU, new double[q], null)));
        assertTrue(e.getMessage().contains("(query " + (q - 3) + ")"), e.getMessage());
        // the build needs every knot at once: over the budget, gpu fails naming it, auto builds on the CPU twin
        CudaException over = assertThrows(CudaException.class,
                () -> under("1k", () -> SplineEngine.fromIsotonic(kx, ky, SplineConfig.Kind.SCHUMAKER, Backend.GPU)));
        assertTrue(over.getMessage().contains(DeviceMemoryBudget.KEY + "=1024 bytes"), over.getMessage());
        Spline auto = under("1k", () -> SplineEngine.fromIsotonic(kx, ky, SplineConfig.Kind.SCHUMAKER, Backend.AUTO));
        assertArrayEquals(s.t, auto.t);
        assertArrayEquals(s.a, auto.a);
        assertArrayEquals(s.b, auto.b);
    }

    @Test
    void fhnSweepInBatches() {
        GpuTestSupport.deviceOrSkip();
        FhnParams[] ps = FhnTestData.sweep(11);
        for (String scheme : new String[] {FhnConfig.EXPLICIT, FhnConfig.CRANK_NICOLSON}) {
            FhnConfig c = FhnTestData.small(scheme, FhnConfig.THOMAS, FhnConfig.NEUMANN, FhnConfig.CONSTANT);
            c.backend = Backend.CPU;
            FhnResult[] cpu = FhnStep.run(c, ps, 2).value;
            c.backend = Backend.GPU;
            for (String budget : new String[] {null, TINY}) {
                BackendChooser.Ran<FhnResult[]> g = under(budget, () -> FhnStep.run(c, ps, 2));
                assertTrue(g.onGpu());
                for (int j = 0; j < ps.length; j++) {
                    String what = scheme + " row " + j + ", budget " + budget;
                    FhnResult a = cpu[j];
                    FhnResult b = g.value[j];
                    assertArrayEquals(a.v, b.v, what);
                    assertArrayEquals(a.w, b.w, what);
                    assertArrayEquals(a.field, b.field, what);
                    assertEquals(Double.doubleToLongBits(a.maxV), Double.doubleToLongBits(b.maxV), what);
                    assertEquals(Double.doubleToLongBits(a.tNear), Double.doubleToLongBits(b.tNear), what);
                    assertEquals(Double.doubleToLongBits(a.tFar), Double.doubleToLongBits(b.tFar), what);
                    assertEquals(a.pulseCount, b.pulseCount, what);
                }
            }
        }
    }

    @Test
    void fhn2dOverTheBudgetRunsOnTheCpuTwinUnderAuto() {
        GpuTestSupport.deviceOrSkip();
        io.sparkgpu.pde.Fhn2dConfig c = new io.sparkgpu.pde.Fhn2dConfig();
        c.cellsX = 67;
        c.cellsY = 45;
        c.lengthX = 60;
        c.lengthY = 40;
        c.dt = 0.1;
        c.tEnd = 4;
        c.initial = io.sparkgpu.pde.Fhn2dConfig.SPIRAL;
        FhnParams p = new FhnParams(0.1, 0.05, 0.5, 0, 1.0);
        c.backend = Backend.CPU;
        io.sparkgpu.pde.Fhn2d.Result cpu = FhnStep.run2d(c, p).value;
        c.backend = Backend.GPU;
        CudaException e = assertThrows(CudaException.class, () -> under(TINY, () -> FhnStep.run2d(c, p)));
        assertTrue(e.getMessage().contains(DeviceMemoryBudget.KEY + "=65536 bytes"), e.getMessage());
        c.backend = Backend.AUTO;
        BackendChooser.Ran<io.sparkgpu.pde.Fhn2d.Result> auto = under(TINY, () -> FhnStep.run2d(c, p));
        assertTrue(!auto.onGpu());
        assertArrayEquals(cpu.v, auto.value.v);
        assertArrayEquals(cpu.w, auto.value.w);
        BackendChooser.Ran<io.sparkgpu.pde.Fhn2d.Result> gpu = under(null, () -> FhnStep.run2d(c, p));
        assertTrue(gpu.onGpu());
        assertArrayEquals(cpu.v, gpu.value.v);
    }

    @Test
    void sortInChunksAndKeyWindows() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(3);
        int n = 100_000;
        int m = 1000;
        int[] keys = new int[n];
        for (int i = 0; i < n; i++) {
            keys[i] = r.nextInt(10) == 0 ? 7 : r.nextInt(m);
        }
        int[] sorted = SortEngine.sortKeys(keys, m, 2);
        int[] order = SortEngine.order(keys, m, 2);
        long[] orderLong = SortEngine.orderLong(keys, m, 1L << 40, 2);
        for (String budget : new String[] {null, TINY}) {
            assertArrayEquals(sorted, under(budget, () -> SortEngine.gpuSortKeys(dev, keys, m)), "keys, " + budget);
            assertArrayEquals(order, under(budget, () -> SortEngine.gpuOrder(dev, keys, m)), "order, " + budget);
            assertArrayEquals(orderLong, under(budget, () -> SortEngine.gpuOrderLong(dev, keys, m, 1L << 40)),
                    "long order, " + budget);
        }
    }

    @Test
    void isotonicInChunksMergedExactly() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(4);
        int len = 20_000;
        double[] x = new double[len];
        double[] y = new double[len];
        double[] w = new double[len];
        for (int i = 0; i < len; i++) {
            x[i] = r.nextInt(5000) * 0.01;
            y[i] = Math.sin(x[i]) + 0.1 * x[i] + r.nextGaussian();
            w[i] = 0.5 + r.nextDouble();
        }
        IsoPoints p = IsoPoints.pool(x, y, w, len, false, IsoScales.forData(y, w, len), false, IsoColumns.DEFAULT);
        assertTrue(DeviceMemoryBudget.chunks("i", p.n, 4096, 104, 64 << 10).length > 5);
        L2Blocks cpu = IsotonicEngine.pava(p);
        for (String budget : new String[] {null, TINY}) {
            assertTrue(cpu.sameAs(under(budget, () -> IsotonicEngine.gpuPavaMerge(dev, p,
                    IsotonicEngine.DEFAULT_CHUNK, null))), "PAVA-merge, budget " + budget);
            assertTrue(cpu.sameAs(under(budget, () -> IsotonicEngine.gpuMls(dev, p, null))), "MLS, budget " + budget);
        }
    }
}
