package io.sparkgpu.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.Comparator;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The pair radix sort's CPU twin against a second algorithm (a stable comparison sort by unsigned key), for keys
 * whose digits are shared by every key in some passes (skipped) and not in others, ties, sign bits, and the
 * lengths 0, 1, 2; and its pass selection against the digit counts.
 */
class PairRadixSortTest {
    /** n keys: random low {@code bits} bits over a fixed high pattern, ties from a small pool when asked. */
    static long[] keys(int n, int bits, boolean ties, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long high = r.nextLong() & (bits == 64 ? 0 : -1L << bits);
        long[] pool = new long[7];
        for (int i = 0; i < pool.length; i++) {
            pool[i] = r.nextLong();
        }
        long[] k = new long[n];
        for (int i = 0; i < n; i++) {
            long low = ties ? pool[r.nextInt(pool.length)] : r.nextLong();
            k[i] = high | (bits == 64 ? low : low & ((1L << bits) - 1));
        }
        return k;
    }

    static void check(long[] keys) {
        int n = keys.length;
        Integer[] ref = new Integer[n];
        for (int i = 0; i < n; i++) {
            ref[i] = i;
        }
        Arrays.sort(ref, Comparator.comparing(i -> keys[i], Long::compareUnsigned)); // stable
        long[] k = keys.clone();
        int[] idx = new int[n];
        for (int i = 0; i < n; i++) {
            idx[i] = i;
        }
        PairRadixSort.sort(k, idx, n);
        int[] want = Arrays.stream(ref).mapToInt(Integer::intValue).toArray();
        assertArrayEquals(want, idx, "n=" + n);
        long[] sorted = new long[n];
        for (int j = 0; j < n; j++) {
            sorted[j] = keys[want[j]];
        }
        assertArrayEquals(sorted, k, "keys move with their indices, n=" + n);
    }

    @Test
    void equalsAStableComparisonSort() {
        long seed = 3;
        for (int n : new int[] {0, 1, 2, 3, 255, 256, 257, 5000}) {
            for (int bits : new int[] {0, 1, 8, 13, 32, 63, 64}) {
                for (boolean ties : new boolean[] {false, true}) {
                    check(keys(n, bits, ties, seed++));
                }
            }
        }
        check(new long[] {-1L, 0L, Long.MIN_VALUE, Long.MAX_VALUE, -1L, 0L, 1L});
    }

    @Test
    void passesSkipDigitsSharedByEveryKey() {
        long[] k = keys(1000, 13, false, 11); // digits 0 and 1 vary, 2..7 are the fixed high pattern
        int[] digits = new int[PairRadixSort.PASSES * PairRadixSort.DIGITS];
        for (long v : k) {
            for (int p = 0; p < PairRadixSort.PASSES; p++) {
                digits[PairRadixSort.DIGITS * p + (int) ((v >>> (8 * p)) & 0xff)]++;
            }
        }
        assertArrayEquals(new int[] {0, 8}, PairRadixSort.passes(digits, k.length));
        int[] same = new int[PairRadixSort.PASSES * PairRadixSort.DIGITS];
        for (int p = 0; p < PairRadixSort.PASSES; p++) {
            same[PairRadixSort.DIGITS * p + 5] = 10; // ten equal keys: nothing to do
        }
        assertArrayEquals(new int[0], PairRadixSort.passes(same, 10));
    }
}
