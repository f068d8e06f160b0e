package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
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
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.TsneKernel;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The heavy-tailed kernel (1 + d^2 / dof)^-dof (issue 19 item 4): the analytic gradient against finite differences of
 * the exact KL, the optimiser's pieces (attractive twin, exact repulsion twin, grid repulsion, fixed-point KL) against
 * the O(n^2) reference {@link ExactTsne} with the same dof, the kernel against Math.pow, and late exaggeration.
 */
class HeavyTailKernelTest {

    private static double[] gaussian(int len, long seed) {
        Random rnd = new Random(seed);
        double[] y = new double[len];
        for (int t = 0; t < len; t++) {
            y[t] = rnd.nextGaussian();
        }
        return y;
    }

    @ParameterizedTest
    @CsvSource({"1, 0.5", "2, 0.5", "3, 0.5", "2, 0.3", "2, 1.7"})
    void analyticGradientMatchesFiniteDifferencesOfKl(int dim, double dof) {
        TsneTestData data = TsneTestData.clusters(3, 4, 5, 21 + dim);
        SparseRows p = data.densePerplexityP(3);
        double[] y = gaussian(data.n * dim, dim);
        double[] g = ExactTsne.gradient(p, y, dim, 1.0, dof);
        double[] g1 = ExactTsne.gradient(p, y, dim, 1.0, 1.0);
        double h = 1e-6;
        double maxErr = 0;
        double maxG = 0;
        double maxDiff1 = 0;
        for (int t = 0; t < y.length; t++) {
            double[] plus = y.clone();
            double[] minus = y.clone();
            plus[t] += h;
            minus[t] -= h;
            double fd = (ExactTsne.klDivergence(p, plus, dim, dof) - ExactTsne.klDivergence(p, minus, dim, dof))
                    / (2 * h);
            maxErr = Math.max(maxErr, Math.abs(fd - g[t]));
            maxG = Math.max(maxG, Math.abs(g[t]));
            maxDiff1 = Math.max(maxDiff1, Math.abs(g[t] - g1[t]));
        }
        assertTrue(maxG > 1e-3, "non-trivial gradient");
        assertTrue(maxDiff1 > 1e-3 * maxG, "dof " + dof + " must change the gradient");
        assertTrue(maxErr <= 1e-6 * Math.max(1, maxG), "max |finite difference - analytic| = " + maxErr);
    }

    @Test
    void kernelMatchesMathPowAndKeepsTheStandardBits() {
        Random rnd = new Random(4);
        for (int i = 0; i < 2000; i++) {
            double d2 = rnd.nextDouble() * Math.pow(10, rnd.nextInt(7) - 3);
            double dof = 0.05 + 1.95 * rnd.nextDouble();
            double t = 1 + d2 / dof;
            // relative error ~ |exponent * ln t| ulp (the logarithm's error, scaled by the exponent)
            double tol = 4e-16 * (2 + (dof + 1) * Math.log(t));
            assertEquals(Math.pow(t, -dof), TsneKernel.weight(d2, dof), tol * Math.pow(t, -dof));
            assertEquals(Math.pow(t, -dof - 1), TsneKernel.forceWeight(d2, dof), tol * Math.pow(t, -dof - 1));
            double w1 = 1.0 / (1.0 + d2);
            assertEquals(w1, TsneKernel.weight(d2, 1.0), 0.0);
            assertEquals(w1 * w1, TsneKernel.forceWeight(d2, 1.0), 0.0);
        }
    }

    @ParameterizedTest
    @CsvSource({"1, 0.5", "2, 0.5", "3, 0.7", "2, 1.5"})
    void piecesMatchTheExactReference(int dim, double dof) {
        int n = 300;
        double[] y = TsneForcesTestData.clusters(n, dim, 4, 12, 40 + dim);
        SparseRows p = TsneTestData.clusters(4, n / 4, 6, 3 + dim).densePerplexityP(8);
        double[] attr = ExactTsne.attractive(p, y, dim, dof);
        double[] rep = ExactTsne.repulsive(y, n, dim, dof);
        double z = ExactTsne.z(y, n, dim, dof);
        // the attractive twin is the reference itself; the exact repulsion twin sums in another order
        assertArrayEquals(attr, AttractiveForces.attractive(p, null, y, dim, dof, Backend.CPU, null), 0.0);
        TsneConfig cfg = new TsneConfig();
        cfg.dimension = dim;
        cfg.dof = dof;
        cfg.grid = TsneForcesTestData.options(dim);
        for (boolean exact : new boolean[] {true, false}) {
            GradientSource.Forces f = new LocalGradientSource(p, dim, cfg.grid, GridConvolution.Method.AUTO,
                    Backend.CPU, exact, dof).forces(y, true, new TsneTimings());
            double tol = exact ? 1e-12 : 1e-2; // the grid's interpolation error (p = 3 in 3-D: about 7e-3)
            assertTrue(TsneForcesTestData.relNorm(f.rep, rep) < tol, (exact ? "exact" : "grid") + " repulsion: "
                    + TsneForcesTestData.relNorm(f.rep, rep));
            assertEquals(z, f.z, tol * z, (exact ? "exact" : "grid") + " Z");
            assertEquals(ExactTsne.klDivergence(p, y, dim, dof), TsneKl.value(f.kl, f.z), exact ? 1e-10 : 1e-2,
                    "KL");
        }
        // and the standard kernel is a different function
        assertTrue(Math.abs(ExactTsne.z(y, n, dim, 1.0) - z) > 1e-3 * z);
    }

