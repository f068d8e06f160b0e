package io.sparkgpu.tsne;

import java.io.Serializable;

/**
 * How the interpolation grid adapts to the embedding: p nodes per box per axis; boxes per axis =
 * clamp(ceil(extent * intervalsPerUnit), minIntervals, maxIntervals(dim)).
 */
public final class TsneGridOptions implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Largest p: the GPU kernels hold p weights per axis in fixed arrays (TSNE_MAX_P, include/layout/tsne.cuh). */
    public static final int MAX_P = 8;

    public final int p;
    public final double intervalsPerUnit;
    public final int minIntervals;
    /** Largest number of boxes per axis, indexed by dim (1..3); element 0 unused. */
    public final int[] maxIntervals;

    public TsneGridOptions(int p, double intervalsPerUnit, int minIntervals, int[] maxIntervals) {
        // the rules of TsneConfig (gridNodesPerInterval, gridIntervalsPerUnit, gridMinIntervals, gridMaxIntervals)
        TsneConfig.checkGridNodesPerInterval(p);
        TsneConfig.checkGridIntervalsPerUnit(intervalsPerUnit);
        if (maxIntervals == null || maxIntervals.length != 4) {
            throw new IllegalArgumentException("maxIntervals must have 4 entries (index = dimension 1..3)");
        }
        for (int d = 1; d <= 3; d++) {
            TsneConfig.checkGridIntervals(minIntervals, maxIntervals[d]);
            if (maxIntervals[d] == 0) {
                throw new IllegalArgumentException("maxIntervals[" + d + "] must be >= gridMinIntervals=" + minIntervals
                        + " (0 is for TsneConfig.gridOptions only)");
            }
        }
        this.p = p;
        this.intervalsPerUnit = intervalsPerUnit;
        this.minIntervals = minIntervals;
        this.maxIntervals = maxIntervals.clone();
    }

    /**
     * Defaults: p = 4 nodes per box, two boxes per unit of extent, at least 20 boxes, at most 2000 (1-D), 320 (2-D),
     * 40 (3-D) per axis. Measured with the CPU twin against the exact O(n^2) force (GridRepulsionTest): boxes of
     * width 0.5 with p = 4 keep the repulsive force's relative error near 3e-4 in 1-, 2- and 3-D, while FIt-SNE's
     * usual p = 3 with one box per unit gives about 1.5e-2 once the embedding is wider than ~50. Past the caps the
     * boxes widen and the error grows; the benchmark reports the error it gets.
     */
    public static TsneGridOptions defaults() {
        return new TsneGridOptions(4, 2.0, 20, new int[] {0, 2000, 320, 40});
    }
}
