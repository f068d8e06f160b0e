package io.sparkgpu.scan;

import java.io.Serializable;
import java.util.Arrays;

/**
 * The shape of a scan grid (1, 2 or 3 axes; axis 0 is x, the fastest-varying) and the composed range
 * mapping: the global range index g in [0, M), M = T_0 * T_1 * T_2 with T_k = n_k(n_k+1)/2, is the mixed
 * radix number g = i_0 + T_0 * (i_1 + T_1 * i_2) whose digits are the per-axis interval indices of
 * {@link RangeMapping}. So every axis-aligned box of cells has exactly one index, and a contiguous index range
 * [lo, hi) is an equal share of the work whatever the box sizes inside it.
 *
 * <p>A <i>strip</i> s = i_1 + T_1 * i_2 fixes the y- and z-intervals; its T_0 boxes differ only in their
 * x-interval, so one 1-D prefix array along x per strip answers each of them in O(1). For the limits on
 * the sizes see {@link #MAX_AXIS_1D}, {@link #MAX_AXIS_ND} and {@link #MAX_CELLS}.
 */
public final class ScanShape implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Largest 1-D grid: the prefix arrays are read from the GPU's L2 cache, 16 bytes per cell. */
    public static final int MAX_AXIS_1D = 1 << 20;
    /** Largest axis of a 2-D or 3-D grid: a strip's x prefix arrays must fit in a block's shared memory. */
    public static final int MAX_AXIS_ND = 4096;
    /** Largest number of cells of any grid. */
    public static final int MAX_CELLS = 1 << 24;

    private final int[] n;
    private final long[] t;
    private final long m;

    /** @param sizes 1 to 3 axis sizes, x first */
    public ScanShape(int... sizes) {
        if (sizes == null || sizes.length < 1 || sizes.length > 3) {
            throw new IllegalArgumentException("a scan grid has 1, 2 or 3 axes, got "
                    + (sizes == null ? "none" : sizes.length));
        }
        long cells = 1;
        int max = sizes.length == 1 ? MAX_AXIS_1D : MAX_AXIS_ND;
        for (int k = 0; k < sizes.length; k++) {
            if (sizes[k] < 1) {
                throw new IllegalArgumentException("grid axis " + k + " has size " + sizes[k] + "; the grid is empty");
            }
            if (sizes[k] > max) {
                throw new IllegalArgumentException("grid axis " + k + " has size " + sizes[k] + ", over the supported "
                        + "maximum of " + max + " for a " + sizes.length + "-D grid");
            }
            cells *= sizes[k];
        }
        if (cells > MAX_CELLS) {
            throw new IllegalArgumentException("grid " + Arrays.toString(sizes) + " has " + cells + " cells, over the "
                    + "supported maximum of " + MAX_CELLS);
        }
        n = sizes.clone();
        t = new long[3];
        long mm = 1;
        for (int k = 0; k < 3; k++) {
            t[k] = k < n.length ? RangeMapping.count(n[k]) : 1;
            mm = Math.multiplyExact(mm, t[k]);
        }
        m = mm;
    }

    /** Number of axes (1 to 3). */
    public int dims() {
        return n.length;
    }

    /** Size of axis k; 1 for k >= dims(). */
    public int size(int k) {
        return k < n.length ? n[k] : 1;
    }

    /** A copy of the axis sizes. */
    public int[] sizes() {
        return n.clone();
    }

    /** Number of cells. */
    public int cells() {
        return size(0) * size(1) * size(2);
    }

    /** Number of intervals of axis k (1 for k >= dims()). */
    public long intervals(int k) {
        return t[k];
    }

    /** Number of boxes M. */
    public long ranges() {
        return m;
    }

    /** Number of strips (fixed y- and z-intervals) T_1 * T_2. */
    public long strips() {
        return t[1] * t[2];
    }

    /** Length of the prefix tables: (n_x+1)(n_y+1)(n_z+1) over the existing axes. */
    public int tableLength() {
        int len = 1;
        for (int s : n) {
            len *= s + 1;
        }
        return len;
    }

    /** Stride of axis k in the prefix table (0 for missing axes). */
    public int tableStride(int k) {
        if (k >= n.length) {
            return 0;
        }
        int s = 1;
        for (int j = 0; j < k; j++) {
            s *= n[j] + 1;
        }
        return s;
    }

    /** Flattened cell index of (x, y, z) with x fastest. */
    public int cell(int x, int y, int z) {
        return x + size(0) * (y + size(1) * z);
    }

    /** Position of cell {@code c} in the prefix table (each coordinate shifted by one). */
    public int tableIndexOfCell(int c) {
        int x = c % size(0);
        int rest = c / size(0);
        int y = rest % size(1);
        int z = rest / size(1);
        return (x + 1) + tableStride(1) * (y + 1) + tableStride(2) * (z + 1);
    }

    /**
     * The box with global index g as {@code {lo_0, hi_0, lo_1, hi_1, lo_2, hi_2}} (inclusive cell bounds;
     * axes beyond dims() are {0, 0}).
     */
    public int[] decode(long g) {
        if (g < 0 || g >= m) {
            throw new IndexOutOfBoundsException("range index " + g + " outside [0, " + m + ")");
        }
        int[] box = new int[6];
        long rest = g;
        for (int k = 0; k < 3; k++) {
            long ik = rest % t[k];
            rest /= t[k];
            if (k < n.length) {
                int[] ab = RangeMapping.decode(n[k], ik);
                box[2 * k] = ab[0];
                box[2 * k + 1] = ab[1];
            }
        }
        return box;
    }

    /** Global index of a box given as {lo_0, hi_0, ...} over dims() axes (further entries ignored). */
    public long encode(int[] box) {
        long g = 0;
        for (int k = n.length - 1; k >= 0; k--) {
            g = g * t[k] + RangeMapping.encode(n[k], box[2 * k], box[2 * k + 1]);
        }
        return g;
    }

    /** Number of cells of a box. */
    public static long boxCells(int[] box) {
        return (long) (box[1] - box[0] + 1) * (box[3] - box[2] + 1) * (box[5] - box[4] + 1);
    }

    /** True when two boxes share at least one cell. */
    public static boolean overlap(int[] p, int[] q) {
        for (int k = 0; k < 3; k++) {
            if (p[2 * k + 1] < q[2 * k] || q[2 * k + 1] < p[2 * k]) {
                return false;
            }
        }
        return true;
    }

    /**
     * Part {@code p} of {@code parts} equal contiguous shares of [0, total): the first total mod parts shares
     * are one longer. Returns {lo, hi}.
     */
    public static long[] share(long total, int p, int parts) {
        if (parts < 1 || p < 0 || p >= parts) {
            throw new IllegalArgumentException("share " + p + " of " + parts);
        }
        long q = total / parts;
        long r = total % parts;
        long lo = q * p + Math.min(p, r);
        long hi = lo + q + (p < r ? 1 : 0);
        return new long[] {lo, hi};
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ScanShape && Arrays.equals(n, ((ScanShape) o).n);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(n);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (int k = 0; k < n.length; k++) {
            sb.append(k == 0 ? "" : "x").append(n[k]);
        }
        return sb.toString();
    }
}
