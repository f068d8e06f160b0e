package io.sparkgpu.tsne;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The forces kernels (tsne_attr_sell_d*, tsne_s2g_d*, tsne_g2s_d*) against their CPU twins, bit for bit, on awkward
 * sizes (1 row, warp and window edges, empty rows, a long hub row, slices with an offset, p = 1..8, dims 1-3),
 * with P resident across calls, from two threads at once, and a timing at n = 10^6.
 */
@Tag("gpu")
class TsneForcesGpuTest {

    @Test
    void attractiveKernelEqualsTwinOnAwkwardSizes() {
        GpuTestSupport.deviceOrSkip();
        long seed = 1;
        for (int dim = 1; dim <= 3; dim++) {
            for (int rows : new int[] {1, 31, 32, 33, 255, 256, 257, 1000, 4099}) {
                int offset = rows % 3 == 0 ? 17 : 0;
                int n = Math.max(rows + offset + 5, 700);
                double[] y = TsneForcesTestData.clusters(n, dim, 5, 40, seed++);
                SparseRows p = TsneForcesTestData.randomRows(n, offset, rows, 3, 180, rows > 40 ? 650 : 0, seed++);
                double[] cpu = TsneForces.attractiveCpu(p, y, dim);
                String what = "dim " + dim + " rows " + rows + " offset " + offset;
                assertArrayEquals(cpu, TsneForces.attractive(p, y, dim, Backend.GPU), 0.0, what + " (upload)");
                double[] y2 = TsneForcesTestData.clusters(n, dim, 5, 40, seed++);
                assertArrayEquals(TsneForces.attractiveCpu(p, y2, dim), TsneForces.attractive(p, y2, dim, Backend.GPU),
                        0.0, what + " (resident P, new y)");
                TsneForces.release(p);
                assertArrayEquals(TsneForces.attractiveCpu(p, y2, dim), TsneForces.attractive(p, y2, dim, Backend.GPU),
                        0.0, what + " (after release)");
                TsneForces.release(p);
                // a caller key: a copy of the slice (as a later Spark task deserialises it) finds the resident P
                String key = "test-" + seed;
                assertArrayEquals(cpu, TsneForces.attractive(p, key, y, dim, Backend.GPU), 0.0, what + " (keyed)");
                SparseRows copy = new SparseRows(p.n, p.rowOffset, p.rows, p.rowPtr.clone(), p.col.clone(),
                        p.val.clone());
                assertArrayEquals(cpu, TsneForces.attractive(copy, key, y, dim, Backend.GPU), 0.0,
                        what + " (keyed copy)");
                TsneForces.release(key);
            }
        }
    }

    @Test
    void attractiveKernelHandlesEmptyRowsAndAnEmptySlice() {
        GpuTestSupport.deviceOrSkip();
        double[] y = TsneForcesTestData.clusters(50, 2, 2, 10, 3);
        SparseRows empty = new SparseRows(50, 10, 5, new int[6], new int[0], new double[0]);
        assertArrayEquals(new double[10], TsneForces.attractive(empty, y, 2, Backend.GPU), 0.0, "empty slice");
        SparseRows zero = new SparseRows(50, 49, 0, new int[1], new int[0], new double[0]);
        assertEquals(0, TsneForces.attractive(zero, y, 2, Backend.GPU).length);
        TsneForces.release(empty);
    }

    @Test
    void s2gAndG2sKernelsEqualTwinsBitForBit() {
        GpuTestSupport.deviceOrSkip();
        long seed = 100;
        for (int dim = 1; dim <= 3; dim++) {
            for (int p = 1; p <= 8; p++) {
                if (dim == 3 && p > 5 && p != 8) {
                    continue;
                }
                for (int rows : new int[] {1, 255, 257, 3001}) {
                    long nTotal = rows + 1000L;
                    double[] y = TsneForcesTestData.clusters(rows, dim, 3, 25, seed++);
                    int boxes = dim == 3 ? 5 : 9;
                    TsneGridOptions opt = new TsneGridOptions(p, 0.3, boxes, new int[] {0, boxes, boxes, boxes});
                    InterpGrid g = TsneForcesTestData.plan(y, rows, dim, opt);
                    String what = "dim " + dim + " p " + p + " rows " + rows;
                    long[] cpu = TsneForces.s2gCpu(g, nTotal, y, rows);
                    assertArrayEquals(cpu, TsneForces.s2g(g, nTotal, y, rows, Backend.GPU), what + ": S2G");
                    double[] phi = new double[g.charges() * g.nodes()];
                    Random r = new Random(seed++);
                    for (int t = 0; t < phi.length; t++) {
                        phi[t] = r.nextDouble() * nTotal * (t < g.nodes() ? 1 : 10);
                    }
                    Repulsion c = TsneForces.g2sCpu(g, nTotal, TsneForces.zShift(nTotal), phi, y, rows);
                    Repulsion gg = TsneForces.g2s(g, nTotal, phi, y, rows, Backend.GPU);
                    assertArrayEquals(c.force, gg.force, 0.0, what + ": G2S forces");
                    assertArrayEquals(c.zFixed, gg.zFixed, what + ": z sum");
                    assertEquals(c.zShift, gg.zShift);
                }
            }
        }
    }

