package io.sparkgpu.isotonic;

import java.io.Serializable;
import java.util.Arrays;

/**
 * The weighted-L1 (median) isotonic solution of a contiguous feature range as blocks: block b covers the
 * distinct features {@code xStart[b] .. xEnd[b]}, keeps the multiset of its labels ({@link MedianSet}) and is
 * fitted with their lower weighted median; medians strictly increase from block to block.
 *
 * <p>Computed by pooling adjacent violators with block medians (merging while the previous block's median is at
 * least the current one's; the larger multiset absorbs the smaller, so a label moves O(log n) times and the whole
 * costs O(n log^2 n)), which is optimal for the L1 loss because the lower median is a Cauchy mean. The solution
 * of a range is the maximin u_i = max_{k<=i} min_{l>=i} med(k..l) of block medians, so it is unique for the
 * chosen median and {@link #merge} (decomposition theorem) combines partitions in any grouping. Medians are labels
 * and weights are exact integers, so results are bitwise independent of the partitioning.
 *
 * <p>Unlike the L2 blocks, these hold all labels (16 bytes per row plus heap slack), so merging partitions moves
 * the rows; the final merge holds every row of the input.
 */
final class L1Blocks implements Serializable {
    private static final long serialVersionUID = 1L;

    int m;
    double[] xStart;
    double[] xEnd;
    MedianSet[] sets;
    double[] median;

    private L1Blocks(int cap) {
        xStart = new double[cap];
        xEnd = new double[cap];
        sets = new MedianSet[cap];
        median = new double[cap];
    }

    public int size() {
        return m;
    }

    public double xStart(int b) {
        return xStart[b];
    }

    public double xEnd(int b) {
        return xEnd[b];
    }

    /** The fitted value (lower weighted median) of block b. */
    public double median(int b) {
        return median[b];
    }

    /** Total weight of block b as a double. */
    public double weight(int b, IsoScales sc) {
        return sc.weight(sets[b].weightLo(), sets[b].weightHi());
    }

    /** Pushes a block, pooling while the top block's median is >= the pushed one's. */
    private void push(double xs, double xe, MedianSet set) {
        double med = set.median();
        while (m > 0 && median[m - 1] >= med) {
            MedianSet prev = sets[m - 1];
            if (prev.size() >= set.size()) {
                prev.addAll(set);
                set = prev;
            } else {
                set.addAll(prev);
            }
            xs = xStart[m - 1];
            med = set.median();
            m--;
        }
        if (m == xStart.length) {
            int cap = Math.max(4, 2 * m);
            xStart = Arrays.copyOf(xStart, cap);
            xEnd = Arrays.copyOf(xEnd, cap);
            sets = Arrays.copyOf(sets, cap);
            median = Arrays.copyOf(median, cap);
        }
        xStart[m] = xs;
        xEnd[m] = xe;
        sets[m] = set;
        median[m] = med;
        m++;
    }

    /** Median PAVA of pooled points that kept their rows ({@code IsoPoints.pool(..., keepRows=true, ...)}). */
    public static L1Blocks pava(IsoPoints p) {
        if (p.groupStart == null) {
            throw new IllegalArgumentException("the L1 loss needs the rows of each feature (pool with keepRows)");
        }
        L1Blocks out = new L1Blocks(16);
        for (int u = 0; u < p.n; u++) {
            MedianSet s = new MedianSet();
            for (int r = p.groupStart[u]; r < p.groupStart[u + 1]; r++) {
                s.add(p.labels[r], p.rowWeights[2 * r], p.rowWeights[2 * r + 1]);
            }
            out.push(p.x[u], p.x[u], s);
        }
        return out;
    }

    /**
     * The solution of two adjacent ranges ({@code left} entirely below {@code right}) from theirs. Consumes its
     * arguments: their label sets may be reused or changed.
     */
    public static L1Blocks merge(L1Blocks left, L1Blocks right) {
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
        for (int b = 0; b < right.m; b++) {
            left.push(right.xStart[b], right.xEnd[b], right.sets[b]);
        }
        return left;
    }

    public static L1Blocks empty() {
        return new L1Blocks(4);
    }

    @Override
    public String toString() {
        return "L1Blocks(" + m + " blocks)";
    }
}
