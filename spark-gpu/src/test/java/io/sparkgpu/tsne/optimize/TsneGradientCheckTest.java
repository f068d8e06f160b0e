package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.tsne.TsneForcesTestData;
import io.sparkgpu.tsne.TsneTestData;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.affinity.SparseRowsOps;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The analytic t-SNE gradient against central finite differences of KL(P || Q) on tiny n. */
class TsneGradientCheckTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    void analyticGradientMatchesFiniteDifferencesOfKl(int dim) {
        TsneTestData data = TsneTestData.clusters(3, 4, 5, 11 + dim);
        SparseRows p = data.densePerplexityP(3);
        Random rnd = new Random(dim);
        double[] y = new double[data.n * dim];
        for (int t = 0; t < y.length; t++) {
            y[t] = rnd.nextGaussian();
        }
        double[] g = ExactTsne.gradient(p, y, dim, 1.0);
        double h = 1e-6;
        double maxErr = 0;
        double maxG = 0;
        for (int t = 0; t < y.length; t++) {
            double[] plus = y.clone();
            double[] minus = y.clone();
            plus[t] += h;
            minus[t] -= h;
            double fd = (ExactTsne.klDivergence(p, plus, dim) - ExactTsne.klDivergence(p, minus, dim)) / (2 * h);
            maxErr = Math.max(maxErr, Math.abs(fd - g[t]));
            maxG = Math.max(maxG, Math.abs(g[t]));
        }
        assertTrue(maxG > 1e-3, "non-trivial gradient");
        assertTrue(maxErr <= 1e-6 * Math.max(1, maxG), "max |finite difference - analytic| = " + maxErr);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    void optimiserKlMatchesExactKlAndTheFixedPointKlAgrees(int dim) {
        TsneTestData data = TsneTestData.clusters(3, 5, 4, 5);
        SparseRows p = data.densePerplexityP(4);
        Random rnd = new Random(3);
        double[] y = new double[data.n * dim];
        for (int t = 0; t < y.length; t++) {
            y[t] = rnd.nextGaussian();
        }
        long[] acc = TsneKl.partial(p, y, dim);
        double viaPartials = TsneKl.value(acc, ExactTsne.z(y, data.n, dim));
        assertEquals(ExactTsne.klDivergence(p, y, dim), viaPartials, 1e-12);
        // slices combine exactly
        long[] sum = TsneKl.empty();
        for (SparseRows s : SparseRowsOps.split(p, 4)) {
            TsneKl.add(sum, TsneKl.partial(s, y, dim));
        }
        assertEquals(acc[0], sum[0]);
        assertEquals(acc[1], sum[1]);
        assertEquals(acc[2], sum[2]);
        assertEquals(acc[3], sum[3]);
    }

    @org.junit.jupiter.api.Test
    void klOfManyChunksIsTheExactSumOfItsRowsAndRepeats() {
        // beyond one chunk (TsneKl.CHUNK rows) the partial sums run on several threads
        int n = 5 * TsneKl.CHUNK + 123;
        int dim = 2;
        SparseRows p = TsneForcesTestData.randomRows(n, 0, n, 2, 12, 0, 8);
        double[] y = TsneForcesTestData.clusters(n, dim, 4, 30, 9);
        long[] expected = TsneKl.empty();
        for (SparseRows s : SparseRowsOps.split(p, 40)) { // slices below one chunk each: sequential
            assertTrue(s.rows <= TsneKl.CHUNK);
            TsneKl.add(expected, TsneKl.partial(s, y, dim));
        }
        for (int rep = 0; rep < 3; rep++) {
            long[] got = TsneKl.partial(p, y, dim);
            for (int t = 0; t < 4; t++) {
                assertEquals(expected[t], got[t], "word " + t + ", repetition " + rep);
            }
        }
    }
}
