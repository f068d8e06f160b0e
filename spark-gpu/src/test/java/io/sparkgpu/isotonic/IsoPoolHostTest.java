package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Host-side logic of the device sort and pool, and the CPU routes of {@link IsotonicSolver#solveRows}. */
class IsoPoolHostTest {

    /** Pass k runs iff two keys differ in byte k (checked against the keys themselves, not their histograms). */
    @Test
    void passesAreTheBytesWhereKeysDiffer() {
        SplittableRandom r = new SplittableRandom(5);
        for (int trial = 0; trial < 200; trial++) {
            int n = 1 + r.nextInt(50);
            long base = r.nextLong();
            long mask = 0;
            for (int k = 0; k < 8; k++) {
                if (r.nextInt(3) == 0) {
                    mask |= 0xffL << (8 * k);
                }
            }
            long[] keys = new long[n];
            for (int i = 0; i < n; i++) {
                keys[i] = base ^ (r.nextLong() & mask);
            }
            int[] digits = new int[8 * 256];
            for (long key : keys) {
                for (int k = 0; k < 8; k++) {
                    digits[256 * k + (int) ((key >>> (8 * k)) & 0xff)]++;
                }
            }
            List<Integer> expected = new ArrayList<>();
            for (int k = 0; k < 8; k++) {
                for (int i = 1; i < n; i++) {
                    if (((keys[i] ^ keys[0]) >>> (8 * k) & 0xff) != 0) {
                        expected.add(8 * k);
                        break;
                    }
                }
            }
            assertArrayEquals(expected.stream().mapToInt(Integer::intValue).toArray(), IsoPoolGpu.passes(digits, n));
        }
    }

    @Test
    void scanLevelsEndInOneTotalAndHoldEveryBlock() {
        int t = IsoPoolGpu.SCAN_TILE;
        assertArrayEquals(new int[] {1}, IsoPoolGpu.scanLevels(0));
        assertArrayEquals(new int[] {1}, IsoPoolGpu.scanLevels(t));
        assertArrayEquals(new int[] {2, 1}, IsoPoolGpu.scanLevels(t + 1));
        assertArrayEquals(new int[] {48829, 24, 1}, IsoPoolGpu.scanLevels(100_000_000));
        for (long n : new long[] {1, 2047, 2048, 2049, (long) t * t, (long) t * t + 1, Integer.MAX_VALUE}) {
            int[] s = IsoPoolGpu.scanLevels(n);
            long below = n;
            for (int size : s) {
                assertEquals((below + t - 1) / t, size, "n=" + n);
                below = size;
            }
            assertEquals(1, s[s.length - 1]);
        }
    }

    /** Backend CPU: solveRows is the host pool followed by the CPU solvers, counts included, for every loss. */
    @Test
    void cpuRoutesOfSolveRows() {
        IsoTestData d = IsoTestData.noisy(5000, 300, 11, true);
        d.w[17] = 0;
        d.w[4000] = 0;
        int n = d.x.length;
        IsoScales sc = IsoScales.forData(d.y, d.w, n);
        IsotonicConfig cfg = new IsotonicConfig();
        cfg.backend = Backend.CPU;
        for (IsotonicConfig.Algorithm alg : IsotonicConfig.Algorithm.values()) {
            cfg.algorithm = alg;
            IsotonicSolver.Solved s = IsotonicSolver.solveRows(d.x, d.y, d.w, n, true, sc, IsoColumns.DEFAULT, cfg);
            IsoPoints p = IsoPoints.pool(d.x, d.y, d.w, n, true, sc, false, IsoColumns.DEFAULT);
            assertTrue(IsotonicCpu.pava(p).sameAs((L2Blocks) s.blocks), alg.toString());
            assertEquals(n - 2, s.rows);
            assertEquals(2, s.zeroWeightRows);
            assertEquals(false, s.gpu);
        }
        cfg.algorithm = IsotonicConfig.Algorithm.PAVA;
        cfg.loss = IsotonicConfig.Loss.L1;
        IsotonicSolver.Solved s = IsotonicSolver.solveRows(d.x, d.y, d.w, n, false, sc, IsoColumns.DEFAULT, cfg);
        assertTrue(s.blocks instanceof L1Blocks);
        assertEquals(n - 2, s.rows);
        IsotonicSolver.Solved empty = IsotonicSolver.solveRows(d.x, d.y, d.w, 0, false, sc, IsoColumns.DEFAULT, cfg);
        assertEquals(0, empty.rows);
        d.y[3] = Double.NaN;
        assertThrows(IllegalArgumentException.class,
                () -> IsotonicSolver.solveRows(d.x, d.y, d.w, n, false, sc, IsoColumns.DEFAULT, cfg));
    }
}
