package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.tsne.TsneForcesTestData;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import io.sparkgpu.tsne.repulsion.Repulsion;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The attractive kernel (tsne_attr_sell_d*) against its CPU twin, bit for bit, on awkward sizes (1 row, warp and
 * window edges, empty rows, a long hub row, slices with an offset, dims 1-3), with P resident across calls; and all
 * three force kernels (with tsne_s2g_d*, tsne_g2s_d*: {@link GridRepulsion}, CPU twins through backend cpu) from two
 * threads at once, and a timing at n = 10^6.
 */
@Tag("gpu")
class AttractiveForcesGpuTest {
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
                double[] cpu = AttractiveForces.attractiveCpu(p, y, dim);
                String what = "dim " + dim + " rows " + rows + " offset " + offset;
                assertArrayEquals(cpu, AttractiveForces.attractive(p, y, dim, Backend.GPU), 0.0, what + " (upload)");
                double[] y2 = TsneForcesTestData.clusters(n, dim, 5, 40, seed++);
                assertArrayEquals(AttractiveForces.attractiveCpu(p, y2, dim), AttractiveForces.attractive(p, y2, dim, Backend.GPU),
                        0.0, what + " (resident P, new y)");
                AttractiveForces.release(p);
                assertArrayEquals(AttractiveForces.attractiveCpu(p, y2, dim), AttractiveForces.attractive(p, y2, dim, Backend.GPU),
                        0.0, what + " (after release)");
                AttractiveForces.release(p);
                // a caller key: a copy of the slice (as a later Spark task deserialises it) finds the resident P
                String key = "test-" + seed;
                assertArrayEquals(cpu, AttractiveForces.attractive(p, key, y, dim, Backend.GPU), 0.0, what + " (keyed)");
                SparseRows copy = new SparseRows(p.n, p.rowOffset, p.rows, p.rowPtr.clone(), p.col.clone(),
                        p.val.clone());
                assertArrayEquals(cpu, AttractiveForces.attractive(copy, key, y, dim, Backend.GPU), 0.0,
                        what + " (keyed copy)");
                AttractiveForces.release(key);
            }
        }
    }

    /** The SELL entries scattered on the device (tsne_sell_fill) are SellRows.of's, padding and hub rows included. */
    @Test
    void deviceFilledLayoutEqualsTheHostLayout() {
        GpuTestSupport.deviceOrSkip();
        io.sparkgpu.cuda.CudaDevice dev = io.sparkgpu.cuda.CudaRuntime.device(0);
        long seed = 77;
        for (int rows : new int[] {1, 33, 257, 4099}) {
            int offset = rows % 3 == 0 ? 17 : 0;
            int n = Math.max(rows + offset + 5, 700);
            SparseRows p = TsneForcesTestData.randomRows(n, offset, rows, 3, 180, rows > 40 ? 650 : 0, seed++);
            SellRows host = SellRows.of(p);
            int[] col = new int[host.entries];
            double[] val = new double[host.entries];
            int[] meta = new int[host.meta.length];
            try (io.sparkgpu.cuda.GpuStream s = new io.sparkgpu.cuda.GpuStream(dev);
                 AttractiveForcesGpu.DeviceP dp = AttractiveForcesGpu.deviceP(dev, p, "sell-fill-" + seed, s)) {
                dp.meta.download(meta, meta.length, s);
                if (host.entries > 0) {
                    dp.col.download(col, col.length, s);
                    dp.val.download(val, val.length, s);
                }
                s.synchronize("test download");
            }
            AttractiveForces.release("sell-fill-" + seed);
            assertArrayEquals(host.meta, meta, "meta, rows " + rows);
            assertArrayEquals(host.col, col, "col, rows " + rows);
            assertArrayEquals(host.val, val, 0.0, "val, rows " + rows);
        }
    }

    @Test
    void attractiveKernelHandlesEmptyRowsAndAnEmptySlice() {
        GpuTestSupport.deviceOrSkip();
        double[] y = TsneForcesTestData.clusters(50, 2, 2, 10, 3);
        SparseRows empty = new SparseRows(50, 10, 5, new int[6], new int[0], new double[0]);
        assertArrayEquals(new double[10], AttractiveForces.attractive(empty, y, 2, Backend.GPU), 0.0, "empty slice");
        SparseRows zero = new SparseRows(50, 49, 0, new int[1], new int[0], new double[0]);
        assertEquals(0, AttractiveForces.attractive(zero, y, 2, Backend.GPU).length);
        AttractiveForces.release(empty);
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
        double[] attr = AttractiveForces.attractiveCpu(p, y, dim);
        long[] q = GridRepulsion.s2g(g, n, y, n, Backend.CPU);
        double[] phi = GridRepulsion.chargesToDouble(g, n, q);
        Repulsion rep = GridRepulsion.g2s(g, n, phi, y, n, Backend.CPU);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                fs.add(pool.submit(() -> {
                    for (int it = 0; it < 15; it++) {
                        assertArrayEquals(attr, AttractiveForces.attractive(p, y, dim, Backend.GPU), 0.0, "attractive");
                        assertArrayEquals(q, GridRepulsion.s2g(g, n, y, n, Backend.GPU), "S2G");
                        Repulsion r = GridRepulsion.g2s(g, n, phi, y, n, Backend.GPU);
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
            AttractiveForces.release(p);
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
        double[] attr = AttractiveForces.attractive(p, y, dim, Backend.GPU);
        double first = (System.nanoTime() - t0) / 1e6;
        int reps = 10;
        double[] ms = new double[3];
        double[] kernel = new double[3];
        long[] q = null;
        Repulsion rep = null;
        double[] phi = null;
        for (int it = 0; it < reps; it++) {
            long a = System.nanoTime();
            attr = AttractiveForces.attractive(p, y, dim, Backend.GPU);
            kernel[0] += AttractiveForces.lastGpuKernelMillis() / reps;
            long b = System.nanoTime();
            q = GridRepulsion.s2g(g, n, y, n, Backend.GPU);
            kernel[1] += GridRepulsion.lastGpuKernelMillis() / reps;
            long c = System.nanoTime();
            if (phi == null) {
                phi = GridRepulsion.chargesToDouble(g, n, q);
            }
            long d = System.nanoTime();
            rep = GridRepulsion.g2s(g, n, phi, y, n, Backend.GPU);
            kernel[2] += GridRepulsion.lastGpuKernelMillis() / reps;
            long e = System.nanoTime();
            ms[0] += (b - a) / 1e6 / reps;
            ms[1] += (c - b) / 1e6 / reps;
            ms[2] += (e - d) / 1e6 / reps;
        }
        System.out.printf("[tsne forces] n %d dim %d nnz %d grid %d nodes: first attractive (P upload) %.1f ms; per "
                + "call attractive %.2f ms, S2G %.2f ms, G2S %.2f ms (wall, transfers included); kernels alone "
                + "%.3f, %.3f, %.3f ms%n", n, dim, p.nnz(), g.nodes(), first, ms[0], ms[1], ms[2], kernel[0],
                kernel[1], kernel[2]);
        assertArrayEquals(AttractiveForces.attractiveCpu(p, y, dim), attr, 0.0, "attractive at 10^6");
        assertArrayEquals(GridRepulsion.s2g(g, n, y, n, Backend.CPU), q, "S2G at 10^6");
        Repulsion cpu = GridRepulsion.g2s(g, n, phi, y, n, Backend.CPU);
        assertArrayEquals(cpu.force, rep.force, 0.0, "G2S at 10^6");
        assertArrayEquals(cpu.zFixed, rep.zFixed, "z at 10^6");
        AttractiveForces.release(p);
    }
}
