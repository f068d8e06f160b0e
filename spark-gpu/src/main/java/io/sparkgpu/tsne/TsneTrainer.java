package io.sparkgpu.tsne;

import io.sparkgpu.common.Features;
import io.sparkgpu.common.SchemaColumns;
import io.sparkgpu.common.SparkErrors;
import io.sparkgpu.tsne.affinity.JointProbabilities;
import io.sparkgpu.tsne.affinity.KnnGraph;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.affinity.TsneAffinities;
import io.sparkgpu.tsne.affinity.TsneAffinitiesSpark;
import io.sparkgpu.tsne.init.TsneInit;
import io.sparkgpu.tsne.optimize.SparkOptimizer;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * t-SNE on a DataFrame: input packing and validation, optional PCA, affinities, initialisation, the optimiser in
 * single-device or distributed mode ({@link TsneConfig#mode}), and quality on a seeded sample.
 *
 * <p><b>Rows and ids.</b> With an idCol (unique, not null), rows are numbered 0..n-1 by the rank of their id, and the
 * random initial positions are drawn from (seed, id) ({@link TsneInit#random(long[], int, long)}): the embedding is
 * then a function of the rows' content and ids, the seed and the parameters only, whatever the input's order and
 * partitioning. Without an idCol, a row's id is its position in the input (zipWithIndex), so the numbering, and with
 * it exact kNN ties and initial positions, follow the input order: set idCol when the order is not fixed. <b>PCA</b> (the optional reduction to pcaDimension and the "pca"
 * initialisation) is {@link TsneInit}'s: MLlib's, fitted on a seeded sample of at most {@link TsneInit#PCA_SAMPLE}
 * rows in one partition, so its result does not depend on the partitioning. The optimiser's mode is chosen and run
 * by {@link SparkOptimizer}.
 *
 * <p><b>Determinism.</b> The kNN graph and P do not depend on the partitioning, the optimiser's sums are exact, so
 * the same seed gives the same embedding bits for any partitioning and in both modes.
 */
public final class TsneTrainer {

    private static final Logger LOG = LoggerFactory.getLogger(TsneTrainer.class);

    /** Default size of the quality sample. */
    public static final int QUALITY_SAMPLE = 1000;

    /**
     * Setting {@code true|false} (default true): distributed mode runs all iterations in one barrier stage over the
     * cached P slices; false runs two Spark jobs per iteration (both: {@link SparkOptimizer}),
     * as does dynamic allocation or a cached slice that cannot be read. Both give the same bits.
     */
    public static final String DISTRIBUTED_STAGE = "spark.sparkgpu.tsne.distributedStage";

    private TsneTrainer() {
    }

    /**
     * t-SNE of the dense vectors in {@code featuresCol} (ml Vector or array of numbers), with
     * {@link TsneConfig#pcaDimension} and {@link TsneConfig#qualitySampleSize}. {@link TsneConfig#validate()} runs
     * here, {@link TsneConfig#validate(long)} once the rows are counted.
     *
     * @param idCol column identifying rows (unique, not null), or null for the row index
     */
    public static TsneFit fitFeatures(Dataset<?> df, String featuresCol, String idCol, TsneConfig given,
            TsneProgress progress) {
        given.validate();
        final TsneConfig cfg = given.copy(); // the fit may settle the backend (memory budget); the caller's stays
        final int pcaDimension = cfg.pcaDimension;
        final int qualitySample = cfg.qualitySampleSize;
        try {
            return withDescription(df, () -> features(df, featuresCol, idCol, pcaDimension, cfg, qualitySample, progress));
        } catch (Exception e) {
            throw SparkErrors.unwrap(e);
        }
    }

    /**
     * Stochastic-graph mode (SG-t-SNE, Pitsianis et al. 2019): the weighted edges (srcCol, dstCol, weightCol) are
     * used as P after symmetrisation and normalisation ({@link JointProbabilities#fromEdges}). Vertex ids (numbers or
     * strings) are numbered in ascending order. The "pca" initialisation needs features, so graphs start from the
     * seeded random initialisation. The edges are collected on the driver (O(edges) memory there).
     *
     * @param weightCol non-negative finite weights, or null for weight 1
     */
    public static TsneFit fitGraph(Dataset<?> df, String srcCol, String dstCol, String weightCol, TsneConfig given,
            TsneProgress progress) {
        given.validate();
        final TsneConfig cfg = given.copy(); // as in fitFeatures: the caller's config is never changed
        try {
            return withDescription(df, () -> graph(df, srcCol, dstCol, weightCol, cfg, progress));
        } catch (Exception e) {
            throw SparkErrors.unwrap(e);
        }
    }

    private interface Body {
        TsneFit run();
    }

    private static TsneFit withDescription(Dataset<?> df, Body body) {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(df.sparkSession().sparkContext());
        String old = jsc.getLocalProperty("spark.job.description");
        try {
            return body.run();
        } finally {
            jsc.setJobDescription(old);
        }
    }

    // ------------------------------------------------------------------ features

    /** One input row: its index, id and features. */
    static final class Point implements Serializable {
        private static final long serialVersionUID = 1L;
        final long index;
        final Object id;
        final double[] x;

        Point(long index, Object id, double[] x) {
            this.index = index;
            this.id = id;
            this.x = x;
        }
    }

    private static TsneFit features(Dataset<?> df, String featuresCol, String idCol, int pcaDimension, TsneConfig cfg,
            int qualitySample, TsneProgress progress) {
        long start = System.nanoTime();
        TsneTimings timings = new TsneTimings();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(df.sparkSession().sparkContext());
        StructType schema = df.schema();
        int fIdx = Features.checkFeatures(schema, featuresCol);
        int iIdx = idCol == null ? -1 : SchemaColumns.index(schema, idCol, "idCol");
        DataType idType = iIdx < 0 ? DataTypes.LongType : schema.fields()[iIdx].dataType();
        jsc.setJobDescription("spark-gpu t-SNE: pack and validate " + featuresCol);
        JavaRDD<Point> points = numbered(df.toDF(), iIdx < 0 ? null : idColumn(idCol)).map(t -> {
            Row r = t._1();
            Object id = t._2();
            if (iIdx >= 0) {
                if (r.isNullAt(iIdx)) {
                    throw new IllegalArgumentException("idCol '" + idCol + "' contains a null value");
                }
                id = r.get(iIdx);
            }
            double[] x = Features.read(r, fIdx, featuresCol);
            for (int a = 0; a < x.length; a++) {
                if (!Double.isFinite(x[a])) {
                    throw new IllegalArgumentException("featuresCol '" + featuresCol + "' contains " + x[a]
                            + " (" + (iIdx >= 0 ? "id " + id : "row " + t._2()) + ", index " + a
                            + "); t-SNE needs finite features");
                }
                x[a] += 0.0;
            }
            return new Point(t._2(), id, x);
        }).persist(StorageLevel.MEMORY_AND_DISK());
        try {
            long[] shape = points.map(p -> new long[] {1, p.x.length, p.x.length})
                    .fold(new long[] {0, Long.MAX_VALUE, 0}, (a, b) -> new long[] {a[0] + b[0], Math.min(a[1], b[1]),
                        Math.max(a[2], b[2])});
            long n = shape[0];
            if (n > 0 && shape[1] != shape[2]) {
                throw new IllegalArgumentException("featuresCol '" + featuresCol + "' has vectors of different sizes ("
                        + shape[1] + " and " + shape[2] + ")");
            }
            if (n > 0 && shape[1] == 0) {
                throw new IllegalArgumentException("featuresCol '" + featuresCol + "' contains empty vectors");
            }
            cfg.validate(n);
            if (n > Integer.MAX_VALUE / 4) {
                throw new IllegalArgumentException("t-SNE supports at most " + Integer.MAX_VALUE / 4 + " rows, got " + n);
            }
            if (iIdx >= 0) {
                checkUniqueIds(df.toDF(), idCol);
            }
            int d = (int) shape[1];
            final int inputDim = d;
            double[] pcaBasis = null;
            if (pcaDimension > 0 && pcaDimension < d) {
                jsc.setJobDescription("spark-gpu t-SNE: PCA to " + pcaDimension + " dimensions");
                double[][] sample = sample(points, n, TsneInit.PCA_SAMPLE, cfg.seed);
                double[] pc = TsneInit.principalComponents(jsc, sample, pcaDimension);
                pcaBasis = pc;
                Broadcast<double[]> bpc = jsc.broadcast(pc);
                final int dIn = d;
                JavaRDD<Point> reduced = points.map(p -> new Point(p.index, p.id, TsneInit.project(p.x, bpc.value(), dIn,
                        pcaDimension))).persist(StorageLevel.MEMORY_AND_DISK());
                reduced.count();
                points.unpersist(false);
                points = reduced;
                d = pcaDimension;
            }
            // the device-memory budget: the fit cannot be chunked, so over it auto runs on the CPU twin (issue 18)
            cfg.backend = TsneDeviceBudget.backendFor(cfg, n, d, jsc.sc().isLocal());
            final int dim = cfg.dimension;
            final int nn = (int) n;
            // without an id column a row's id is its index (zipWithIndex): no job needed to collect them
            Object[] ids = iIdx < 0 ? indexIds(nn) : ids(points, nn);
            double[] y0 = initialize(jsc, points, TsneInit.idKeys(ids), d, cfg);
            long entries = 2L * n * cfg.effectiveK(n) + n * (long) (dim + d);
            boolean single = TsneConfig.MODE_SINGLE.equals(cfg.mode)
                    || (TsneConfig.MODE_AUTO.equals(cfg.mode) && (entries <= cfg.singleModeMaxEntries
                            || cfg.knnProbes > 0)); // the approximate kNN is a single-device option
            TsneResult r;
            float[] x = null;
            if (single) {
                checkSingleModeSize(n, d, featuresCol);
                x = gatherFeatures(jsc, points, nn, d);
                timings.add(TsneTimings.Phase.PREPARE, System.nanoTime() - start);
                SparseRows p = affinities(x, nn, d, cfg, timings, featuresCol);
                r = SparkOptimizer.runSingle(jsc, p, y0, cfg, timings, progress);
            } else {
                timings.add(TsneTimings.Phase.PREPARE, System.nanoTime() - start);
                r = distributedFromFeatures(df.sparkSession(), jsc, points, nn, d, y0, cfg, timings, progress);
            }

            double trust = Double.NaN;
            double keep = Double.NaN;
            int m = (int) Math.min(n, qualitySample);
            int qk = Math.min(10, (m - 1) / 3);
            if (m >= 4 && qk >= 1) {
                jsc.setJobDescription("spark-gpu t-SNE: quality on a sample of " + m);
                int[] idx = sampleIndices(nn, m, cfg.seed ^ 0x5DEECE66DL);
                double[][] sx = sample(points, idx);
                double[] xs = new double[m * d];
                double[] ys = new double[m * dim];
                for (int s = 0; s < m; s++) {
                    for (int a = 0; a < d; a++) {
                        xs[s * d + a] = (float) sx[s][a]; // the float values the kNN used
                    }
                    System.arraycopy(r.embedding, idx[s] * dim, ys, s * dim, dim);
                }
                trust = TsneQuality.trustworthiness(xs, d, ys, dim, m, qk);
                keep = TsneQuality.knnPreservation(xs, d, ys, dim, m, qk);
            } else {
                m = 0;
                qk = 0;
            }
            r.timings.add(TsneTimings.Phase.TOTAL, System.nanoTime() - start - r.timings.nanos(TsneTimings.Phase.TOTAL));
            LOG.info("spark-gpu t-SNE done: n={} KL={} (exact: {}), on a sample of {} points (k={}): trustworthiness={} "
                    + "kNN preservation={}; timings: {}", n, r.finalKl(), cfg.exactFinalKl(n), m, qk, trust, keep,
                    r.timings);
            if (x == null) { // distributed mode: the reference for new rows is gathered once, at the end
                x = gatherFeatures(jsc, points, nn, d);
            }
            TsneReference ref = new TsneReference(x, nn, d, inputDim, pcaBasis, cfg.perplexity, cfg.effectiveK(n));
            return new TsneFit(r, ids, idType, d, trust, keep, m, qk, "features", cfg.effectiveLearningRate(n),
                    cfg.backend.id(), ref);
        } finally {
            points.unpersist(false);
        }
    }

    /**
     * The rows with their index 0..n-1: the rank of their id when {@code id} is set (ids are unique, so the order is
     * total and the numbering, hence kNN tie-breaking, sampling and every later step, does not depend on the input's
     * order or partitioning), else their position in the input (zipWithIndex).
     */
    private static JavaRDD<Tuple2<Row, Long>> numbered(Dataset<Row> df, Column id) {
        // range-partitioned into the input's number of partitions (which the distributed mode works in), sorted
        Dataset<Row> ordered = id == null ? df
                : df.repartitionByRange(Math.max(1, df.rdd().getNumPartitions()), id).sortWithinPartitions(id);
        return ordered.javaRDD().zipWithIndex().map(t -> t);
    }

    private static Column idColumn(String idCol) {
        return functions.col("`" + idCol.replace("`", "``") + "`");
    }

    /**
     * The ids must be unique (under SQL equality, so 0.0 and -0.0 or two NaNs are one id): the model looks rows up
     * by id and the rows are numbered by id. The error names the column and one repeated value.
     */
    static void checkUniqueIds(Dataset<Row> df, String idCol) {
        Column id = idColumn(idCol);
        List<Row> dup = df.where(id.isNotNull()).groupBy(id).count().where(functions.col("count").gt(1)).limit(1)
                .collectAsList();
        if (!dup.isEmpty()) {
            throw new IllegalArgumentException("idCol '" + idCol + "' must identify rows (unique values), got "
                    + dup.get(0).get(0) + " " + dup.get(0).getLong(1) + " times");
        }
    }

    /** kNN, conditional P and symmetrisation, timed; rows with all k neighbours at distance 0 are an error. */
    static SparseRows affinities(float[] x, int n, int d, TsneConfig cfg, TsneTimings timings, String featuresCol) {
        int k = cfg.effectiveK(n);
        long t0 = System.nanoTime();
        KnnGraph g = cfg.knnProbes > 0
                ? TsneAffinities.knnApproximate(x, n, d, k, cfg.knnProbes, cfg.backend, timings.backends())
                : TsneAffinities.knn(x, n, d, k, cfg.backend, timings.backends());
        long t1 = System.nanoTime();
        timings.add(TsneTimings.Phase.KNN, t1 - t0);
        checkDuplicates(g, featuresCol);
        SparseRows p = TsneAffinities.joint(g, cfg.perplexity, cfg.backend, timings.backends());
        timings.add(TsneTimings.Phase.AFFINITIES, System.nanoTime() - t1);
        return p;
    }

    /** Duplicates are fine unless a point has k or more copies: its affinities are then not defined. */
    static void checkDuplicates(KnnGraph g, String featuresCol) {
        for (int r = 0; r < g.rows; r++) {
            if (g.dist2[r * g.k + g.k - 1] == 0f) {
                throw new IllegalArgumentException("featuresCol '" + featuresCol + "': row " + (g.rowOffset + r)
                        + " has at least k=" + g.k + " duplicate points (all its neighbours are at distance 0), so "
                        + "its perplexity cannot be calibrated; remove duplicate rows (e.g. dropDuplicates) or raise k");
            }
        }
    }

    /** The most feature values (n x d) single mode holds in one driver array. */
    static final long SINGLE_MODE_MAX_VALUES = Integer.MAX_VALUE - 8;

    /**
     * Single mode gathers the n x d features into one array on the driver: refused up front, naming the column and
     * the limit, when they do not fit (an int overflow used to surface as a NegativeArraySizeException).
     */
    static void checkSingleModeSize(long n, int d, String featuresCol) {
        if (n * d > SINGLE_MODE_MAX_VALUES) {
            throw new IllegalArgumentException("featuresCol '" + featuresCol + "': " + n + " rows x " + d
                    + " dimensions = " + n * d + " values, more than single mode's " + SINGLE_MODE_MAX_VALUES
                    + " on the driver; use mode=distributed, or reduce the dimensions with pcaDimension");
        }
    }

    /** Row-major n x d floats of all points (driver). */
    private static float[] gatherFeatures(JavaSparkContext jsc, JavaRDD<Point> points, int n, int d) {
        jsc.setJobDescription("spark-gpu t-SNE: gather " + n + " x " + d + " features");
        List<Object[]> blocks = points.mapPartitions((Iterator<Point> it) -> {
            List<Point> ps = new ArrayList<>();
            it.forEachRemaining(ps::add);
            if (ps.isEmpty()) {
                return java.util.Collections.<Object[]>emptyIterator();
            }
            float[] xs = new float[ps.size() * d];
            for (int i = 0; i < ps.size(); i++) {
                double[] v = ps.get(i).x;
                for (int a = 0; a < d; a++) {
                    xs[i * d + a] = (float) v[a];
                }
            }
            return List.<Object[]>of(new Object[] {ps.get(0).index, xs}).iterator();
        }).collect();
        float[] x = new float[n * d];
        for (Object[] b : blocks) {
            float[] xs = (float[]) b[1];
            System.arraycopy(xs, 0, x, (int) (long) (Long) b[0] * d, xs.length);
        }
        return x;
    }

    /** The ids 0..n-1 as Longs, as {@link #ids} collects them when the rows have no id column. */
    private static Object[] indexIds(int n) {
        Object[] ids = new Object[n];
        for (int i = 0; i < n; i++) {
            ids[i] = (long) i;
        }
        return ids;
    }

    private static Object[] ids(JavaRDD<Point> points, int n) {
        Object[] ids = new Object[n];
        for (Object[] b : points.mapPartitions((Iterator<Point> it) -> {
            List<Object[]> out = new ArrayList<>();
            it.forEachRemaining(p -> out.add(new Object[] {p.index, p.id}));
            return out.iterator();
        }).collect()) {
            ids[(int) (long) (Long) b[0]] = b[1];
        }
        return ids;
    }

    /** m distinct indices of 0..n-1 chosen with the seed, ascending (all of them when m >= n). */
    public static int[] sampleIndices(int n, int m, long seed) {
        if (m >= n) {
            int[] all = new int[n];
            for (int i = 0; i < n; i++) {
                all[i] = i;
            }
            return all;
        }
        Random rnd = new Random(seed);
        TreeSet<Integer> chosen = new TreeSet<>();
        for (int j = n - m; j < n; j++) { // Floyd's algorithm
            int t = rnd.nextInt(j + 1);
            if (!chosen.add(t)) {
                chosen.add(j);
            }
        }
        return chosen.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The features of a seeded sample of at most m rows, in row order. */
    private static double[][] sample(JavaRDD<Point> points, long n, int m, long seed) {
        return sample(points, sampleIndices((int) n, m, seed));
    }

    /** The features of the rows idx (ascending), in that order. */
    private static double[][] sample(JavaRDD<Point> points, int[] idx) {
        Broadcast<int[]> b = JavaSparkContext.fromSparkContext(points.context()).broadcast(idx);
        List<Point> ps = new ArrayList<>(points.filter(p -> Arrays.binarySearch(b.value(), (int) p.index) >= 0).collect());
        b.destroy();
        ps.sort((a, c) -> Long.compare(a.index, c.index));
        double[][] out = new double[ps.size()][];
        for (int i = 0; i < out.length; i++) {
            out[i] = ps.get(i).x;
        }
        return out;
    }

    /** Starting positions (n x dim) of {@link TsneInit#initialize}; the PCA sample is drawn only for "pca". */
    private static double[] initialize(JavaSparkContext jsc, JavaRDD<Point> points, long[] keys, int d, TsneConfig cfg) {
        int n = keys.length;
        return TsneInit.initialize(jsc, cfg.init, keys, d, cfg.dimension, cfg.seed,
                () -> sample(points, n, TsneInit.PCA_SAMPLE, cfg.seed), points.mapToPair(p -> new Tuple2<>(p.index, p.x)));
    }

    // ------------------------------------------------------------------ graph

    private static TsneFit graph(Dataset<?> df, String srcCol, String dstCol, String weightCol, TsneConfig cfg,
            TsneProgress progress) {
        long start = System.nanoTime();
        TsneTimings timings = new TsneTimings();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(df.sparkSession().sparkContext());
        StructType schema = df.schema();
        DataType idType = vertexType(schema, srcCol, "srcCol");
        DataType dstType = vertexType(schema, dstCol, "dstCol");
        if (!idType.equals(dstType)) {
            throw new IllegalArgumentException("srcCol '" + srcCol + "' (" + idType.simpleString() + ") and dstCol '"
                    + dstCol + "' (" + dstType.simpleString() + ") must have the same type");
        }
        if (weightCol != null) {
            SchemaColumns.numeric(schema, weightCol, "weightCol");
        }
        jsc.setJobDescription("spark-gpu t-SNE: collect graph edges");
        Dataset<Row> sel = weightCol == null ? df.select(srcCol, dstCol) : df.select(srcCol, dstCol, weightCol);
        List<Row> edges = sel.collectAsList();
        TreeSet<Object> vertices = new TreeSet<>();
        for (Row e : edges) {
            for (int c = 0; c < 2; c++) {
                if (e.isNullAt(c)) {
                    throw new IllegalArgumentException((c == 0 ? "srcCol '" + srcCol : "dstCol '" + dstCol)
                            + "' contains a null value");
                }
                vertices.add(vertexKey(e.get(c)));
            }
        }
        int n = vertices.size();
        try {
            TsneConfig.checkPoints(n);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " graph vertices", e);
        }
        Object[] ids = new Object[n];
        Map<Object, Integer> index = new HashMap<>();
        int t = 0;
        for (Object v : vertices) {
            index.put(v, t);
            ids[t++] = v;
        }
        int[] src = new int[edges.size()];
        int[] dst = new int[edges.size()];
        double[] w = new double[edges.size()];
        for (int e = 0; e < edges.size(); e++) {
            Row row = edges.get(e);
            src[e] = index.get(vertexKey(row.get(0)));
            dst[e] = index.get(vertexKey(row.get(1)));
            if (weightCol == null) {
                w[e] = 1.0;
            } else {
                if (row.isNullAt(2)) {
                    throw new IllegalArgumentException("weightCol '" + weightCol + "' contains a null value");
                }
                w[e] = ((Number) row.get(2)).doubleValue();
                if (!Double.isFinite(w[e]) || w[e] < 0) {
                    throw new IllegalArgumentException("weightCol '" + weightCol + "' must hold finite weights >= 0, "
                            + "found " + w[e] + " on edge " + ids[src[e]] + " -> " + ids[dst[e]]);
                }
            }
        }
        timings.add(TsneTimings.Phase.PREPARE, System.nanoTime() - start);
        long t0 = System.nanoTime();
        SparseRows p = JointProbabilities.fromEdges(n, src, dst, w);
        timings.add(TsneTimings.Phase.AFFINITIES, System.nanoTime() - t0);
        cfg.backend = TsneDeviceBudget.backendFor(cfg, n, 0, jsc.sc().isLocal()); // the budget, as for features
        double[] y0 = TsneInit.random(TsneInit.idKeys(ids), cfg.dimension, cfg.seed);
        int parts = Math.max(1, df.rdd().getNumPartitions());
        TsneResult r = SparkOptimizer.optimize(jsc, p, y0, cfg, timings, parts, 0, progress);
        r.timings.add(TsneTimings.Phase.TOTAL, System.nanoTime() - start - r.timings.nanos(TsneTimings.Phase.TOTAL));
        return new TsneFit(r, ids, idType, 0, Double.NaN, Double.NaN, 0, 0, "graph", cfg.effectiveLearningRate(n),
                cfg.backend.id());
    }

    private static DataType vertexType(StructType schema, String col, String param) {
        DataType type = schema.fields()[SchemaColumns.index(schema, col, param)].dataType();
        if (!(type instanceof StringType) && !type.equals(DataTypes.LongType) && !type.equals(DataTypes.IntegerType)) {
            throw new IllegalArgumentException(param + " '" + col + "' must be a string, int or long column, but has type "
                    + type.simpleString());
        }
        return type;
    }

    private static Object vertexKey(Object v) {
        return v instanceof Integer ? v : v instanceof Long ? v : v.toString();
    }

    /**
     * Distributed affinities ({@link TsneAffinitiesSpark}: kNN by broadcast or block pairs, conditional P per
     * partition, symmetrisation by a shuffle; timed as one phase, under kNN) on the rows' (reduced) features, then
     * the distributed optimiser on the resulting slices, which stay on the executors.
     */
    private static TsneResult distributedFromFeatures(org.apache.spark.sql.SparkSession spark, JavaSparkContext jsc,
            JavaRDD<Point> points, int n, int d, double[] y0, TsneConfig cfg, TsneTimings timings,
            TsneProgress progress) {
        if (cfg.knnProbes > 0) {
            throw new IllegalArgumentException("knnProbes=" + cfg.knnProbes + " (the approximate kNN) runs in the "
                    + "single-device mode, not in mode=distributed; set mode to single or auto, or knnProbes to 0");
        }
        jsc.setJobDescription("spark-gpu t-SNE: distributed kNN and affinities of " + n + " points");
        long t0 = System.nanoTime();
        StructType schema = new StructType().add("features", org.apache.spark.ml.linalg.SQLDataTypes.VectorType(),
                false);
        Dataset<Row> frame = spark.createDataFrame(points.map(p -> org.apache.spark.sql.RowFactory.create(
                org.apache.spark.ml.linalg.Vectors.dense(p.x))), schema);
        TsneAffinitiesSpark.Result aff = TsneAffinitiesSpark.fromVectors(frame, "features", cfg.perplexity,
                cfg.effectiveK(n), cfg.backend, TsneAffinitiesSpark.DEFAULT_BROADCAST_BYTES);
        timings.add(TsneTimings.Phase.KNN, System.nanoTime() - t0);
        timings.backends().merge(aff.usage);
        try {
            if (aff.n != n) {
                throw new IllegalStateException("affinities cover " + aff.n + " rows, expected " + n);
            }
            return SparkOptimizer.runDistributed(jsc, aff.rows, n, y0, cfg, timings, progress);
        } finally {
            aff.unpersist();
        }
    }

    /** Whether a numeric or string column type can hold ids. */
    static boolean isIdType(DataType t) {
        return t instanceof NumericType || t instanceof StringType;
    }
}
