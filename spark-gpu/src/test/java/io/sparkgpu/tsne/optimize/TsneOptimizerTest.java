package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneQuality;
import io.sparkgpu.tsne.TsneResult;
import io.sparkgpu.tsne.TsneTestData;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.init.TsneInit;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The optimiser with the exact O(n^2) forces: separation, KL history, centring, determinism, config errors. */
class TsneOptimizerTest {

    private static TsneConfig small(int dim) {
        TsneConfig c = new TsneConfig();
        c.dimension = dim;
        c.perplexity = 8;
        c.maxIter = 250;
        c.exaggerationIterations = 100;
        c.init = TsneConfig.INIT_RANDOM;
        return c;
    }

    @Test
    void separatesWellSeparatedClustersAndKlDecreases() {
        TsneTestData data = TsneTestData.clusters(4, 20, 6, 1);
        SparseRows p = data.densePerplexityP(8);
        TsneConfig cfg = small(2);
        List<Double> kls = new ArrayList<>();
        TsneResult r = TsneOptimizer.optimizeExact(p, TsneInit.random(data.n, 2, 7), cfg,
                (it, kl) -> kls.add(kl));
        assertArrayEquals(new int[] {50, 100, 150, 200, 250}, r.klIterations, "periodic, then the final one once");
        assertEquals(r.klValues.length, kls.size());
        double acc = TsneQuality.knnLabelAccuracy(r.embedding, 2, data.labels, 5);
        assertTrue(acc >= 0.95, "kNN label accuracy " + acc);
        // after the exaggeration phase the true KL decreases
        assertTrue(r.klValues[r.klValues.length - 1] < r.klValues[2], "KL history " + kls);
        assertEquals(ExactTsne.klDivergence(p, r.embedding, 2), r.finalKl(), 1e-9);
        for (int a = 0; a < 2; a++) {
            double mean = 0;
            for (int i = 0; i < data.n; i++) {
                mean += r.embedding[i * 2 + a];
            }
            assertEquals(0, mean / data.n, 1e-9, "centred");
        }
    }

    @Test
    void oneAndThreeDimensionsWork() {
        TsneTestData data = TsneTestData.clusters(3, 15, 5, 2);
        SparseRows p = data.densePerplexityP(6);
        for (int dim : new int[] {1, 3}) {
            TsneConfig cfg = small(dim);
            cfg.perplexity = 6;
            // exaggeration * learning rate must stay near n for stability (Linderman and Steinerberger 2017);
            // the auto rule max(n / 12, 200) targets large n
            cfg.learningRate = data.n;
            // a PCA-like start (projection on a fixed direction); random starts can split clusters in 1-D
            double[] y0 = TsneInit.random(data.n, dim, 3);
            for (int i = 0; i < data.n; i++) {
                double s = 0;
                for (int a = 0; a < data.d; a++) {
                    s += (a + 1) * data.x[i * data.d + a];
                }
                y0[i * dim] = s * 1e-5;
            }
            TsneResult r = TsneOptimizer.optimizeExact(p, y0, cfg, null);
            double acc = TsneQuality.knnLabelAccuracy(r.embedding, dim, data.labels, 5);
            assertTrue(acc >= 0.95, "dim " + dim + ": kNN label accuracy " + acc);
        }
    }

    @Test
    void sameInputSameBits() {
        TsneTestData data = TsneTestData.clusters(3, 10, 4, 3);
        SparseRows p = data.densePerplexityP(5);
        TsneConfig cfg = small(2);
        cfg.perplexity = 5;
        cfg.maxIter = 60;
        double[] a = TsneOptimizer.optimizeExact(p, TsneInit.random(data.n, 2, 1), cfg, null).embedding;
        double[] b = TsneOptimizer.optimizeExact(p, TsneInit.random(data.n, 2, 1), cfg, null).embedding;
        assertArrayEquals(a, b);
    }

    @Test
    void gainsFollowDeltaBarDelta() {
        double[] y = {0, 0};
        double[] u = {0, 1};
        double[] gains = {1, 1};
        GradientSource.Forces f = new GradientSource.Forces(new double[] {-1, 1}, new double[] {0, 0}, 1, null);
        TsneOptimizer.step(y, u, gains, f, 1, 0.5, 10, 0.01);
        // g = attr (gradient / 4): g0 = -1 (sign differs from u0 = 0) -> 1.2; g1 = 1 (same sign as u1) -> 0.8
        assertEquals(1.2, gains[0], 1e-15);
        assertEquals(0.8, gains[1], 1e-15);
        assertEquals(0.5 * 0 - 10 * 1.2 * -1, u[0], 1e-12);
        assertEquals(0.5 * 1 - 10 * 0.8 * 1, u[1], 1e-12);
        assertEquals(u[0], y[0], 0);
    }

    @Test
    void configErrorsNameTheParameter() {
        assertMessage("dimension", () -> cfg(c -> c.dimension = 4).validate());
        assertMessage("perplexity", () -> cfg(c -> c.perplexity = -1).validate());
        assertMessage("perplexity", () -> cfg(c -> c.perplexity = 10).validate(10));
        assertMessage("k=", () -> cfg(c -> { c.perplexity = 3; c.k = 12; }).validate(12));
        // the default k is capped at n - 1: 15 points, perplexity 5 take k = 14
        assertEquals(14, cfg(c -> c.perplexity = 5).validate(15).effectiveK(15));
        assertMessage("perplexity=5.0 must be < n - 1 = 5", () -> cfg(c -> c.perplexity = 5).validate(6));
        assertMessage("at least 4 points", () -> cfg(c -> c.perplexity = 1.5).validate(3));
        assertMessage("perplexity must be a finite number > 1, got 1.0", () -> cfg(c -> c.perplexity = 1).validate());
        assertMessage("k=5 must be > perplexity=5.0", () -> cfg(c -> { c.perplexity = 5; c.k = 5; }).validate());
        assertMessage("learningRate", () -> cfg(c -> c.learningRate = -2).validate());
        assertMessage("init", () -> cfg(c -> c.init = "spectral").validate());
        assertMessage("mode", () -> cfg(c -> c.mode = "cluster").validate());
        assertMessage("finalMomentum", () -> cfg(c -> c.finalMomentum = 1).validate());
        assertMessage("earlyExaggeration", () -> cfg(c -> c.earlyExaggeration = Double.NaN).validate());
        assertMessage("minGain", () -> cfg(c -> c.minGain = 0).validate());
        assertEquals(90, new TsneConfig().effectiveK(1000));
        assertEquals(49, new TsneConfig().effectiveK(50));
        assertEquals(200, new TsneConfig().effectiveLearningRate(1000), 0);
        assertEquals(1e6 / 12, new TsneConfig().effectiveLearningRate(1_000_000), 0);
    }

    private interface Edit {
        void apply(TsneConfig c);
    }

    private static TsneConfig cfg(Edit e) {
        TsneConfig c = new TsneConfig();
        e.apply(c);
        return c;
    }

    private static void assertMessage(String part, org.junit.jupiter.api.function.Executable ex) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, ex);
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
