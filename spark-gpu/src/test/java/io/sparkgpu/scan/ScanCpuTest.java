package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/** The CPU twin against brute force, for every model, direction, constraint and index split. */
class ScanCpuTest {
    static final List<ScanShape> SHAPES = List.of(new ScanShape(1), new ScanShape(2), new ScanShape(7),
            new ScanShape(12), new ScanShape(5, 7), new ScanShape(6, 4), new ScanShape(1, 9), new ScanShape(3, 4, 2),
            new ScanShape(4, 1, 3));

    private static void assertSameBest(ScanBest want, ScanBest got, String what) {
        assertEquals(want.index, got.index, what + ": index");
        assertEquals(Double.doubleToLongBits(want.llr), Double.doubleToLongBits(got.llr),
                what + ": LLR " + want.llr + " vs " + got.llr);
    }

    @Test
    void scanEqualsExactBruteForceForEveryModelAndDirection() {
        long seed = 1;
        for (ScanModel model : ScanModel.values()) {
            for (ScanShape sh : SHAPES) {
                ScanGrid g = ScanTestData.grid(model, sh, seed++);
                ScanTables t = ScanTables.of(g);
                long[] cq = ScanTestData.quantizedCases(g, t);
                long[] bq = ScanTestData.quantizedBase(t);
                for (ScanDirection dir : ScanDirection.values()) {
                    ScanSpec spec = ScanSpec.all(dir);
                    ScanBest want = ScanTestData.exactBrute(t, cq, bq, spec);
                    ScanBest got = ScanCpu.scan(t, spec, 0, sh.ranges());
                    assertSameBest(want, got, model.id() + " " + sh + " " + dir.id());
                }
            }
        }
    }

    @Test
    void scanAgreesWithTheNaiveTextbookScan() {
        long seed = 100;
        for (ScanModel model : ScanModel.values()) {
            for (ScanShape sh : SHAPES) {
                ScanGrid g = ScanTestData.grid(model, sh, seed++);
                ScanTables t = ScanTables.of(g);
                for (ScanDirection dir : ScanDirection.values()) {
                    ScanSpec spec = ScanSpec.all(dir);
                    ScanBest naive = NaiveScan.scan(g, spec);
                    ScanBest ours = ScanCpu.scan(t, spec, 0, sh.ranges());
                    String what = model.id() + " " + sh + " " + dir.id();
                    double tol = 1e-9 * Math.max(1, Math.abs(naive.llr));
                    assertEquals(naive.llr, ours.llr, tol, what + ": max LLR");
                    // our range is a maximiser for the textbook arithmetic too (robust to near-ties)
                    double atOurs = NaiveScan.llrOfBox(g, NaiveScan.totals(g), spec, sh.decode(ours.index));
                    assertEquals(naive.llr, atOurs, tol, what + ": textbook LLR of our range");
                    if (naive.index != ours.index) {
                        System.err.println("[scan test] near-tie " + what + ": textbook picks " + naive.index
                                + ", ours " + ours.index);
                    }
                }
            }
        }
    }

    @Test
    void sizeFractionAndExclusionConstraintsMatchBruteForce() {
        Random r = new Random(5);
        long seed = 300;
        for (ScanModel model : ScanModel.values()) {
            for (ScanShape sh : SHAPES) {
                ScanGrid g = ScanTestData.grid(model, sh, seed++);
                ScanTables t = ScanTables.of(g);
                long[] cq = ScanTestData.quantizedCases(g, t);
                long[] bq = ScanTestData.quantizedBase(t);
                int cells = sh.cells();
                long min = 1 + r.nextInt(Math.max(1, cells / 3));
                long max = min + r.nextInt(Math.max(1, cells));
                double frac = 0.2 + 0.6 * r.nextDouble();
                ScanSpec spec = new ScanSpec(ScanDirection.values()[r.nextInt(3)], min, max, frac)
                        .excluding(ScanTestData.randomBox(sh, r));
                if (r.nextBoolean()) {
                    spec = spec.excluding(ScanTestData.randomBox(sh, r));
                }
                ScanBest want = ScanTestData.exactBrute(t, cq, bq, spec);
                ScanBest got = ScanCpu.scan(t, spec, 0, sh.ranges());
                assertSameBest(want, got, model.id() + " " + sh + " " + spec);
            }
        }
    }

    @Test
    void everySplitIntoIndexSharesGivesTheSameAnswer() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            long seed = 500;
            for (ScanModel model : ScanModel.values()) {
                for (ScanShape sh : List.of(new ScanShape(13), new ScanShape(6, 5), new ScanShape(3, 4, 3))) {
                    ScanGrid g = ScanTestData.grid(model, sh, seed++);
                    ScanTables t = ScanTables.of(g);
                    ScanSpec spec = ScanSpec.all(ScanDirection.BOTH);
                    ScanBest whole = ScanCpu.scan(t, spec, 0, sh.ranges());
                    for (int parts = 1; parts <= 11; parts += 2) {
                        ScanBest best = ScanBest.NONE;
                        for (int p = 0; p < parts; p++) {
                            long[] s = ScanShape.share(sh.ranges(), p, parts);
                            best = ScanBest.max(best, ScanCpu.scan(t, spec, s[0], s[1]));
                        }
                        assertSameBest(whole, best, model.id() + " " + sh + " in " + parts + " shares");
                        assertSameBest(whole, ScanCpu.scanParallel(t, t.casesPrefix, spec, 0, sh.ranges(), parts, pool),
                                model.id() + " " + sh + " parallel " + parts);
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void tiesGoToTheLowestRangeIndex() {
        // a uniform grid with two identical hot cells: their boxes tie exactly
        ScanShape sh = new ScanShape(8, 3);
        double[] c = new double[sh.cells()];
        double[] b = new double[sh.cells()];
        java.util.Arrays.fill(b, 10);
        java.util.Arrays.fill(c, 1);
        c[sh.cell(1, 0, 0)] = 9;
        c[sh.cell(6, 2, 0)] = 9;
        ScanTables t = ScanTables.of(ScanGrid.of(ScanModel.POISSON, sh, c, b, null, null));
        ScanSpec spec = new ScanSpec(ScanDirection.HIGH, 1, 1, 1.0);
        ScanBest best = ScanCpu.scan(t, spec, 0, sh.ranges());
        long i1 = sh.encode(new int[] {1, 1, 0, 0, 0, 0});
        long i2 = sh.encode(new int[] {6, 6, 2, 2, 0, 0});
        assertEquals(Math.min(i1, i2), best.index);
        assertTrue(best.llr > 0);
        // the same from shares that put the two in different tasks, in either order
        ScanBest a = ScanCpu.scan(t, spec, 0, Math.max(i1, i2));
        ScanBest z = ScanCpu.scan(t, spec, Math.max(i1, i2), sh.ranges());
        assertEquals(best, ScanBest.max(z, a));
        assertEquals(best, ScanBest.max(a, z));
    }

    @Test
    void noQualifyingRangeGivesNone() {
        ScanShape sh = new ScanShape(4);
        ScanTables t = ScanTables.of(ScanGrid.of(ScanModel.POISSON, sh, new double[] {1, 0, 0, 0},
                new double[] {1, 1, 1, 1}, null, null));
        ScanBest none = ScanCpu.scan(t, new ScanSpec(ScanDirection.HIGH, 5, 9, 1.0), 0, sh.ranges());
        assertEquals(ScanBest.NONE, none);
        assertTrue(!none.found());
    }
}
