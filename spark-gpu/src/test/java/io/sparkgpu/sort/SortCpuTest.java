package io.sparkgpu.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The CPU twin against Arrays.sort and a stable reference, its parallel paths, its input errors. */
class SortCpuTest {

    private static void assertAllOps(int[] keys, int m, int threads, String what) {
        int[] h = SortCpu.histogram(keys, m, threads);
        assertArrayEquals(SortTestData.refHistogram(keys, m), h, what + ": histogram");
        assertArrayEquals(SortTestData.refSort(keys), SortCpu.sortKeys(keys, m, threads), what + ": sorted keys");
        int[] ref = SortTestData.refOrder(keys);
        assertArrayEquals(ref, SortCpu.order(keys, m, threads), what + ": stable order");
        assertArrayEquals(SortTestData.plus(ref, 1L << 40), SortCpu.orderLong(keys, m, 1L << 40, threads),
                what + ": stable order as long row numbers");
    }

    @Test
    void everyCaseAndEveryKeyRangeBoundaryMatchesTheReferences() {
        long seed = 1;
        for (int m : SortTestData.boundaryRanges()) {
            // large ranges cost O(m) per call: fewer sizes there
            int[] sizes = m <= (1 << 17) ? new int[] {0, 1, 2, 3, 1000, 70_001} : new int[] {0, 1, 5, 70_001};
            for (SortTestData.Case c : SortTestData.CASES) {
                if (c.name().equals("zipf-1.2") && m > (1 << 20)) {
                    continue; // its CDF table is O(m) per call; covered up to 2^20 and by the large tests
                }
                for (int n : sizes) {
                    int[] keys = c.gen().keys(n, m, seed++);
                    assertAllOps(keys, m, 4, c.name() + " n=" + n + " m=" + m);
                }
            }
        }
    }

    @Test
    void parallelPartsGiveTheSingleThreadedOutput() {
        long seed = 500;
        for (int m : new int[] {1, 256, 65_536, 65_537, 1 << 20, 1 << 24}) {
            for (SortTestData.Case c : SortTestData.CASES) {
                if (c.name().equals("zipf-1.2") && m > (1 << 20)) {
                    continue;
                }
                int[] keys = c.gen().keys(1_000_003, m, seed++);
                String what = c.name() + " m=" + m;
                assertArrayEquals(SortCpu.histogram(keys, m, 1), SortCpu.histogram(keys, m, 7), what + ": histogram");
                assertArrayEquals(SortCpu.sortKeys(keys, m, 1), SortCpu.sortKeys(keys, m, 7), what + ": sorted keys");
                int[] one = SortCpu.order(keys, m, 1);
                assertArrayEquals(SortTestData.refOrder(keys), one, what + ": order, one thread");
                assertArrayEquals(one, SortCpu.order(keys, m, 7), what + ": order, 7 parts");
            }
        }
    }

    @Test
    void equalKeysKeepTheirIndexOrder() {
        int[] keys = {2, 1, 2, 0, 1, 2, 0};
        assertArrayEquals(new int[] {3, 6, 1, 4, 0, 2, 5}, SortCpu.order(keys, 3));
        assertArrayEquals(new long[] {13, 16, 11, 14, 10, 12, 15}, SortCpu.orderLong(keys, 3, 10));
        assertArrayEquals(new int[] {0, 0, 1, 1, 2, 2, 2}, SortCpu.sortKeys(keys, 3));
        assertArrayEquals(new int[] {2, 2, 3}, SortCpu.histogram(keys, 3));
        assertArrayEquals(new int[] {2, 2, 3, 0, 0}, SortCpu.histogram(keys, 5));
    }

