package io.sparkgpu.sql;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import io.sparkgpu.tsne.GpuTsneModel;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** sparkgpu_tsne_embedding, registered as SparkGpuExtensions registers it, on the shared test session. */
class TsneSqlFunctionTest {

    private static SparkSession sessionWithFunction() {
        SparkSession spark = SparkTestSession.get();
        SqlFunctionSpec spec = SparkGpuFunctions.all().stream()
                .filter(f -> f.name().equals(TsneEmbeddingFunction.NAME)).findFirst().orElseThrow();
        spark.sessionState().functionRegistry().registerFunction(FunctionIdentifier.apply(spec.name()), spec.info(),
                spec.builder());
        return spark;
    }

    @Test
    void returnsTheFittedCoordinates(@TempDir Path dir) throws Exception {
        SparkSession spark = sessionWithFunction();
        GpuTsneModel m = new GpuTsneModel("t", new Object[] {10L, 20L, 30L, 40L}, DataTypes.LongType,
                new double[] {1, 2, 3, 4, 5, 6, 7, 8}, 2);
        String path = dir.resolve("tsne").toString();
        m.write().save(path);
        List<Row> rows = spark.sql("SELECT sparkgpu_tsne_embedding('" + path + "', id) AS e FROM VALUES "
                + "(10L), (40), (CAST(30 AS SMALLINT)), (CAST(NULL AS BIGINT)) AS t(id)").collectAsList();
        assertEquals(List.of(1.0, 2.0), rows.get(0).getList(0));
        assertEquals(List.of(7.0, 8.0), rows.get(1).getList(0));
        assertEquals(List.of(5.0, 6.0), rows.get(2).getList(0));
        assertTrue(rows.get(3).isNullAt(0), "NULL in, NULL out");
        // every fitted id, as transform gives them
        for (Row r : spark.range(10, 41, 10).selectExpr("id", "sparkgpu_tsne_embedding('" + path + "', id) AS e")
                .collectAsList()) {
            double[] e = r.<Double>getList(1).stream().mapToDouble(Double::doubleValue).toArray();
            assertArrayEquals(m.embeddingOf(r.getLong(0)), e);
        }
    }

    @Test
    void stringIdsAndErrors(@TempDir Path dir) throws Exception {
        SparkSession spark = sessionWithFunction();
        GpuTsneModel m = new GpuTsneModel("t", new Object[] {"a", "b", "c", "d"}, DataTypes.StringType,
                new double[] {1, 2, 3, 4}, 1);
        String path = dir.resolve("tsne-s").toString();
        m.write().save(path);
        assertEquals(List.of(3.0), spark.sql("SELECT sparkgpu_tsne_embedding('" + path + "', 'c')").first().getList(0));
        Exception unknown = assertThrows(Exception.class,
                () -> spark.sql("SELECT sparkgpu_tsne_embedding('" + path + "', 'zz')").collect());
        assertTrue(String.valueOf(unknown.getMessage()).contains("was not fitted")
                || String.valueOf(unknown.getCause()).contains("was not fitted"), unknown.toString());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_tsne_embedding('" + dir.resolve("none")
                + "', 1)").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_tsne_embedding(1)").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_tsne_embedding('" + path
                + "', array(1))").collect());
    }

    @Test
    void placesRowsOfNewIdsAsTheModelsTransform(@TempDir Path dir) throws Exception {
        SparkSession spark = sessionWithFunction();
        java.util.Random rnd = new java.util.Random(2);
        List<Row> rows = new java.util.ArrayList<>();
        for (int i = 0; i < 66; i++) {
            double[] x = new double[5];
            for (int a = 0; a < 5; a++) {
                x[a] = (i % 3) * 6 * (a == i % 3 ? 1 : 0) + rnd.nextGaussian();
            }
            rows.add(org.apache.spark.sql.RowFactory.create((long) i, org.apache.spark.ml.linalg.Vectors.dense(x)));
        }
        org.apache.spark.sql.types.StructType schema = new org.apache.spark.sql.types.StructType()
                .add("id", DataTypes.LongType, false)
                .add("features", org.apache.spark.ml.linalg.SQLDataTypes.VectorType(), false);
        org.apache.spark.sql.Dataset<Row> all = spark.createDataFrame(rows, schema);
        GpuTsneModel m = new io.sparkgpu.tsne.GpuTsne().setBackend("cpu").setIdCol("id").setPerplexity(5)
                .setMaxIter(100).setQualitySampleSize(0).setTransformMaxIter(50).fit(all.filter("id < 60"));
        String path = dir.resolve("tsne-new").toString();
        m.write().save(path);
        java.util.Map<Long, List<Double>> viaModel = new java.util.HashMap<>();
        for (Row r : m.transform(all.filter("id >= 58")).collectAsList()) {
            double[] e = ((org.apache.spark.ml.linalg.Vector) r.getAs("embedding")).toArray();
            viaModel.put(r.getLong(0), java.util.Arrays.stream(e).boxed().toList());
        }
        all.filter("id >= 58").withColumn("arr", org.apache.spark.ml.functions.vector_to_array(
                org.apache.spark.sql.functions.col("features"), "float64")).createOrReplaceTempView("tsne_new_rows");
        List<Row> viaSql = spark.sql("SELECT id, sparkgpu_tsne_embedding('" + path + "', id, features) AS e, "
                + "sparkgpu_tsne_embedding('" + path + "', id, arr) AS a FROM tsne_new_rows")
                .collectAsList();
        assertEquals(8, viaSql.size());
        for (Row r : viaSql) { // fitted ids 58, 59 and new ids 60..65: the model's transform, bit for bit
            assertEquals(viaModel.get(r.getLong(0)), r.getList(1), "id " + r.getLong(0));
            assertEquals(viaModel.get(r.getLong(0)), r.getList(2), "id " + r.getLong(0));
        }
        Exception e = assertThrows(Exception.class, () -> spark.sql("SELECT sparkgpu_tsne_embedding('" + path
                + "', id) FROM tsne_new_rows").collectAsList());
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        assertTrue(t.getMessage().contains("pass the row's features as a third argument"), t.getMessage());
    }
}
