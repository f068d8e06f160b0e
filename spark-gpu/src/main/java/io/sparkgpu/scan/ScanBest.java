package io.sparkgpu.scan;

import java.io.Serializable;

/**
 * The best range of a scan or of part of one: its LLR and global range index. {@link #better} orders
 * candidates by larger LLR, then smaller index, a total order, so combining partial results in any grouping
 * or order (Spark tasks, GPU blocks, CPU threads) gives the same answer. {@link #NONE} (LLR -Infinity, index
 * -1) stands for "no range qualified".
 */
public final class ScanBest implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final ScanBest NONE = new ScanBest(Double.NEGATIVE_INFINITY, -1);

    public final double llr;
    public final long index;

    public ScanBest(double llr, long index) {
        this.llr = llr;
        this.index = index;
    }

    /** True when (llr, index) beats (otherLlr, otherIndex): larger LLR, or equal LLR and smaller index. */
    static boolean better(double llr, long index, double otherLlr, long otherIndex) {
        if (llr != otherLlr) {
            return llr > otherLlr;
        }
        return index >= 0 && (otherIndex < 0 || index < otherIndex);
    }

    /** The better of the two. */
    public static ScanBest max(ScanBest a, ScanBest b) {
        return better(b.llr, b.index, a.llr, a.index) ? b : a;
    }

    public boolean found() {
        return index >= 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ScanBest && ((ScanBest) o).index == index
                && Double.doubleToLongBits(((ScanBest) o).llr) == Double.doubleToLongBits(llr);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(index) * 31 + Double.hashCode(llr);
    }

    @Override
    public String toString() {
        return "ScanBest(llr=" + llr + ", index=" + index + ")";
    }
}
