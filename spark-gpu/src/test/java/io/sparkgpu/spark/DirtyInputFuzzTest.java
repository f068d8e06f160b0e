package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.pde.GpuFitzHughNagumo;
import io.sparkgpu.scan.GpuScanModel;
import io.sparkgpu.scan.GpuScanStatistic;
import io.sparkgpu.scan.ScanCluster;
import io.sparkgpu.sort.GpuSort;
import io.sparkgpu.spline.GpuMonotoneCdf;
import io.sparkgpu.spline.GpuMonotoneSpline;
import io.sparkgpu.testutil.SparkTestSession;
import io.sparkgpu.tsne.GpuTsne;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 18 item 8: property-based fuzzing of every estimator (and the SQL functions that take raw numbers) with
 * seeded random dirty inputs: NaN, +-Inf, huge and tiny magnitudes, subnormals, -0.0, negative and zero weights,
 * nulls, duplicates and empty partitions. The property: a valid result (finite, ordered as the capability promises)
 * or an {@link IllegalArgumentException} at the top (no Spark task-failure wrapper) whose message names one of the
 * input's columns or settings; never another exception, and never a hang (the class has a time limit). Each case
 * prints its seed on failure. Few, small cases on local[2] with the CPU backend, to stay cheap.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DirtyInputFuzzTest {
    private static final int CASES = 4;
    private static final double[] DIRTY = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1e308,
        -1e308, Double.MAX_VALUE, 1e-300, Double.MIN_VALUE, Double.MIN_NORMAL / 3, -0.0, 0.0, 1e154, -1e-320};

    /** A clean value most of the time, else a dirty one (dirtiness grows with the case number). */
    private static Double value(Random r, int c, double clean) {
        double p = 0.02 + 0.05 * c;
        if (r.nextDouble() < p / 4) {
            return null;
        }
        return r.nextDouble() < p ? DIRTY[r.nextInt(DIRTY.length)] : clean;
    }

    private static Double weight(Random r, int c) {
        double u = r.nextDouble();
        if (u < 0.03 * c) {
            return r.nextBoolean() ? 0.0 : -r.nextDouble();
        }
        Double v = value(r, c, 0.5 + r.nextInt(4));
        return v;
    }

    /**
     * The rows in a seeded number of partitions (some empty), with a few exact duplicates. Null-free columns
     * are declared nullable so that nulls reach the estimators' own checks.
     */
    private static Dataset<Row> frame(Random r, List<Row> rows, StructType schema) {
        List<Row> all = new ArrayList<>(rows);
        for (int i = 0; i < 3 && !rows.isEmpty(); i++) {
            all.add(rows.get(r.nextInt(rows.size())));
        }
        java.util.Collections.shuffle(all, r);
        SparkSession spark = SparkTestSession.get();
        int parts = 1 + r.nextInt(6); // with the small inputs, some partitions are empty
        return spark.createDataFrame(JavaSparkContext.fromSparkContext(spark.sparkContext()).parallelize(all, parts),
                schema);
    }

    /**
     * Runs {@code fit} on CASES seeded dirty frames: each must give a result that {@code valid} accepts, or an
     * IllegalArgumentException naming one of {@code names}. Estimators throw it at the top; a lazy surface
     * (a transform or SQL function, failing inside a Spark job on collect) may throw Spark's job failure, whose own
     * message must then carry the IllegalArgumentException's.
     */
    private static <T> void fuzz(String what, long seed, boolean lazy, Function<Random, Dataset<Row>> data,
            Function<Dataset<Row>, T> fit, Consumer<T> valid, String... names) {
        for (int c = 0; c < CASES; c++) {
            long s = seed * 1000 + c;
            Random r = new Random(s);
            Dataset<Row> df = data.apply(r);
            T result;
            try {
                result = fit.apply(df);
            } catch (Exception e) { // SparkException is checked, thrown undeclared
                IllegalArgumentException iae = e instanceof IllegalArgumentException ? (IllegalArgumentException) e
                        : lazy ? cause(e) : null;
                if (iae == null || !String.valueOf(e.getMessage()).contains(String.valueOf(iae.getMessage()))) {
                    fail(what + " (seed " + s + "): " + e.getClass().getName() + " instead of a result or an "
                            + "IllegalArgumentException" + (lazy ? " (in its message)" : ""), e);
                }
                String m = String.valueOf(iae.getMessage());
                boolean named = false;
                for (String n : names) {
                    named |= m.contains(n);
                }
                assertTrue(named, what + " (seed " + s + "): the error names none of " + List.of(names) + ": " + m);
                assertTrue(m.length() < 1000 && !m.contains("\tat "), what + " (seed " + s + "): " + m);
                continue;
            } catch (Throwable t) {
                fail(what + " (seed " + s + "): " + t.getClass().getName() + " instead of a result or an "
                        + "IllegalArgumentException", t);
                return;
            }
            try {
                valid.accept(result);
            } catch (AssertionError e) {
                throw new AssertionError(what + " (seed " + s + "): invalid result: " + e.getMessage(), e);
            }
        }
    }

    private static IllegalArgumentException cause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof IllegalArgumentException) {
                return (IllegalArgumentException) c;
            }
        }
        return null;
    }

    private static void finite(double[] v, String what) {
        for (double x : v) {
            assertTrue(Double.isFinite(x), what + " holds " + x);
        }
    }

    private static final StructType VW = new StructType().add("features", SQLDataTypes.VectorType())
            .add("w", DataTypes.DoubleType);

    private static Dataset<Row> vectors(Random r, int n, int d, boolean weights) {
        List<Row> rows = new ArrayList<>();
        int c = r.nextInt(CASES);
        for (int i = 0; i < n; i++) {
            if (r.nextDouble() < 0.02 * c) {
                rows.add(RowFactory.create(null, 1.0));
                continue;
            }
            double[] x = new double[d];
            for (int a = 0; a < d; a++) {
                Double v = value(r, c, (i % 3) * 5 + r.nextGaussian());
                x[a] = v == null ? Double.NaN : v;
            }
            rows.add(RowFactory.create(Vectors.dense(x), weights ? weight(r, c) : (Object) 1.0));
        }
        return frame(r, rows, VW);
    }

    @Test
    void kMeans() {
        fuzz("k-means", 1, false, r -> vectors(r, 40, 2, true), df -> new GpuKMeans().setK(3).setWeightCol("w").setSeed(1L)
                .setMaxIter(5).setBackend("cpu").fit(df), m -> {
                    assertEquals(3, m.clusterCentersArray().length);
                    for (double[] c : m.clusterCentersArray()) {
                        finite(c, "a centre");
                    }
                }, "featuresCol 'features'", "weightCol 'w'", "k=");
        fuzz("k-means, k beyond any limit", 2, false, r -> vectors(r, 10, 2, false),
                df -> new GpuKMeans().setK(Integer.MAX_VALUE).setBackend("cpu").fit(df), m -> fail("k=2^31-1 fitted"),
                "featuresCol 'features'", "k=");
    }

    /** Zero total weight has no weighted mean: refused up front, naming the weight column (issue 18 item 4). */
    @Test
    void zeroTotalWeight() {
        SparkSession spark = SparkTestSession.get();
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            rows.add(RowFactory.create(Vectors.dense(i, i % 3), 0.0));
        }
        Dataset<Row> df = spark.createDataFrame(rows, VW);
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> new GpuKMeans().setK(2).setWeightCol("w").setBackend("cpu").fit(df));
        assertTrue(e.getMessage().contains("weightCol 'w'"), e.getMessage());
    }

    /**
     * Finite values too large for the exact accumulators (issue 18 item 4): a result, or an error naming the
     * column, never the accumulator's own "fixed-point bound" message.
     */
    @Test
    void hugeFiniteValues() {
        SparkSession spark = SparkTestSession.get();
        for (double big : new double[] {1e154, 1e300, Double.MAX_VALUE}) {
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                rows.add(RowFactory.create(Vectors.dense(i == 5 ? big : i, i % 3), 1.0));
            }
            Dataset<Row> df = spark.createDataFrame(rows, VW);
            try {
                for (double[] c : new GpuKMeans().setK(2).setWeightCol("w").setBackend("cpu").fit(df)
                        .clusterCentersArray()) {
                    finite(c, "a centre");
                }
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage().contains("featuresCol 'features'"), big + ": " + e.getMessage());
            }
        }
    }

    @Test
    void isotonic() {
        StructType schema = new StructType().add("label", DataTypes.DoubleType).add("features", DataTypes.DoubleType)
                .add("w", DataTypes.DoubleType);
        fuzz("isotonic", 3, false, r -> {
            int c = r.nextInt(CASES);
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                rows.add(RowFactory.create(value(r, c, r.nextGaussian() + i * 0.1), value(r, c, (double) r.nextInt(10)),
                        weight(r, c)));
            }
            return frame(r, rows, schema);
        }, df -> new GpuIsotonicRegression().setWeightCol("w").setBackend("cpu").fit(df),
                (GpuIsotonicRegressionModel m) -> {
                    double[] b = m.boundaryArray();
                    double[] p = m.predictionArray();
                    finite(b, "boundaries");
                    finite(p, "predictions");
                    for (int i = 1; i < b.length; i++) {
                        assertTrue(b[i - 1] <= b[i] && p[i - 1] <= p[i], "boundaries and predictions sorted");
                    }
                }, "labelCol 'label'", "featuresCol 'features'", "weightCol 'w'");
    }

    @Test
    void scan() {
        StructType schema = new StructType().add("x", DataTypes.IntegerType).add("cases", DataTypes.DoubleType)
                .add("pop", DataTypes.DoubleType);
        fuzz("scan", 4, false, r -> {
            int c = r.nextInt(CASES);
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < 25; i++) {
                rows.add(RowFactory.create(r.nextDouble() < 0.01 * c ? null : r.nextInt(12),
                        value(r, c, (double) r.nextInt(6)), weight(r, c)));
            }
            return frame(r, rows, schema);
        }, df -> new GpuScanStatistic().setCoordinateCols("x").setCasesCol("cases").setBaselineCol("pop")
                .setNumReplicas(3).setSeed(2).setBackend("cpu").fit(df), (GpuScanModel m) -> {
                    for (ScanCluster k : m.clusters()) {
                        assertTrue(Double.isFinite(k.llr()) && k.llr() >= 0, "LLR " + k.llr());
                    }
                    finite(m.replicaLlrs(), "replica LLRs");
                }, "coordinateCols", "'x'", "casesCol 'cases'", "baselineCol 'pop'", "cases", "pop");
    }

    @Test
    void tsne() {
        StructType schema = new StructType().add("id", DataTypes.LongType).add("features", SQLDataTypes.VectorType());
        fuzz("t-SNE", 5, false, r -> {
            int c = r.nextInt(CASES);
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < 24; i++) {
                Double v = value(r, c, r.nextGaussian());
                rows.add(RowFactory.create(r.nextDouble() < 0.01 * c ? null : (long) (r.nextDouble() < 0.02 * c ? 0 : i),
                        Vectors.dense(v == null ? Double.NaN : v, i % 5, r.nextGaussian())));
            }
            return frame(r, rows, schema);
        }, df -> new GpuTsne().setIdCol("id").setPerplexity(3).setMaxIter(6).setExaggerationIterations(3)
                .setInit("random").setQualitySampleSize(0).setBackend("cpu").fit(df),
                m -> finite(m.embeddingArray(), "the embedding"), "featuresCol 'features'", "idCol 'id'");
    }

    @Test
    void splineAndCdf() {
        StructType schema = new StructType().add("x", DataTypes.DoubleType).add("y", DataTypes.DoubleType)
                .add("w", DataTypes.DoubleType);
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> probe = spark.createDataFrame(List.of(RowFactory.create(-1.0), RowFactory.create(3.5),
                RowFactory.create(1e300)), new StructType().add("x", DataTypes.DoubleType));
        Function<Random, Dataset<Row>> data = r -> {
            int c = r.nextInt(CASES);
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                rows.add(RowFactory.create(value(r, c, i * 0.5), value(r, c, i * 0.25 + (r.nextInt(8) == 0 ? -1 : 0)),
                        weight(r, c)));
            }
            return frame(r, rows, schema);
        };
        fuzz("spline", 6, true, data, df -> new GpuMonotoneSpline().setWeightCol("w").setBackend("cpu").fit(df)
                .transform(probe).collectAsList(), rows -> {
                    for (Row row : rows) {
                        assertTrue(Double.isFinite(row.getDouble(1)), "spline value " + row);
                    }
                }, "xCol 'x'", "yCol 'y'", "'w'", "x ", "y ", "w ", "x[", "y[", "w[");
        fuzz("CDF", 7, true, data, df -> new GpuMonotoneCdf().setInputCol("x").setWeightCol("w").setNumKnots(6)
                .setBackend("cpu").fit(df).transform(probe).collectAsList(), rows -> {
                    for (Row row : rows) {
                        double p = row.getDouble(1);
                        assertTrue(p >= 0 && p <= 1, "CDF value " + row);
                    }
                }, "x ", "w ", "'x'", "'w'", "x[");
    }

    @Test
    void sort() {
        StructType schema = new StructType().add("key", DataTypes.DoubleType).add("i", DataTypes.IntegerType);
        fuzz("sort", 8, true, r -> {
            int c = r.nextInt(CASES);
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                rows.add(RowFactory.create(value(r, c, r.nextGaussian() * 1e3), i));
            }
            return frame(r, rows, schema);
        }, df -> {
            long n = df.count();
            List<Row> out = GpuSort.sort(df, "key").collectAsList();
            assertEquals(n, out.size(), "every row, once");
            return out;
        }, out -> {
            for (int i = 1; i < out.size(); i++) {
                Row a = out.get(i - 1);
                Row b = out.get(i);
                if (!a.isNullAt(0) && !b.isNullAt(0)) { // Spark's order: NaN largest, -0.0 == 0.0
                    assertTrue(Double.compare(a.getDouble(0) + 0.0, b.getDouble(0) + 0.0) <= 0, a + " before " + b);
                }
            }
        }, "key");
    }

    @Test
    void fhnSweep() {
        StructType schema = new StructType().add("a", DataTypes.DoubleType).add("I", DataTypes.DoubleType);
        fuzz("FHN sweep", 9, true, r -> {
            int c = r.nextInt(CASES);
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                rows.add(RowFactory.create(value(r, c, 0.1), value(r, c, 0.05 * i)));
            }
            return frame(r, rows, schema);
        }, df -> new GpuFitzHughNagumo().setCells(11).setLength(5).setDt(0.05).setTEnd(0.5).setBackend("cpu")
                .transform(df).collectAsList(), rows -> {
                    for (Row row : rows) {
                        assertTrue(Double.isFinite(row.getDouble(row.fieldIndex("maxV"))), "maxV of " + row);
                    }
                }, "'a'", "'I'", "a ", "I ");
    }

    @Test
    void scanSqlFunctions() {
        SparkSession spark = SparkTestSession.get();
        StructType schema = new StructType().add("c", DataTypes.DoubleType).add("b", DataTypes.DoubleType)
                .add("tc", DataTypes.DoubleType).add("tb", DataTypes.DoubleType);
        for (String stat : new String[] {"poisson", "bernoulli", "ebp"}) {
            fuzz("sparkgpu_scan_llr " + stat, 10, true, r -> {
                int c = r.nextInt(CASES);
                List<Row> rows = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    double tb = 100 + r.nextInt(100);
                    double b = r.nextInt(50);
                    rows.add(RowFactory.create(value(r, c, (double) r.nextInt(10)), value(r, c, b),
                            value(r, c, 20.0), value(r, c, tb)));
                }
                return frame(r, rows, schema);
            }, df -> df.selectExpr("sparkgpu_scan_llr(c, b, tc, tb, '" + stat + "') AS llr").collectAsList(), rows -> {
                for (Row row : rows) {
                    assertTrue(row.isNullAt(0) || (Double.isFinite(row.getDouble(0)) && row.getDouble(0) >= 0),
                            "LLR " + row);
                }
            }, "cases", "baseline", "total_cases", "total_baseline");
        }
    }

    /**
     * Wrong column types for every column setting of every estimator (a string where a number is expected, a scalar
     * or an array of strings where a vector is, a vector where a scalar is, maps and structs): refused at the top with
     * an IllegalArgumentException naming the setting's column and the type it needs, before any Spark job. GpuSort
     * may also sort the column (Spark orders structs and arrays), but must then keep every row.
     */
    @Test
    void wrongColumnTypes() {
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> df = spark.range(12).selectExpr("CAST(id AS STRING) AS s", "CAST(id AS DOUBLE) AS d",
                "CAST(id % 3 AS INT) AS i", "id % 2 = 0 AS b", "array(CAST(id AS DOUBLE), 1.0D) AS arr",
                "array(CAST(id AS STRING)) AS arrs", "map('k', CAST(id AS DOUBLE)) AS m",
                "named_struct('x', CAST(id AS DOUBLE)) AS st", "TIMESTAMP'2024-01-01 00:00:00' AS ts", "id")
                .withColumn("vec", org.apache.spark.ml.functions.array_to_vector(
                        org.apache.spark.sql.functions.col("arr")));
        List<String> failures = new ArrayList<>();
        String[] notNumbers = {"s", "arr", "arrs", "m", "st", "vec", "b", "ts"};
        String[] notVectors = {"s", "d", "arrs", "m", "st", "b"};
        for (String c : notVectors) {
            refused(failures, "k-means featuresCol " + c, c, () -> new GpuKMeans().setK(2).setFeaturesCol(c)
                    .setBackend("cpu").fit(df));
            refused(failures, "t-SNE featuresCol " + c, c, () -> new GpuTsne().setFeaturesCol(c).setPerplexity(2)
                    .setBackend("cpu").fit(df));
        }
        for (String c : notNumbers) {
            refused(failures, "k-means weightCol " + c, c, () -> new GpuKMeans().setK(2).setFeaturesCol("vec")
                    .setWeightCol(c).setBackend("cpu").fit(df));
            refused(failures, "isotonic featuresCol " + c, c, () -> new GpuIsotonicRegression().setFeaturesCol(c)
                    .setLabelCol("d").setBackend("cpu").fit(df), "vec");
            refused(failures, "isotonic labelCol " + c, c, () -> new GpuIsotonicRegression().setFeaturesCol("d")
                    .setLabelCol(c).setBackend("cpu").fit(df));
            refused(failures, "isotonic weightCol " + c, c, () -> new GpuIsotonicRegression().setFeaturesCol("d")
                    .setLabelCol("d").setWeightCol(c).setBackend("cpu").fit(df));
            refused(failures, "scan coordinateCols " + c, c, () -> new GpuScanStatistic().setCoordinateCols(c)
                    .setCasesCol("i").setBaselineCol("d").setNumReplicas(0).setBackend("cpu").fit(df));
            refused(failures, "scan casesCol " + c, c, () -> new GpuScanStatistic().setCoordinateCols("i")
                    .setCasesCol(c).setBaselineCol("d").setNumReplicas(0).setBackend("cpu").fit(df));
            refused(failures, "scan baselineCol " + c, c, () -> new GpuScanStatistic().setCoordinateCols("i")
                    .setCasesCol("i").setBaselineCol(c).setNumReplicas(0).setBackend("cpu").fit(df));
            refused(failures, "spline xCol " + c, c, () -> new GpuMonotoneSpline().setXCol(c).setYCol("d")
                    .setBackend("cpu").fit(df));
            refused(failures, "spline yCol " + c, c, () -> new GpuMonotoneSpline().setXCol("d").setYCol(c)
                    .setBackend("cpu").fit(df));
            refused(failures, "spline weightCol " + c, c, () -> new GpuMonotoneSpline().setXCol("d").setYCol("d")
                    .setWeightCol(c).setBackend("cpu").fit(df));
            refused(failures, "spline slopeCol " + c, c, () -> new GpuMonotoneSpline().setXCol("d").setYCol("d")
                    .setSlopeCol(c).setKind("rational").setBackend("cpu").fit(df));
            refused(failures, "CDF inputCol " + c, c, () -> new GpuMonotoneCdf().setInputCol(c).setBackend("cpu")
                    .fit(df));
            refused(failures, "CDF weightCol " + c, c, () -> new GpuMonotoneCdf().setInputCol("d").setWeightCol(c)
                    .setBackend("cpu").fit(df));
            refused(failures, "t-SNE graph weightCol " + c, c, () -> new GpuTsne().setSrcCol("id").setDstCol("i")
                    .setWeightCol(c).setPerplexity(2).setBackend("cpu").fit(df));
            refused(failures, "FHN aCol " + c, c, () -> {
                GpuFitzHughNagumo f = new GpuFitzHughNagumo().setCells(11).setLength(5).setDt(0.05).setTEnd(0.5)
                        .setBackend("cpu");
                f.set(f.aCol(), c);
                return f.transform(df).collectAsList();
            });
        }
        for (String c : new String[] {"arr", "arrs", "m", "st", "vec", "d"}) {
            refused(failures, "t-SNE idCol " + c, c, () -> new GpuTsne().setFeaturesCol("vec").setIdCol(c)
                    .setPerplexity(2).setMaxIter(2).setBackend("cpu").fit(df), "d");
            refused(failures, "t-SNE srcCol " + c, c, () -> new GpuTsne().setSrcCol(c).setDstCol("id").setPerplexity(2)
                    .setMaxIter(2).setBackend("cpu").fit(df), "d");
        }
        for (String c : new String[] {"m", "st", "arr", "arrs", "vec", "b", "ts", "s"}) {
            try {
                List<Row> out = GpuSort.sort(df, c).collectAsList();
                if (out.size() != 12) {
                    failures.add("sort " + c + ": " + out.size() + " rows of 12");
                }
            } catch (Exception e) { // AnalysisException is checked
                String m = String.valueOf(e.getMessage());
                if (!(e instanceof IllegalArgumentException || e instanceof org.apache.spark.sql.AnalysisException)
                        || !m.contains(c)) {
                    failures.add("sort " + c + ": " + e);
                }
            }
        }
        assertTrue(failures.isEmpty(), failures.size() + " failed:\n" + String.join("\n", failures));
    }

    /**
     * The column setting's wrong type must be refused at the top, naming the column and the type it needs. A column
     * in {@code alsoFine} is of a type the setting accepts (e.g. a vector with featureIndex): any outcome but a crash.
     */
    private static void refused(List<String> failures, String what, String col, java.util.concurrent.Callable<?> fit,
            String... alsoFine) {
        try {
            fit.call();
            if (!List.of(alsoFine).contains(col)) {
                failures.add(what + ": fitted");
            }
        } catch (IllegalArgumentException e) {
            String m = String.valueOf(e.getMessage());
            boolean type = false;
            for (String t : new String[] {"numeric", "vector", "double", "array", "integer", "number", "type"}) {
                type |= m.toLowerCase(java.util.Locale.ROOT).contains(t);
            }
            if (!List.of(alsoFine).contains(col) && (!m.contains("'" + col + "'") || !type)) {
                failures.add(what + ": the message names neither the column and the type it needs: " + m);
            }
        } catch (Exception e) {
            failures.add(what + ": " + e.getClass().getName() + " instead of an IllegalArgumentException: "
                    + e.getMessage());
        }
    }
}
