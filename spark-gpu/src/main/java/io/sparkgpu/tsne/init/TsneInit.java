package io.sparkgpu.tsne.init;

import io.sparkgpu.tsne.TsneConfig;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
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
 * The initial embedding of t-SNE ({@link TsneConfig#init}): seeded Gaussian ({@link #random}, a function of the seed
 * and each row's id key only, so neither the row order nor the other rows change a row's start), or the projection on
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
     * @param keys   the id key ({@link #idKey}) of every row, by index 0..n-1 (used by the random start)
     * @param rows   every row as (index 0..n-1, its d features)
     */
    public static double[] initialize(JavaSparkContext jsc, String init, long[] keys, int d, int dim, long seed,
            Supplier<double[][]> sample, JavaPairRDD<Long, double[]> rows) {
        int n = keys.length;
        if (TsneConfig.INIT_RANDOM.equals(init) || d < dim) {
            if (!TsneConfig.INIT_RANDOM.equals(init)) {
                LOG.info("spark-gpu t-SNE: {} features are fewer than dimension {}; random initialisation", d, dim);
            }
            return random(keys, dim, seed);
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
            return random(keys, dim, seed);
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

    /** {@link #random(long[], int, long)} with the keys 0..n-1 (rows identified by their index). */
    public static double[] random(int n, int dim, long seed) {
        long[] keys = new long[n];
        for (int i = 0; i < n; i++) {
            keys[i] = i;
        }
        return random(keys, dim, seed);
    }

    /**
     * keys.length x dim Gaussian values with standard deviation {@link #INIT_STD}: row i, axis a is
     * {@link #gaussian}(seed, keys[i], a), so a row's start depends only on the seed and its id, not on its position
     * in the input nor on the other rows.
     */
    public static double[] random(long[] keys, int dim, long seed) {
        double[] y = new double[keys.length * dim];
        for (int i = 0; i < keys.length; i++) {
            for (int a = 0; a < dim; a++) {
                y[i * dim + a] = gaussian(seed, keys[i], a) * INIT_STD;
            }
        }
        return y;
    }

    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    /** SplitMix64's output function (Steele, Lea and Flood 2014): a bijective 64-bit mix. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * A standard normal value that is a pure function of (seed, key, axis): two counter-based SplitMix64 uniforms
     * from the state mix(seed ^ mix(key)), combined by Box-Muller with {@link StrictMath} (the same bits on every
     * JVM).
     */
    public static double gaussian(long seed, long key, int axis) {
        long base = mix(seed ^ mix(key));
        double u1 = ((mix(base + (2L * axis + 1) * GOLDEN) >>> 11) + 1) * 0x1.0p-53; // (0, 1]
        double u2 = (mix(base + (2L * axis + 2) * GOLDEN) >>> 11) * 0x1.0p-53; // [0, 1)
        return StrictMath.sqrt(-2 * StrictMath.log(u1)) * StrictMath.cos(2 * Math.PI * u2);
    }

    /**
     * The 64-bit key of an id value for {@link #random(long[], int, long)}: integral numbers are their value,
     * floating-point numbers the bits of their double value (-0.0 as 0.0), anything else (strings, decimals) the
     * 64-bit FNV-1a hash of its text's UTF-8 bytes.
     */
    public static long idKey(Object id) {
        if (id instanceof Long || id instanceof Integer || id instanceof Short || id instanceof Byte) {
            return ((Number) id).longValue();
        }
        if (id instanceof Double || id instanceof Float) {
            return Double.doubleToLongBits(((Number) id).doubleValue() + 0.0);
        }
        long h = 0xCBF29CE484222325L;
        for (byte b : String.valueOf(id).getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xFF)) * 0x100000001B3L;
        }
        return h;
    }

    /** {@link #idKey} of every id. */
    public static long[] idKeys(Object[] ids) {
        long[] keys = new long[ids.length];
        for (int i = 0; i < ids.length; i++) {
            keys[i] = idKey(ids[i]);
        }
        return keys;
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
