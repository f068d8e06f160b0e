package io.sparkgpu.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.apache.spark.sql.catalyst.util.SQLOrderingUtil;
import org.junit.jupiter.api.Test;

/**
 * The general key path: the wide radix order against a stable comparison sort (TimSort of the indices by unsigned
 * key), the counting/radix choice of SortKeys.order at the 2^24 boundary, and the key encoding against Spark's own
 * comparison of doubles (SQLOrderingUtil: NaN greatest and equal to NaN, -0.0 == 0.0) and of integers.
 */
class SortWideCpuTest {

    /** The unique stable order, by a comparison sort. */
    static int[] refOrder(long[] keys) {
        Integer[] idx = IntStream.range(0, keys.length).boxed().toArray(Integer[]::new);
        Arrays.sort(idx, (a, b) -> Long.compareUnsigned(keys[a], keys[b])); // TimSort: stable
        return Arrays.stream(idx).mapToInt(Integer::intValue).toArray();
    }

    static long[] keys(int n, int bits, int distinct, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        if (distinct >= n) { // (almost) all distinct: draw each key
            long[] k = new long[n];
            for (int i = 0; i < n; i++) {
                k[i] = bits == 64 ? r.nextLong() : r.nextLong() >>> (64 - bits);
            }
            return k;
        }
        long[] pool = new long[Math.max(1, distinct)];
        for (int i = 0; i < pool.length; i++) {
            pool[i] = bits == 64 ? r.nextLong() : r.nextLong() >>> (64 - bits);
        }
        long[] k = new long[n];
        for (int i = 0; i < n; i++) {
            k[i] = pool[r.nextInt(pool.length)];
        }
        return k;
    }

    @Test
    void wideOrderEqualsAStableComparisonSortForEveryWidth() {
        long seed = 1;
        for (int bits : new int[] {1, 8, 11, 12, 24, 25, 31, 32, 33, 40, 63, 64}) {
            for (int n : new int[] {0, 1, 2, 1000, 70_001}) {
                for (int distinct : new int[] {3, 100_000}) { // many ties, few ties
                    long[] k = keys(n, bits, distinct, seed++);
                    String what = "bits=" + bits + " n=" + n + " distinct=" + distinct;
                    int[] ref = refOrder(k);
                    assertArrayEquals(ref, SortCpu.orderWide(k, bits, 1), what + ", one thread");
                    assertArrayEquals(ref, SortCpu.orderWide(k, bits, 5), what + ", 5 parts");
                }
            }
        }
    }

    @Test
    void sortedReversedAndAllEqualInputs() {
        long[] up = new long[5000];
        for (int i = 0; i < up.length; i++) {
            up[i] = (long) i * 0x1_0000_0001L;
        }
        long[] down = up.clone();
        for (int i = 0; i < down.length; i++) {
            down[i] = up[up.length - 1 - i];
        }
        long[] same = new long[5000];
        Arrays.fill(same, -1L);
        for (long[] k : new long[][] {up, down, same}) {
            assertArrayEquals(refOrder(k), SortCpu.orderWide(k, 64));
        }
    }

    @Test
    void badWideInputIsAClearError() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SortCpu.orderWide(new long[] {1, 2, 1L << 40}, 40));
        assertEquals("keys[2] = 1099511627776 is not below 2^40 (every key must be an unsigned number of at most 40 "
                + "bits)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> SortCpu.orderWide(new long[] {1}, 0));
        assertEquals("key bits must be in [1, 64], got 0", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SortCpu.orderWide(new long[] {1}, 65));
        assertThrows(IllegalArgumentException.class, () -> SortCpu.orderWide(null, 8));
    }

    @Test
    void keyOrderChoosesCountingUpTo2To24AndRadixAbove() {
        for (long span : new long[] {0, 1, (1 << 24) - 1, 1 << 24, 1L << 40, -1L}) {
            long base = span == -1L ? 0 : 123_456_789_000L; // the last: the full unsigned range
            long[] k = {base + span, base, base + span / 2, base, base + span};
            SortKeys.Ordered o = SortKeys.order(Backend.CPU, k);
            assertArrayEquals(refOrder(k), o.order, "span " + span);
            assertEquals(Long.compareUnsigned(span, (1 << 24) - 1) <= 0 ? "counting" : "radix", o.path, "span " + span);
            assertEquals("cpu", o.backend);
        }
        assertEquals("none", SortKeys.order(Backend.GPU, new long[] {5}).backend); // nothing to sort: no device
        assertArrayEquals(new int[0], SortKeys.order(Backend.CPU, new long[0]).order);
    }

    @Test
    void doubleKeysOrderAsSparkComparesDoubles() {
        double[] v = {Double.NaN, Double.longBitsToDouble(0xfff8_0000_0000_0001L), Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY, 0.0, -0.0, 1.0, -1.0, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MAX_VALUE,
                -Double.MAX_VALUE, 1e-300, -1e300, 3.5, 3.5000000000000004};
        for (double a : v) {
            for (double b : v) {
                int spark = Integer.signum(SQLOrderingUtil.compareDoubles(a, b));
                assertEquals(spark, Integer.signum(Long.compareUnsigned(SortKeys.ofDouble(a), SortKeys.ofDouble(b))),
                        a + " vs " + b);
                assertEquals(Integer.signum(SQLOrderingUtil.compareFloats((float) a, (float) b)),
                        Integer.signum(Long.compareUnsigned(SortKeys.ofDouble((float) a), SortKeys.ofDouble((float) b))),
                        "floats " + a + " vs " + b);
            }
        }
        long[] ints = {Long.MIN_VALUE, -5, -1, 0, 1, 7, Long.MAX_VALUE};
        for (long a : ints) {
            for (long b : ints) {
                assertEquals(Long.signum(Long.compare(a, b)),
                        Integer.signum(Long.compareUnsigned(SortKeys.signed(a), SortKeys.signed(b))));
                assertTrue(Long.compareUnsigned(~SortKeys.signed(a), ~SortKeys.signed(b)) == -Long.compare(a, b)
                        || Long.signum(Long.compareUnsigned(~SortKeys.signed(a), ~SortKeys.signed(b)))
                        == -Long.signum(Long.compare(a, b)), "descending reverses");
            }
        }
    }
}
