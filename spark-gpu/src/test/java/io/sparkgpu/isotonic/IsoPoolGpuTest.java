package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The device sort and pool ({@link IsoPoolGpu}) against {@link IsoPoints#pool}, and the device sort+pool+PAVA-merge
 * against the CPU's pool + PAVA, bitwise (exact integer sums and comparisons: no tolerance). No Spark types.
 */
@Tag("gpu")
class IsoPoolGpuTest {
    private static final int[] SIZES = {0, 1, 2, 255, 257, 4097, 100_003};

    /**
     * Rows with many ties (features from {@code distinct} values, some -0.0 among 0.0), some weights 0 and, for
     * {@code kind} 1, features spread over the whole double range (negative, tiny, huge: every radix pass works).
     */
    static IsoTestData rows(int n, int distinct, long seed, boolean weighted, int kind) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] x = new double[n];
        double[] y = new double[n];
        double[] w = weighted ? new double[n] : null;
        for (int i = 0; i < n; i++) {
            int k = r.nextInt(distinct);
            if (kind == 1) {
                x[i] = k == 0 ? -0.0 : (k % 2 == 0 ? -1 : 1) * Math.scalb(1.0 + k * 1e-3, (k * 37) % 600 - 300);
            } else {
                x[i] = k == 0 && r.nextBoolean() ? -0.0 : (k - distinct / 2) * 0.5;
            }
            y[i] = Math.sin(k) + 0.3 * r.nextGaussian();
            if (weighted) {
                w[i] = r.nextInt(5) == 0 ? 0.0 : 0.25 + r.nextDouble();
            }
        }
        return new IsoTestData(x, y, w);
    }

    private static void assertSamePoints(IsoPoints cpu, IsoPoints gpu, String what) {
        assertEquals(cpu.n, gpu.n, what + ": distinct features");
        assertEquals(cpu.rows, gpu.rows, what + ": rows kept");
        assertEquals(cpu.zeroWeightRows, gpu.zeroWeightRows, what + ": rows of weight 0");
        for (int i = 0; i < cpu.n; i++) { // bit patterns: +0.0 normalisation must match
            assertEquals(Double.doubleToRawLongBits(cpu.x[i]), Double.doubleToRawLongBits(gpu.x[i]),
                    what + ": feature " + i);
        }
        assertArrayEquals(cpu.acc, gpu.acc, what + ": exact sums");
    }

    @Test
    void devicePoolEqualsHostPool() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        for (int n : SIZES) {
            for (int kind = 0; kind <= 1; kind++) {
                for (boolean weighted : new boolean[] {false, true}) {
                    for (boolean negate : new boolean[] {false, true}) {
                        int distinct = kind == 1 ? 5000 : Math.max(1, n / 7);
                        IsoTestData d = rows(n, distinct, 31L * n + kind, weighted, kind);
                        IsoScales sc = IsoScales.forData(d.y, d.w, n);
                        String what = "n=" + n + " kind=" + kind + " weighted=" + weighted + " negate=" + negate;
                        IsoPoints cpu = IsoPoints.pool(d.x, d.y, d.w, n, negate, sc, false, IsoColumns.DEFAULT);
                        IsoPoints gpu = IsoPoolGpu.pool(dev, d.x, d.y, d.w, n, negate, sc, IsoColumns.DEFAULT);
                        assertSamePoints(cpu, gpu, what);
                    }
                }
            }
        }
    }

    /**
     * A part of the fit's rows in several blocks (empty, weighted, unweighted among weighted), uploaded one after the
     * other: the device gives the host's {@link IsoPoints#poolPart} of their concatenation, and like it does not
     * reject a feature whose partial weight quantizes to 0 (the merged totals are checked later).
     */
    @Test
    void devicePartPoolOfSeveralBlocksEqualsHostPoolOfTheirConcatenation() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        IsoTestData a = rows(40_001, 900, 5, true, 0);
        IsoTestData b = rows(25_000, 900, 6, false, 0);
        IsoTestData c = rows(7, 900, 7, true, 1);
        List<IsoBlock> blocks = List.of(new IsoBlock(a.x, a.y, a.w, a.x.length), IsoBlock.EMPTY,
                new IsoBlock(b.x, b.y, null, b.x.length), new IsoBlock(c.x, c.y, c.w, c.x.length));
        IsoBlock all = IsoBlock.concat(blocks);
        IsoScales sc = IsoScales.forData(all.y, all.w, all.n);
        for (boolean negate : new boolean[] {false, true}) {
            IsoPoints cpu = IsoPoints.poolPart(all.x, all.y, all.w, all.n, negate, sc, IsoColumns.DEFAULT);
            assertSamePoints(cpu, IsoPoolGpu.poolPart(dev, blocks, negate, sc, IsoColumns.DEFAULT), "negate=" + negate);
            assertSamePoints(cpu, IsotonicSolver.poolPart(blocks, negate, sc, IsoColumns.DEFAULT, Backend.GPU).value,
                    "the solver's dispatch, negate=" + negate);
            // the whole solve of the blocks uploaded in place (one range of many packed blocks): the CPU's blocks
            L2Blocks want = IsotonicCpu.pava(IsoPoints.pool(all.x, all.y, all.w, all.n, negate, sc, false,
                    IsoColumns.DEFAULT));
            IsotonicSolver.Solved got = IsoPoolGpu.solve(dev, blocks, negate, sc, IsoColumns.DEFAULT, 256, null);
            assertTrue(got.gpu, "solved on the device");
            assertEquals(cpu.rows, got.rows, "rows");
            assertEquals(cpu.zeroWeightRows, got.zeroWeightRows, "zero-weight rows");
            assertTrue(want.sameAs(got.l2()), "blocks, negate=" + negate + ": GPU " + got.l2() + " vs CPU " + want);
        }
        // weights of 1e-300 quantize to 0 at a scale set by weights of 1e6: an error for a whole fit, not for a part
        double[] x = {1, 1, 2};
        double[] y = {1, 2, 3};
        double[] w = {1e-300, 1e-300, 1.0};
        IsoScales big = IsoScales.fromBounds(3, 1e6, 1e6);
        List<IsoBlock> tiny = List.of(new IsoBlock(x, y, w, 3));
        assertSamePoints(IsoPoints.poolPart(x, y, w, 3, false, big, IsoColumns.DEFAULT),
                IsoPoolGpu.poolPart(dev, tiny, false, big, IsoColumns.DEFAULT), "tiny partial weights");
        assertEquals(0, IsoPoolGpu.poolPart(dev, List.of(IsoBlock.EMPTY), false, big, IsoColumns.DEFAULT).n);
    }

    @Test
    void deviceSolveEqualsCpuSolveBitwise() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        for (int n : SIZES) {
            for (int kind = 0; kind <= 1; kind++) {
                for (boolean negate : new boolean[] {false, true}) {
                    IsoTestData d = rows(n, kind == 1 ? 5000 : Math.max(1, n / 3), 7L * n + kind, true, kind);
                    IsoScales sc = IsoScales.forData(d.y, d.w, n);
                    IsoPoints p = IsoPoints.pool(d.x, d.y, d.w, n, negate, sc, false, IsoColumns.DEFAULT);
                    L2Blocks cpu = IsotonicCpu.pava(p);
                    for (int chunk : new int[] {1, 256}) {
                        double[] ms = new double[1];
                        IsotonicSolver.Solved g = IsoPoolGpu.solve(dev, d.x, d.y, d.w, n, negate, sc, IsoColumns.DEFAULT,
                                chunk, ms);
                        String what = "n=" + n + " kind=" + kind + " negate=" + negate + " chunk=" + chunk;
                        assertTrue(cpu.sameAs(g.l2()), what + ": GPU " + g.l2() + " vs CPU " + cpu);
                        assertEquals(p.rows, g.rows, what);
                        assertEquals(p.zeroWeightRows, g.zeroWeightRows, what);
                        if (cpu.m > 0) {
                            IsoTestData.assertKkt(p, g.l2(), sc);
                        }
                    }
                }
            }
        }
    }

    @Test
    void allEqualFeaturesAndAllZeroWeights() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        int n = 10_001;
        double[] x = new double[n];
        double[] y = new double[n];
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = i % 2 == 0 ? 0.0 : -0.0; // one feature: every radix pass is skipped
            y[i] = i % 13;
            w[i] = 1 + i % 3;
        }
        IsoScales sc = IsoScales.forData(y, w, n);
        assertSamePoints(IsoPoints.pool(x, y, w, n, false, sc, false, IsoColumns.DEFAULT),
                IsoPoolGpu.pool(dev, x, y, w, n, false, sc, IsoColumns.DEFAULT), "one feature");
        java.util.Arrays.fill(w, 0.0);
        IsotonicSolver.Solved g = IsoPoolGpu.solve(dev, x, y, w, n, false, sc, IsoColumns.DEFAULT, 256, null);
        assertEquals(0, g.l2().m);
        assertEquals(0, g.rows);
        assertEquals(n, g.zeroWeightRows);
    }

    @Test
    void badInputGivesTheHostMessage() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        IsoColumns cols = new IsoColumns("labelCol 'l'", "featuresCol 'f'", "weightCol 'wt'");
        double[][] bad = {
            {Double.NaN, 1, 1}, {1, Double.POSITIVE_INFINITY, 1}, {1, 1, -0.5}, {1, 1, Double.NaN},
            {Double.NEGATIVE_INFINITY, 1, 1},
        };
        for (double[] b : bad) {
            int n = 3000;
            IsoTestData d = rows(n, 50, 3, true, 0);
            d.x[1777] = b[0];
            d.y[1777] = b[1];
            d.w[1777] = b[2];
            d.x[2500] = Double.NaN; // a later bad row: the message names the first one, as the host's
            IsoScales sc = new IsoScales(60, 60);
            IllegalArgumentException host = assertThrows(IllegalArgumentException.class,
                    () -> IsoPoints.pool(d.x, d.y, d.w, n, false, sc, false, cols));
            IllegalArgumentException gpu = assertThrows(IllegalArgumentException.class,
                    () -> IsoPoolGpu.solve(dev, d.x, d.y, d.w, n, false, sc, cols, 256, null));
            assertEquals(host.getMessage(), gpu.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> IsoPoolGpu.pool(dev, d.x, d.y, d.w, n, false, sc, cols));
        }
        // a positive weight far below the scale of the fit: quantizes to 0
        double[] x = {1, 2, 3};
        double[] y = {1, 2, 3};
        double[] w = {1, 1e-40, 1};
        IsoScales sc = IsoScales.forData(y, w, 3);
        IllegalArgumentException host = assertThrows(IllegalArgumentException.class,
                () -> IsoPoints.pool(x, y, w, 3, false, sc, false, cols));
        IllegalArgumentException gpu = assertThrows(IllegalArgumentException.class,
                () -> IsoPoolGpu.solve(dev, x, y, w, 3, false, sc, cols, 256, null));
        assertEquals(host.getMessage(), gpu.getMessage());
    }

    @Test
    void solverTakesTheDevicePathAndFreesItsMemory() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        IsoTestData d = rows(50_001, 2000, 9, true, 0);
        IsoScales sc = IsoScales.forData(d.y, d.w, d.x.length);
        IsotonicConfig cfg = new IsotonicConfig();
        cfg.backend = Backend.GPU;
        long before = dev.allocatedBytes();
        IsotonicSolver.Solved g = IsotonicSolver.solveRows(d.x, d.y, d.w, d.x.length, true, sc, IsoColumns.DEFAULT, cfg);
        assertEquals(before, dev.allocatedBytes(), "device buffers released");
        assertTrue(g.gpu);
        cfg.backend = Backend.CPU;
        IsotonicSolver.Solved c = IsotonicSolver.solveRows(d.x, d.y, d.w, d.x.length, true, sc, IsoColumns.DEFAULT, cfg);
        assertTrue(c.l2().sameAs(g.l2()));
        assertEquals(c.rows, g.rows);
        assertEquals(c.zeroWeightRows, g.zeroWeightRows);
        cfg.backend = Backend.GPU;
        IsotonicResult local = IsotonicLocal.fit(d.x, d.y, d.w, cfg, new double[] {-100, 0.25, 3}, IsoColumns.DEFAULT);
        IsotonicResult cpu = IsotonicLocal.fitCpu(d.x, d.y, d.w, true);
        assertArrayEquals(cpu.boundaries, local.boundaries);
        assertArrayEquals(cpu.predictions, local.predictions);
    }
}
