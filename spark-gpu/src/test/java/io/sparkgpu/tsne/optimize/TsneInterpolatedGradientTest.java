package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.SparkTestSession;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneGridOptions;
import io.sparkgpu.tsne.TsneResult;
import io.sparkgpu.tsne.TsneTestData;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.affinity.SparseRowsOps;
import io.sparkgpu.tsne.init.TsneInit;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import java.util.List;
import java.util.Random;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The gradient from the real pieces (attractive term, S2G, G2G, G2S) against the exact O(n^2) gradient, and the
 * single-device and Spark sources against each other (same bits), on a brute-force P (CPU twins).
 */
class TsneInterpolatedGradientTest {

    private static double[] spread(int n, int dim, double scale, long seed) {
        Random rnd = new Random(seed);
        double[] y = new double[n * dim];
        for (int i = 0; i < n; i++) {
            for (int a = 0; a < dim; a++) {
                y[i * dim + a] = scale * ((i % 3) - 1) + rnd.nextGaussian() * scale / 3;
            }
        }
        return y;
    }

    private static double[] gradient(GradientSource.Forces f, double alpha) {
        double[] g = new double[f.attr.length];
        for (int t = 0; t < g.length; t++) {
            g[t] = 4.0 * (alpha * f.attr[t] - f.rep[t] / f.z);
        }
        return g;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    void interpolatedGradientMatchesTheExactOne(int dim) {
        TsneTestData data = TsneTestData.clusters(3, 40, 5, 7);
        SparseRows p = data.densePerplexityP(10);
        TsneGridOptions grid = dim == 3 ? new TsneGridOptions(3, 1.0, 30, new int[] {0, 400, 200, 30})
                : TsneGridOptions.defaults();
        // extents up to ~15 (3-D: ~10, to keep the CPU grid small). With few points and a large extent the
        // cancellation in z_i = (1 + |u|^2) phi_0 - 2 u . phi_u + phi_|u|^2 amplifies the interpolation error
        // (measured at n = 120, extent ~45 in 2-D: Z 3.7e-2, gradient 7e-2 relative); see the lead's notes
        for (double scale : dim == 3 ? new double[] {1e-3, 3} : new double[] {1e-3, 5}) {
            double[] y = spread(data.n, dim, scale, 11);
            GradientSource.Forces exact = new ExactGradientSource(p, dim).forces(y, true, new TsneTimings());
            GradientSource.Forces approx = new LocalGradientSource(p, dim, grid, GridConvolution.Method.AUTO,
                    Backend.CPU).forces(y, true, new TsneTimings());
            assertArrayEquals(exact.attr, approx.attr, "the attractive term is exact");
            double zErr = Math.abs(approx.z - exact.z) / exact.z;
            double[] ge = gradient(exact, 1);
            double[] ga = gradient(approx, 1);
            double num = 0;
            double den = 0;
            for (int t = 0; t < ge.length; t++) {
                num += (ga[t] - ge[t]) * (ga[t] - ge[t]);
                den += ge[t] * ge[t];
            }
            double rel = Math.sqrt(num / den);
            System.err.printf(java.util.Locale.ROOT, "[tsne] dim %d scale %s: Z rel. error %.2e, gradient rel. error "
                    + "%.2e%n", dim, scale, zErr, rel);
            // bounds of the interpolation (p = 3 nodes per box) with a margin; a wrong term or factor is far off
            assertTrue(zErr < 2e-2, "dim " + dim + " scale " + scale + ": Z relative error " + zErr);
            assertTrue(rel < (dim == 3 ? 3e-2 : 3e-3), "dim " + dim + " scale " + scale + ": relative gradient error "
                    + rel);
            assertEquals(TsneKl.value(exact.kl, exact.z), TsneKl.value(approx.kl, approx.z), 2e-2);
        }
    }

    @Test
    void sparkSlicesGiveTheSingleDeviceBits() {
        TsneTestData data = TsneTestData.clusters(4, 25, 6, 9);
        SparseRows p = data.densePerplexityP(8);
        TsneConfig cfg = new TsneConfig();
        cfg.perplexity = 8;
        cfg.maxIter = 12;
        cfg.exaggerationIterations = 6;
        cfg.klEvery = 5;
        cfg.backend = Backend.CPU;
        double[] y0 = TsneInit.random(data.n, 2, 5);
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
        for (String repulsion : new String[] {TsneConfig.REPULSION_GRID, TsneConfig.REPULSION_AUTO}) { // auto: exact
            cfg.repulsion = repulsion;
            cfg.validate(data.n);
            TsneResult single = TsneOptimizer.optimize(p, y0, cfg, null);
            for (int parts : new int[] {3}) { // 1 slice and coalescing: GpuTsneSparkTest
                List<SparseRows> slices = SparseRowsOps.split(p, parts);
                JavaRDD<SparseRows> rdd = jsc.parallelize(slices, slices.size()).cache();
                TsneResult dist = TsneOptimizer.run(new SparkGradientSource(jsc, rdd, data.n, 2, cfg.grid,
                        cfg.convolution, cfg.backend, cfg.exactRepulsion(data.n), cfg.dof), y0, cfg, null, new TsneTimings(),
                        TsneConfig.MODE_DISTRIBUTED, null);
                rdd.unpersist();
                assertArrayEquals(single.embedding, dist.embedding, parts + " slices, " + repulsion);
                assertArrayEquals(single.klValues, dist.klValues, parts + " slices, " + repulsion);
            }
        }
        assertEquals(SparseRowsOps.concat(SparseRowsOps.split(p, 5)).val.length, p.val.length);
        assertArrayEquals(p.rowPtr, SparseRowsOps.concat(SparseRowsOps.split(p, 5)).rowPtr);
    }
}
