package io.sparkgpu.tsne.repulsion;

import java.io.Serializable;

/** One row slice's share of the repulsive term (see {@link GridRepulsion#g2s}). */
public final class Repulsion implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Unnormalised repulsive forces sum_j (y_i - y_j) / (1 + |y_i - y_j|^2)^2, rows x dim. */
    public final double[] force;
    /** Exact 128-bit fixed-point sum of z_i over the slice's rows: {lo, hi}; scale 2^zShift. */
    public final long[] zFixed;
    public final int zShift;
    /** Each row's z_i (rows), when asked for ({@link GridRepulsion#g2sRows}, {@link ExactRepulsion#againstReference}); else null. */
    public final double[] zRows;

    public Repulsion(double[] force, long[] zFixed, int zShift) {
        this(force, zFixed, zShift, null);
    }

    public Repulsion(double[] force, long[] zFixed, int zShift, double[] zRows) {
        this.force = force;
        this.zFixed = zFixed;
        this.zShift = zShift;
        this.zRows = zRows;
    }
}
