package io.sparkgpu.pde;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The partitioned batched tridiagonal solver's CPU twin ({@link FhnCpu#partitionInterleaved}, the bits of
 * pde_tridiag_partition_R&lt;R&gt;): against the batched Thomas to 1e-12 (relative, max norm) with a tiny residual, for
 * every kernel's R and n a multiple of R, not a multiple, below R, 2 and 1; a, b, c untouched; a system's bits do not
 * depend on the batch around it; the residual check catches a wrong solution; and the launch plan's rules (R, SB,
 * the occupancy model), up to n = 4096.
 */
class TridiagPartitionTest {

    /** max |x - y| / max |y|. */
    static double relDiff(double[] x, double[] y) {
        double num = 0;
        double den = 0;
        for (int i = 0; i < y.length; i++) {
            num = Math.max(num, Math.abs(x[i] - y[i]));
            den = Math.max(den, Math.abs(y[i]));
        }
        return num / den;
    }

    /**
     * max over rows of |a x_(i-1) + b x_i + c x_(i+1) - d| / max |d| on the interleaved layout (a[0] and c[n - 1]
     * not part of the system), each row summed in plain double arithmetic.
     */
    static double residual(int S, int n, double[][] sys, double[] x) {
        double worst = 0;
        double dmax = 0;
        for (int j = 0; j < S; j++) {
            for (int i = 0; i < n; i++) {
                int e = i * S + j;
                double r = sys[1][e] * x[e] - sys[3][e];
                if (i > 0) {
                    r += sys[0][e] * x[e - S];
                }
                if (i < n - 1) {
                    r += sys[2][e] * x[e + S];
                }
                worst = Math.max(worst, Math.abs(r));
                dmax = Math.max(dmax, Math.abs(sys[3][e]));
            }
        }
        return worst / dmax;
    }

    static double[] thomas(int S, int n, double[][] sys) {
        double[] d = sys[3].clone();
        FhnCpu.thomasInterleaved(S, n, sys[0].clone(), sys[1].clone(), sys[2].clone(), d);
        return d;
    }

    static double[] partition(int S, int n, int r, double[][] sys) {
        double[] a = sys[0].clone();
        double[] b = sys[1].clone();
        double[] c = sys[2].clone();
        double[] d = sys[3].clone();
        FhnCpu.partitionInterleaved(S, n, r, a, b, c, d);
        assertArrayEquals(sys[0], a, "a untouched");
        assertArrayEquals(sys[1], b, "b untouched");
        assertArrayEquals(sys[2], c, "c untouched");
        return d;
    }

