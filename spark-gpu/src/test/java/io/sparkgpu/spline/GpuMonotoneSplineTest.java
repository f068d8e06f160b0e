package io.sparkgpu.spline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The estimator and model on local[2]: fit, transform, inverse, persistence, smoothing, isotonic models, errors. */
class GpuMonotoneSplineTest {
    private static final StructType SCHEMA = new StructType().add("x", DataTypes.DoubleType)
            .add("y", DataTypes.DoubleType).add("w", DataTypes.DoubleType);

    static Dataset<Row> points(SparkSession spark, double[] x, double[] y, double[] w) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < x.length; i++) {
            rows.add(RowFactory.create(x[i], y[i], w == null ? 1.0 : w[i]));
        }
        return spark.createDataFrame(rows, SCHEMA).repartition(3);
    }

    static Dataset<Row> queries(SparkSession spark, double[] z) {
        List<Row> rows = new ArrayList<>();
        for (double v : z) {
            rows.add(RowFactory.create(Double.isNaN(v) ? null : v));
        }
        return spark.createDataFrame(rows, new StructType().add("x", DataTypes.DoubleType)).repartition(2);
    }

    @Test
    void fitTransformInverseAndSaveLoad(@TempDir Path dir) throws Exception {
        SparkSession spark = SparkTestSession.get();
        double[][] d = SplineCpuTest.smoothData(60, 21);
        for (String kind : new String[] {"schumaker", "rational"}) {
            GpuMonotoneSplineModel m = new GpuMonotoneSpline().setKind(kind).setBackend("cpu").setDerivativeCol("dy")
                    .fit(points(spark, d[0], d[1], null));
            Spline ref = SplineCpu.build(SplineConfig.parseKind(kind), d[0], d[1], null);
            assertTrue(ref.sameBits(m.spline()), kind);
            double[] z = new Random(3).doubles(200, d[0][0] - 1, d[0][59] + 1).toArray();
            z[7] = Double.NaN; // a null row
            List<Row> out = m.transform(queries(spark, z)).collectAsList();
            assertEquals(200, out.size());
            double[] v = new double[z.length];
            double[] dv = new double[z.length];
            SplineCpu.eval(ref, z, SplineConfig.Extrapolate.CLIP, v, dv);
            for (Row r : out) {
                if (r.isNullAt(0)) {
                    assertTrue(r.isNullAt(1) && r.isNullAt(2));
                    continue;
                }
                int i = indexOf(z, r.getDouble(0));
                assertEquals(v[i], r.getDouble(1), 0.0);
                assertEquals(dv[i], r.getDouble(2), 0.0);
            }
            assertEquals(d[0][10], m.inverse(m.predict(d[0][10])), 0.0);
            String p = dir.resolve(kind).toString();
            m.write().save(p);
            GpuMonotoneSplineModel back = GpuMonotoneSplineModel.load(p);
            assertTrue(ref.sameBits(back.spline()));
            assertEquals("dy", back.getDerivativeCol());
            assertEquals(kind, back.getKind());
        }
    }

    private static int indexOf(double[] z, double v) {
        for (int i = 0; i < z.length; i++) {
            if (z[i] == v) {
                return i;
            }
        }
        throw new AssertionError("query " + v + " not found");
    }

    @Test
    void duplicatesAreMergedIntoTheWeightedMean() {
        SparkSession spark = SparkTestSession.get();
        GpuMonotoneSplineModel m = new GpuMonotoneSpline().setWeightCol("w").setBackend("cpu")
                .fit(points(spark, new double[] {0, 1, 1, 2}, new double[] {0, 1, 4, 5}, new double[] {1, 3, 1, 1}));
        assertEquals(1.75, m.predict(1.0), 0.0);
        assertEquals(1, m.fitInfo().points.duplicatesMerged());
    }

    @Test
    void isotonicSmoothingAndIsotonicModels() {
        SparkSession spark = SparkTestSession.get();
        Random r = new Random(5);
        int n = 300;
        double[] x = new double[n];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = i * 0.1;
            y[i] = Math.sqrt(x[i]) + 0.3 * r.nextGaussian();
        }
        Dataset<Row> df = points(spark, x, y, null);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new GpuMonotoneSpline().setBackend("cpu").fit(df));
        assertTrue(e.getMessage().contains("smoothing=isotonic"), e.getMessage());
        assertTrue(e.getMessage().startsWith("xCol 'x', yCol 'y' (points merged by x and sorted): y must be monotone"),
                "the columns are named (found by fuzzing, issue 18 item 8): " + e.getMessage());
        GpuMonotoneSplineModel m = new GpuMonotoneSpline().setSmoothing("isotonic").setKind("rational")
                .setBackend("cpu").fit(df);
        GpuIsotonicRegressionModel iso = new GpuIsotonicRegression().setFeaturesCol("x").setLabelCol("y")
                .setBackend("cpu").fit(df);
        GpuMonotoneSplineModel fromIso = GpuMonotoneSplineModel.fromIsotonic(iso, "rational");
        assertTrue(m.spline().sameBits(fromIso.spline()), "smoothing=isotonic = spline through the isotonic model");
        // the spline passes through the isotonic model's breakpoints and is monotone
        double[] b = iso.boundaryArray();
        assertArrayEquals(iso.predictionArray(), fromIso.predict(b), 0.0);
        double[] z = new double[3000];
        for (int i = 0; i < z.length; i++) {
            z[i] = x[n - 1] * i / (z.length - 1);
        }
        double[] v = m.predict(z);
        for (int i = 1; i < v.length; i++) {
            assertTrue(v[i] >= v[i - 1]);
        }
    }

    @Test
    void badSettingsAndColumns() {
        SparkSession spark = SparkTestSession.get();
        assertMessage("kind must be schumaker or rational, got 'cubic'", () -> new GpuMonotoneSpline().setKind("cubic"));
        assertMessage("smoothing must be none or isotonic", () -> new GpuMonotoneSpline().setSmoothing("loess"));
        assertMessage("extrapolate must be clip, linear, nan or error", () -> new GpuMonotoneSpline()
                .setExtrapolate("wrap"));
        Dataset<Row> df = points(spark, new double[] {0, 1, 2}, new double[] {0, 1, 2}, new double[] {1, 0, 1});
        assertMessage("w must be finite and > 0", () -> new GpuMonotoneSpline().setWeightCol("w").fit(df));
        assertMessage("yCol 'nope' is not a column", () -> new GpuMonotoneSpline().setYCol("nope").fit(df));
        assertMessage("at least 2 points", () -> new GpuMonotoneSpline().fit(points(spark, new double[] {1, 1},
                new double[] {0, 1}, null)));
        assertMessage("slopeCol applies to kind=rational only", () -> new GpuMonotoneSpline().setSlopeCol("w").fit(df));
        GpuMonotoneSplineModel m = new GpuMonotoneSpline().fit(df).setExtrapolate("error");
        assertMessage("extrapolate=error", () -> m.predict(5.0));
        assertNull(m.getDerivativeCol());
    }

    static void assertMessage(String part, org.junit.jupiter.api.function.Executable e) {
        SplineCpuTest.assertMessage(part, e);
    }
}
