package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** p-values, secondary clusters and the local engine. */
class ScanResultTest {

    @Test
    void pValueConvention() {
        // (1 + #replicas with max >= observed) / (R + 1); ties count against the observed value
        assertEquals(3.0 / 5.0, ScanResult.pValue(5, new double[] {1, 2, 5, 7}));
        assertEquals(1.0 / 5.0, ScanResult.pValue(8, new double[] {1, 2, 5, 7}));
        assertEquals(1.0, ScanResult.pValue(0.5, new double[] {1, 2, 5, 7}));
        double[] r999 = new double[999];
        Arrays.fill(r999, 3.0);
        assertEquals(0.001, ScanResult.pValue(3.5, r999), 1e-15);
        assertEquals(1.0, ScanResult.pValue(3.0, r999));
        assertEquals(1.0 / 1000, ScanResult.pValue(3.0, new double[999]), 1e-15); // all zero
        assertTrue(Double.isNaN(ScanResult.pValue(3.0, new double[0])));
        // replicas where nothing qualified (-inf) never count
        assertEquals(0.5, ScanResult.pValue(1, new double[] {Double.NEGATIVE_INFINITY}));
    }

    /** Replicas drawn in progress batches (issue 21) are those of one call: 150 = 64 + 64 + 22. */
    @Test
    void replicasInProgressBatchesEqualOneCall() {
        ScanGrid g = ScanTestData.grid(ScanModel.POISSON, new ScanShape(6, 5), 7);
        ScanTables t = ScanTables.of(g);
        ScanSpec spec = new ScanSpec(ScanDirection.HIGH, 1, Long.MAX_VALUE, 0.5);
        int n = 2 * ScanResult.MIN_BATCH + 22;
        ScanResult r = LocalScan.run(t, spec, 1, n, 11, Backend.CPU, 2);
        assertArrayEquals(ScanCpu.replicaMaxima(t, spec, 11, 0, n, null), r.replicaLlrs());
    }

    @Test
    void secondaryClustersAreTheBestNonOverlappingRanges() {
        long seed = 1;
        for (ScanModel model : ScanModel.values()) {
            for (ScanShape sh : List.of(new ScanShape(30), new ScanShape(9, 8), new ScanShape(5, 4, 3))) {
                ScanGrid g = ScanTestData.grid(model, sh, seed++);
                ScanTables t = ScanTables.of(g);
                long[] cq = ScanTestData.quantizedCases(g, t);
                long[] bq = ScanTestData.quantizedBase(t);
                ScanSpec spec = new ScanSpec(ScanDirection.HIGH, 1, Long.MAX_VALUE, 0.5);
                ScanResult r = LocalScan.run(t, spec, 4, 0, 1, Backend.CPU, 1);
                ScanSpec s = spec;
                for (ScanCluster c : r.clusters()) {
                    ScanBest want = ScanTestData.exactBrute(t, cq, bq, s);
                    assertEquals(want.index, c.index(), model.id() + " " + sh + " cluster " + c.rank());
                    assertEquals(want.llr, c.llr(), 0.0);
                    for (ScanCluster earlier : r.clusters().subList(0, c.rank() - 1)) {
                        assertFalse(ScanShape.overlap(c.box(), earlier.box()), "clusters overlap");
                    }
                    assertTrue(c.llr() > 0);
                    // observed and expected from the box's own cells
                    double obs = 0;
                    for (int z = c.lo(2); z <= c.hi(2); z++) {
                        for (int y = c.lo(1); y <= c.hi(1); y++) {
                            for (int x = c.lo(0); x <= c.hi(0); x++) {
                                obs += g.cases(sh.cell(x, y, z));
                            }
                        }
                    }
                    assertEquals(obs, c.observed(), 1e-9 * Math.max(1, Math.abs(obs)));
                    assertTrue(Double.isNaN(c.pValue()));
                    s = s.excluding(c.box());
                }
                assertTrue(r.clusters().size() >= 1, model.id() + " " + sh);
                for (int i = 1; i < r.clusters().size(); i++) {
                    assertTrue(r.clusters().get(i).llr() <= r.clusters().get(i - 1).llr());
                }
            }
        }
    }

    @Test
    void plantedClusterIsSignificantAndResultsDoNotDependOnThreads() {
        ScanShape sh = new ScanShape(20, 15);
        double[] c = new double[sh.cells()];
        double[] b = new double[sh.cells()];
        java.util.Random r = new java.util.Random(3);
        for (int i = 0; i < c.length; i++) {
            b[i] = 100;
            int x = i % 20;
            int y = i / 20;
            boolean hot = x >= 4 && x <= 7 && y >= 9 && y <= 11;
            c[i] = ScanTestData.poisson(r, hot ? 6 : 2);
        }
        ScanTables t = ScanTables.of(ScanGrid.of(ScanModel.POISSON, sh, c, b, null, null));
        ScanSpec spec = new ScanSpec(ScanDirection.HIGH, 1, Long.MAX_VALUE, 0.5);
        ScanResult one = LocalScan.run(t, spec, 3, 99, 11, Backend.CPU, 1);
        ScanResult three = LocalScan.run(t, spec, 3, 99, 11, Backend.CPU, 3);
        assertEquals("cpu", one.backend());
        assertArrayEquals(one.replicaLlrs(), three.replicaLlrs(), 0.0);
        assertEquals(one.clusters().size(), three.clusters().size());
        for (int i = 0; i < one.clusters().size(); i++) {
            assertEquals(one.clusters().get(i).index(), three.clusters().get(i).index());
            assertEquals(one.clusters().get(i).pValue(), three.clusters().get(i).pValue());
        }
        ScanCluster top = one.clusters().get(0);
        assertEquals(0.01, top.pValue(), 1e-12, "the planted cluster beats all 99 replicas");
        assertTrue(top.lo(0) <= 7 && top.hi(0) >= 4 && top.lo(1) <= 11 && top.hi(1) >= 9, top.toString());
        assertTrue(top.relativeRisk() > 1.5, top.toString());
        // a different seed gives other replicas
        ScanResult other = LocalScan.run(t, spec, 1, 20, 12, Backend.CPU, 1);
        assertFalse(Arrays.equals(Arrays.copyOf(one.replicaLlrs(), 20), other.replicaLlrs()));
    }

    @Test
    void nullDataGiveRoughlyUniformPValues() {
        // under the null the primary cluster's p-value is uniform; over 40 null grids it cannot be always tiny
        int small = 0;
        for (int s = 0; s < 40; s++) {
            java.util.Random r = new java.util.Random(100 + s);
            ScanShape sh = new ScanShape(12);
            double[] c = new double[12];
            double[] b = new double[12];
            for (int i = 0; i < 12; i++) {
                b[i] = 50;
                c[i] = ScanTestData.poisson(r, 5);
            }
            ScanTables t = ScanTables.of(ScanGrid.of(ScanModel.POISSON, sh, c, b, null, null));
            ScanResult res = LocalScan.run(t, ScanSpec.all(ScanDirection.HIGH), 1, 39, s, Backend.CPU, 1);
            if (res.clusters().get(0).pValue() <= 0.05) {
                small++;
            }
        }
        assertTrue(small <= 8, small + " of 40 null grids had p <= 0.05");
    }
}
