package io.sparkgpu.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** sparkgpu_isotonic_predict, registered as SparkGpuExtensions registers it, on the shared test session. */
class IsotonicSqlFunctionTest {

    private static SparkSession sessionWithFunction() {
        SparkSession spark = SparkTestSession.get();
        SqlFunctionSpec spec = SparkGpuFunctions.all().stream()
                .filter(f -> f.name().equals(IsotonicPredictFunction.NAME)).findFirst().orElseThrow();
        spark.sessionState().functionRegistry().registerFunction(FunctionIdentifier.apply(spec.name()), spec.info(),
                spec.builder());
        return spark;
    }

    @Test
    void predictsLikeTheModel(@TempDir Path dir) throws Exception {
        SparkSession spark = sessionWithFunction();
        GpuIsotonicRegressionModel m = new GpuIsotonicRegressionModel("iso", new double[] {0, 1, 3, 4},
                new double[] {1, 2, 2, 5}, true);
        String path = dir.resolve("iso").toString();
        m.write().save(path);
        List<Row> rows = spark.sql("SELECT sparkgpu_isotonic_predict('" + path + "', v) AS p FROM VALUES "
                + "(-1.0D), (0.5D), (2.0D), (3.5D), (9.0D), (CAST(NULL AS DOUBLE)), (CAST('NaN' AS DOUBLE)) AS t(v)")
                .collectAsList();
        double[] expected = {1, 1.5, 2, 3.5, 5};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], rows.get(i).getDouble(0), 0.0, "row " + i);
            assertEquals(m.predict(new double[] {-1, 0.5, 2, 3.5, 9}[i]), rows.get(i).getDouble(0), 0.0);
        }
        assertTrue(rows.get(5).isNullAt(0), "NULL in, NULL out");
        assertTrue(Double.isNaN(rows.get(6).getDouble(0)), "NaN in, NaN out");
        // integers are accepted as features
        assertEquals(2.0, spark.sql("SELECT sparkgpu_isotonic_predict('" + path + "', 3)").first().getDouble(0));
    }

    @Test
    void analysisErrors(@TempDir Path dir) {
        SparkSession spark = sessionWithFunction();
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_isotonic_predict('" + dir.resolve("none")
                + "', 1.0D)").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_isotonic_predict(1.0D)").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_isotonic_predict('x', 'a')").collect());
    }
}