    @Test
    void agreesWithThomasTo1e12WithATinyResidual() {
        Random rnd = new Random(17);
        int[] ns = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 100, 127, 128, 129, 255, 256, 300, 512,
            777, 1000, 1024, 1025, 2049, 4095, 4096};
        for (int r : PdeEngine.PARTITION_R) {
            for (int n : ns) {
                int S = 1 + rnd.nextInt(40);
                double[][] sys = PdeEngine.randomSystems(S, n, rnd.nextLong());
                double[] ref = thomas(S, n, sys);
                double[] x = partition(S, n, r, sys);
                String what = "S=" + S + " n=" + n + " R=" + r;
                double diff = relDiff(x, ref);
                assertTrue(diff <= 1e-12, what + ": relative difference to Thomas " + diff);
                double res = residual(S, n, sys, x);
                assertTrue(res <= 1e-14, what + ": relative residual " + res);
            }
        }
    }

    @Test
    void theBenchmarksShapeAndAnOddBatch() {
        for (int[] sh : new int[][] {{1000, 128}, {333, 129}, {65, 1000}, {9, 4096}}) {
            int S = sh[0];
            int n = sh[1];
            double[][] sys = PdeEngine.randomSystems(S, n, 1);
            double[] ref = thomas(S, n, sys);
            int r = PdeEngine.partitionR(S, n, 132);
            double[] x = partition(S, n, r, sys);
            assertTrue(relDiff(x, ref) <= 1e-12, S + "x" + n + " R=" + r + ": " + relDiff(x, ref));
            assertTrue(residual(S, n, sys, x) <= 1e-14, S + "x" + n + " R=" + r);
        }
    }

    /** Each system's bits are its own: solved alone (S = 1) it gives the same bits as inside a batch. */
    @Test
    void aSystemsBitsDoNotDependOnItsBatch() {
        int S = 37;
        int n = 101;
        double[][] sys = PdeEngine.randomSystems(S, n, 4);
        for (int r : PdeEngine.PARTITION_R) {
            double[] x = partition(S, n, r, sys);
            for (int j : new int[] {0, 17, 36}) {
                double[][] one = new double[4][n];
                for (int q = 0; q < 4; q++) {
                    for (int i = 0; i < n; i++) {
                        one[q][i] = sys[q][i * S + j];
                    }
                }
                double[] y = partition(1, n, r, one);
                for (int i = 0; i < n; i++) {
                    assertEquals(Double.doubleToLongBits(y[i]), Double.doubleToLongBits(x[i * S + j]),
                            "R=" + r + " system " + j + " row " + i);
                }
            }
        }
    }

    /** The checks have teeth: a solution off by 1e-9 in one row fails both the residual and the 1e-12 agreement. */
    @Test
    void aWrongSolutionFailsTheChecks() {
        int S = 5;
        int n = 64;
        double[][] sys = PdeEngine.randomSystems(S, n, 8);
        double[] ref = thomas(S, n, sys);
        double[] x = partition(S, n, 8, sys);
        x[33 * S + 2] += 1e-9;
        assertTrue(residual(S, n, sys, x) > 1e-12);
        assertTrue(relDiff(x, ref) > 1e-12);
        // and the coupling across chunks matters: solving each chunk as if it stood alone is far off
        double[][] cut = new double[4][];
        for (int q = 0; q < 4; q++) {
            cut[q] = sys[q].clone();
        }
        for (int j = 0; j < S; j++) {
            for (int i = 8; i < n; i += 8) {
                cut[0][i * S + j] = 0;
                cut[2][(i - 1) * S + j] = 0;
            }
        }
        assertTrue(residual(S, n, sys, partition(S, n, 8, cut)) > 1e-6);
    }

    @Test
    void rejectsWhatItCannotSolve() {
        double[] z = new double[4];
        assertThrows(IllegalArgumentException.class, () -> FhnCpu.partitionInterleaved(1, 4, 2, z, z, z, z));
        assertThrows(IllegalArgumentException.class, () -> FhnCpu.partitionInterleaved(1, 0, 4, z, z, z, z));
    }

    @Test
    void launchPlans() {
        // {R, K, SB, threads, grid, shared bytes}; 132 SMs (H200)
        int sms = 132;
        // the measured shapes: R = 16 where the batch gives >= 4 x 256 threads an SM, R = 8 for 10^4 x 128; SB K
        // = 256 threads a block wherever SB <= 32 allows it
        assertArrayEquals(new int[] {16, 8, 32, 256, 31_250, 48 * 256}, PdeEngine.partitionPlan(1_000_000, 128, 0, 0,
                sms));
        assertArrayEquals(new int[] {16, 8, 32, 256, 3_125, 48 * 256}, PdeEngine.partitionPlan(100_000, 128, 0, 0, sms));
        // (10^4 x 128: SB halved to 8 so the grid keeps >= 8 blocks an SM)
        assertArrayEquals(new int[] {8, 16, 8, 128, 1_250, 48 * 128}, PdeEngine.partitionPlan(10_000, 128, 0, 0, sms));
        assertArrayEquals(new int[] {16, 16, 16, 256, 6_250, 48 * 256}, PdeEngine.partitionPlan(100_000, 256, 0, 0,
                sms));
        assertArrayEquals(new int[] {16, 32, 8, 256, 12_500, 48 * 256}, PdeEngine.partitionPlan(100_000, 512, 0, 0,
                sms));
        assertArrayEquals(new int[] {16, 64, 4, 256, 25_000, 48 * 256}, PdeEngine.partitionPlan(100_000, 1024, 0, 0,
                sms));
        assertArrayEquals(new int[] {8, 128, 2, 256, 50_000, 48 * 256}, PdeEngine.partitionPlan(100_000, 1024, 8, 0,
                sms));
        assertArrayEquals(new int[] {4, 256, 1, 256, 100_000, 48 * 256}, PdeEngine.partitionPlan(100_000, 1024, 4, 0,
                sms));
        // explicit R
        assertArrayEquals(new int[] {4, 32, 8, 256, 125_000, 48 * 256}, PdeEngine.partitionPlan(1_000_000, 128, 4, 0,
                sms));
        // (tiny batches: one system a block, every block its own SM)
        assertArrayEquals(new int[] {8, 16, 1, 16, 33, 48 * 16}, PdeEngine.partitionPlan(33, 128, 8, 0, sms));
        assertArrayEquals(new int[] {16, 8, 1, 8, 3, 48 * 8}, PdeEngine.partitionPlan(3, 128, 16, 0, sms));
        assertArrayEquals(new int[] {4, 64, 4, 256, 25_000, 48 * 256}, PdeEngine.partitionPlan(100_000, 256, 4, 0,
                sms));
        assertArrayEquals(new int[] {8, 32, 8, 256, 12_500, 48 * 256}, PdeEngine.partitionPlan(100_000, 256, 8, 0,
                sms));
        // tiny n: R = 4 (R = 8 and 16 would only pad), 32 systems a block where the batch has enough
        assertArrayEquals(new int[] {4, 1, 1, 1, 33, 48}, PdeEngine.partitionPlan(33, 2, 0, 0, sms));
        assertArrayEquals(new int[] {4, 1, 32, 32, 31_250, 48 * 32}, PdeEngine.partitionPlan(1_000_000, 4, 0, 0, sms));
        // explicit SB, and the longest systems at SB = 1
        assertArrayEquals(new int[] {4, 256, 4, 1024, 3, 48 * 1024}, PdeEngine.partitionPlan(9, 1024, 4, 4, sms));
        assertArrayEquals(new int[] {16, 64, 1, 64, 7, 48 * 64}, PdeEngine.partitionPlan(7, 1024, 16, 1, sms));
        assertArrayEquals(new int[] {16, 256, 1, 256, 10_000, 48 * 256}, PdeEngine.partitionPlan(10_000, 4096, 0, 0,
                sms));
        assertArrayEquals(new int[] {4, 1024, 1, 1024, 10, 48 * 1024}, PdeEngine.partitionPlan(10, 4096, 0, 0, sms));
        assertArrayEquals(new int[] {8, 512, 1, 512, 10, 48 * 512}, PdeEngine.partitionPlan(10, 4096, 8, 0, sms));

        // the automatic R: largest of 16, 8, 4 with S ceil(n / R) >= 1024 threads an SM, else 4
        assertEquals(16, PdeEngine.partitionR(1_000_000, 128, sms));
        assertEquals(8, PdeEngine.partitionR(10_000, 128, sms));
        assertEquals(16, PdeEngine.partitionR(16_896, 128, sms)); // 16896 x 8 = 1024 x 132
        assertEquals(8, PdeEngine.partitionR(16_895, 128, sms));
        assertEquals(4, PdeEngine.partitionR(16_895 / 2, 128, sms)); // R = 8 short by a thread: R = 4
        assertEquals(4, PdeEngine.partitionR(1, 128, sms));
        assertEquals(8, PdeEngine.partitionR(10_000, 128, 132));
        assertEquals(16, PdeEngine.partitionR(10_000, 128, 78)); // a smaller device: 80k threads are enough
        assertEquals(8, PdeEngine.partitionR(10_000_000, 8, sms)); // K = 1 at R = 8 and 16: R = 16 only pads
        assertEquals(16, PdeEngine.partitionR(10_000_000, 9, sms));

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PdeEngine.partitionPlan(10, 4097, 0, 0, sms));
        assertTrue(e.getMessage().contains("n = 4097") && e.getMessage().contains("4096"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PdeEngine.partitionPlan(10, 128, 5, 0, sms));
        assertTrue(e.getMessage().contains("R = 5"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PdeEngine.partitionPlan(10, 1024, 16, 8, sms));
        assertTrue(e.getMessage().contains("SB = 8") && e.getMessage().contains("1..4"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PdeEngine.partitionPlan(10, 128, 4, 33, sms));
        assertThrows(IllegalArgumentException.class, () -> PdeEngine.partitionPlan(10, 128, 4, -1, sms));
        assertThrows(IllegalArgumentException.class, () -> PdeEngine.partitionPlan(0, 128, 0, 0, sms));
        assertThrows(IllegalArgumentException.class, () -> PdeEngine.partitionPlan(10, 0, 0, 0, sms));
        assertThrows(IllegalArgumentException.class, () -> PdeEngine.partitionR(10, 128, 0));
        for (int r : PdeEngine.PARTITION_R) {
            for (int n = 1; n <= PdeEngine.PARTITION_MAX_UNKNOWNS; n++) {
                // blocks of at most 256 threads (K alone where K is larger) that fit an SM
                for (int S : new int[] {1000, 1_000_000}) {
                    int[] p = PdeEngine.partitionPlan(S, n, r, 0, sms);
                    assertTrue(p[3] <= PdeEngine.partitionMaxThreads(r) && p[2] >= 1 && p[2] <= 32
                            && p[5] <= 48 * 1024 && p[3] == p[1] * p[2]
                            && (p[3] <= PdeEngine.PARTITION_TARGET_THREADS || p[2] == 1), "R=" + r + " n=" + n);
                }
                // a large batch takes the largest SB allowed; a small one halves SB for blocks
                int[] large = PdeEngine.partitionPlan(1_000_000, n, r, 0, sms);
                assertTrue(large[2] == 32 || 2 * large[3] > PdeEngine.PARTITION_TARGET_THREADS, "R=" + r + " n=" + n);
                int[] small = PdeEngine.partitionPlan(1000, n, r, 0, sms);
                assertTrue(small[2] == 1 && small[4] == 1000, "R=" + r + " n=" + n);
            }
        }
    }

    @Test
    void clusterPlansAndTheTiledLayout() {
        int sms = 132;
        // {R, K, SB, threads, grid, shared bytes, blocks a cluster}: n = 1024, K = 64 chunks, 16 a block at 4
        assertArrayEquals(new int[] {16, 64, 16, 256, 25_000, 48 * 256, 4},
                PdeEngine.partitionClusterPlan(100_000, 1024, 0, 4, sms));
        assertArrayEquals(new int[] {16, 256, 8, 256, 10_000, 48 * 256, 8},
                PdeEngine.partitionClusterPlan(10_000, 4096, 0, 8, sms));
        // K = 63 over 8 blocks: 8 chunk slots a block, the last block's one past K idle; an explicit SB
        assertArrayEquals(new int[] {16, 63, 3, 24, 16, 48 * 24, 8},
                PdeEngine.partitionClusterPlan(5, 1000, 3, 8, sms));
        // a small batch halves SB for blocks
        assertEquals(1, PdeEngine.partitionClusterPlan(100, 1024, 0, 2, sms)[2]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PdeEngine.partitionClusterPlan(10, 1024, 0, 3, sms));
        assertTrue(e.getMessage().contains("got 3"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> PdeEngine.partitionClusterPlan(10, 4096, 16, 4, sms));
        assertTrue(e.getMessage().contains("SB = 16") && e.getMessage().contains("1..4"), e.getMessage());
        assertEquals("R = 16, SB = 8, cluster of 8", PdeEngine.describePlan(
                PdeEngine.partitionClusterPlan(10_000, 4096, 0, 8, sms)));

        int big = 227 * 1024;
        // the automatic plan: on tiles the staged kernels from n = 513 where a block of one system fits the shared
        // memory; otherwise plain up to n = 1024 (2048 tiled) and without clusters; above, the fewest blocks a
        // cluster reaching SB >= 8
        assertArrayEquals(PdeEngine.partitionPlan(100_000, 1024, 0, 0, sms),
                PdeEngine.partitionAutoPlan(100_000, 1024, sms, true, false, big));
        assertArrayEquals(PdeEngine.partitionPlan(100_000, 2048, 0, 0, sms),
                PdeEngine.partitionAutoPlan(100_000, 2048, sms, false, false, big));
        assertArrayEquals(PdeEngine.partitionStagedPlan(100_000, 2048, 0, 0, sms, big),
                PdeEngine.partitionAutoPlan(100_000, 2048, sms, true, true, big));
        assertArrayEquals(PdeEngine.partitionStagedPlan(100_000, 2048, 0, 0, sms, big),
                PdeEngine.partitionAutoPlan(100_000, 2048, sms, false, true, big));
        assertArrayEquals(PdeEngine.partitionStagedPlan(100_000, 513, 0, 0, sms, big),
                PdeEngine.partitionAutoPlan(100_000, 513, sms, true, true, big));
        assertArrayEquals(PdeEngine.partitionPlan(100_000, 512, 0, 0, sms),
                PdeEngine.partitionAutoPlan(100_000, 512, sms, true, true, big));
        assertArrayEquals(new int[] {16, 128, 8, 256, 50_000, 48 * 256, 4},
                PdeEngine.partitionAutoPlan(100_000, 2048, sms, true, false, big));
        assertArrayEquals(new int[] {16, 256, 8, 256, 10_000, 48 * 256, 8},
                PdeEngine.partitionAutoPlan(10_000, 4096, sms, true, false, big));
        assertArrayEquals(PdeEngine.partitionStagedPlan(10_000, 4096, 0, 0, sms, big),
                PdeEngine.partitionAutoPlan(10_000, 4096, sms, true, true, big));
        // a device whose block cannot hold one staged system of 4096 keeps the cluster plan on tiles
        assertArrayEquals(new int[] {16, 256, 8, 256, 10_000, 48 * 256, 8},
                PdeEngine.partitionAutoPlan(10_000, 4096, sms, true, true, 99 * 1024));
        // small batch: SB < 8 anywhere; K = 65: SB 4 at 2 blocks a cluster, 8 at 4
        assertEquals(8, PdeEngine.partitionAutoPlan(100, 4096, sms, true, false, big)[6]);
        assertEquals(4, PdeEngine.partitionAutoPlan(100_000, 1025, sms, true, false, big)[6]);

        // staged plans: {16, K, SB, threads, groups, shared bytes, 1, staged}; 48 SB K + 40 SB (n + K) bytes
        assertArrayEquals(new int[] {16, 128, 2, 256, 50_000, 48 * 256 + 80 * (2048 + 128), 1, 1},
                PdeEngine.partitionStagedPlan(100_000, 2048, 0, 0, sms, big));
        assertArrayEquals(new int[] {16, 256, 1, 256, 10_000, 48 * 256 + 40 * (4096 + 256), 1, 1},
                PdeEngine.partitionStagedPlan(10_000, 4096, 0, 0, sms, big));
        assertArrayEquals(new int[] {16, 128, 1, 128, 100_000, 48 * 128 + 40 * (2048 + 128), 1, 1},
                PdeEngine.partitionStagedPlan(100_000, 2048, 16, 1, sms, big));
        assertEquals("R = 16, SB = 2, staged", PdeEngine.describePlan(
                PdeEngine.partitionStagedPlan(100_000, 2048, 0, 0, sms, big)));
        // the shared memory a device gives a block bounds SB (99 KiB: one system of 2048, none of 4096)
        assertEquals(1, PdeEngine.partitionStagedPlan(100_000, 2048, 0, 0, sms, 99 * 1024)[2]);
        e = assertThrows(IllegalArgumentException.class,
                () -> PdeEngine.partitionStagedPlan(100_000, 4096, 0, 0, sms, 99 * 1024));
        assertTrue(e.getMessage().contains("186368 B") && e.getMessage().contains("101376 B"), e.getMessage());
        // a small batch halves SB to keep two groups an SM; SB must be a power of two within the block
        assertEquals(1, PdeEngine.partitionStagedPlan(300, 1024, 0, 0, sms, big)[2]);
        assertEquals(4, PdeEngine.partitionStagedPlan(300_000, 1024, 0, 0, sms, big)[2]);
        // R = 8: K = 512 chunks at n = 4096, one system a block of 512 threads
        assertArrayEquals(new int[] {8, 512, 1, 512, 10_000, 48 * 512 + 40 * (4096 + 512), 1, 1},
                PdeEngine.partitionStagedPlan(10_000, 4096, 8, 0, sms, big));
        assertEquals(2, PdeEngine.partitionStagedPlan(100_000, 1024, 8, 0, sms, big)[2]);
        e = assertThrows(IllegalArgumentException.class, () -> PdeEngine.partitionStagedPlan(1000, 2048, 4, 0, sms,
                big));
        assertTrue(e.getMessage().contains("got R = 4"), e.getMessage());
        for (int bad : new int[] {3, 4, 64, -1}) {
            e = assertThrows(IllegalArgumentException.class,
                    () -> PdeEngine.partitionStagedPlan(1000, 2048, 16, bad, sms, big));
            assertTrue(e.getMessage().contains("got SB = " + bad), e.getMessage());
        }

        // tiled layout: 33 systems of 5 take two tiles of 32; element i of system j at (j / T) T n + T i + j % T
        int S = 33;
        int n = 5;
        assertEquals(64L * n, PdeEngine.tiledLength(S, n, 32));
        assertEquals(36L * n, PdeEngine.tiledLength(S, n, 4));
        assertEquals(33L * n, PdeEngine.tiledLength(S, n, 1));
        double[] x = new double[S * n];
        for (int e2 = 0; e2 < x.length; e2++) {
            x[e2] = e2;
        }
        double[] t = PdeEngine.toTiled(S, n, x, -1, 32);
        assertEquals(x[2 * S + 1], t[32 * 2 + 1]);
        assertEquals(x[3 * S + 32], t[32 * n + 32 * 3]);
        assertEquals(-1, t[32 * n + 32 * 3 + 1]);
        assertArrayEquals(x, PdeEngine.fromTiled(S, n, t, 32));
        double[] t4 = PdeEngine.toTiled(S, n, x, -1, 4);
        assertEquals(x[2 * S + 6], t4[(1 * n + 2) * 4 + 2]);
        assertArrayEquals(x, PdeEngine.fromTiled(S, n, t4, 4));
        double[] t1 = PdeEngine.toTiled(S, n, x, -1, 1); // each system contiguous
        assertEquals(x[4 * S + 7], t1[7 * n + 4]);
        assertArrayEquals(x, PdeEngine.fromTiled(S, n, t1, 1));
        e = assertThrows(IllegalArgumentException.class, () -> PdeEngine.tiledLength(10, 5, 3));
        assertTrue(e.getMessage().contains("got 3"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PdeEngine.tiledLength(10, 5, 64));
    }
}
