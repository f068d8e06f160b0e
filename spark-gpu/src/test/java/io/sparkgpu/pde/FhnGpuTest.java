package io.sparkgpu.pde;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuResources;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The pde kernels against the CPU twin, bit for bit: every scheme with a kernel, every boundary, both tridiagonal
 * solvers, every stimulus, the observables, the final state and the recorded field; the batched Thomas and the cyclic
 * reduction of long systems (level launches plus the one-block tail) on their own.
 */
@Tag("gpu")
class FhnGpuTest {

    static void assertSame(FhnResult c, FhnResult g, String what) {
        assertArrayEquals(c.v, g.v, what + ": v");
        assertArrayEquals(c.w, g.w, what + ": w");
        assertArrayEquals(c.field, g.field, what + ": field");
        assertEquals(Double.doubleToLongBits(c.maxV), Double.doubleToLongBits(g.maxV), what + ": maxV");
        assertEquals(Double.doubleToLongBits(c.tNear), Double.doubleToLongBits(g.tNear), what + ": tNear");
        assertEquals(Double.doubleToLongBits(c.tFar), Double.doubleToLongBits(g.tFar), what + ": tFar");
        assertEquals(c.pulseCount, g.pulseCount, what + ": pulses");
        assertEquals(c.newtonIterations, g.newtonIterations, what + ": Newton iterations");
        assertEquals(c.unconvergedSteps, g.unconvergedSteps, what + ": unconverged steps");
    }

    /** An explicit run on {@code cells} cells 0.3 apart, dt 0.02 to t = 5.5, a Gaussian start, frames every 40 steps. */
    static FhnSetup explicitSetup(int cells, String bc, String st) {
        FhnConfig c = FhnTestData.small(FhnConfig.EXPLICIT, FhnConfig.THOMAS, bc, st);
        c.cells = cells;
        c.length = cells * 0.3;
        c.dt = 0.02;
        c.tEnd = 5.5;
        c.initial = FhnConfig.GAUSSIAN;
        c.recordEvery = 40;
        return new FhnSetup(c.validate());
    }

