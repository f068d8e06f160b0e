package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.regression.IsotonicRegression;
import org.apache.spark.ml.regression.IsotonicRegressionModel;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The estimator on local[2] Spark: equality with MLlib, partition independence, params, persistence, errors. */
class GpuIsotonicRegressionTest {
    private static final StructType SCHEMA = new StructType()
            .add("label", DataTypes.DoubleType).add("features", DataTypes.DoubleType).add("w", DataTypes.DoubleType);

    private static SparkSession spark() {
        return SparkTestSession.get();
    }

    /**
     * Rows in {@code inputParts} partitions dealt round-robin, so rows of one feature value sit in several input
     * partitions (equal features straddle every partition edge until the range partitioning gathers them).
     */
    private static Dataset<Row> frame(double[] x, double[] y, double[] w, int inputParts) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < x.length; i++) {
            rows.add(RowFactory.create(y[i], x[i], w == null ? 1.0 : w[i]));
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark().sparkContext());
        return spark().createDataFrame(jsc.parallelize(rows, inputParts), SCHEMA);
    }

    private static void assertClose(double[] expected, double[] actual, String what) {
        assertEquals(expected.length, actual.length, what + ": lengths differ");
        for (int i = 0; i < expected.length; i++) {
            double tol = 1e-12 * Math.max(Math.abs(expected[i]), Double.MIN_NORMAL);
            assertEquals(expected[i], actual[i], tol, what + "[" + i + "]");
        }
    }

    private static IsoTestData data(long seed, int n, int distinct) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] x = new double[n];
        double[] y = new double[n];
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = r.nextInt(distinct) * 0.5;
            y[i] = 3 + Math.log1p(x[i]) + r.nextGaussian() * 0.7;
            w[i] = r.nextInt(10) == 0 ? 0.0 : 0.25 + r.nextDouble();
        }
        return new IsoTestData(x, y, w);
    }

    @Test
    void equalsMLlibForAnyPartitioningWithTiesAndZeroWeights() {
        for (boolean iso : new boolean[] {true, false}) {
            IsoTestData d = data(iso ? 1 : 2, 2000, 300);
            Dataset<Row> df = frame(d.x, d.y, d.w, 3);
            IsotonicRegressionModel ml = new IsotonicRegression().setIsotonic(iso).setWeightCol("w").fit(df);
            GpuIsotonicRegressionModel first = null;
            for (int parts : iso ? new int[] {0, 1, 3, 7} : new int[] {0, 2, 5}) {
                // parts 0: the driver-side small path; else the range path with that many ranges
                GpuIsotonicRegressionModel m;
                String old = System.getProperty(IsotonicTrainer.LOCAL_ROWS);
                System.setProperty(IsotonicTrainer.LOCAL_ROWS, parts == 0 ? "1000000" : "0");
                try {
                    m = new GpuIsotonicRegression().setIsotonic(iso).setWeightCol("w").setBackend("cpu")
                            .setNumPartitions(parts).fit(df);
                } finally {
                    if (old == null) {
                        System.clearProperty(IsotonicTrainer.LOCAL_ROWS);
                    } else {
                        System.setProperty(IsotonicTrainer.LOCAL_ROWS, old);
                    }
                }
                assertEquals(parts == 0, m.timings().containsKey("collect"), "path taken: " + m.timings());
                assertClose(ml.boundaries().toArray(), m.boundaryArray(), "boundaries (parts=" + parts + ")");
                assertClose(ml.predictions().toArray(), m.predictionArray(), "predictions (parts=" + parts + ")");
                assertEquals(iso, m.getIsotonic());
                if (first == null) {
                    first = m;
                } else {
                    assertArrayEquals(first.boundaryArray(), m.boundaryArray(), "bitwise across partitionings");
                    assertArrayEquals(first.predictionArray(), m.predictionArray(), "bitwise across partitionings");
                }
            }
            assertTrue(first.trainingInfo().zeroWeightRows > 0, "zero-weight rows are counted");
            // transform agrees with MLlib's transform row by row
            List<Row> ours = first.transform(df).select("prediction").collectAsList();
            List<Row> theirs = ml.transform(df).select("prediction").collectAsList();
            for (int i = 0; i < ours.size(); i++) {
                assertEquals(theirs.get(i).getDouble(0), ours.get(i).getDouble(0),
                        1e-12 * Math.abs(theirs.get(i).getDouble(0)), "row " + i);
            }
        }
    }

    @Test
    void vectorFeaturesWithFeatureIndexAndUnweighted() {
        IsoTestData d = data(5, 800, 90);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < d.x.length; i++) {
            rows.add(RowFactory.create(d.y[i], Vectors.dense(-1.0, d.x[i], 7.0)));
        }
        StructType s = new StructType().add("label", DataTypes.DoubleType).add("features", SQLDataTypes.VectorType());
        Dataset<Row> df = spark().createDataFrame(rows, s);
        IsotonicRegressionModel ml = new IsotonicRegression().setFeatureIndex(1).fit(df);
        GpuIsotonicRegressionModel m = new GpuIsotonicRegression().setFeatureIndex(1).setBackend("cpu").fit(df);
        assertClose(ml.boundaries().toArray(), m.boundaryArray(), "boundaries");
        assertClose(ml.predictions().toArray(), m.predictionArray(), "predictions");
        assertEquals(ml.transform(df).select("prediction").collectAsList().size(),
                m.transform(df).select("prediction").collectAsList().size());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new GpuIsotonicRegression().setFeatureIndex(3).fit(df));
        assertTrue(e.getMessage().contains("featureIndex 3") && e.getMessage().contains("features"), e.getMessage());
    }

    @Test
    void badInputNamesTheColumnOrParameter() {
        double[] x = {1, 2, 3, 4};
        double[] y = {1, 2, 3, 4};
        double[] w = {1, 1, 1, 1};
        GpuIsotonicRegression est = new GpuIsotonicRegression().setWeightCol("w").setBackend("cpu");
        String[][] cases = {{"label", "NaN", "labelCol 'label'"}, {"features", "Infinity", "featuresCol 'features'"},
            {"w", "NaN", "weightCol 'w'"}, {"w", "-1", "weightCol 'w'"}};
        for (String[] c : cases) {
            double[] xx = x.clone();
            double[] yy = y.clone();
            double[] ww = w.clone();
            double v = Double.parseDouble(c[1]);
            if (c[0].equals("label")) {
                yy[2] = v;
            } else if (c[0].equals("features")) {
                xx[2] = v;
            } else {
                ww[2] = v;
            }
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> est.fit(frame(xx, yy, ww, 2)), c[0]);
            assertTrue(e.getMessage().contains(c[2]), c[0] + ": " + e.getMessage());
        }
        IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
                () -> est.fit(frame(new double[0], new double[0], new double[0], 1)));
        assertTrue(empty.getMessage().contains("empty"), empty.getMessage());
        IllegalArgumentException zeros = assertThrows(IllegalArgumentException.class,
                () -> est.fit(frame(x, y, new double[4], 2)));
        assertTrue(zeros.getMessage().contains("weightCol 'w'") && zeros.getMessage().contains("0"), zeros.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new GpuIsotonicRegression().setFeatureIndex(-1));
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> new GpuIsotonicRegression().setLabelCol("nope").fit(frame(x, y, w, 1)));
        assertTrue(missing.getMessage().contains("labelCol") && missing.getMessage().contains("nope"));
        IllegalArgumentException mls = assertThrows(IllegalArgumentException.class,
                () -> new GpuIsotonicRegression().setLoss("l1").setAlgorithm("mls").fit(frame(x, y, w, 1)));
        assertTrue(mls.getMessage().contains("algorithm=mls"), mls.getMessage());
    }

    @Test
    void autoDirectionClippingAndOutOfBounds() {
        int n = 500;
        double[] x = new double[n];
        double[] y = new double[n];
        SplittableRandom r = new SplittableRandom(9);
        for (int i = 0; i < n; i++) {
            x[i] = r.nextInt(100);
            y[i] = -0.1 * x[i] + r.nextGaussian();
        }
        Dataset<Row> df = frame(x, y, null, 3);
        GpuIsotonicRegressionModel auto = new GpuIsotonicRegression().setIncreasing("auto").setBackend("cpu").fit(df);
        assertFalse(auto.getIsotonic(), "decreasing data: auto picks antitonic");
        GpuIsotonicRegressionModel anti = new GpuIsotonicRegression().setIsotonic(false).setBackend("cpu").fit(df);
        assertArrayEquals(anti.predictionArray(), auto.predictionArray());
        assertTrue(Spearman.increasing(x, y, n) == auto.getIsotonic(), "distributed and local Spearman agree");

        GpuIsotonicRegressionModel clipped = new GpuIsotonicRegression().setIsotonic(false).setYMin(-5).setYMax(-1)
                .setBackend("cpu").fit(df);
        for (double v : clipped.predictionArray()) {
            assertTrue(v >= -5 && v <= -1, "clipped value " + v);
        }
        clipped.setOutOfBounds("nan");
        assertTrue(Double.isNaN(clipped.predict(-1)));
        assertTrue(Double.isNaN(clipped.predict(1000)));
        clipped.setOutOfBounds("error");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> clipped.predict(1000));
        assertTrue(e.getMessage().contains("outOfBounds"), e.getMessage());
        clipped.setOutOfBounds("clip");
        assertEquals(clipped.predictionArray()[0], clipped.predict(-1));
    }

    @Test
    void l1LossMatchesLocalEngine() {
        IsoTestData d = data(12, 600, 50);
        Dataset<Row> df = frame(d.x, d.y, d.w, 3);
        GpuIsotonicRegressionModel m = new GpuIsotonicRegression().setLoss("l1").setWeightCol("w").setNumPartitions(4)
                .fit(df);
        IsotonicConfig c = new IsotonicConfig();
        c.loss = IsotonicConfig.Loss.L1;
        IsotonicResult local = IsotonicLocal.fit(d.x, d.y, d.w, c);
        assertArrayEquals(local.boundaries, m.boundaryArray());
        assertArrayEquals(local.predictions, m.predictionArray());
    }

    @Test
    void saveLoadAndMLlibConversion(@TempDir Path dir) throws Exception {
        IsoTestData d = data(3, 400, 60);
        Dataset<Row> df = frame(d.x, d.y, d.w, 2);
        GpuIsotonicRegression est = new GpuIsotonicRegression().setWeightCol("w").setOutOfBounds("nan");
        GpuIsotonicRegressionModel m = est.fit(df);
        String path = dir.resolve("model").toString();
        m.write().overwrite().save(path);
        GpuIsotonicRegressionModel back = GpuIsotonicRegressionModel.load(path);
        assertArrayEquals(m.boundaryArray(), back.boundaryArray());
        assertArrayEquals(m.predictionArray(), back.predictionArray());
        assertEquals("nan", back.getOutOfBounds());
        assertEquals(m.uid(), back.uid());
        est.write().overwrite().save(dir.resolve("est").toString());
        assertEquals("w", GpuIsotonicRegression.load(dir.resolve("est").toString()).getWeightCol());

        IsotonicRegressionModel ml = m.toMLlib();
        assertArrayEquals(m.boundaryArray(), ml.boundaries().toArray());
        for (double q : new double[] {-3, 0.1, 7.3, 12.25, 40}) {
            if (q >= m.boundaryArray()[0] && q <= m.boundaryArray()[m.boundaryArray().length - 1]) {
                assertEquals(ml.predict(q), m.predict(q), 0.0, "same interpolation bits at " + q);
            }
        }
        GpuIsotonicRegressionModel again = GpuIsotonicRegressionModel.fromMLlib(ml);
        assertArrayEquals(m.predictionArray(), again.predictionArray());
        GpuIsotonicRegressionModel old = GpuIsotonicRegressionModel.fromOldMLlib(m.toOldMLlib());
        assertArrayEquals(m.boundaryArray(), old.boundaryArray());
        assertTrue(Files.exists(dir.resolve("model").resolve("data")));
    }
}
