package io.sparkgpu.tsne.affinity;

import java.io.Serializable;

/**
 * The k nearest neighbours of rows [rowOffset, rowOffset + rows) of a point set of n points, excluding each point
 * itself. Row-major: entry r * k + m is the m-th neighbour of global row rowOffset + r, ordered by (squared
 * distance ascending, neighbour index ascending). Squared distances are float sums of squared float differences
 * taken in dimension order (the same arithmetic on CPU and GPU), so equal inputs give identical graphs.
 */
public final class KnnGraph implements Serializable {
    private static final long serialVersionUID = 1L;

    public final int n;
    public final int rowOffset;
    public final int rows;
    public final int k;
    /** Global neighbour indices, rows * k. */
    public final int[] index;
    /** Squared Euclidean distances, rows * k. */
    public final float[] dist2;

    public KnnGraph(int n, int rowOffset, int rows, int k, int[] index, float[] dist2) {
        if ((long) rows * k != index.length || index.length != dist2.length) {
            throw new IllegalArgumentException("kNN arrays of length " + index.length + "/" + dist2.length
                    + " do not match rows=" + rows + " x k=" + k);
        }
        this.n = n;
        this.rowOffset = rowOffset;
        this.rows = rows;
        this.k = k;
        this.index = index;
        this.dist2 = dist2;
    }
}
