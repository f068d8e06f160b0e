package io.sparkgpu.sql;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.spline.GpuMonotoneCdfModel;
import io.sparkgpu.spline.GpuMonotoneSplineModel;
import io.sparkgpu.spline.SplineCdf;
import io.sparkgpu.spline.SplineConfig;
import io.sparkgpu.spline.SplineEngine;
import io.sparkgpu.testutil.SparkTestSession;
import io.sparkgpu.tsne.GpuTsneModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 18 item 8 for the SQL functions: every function registered by {@link SparkGpuFunctions} is called with
 * dirty arguments (NULL, NaN, +-Inf, huge, subnormal, -0.0, p outside [0, 1], wrong types, empty and ragged arrays,
 * unknown ids, missing, empty and foreign model paths, a non-constant path). The property: the documented result
 * (NULL for a NULL argument; the same value as the model's own Java method, bit for bit; Spark's {@code sort_array}
 * order), or an error whose top-level message carries the reason: an {@link AnalysisException} (Spark's condition,
 * with the reason appended for a model that fails to load), or a job failure whose message holds the message of
 * the {@link IllegalArgumentException} that the model's own Java method throws for the same value. Never another
 * exception in the chain (NullPointerException, ClassCastException, ...), never a silently different answer.
 * Models are built directly (no fit), so the class costs a few seconds.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SqlFunctionFuzzTest {
    private static final String[] DOUBLES = {"CAST(NULL AS DOUBLE)", "CAST('NaN' AS DOUBLE)",
        "CAST('Infinity' AS DOUBLE)", "CAST('-Infinity' AS DOUBLE)", "1e308D", "-1.7976931348623157E308D",
        "4.9E-324D", "-4.9E-324D", "2.225073858507201E-308D", "-0.0D", "0.0D", "1e-300D", "0.5D", "2.0D", "3.5D",
        "9.0D", "-1.0D", "CAST(7 AS INT)", "CAST(3 AS BIGINT)", "CAST(2.5 AS DECIMAL(10, 3))", "CAST(1 AS TINYINT)"};
    /** Probabilities outside [0, 1] and the other elements of kmeans_predict's arrays. */
    private static final String[] MORE_DOUBLES = {"1.5D", "-0.25D", "1.0000000000000002D", "1.0D", "-1e308D",
        "1e154D", "3.0D", "CAST(-3 AS INT)"};
    private static final String[] WRONG_SCALARS = {"'abc'", "array(1.0D)", "true", "named_struct('a', 1.0D)",
        "DATE'2024-01-01'", "X'01'"};

    private static Path dir;
    private static String kmeans;
    private static String isotonic;
    private static String spline;
    private static String cdf;
    private static String tsne;
    private static GpuKMeansModel kmeansModel;
    private static GpuIsotonicRegressionModel isotonicModel;
    private static GpuMonotoneSplineModel splineModel;
    private static GpuMonotoneCdfModel cdfModel;

    private final List<String> failures = new ArrayList<>();

    @BeforeAll
    static void models() throws Exception {
        SparkTestSession.get();
        dir = Files.createTempDirectory("sql-fuzz");
        kmeansModel = new GpuKMeansModel("k", new double[][] {{0, 0}, {10, 10}, {-5, 3}});
        kmeans = save(kmeansModel.write(), "kmeans");
        isotonicModel = new GpuIsotonicRegressionModel("i", new double[] {0, 1, 3, 4}, new double[] {1, 2, 2, 5}, true);
        isotonic = save(isotonicModel.write(), "isotonic");
        splineModel = new GpuMonotoneSplineModel("s", SplineEngine.buildCpu(SplineConfig.Kind.RATIONAL,
                new double[] {0, 1, 3, 4}, new double[] {1, 2, 2, 5}, null)).setExtrapolate("linear");
        spline = save(splineModel.write(), "spline");
        double[] q = SplineCdf.quantileKnots(new double[] {0, 1, 1.5, 2, 4, 7, 8}, null, 5, "v", null);
        cdfModel = new GpuMonotoneCdfModel("c", SplineCdf.build(q, SplineConfig.Kind.RATIONAL,
                io.sparkgpu.cuda.Backend.CPU, "v"), q);
        cdf = save(cdfModel.write(), "cdf");
        tsne = save(new GpuTsneModel("t", new Object[] {10L, 20L, 30L, 40L}, DataTypes.LongType,
                new double[] {1, 2, 3, 4, 5, 6, 7, 8}, 2).write(), "tsne");
    }

    private static String save(org.apache.spark.ml.util.MLWriter w, String name) throws Exception {
        String p = dir.resolve(name).toString();
        w.save(p);
        return p;
    }

    @AfterAll
    static void cleanUp() throws Exception {
        org.apache.commons.io.FileUtils.deleteDirectory(dir.toFile());
    }

    /** What one call gave: a value (possibly null) or an exception. */
    private static final class Outcome {
        final Object value;
        final Throwable error;

        Outcome(Object value, Throwable error) {
            this.value = value;
            this.error = error;
        }
    }

    /** {@code SELECT <call>} through a one-row VALUES table (so the argument also goes through an executor). */
    private static Outcome sql(String call) {
        SparkSession spark = SparkTestSession.get();
        try {
            Row r = spark.sql("SELECT " + call + " AS r FROM VALUES (1) AS t(one)").collectAsList().get(0);
            return new Outcome(r.get(0), null);
        } catch (Throwable t) {
            return new Outcome(null, t);
        }
    }

    private static List<Throwable> chain(Throwable t) {
        List<Throwable> out = new ArrayList<>();
        for (Throwable c = t; c != null && !out.contains(c); c = c.getCause()) {
            out.add(c);
        }
        return out;
    }

    /** The first IllegalArgumentException in the cause chain, or null. */
    private static IllegalArgumentException refusal(Throwable t) {
        for (Throwable c : chain(t)) {
            if (c instanceof IllegalArgumentException) {
                return (IllegalArgumentException) c;
            }
        }
        return null;
    }

    /**
     * The error property: an AnalysisException, or an IllegalArgumentException at the top or inside a job failure
     * whose top-level message holds it; nothing else in the chain; a short message without a stack trace. Returns
     * the failure, or null.
     */
    private static String badError(String call, Throwable e) {
        for (Throwable c : chain(e)) {
            String n = c.getClass().getName();
            if (c instanceof NullPointerException || c instanceof ClassCastException
                    || c instanceof IndexOutOfBoundsException || c instanceof UnsupportedOperationException
                    || c instanceof Error || n.startsWith("scala.MatchError")) {
                return call + ": " + n + " in the chain: " + e;
            }
        }
        String top = String.valueOf(e.getMessage());
        if (top.contains("\tat ")) {
            return call + ": a stack trace in the message: " + top;
        }
        if (e instanceof AnalysisException) {
            if (top.contains("FAILED_FUNCTION_CALL") && !top.contains("Reason:")) {
                return call + ": FAILED_FUNCTION_CALL without its reason: " + top;
            }
            return null;
        }
        IllegalArgumentException iae = refusal(e);
        if (iae == null || !top.contains(String.valueOf(iae.getMessage()))) {
            return call + ": neither an AnalysisException nor an IllegalArgumentException in the top-level message: "
                    + e;
        }
        String fn = call.substring(0, call.indexOf('('));
        if (!iae.getMessage().startsWith(fn)) {
            return call + ": the message does not start with the function's name: " + iae.getMessage();
        }
        return null;
    }

    /** Checks a call: an error must pass {@link #badError}; a value must pass {@code valid} (a failure, or null). */
    private void check(String call, Function<Object, String> valid) {
        Outcome o = sql(call);
        if (o.error != null) {
            String f = badError(call, o.error);
            if (f != null) {
                failures.add(f);
            }
            return;
        }
        String f = valid.apply(o.value);
        if (f != null) {
            failures.add(call + " = " + o.value + ": " + f);
        }
    }

    /** The same value (bits) as {@code reference}, or an error carrying the reference's message. */
    private void sameAs(String call, Object x, java.util.function.Supplier<Object> reference) {
        Object want;
        String wantError = null;
        try {
            want = x == null ? null : reference.get();
        } catch (Exception e) { // a transform's job failure (a checked SparkException) carries the refusal as cause
            IllegalArgumentException iae = refusal(e);
            if (iae == null) {
                failures.add(call + ": the model's own method throws " + e);
                return;
            }
            want = null;
            wantError = iae.getMessage();
        }
        Outcome o = sql(call);
        if (o.error != null) {
            String f = badError(call, o.error);
            if (f != null) {
                failures.add(f);
            } else if (wantError == null) {
                failures.add(call + ": failed (" + o.error.getMessage() + ") where the model's method gives " + want);
            } else if (!String.valueOf(o.error.getMessage()).contains(wantError.replaceFirst("^\\w+Col '[^']*'", ""))) {
                // the same rule; where the model names its column (featuresCol 'features'), SQL names its argument
                failures.add(call + ": another message than the model's (" + wantError + "): " + o.error.getMessage());
            }
        } else if (wantError != null) {
            failures.add(call + " = " + o.value + " where the model's method refuses: " + wantError);
        } else if (!Objects.equals(bits(want), bits(o.value))) {
            failures.add(call + " = " + o.value + ", the model's method gives " + want);
        }
    }

    private static Object bits(Object v) {
        return v instanceof Double ? Double.doubleToLongBits((Double) v) : v;
    }

    private static final java.util.Map<String, Double> VALUES = new java.util.HashMap<>();

    /** The double a SQL literal stands for (null for NULL), as Spark casts it; one query for all of them. */
    private static Double value(String literal) {
        if (VALUES.isEmpty()) {
            List<String> all = new ArrayList<>(List.of(DOUBLES));
            all.addAll(List.of(MORE_DOUBLES));
            StringBuilder q = new StringBuilder("SELECT ");
            for (int i = 0; i < all.size(); i++) {
                q.append(i == 0 ? "" : ", ").append("CAST(").append(all.get(i)).append(" AS DOUBLE)");
            }
            Row r = SparkTestSession.get().sql(q.toString()).first();
            for (int i = 0; i < all.size(); i++) {
                VALUES.put(all.get(i), r.isNullAt(i) ? null : r.getDouble(i));
            }
        }
        if (!VALUES.containsKey(literal)) {
            throw new IllegalStateException("not a literal of DOUBLES or MORE_DOUBLES: " + literal);
        }
        return VALUES.get(literal);
    }

    private void done() {
        assertTrue(failures.isEmpty(), failures.size() + " failed:\n" + String.join("\n", failures));
    }

    @Test
    void scalarModelFunctionsAgreeWithTheirModels() {
        for (String lit : DOUBLES) {
            Double x = value(lit);
            sameAs("sparkgpu_isotonic_predict('" + isotonic + "', " + lit + ")", x, () -> isotonicModel.predict(x));
            sameAs("sparkgpu_spline_eval('" + spline + "', " + lit + ")", x, () -> splineModel.predict(x));
            sameAs("sparkgpu_cdf('" + cdf + "', " + lit + ")", x, () -> cdfModel.cdf(x));
            sameAs("sparkgpu_quantile('" + cdf + "', " + lit + ")", x, () -> cdfModel.quantile(x));
        }
        for (String lit : new String[] {"1.5D", "-0.25D", "1.0000000000000002D", "-4.9E-324D", "1.0D"}) {
            Double p = value(lit);
            sameAs("sparkgpu_quantile('" + cdf + "', " + lit + ")", p, () -> cdfModel.quantile(p));
        }
        done();
    }

    /** Found by this class: a signed zero equal to the first or last boundary indexed outside the arrays. */
    @Test
    void isotonicSignedZerosAtTheBoundaries() {
        GpuIsotonicRegressionModel up = new GpuIsotonicRegressionModel("a", new double[] {0.0, 1}, new double[] {2, 3},
                true);
        assertTrue(up.predict(-0.0) == 2.0 && up.predict(0.0) == 2.0);
        GpuIsotonicRegressionModel down = new GpuIsotonicRegressionModel("b", new double[] {-1, -0.0},
                new double[] {2, 3}, true);
        assertTrue(down.predict(0.0) == 3.0 && down.predict(-0.0) == 3.0);
        GpuIsotonicRegressionModel mid = new GpuIsotonicRegressionModel("c", new double[] {-1, 0.0, 1},
                new double[] {0.1, 0.7, 0.9}, true);
        assertTrue(mid.predict(-0.0) == 0.7, "-0.0 is the boundary 0.0, not an interpolation: " + mid.predict(-0.0));
    }

    @Test
    void kmeansPredictAgreesWithTheModel() {
        String[][] arrays = {{"1.0D", "2.0D"}, {"CAST('NaN' AS DOUBLE)", "1.0D"}, {"CAST('Infinity' AS DOUBLE)", "0.0D"},
            {"1e308D", "-1e308D"}, {"4.9E-324D", "-0.0D"}, {"1e154D", "1e154D"}, {"1.0D"}, {"1.0D", "2.0D", "3.0D"},
            {}, {"CAST(7 AS INT)", "CAST(-3 AS INT)"}, {"CAST('-Infinity' AS DOUBLE)", "2.0D"}};
        for (String[] a : arrays) {
            double[] x = new double[a.length];
            for (int i = 0; i < a.length; i++) {
                x[i] = value(a[i]);
            }
            String arr = a.length == 0 ? "CAST(array() AS ARRAY<DOUBLE>)" : "array(" + String.join(", ", a) + ")";
            sameAs("sparkgpu_kmeans_predict('" + kmeans + "', " + arr + ")", x, () -> kmeansModel.predict(
                    Vectors.dense(x)));
        }
        for (String call : new String[] {"sparkgpu_kmeans_predict('" + kmeans + "', CAST(NULL AS ARRAY<DOUBLE>))",
            "sparkgpu_kmeans_predict('" + kmeans + "', NULL)"}) {
            check(call, v -> v == null ? null : "NULL features must give NULL");
        }
        check("sparkgpu_kmeans_predict('" + kmeans + "', array(1.0D, NULL))", v -> "a null element must be refused");
        done();
    }

    @Test
    void tsneEmbeddingOfDirtyIds() {
        for (String id : new String[] {"10L", "CAST(40 AS SMALLINT)", "CAST(NULL AS BIGINT)", "NULL", "99L", "-0.0D",
            "CAST('NaN' AS DOUBLE)", "10.0D", "10.5D", "'10'", "'abc'", "array(10L)", "1e308D"}) {
            check("sparkgpu_tsne_embedding('" + tsne + "', " + id + ")", v -> {
                if (v == null) {
                    return id.contains("NULL") ? null : "NULL for a non-NULL id";
                }
                return id.startsWith("10") || id.contains("40") || id.equals("'10'") ? null
                        : "an embedding for an id that was not fitted";
            });
        }
        done();
    }

    /**
     * The three-argument form places a row of a new id into a fitted map from its features: dirty features give the
     * model's transform bits for the same row, or the transform's refusal (its message, after the function's name).
     */
    @Test
    void tsneEmbeddingOfNewRowsWithDirtyFeatures() throws Exception {
        SparkSession spark = SparkTestSession.get();
        java.util.Random rnd = new java.util.Random(3);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
            rows.add(org.apache.spark.sql.RowFactory.create((long) i, Vectors.dense((i % 3) * 5 + rnd.nextGaussian(),
                    rnd.nextGaussian(), i % 2)));
        }
        org.apache.spark.sql.types.StructType schema = new org.apache.spark.sql.types.StructType()
                .add("id", DataTypes.LongType).add("features", org.apache.spark.ml.linalg.SQLDataTypes.VectorType());
        GpuTsneModel m = new io.sparkgpu.tsne.GpuTsne().setBackend("cpu").setIdCol("id").setPerplexity(3)
                .setMaxIter(20).setExaggerationIterations(10).setQualitySampleSize(0).setTransformMaxIter(5)
                .fit(spark.createDataFrame(rows, schema));
        String path = save(m.write(), "tsne-fitted");
        String[][] features = {{"1.0D", "0.5D", "1.0D"}, {"CAST('NaN' AS DOUBLE)", "0.0D", "0.0D"},
            {"CAST('-Infinity' AS DOUBLE)", "0.0D", "0.0D"}, {"1e308D", "-1e308D", "1e308D"},
            {"4.9E-324D", "-0.0D", "0.0D"}, {"1.0D", "2.0D"}, {}};
        for (String[] f : features) {
            double[] x = new double[f.length];
            for (int i = 0; i < f.length; i++) {
                x[i] = value(f[i]);
            }
            String arr = f.length == 0 ? "CAST(array() AS ARRAY<DOUBLE>)" : "array(" + String.join(", ", f) + ")";
            sameAs("sparkgpu_tsne_embedding('" + path + "', 999L, " + arr + ")", x, () -> {
                Row r = m.transform(spark.createDataFrame(List.of(org.apache.spark.sql.RowFactory.create(999L,
                        Vectors.dense(x))), schema)).first();
                return scala.jdk.javaapi.CollectionConverters.asScala(java.util.Arrays.stream(
                        ((org.apache.spark.ml.linalg.Vector) r.getAs("embedding")).toArray()).boxed().toList()).toSeq();
            });
        }
        check("sparkgpu_tsne_embedding('" + path + "', 999L, array(1.0D, NULL, 2.0D))",
                v -> "a null element must be refused");
        check("sparkgpu_tsne_embedding('" + path + "', 999L, CAST(NULL AS ARRAY<DOUBLE>))",
                v -> v == null ? null : "NULL features of a new id must give NULL or an error");
        done();
    }

    @Test
    void sortArrayAgreesWithSparksSortArray() {
        String[] arrays = {"array(3.0D, CAST('NaN' AS DOUBLE), -0.0D, 0.0D, CAST(NULL AS DOUBLE), "
                + "CAST('-Infinity' AS DOUBLE), 4.9E-324D, -4.9E-324D, 1e308D, CAST('Infinity' AS DOUBLE))",
            "CAST(array() AS ARRAY<DOUBLE>)", "CAST(NULL AS ARRAY<DOUBLE>)", "array(CAST(NULL AS INT), 2, -2147483648, "
                + "2147483647, 0)", "array(9223372036854775807L, -9223372036854775808L, 0L, NULL)",
            "array(CAST(0.0 AS FLOAT), CAST(-0.0 AS FLOAT), CAST('NaN' AS FLOAT), CAST(1e-45 AS FLOAT))",
            "array('b', 'a', NULL, '', 'ab')", "array(CAST(2.50 AS DECIMAL(10, 2)), CAST(-1 AS DECIMAL(10, 2)), NULL)",
            "array(DATE'2024-01-02', DATE'1970-01-01', NULL)", "array(true, false, NULL)"};
        for (String a : arrays) {
            for (String asc : new String[] {"", ", true", ", false"}) {
                String call = "sparkgpu_sort_array(" + a + asc + ")";
                Outcome want = sql("sort_array(" + a + asc + ")");
                Outcome got = sql(call);
                if (got.error != null && want.error == null && got.error instanceof AnalysisException
                        && String.valueOf(got.error.getMessage()).contains("UNEXPECTED_INPUT_TYPE")
                        && a.contains("'b'")) {
                    continue; // strings are outside the documented element types: refused at analysis
                }
                if (got.error != null) {
                    String f = badError(call, got.error);
                    failures.add(f != null ? f : call + ": failed where Spark's sort_array gives " + want.value
                            + ": " + got.error.getMessage());
                } else if (want.error == null && !Objects.equals(String.valueOf(want.value),
                        String.valueOf(got.value))) {
                    failures.add(call + " = " + got.value + ", sort_array gives " + want.value);
                }
            }
        }
        for (String call : new String[] {"sparkgpu_sort_array(array(1, 2), CAST(NULL AS BOOLEAN))",
            "sparkgpu_sort_array(array(1, 2), 'yes')", "sparkgpu_sort_array(3.0D)", "sparkgpu_sort_array('abc')",
            "sparkgpu_sort_array(array(1, 2), one = 1)", "sparkgpu_sort_array()",
            "sparkgpu_sort_array(array(array(2), array(1)))"}) {
            check(call, v -> null);
        }
        done();
    }

    @Test
    void wrongTypesAndBadPaths() {
        String[] fns = {"sparkgpu_isotonic_predict", "sparkgpu_spline_eval", "sparkgpu_cdf", "sparkgpu_quantile",
            "sparkgpu_kmeans_predict", "sparkgpu_tsne_embedding"};
        String[] paths = {isotonic, spline, cdf, cdf, kmeans, tsne};
        for (int f = 0; f < fns.length; f++) {
            for (String w : WRONG_SCALARS) {
                check(fns[f] + "('" + paths[f] + "', " + w + ")", v -> "a value for a wrong type");
            }
            String other = paths[(f + 2) % paths.length]; // another capability's model
            String[] badPaths = {"'" + dir.resolve("missing") + "'", "''", "NULL", "CAST(NULL AS STRING)", "1",
                "'" + other + "'", "'" + dir + "'", "concat('" + paths[f] + "', CAST(one AS STRING))"};
            for (String p : badPaths) {
                check(fns[f] + "(" + p + ", 0.5D)", v -> "a value from a bad path");
            }
            check(fns[f] + "('" + paths[f] + "')", v -> "a value with one argument");
            check(fns[f] + "('" + paths[f] + "', 1.0D, 2.0D, 3.0D)", v -> "a value with four arguments");
        }
        done();
    }

    @Test
    void scanFunctionsWithDirtyArguments() {
        String[] llr = {"sparkgpu_scan_llr(5, 10, 20, 100, 'poissonn')", "sparkgpu_scan_llr(5, 10, 20, 100, NULL)",
            "sparkgpu_scan_llr(5, 10, 20, 100, 'poisson', 'sideways')", "sparkgpu_scan_llr('a', 10, 20, 100)",
            "sparkgpu_scan_llr(5, 10, 20)", "sparkgpu_scan_llr(5, 10, 20, 100, 'poisson', 'high', 3)",
            "sparkgpu_scan_llr(5, 10, 20, 100, 'bernoulli')", "sparkgpu_scan_llr(50, 10, 20, 100)",
            "sparkgpu_scan_llr(5, 200, 20, 100)", "sparkgpu_scan_llr(5, 10, 20, 100, 'poisson', CAST(NULL AS STRING))",
            "sparkgpu_scan_llr(CAST(NULL AS DOUBLE), 10, 20, 100)", "sparkgpu_scan_llr(array(1), 10, 20, 100)",
            "sparkgpu_scan_llr(5, 10, 20, 100, 'poisson', 'high', one)"};
        for (String call : llr) {
            check(call, v -> v == null || (v instanceof Double && (Double) v >= 0) ? null : "not an LLR >= 0");
        }
        String[] best = {"sparkgpu_scan_best(array(1, CAST(NULL AS INT), 3), array(1, 1, 1))",
            "sparkgpu_scan_best(array(1, 2), array(1, CAST('NaN' AS DOUBLE)))",
            "sparkgpu_scan_best(array(1, 2), array(1, CAST('Infinity' AS DOUBLE)))",
            "sparkgpu_scan_best(array(1e308D, 1e308D), array(1, 1))", "sparkgpu_scan_best(array(1, 2), array(0, 0))",
            "sparkgpu_scan_best(array(1, 2), array(-1, 2))", "sparkgpu_scan_best(array(), array())",
            "sparkgpu_scan_best(CAST(array() AS ARRAY<INT>), CAST(array() AS ARRAY<INT>))",
            "sparkgpu_scan_best(array(1, 2), array(1, 2), 'poisson', 'high', 0.0)",
            "sparkgpu_scan_best(array(1, 2), array(1, 2), 'poisson', 'high', CAST('NaN' AS DOUBLE))",
            "sparkgpu_scan_best(array(1, 2), array(1, 2), 'poisson', 'high', NULL)",
            "sparkgpu_scan_best(array('a'), array(1))", "sparkgpu_scan_best(array(4.9E-324D, 0.0D), array(1, 1))",
            "sparkgpu_scan_best(array(0.5D, 3.0D), array(1, 1))", "sparkgpu_scan_best(array(-0.0D, 3.0D), array(1, 1))"};
        for (String call : best) {
            check(call, v -> v == null || v instanceof Row && Double.isFinite(((Row) v).getDouble(2))
                    && ((Row) v).getDouble(2) >= 0 ? null : "not a cluster with a finite LLR >= 0");
        }
        done();
    }
}
