package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.tsne.TsneForcesTestData;
import io.sparkgpu.tsne.affinity.SparseRows;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The SELL-32-256 + hub layout read back row by row gives every CSR row, in CSR order, exactly once. */
class SellRowsTest {

    @Test
    void everyRowReadsBackInCsrOrderFromTheSellOrTheHubPart() {
        for (int rows : new int[] {0, 1, 33, 300, 1001}) {
            int n = Math.max(rows + 20, 3500);
            SparseRows p = TsneForcesTestData.randomRows(n, 7, rows, 0, 60, rows > 40 ? 650 : 0, rows);
            SellRows s = SellRows.of(p);
            int slots = s.nSlices * SellRows.C;
            int[] seen = new int[rows];
            int hubs = 0;
            for (int r = 0; r < rows; r++) {
                hubs += p.rowPtr[r + 1] - p.rowPtr[r] > SellRows.HUB_LEN ? 1 : 0;
            }
            assertEquals(hubs, s.nHubs, "rows " + rows);
            assertTrue(rows <= 40 || hubs >= 2, "the test data must hold hub rows");
            for (int sl = 0; sl < slots; sl++) {
                int r = s.meta[s.nSlices + 1 + sl];
                if (r < 0) {
                    continue;
                }
                int len = s.meta[s.nSlices + 1 + slots + sl];
                assertTrue(len <= SellRows.HUB_LEN, "hub row " + r + " left in the SELL part");
                int base = s.meta[sl / SellRows.C] + sl % SellRows.C;
                int[] col = new int[len];
                double[] val = new double[len];
                for (int e = 0; e < len; e++) {
                    col[e] = s.col[base + SellRows.C * e];
                    val[e] = s.val[base + SellRows.C * e];
                    assertTrue(base + SellRows.C * e < s.meta[sl / SellRows.C + 1], "entry outside its slice");
                }
                assertRow(p, r, col, val);
                seen[r]++;
            }
            int hubRow0 = s.nSlices + 1 + 2 * slots;
            int hubPtr0 = hubRow0 + s.nHubs;
            assertEquals(s.meta[s.nSlices], s.meta[hubPtr0], "hub entries follow the SELL part");
            assertEquals(s.col.length, s.meta[hubPtr0 + s.nHubs]);
            for (int h = 0; h < s.nHubs; h++) {
                int r = s.meta[hubRow0 + h];
                int from = s.meta[hubPtr0 + h];
                int to = s.meta[hubPtr0 + h + 1];
                assertTrue(to - from > SellRows.HUB_LEN);
                assertRow(p, r, Arrays.copyOfRange(s.col, from, to), Arrays.copyOfRange(s.val, from, to));
                seen[r]++;
            }
            for (int r = 0; r < rows; r++) {
                assertEquals(1, seen[r], "row " + r + " of " + rows);
            }
        }
    }

    private static void assertRow(SparseRows p, int r, int[] col, double[] val) {
        assertArrayEquals(Arrays.copyOfRange(p.col, p.rowPtr[r], p.rowPtr[r + 1]), col, "columns of row " + r);
        assertArrayEquals(Arrays.copyOfRange(p.val, p.rowPtr[r], p.rowPtr[r + 1]), val, 0.0, "values of row " + r);
    }
}
