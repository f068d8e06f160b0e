package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Host-side layout and launch arithmetic of {@link KMeansGpu}; runs without a GPU. */
class KMeansGpuLayoutTest {

    @Test
    void centreRowsArePaddedWithZerosToAMultipleOfFour() {
        assertEquals(4, KMeansGpu.paddedDim(1));
        assertEquals(4, KMeansGpu.paddedDim(4));
        assertEquals(8, KMeansGpu.paddedDim(5));
        assertEquals(68, KMeansGpu.paddedDim(65));
        double[] c = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        assertArrayEquals(new double[] {1, 2, 3, 4, 5, 0, 0, 0, 6, 7, 8, 9, 10, 0, 0, 0, 11, 12, 13, 14, 15, 0, 0, 0},
                KMeansGpu.paddedCentres(c, 3, 5));
        double[] aligned = new double[2 * 8];
        assertSame(aligned, KMeansGpu.paddedCentres(aligned, 2, 8), "no copy when d is already a multiple of 4");
    }

    /** The register kernels for d <= 32 take two points per thread; the grid must still cover every row. */
    @Test
    void gridCoversAllRowsForOneAndTwoPointsPerThread() {
        for (int d : new int[] {1, 8, 9, 16, 17, 32, 33, 64, 65, 300}) {
            String kernel = KMeansGpu.kernelFor(d);
            int ppt = KMeansGpu.pointsPerThread(d);
            boolean twoPointKernel = kernel.equals("kmeans_step_d8") || kernel.equals("kmeans_step_d16")
                    || kernel.equals("kmeans_step_d32");
            assertEquals(twoPointKernel ? 2 : 1, ppt, "points per thread of " + kernel);
            for (int m : new int[] {1, 2, 255, 256, 257, 511, 512, 513, 1_000_003}) {
                int grid = KMeansGpu.gridFor(m, d, Integer.MAX_VALUE);
                assertTrue((long) grid * KMeansGpu.BLOCK * ppt >= m, "m=" + m + " d=" + d);
                assertTrue((long) (grid - 1) * KMeansGpu.BLOCK * ppt < m, "a block without work: m=" + m + " d=" + d);
                assertEquals(Math.min(grid, 7), KMeansGpu.gridFor(m, d, 7), "capped by the resident limit");
            }
        }
    }

    @Test
    void planUsesTheScreeningKernelOnlyWhereItApplies() {
        long shared = 227 * 1024 - 1024;
        KMeansGpu.Filter f = KMeansGpu.Filter.of(new double[64 * 32], 64, 32);
        KMeansGpu.Plan p = KMeansGpu.plan(64, 32, true, f, shared, null);
        assertTrue(p.filter);
        assertEquals("kmeans_filt_d32", p.kernel);
        assertTrue(p.accInShared && p.centresInShared, "k=64, d=32 keeps everything in shared memory");
        assertEquals(2, p.pointsPerThread);
        assertFalse(KMeansGpu.plan(64, 32, true, null, shared, null).filter, "no filter data: FP64 kernel");
        assertNull(KMeansGpu.filterFor(new double[64 * 32], 64, 32, true), "cosine");
        assertNull(KMeansGpu.filterFor(new double[2 * 65], 2, 65, false), "d > 64");
        KMeansGpu.Plan big = KMeansGpu.plan(1000, 64, true, KMeansGpu.Filter.of(new double[1000 * 64], 1000, 64),
                shared, null);
        assertFalse(big.filter, "256 KB of FP32 centres do not fit: FP64 kernel");
        KMeansGpu.Plan mid = KMeansGpu.plan(1000, 32, true, KMeansGpu.Filter.of(new double[1000 * 32], 1000, 32),
                shared, null);
        assertTrue(mid.filter && !mid.accInShared && !mid.centresInShared, "FP32 centres only in shared memory");
        for (int d : new int[] {1, 8, 9, 16, 17, 32, 33, 64}) {
            KMeansGpu.Plan q = KMeansGpu.plan(3, d, true, KMeansGpu.Filter.of(new double[3 * d], 3, d), shared, null);
            assertEquals(KMeansGpu.filterPointsPerThread(d), q.pointsPerThread);
            for (int m : new int[] {1, 255, 256, 257, 1023, 1025, 1_000_003}) {
                long g = q.grid(m);
                assertTrue(g * KMeansGpu.BLOCK * q.pointsPerThread >= m, "d=" + d + " m=" + m);
                assertTrue((g - 1) * KMeansGpu.BLOCK * q.pointsPerThread < m, "d=" + d + " m=" + m);
            }
        }
    }

