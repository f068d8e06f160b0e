package io.sparkgpu.pde;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A CPU model of the cyclic reduction launches (FhnGpu.CrPlan and pde.cu's pde_cr_forward / pde_cr_block /
 * pde_cr_backward row enumeration, in the kernels' 32-bit int arithmetic): every index a thread touches lies in the
 * system, and every row of every level is visited exactly once, up to 10^7 unknowns and beyond; the plan replayed on
 * arrays gives the twin's bits. The kernels' former loop (i from 2s-1 + 2s threadIdx.x by 2s blockDim.x) is modelled
 * too: it leaves the system at 2^21 unknowns and at 10^7 (the CUDA_ERROR_ILLEGAL_ADDRESS), not at 10^6.
 */
class FhnLaunchModelTest {

    /** rows_from in pde.cu: 64-bit arithmetic, then an int. */
    static int rowsFrom(int first, int s, int n) {
        return first < n ? (int) (((long) n - first + 2L * s - 1) / (2L * s)) : 0;
    }

    /** cr_row in pde.cu. */
    static int crRow(int first, int s, int j) {
        return (int) (first + 2L * s * j);
    }

    /**
     * Walks every level of the plan as the kernels do (level kernels: thread t is row t of its system; the one-block
     * tail: thread tid takes rows tid, tid + T, ...), checking each touched index and counting visits per level.
     */
    static void checkPlan(FhnGpu.CrPlan p, int tailThreads) {
        int n = p.n;
        for (int l = 0; l <= p.k - 2; l++) {
            for (boolean fwd : new boolean[] {true, false}) {
                int s = 1 << l;
                int first = fwd ? 2 * s - 1 : s - 1;
                int rows = rowsFrom(first, s, n);
                assertEquals(p.rows(l, fwd), rows, "rows of level " + l);
                int threads = p.shared ? p.sharedBlock : l < p.lswitch ? rows : tailThreads;
                long visited = 0;
                long bad = -1;
                for (int tid = 0; tid < threads; tid++) {
                    for (int j = tid; j < rows; j += threads) {
                        int i = crRow(first, s, j);
                        boolean ok = i == p.row(l, fwd, j) && i >= 0 && i < n && i % (2 * s) == first
                                && (!fwd || i - s >= 0);
                        if (!ok && bad < 0) {
                            bad = i;
                        }
                        visited++;
                    }
                }
                assertEquals(-1, bad, "a row index outside the system or the level: level " + l + ", n = " + n);
                long expect = 0;
                for (long i = first; i < n; i += 2L * s) {
                    expect++;
                }
                assertEquals(expect, visited, "rows visited at level " + l + ", n = " + n);
            }
        }
        int top = (1 << (p.k - 1)) - 1;
        assertTrue(top < n, "middle row " + top + " of n = " + n);
    }

    @Test
    void everyIndexOfEveryLevelStaysInTheSystemUpToAndBeyond10To7() {
        for (int n : new int[] {10_000_000, 1 << 21, (1 << 21) - 1, (1 << 24) - 1, (1 << 24) + 1}) {
            FhnGpu.CrPlan p = new FhnGpu.CrPlan(n, false);
            assertTrue(p.lswitch > 0 && p.lswitch < p.k - 1, "level launches then a tail, n = " + n);
            checkPlan(p, FhnGpu.CR_TAIL_THREADS);
        }
        for (int n : new int[] {1, 2, 3, 5, 1000, 2457}) {
            checkPlan(new FhnGpu.CrPlan(n, true), 0);
        }
    }

    /** The first out-of-system index of the former tail loop (32-bit, wrapping), or -1 when all stay inside. */
    static long formerTailLoopEscape(int n, int threads) {
        FhnGpu.CrPlan p = new FhnGpu.CrPlan(n, false);
        for (int l = p.lswitch; l <= p.k - 2; l++) {
            int s = 1 << l;
            for (int tid = 0; tid < threads; tid++) {
                for (int i = 2 * s - 1 + 2 * s * tid; i < n; i += 2 * s * threads) {
                    if (i - s < 0) {
                        return i;
                    }
                }
            }
        }
        return -1;
    }

    @Test
    void theFormerLoopLeftTheSystemExactlyWhereTheGpuFailed() {
        assertEquals(-1, formerTailLoopEscape(1_000_000, 1024), "10^6 was verified on the H100");
        assertTrue(formerTailLoopEscape(10_000_000, 1024) < 0, "10^7 crashed with an illegal address");
        assertTrue(formerTailLoopEscape(1 << 21, 1024) < 0, "the former cap 2^21 was itself unsafe");
    }

    /** The plan replayed on arrays: level rows forward, the middle row, level rows backward, as the kernels do. */
    static double[] replay(FhnGpu.CrPlan p, double[][] sys) {
        int n = p.n;
        double[] a = sys[0].clone();
        double[] b = sys[1].clone();
        double[] c = sys[2].clone();
        double[] d = sys[3].clone();
        double[] x = new double[n];
        a[0] = 0.0;
        c[n - 1] = 0.0;
        for (int l = 0; l <= p.k - 2; l++) {
            int s = 1 << l;
            int rows = rowsFrom(2 * s - 1, s, n);
            for (int j = rows - 1; j >= 0; j--) { // any order: a level's rows are independent
                FhnCpu.crForwardRow(a, b, c, d, 0, n, crRow(2 * s - 1, s, j), s);
            }
        }
        int top = (1 << (p.k - 1)) - 1;
        x[top] = d[top] / b[top];
        for (int l = p.k - 2; l >= 0; l--) {
            int s = 1 << l;
            int rows = rowsFrom(s - 1, s, n);
            for (int j = rows - 1; j >= 0; j--) {
                FhnCpu.crBackwardRow(a, b, c, d, x, 0, n, crRow(s - 1, s, j), s);
            }
        }
        return x;
    }

    @Test
    void thePlanReplayedGivesTheTwinsBits() {
        for (int n : new int[] {3, 50_001, 65_535, 65_536}) {
            double[][] sys = PdeEngine.randomSystems(1, n, n);
            double[] x = new double[n];
            FhnCpu.cyclicReduction(sys[0].clone(), sys[1].clone(), sys[2].clone(), sys[3].clone(), x, n);
            assertArrayEquals(x, replay(new FhnGpu.CrPlan(n, false), sys), "n = " + n);
        }
    }
    /** The resident kernel's blocks: whole axons, warps wasted least, at most 1024 threads (its launch bound). */
    @Test
    void residentBlocksHoldWholeAxonsAndWasteFewLanes() {
        assertEquals(5, FhnGpu.residentAxons(101)); // 505 of 512 lanes
        assertEquals(512, FhnGpu.residentThreads(101, 5));
        assertEquals(1, FhnGpu.residentAxons(1024));
        assertEquals(1024, FhnGpu.residentThreads(1024, 1));
        for (int n = 3; n <= FhnGpu.RESIDENT_MAX_CELLS; n++) {
            int a = FhnGpu.residentAxons(n);
            int t = FhnGpu.residentThreads(n, a);
            assertTrue(a >= 1 && t >= a * n && t - a * n < 32 && t <= 1024 && t % 32 == 0, "n = " + n);
            assertTrue(2L * 8 * a * n <= 48 * 1024, "shared memory of n = " + n);
        }
    }

    /**
     * The observables FhnGpuTest's resident test compares are not trivial: among its cases the near probe fires
     * (101 cells), the far probe fires and counts pulses (17 cells), and the max moves off its initial value.
     */
    @Test
    void theResidentCasesFireBothProbes() {
        boolean near = false;
        boolean far = false;
        boolean max = false;
        for (String bc : new String[] {FhnConfig.DIRICHLET, FhnConfig.NEUMANN, FhnConfig.PERIODIC}) {
            for (int cells : new int[] {17, 101}) {
                FhnSetup s = FhnGpuTest.explicitSetup(cells, bc, FhnConfig.CONSTANT);
                for (FhnResult r : FhnCpu.run(s, FhnTestData.sweep(11), 2)) {
                    near |= !Double.isNaN(r.tNear);
                    far |= !Double.isNaN(r.tFar) && r.pulseCount > 0;
                    max |= r.maxV > FhnCpu.initialMax(s.v0);
                }
            }
        }
        assertTrue(near && far && max, "near " + near + ", far " + far + ", max " + max);
    }

    /**
     * The register kernel's segments: lanes per axon a power of two up to 32 holding at most LANES_CMAX cells each,
     * the fewest wasted slots at up to LANES_CPREF cells per lane where n allows (101 cells: 16 lanes of 7),
     * none past 32 LANES_CMAX cells.
     */
    @Test
    void registerSegmentsWasteFewSlots() {
        assertEquals(16, FhnGpu.lanesPerAxon(101)); // 16 x 7 = 112 slots (8 x 13 = 104 would need 13 per lane)
        assertEquals(1, FhnGpu.lanesPerAxon(3));
        assertEquals(32, FhnGpu.lanesPerAxon(257)); // 32 x 9: past 32 x 8 cells, up to 16 per lane
        assertEquals(32, FhnGpu.lanesPerAxon(512));
        assertEquals(0, FhnGpu.lanesPerAxon(513));
        for (int n = 3; n <= 32 * FhnGpu.LANES_CMAX; n++) {
            int l = FhnGpu.lanesPerAxon(n);
            int c = (n + l - 1) / l;
            int cmax = n <= 32 * FhnGpu.LANES_CPREF ? FhnGpu.LANES_CPREF : FhnGpu.LANES_CMAX;
            assertTrue(Integer.bitCount(l) == 1 && l <= 32 && c <= cmax, "n = " + n);
            for (int o = 1; o <= 32; o <<= 1) {
                int oc = (n + o - 1) / o;
                assertTrue(oc > cmax || (long) o * oc >= (long) l * c, "n = " + n + ", lanes " + o);
            }
        }
    }
}
