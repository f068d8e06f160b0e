package io.sparkgpu.isotonic;

import io.sparkgpu.common.Int128;
import java.io.Serializable;
import java.util.Arrays;

/**
 * The least-squares isotonic solution of a contiguous feature range as its blocks (level sets): block b covers
 * the distinct features {@code xStart[b] .. xEnd[b]} and holds the exact sums (s, w) of its points in
 * {@code acc[4b..4b+3]}; its fitted value is s/w. Block means strictly increase (adjacent blocks with equal means
 * are pooled, as MLlib does by merging on {@code >=}).
 *
 * <p>{@link #merge} is the decomposition theorem of PAVA: the solution of the concatenation of two adjacent
 * ranges is PAVA applied to the concatenation of their solutions, so partitions can be solved separately and
 * combined pairwise. Because every comparison is exact ({@link Int128#compareRatio}) the solution is unique and
 * so are its bits: any partitioning, merge order, algorithm (PAVA, chunked PAVA, MLS) or backend gives the same
 * blocks and sums.
 */
public final class L2Blocks implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final L2Blocks EMPTY = new L2Blocks(0, new double[0], new double[0], new long[0]);

    public final int m;
    public final double[] xStart;
    public final double[] xEnd;
    public final long[] acc;

    public L2Blocks(int m, double[] xStart, double[] xEnd, long[] acc) {
        this.m = m;
        this.xStart = xStart;
        this.xEnd = xEnd;
        this.acc = acc;
    }

    /**
     * Blocks of points {@code p} given by their first point index {@code start[0..m)} (increasing, start[0] = 0)
     * and their sums {@code acc[0..4m)}.
     */
    public static L2Blocks fromStarts(IsoPoints p, int[] start, long[] acc, int m) {
        double[] xs = new double[m];
        double[] xe = new double[m];
        for (int b = 0; b < m; b++) {
            xs[b] = p.x[start[b]];
            xe[b] = p.x[(b + 1 < m ? start[b + 1] : p.n) - 1];
        }
        return new L2Blocks(m, xs, xe, acc.length == 4 * m ? acc : Arrays.copyOf(acc, 4 * m));
    }

    /** Fitted value of block b (s/w, see {@link IsoScales#mean}). */
    public double mean(int b, IsoScales sc) {
        return sc.mean(acc[4 * b], acc[4 * b + 1], acc[4 * b + 2], acc[4 * b + 3]);
    }

    /** Total weight of block b. */
    public double weight(int b, IsoScales sc) {
        return sc.weight(acc[4 * b + 2], acc[4 * b + 3]);
    }

    /**
     * PAVA of the concatenation of two solutions of adjacent ranges ({@code left} entirely below {@code right}):
     * the blocks of {@code right} are pushed onto {@code left}'s, pooling while the top block's mean is at least
     * the pushed one's. O(m_left + m_right), exact.
     */
    public static L2Blocks merge(L2Blocks left, L2Blocks right) {
        if (right.m == 0) {
            return left;
        }
        if (left.m == 0) {
            return right;
        }
        if (!(left.xEnd[left.m - 1] < right.xStart[0])) {
            throw new IllegalStateException("merging blocks of overlapping feature ranges: left ends at "
                    + left.xEnd[left.m - 1] + ", right starts at " + right.xStart[0]);
        }
        int cap = left.m + right.m;
        double[] xs = Arrays.copyOf(left.xStart, cap);
        double[] xe = Arrays.copyOf(left.xEnd, cap);
        long[] acc = Arrays.copyOf(left.acc, 4 * cap);
        int top = left.m - 1;
        for (int b = 0; b < right.m; b++) {
            top++;
            xs[top] = right.xStart[b];
            xe[top] = right.xEnd[b];
            System.arraycopy(right.acc, 4 * b, acc, 4 * top, 4);
            while (top > 0 && Int128.compareRatioAt(acc, top - 1, acc, top) >= 0) {
                Int128.addAt(acc, top - 1, acc, top, 0);
                Int128.addAt(acc, top - 1, acc, top, 2);
                xe[top - 1] = xe[top];
                top--;
            }
        }
        int m = top + 1;
        return new L2Blocks(m, Arrays.copyOf(xs, m), Arrays.copyOf(xe, m), Arrays.copyOf(acc, 4 * m));
    }

    /** Same blocks and the same bits. */
    public boolean sameAs(L2Blocks o) {
        return m == o.m && Arrays.equals(xStart, o.xStart) && Arrays.equals(xEnd, o.xEnd) && Arrays.equals(acc, o.acc);
    }

    @Override
    public String toString() {
        return "L2Blocks(" + m + " blocks" + (m > 0 ? ", x in [" + xStart[0] + ", " + xEnd[m - 1] + "]" : "") + ")";
    }
}