    /** The whole repulsive pipeline on the GPU equals the CPU pipeline for 1, 2 and 5 row slices. */
    @Test
    void gpuPipelineEqualsCpuPipelineForAnySplit() {
        GpuTestSupport.deviceOrSkip();
        for (int dim = 1; dim <= 3; dim++) {
            int n = 1203;
            double[] y = TsneForcesTestData.clusters(n, dim, 4, 20, 70 + dim);
            TsneGridOptions opt = new TsneGridOptions(3, 1.0, 8, new int[] {0, 400, 200, 40});
            TsneForcesTest.Rep cpu = TsneForcesTest.repulsion(y, n, dim, opt, new int[] {0, n}, Backend.CPU);
            for (int[] cuts : new int[][] {{0, n}, {0, 600, n}, {0, 1, 300, 301, 900, n}}) {
                TsneForcesTest.Rep gpu = TsneForcesTest.repulsion(y, n, dim, opt, cuts, Backend.GPU);
                assertArrayEquals(cpu.charges, gpu.charges, "dim " + dim);
                assertArrayEquals(cpu.force, gpu.force, 0.0, "dim " + dim);
                assertArrayEquals(cpu.zTotal, gpu.zTotal, "dim " + dim);
            }
        }
    }

    /** Two threads using one device at once (shared resident P, separate streams) get the twins' answers. */
    @Test
    void concurrentCallersOnOneDeviceGetTheSameAnswers() throws Exception {
        GpuTestSupport.deviceOrSkip();
        int n = 5000;
        int dim = 2;
        SparseRows p = TsneForcesTestData.randomRows(n, 0, n, 60, 180, 0, 5);
        double[] y = TsneForcesTestData.clusters(n, dim, 6, 40, 6);
        InterpGrid g = TsneForcesTestData.plan(y, n, dim, TsneForcesTestData.options(dim));
        double[] attr = TsneForces.attractiveCpu(p, y, dim);
        long[] q = TsneForces.s2gCpu(g, n, y, n);
        double[] phi = TsneForces.chargesToDouble(g, n, q);
        Repulsion rep = TsneForces.g2sCpu(g, n, TsneForces.zShift(n), phi, y, n);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                fs.add(pool.submit(() -> {
                    for (int it = 0; it < 15; it++) {
                        assertArrayEquals(attr, TsneForces.attractive(p, y, dim, Backend.GPU), 0.0, "attractive");
                        assertArrayEquals(q, TsneForces.s2g(g, n, y, n, Backend.GPU), "S2G");
                        Repulsion r = TsneForces.g2s(g, n, phi, y, n, Backend.GPU);
                        assertArrayEquals(rep.force, r.force, 0.0, "G2S");
                        assertArrayEquals(rep.zFixed, r.zFixed, "z");
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdown();
            TsneForces.release(p);
        }
    }

    /** n = 10^6, dim 2, k = 90 (rows of 90..180 entries): wall time per call, transfers included; checks the twin. */
    @Test
    void timingAtAMillionPoints() {
        GpuTestSupport.deviceOrSkip();
        int n = 1_000_000;
        int dim = 2;
        SparseRows p = TsneForcesTestData.randomRows(n, 0, n, 90, 180, 0, 11);
        double[] y = TsneForcesTestData.clusters(n, dim, 20, 100, 12);
        InterpGrid g = TsneForcesTestData.plan(y, n, dim, TsneForcesTestData.options(dim));
        long t0 = System.nanoTime();
        double[] attr = TsneForces.attractive(p, y, dim, Backend.GPU);
        double first = (System.nanoTime() - t0) / 1e6;
        int reps = 10;
        double[] ms = new double[3];
        double[] kernel = new double[3];
        long[] q = null;
        Repulsion rep = null;
        double[] phi = null;
        for (int it = 0; it < reps; it++) {
            long a = System.nanoTime();
            attr = TsneForces.attractive(p, y, dim, Backend.GPU);
            kernel[0] += TsneForces.lastGpuKernelMillis() / reps;
            long b = System.nanoTime();
            q = TsneForces.s2g(g, n, y, n, Backend.GPU);
            kernel[1] += TsneForces.lastGpuKernelMillis() / reps;
            long c = System.nanoTime();
            if (phi == null) {
                phi = TsneForces.chargesToDouble(g, n, q);
            }
            long d = System.nanoTime();
            rep = TsneForces.g2s(g, n, phi, y, n, Backend.GPU);
            kernel[2] += TsneForces.lastGpuKernelMillis() / reps;
            long e = System.nanoTime();
            ms[0] += (b - a) / 1e6 / reps;
            ms[1] += (c - b) / 1e6 / reps;
            ms[2] += (e - d) / 1e6 / reps;
        }
        System.out.printf("[tsne forces] n %d dim %d nnz %d grid %d nodes: first attractive (P upload) %.1f ms; per "
                + "call attractive %.2f ms, S2G %.2f ms, G2S %.2f ms (wall, transfers included); kernels alone "
                + "%.3f, %.3f, %.3f ms%n", n, dim, p.nnz(), g.nodes(), first, ms[0], ms[1], ms[2], kernel[0],
                kernel[1], kernel[2]);
        assertArrayEquals(TsneForces.attractiveCpu(p, y, dim), attr, 0.0, "attractive at 10^6");
        assertArrayEquals(TsneForces.s2gCpu(g, n, y, n), q, "S2G at 10^6");
        Repulsion cpu = TsneForces.g2sCpu(g, n, TsneForces.zShift(n), phi, y, n);
        assertArrayEquals(cpu.force, rep.force, 0.0, "G2S at 10^6");
        assertArrayEquals(cpu.zFixed, rep.zFixed, "z at 10^6");
        TsneForces.release(p);
    }
}
