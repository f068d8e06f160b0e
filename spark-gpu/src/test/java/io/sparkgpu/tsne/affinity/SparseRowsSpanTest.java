package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link SparseRowsOps#span}: disjoint slices joined with the rows between them empty. */
class SparseRowsSpanTest {

    /** A random n x n sparse matrix, rows of 0..6 entries. */
    static SparseRows random(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] ptr = new int[n + 1];
        java.util.List<Integer> cols = new java.util.ArrayList<>();
        java.util.List<Double> vals = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            int k = r.nextInt(7);
            for (int j = 0; j < k; j++) {
                cols.add(r.nextInt(n));
                vals.add(r.nextDouble());
            }
            ptr[i + 1] = cols.size();
        }
        return new SparseRows(n, 0, n, ptr, cols.stream().mapToInt(Integer::intValue).toArray(),
                vals.stream().mapToDouble(Double::doubleValue).toArray());
    }

    @Test
    void spanKeepsEveryOwnedRowAndLeavesTheGapsEmpty() {
        SparseRows all = random(100, 3);
        List<SparseRows> s = SparseRowsOps.split(all, 10); // slices of 10 rows
        // a task owning slices 7, 2 and 3 (out of order, a gap of 30 rows between 3 and 7)
        SparseRows span = SparseRowsOps.span(List.of(s.get(7), s.get(2), s.get(3)));
        assertEquals(s.get(2).rowOffset, span.rowOffset);
        assertEquals(s.get(7).rowOffset + s.get(7).rows - s.get(2).rowOffset, span.rows);
        assertEquals(s.get(2).nnz() + s.get(3).nnz() + s.get(7).nnz(), span.nnz());
        for (int i = 0; i < span.rows; i++) {
            int row = span.rowOffset + i;
            boolean owned = row < s.get(3).rowOffset + s.get(3).rows || row >= s.get(7).rowOffset;
            int a = all.rowPtr[row];
            int b = all.rowPtr[row + 1];
            int[] expectCol = owned ? java.util.Arrays.copyOfRange(all.col, a, b) : new int[0];
            double[] expectVal = owned ? java.util.Arrays.copyOfRange(all.val, a, b) : new double[0];
            assertArrayEquals(expectCol, java.util.Arrays.copyOfRange(span.col, span.rowPtr[i], span.rowPtr[i + 1]),
                    "columns of row " + row);
            assertArrayEquals(expectVal, java.util.Arrays.copyOfRange(span.val, span.rowPtr[i], span.rowPtr[i + 1]),
                    "values of row " + row);
        }
    }

    @Test
    void oneSliceIsItselfAndOverlapsAreRefused() {
        List<SparseRows> s = SparseRowsOps.split(random(40, 5), 4);
        assertSame(s.get(1), SparseRowsOps.span(List.of(s.get(1))));
        assertThrows(IllegalArgumentException.class, () -> SparseRowsOps.span(List.of(s.get(1), s.get(1))));
        assertThrows(IllegalArgumentException.class, () -> SparseRowsOps.span(List.of()));
    }
}
