package io.sparkgpu.tsne.affinity;

import java.io.Serializable;

/**
 * A slice of consecutive rows [rowOffset, rowOffset + rows) of a sparse n x n matrix (the t-SNE affinity matrix
 * P) in CSR form. Column indices are global (0..n-1) and strictly increasing within each row; values are finite
 * and non-negative. Slices of one matrix partition its rows, so executors can each own one.
 */
public final class SparseRows implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Number of rows and columns of the whole matrix. */
    public final int n;
    /** Global index of the first row of this slice. */
    public final int rowOffset;
    /** Number of rows in this slice. */
    public final int rows;
    /** rows + 1 offsets into {@link #col} and {@link #val}; rowPtr[0] == 0. */
    public final int[] rowPtr;
    /** Global column index of each stored entry. */
    public final int[] col;
    /** Value of each stored entry. */
    public final double[] val;

    public SparseRows(int n, int rowOffset, int rows, int[] rowPtr, int[] col, double[] val) {
        if (n < 0 || rowOffset < 0 || rows < 0 || (long) rowOffset + rows > n) {
            throw new IllegalArgumentException("bad slice: n=" + n + " rowOffset=" + rowOffset + " rows=" + rows);
        }
        if (rowPtr.length != rows + 1 || rowPtr[0] != 0 || rowPtr[rows] != col.length || col.length != val.length) {
            throw new IllegalArgumentException("inconsistent CSR arrays: rowPtr " + rowPtr.length + ", col "
                    + col.length + ", val " + val.length + " for " + rows + " rows");
        }
        this.n = n;
        this.rowOffset = rowOffset;
        this.rows = rows;
        this.rowPtr = rowPtr;
        this.col = col;
        this.val = val;
    }

    /** Number of stored entries. */
    public int nnz() {
        return col.length;
    }
}
