package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Fractional case counts in the Poisson-type scans (issue 18 item 4): the scan of fractional counts against brute
 * force, the replica convention (N = C rounded half up whole cases carrying C / N each), and whole-count results
 * keeping the bits they had before fractional counts were accepted. Bad values: ScanGridTest (grids),
 * ScanSqlFunctionsTest (SQL), DirtyInputFuzzTest and SparkGpuCliScanTest (estimator, CLI).
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

    /** Natural-log LLRs of a box, written out (Kulldorff's Poisson with the totals C, B; EBP). */
    private static double textbook(ScanModel m, double c, double b, double tc, double tb) {
        if (m == ScanModel.EBP) {
            return c * Math.log(c / b) + b - c;
        }
        double e = tc * b / tb;
        return c * Math.log(c / e) + (tc - c) * Math.log((tc - c) / (tc - e));
    }

    @Test
    void smallFractionalGridMatchesItsHandWrittenLlr() {
        double[] cases = {0.25, 4.5, 3.75, 0.5, 0.125};
        double[] base = {2, 1.5, 1, 2, 2.5};
        for (ScanModel m : List.of(ScanModel.POISSON, ScanModel.EBP)) {
            ScanGrid g = ScanGrid.of(m, new ScanShape(5), cases, base, null, null);
            ScanTables t = ScanTables.of(g);
            ScanCluster best = LocalScan.mostLikely(t, ScanSpec.all(ScanDirection.HIGH));
            // every interval by hand: the best one and its LLR (dyadic counts: the sums are exact)
            double bestLlr = -1;
            int bestA = -1;
            int bestB = -1;
            for (int a = 0; a < 5; a++) {
                for (int b = a; b < 5; b++) {
                    double c = 0;
                    double e = 0;
                    for (int i = a; i <= b; i++) {
                        c += cases[i];
                        e += base[i];
                    }
                    if (m == ScanModel.POISSON && b - a == 4) {
                        continue; // the whole region has no outside
                    }
                    double l = textbook(m, c, e, 9.125, 9);
                    if (c / e > (m == ScanModel.EBP ? 1 : 9.125 / 9) && l > bestLlr) {
                        bestLlr = l;
                        bestA = a;
                        bestB = b;
                    }
                }
            }
            assertEquals(bestA, best.lo(0), m.id());
            assertEquals(bestB, best.hi(0), m.id());
            assertEquals(bestLlr, best.llr(), 1e-13 * bestLlr, m.id());
            double observed = 0;
            for (int i = bestA; i <= bestB; i++) {
                observed += cases[i];
            }
            assertEquals(observed, best.observed(), 0.0, m.id() + ": the exact fractional count");
            assertEquals(9.125, t.totalCases(), 0.0);
        }
    }

    @Test
    void fractionalScanMatchesBruteForce() {
        long seed = 5;
        for (ScanModel m : List.of(ScanModel.POISSON, ScanModel.EBP)) {
            for (ScanShape sh : List.of(new ScanShape(23), new ScanShape(6, 5), new ScanShape(3, 4, 2))) {
                for (ScanDirection dir : ScanDirection.values()) {
                    ScanGrid g = ScanTestData.fractional(m, sh, seed++);
                    ScanTables t = ScanTables.of(g);
                    assertTrue(t.casesShift > 0, "fractional counts are fixed point");
                    ScanSpec spec = ScanSpec.all(dir);
                    String what = m.id() + " " + sh + " " + dir.id();
                    ScanBest fast = ScanCpu.scan(t, spec, 0, sh.ranges());
                    // the textbook scan from the raw doubles (StrictMath.log): to rounding
                    ScanBest naive = NaiveScan.scan(g, spec);
                    assertEquals(naive.index, fast.index, what);
                    assertEquals(naive.llr, fast.llr, 1e-12 * naive.llr, what);
                    // exact quantized sums cell by cell, our LLR: the same bits
                    ScanBest exact = ScanTestData.exactBrute(t, ScanTestData.quantizedCases(g, t),
                            ScanTestData.quantizedBase(t), spec);
                    assertEquals(exact.index, fast.index, what);
                    assertEquals(Double.doubleToLongBits(exact.llr), Double.doubleToLongBits(fast.llr), what);
                }
            }
        }
    }

    @Test
    void poissonReplicasAllocateTheRoundedTotalAndKeepTheObservedTotal() {
        // C = 2.5 -> 3 cases, 2.49 -> 2, 0.3 -> 1 (at least one), whole 7 -> 7 cases of one unit
        double[][] cases = {{1.25, 1.25, 0}, {1.2, 1.29, 0}, {0.1, 0.2, 0}, {3, 4, 0}};
        long[] n = {3, 2, 1, 7};
        for (int i = 0; i < cases.length; i++) {
            ScanTables t = ScanTables.of(ScanGrid.of(ScanModel.POISSON, new ScanShape(3), cases[i],
                    new double[] {1, 2, 3}, null, null));
            assertEquals(n[i], t.replicaCases, "N for C = " + t.totalCases());
            assertEquals(t.casesTotalQ, t.replicaUnit * t.replicaCases + t.replicaExtra, "units split the total");
            assertTrue(t.replicaExtra < t.replicaCases);
            assertEquals(i == 3 ? 1 : t.casesTotalQ / n[i], t.replicaUnit);
            for (int r = 0; r < 20; r++) {
                long[] cells = ScanReplicas.cells(t, 9, r);
                long total = 0;
                long drawn = 0;
                for (long v : cells) {
                    total += v;
                    drawn += v / t.replicaUnit; // each case adds unit or unit + 1 (unit > N here)
                    assertTrue(v % t.replicaUnit <= v / t.replicaUnit, "at most one extra unit per case");
                }
                assertEquals(t.casesTotalQ, total, "replica " + r + " has the observed total exactly");
                assertEquals(n[i], drawn, "replica " + r + " allocates N cases");
            }
        }
    }

    @Test
    void ebpReplicasAreWholePoissonCountsInTheObservedUnits() {
        ScanTables t = ScanTables.of(ScanTestData.fractional(ScanModel.EBP, new ScanShape(8, 6), 77));
        assertEquals(1L << t.casesShift, t.replicaUnit);
        for (int r = 0; r < 10; r++) {
            long total = 0;
            for (long v : ScanReplicas.cells(t, 3, r)) {
                assertEquals(0, v % t.replicaUnit, "whole counts");
                total += v / t.replicaUnit;
            }
            assertEquals(ScanReplicas.casesOf(t, 3, r), total);
        }
    }
}