    @Test
    void accumulateModePropertyIsParsedStrictly() {
        assertFalse(KMeansGpu.parseAccumulateMode(null), "unset: atomic");
        assertFalse(KMeansGpu.parseAccumulateMode(""));
        assertFalse(KMeansGpu.parseAccumulateMode("atomic"));
        assertFalse(KMeansGpu.parseAccumulateMode(" ATOMIC "));
        assertTrue(KMeansGpu.parseAccumulateMode("sorted"));
        assertTrue(KMeansGpu.parseAccumulateMode(" Sorted"));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> KMeansGpu.parseAccumulateMode("sort"));
        assertEquals("sparkgpu.kmeans.accumulate", KMeansGpu.ACCUMULATE_PROPERTY);
    }

    /** Shared bytes of the sort region: cnt[k], off[k+1], an index and a label per point of the tile. */
    @Test
    void sortRegionSize() {
        assertEquals(4L * (64 + 65 + 2 * 512), KMeansGpu.sortBytes(64, 2));
        assertEquals(4L * (1 + 2 + 2 * 1024), KMeansGpu.sortBytes(1, 4));
        assertEquals(4L * (1000 + 1001 + 2 * 256), KMeansGpu.sortBytes(1000, 1));
    }

    /**
     * Sorted mode picks the *_sorted register kernel (both families) for accumulating steps with d <= 64, adds the
     * sort region to the shared bytes and otherwise keeps the atomic plan's layout where everything fits; it falls
     * back to the atomic kernels for d > 64, for non-accumulating (assignment / k-means||) steps and where the
     * sort region does not fit.
     */
    @Test
    void planSelectsTheSortedVariant() {
        long shared = 227 * 1024 - 1024;
        for (int d : new int[] {1, 3, 5, 8, 9, 16, 17, 31, 32, 33, 64}) {
            for (int k : new int[] {1, 2, 3, 64}) {
                KMeansGpu.Filter f = KMeansGpu.Filter.of(new double[k * d], k, d);
                for (KMeansGpu.Filter ff : new KMeansGpu.Filter[] {f, null}) {
                    KMeansGpu.Plan a = KMeansGpu.plan(k, d, true, ff, shared, null, false);
                    KMeansGpu.Plan s = KMeansGpu.plan(k, d, true, ff, shared, null, true);
                    String what = "d=" + d + " k=" + k + (ff != null ? " screening" : " FP64");
                    assertFalse(a.sorted, what);
                    assertFalse(a.kernel.endsWith("_sorted"), what);
                    assertTrue(s.sorted, what);
                    assertEquals(a.kernel + "_sorted", s.kernel, what);
                    assertEquals(a.filter, s.filter, what);
                    assertEquals(ff != null, s.filter, what);
                    assertEquals(a.pointsPerThread, s.pointsPerThread, what);
                    assertEquals(a.accInShared, s.accInShared, what);
                    assertEquals(a.centresInShared, s.centresInShared, what);
                    assertEquals(a.shared + KMeansGpu.sortBytes(k, s.pointsPerThread), s.shared, what);
                    assertTrue(s.shared <= shared, what);
                    KMeansGpu.Plan noAcc = KMeansGpu.plan(k, d, false, ff, shared, null, true);
                    assertFalse(noAcc.sorted || noAcc.kernel.endsWith("_sorted"), "no accumulation: " + what);
                }
            }
        }
        KMeansGpu.Plan wide = KMeansGpu.plan(5, 65, true, null, shared, null, true);
        assertEquals("kmeans_step_dany", wide.kernel);
        assertFalse(wide.sorted);
        // the sort region alone exceeds shared memory: atomic kernel
        KMeansGpu.Plan huge = KMeansGpu.plan(30_000, 1, true, null, shared, null, true);
        assertTrue(KMeansGpu.sortBytes(30_000, 2) > shared);
        assertFalse(huge.sorted);
        assertEquals("kmeans_step_d8", huge.kernel);
        // the sort region is reserved first: the accumulator leaves shared memory rather than the sort
        long accBytes = 8L * KMeansAccumulator.length(64, 32);
        long fBytes = KMeansGpu.filterFloatBytes(64, 32);
        long tight = fBytes + accBytes + 100;
        KMeansGpu.Filter f32 = KMeansGpu.Filter.of(new double[64 * 32], 64, 32);
        assertTrue(KMeansGpu.plan(64, 32, true, f32, tight, null, false).accInShared);
        KMeansGpu.Plan t = KMeansGpu.plan(64, 32, true, f32, tight, null, true);
        assertTrue(t.sorted && !t.accInShared, "sort region first");
        assertTrue(t.centresInShared, "the FP64 centres (16 KB) still fit where the accumulator (34 KB) does not");
        assertEquals(fBytes + 8L * 64 * 32 + KMeansGpu.sortBytes(64, 2), t.shared);
        // the default is what the property says (unset in the test JVM: atomic)
        assertEquals(KMeansGpu.parseAccumulateMode(System.getProperty(KMeansGpu.ACCUMULATE_PROPERTY)),
                KMeansGpu.useSorted);
    }
}
