package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Prefix tables give exact box sums; the fixed-point baseline survives cancellation. */
class ScanTablesTest {

    @Test
    void boxSumsFromPrefixTablesEqualBruteForceSums() {
        Random r = new Random(11);
        long seed = 1;
        for (ScanModel model : ScanModel.values()) {
            for (ScanShape sh : new ScanShape[] {new ScanShape(1), new ScanShape(17), new ScanShape(9, 6),
                    new ScanShape(1, 5), new ScanShape(4, 3, 5), new ScanShape(2, 1, 7)}) {
                ScanGrid g = ScanTestData.grid(model, sh, seed++);
                ScanTables t = ScanTables.of(g);
                long[] cq = ScanTestData.quantizedCases(g, t);
                long[] bq = ScanTestData.quantizedBase(t);
                for (int trial = 0; trial < 200; trial++) {
                    int[] box = sh.decode((long) (r.nextDouble() * sh.ranges()));
                    long wantC = 0;
                    long wantB = 0;
                    double rawB = 0;
                    for (int z = box[4]; z <= box[5]; z++) {
                        for (int y = box[2]; y <= box[3]; y++) {
                            for (int x = box[0]; x <= box[1]; x++) {
                                int c = sh.cell(x, y, z);
                                wantC += cq[c];
                                wantB += bq[c];
                                rawB += g.baseline(c);
                            }
                        }
                    }
                    assertEquals(wantC, t.boxSum(t.casesPrefix, box), model.id() + " " + sh + " cases");
                    assertEquals(wantB, t.boxSum(t.basePrefix, box), model.id() + " " + sh + " baseline");
                    double back = Math.scalb((double) wantB, -t.baseShift());
                    assertEquals(rawB, back, 1e-15 * Math.max(rawB, 1e-300) + sh.cells() * Math.scalb(1.0, -t.baseShift()),
                            "fixed-point baseline of " + java.util.Arrays.toString(box));
                }
            }
        }
    }

    @Test
    void fixedPointBaselineIsExactWhereDoublePrefixSumsCancel() {
        // one huge cell before many tiny ones: a double prefix sum loses the tiny ones entirely
        int n = 50;
        double[] b = new double[n];
        double[] c = new double[n];
        b[0] = 1e15;
        for (int i = 1; i < n; i++) {
            b[i] = 1e-3 * i;
        }
        c[10] = 1;
        ScanGrid g = ScanGrid.of(ScanModel.POISSON, new ScanShape(n), c, b, null, null);
        ScanTables t = ScanTables.of(g);
        double doublePrefixHi = 0;
        double doublePrefixLo = 0;
        for (int i = 0; i <= 20; i++) {
            if (i < 10) {
                doublePrefixLo += b[i];
            }
            doublePrefixHi += b[i];
        }
        double exact = 0;
        for (int i = 10; i <= 20; i++) {
            exact += b[i];
        }
        double viaDoubles = doublePrefixHi - doublePrefixLo;
        double viaTables = Math.scalb((double) t.boxSum(t.basePrefix, new int[] {10, 20, 0, 0, 0, 0}), -t.baseShift());
        assertTrue(Math.abs(viaDoubles - exact) / exact > 1e-3, "double prefix sums should lose precision here: "
                + viaDoubles + " vs " + exact);
        // quantum 2^-(shift) is about 1e15 * 2^-60 ~ 1e-3 per cell: the sum is right to those quanta
        double quantum = Math.scalb(1.0, -t.baseShift());
        assertEquals(exact, viaTables, 11 * quantum);
        // and a positive baseline never becomes 0
        double[] b2 = {1e18, 1e-30, 5};
        ScanTables t2 = ScanTables.of(ScanGrid.of(ScanModel.POISSON, new ScanShape(3), new double[] {0, 0, 1}, b2,
                null, null));
        assertEquals(1, t2.boxSum(t2.basePrefix, new int[] {1, 1, 0, 0, 0, 0}));
    }

    @Test
    void integerBaselinesAreNotQuantized() {
        ScanGrid g = ScanTestData.grid(ScanModel.BERNOULLI, new ScanShape(6, 6), 3);
        ScanTables t = ScanTables.of(g);
        assertEquals(0, t.baseShift());
        long total = 0;
        for (int c = 0; c < 36; c++) {
            total += (long) g.baseline(c);
        }
        assertEquals(total, t.baselineTotalQ());
    }
}