    @Test
    void twoPassOrderIsStableAcrossTheDigitSplit() {
        // keys differing only above the low digit, and equal keys far apart
        int m = 1 << 20;
        int[] keys = new int[300_000];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = (i % 3 == 0) ? (1 << 19) + 5 : (int) ((i * 7919L) % 7) << 12;
        }
        assertArrayEquals(SortTestData.refOrder(keys), SortCpu.order(keys, m, 1));
        assertArrayEquals(SortTestData.refOrder(keys), SortCpu.order(keys, m, 8));
    }

    // ------------------------------------------------------------------------------------------ errors

    private static void assertMessage(Executable e, String... parts) {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
        for (String p : parts) {
            assertTrue(x.getMessage().contains(p), "message '" + x.getMessage() + "' should contain '" + p + "'");
        }
    }

    @Test
    void keyRangeOutsideOneTo2Pow24IsRejected() {
        int[] keys = {0};
        for (int m : new int[] {0, -1, Integer.MIN_VALUE}) {
            assertMessage(() -> SortCpu.histogram(keys, m), "key range m must be at least 1", "m = " + m);
            assertMessage(() -> SortCpu.order(keys, m), "key range m must be at least 1");
            assertMessage(() -> SortStep.sortKeys(Backend.CPU, keys, m), "key range m must be at least 1");
        }
        for (int m : new int[] {(1 << 24) + 1, Integer.MAX_VALUE}) {
            assertMessage(() -> SortCpu.sortKeys(keys, m), "at most 2^24 = 16777216", "m = " + m);
            assertMessage(() -> SortStep.orderLong(Backend.AUTO, keys, m, 0), "at most 2^24");
        }
        assertEquals(1, SortCpu.histogram(keys, 1 << 24)[0]);
    }

    @Test
    void keysOutsideTheRangeNameTheLowestOffendingPositionAndValue() {
        int m = 256;
        int[] neg = SortTestData.uniform(200_000, m, 3);
        neg[150_001] = -7;
        neg[170_000] = 999;
        int[] big = SortTestData.uniform(200_000, m, 4);
        big[123_457] = 256;
        big[199_999] = -1;
        for (int threads : new int[] {1, 8}) {
            assertMessage(() -> SortCpu.histogram(neg, m, threads), "keys[150001] = -7 is negative", "[0, 256)");
            assertMessage(() -> SortCpu.sortKeys(neg, m, threads), "keys[150001] = -7 is negative");
            assertMessage(() -> SortCpu.order(neg, m, threads), "keys[150001] = -7 is negative");
            assertMessage(() -> SortCpu.orderLong(big, m, 5, threads), "keys[123457] = 256 is not below the key range m = 256");
            assertMessage(() -> SortCpu.checkKeys(big, m, threads), "keys[123457] = 256");
        }
        // the two-pass order checks the keys too
        int[] wide = SortTestData.uniform(100_000, 1 << 20, 5);
        wide[99_999] = 1 << 20;
        assertMessage(() -> SortCpu.order(wide, 1 << 20), "keys[99999] = 1048576 is not below the key range m = 1048576");
        assertMessage(() -> SortCpu.sortKeys(new int[] {0, 1, 2}, 2), "keys[2] = 2 is not below the key range m = 2");
        assertMessage(() -> SortCpu.order(new int[] {1}, 1), "keys[0] = 1");
        assertMessage(() -> SortStep.histogram(Backend.CPU, new int[] {-2147483648}, 4),
                "keys[0] = -2147483648 is negative");
    }

    @Test
    void otherArgumentsAreChecked() {
        assertMessage(() -> SortCpu.histogram(null, 4), "keys must not be null");
        assertMessage(() -> SortStep.order(Backend.CPU, null, 4), "keys must not be null");
        assertMessage(() -> SortCpu.order(new int[] {0}, 4, 0), "threads must be at least 1");
        assertMessage(() -> SortCpu.orderLong(new int[] {0}, 4, -1), "first index must be >= 0", "first = -1");
        assertMessage(() -> SortCpu.orderLong(new int[] {0, 0}, 4, Long.MAX_VALUE - 1), "must fit in a long");
    }

    // ------------------------------------------------------------------------------------------ dispatch, plans

    @Test
    void cpuBackendRunsTheTwin() {
        int[] keys = SortTestData.oneHot(10_000, 1000, 9);
        var sorted = SortStep.sortKeys(Backend.CPU, keys, 1000);
        assertArrayEquals(SortTestData.refSort(keys), sorted.value);
        assertEquals("cpu", sorted.backend());
        assertArrayEquals(SortTestData.refOrder(keys), SortStep.order(Backend.CPU, keys, 1000).value);
        assertArrayEquals(SortTestData.refHistogram(keys, 1000), SortStep.histogram(Backend.CPU, keys, 1000).value);
        var order = SortStep.orderLong(Backend.CPU, keys, 1000, 7);
        assertArrayEquals(SortTestData.plus(SortTestData.refOrder(keys), 7), order.value);
        assertEquals("cpu", order.backend());
    }

    @Test
    void keyWindowsRespectTheCapacityAndPartitionStably() {
        int m = 5000;
        int[] keys = SortTestData.oneHot(100_000, m, 11);
        int[] hist = SortCpu.histogram(keys, m);
        for (long cap : new long[] {1, 40, 1000, 30_000, 100_000, Long.MAX_VALUE}) {
            int[] b = SortCpu.windows(hist, cap);
            assertEquals(0, b[0]);
            assertEquals(m, b[b.length - 1]);
            for (int w = 0; w + 1 < b.length; w++) {
                assertTrue(b[w] < b[w + 1], "windows are not empty");
                long sum = 0;
                for (int k = b[w]; k < b[w + 1]; k++) {
                    sum += hist[k];
                }
                assertTrue(sum <= cap || b[w + 1] - b[w] == 1, "window " + w + " holds " + sum + " > " + cap);
            }
            int[] start = new int[b.length];
            int[] part = SortCpu.partitionByWindow(keys, b, start, 4);
            assertEquals(keys.length, start[b.length - 1]);
            for (int w = 0; w + 1 < b.length; w++) {
                for (int j = start[w]; j < start[w + 1]; j++) {
                    int k = keys[part[j]];
                    assertTrue(k >= b[w] && k < b[w + 1], "index in its window");
                    assertTrue(j == start[w] || part[j - 1] < part[j], "increasing indices in a window");
                }
            }
        }
    }

    @Test
    void passPlansCoverTheKeyBitsWithAtMostEightBitsEach() {
        for (int m : SortTestData.boundaryRanges()) {
            int[] bits = SortGpu.passBits(m);
            int sum = 0;
            for (int b : bits) {
                assertTrue(b >= 1 && b <= 8, "pass of " + b + " bits for m = " + m);
                sum += b;
            }
            assertEquals(Math.max(1, SortCpu.keyBits(m)), sum, "m = " + m);
            assertEquals((Math.max(1, SortCpu.keyBits(m)) + 7) / 8, bits.length, "passes for m = " + m);
            assertTrue((1L << SortGpu.levels(m)) >= m && (1L << SortGpu.levels(m)) < 2L * m, "pyramid leaves for " + m);
        }
        assertArrayEquals(new int[] {8, 8, 8}, SortGpu.passBits(1 << 24));
        assertArrayEquals(new int[] {7, 7, 6}, SortGpu.passBits(1 << 20));
        assertArrayEquals(new int[] {1}, SortGpu.passBits(1));
        assertEquals(List.of(4, 4, 8, 8), List.of(SortGpu.radixOf(1), SortGpu.radixOf(4), SortGpu.radixOf(5),
                SortGpu.radixOf(8)));
    }
}
