package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneForcesTestData;
import io.sparkgpu.tsne.TsneGridOptions;
import io.sparkgpu.tsne.TsneResult;
import io.sparkgpu.tsne.TsneTestData;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.init.TsneInit;
import io.sparkgpu.tsne.repulsion.ExactRepulsion;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import org.junit.jupiter.api.Test;

/**
 * The rule that picks the repulsive term from the data ({@link TsneConfig#exactRepulsion}): exact sums for small n,
 * the grid above, whose size follows the embedding's extent within its bounds; and the exact KL of the final
 * embedding ({@link TsneOptimizer}), whatever the repulsion of the iterations.
 */
class RepulsionChoiceTest {
    @Test
    void theRuleReadsOnlyTheSettingAndN() {
        int max = TsneConfig.EXACT_MAX_POINTS;
        assertTrue(TsneConfig.exactRepulsion("auto", 4));
        assertTrue(TsneConfig.exactRepulsion("auto", max));
        assertFalse(TsneConfig.exactRepulsion("auto", max + 1));
        assertTrue(TsneConfig.exactRepulsion("EXACT", 10_000_000));
        assertFalse(TsneConfig.exactRepulsion(" grid ", 4));
        assertEquals("repulsion must be one of auto|exact|grid, got 'fast'", assertThrows(
                IllegalArgumentException.class, () -> TsneConfig.exactRepulsion("fast", 4)).getMessage());
        for (Backend b : Backend.values()) { // never the backend: GPU and CPU twin compute the same thing
            TsneConfig c = new TsneConfig();
            c.backend = b;
            assertTrue(c.exactRepulsion(max), b.name());
            assertFalse(c.exactRepulsion(max + 1), b.name());
        }
        assertTrue(new TsneConfig().exactFinalKl(TsneConfig.EXACT_KL_MAX_POINTS));
        assertFalse(new TsneConfig().exactFinalKl(TsneConfig.EXACT_KL_MAX_POINTS + 1));
    }

    /** One evaluation through {@link LocalGradientSource} with the rule of a default config. */
    private static TsneTimings evaluate(int n, double[] y) {
        SparseRows p = TsneForcesTestData.randomRows(n, 0, n, 1, 3, 0, n);
        TsneConfig cfg = new TsneConfig();
        TsneTimings t = new TsneTimings();
        try (LocalGradientSource src = new LocalGradientSource(p, cfg, Backend.CPU)) {
            GradientSource.Forces f = src.forces(y, false, t);
            if (cfg.exactRepulsion(n)) {
                assertArrayEquals(ExactRepulsion.repulsion(y, n, 2, 0, n, Backend.CPU, null).force, f.rep, 0.0);
            }
        }
        return t;
    }

    @Test
    void smallDataTakesTheExactSumsLargerDataTheGrid() {
        int n = 300;
        TsneTimings small = evaluate(n, TsneForcesTestData.clusters(n, 2, 3, 200, 1));
        assertTrue(small.nanos(TsneTimings.Phase.EXACT) > 0 && small.nanos(TsneTimings.Phase.S2G) == 0, "" + small);
        assertEquals("cpu", small.backends().backend(ExactRepulsion.PHASE));
        assertEquals(null, small.backends().backend(GridRepulsion.S2G_PHASE));
        int big = TsneConfig.EXACT_MAX_POINTS + 1; // one evaluation of a compact embedding: a small grid
        TsneTimings large = evaluate(big, TsneForcesTestData.clusters(big, 2, 3, 4, 2));
        assertTrue(large.nanos(TsneTimings.Phase.EXACT) == 0 && large.nanos(TsneTimings.Phase.S2G) > 0
                && large.nanos(TsneTimings.Phase.G2G) > 0, "" + large);
        assertEquals(null, large.backends().backend(ExactRepulsion.PHASE));
    }

    @Test
    void theGridFollowsTheExtentWithinItsBoundsAndNotN() {
        TsneGridOptions d = TsneGridOptions.defaults();
        // boxes = clamp(ceil(extent * intervalsPerUnit), minIntervals, maxIntervals[dim])
        double[][] extentAndBoxes2d = {{0, d.minIntervals}, {1, d.minIntervals}, {30, 60}, {100.2, 201},
            {1000, d.maxIntervals[2]}};
        for (double[] c : extentAndBoxes2d) {
            InterpGrid g = GridRepulsion.plan(new double[] {-5, 7}, new double[] {-5 + c[0], 7 + c[0] / 2}, 2, d);
            assertEquals((int) c[1], g.intervals, "extent " + c[0]);
            assertEquals(g.intervals * d.p, g.nodesPerDim());
        }
        for (int dim = 1; dim <= 3; dim++) { // the caps per dimension
            double[] lo = new double[dim];
            double[] hi = new double[dim];
            java.util.Arrays.fill(hi, 1e4);
            assertEquals(d.maxIntervals[dim], GridRepulsion.plan(lo, hi, dim, d).intervals, "dim " + dim);
        }
        // the same extent gives the same grid for 10 or 10^4 points: the grid depends on the extent only
        double[] few = TsneForcesTestData.clusters(10, 2, 2, 40, 5);
        double[] many = new double[2 * 10_000];
        for (int i = 0; i < 10_000; i++) {
            System.arraycopy(few, 2 * (i % 10), many, 2 * i, 2);
        }
        InterpGrid a = LocalGradientSource.plan(few, 10, 2, d, 1.0);
        InterpGrid b = LocalGradientSource.plan(many, 10_000, 2, d, 1.0);
        assertEquals(a.intervals, b.intervals);
        assertEquals(a.boxWidth, b.boxWidth, 0.0);
    }

    private static TsneConfig run(String repulsion) {
        TsneConfig c = new TsneConfig();
        c.perplexity = 8;
        c.maxIter = 60;
        c.exaggerationIterations = 25;
        c.klEvery = 20;
        c.learningRate = 100;
        c.init = TsneConfig.INIT_RANDOM;
        c.backend = Backend.CPU;
        c.repulsion = repulsion;
        // a coarse grid: boxes 4 units wide, 3 nodes each, so the interpolated Z is visibly off
        c.grid = new TsneGridOptions(3, 0.25, 1, new int[] {0, 8, 8, 8});
        return c;
    }

    @Test
    void theFinalKlIsTheExactKlOfTheFinalEmbedding() {
        TsneTestData data = TsneTestData.clusters(4, 40, 6, 3);
        SparseRows p = data.densePerplexityP(8);
        double[] y0 = TsneInit.random(data.n, 2, 9);
        for (String repulsion : new String[] {TsneConfig.REPULSION_GRID, TsneConfig.REPULSION_EXACT}) {
            TsneConfig cfg = run(repulsion);
            TsneResult r = TsneOptimizer.optimize(p, y0, cfg, null);
            double exact = ExactTsne.klDivergence(p, r.embedding, 2); // brute force, another summation order
            assertEquals(exact, r.finalKl(), 1e-12 * exact, repulsion);
            assertArrayEquals(new int[] {20, 40, 60}, r.klIterations, repulsion + ": the last one once");
            if (repulsion.equals(TsneConfig.REPULSION_GRID)) { // what the grid's Z would have reported
                try (LocalGradientSource src = new LocalGradientSource(p, 2, cfg.grid, cfg.convolution, Backend.CPU)) {
                    GradientSource.Forces f = src.forces(r.embedding, true, new TsneTimings());
                    double interpolated = TsneKl.value(f.kl, f.z);
                    assertNotEquals(exact, interpolated, 1e-4, "the coarse grid's KL differs: the test can tell");
                }
            }
        }
    }
}
