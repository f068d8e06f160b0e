package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.cuda.Backend;
import org.junit.jupiter.api.Test;

/**
 * Fractional case counts in the Poisson-type scans (issue 18 item 4): whole-count results keep the bits they had
 * before fractional counts were accepted.
 */
class ScanFractionalCasesTest {
    private static final ScanSpec ALL = new ScanSpec(ScanDirection.BOTH, 1, Long.MAX_VALUE, 0.5);

    /** FNV-1a over the bits of everything a whole-count scan reports: clusters, replica maxima, totals. */
    static long digest(ScanModel model, ScanShape shape, long seed) {
        ScanTables t = ScanTables.of(ScanTestData.grid(model, shape, seed));
        ScanResult r = LocalScan.run(t, ALL, 3, 40, seed, Backend.CPU, 1);
        long h = 0xcbf29ce484222325L;
        for (ScanCluster c : r.clusters()) {
            for (double v : new double[] {c.index(), c.llr(), c.observed(), c.expected(), c.relativeRisk(),
                    c.baseline(), c.pValue()}) {
                h = (h ^ Double.doubleToRawLongBits(v)) * 0x100000001b3L;
            }
        }
        for (double v : r.replicaLlrs()) {
            h = (h ^ Double.doubleToRawLongBits(v)) * 0x100000001b3L;
        }
        h = (h ^ Double.doubleToRawLongBits(r.totalCases())) * 0x100000001b3L;
        return h ^ Double.doubleToRawLongBits(r.totalBaseline());
    }

    /** Pinned at main 47b211a (before fractional counts): 1-D, 2-D and 3-D grids of each count model. */
    @Test
    void wholeCountResultsKeepTheirBits() {
        ScanShape[] shapes = {new ScanShape(37), new ScanShape(9, 7), new ScanShape(4, 5, 3)};
        ScanModel[] models = {ScanModel.POISSON, ScanModel.EBP, ScanModel.BERNOULLI};
        StringBuilder sb = new StringBuilder();
        for (ScanModel m : models) {
            for (int s = 0; s < shapes.length; s++) {
                sb.append(m.id()).append(' ').append(s).append(' ')
                        .append(Long.toHexString(digest(m, shapes[s], 11 + s))).append('\n');
            }
        }
        assertEquals("poisson 0 80aa9ec1b38c3563\npoisson 1 b4f3a81af391ddf0\npoisson 2 da10ea146ff4cd0d\n"
                + "ebp 0 75cef4b4bc2369c4\nebp 1 2b7bffd06ce2a261\nebp 2 2769ed00cb4b5147\n"
                + "bernoulli 0 3ed17787d84edf7e\nbernoulli 1 3a58830ce3ecd04a\nbernoulli 2 b3ca7ea4fb617696\n",
                sb.toString());
    }
}
