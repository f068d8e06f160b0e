package io.sparkgpu.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.spline.GpuMonotoneSplineModel;
import io.sparkgpu.spline.SplineConfig;
import io.sparkgpu.spline.SplineEngine;
import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** sparkgpu_spline_eval, registered as SparkGpuExtensions registers it, on the shared test session. */
class SplineSqlFunctionTest {

    private static SparkSession sessionWithFunction() {
        SparkSession spark = SparkTestSession.get();
        SqlFunctionSpec spec = SparkGpuFunctions.all().stream()
                .filter(f -> f.name().equals(SplineEvalFunction.NAME)).findFirst().orElseThrow();
        spark.sessionState().functionRegistry().registerFunction(FunctionIdentifier.apply(spec.name()), spec.info(),
                spec.builder());
        return spark;
    }

    @Test
    void evaluatesLikeTheModel(@TempDir Path dir) throws Exception {
        SparkSession spark = sessionWithFunction();
        GpuMonotoneSplineModel m = new GpuMonotoneSplineModel("s", SplineEngine.buildCpu(SplineConfig.Kind.RATIONAL,
                new double[] {0, 1, 3, 4}, new double[] {1, 2, 2, 5}, null)).setExtrapolate("linear");
        String path = dir.resolve("spline").toString();
        m.write().save(path);
        List<Row> rows = spark.sql("SELECT sparkgpu_spline_eval('" + path + "', v) AS p FROM VALUES "
                + "(-1.0D), (0.5D), (2.0D), (3.5D), (9.0D), (CAST(NULL AS DOUBLE)), (CAST('NaN' AS DOUBLE)) AS t(v)")
                .collectAsList();
        double[] xs = {-1, 0.5, 2, 3.5, 9};
        for (int i = 0; i < xs.length; i++) {
            assertEquals(m.predict(xs[i]), rows.get(i).getDouble(0), 0.0, "row " + i);
        }
        assertEquals(2.0, rows.get(2).getDouble(0), 0.0, "flat stretch");
        assertTrue(rows.get(5).isNullAt(0), "NULL in, NULL out");
        assertTrue(Double.isNaN(rows.get(6).getDouble(0)), "NaN in, NaN out");
        assertEquals(5.0, spark.sql("SELECT sparkgpu_spline_eval('" + path + "', 4)").first().getDouble(0), 0.0);
    }

    @Test
    void analysisErrors(@TempDir Path dir) {
        SparkSession spark = sessionWithFunction();
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_spline_eval('" + dir.resolve("none")
                + "', 1.0D)").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_spline_eval(1.0D)").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_spline_eval('x', 'a')").collect());
    }
}
