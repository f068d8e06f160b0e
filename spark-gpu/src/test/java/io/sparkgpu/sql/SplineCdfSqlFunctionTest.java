package io.sparkgpu.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.spline.GpuMonotoneCdfModel;
import io.sparkgpu.spline.GpuMonotoneSplineModel;
import io.sparkgpu.spline.SplineCdf;
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

/** sparkgpu_cdf and sparkgpu_quantile, registered as SparkGpuExtensions registers them, on the shared test session. */
class SplineCdfSqlFunctionTest {

    private static SparkSession sessionWithFunctions() {
        SparkSession spark = SparkTestSession.get();
        for (SqlFunctionSpec spec : SparkGpuFunctions.all()) {
            if (spec.name().equals(SplineCdfFunction.CDF) || spec.name().equals(SplineCdfFunction.QUANTILE)) {
                spark.sessionState().functionRegistry().registerFunction(FunctionIdentifier.apply(spec.name()),
                        spec.info(), spec.builder());
            }
        }
        return spark;
    }

    private static GpuMonotoneCdfModel model() {
        double[] q = SplineCdf.quantileKnots(new double[] {0, 1, 1.5, 2, 4, 7, 8}, null, 5, "v", null);
        return new GpuMonotoneCdfModel("c", SplineCdf.build(q, SplineConfig.Kind.RATIONAL,
                io.sparkgpu.cuda.Backend.CPU, "v"), q);
    }

    @Test
    void evaluatesLikeTheModel(@TempDir Path dir) throws Exception {
        SparkSession spark = sessionWithFunctions();
        GpuMonotoneCdfModel m = model();
        String path = dir.resolve("cdf").toString();
        m.write().save(path);
        List<Row> rows = spark.sql("SELECT sparkgpu_cdf('" + path + "', v), sparkgpu_quantile('" + path + "', p) "
                + "FROM VALUES (-1.0D, 0.0D), (0.5D, 0.1D), (3.0D, 0.5D), (7.5D, 0.99D), (9.0D, 1.0D), "
                + "(CAST(NULL AS DOUBLE), CAST(NULL AS DOUBLE)) AS t(v, p)").collectAsList();
        double[] xs = {-1, 0.5, 3, 7.5, 9};
        double[] ps = {0, 0.1, 0.5, 0.99, 1};
        for (int i = 0; i < xs.length; i++) {
            assertEquals(m.cdf(xs[i]), rows.get(i).getDouble(0), 0.0, "cdf row " + i);
            assertEquals(m.quantile(ps[i]), rows.get(i).getDouble(1), 0.0, "quantile row " + i);
        }
        assertEquals(0.0, rows.get(0).getDouble(0), 0.0);
        assertEquals(1.0, rows.get(4).getDouble(0), 0.0);
        assertEquals(8.0, rows.get(4).getDouble(1), 0.0);
        assertTrue(rows.get(5).isNullAt(0) && rows.get(5).isNullAt(1));
        Exception e = assertThrows(Exception.class, () -> spark.sql("SELECT sparkgpu_quantile('" + path
                + "', 1.5D)").collect());
        Throwable t = e;
        while (t.getCause() != null && !(t instanceof IllegalArgumentException)) {
            t = t.getCause();
        }
        assertEquals("sparkgpu_quantile: p must be in [0, 1], got 1.5", t.getMessage());
    }

    @Test
    void analysisErrors(@TempDir Path dir) throws Exception {
        SparkSession spark = sessionWithFunctions();
        String spline = dir.resolve("spline").toString();
        new GpuMonotoneSplineModel("s", SplineEngine.buildCpu(SplineConfig.Kind.RATIONAL, new double[] {0, 1},
                new double[] {0, 1}, null)).write().save(spline);
        AnalysisException e = assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_cdf('"
                + spline + "', 1.0D)").collect());
        StringBuilder chain = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            chain.append(t.getMessage()).append(" | ");
        }
        assertTrue(chain.toString().contains("cannot load a GpuMonotoneCdfModel"), chain.toString());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_quantile(0.5D)").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_cdf('x', 'a')").collect());
    }
}