    @Test
    void heavyTailsSeparateClustersMoreAndRunsReproduce() {
        TsneTestData data = TsneTestData.clusters(3, 40, 6, 8);
        SparseRows p = data.densePerplexityP(10);
        TsneConfig cfg = new TsneConfig();
        cfg.perplexity = 10;
        cfg.maxIter = 250;
        cfg.exaggerationIterations = 50;
        cfg.backend = Backend.CPU;
        cfg.grid = new TsneGridOptions(4, 2.0, 3, new int[] {0, 400, 20, 4});
        double[] dofs = {1.0, 0.5};
        double[] ratio = new double[2];
        StringBuilder seen = new StringBuilder();
        for (long seed = 1; seed <= 3; seed++) { // the mean over starts: one start alone can go either way
            double[] y0 = TsneInit.random(data.n, 2, seed);
            for (int k = 0; k < 2; k++) {
                cfg.dof = dofs[k];
                TsneResult r = TsneOptimizer.optimize(p, y0, cfg, null);
                if (seed == 1) {
                    assertArrayEquals(r.embedding, TsneOptimizer.optimize(p, y0, cfg, null).embedding, 0.0);
                }
                double s = spreadRatio(r.embedding, data.labels);
                ratio[k] += s / 3;
                seen.append(String.format(" seed %d dof %.1f: %.3f;", seed, dofs[k], s));
            }
        }
        // heavier tails pull clusters apart relative to their width (Kobak et al. 2019)
        assertTrue(ratio[1] > 1.1 * ratio[0], "mean between/within spread dof 0.5 " + ratio[1] + " vs dof 1 " + ratio[0]
                + ":" + seen);
        System.err.println("[tsne] heavy tails, between/within spread:" + seen);
    }

    /** Mean distance between cluster centres over mean distance of points to their centre. */
    private static double spreadRatio(double[] y, int[] labels) {
        int c = 0;
        for (int l : labels) {
            c = Math.max(c, l + 1);
        }
        double[][] centre = new double[c][2];
        int[] count = new int[c];
        for (int i = 0; i < labels.length; i++) {
            centre[labels[i]][0] += y[2 * i];
            centre[labels[i]][1] += y[2 * i + 1];
            count[labels[i]]++;
        }
        for (int k = 0; k < c; k++) {
            centre[k][0] /= count[k];
            centre[k][1] /= count[k];
        }
        double within = 0;
        for (int i = 0; i < labels.length; i++) {
            within += Math.hypot(y[2 * i] - centre[labels[i]][0], y[2 * i + 1] - centre[labels[i]][1]);
        }
        within /= labels.length;
        double between = 0;
        int pairs = 0;
        for (int a = 0; a < c; a++) {
            for (int b = a + 1; b < c; b++) {
                between += Math.hypot(centre[a][0] - centre[b][0], centre[a][1] - centre[b][1]);
                pairs++;
            }
        }
        return between / pairs / within;
    }

    @Test
    void lateExaggerationScheduleAndRules() {
        TsneConfig cfg = new TsneConfig();
        cfg.exaggerationIterations = 10;
        cfg.earlyExaggeration = 12;
        assertEquals(12, cfg.exaggeration(9));
        assertEquals(1, cfg.exaggeration(10));
        cfg.lateExaggeration = 4;
        cfg.lateExaggerationIter = 30;
        assertEquals(12, cfg.exaggeration(0));
        assertEquals(1, cfg.exaggeration(29));
        assertEquals(4, cfg.exaggeration(30));
        assertEquals(4, cfg.exaggeration(999));
        cfg.lateExaggerationIter = 0; // from the end of the early phase
        assertEquals(12, cfg.exaggeration(9));
        assertEquals(4, cfg.exaggeration(10));
        assertEquals("lateExaggeration must be a finite number >= 1 (1: off), got 0.5", assertThrows(
                IllegalArgumentException.class, () -> TsneConfig.checkLateExaggeration(0.5)).getMessage());
        assertEquals("lateExaggerationIter must be >= 0, got -1", assertThrows(
                IllegalArgumentException.class, () -> TsneConfig.checkLateExaggerationIter(-1)).getMessage());
        assertEquals("dof must be in (0, 2], got 0.0", assertThrows(
                IllegalArgumentException.class, () -> TsneConfig.checkDof(0)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> TsneConfig.checkDof(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> TsneConfig.checkDof(2.5));
        TsneConfig.checkDof(2);
    }

    @Test
    void lateExaggerationChangesTheRunOnlyFromItsStart() {
        TsneTestData data = TsneTestData.clusters(3, 20, 5, 9);
        SparseRows p = data.densePerplexityP(8);
        double[] y0 = TsneInit.random(data.n, 2, 5);
        TsneConfig cfg = new TsneConfig();
        cfg.perplexity = 8;
        cfg.exaggerationIterations = 20;
        cfg.backend = Backend.CPU;
        cfg.maxIter = 40;
        double[] plain = TsneOptimizer.optimizeExact(p, y0, cfg, null).embedding;
        cfg.lateExaggeration = 3;
        cfg.lateExaggerationIter = 40; // never reached
        assertArrayEquals(plain, TsneOptimizer.optimizeExact(p, y0, cfg, null).embedding, 0.0);
        cfg.lateExaggerationIter = 39; // the last iteration only
        double[] late = TsneOptimizer.optimizeExact(p, y0, cfg, null).embedding;
        assertTrue(TsneForcesTestData.relNorm(late, plain) > 1e-9);
    }
}