    /**
     * The explicit scheme with 1 (a launch per step), 7, 16 and 32 steps per launch of the temporally blocked kernel:
     * one tile and several (the last one partial), every boundary and stimulus, frames every 40 steps.
     */
    @Test
    void temporalBlockingKeepsTheTwinsBits() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        FhnParams[] ps = FhnTestData.sweep(5);
        for (int cells : new int[] {37, 600}) {
            for (String bc : new String[] {FhnConfig.DIRICHLET, FhnConfig.NEUMANN, FhnConfig.PERIODIC}) {
                for (String st : new String[] {FhnConfig.NONE, FhnConfig.CONSTANT, FhnConfig.SERIES}) {
                    FhnSetup s = explicitSetup(cells, bc, st);
                    FhnResult[] cpu = FhnCpu.run(s, ps, 2);
                    for (int k : new int[] {1, 7, 16, 32}) {
                        FhnResult[] gpu = FhnGpu.explicit(dev, s, ps, k);
                        for (int j = 0; j < ps.length; j++) {
                            assertSame(cpu[j], gpu[j], "explicit " + cells + "/" + bc + "/" + st + ", " + k
                                    + " steps per launch, row " + j);
                        }
                    }
                }
            }
        }
    }

    @Test
    void everySchemeBoundarySolverAndStimulusEqualsTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        FhnParams[] ps = FhnTestData.sweep(7);
        String[][] modes = {{FhnConfig.EXPLICIT, FhnConfig.THOMAS}, {FhnConfig.CRANK_NICOLSON, FhnConfig.THOMAS},
            {FhnConfig.CRANK_NICOLSON, FhnConfig.CYCLIC_REDUCTION}};
        for (String[] m : modes) {
            for (String bc : new String[] {FhnConfig.DIRICHLET, FhnConfig.NEUMANN, FhnConfig.PERIODIC}) {
                if (m[1].equals(FhnConfig.CYCLIC_REDUCTION) && bc.equals(FhnConfig.PERIODIC)) {
                    continue;
                }
                for (String st : new String[] {FhnConfig.NONE, FhnConfig.CONSTANT, FhnConfig.SERIES}) {
                    FhnConfig c = FhnTestData.small(m[0], m[1], bc, st);
                    if (m[0].equals(FhnConfig.EXPLICIT)) {
                        c.dt = 0.02;
                    }
                    FhnSetup s = new FhnSetup(c.validate());
                    FhnResult[] cpu = FhnCpu.run(s, ps, 2);
                    FhnResult[] gpu = FhnGpu.run(dev, s, ps);
                    for (int j = 0; j < ps.length; j++) {
                        assertSame(cpu[j], gpu[j], m[0] + "/" + m[1] + "/" + bc + "/" + st + " row " + j);
                    }
                }
            }
        }
    }

    @Test
    void longCrankNicolsonSystemsByCyclicReductionLevelsEqualTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        FhnConfig c = FhnTestData.small(FhnConfig.CRANK_NICOLSON, FhnConfig.CYCLIC_REDUCTION, FhnConfig.NEUMANN,
                FhnConfig.CONSTANT);
        c.cells = 20_001; // beyond the shared-memory path: level launches, then the one-block tail
        c.length = 2000;
        c.tEnd = 1;
        c.recordEvery = 0;
        FhnSetup s = new FhnSetup(c.validate());
        FhnParams[] ps = FhnTestData.sweep(2);
        FhnResult[] cpu = FhnCpu.run(s, ps, 2);
        FhnResult[] gpu = FhnGpu.run(dev, s, ps);
        for (int j = 0; j < ps.length; j++) {
            assertSame(cpu[j], gpu[j], "long CR row " + j);
        }
    }

    @Test
    void batchedThomasAndLongCyclicReductionEqualTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(3);
        for (int[] shape : new int[][] {{1000, 129}, {33, 400}, {7, 4096}, {1, 3}}) {
            int S = shape[0];
            int n = shape[1];
            double[][] sys = PdeEngine.randomSystems(S, n, r.nextLong());
            double[] a = sys[0].clone();
            double[] b = sys[1].clone();
            double[] c = sys[2].clone();
            double[] d = sys[3].clone();
            FhnCpu.thomasInterleaved(S, n, a, b, c, d);
            assertArrayEquals(d, PdeEngine.thomasBatch(dev, S, n, sys), "thomas " + S + "x" + n);
            if (n <= PdeEngine.thomasSharedMaxUnknowns(dev)) {
                assertArrayEquals(d, PdeEngine.thomasBatch(dev, S, n, sys, true), "shared thomas " + S + "x" + n);
            }
        }
        for (int n : new int[] {5, 1000, 5000, 100_000, 1_000_003}) {
            double[][] sys = PdeEngine.randomSystems(1, n, n);
            double[] x = new double[n];
            FhnCpu.cyclicReduction(sys[0].clone(), sys[1].clone(), sys[2].clone(), sys[3].clone(), x, n);
            assertArrayEquals(x, PdeEngine.cyclicReduction(dev, 1, n, sys), "cr n=" + n);
        }
        double[][] two = PdeEngine.randomSystems(3, 3000, 9);
        double[] x = new double[3 * 3000];
        FhnCpu.cyclicReductionBatch(3, 3000, two[0].clone(), two[1].clone(), two[2].clone(), two[3].clone(), x);
        assertArrayEquals(x, PdeEngine.cyclicReduction(dev, 3, 3000, two), "batched cr");
        assertTrue(PdeEngine.copyMillis(dev, 1 << 20, 2)[1] > 0);
    }
    /**
     * The partitioned batched solver against its twin, bit for bit, for each kernel (R = 4, 8, 16) and the automatic
     * R: S not a multiple of 32 or of the block's systems, n a multiple of R, not one, below R, 2 and 1, n = 1024
     * and the longest n (4096, one system a block); then for explicit SB = 1, 2, 3, 4, 8, 16, 32 where the block fits
     * (the bits must not depend on how many systems a block holds). a, b, c stay as they were on the device (the
     * kernel only reads them). The automatic plans' blocks fit an SM by the driver's occupancy of the loaded kernels.
     */
    @Test
    void partitionedTridiagonalEqualsTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(11);
        int sms = dev.multiprocessors();
        int[][] shapes = {{1000, 128}, {1001, 129}, {33, 400}, {77, 1024}, {5, 1000}, {31, 3}, {65, 2}, {3, 1},
            {100, 17}, {257, 64}, {1, 255}, {7, 4096}, {3, 2049}, {20_000, 128}};
        for (int[] shape : shapes) {
            int S = shape[0];
            int n = shape[1];
            double[][] sys = PdeEngine.randomSystems(S, n, r.nextLong());
            for (int rr : new int[] {0, 4, 8, 16}) {
                int R = rr == 0 ? PdeEngine.partitionR(S, n, sms) : rr;
                double[] d = sys[3].clone();
                FhnCpu.partitionInterleaved(S, n, R, sys[0].clone(), sys[1].clone(), sys[2].clone(), d);
                for (int sb : new int[] {0, 1, 2, 3, 4, 8, 16, 32}) {
                    int k = (n + R - 1) / R;
                    if (sb * k > PdeEngine.partitionMaxThreads(R)) {
                        continue;
                    }
                    String what = "partition " + S + "x" + n + " R=" + (rr == 0 ? "auto " + R : R) + " SB="
                            + (sb == 0 ? "auto " + PdeEngine.partitionPlan(dev, S, n, rr, 0)[2] : sb);
                    assertArrayEquals(d, PdeEngine.tridiagPartition(dev, S, n, sys, rr, sb), what);
                }
            }
        }
        // on a device the automatic SB gives blocks of 256 threads (or fewer where K is larger or SB = 32 reaches
        // fewer) that the driver can hold on an SM
        for (int rr : PdeEngine.PARTITION_R) {
            for (int n : new int[] {128, 256, 1024, 4096}) {
                int[] plan = PdeEngine.partitionPlan(dev, 100_000, n, rr, 0);
                int blocks = KernelLauncher.residentBlocks(dev, FhnGpu.MODULE, "pde_tridiag_partition_R" + rr,
                        plan[3], plan[5]) / sms;
                int k = plan[1];
                boolean largest = plan[2] == 32 || 2 * plan[3] > PdeEngine.PARTITION_TARGET_THREADS || plan[2] == 1;
                boolean withinTarget = plan[3] <= PdeEngine.PARTITION_TARGET_THREADS || plan[2] == 1;
                assertTrue(blocks >= 1 && withinTarget && largest, "R=" + rr + " n=" + n + ": SB " + plan[2] + ", K "
                        + k + ", " + plan[3] + " threads a block, " + blocks + " blocks an SM");
            }
        }
        for (int rr : PdeEngine.PARTITION_R) {
            int S = 45;
            int n = 203;
            double[][] sys = PdeEngine.randomSystems(S, n, rr);
            double[][] back = new double[4][S * n];
            try (GpuStream st = new GpuStream(dev)) {
                DeviceBuffer[] b = new DeviceBuffer[4];
                try {
                    for (int q = 0; q < 4; q++) {
                        b[q] = DeviceBuffer.ofDoubles(dev, (long) S * n);
                        b[q].upload(sys[q], st);
                    }
                    PdeEngine.launchPartition(st, S, n, PdeEngine.partitionPlan(dev, S, n, rr, 0), b);
                    for (int q = 0; q < 4; q++) {
                        b[q].download(back[q], S * n, st);
                    }
                    st.synchronize("partition, a b c read back");
                } finally {
                    GpuResources.closeAll(b);
                }
            }
            for (int q = 0; q < 3; q++) {
                assertArrayEquals(sys[q], back[q], "R=" + rr + ": array " + "abc".charAt(q) + " untouched");
            }
            double[] d = sys[3].clone();
            FhnCpu.partitionInterleaved(S, n, rr, sys[0].clone(), sys[1].clone(), sys[2].clone(), d);
            assertArrayEquals(d, back[3], "R=" + rr + ": solution");
        }
        for (int rr : new int[] {0, 4, 8, 16}) {
            double[] ms = PdeEngine.tridiagPartitionMillis(dev, 4096, 128, 3, rr, 0);
            assertTrue(ms[2] > 0, "timed partitioned solve, R=" + rr);
        }
        assertTrue(PdeEngine.tridiagPartitionMillis(dev, 1000, 1024, 2, 16, 1)[1] > 0, "timed, R=16, SB=1");
    }

    /**
     * The cluster kernels (R = 16, 2, 4 or 8 blocks a cluster sharing each system's chunks through distributed shared
     * memory) against the twin, bit for bit, on the interleaved and tiled layouts (tiles of 32, 4 and 1 systems, S
     * not a multiple of them): clusters whose last block holds
     * chunks past K (n = 1000 at 8 blocks, K = 63), one chunk a block (n = 64 at 4), n = 4096, and explicit SB
     * 1..32 where the block fits; then the plain kernels on tiles of 32, 2 and the plan's SB.
     */
    @Test
    void clusterPartitionEqualsTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Assumptions.assumeTrue(PdeEngine.partitionClustersOn(dev), "cluster kernels need compute capability 9.x");
        Random r = new Random(12);
        int sms = dev.multiprocessors();
        int[][] shapes = {{77, 1024}, {5, 1000}, {3, 4096}, {33, 2049}, {1001, 129}, {257, 64}, {100, 17},
            {20_000, 1024}};
        for (int[] shape : shapes) {
            int S = shape[0];
            int n = shape[1];
            double[][] sys = PdeEngine.randomSystems(S, n, r.nextLong());
            double[] d = sys[3].clone();
            FhnCpu.partitionInterleaved(S, n, 16, sys[0].clone(), sys[1].clone(), sys[2].clone(), d);
            for (int cl : PdeEngine.PARTITION_CLUSTERS) {
                int kc = ((n + 15) / 16 + cl - 1) / cl;
                for (int sb : new int[] {0, 1, 3, 4, 16, 32}) {
                    if (sb * kc > PdeEngine.partitionMaxThreads(16)) {
                        continue;
                    }
                    int[] plan = PdeEngine.partitionClusterPlan(S, n, sb, cl, sms);
                    for (int tile : new int[] {0, 32, 1, 4}) {
                        assertArrayEquals(d, PdeEngine.tridiagPartition(dev, S, n, sys, plan, tile), "cluster "
                                + "partition " + S + "x" + n + " " + PdeEngine.describePlan(plan) + ", tiles of "
                                + tile);
                    }
                }
            }
            // the plain kernels on the tiled layout
            for (int rr : new int[] {0, 4, 8, 16}) {
                int R = rr == 0 ? PdeEngine.partitionR(S, n, sms) : rr;
                double[] dr = sys[3].clone();
                FhnCpu.partitionInterleaved(S, n, R, sys[0].clone(), sys[1].clone(), sys[2].clone(), dr);
                int[] plan = PdeEngine.partitionPlan(dev, S, n, rr, 0);
                for (int tile : new int[] {32, 2, plan[2] == 3 ? 1 : plan[2]}) {
                    assertArrayEquals(dr, PdeEngine.tridiagPartition(dev, S, n, sys, plan, tile),
                            "partition " + S + "x" + n + " " + PdeEngine.describePlan(plan) + ", tiles of " + tile);
                }
            }
        }
        assertTrue(PdeEngine.tridiagPartitionMillis(dev, 1000, 1024, 2, PdeEngine.partitionClusterPlan(1000, 1024, 0,
                4, sms), 16)[1] > 0, "timed, cluster of 4, tiles of 16");
    }

    /**
     * The staged kernels (persistent blocks, a group's rows copied into shared memory while the block solves the group
     * before) against the twin, bit for bit, on the interleaved and tiled layouts: S not a multiple of SB (the last
     * group partly empty), more groups than resident blocks (each block takes several), n = 4096, n not a multiple of
     * R, one chunk a system; every SB that fits the block and the device's shared memory, and the automatic one.
     */
    @Test
    void stagedPartitionEqualsTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(13);
        int sms = dev.multiprocessors();
        int maxShared = dev.maxSharedMemoryOptin();
        int[][] shapes = {{3001, 2048}, {5, 4096}, {1001, 2049}, {20_000, 1024}, {77, 1000}, {257, 16}, {100, 17}};
        for (int[] shape : shapes) {
            int S = shape[0];
            int n = shape[1];
            double[][] sys = PdeEngine.randomSystems(S, n, r.nextLong());
            for (int rr : PdeEngine.PARTITION_STAGED_R) {
                double[] d = sys[3].clone();
                FhnCpu.partitionInterleaved(S, n, rr, sys[0].clone(), sys[1].clone(), sys[2].clone(), d);
                int k = (n + rr - 1) / rr;
                for (int sb : new int[] {0, 1, 2, 4, 32}) {
                    if (k > PdeEngine.partitionMaxThreads(rr) || sb * k > PdeEngine.partitionMaxThreads(rr)
                            || PdeEngine.partitionStagedShared(n, rr, Math.max(sb, 1)) > maxShared) {
                        continue;
                    }
                    int[] plan = PdeEngine.partitionStagedPlan(S, n, rr, sb, sms, maxShared);
                    for (int tile : new int[] {0, 32, 1, plan[2]}) {
                        assertArrayEquals(d, PdeEngine.tridiagPartition(dev, S, n, sys, plan, tile), "staged "
                                + "partition " + S + "x" + n + " " + PdeEngine.describePlan(plan) + ", tiles of "
                                + tile);
                    }
                }
            }
        }
        assertTrue(PdeEngine.tridiagPartitionMillis(dev, 1000, 2048, 2, PdeEngine.partitionStagedPlan(1000, 2048, 0,
                0, sms, maxShared), 2)[1] > 0, "timed, staged, tiles of 2");
    }

    /**
     * One system of 10^7 unknowns (the size that failed with CUDA_ERROR_ILLEGAL_ADDRESS before the kernels'
     * 32-bit row stride was fixed; FhnLaunchModelTest models it): the GPU's cyclic reduction equals the twin's bit for
     * bit, and the twin's cyclic reduction agrees with Thomas to 1e-12. Also 2^21 (the former cap, itself unsafe).
     */
    @Test
    void tenMillionUnknownsByCyclicReductionEqualTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        for (int n : new int[] {1 << 21, 10_000_000}) {
            double[][] sys = PdeEngine.randomSystems(1, n, 17);
            double[] gpu = PdeEngine.cyclicReduction(dev, 1, n, sys);
            double[] x = new double[n];
            FhnCpu.cyclicReduction(sys[0].clone(), sys[1].clone(), sys[2].clone(), sys[3].clone(), x, n);
            assertArrayEquals(x, gpu, "cr n=" + n);
            double[] th = new double[n];
            FhnCpu.thomas(sys[0], sys[1], sys[2], sys[3], th, n, new double[n]);
            double worst = 0;
            for (int i = 0; i < n; i++) {
                worst = Math.max(worst, Math.abs(th[i] - x[i]));
            }
            assertTrue(worst < 1e-12, "thomas vs cr n=" + n + ": " + worst);
        }
    }
    /**
     * The sweep's kernels (whole axons resident in registers, a segment of lanes per axon, and in shared memory,
     * several per block): every boundary and stimulus, axons of 3 .. 1024 cells (one lane to 32 per axon, one cell
     * to 16 per lane, padding in the last lane, the last warp partial), frames, one launch for the run and 37 steps
     * per launch; without the state the observables are the same.
     */
    @Test
    void residentAxonsKeepTheTwinsBits() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        FhnParams[] ps = FhnTestData.sweep(11);
        for (int cells : new int[] {3, 5, 17, 37, 101, 129, 512, 1024}) {
            java.util.TreeSet<Integer> kernels = new java.util.TreeSet<>(java.util.List.of(0));
            kernels.add(FhnGpu.lanesPerAxon(cells));
            for (int l = 1; l <= 32; l <<= 1) {
                if ((cells + l - 1) / l <= FhnGpu.LANES_CMAX) {
                    kernels.add(l); // the fewest lanes (most cells per lane) and every other count that fits
                }
            }
            for (String bc : new String[] {FhnConfig.DIRICHLET, FhnConfig.NEUMANN, FhnConfig.PERIODIC}) {
                for (String st : new String[] {FhnConfig.NONE, FhnConfig.CONSTANT, FhnConfig.SERIES}) {
                    FhnSetup s = explicitSetup(cells, bc, st);
                    FhnResult[] cpu = FhnCpu.run(s, ps, 2);
                    for (int lanes : kernels) {
                        for (int per : new int[] {FhnGpu.RESIDENT_STEPS, 37}) {
                            FhnResult[] gpu = FhnGpu.explicitResident(dev, s, ps, per, true, lanes);
                            FhnResult[] obs = FhnGpu.explicitResident(dev, s, ps, per, false, lanes);
                            for (int j = 0; j < ps.length; j++) {
                                String what = "resident " + cells + "/" + bc + "/" + st + ", lanes " + lanes + ", "
                                        + per + " steps/launch, row " + j;
                                assertSame(cpu[j], gpu[j], what);
                                assertEquals(Double.doubleToLongBits(cpu[j].maxV),
                                        Double.doubleToLongBits(obs[j].maxV), what);
                                assertEquals(cpu[j].pulseCount, obs[j].pulseCount, what);
                                assertEquals(Double.doubleToLongBits(cpu[j].tNear),
                                        Double.doubleToLongBits(obs[j].tNear), what);
                                assertEquals(Double.doubleToLongBits(cpu[j].tFar),
                                        Double.doubleToLongBits(obs[j].tFar), what);
                                assertArrayEquals(cpu[j].field, obs[j].field, what);
                            }
                        }
                    }
                }
            }
        }
    }
}
