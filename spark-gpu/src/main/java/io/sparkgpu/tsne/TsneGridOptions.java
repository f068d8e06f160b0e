package io.sparkgpu.tsne;

import java.io.Serializable;

/**
 * How the interpolation grid adapts to the embedding: p nodes per box per axis; boxes per axis =
 * clamp(ceil(extent * intervalsPerUnit), minIntervals, maxIntervals(dim)).
 */
public final class TsneGridOptions implements Serializable {
    private static final long serialVersionUID = 1L;

    public final int p;
    public final double intervalsPerUnit;
    public final int minIntervals;
    /** Largest number of boxes per axis, indexed by dim (1..3); element 0 unused. */
    public final int[] maxIntervals;

    public TsneGridOptions(int p, double intervalsPerUnit, int minIntervals, int[] maxIntervals) {
        if (p < 1 || p > 8) {
            throw new IllegalArgumentException("interpolation nodes per interval must be in 1..8, got " + p);
        }
        if (!(intervalsPerUnit > 0) || Double.isInfinite(intervalsPerUnit)) {
            throw new IllegalArgumentException("intervalsPerUnit must be positive and finite, got " + intervalsPerUnit);
        }
        if (minIntervals < 1 || maxIntervals.length != 4) {
            throw new IllegalArgumentException("minIntervals must be >= 1 and maxIntervals must have 4 entries");
        }
        for (int d = 1; d <= 3; d++) {
            if (maxIntervals[d] < minIntervals) {
                throw new IllegalArgumentException("maxIntervals[" + d + "]=" + maxIntervals[d]
                        + " is below minIntervals=" + minIntervals);
            }
        }
        this.p = p;
        this.intervalsPerUnit = intervalsPerUnit;
        this.minIntervals = minIntervals;
        this.maxIntervals = maxIntervals.clone();
    }

    /** Defaults: p = 3, one box per unit of extent, at least 50 boxes, at most 400 (1-D), 200 (2-D), 50 (3-D). */
    public static TsneGridOptions defaults() {
        return new TsneGridOptions(3, 1.0, 50, new int[] {0, 400, 200, 50});
    }
}
