package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.BitSet;
import org.junit.jupiter.api.Test;

/** The range mapping is a bijection onto the intervals, per axis and composed across axes. */
class RangeMappingTest {

    @Test
    void everyAxisSizeUpTo300IsABijectionThroughTheRectangle() {
        for (int n = 1; n <= 300; n++) {
            long t = RangeMapping.count(n);
            assertEquals((long) n * (n + 1) / 2, t);
            int w = RangeMapping.width(n);
            int h = RangeMapping.height(n);
            assertEquals(t, (long) w * h, "rectangle of n=" + n);
            assertEquals(n % 2 == 0 ? n + 1 : n, w, "width of n=" + n);
            BitSet seen = new BitSet(n * n);
            for (int row = 0; row < h; row++) {
                for (int col = 0; col < w; col++) {
                    long i = (long) row * w + col;
                    int a = RangeMapping.lo(n, row, col);
                    int b = RangeMapping.hi(n, row, col);
                    assertTrue(0 <= a && a <= b && b < n, "n=" + n + " cell (" + row + "," + col + ") gave [" + a + "," + b + "]");
                    assertFalse(seen.get(a * n + b), "n=" + n + ": interval [" + a + "," + b + "] hit twice");
                    seen.set(a * n + b);
                    int[] d = RangeMapping.decode(n, i);
                    assertEquals(a, d[0]);
                    assertEquals(b, d[1]);
                    assertEquals(i, RangeMapping.encode(n, a, b), "encode inverts decode, n=" + n + " i=" + i);
                }
            }
            // t distinct intervals out of the t that exist: the map is onto
            assertEquals(t, seen.cardinality(), "n=" + n);
            for (int a = 0; a < n; a++) {
                for (int b = a; b < n; b++) {
                    assertTrue(seen.get(a * n + b), "n=" + n + " misses [" + a + "," + b + "]");
                }
            }
        }
    }

    @Test
    void evenAndOddRowsPairTheExpectedStarts() {
        // n even: row r holds starts r and n-1-r; n odd: row 0 holds start 0, row r >= 1 starts r and n-r
        assertEquals(java.util.List.of(0, 0, 0, 0, 0, 0, 5), starts(6, 0));
        assertEquals(java.util.List.of(2, 2, 2, 2, 3, 3, 3), starts(6, 2));
        assertEquals(java.util.List.of(0, 0, 0, 0, 0), starts(5, 0));
        assertEquals(java.util.List.of(2, 2, 2, 3, 3), starts(5, 2));
    }

    private static java.util.List<Integer> starts(int n, int row) {
        java.util.List<Integer> out = new java.util.ArrayList<>();
        for (int col = 0; col < RangeMapping.width(n); col++) {
            out.add(RangeMapping.lo(n, row, col));
        }
        return out;
    }

    @Test
    void composed2dAnd3dMappingsAreBijections() {
        for (int nx = 1; nx <= 24; nx++) {
            for (int ny = 1; ny <= 24; ny += (ny < 8 ? 1 : 5)) {
                checkShape(new ScanShape(nx, ny));
            }
        }
        checkShape(new ScanShape(300, 2));
        checkShape(new ScanShape(3, 299));
        for (int nx = 1; nx <= 7; nx++) {
            for (int ny = 1; ny <= 6; ny++) {
                for (int nz = 1; nz <= 5; nz++) {
                    checkShape(new ScanShape(nx, ny, nz));
                }
            }
        }
        checkShape(new ScanShape(12, 9, 10));
    }

    private static void checkShape(ScanShape sh) {
        int nx = sh.size(0);
        int ny = sh.size(1);
        int nz = sh.size(2);
        long m = sh.ranges();
        assertEquals(RangeMapping.count(nx) * RangeMapping.count(ny) * RangeMapping.count(nz), m);
        BitSet seen = new BitSet();
        for (long g = 0; g < m; g++) {
            int[] box = sh.decode(g);
            for (int k = 0; k < 3; k++) {
                assertTrue(0 <= box[2 * k] && box[2 * k] <= box[2 * k + 1] && box[2 * k + 1] < sh.size(k),
                        sh + " index " + g);
            }
            int key = ((box[0] * nx + box[1]) * ny * ny + box[2] * ny + box[3]) * nz * nz + box[4] * nz + box[5];
            assertFalse(seen.get(key), sh + ": box hit twice at index " + g);
            seen.set(key);
            assertEquals(g, sh.encode(box), sh + " encode(decode(g))");
        }
        assertEquals(m, seen.cardinality());
    }

    @Test
    void sharesAreContiguousEqualAndCoverTheIndexSpace() {
        for (long total : new long[] {0, 1, 7, 1000, 1L << 40}) {
            for (int parts = 1; parts <= 9; parts++) {
                long next = 0;
                for (int p = 0; p < parts; p++) {
                    long[] s = ScanShape.share(total, p, parts);
                    assertEquals(next, s[0]);
                    long len = s[1] - s[0];
                    assertTrue(len == total / parts || len == total / parts + 1);
                    next = s[1];
                }
                assertEquals(total, next);
            }
        }
    }

    @Test
    void gridSizesOverTheMaximumAreRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ScanShape(ScanShape.MAX_AXIS_1D + 1));
        assertTrue(e.getMessage().contains("over the supported maximum"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new ScanShape(10, ScanShape.MAX_AXIS_ND + 1));
        assertTrue(e.getMessage().contains("axis 1") && e.getMessage().contains("maximum"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new ScanShape(4096, 4096, 2));
        assertTrue(e.getMessage().contains("cells"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new ScanShape(1, 2, 3, 4));
        assertTrue(e.getMessage().contains("1, 2 or 3 axes"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new ScanShape(5, 0));
        assertTrue(e.getMessage().contains("empty"), e.getMessage());
    }
}
