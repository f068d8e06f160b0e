package io.sparkgpu.tsne.affinity;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Splitting P into contiguous row slices and joining slices back (exact copies, O(n + nnz)). */
public final class SparseRowsOps {
    private SparseRowsOps() {
    }

    /** {@code parts} slices of about equal rows (at most n non-empty ones) covering the rows of {@code all}. */
    public static List<SparseRows> split(SparseRows all, int parts) {
        if (parts < 1) {
            throw new IllegalArgumentException("parts must be >= 1, got " + parts);
        }
        int k = Math.max(1, Math.min(parts, all.rows));
        List<SparseRows> out = new ArrayList<>(k);
        for (int s = 0; s < k; s++) {
            int r0 = (int) ((long) all.rows * s / k);
            int r1 = (int) ((long) all.rows * (s + 1) / k);
            int e0 = all.rowPtr[r0];
            int e1 = all.rowPtr[r1];
            int[] ptr = new int[r1 - r0 + 1];
            for (int r = r0; r <= r1; r++) {
                ptr[r - r0] = all.rowPtr[r] - e0;
            }
            out.add(new SparseRows(all.n, all.rowOffset + r0, r1 - r0, ptr, Arrays.copyOfRange(all.col, e0, e1),
                    Arrays.copyOfRange(all.val, e0, e1)));
        }
        return out;
    }

    /** Joins slices that cover rows 0..n-1 of one matrix (any order) into one slice of all rows. */
    public static SparseRows concat(List<SparseRows> slices) {
        if (slices.isEmpty()) {
            throw new IllegalArgumentException("no row slices");
        }
        List<SparseRows> sorted = new ArrayList<>(slices);
        sorted.sort((a, b) -> Integer.compare(a.rowOffset, b.rowOffset));
        int n = sorted.get(0).n;
        long nnz = 0;
        int next = 0;
        for (SparseRows s : sorted) {
            if (s.n != n || s.rowOffset != next) {
                throw new IllegalArgumentException("row slices do not tile 0.." + (n - 1) + ": expected a slice at row "
                        + next + ", got " + s.rowOffset + " (n=" + s.n + ")");
            }
            next += s.rows;
            nnz += s.nnz();
        }
        if (next != n || nnz > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("row slices cover " + next + " of " + n + " rows (nnz " + nnz + ")");
        }
        int[] ptr = new int[n + 1];
        int[] col = new int[(int) nnz];
        double[] val = new double[(int) nnz];
        int e = 0;
        for (SparseRows s : sorted) {
            for (int r = 0; r < s.rows; r++) {
                ptr[s.rowOffset + r] = e + s.rowPtr[r];
            }
            System.arraycopy(s.col, 0, col, e, s.nnz());
            System.arraycopy(s.val, 0, val, e, s.nnz());
            e += s.nnz();
        }
        ptr[n] = e;
        return new SparseRows(n, 0, n, ptr, col, val);
    }

    /**
     * One slice from the first row of disjoint slices of one matrix (any order) to their last, the rows between them
     * that no slice holds left empty: a kernel over its rows then does in one launch what it would do slice by slice
     * (empty rows add nothing). A single slice is returned as it is.
     */
    public static SparseRows span(List<SparseRows> slices) {
        if (slices.isEmpty()) {
            throw new IllegalArgumentException("no row slices");
        }
        if (slices.size() == 1) {
            return slices.get(0);
        }
        List<SparseRows> sorted = new ArrayList<>(slices);
        sorted.sort((a, b) -> Integer.compare(a.rowOffset, b.rowOffset));
        int n = sorted.get(0).n;
        int first = sorted.get(0).rowOffset;
        long nnz = 0;
        int next = first;
        for (SparseRows s : sorted) {
            if (s.n != n || s.rowOffset < next) {
                throw new IllegalArgumentException("row slices overlap or belong to different matrices: a slice at row "
                        + s.rowOffset + " (n=" + s.n + ") after row " + next + " (n=" + n + ")");
            }
            next = s.rowOffset + s.rows;
            nnz += s.nnz();
        }
        if (nnz > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("row slices hold " + nnz + " entries, more than one slice can");
        }
        int rows = next - first;
        int[] ptr = new int[rows + 1];
        int[] col = new int[(int) nnz];
        double[] val = new double[(int) nnz];
        int e = 0;
        int r = 0; // rows of the span filled so far
        for (SparseRows s : sorted) {
            int local = s.rowOffset - first;
            while (r < local) { // empty rows up to this slice
                ptr[++r] = e;
            }
            for (int k = 0; k < s.rows; k++) {
                ptr[local + k] = e + s.rowPtr[k];
            }
            System.arraycopy(s.col, 0, col, e, s.nnz());
            System.arraycopy(s.val, 0, val, e, s.nnz());
            e += s.nnz();
            r = local + s.rows;
            ptr[r] = e;
        }
        return new SparseRows(n, first, rows, ptr, col, val);
    }
}
