package io.sparkgpu.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.kmeans.KMeansTestData;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class SparkGpuExtensionsTest {
    private static SparkSession spark;
    private static Path tmp;
    private static GpuKMeansModel model;
    private static String modelPath;
    private static Dataset<Row> blobs;

    @BeforeAll
    static void start() throws IOException {
        spark = SparkSession.builder()
                .master("local[2]")
                .appName("SparkGpuExtensionsTest")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.sql.extensions", "io.sparkgpu.sql.SparkGpuExtensions")
                .getOrCreate();
        tmp = Files.createTempDirectory("sparkgpu-sql");
        blobs = KMeansTestData.blobs(spark).cache();
        model = new GpuKMeans().setK(3).setSeed(2L).fit(blobs);
        modelPath = tmp.resolve("model").toString();
        model.save(modelPath);

        // the blobs plus one row whose features are NULL, and a string column that is not a constant
        StructType schema = new StructType()
                .add("id", DataTypes.IntegerType, false)
                .add("features", DataTypes.createArrayType(DataTypes.DoubleType, false), true)
                .add("vec", SQLDataTypes.VectorType(), true)
                .add("path", DataTypes.StringType, false);
        List<Row> rows = new ArrayList<>();
        for (Row r : KMeansTestData.ROWS) {
            rows.add(RowFactory.create(r.getInt(0), r.get(2), r.get(3), modelPath));
        }
        rows.add(RowFactory.create(-1, null, null, modelPath));
        spark.createDataFrame(rows, schema).createOrReplaceTempView("pts");
    }

    @AfterAll
    static void stop() throws IOException {
        KMeansPredictFunction.clearCache();
        KMeansTestData.stop(spark);
        try (Stream<Path> files = Files.walk(tmp)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static String lit(String path) {
        return "'" + path.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    private static Map<Integer, Integer> expected() {
        Map<Integer, Integer> m = new HashMap<>();
        for (Row r : model.transform(blobs).select("id", "prediction").collectAsList()) {
            m.put(r.getInt(0), r.getInt(1));
        }
        return m;
    }

    private static Map<Integer, Integer> sqlPredictions(String featuresCol) {
        Dataset<Row> out = spark.sql("SELECT id, sparkgpu_kmeans_predict(" + lit(modelPath) + ", " + featuresCol
                + ") AS p FROM pts");
        assertEquals(DataTypes.IntegerType, out.schema().apply("p").dataType());
        Map<Integer, Integer> m = new HashMap<>();
        for (Row r : out.collectAsList()) {
            if (r.getInt(0) == -1) {
                assertTrue(r.isNullAt(1), "NULL features must give NULL");
            } else {
                m.put(r.getInt(0), r.getInt(1));
            }
        }
        return m;
    }

    @Test
    void arrayFeaturesMatchTransform() {
        Map<Integer, Integer> exp = expected();
        assertEquals(60, exp.size());
        assertEquals(exp, sqlPredictions("features"));
    }

    @Test
    void vectorFeaturesMatchTransform() {
        assertEquals(expected(), sqlPredictions("vec"));
    }

    @Test
    void otherNumericArraysAndNullLiterals() {
        Row r = spark.sql("SELECT sparkgpu_kmeans_predict(" + lit(modelPath) + ", array(10, 10)) AS a, "
                + "sparkgpu_kmeans_predict(" + lit(modelPath) + ", array(CAST(-10 AS FLOAT), 10.0BD)) AS b, "
                + "sparkgpu_kmeans_predict(" + lit(modelPath) + ", CAST(NULL AS ARRAY<DOUBLE>)) AS c, "
                + "sparkgpu_kmeans_predict(" + lit(modelPath) + ", NULL) AS d").first();
        assertEquals(model.predict(Vectors.dense(10, 10)), r.getInt(0));
        assertEquals(model.predict(Vectors.dense(-10, 10)), r.getInt(1));
        assertNotEquals(r.getInt(0), r.getInt(1));
        assertTrue(r.isNullAt(2));
        assertTrue(r.isNullAt(3));
    }

    @Test
    void worksThroughTheDataFrameApiToo() {
        Dataset<Row> out = spark.table("pts").where("id >= 0")
                .selectExpr("id", "sparkgpu_kmeans_predict(" + lit(modelPath) + ", vec) AS p");
        Map<Integer, Integer> m = new HashMap<>();
        for (Row r : out.collectAsList()) {
            m.put(r.getInt(0), r.getInt(1));
        }
        assertEquals(expected(), m);
    }

    @Test
    void nonLiteralPathIsAClearAnalysisError() {
        AnalysisException e = assertThrows(AnalysisException.class,
                () -> spark.sql("SELECT sparkgpu_kmeans_predict(path, features) FROM pts"));
        assertTrue(e.getMessage().contains("model_path") && e.getMessage().contains("foldable"), e.getMessage());
        assertEquals("DATATYPE_MISMATCH.NON_FOLDABLE_INPUT", e.getCondition());
    }

    @Test
    void otherBadCallsAreAnalysisErrors() {
        AnalysisException e = assertThrows(AnalysisException.class,
                () -> spark.sql("SELECT sparkgpu_kmeans_predict(" + lit(modelPath) + ") FROM pts"));
        assertEquals("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", e.getCondition(), e.getMessage());
        e = assertThrows(AnalysisException.class,
                () -> spark.sql("SELECT sparkgpu_kmeans_predict(42, features) FROM pts"));
        assertTrue(e.getMessage().contains("STRING"), e.getMessage());
        e = assertThrows(AnalysisException.class,
                () -> spark.sql("SELECT sparkgpu_kmeans_predict(" + lit(modelPath) + ", path) FROM pts"));
        assertTrue(e.getMessage().contains("DATATYPE_MISMATCH") && e.getMessage().contains("VECTOR"), e.getMessage());
        String missing = tmp.resolve("no-such-model").toString();
        e = assertThrows(AnalysisException.class,
                () -> spark.sql("SELECT sparkgpu_kmeans_predict(" + lit(missing) + ", features) FROM pts"));
        assertEquals("PATH_NOT_FOUND", e.getCondition());
        assertTrue(e.getMessage().contains("no-such-model"), e.getMessage());
    }

    @Test
    void sizeMismatchFailsAtRunTimeNamingTheFunction() {
        Exception e = assertThrows(Exception.class, () -> spark.sql("SELECT sparkgpu_kmeans_predict("
                + lit(modelPath) + ", array(1.0D, 2.0D, 3.0D)) AS p").collectAsList());
        StringBuilder all = new StringBuilder();
        for (Throwable c = e; c != null; c = c.getCause()) {
            all.append(c.getMessage()).append(" | ");
        }
        assertTrue(all.toString().contains("sparkgpu_kmeans_predict: features has size 3"), all.toString());
    }

    @Test
    void modelIsLoadedOnceAndReloadedWhenOverwritten() throws IOException {
        String path = tmp.resolve("swap").toString();
        new GpuKMeansModel("a", new double[][] {{0, 0}, {10, 10}}).save(path);
        String q = "SELECT sparkgpu_kmeans_predict(" + lit(path) + ", array(1.0D, 1.0D)) AS p";
        long before = KMeansPredictFunction.loadCount();
        assertEquals(0, spark.sql(q).first().getInt(0));
        assertEquals(0, spark.sql(q).first().getInt(0));
        assertEquals(before + 1, KMeansPredictFunction.loadCount(), "a cached model must not be loaded again");

        new GpuKMeansModel("b", new double[][] {{10, 10}, {0, 0}}).write().overwrite().save(path);
        assertEquals(1, spark.sql(q).first().getInt(0), "an overwritten model must be reloaded");
        assertEquals(before + 2, KMeansPredictFunction.loadCount());
    }

    @Test
    void functionIsDescribed() {
        List<Row> rows = spark.sql("DESCRIBE FUNCTION EXTENDED sparkgpu_kmeans_predict").collectAsList();
        StringBuilder text = new StringBuilder();
        for (Row r : rows) {
            text.append(r.getString(0)).append('\n');
        }
        assertTrue(text.toString().contains("sparkgpu_kmeans_predict(model_path, features)"), text.toString());
        assertTrue(text.toString().contains("Examples:"), text.toString());
        assertFalse(SparkGpuFunctions.all().isEmpty());
        assertEquals("sparkgpu_kmeans_predict", SparkGpuFunctions.all().get(0).name());
    }

    @Test
    void expressionCopiesAndComparesLikeACatalystNode() {
        Dataset<Row> df = spark.sql("SELECT sparkgpu_kmeans_predict(" + lit(modelPath) + ", features) AS p FROM pts");
        KMeansPredictExpression e = (KMeansPredictExpression) df.queryExecution().analyzed().expressions().apply(0)
                .find(x -> x instanceof KMeansPredictExpression).get();
        assertEquals(modelPath, e.modelPath());
        assertEquals(3, e.model().k());
        assertEquals(2, e.model().numFeatures());
        // Catalyst's reflective copy (used by clone/makeCopy) must find the constructor
        Object copy = e.makeCopy(new Object[] {e.features(), e.modelPath(), e.model()});
        assertEquals(e, copy);
        assertEquals(e.hashCode(), copy.hashCode());
        assertEquals(e, e.withNewChildren(e.children()));
        assertTrue(e.sql().startsWith("sparkgpu_kmeans_predict('"), e.sql());
    }
}
