package io.sparkgpu.tsne.init;

import io.sparkgpu.tsne.TsneConfig;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.mllib.linalg.Matrix;
import org.apache.spark.mllib.linalg.Vector;
import org.apache.spark.mllib.linalg.Vectors;
import org.apache.spark.mllib.linalg.distributed.RowMatrix;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * The initial embedding of t-SNE ({@link TsneConfig#init}): seeded Gaussian ({@link #random}), or the projection on
 * the first principal components, centred and scaled ({@link #initialize}). The PCA is MLlib's
 * ({@link RowMatrix#computePrincipalComponents}) fitted on a seeded sample of at most {@link #PCA_SAMPLE} rows held in
 * one partition in row order, so its result does not depend on the partitioning; every row is then projected on its
 * own ({@link #project}). The trainer's optional reduction to {@link TsneConfig#pcaDimension} uses the same two
 * pieces.
 */
public final class TsneInit {
    private static final Logger LOG = LoggerFactory.getLogger(TsneInit.class);
    /** Rows on which the PCA is fitted (at most). */
    public static final int PCA_SAMPLE = 20_000;
    /** Standard deviation of the first axis of the initial embedding. */
    public static final double INIT_STD = 1e-4;

    private TsneInit() {
    }

    /**
     * Starting positions (n x dim) for {@code init}: {@link #random}, or for "pca" the projection of every row on the
     * first dim principal components of the sample, centred and scaled so that the first axis has standard deviation
     * {@link #INIT_STD} on the sample. "pca" starts at random when there are fewer features than dimensions or when
     * the sample has no variance (logged).
     *
     * @param sample the features of a seeded sample of at most {@link #PCA_SAMPLE} rows, in row order (asked for only
     *               by "pca")
     * @param rows   every row as (index 0..n-1, its d features)
     */
    public static double[] initialize(JavaSparkContext jsc, String init, int n, int d, int dim, long seed,
            Supplier<double[][]> sample, JavaPairRDD<Long, double[]> rows) {
        if (TsneConfig.INIT_RANDOM.equals(init) || d < dim) {
            if (!TsneConfig.INIT_RANDOM.equals(init)) {
                LOG.info("spark-gpu t-SNE: {} features are fewer than dimension {}; random initialisation", d, dim);
            }
            return random(n, dim, seed);
        }
        jsc.setJobDescription("spark-gpu t-SNE: PCA initialisation");
        double[][] fit = sample.get();
        double[] pc = principalComponents(jsc, fit, dim);
        double[] mean = new double[dim];
        double[][] proj = new double[fit.length][];
        for (int s = 0; s < fit.length; s++) {
            proj[s] = project(fit[s], pc, d, dim);
            for (int a = 0; a < dim; a++) {
                mean[a] += proj[s][a];
            }
        }
        for (int a = 0; a < dim; a++) {
            mean[a] /= fit.length;
        }
        double ss = 0;
        for (double[] p : proj) {
            ss += (p[0] - mean[0]) * (p[0] - mean[0]);
        }
        double std = Math.sqrt(ss / fit.length);
        if (!(std > 0)) {
            LOG.info("spark-gpu t-SNE: the sample has no variance; random initialisation");
            return random(n, dim, seed);
        }
        double scale = INIT_STD / std;
        Broadcast<double[]> bpc = jsc.broadcast(pc);
        double[] y = new double[n * dim];
        for (Object[] b : rows.mapPartitions((Iterator<Tuple2<Long, double[]>> it) -> {
            List<Object[]> out = new ArrayList<>();
            it.forEachRemaining(p -> {
                double[] v = project(p._2(), bpc.value(), d, dim);
                for (int a = 0; a < dim; a++) {
                    v[a] = (v[a] - mean[a]) * scale;
                }
                out.add(new Object[] {p._1(), v});
            });
            return out.iterator();
        }).collect()) {
            System.arraycopy((double[]) b[1], 0, y, (int) (long) (Long) b[0] * dim, dim);
        }
        bpc.destroy();
        return y;
    }

    /** n x dim Gaussian values with standard deviation {@link #INIT_STD}, drawn in index order from the seed. */
    public static double[] random(int n, int dim, long seed) {
        Random rnd = new Random(seed);
        double[] y = new double[n * dim];
        for (int t = 0; t < y.length; t++) {
            y[t] = rnd.nextGaussian() * INIT_STD;
        }
        return y;
    }

    /** MLlib's top-k principal components (d x k, column-major) of the sample, fitted in one partition. */
    public static double[] principalComponents(JavaSparkContext jsc, double[][] sample, int k) {
        List<Vector> rows = new ArrayList<>(sample.length);
        for (double[] s : sample) {
            rows.add(Vectors.dense(s));
        }
        Matrix pc = new RowMatrix(jsc.parallelize(rows, 1).rdd()).computePrincipalComponents(k);
        return pc.toArray();
    }

    /** x (d values) times the d x k column-major matrix pc. */
    public static double[] project(double[] x, double[] pc, int d, int k) {
        double[] out = new double[k];
        for (int j = 0; j < k; j++) {
            double s = 0;
            for (int a = 0; a < d; a++) {
                s += x[a] * pc[j * d + a];
            }
            out[j] = s;
        }
        return out;
    }
}
