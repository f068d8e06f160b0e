package io.sparkgpu.scan;

/**
 * The range mapping of one axis: a bijection between the index set {0, ..., T-1}, T = n(n+1)/2, and the
 * intervals [a, b], 0 <= a <= b < n, of an axis of n cells, that goes through a rectangle of H rows and W
 * columns (H * W = T), so that consecutive indices are consecutive cells of the rectangle and any
 * contiguous index range is an equal share of work (every interval costs O(1) with prefix sums).
 *
 * <p>The construction (from the idea in Beliakov et al., "Fast LRT implementation on parallel computer
 * architectures": fold the triangle of intervals onto a rectangle). Row r of the triangle, the intervals
 * starting at a = r, has n - r members. Two such rows whose lengths add up to the rectangle's width share a
 * rectangle row: the first occupies columns 0 .. n-r-1 and the second the remaining columns.
 * <ul>
 *   <li>n even: W = n + 1, H = n / 2. Rectangle row r (0 <= r < n/2) holds start r (n - r intervals) and
 *       start n-1-r (r + 1 intervals). Column c < n - r is [r, r + c]; column c >= n - r is [n-1-r, c-1].</li>
 *   <li>n odd: W = n, H = (n + 1) / 2. Row 0 holds start 0 alone (n intervals); row r >= 1 holds start r
 *       (n - r intervals) and start n - r (r intervals). Column c < n - r is [r, r + c]; column c >= n - r
 *       is [n - r, c].</li>
 * </ul>
 * Both cases read: second part [n-1-r+odd, c-1+odd] with odd = n mod 2. Every start a in 0..n-1 appears
 * in exactly one row (even: r and n-1-r cover 0..n/2-1 and n/2..n-1; odd: 0, r and n-r cover 0..n-1), and
 * within it every end b in a..n-1 appears once, so the map is a bijection; {@link #encode} is its inverse.
 * The index is {@code row * W + col}. Decoding costs one division, or none when walking indices in steps.
 */
final class RangeMapping {
    /** Largest axis size for which the triangle count and all indices fit comfortably in a long. */
    public static final int MAX_AXIS = 1 << 30;

    private RangeMapping() {
    }

    /** Number of intervals of an axis of n cells: n(n+1)/2. */
    public static long count(int n) {
        checkAxis(n);
        return (long) n * (n + 1) / 2;
    }

    /** Width W of the rectangle: n + 1 for even n, n for odd n. */
    public static int width(int n) {
        checkAxis(n);
        return (n & 1) == 0 ? n + 1 : n;
    }

    /** Height H of the rectangle: n / 2 for even n, (n + 1) / 2 for odd n. */
    public static int height(int n) {
        checkAxis(n);
        return (n & 1) == 0 ? n / 2 : (n + 1) / 2;
    }

    /** Lower end of the interval at rectangle cell (row, col). */
    public static int lo(int n, int row, int col) {
        return col < n - row ? row : n - 1 - row + (n & 1);
    }

    /** Upper end of the interval at rectangle cell (row, col). */
    public static int hi(int n, int row, int col) {
        return col < n - row ? row + col : col - 1 + (n & 1);
    }

    /** The interval with index {@code i} as {@code {a, b}}. */
    public static int[] decode(int n, long i) {
        if (i < 0 || i >= count(n)) {
            throw new IndexOutOfBoundsException("interval index " + i + " outside [0, " + count(n) + ") for n=" + n);
        }
        int w = width(n);
        int row = (int) (i / w);
        int col = (int) (i - (long) row * w);
        return new int[] {lo(n, row, col), hi(n, row, col)};
    }

    /** The index of the interval [a, b] (0 <= a <= b < n). */
    public static long encode(int n, int a, int b) {
        checkAxis(n);
        if (a < 0 || b < a || b >= n) {
            throw new IndexOutOfBoundsException("interval [" + a + ", " + b + "] is not inside 0.." + (n - 1));
        }
        int w = width(n);
        int row;
        int col;
        if ((n & 1) == 0) {
            if (a < n / 2) {
                row = a;
                col = b - a;
            } else {
                row = n - 1 - a;
                col = b + 1;
            }
        } else {
            if (a <= (n - 1) / 2) {
                row = a;
                col = b - a;
            } else {
                row = n - a;
                col = b;
            }
        }
        return (long) row * w + col;
    }

    private static void checkAxis(int n) {
        if (n < 1 || n > MAX_AXIS) {
            throw new IllegalArgumentException("axis size must be in [1, " + MAX_AXIS + "], got " + n);
        }
    }
}
