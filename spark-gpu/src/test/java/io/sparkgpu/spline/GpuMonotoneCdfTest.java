package io.sparkgpu.spline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.DoubleUnaryOperator;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** GpuMonotoneCdf on local[2]: exact quantiles, KS distance to the true CDF, ranks, density, persistence, errors. */
class GpuMonotoneCdfTest {
    static final StructType SCHEMA = new StructType().add("value", DataTypes.DoubleType)
            .add("w", DataTypes.DoubleType);

    static Dataset<Row> column(SparkSession spark, double[] v, double[] w, int parts) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < v.length; i++) {
            rows.add(RowFactory.create(Double.isNaN(v[i]) && i % 2 == 0 ? null : v[i], w == null ? 1.0 : w[i]));
        }
        return spark.createDataFrame(rows, SCHEMA).repartition(parts);
    }

    /** Hyndman and Fan's type 7 by brute force: sorted v, h = (n - 1) p. */
    static double type7(double[] sorted, double p) {
        double h = (sorted.length - 1) * p;
        int lo = (int) Math.floor(h);
        if (lo >= sorted.length - 1) {
            return sorted[sorted.length - 1];
        }
        return sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]);
    }

    /** The standard normal CDF (Abramowitz and Stegun 7.1.26, |error| < 1.5e-7). */
    static double phi(double z) {
        double x = Math.abs(z) / Math.sqrt(2);
        double t = 1 / (1 + 0.3275911 * x);
        double erf = 1 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                + t * 1.061405429)))) * Math.exp(-x * x);
        return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
    }

    @Test
    void knotsAreTheExactQuantilesWhateverThePartitioning() {
        SparkSession spark = SparkTestSession.get();
        Random r = new Random(5);
        double[] v = new double[3001];
        for (int i = 0; i < v.length; i++) {
            v[i] = i % 7 == 0 ? 2.5 : Math.floor(r.nextGaussian() * 1000) / 100; // ties and an atom
        }
        double[] sorted = v.clone();
        Arrays.sort(sorted);
        int k = 97;
        double[] local = SplineCdf.quantileKnots(v, null, k, "value", null);
        for (int j = 0; j < k; j++) {
            assertEquals(type7(sorted, SplineCdf.level(j, k)), local[j], 1e-12 * Math.abs(local[j]), "level " + j);
        }
        for (int parts : new int[] {1, 5}) {
            double[] dist = SplineCdf.quantileKnots(column(spark, v, null, parts), "value", null, k,
                    org.apache.spark.storage.StorageLevel.MEMORY_ONLY());
            assertArrayEquals(local, dist, 0.0, "partitions " + parts);
        }
        // equal weights are no weights (scale invariance); a heavy row pulls the quantiles towards it
        double[] w3 = new double[v.length];
        Arrays.fill(w3, 3.0);
        double[] local3 = SplineCdf.quantileKnots(v, w3, k, "value", "w");
        assertArrayEquals(local, local3, 1e-9); // 3i / (3n - 3) against i / (n - 1): equal up to rounding
        assertArrayEquals(local3, SplineCdf.quantileKnots(column(spark, v, w3, 3), "value", "w", k,
                org.apache.spark.storage.StorageLevel.MEMORY_ONLY()), 0.0);
        double[] heavy = w3.clone();
        int top = 0;
        for (int i = 0; i < v.length; i++) {
            top = v[i] > v[top] ? i : top;
        }
        heavy[top] = 3.0 * v.length;
        double[] hq = SplineCdf.quantileKnots(v, heavy, k, "value", "w");
        // the definition by linear search: u_i = (S_i + w_i/2 - w_0/2) / (W - w_0/2 - w_n-1/2), v over u linear
        int n = v.length;
        double total = 3.0 * (n - 1) + heavy[top];
        double d = total - 1.5 - heavy[top] / 2;
        for (int j = 0; j < k; j++) {
            double p = SplineCdf.level(j, k);
            double expect = sorted[n - 1];
            for (int i = 0; i + 1 < n; i++) {
                double ui = (3.0 * i + 1.5 - 1.5) / d;
                double un = i + 1 == n - 1 ? 1.0 : (3.0 * (i + 1)) / d;
                if (p >= ui && p < un) {
                    expect = sorted[i] + (p - ui) / (un - ui) * (sorted[i + 1] - sorted[i]);
                    break;
                }
            }
            assertEquals(expect, hq[j], 1e-9 * (1 + Math.abs(expect)), "weighted level " + j);
        }
        // half the weight on the maximum: above level ~2/3 the quantiles lie between the two largest values
        assertTrue(hq[k * 3 / 4] > sorted[n - 2] && hq[k * 3 / 4] < sorted[n - 1]);
    }

    /**
     * Weighted knots with uneven weights: the weight sums are exact (fixed point), so the local array and the Spark
     * sort split into 1, 5 or 8 partitions give the same bits, and so do two fits of one DataFrame (the range
     * partitioner samples with a seed that changes between fits); they are the definition's quantiles, computed
     * here from exact prefix sums by linear search.
     */
    @Test
    void weightedKnotsHaveTheSameBitsWhateverThePartitioning() {
        SparkSession spark = SparkTestSession.get();
        Random r = new Random(8);
        int n = 4001;
        double[] v = new double[n];
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = i % 9 == 0 ? 1.25 : Math.floor(r.nextGaussian() * 1e4) / 100; // ties and an atom
            w[i] = 0.5 + 1.5 * r.nextDouble();
        }
        int k = 129;
        double[] local = SplineCdf.quantileKnots(v, w, k, "value", "w");

        // the reference: rows by value then weight, exact S_i and W, u_i = (S_i + w_i/2 - w_0/2) / (W - w_0/2 -
        // w_n-1/2), then v over u linear
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> v[a] != v[b] ? Double.compare(v[a], v[b]) : Double.compare(w[a], w[b]));
        java.math.BigDecimal[] before = new java.math.BigDecimal[n + 1];
        before[0] = java.math.BigDecimal.ZERO;
        for (int i = 0; i < n; i++) {
            before[i + 1] = before[i].add(new java.math.BigDecimal(w[order[i]]));
        }
        java.math.BigDecimal half0 = new java.math.BigDecimal(w[order[0]] / 2);
        java.math.BigDecimal d = before[n].subtract(half0).subtract(new java.math.BigDecimal(w[order[n - 1]] / 2));
        double[] u = new double[n];
        for (int i = 0; i < n; i++) {
            u[i] = before[i].add(new java.math.BigDecimal(w[order[i]] / 2)).subtract(half0)
                    .divide(d, java.math.MathContext.DECIMAL128).doubleValue();
        }
        for (int j = 0; j < k; j++) {
            double p = SplineCdf.level(j, k);
            double expect = v[order[n - 1]];
            for (int i = 0; i + 1 < n; i++) {
                if (p >= u[i] && p < u[i + 1]) {
                    double lo = v[order[i]];
                    expect = lo + (p - u[i]) / (u[i + 1] - u[i]) * (v[order[i + 1]] - lo);
                    break;
                }
            }
            assertEquals(expect, local[j], 1e-12 * Math.max(1, Math.abs(expect)), "weighted level " + j);
        }

        // the sort's partitions as asked (no coalescing by AQE), so the sorted rows are really split differently
        org.apache.spark.sql.RuntimeConfig conf = spark.conf();
        String shuffle = conf.get("spark.sql.shuffle.partitions");
        String coalesce = conf.get("spark.sql.adaptive.coalescePartitions.enabled");
        try {
            conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false");
            for (int parts : new int[] {1, 5, 8}) {
                conf.set("spark.sql.shuffle.partitions", parts);
                assertArrayEquals(local, SplineCdf.quantileKnots(column(spark, v, w, parts), "value", "w", k,
                        org.apache.spark.storage.StorageLevel.MEMORY_ONLY()), 0.0, "partitions " + parts);
            }
            Dataset<Row> df = column(spark, v, w, 8).cache();
            GpuMonotoneCdf est = new GpuMonotoneCdf().setWeightCol("w").setNumKnots(k).setBackend("cpu");
            assertArrayEquals(local, est.fit(df).knotQuantiles(), 0.0, "first fit");
            assertArrayEquals(local, est.fit(df).knotQuantiles(), 0.0, "second fit");
            df.unpersist();
        } finally {
            conf.set("spark.sql.shuffle.partitions", shuffle);
            conf.set("spark.sql.adaptive.coalescePartitions.enabled", coalesce);
        }
    }

    private static double ks(GpuMonotoneCdfModel m, double lo, double hi, DoubleUnaryOperator truth) {
        double[] z = new double[4001];
        for (int i = 0; i < z.length; i++) {
            z[i] = lo + (hi - lo) * i / (z.length - 1);
        }
        double[] c = m.cdf(z);
        double d = 0;
        for (int i = 0; i < z.length; i++) {
            d = Math.max(d, Math.abs(c[i] - truth.applyAsDouble(z[i])));
        }
        return d;
    }

    @Test
    void ksDistanceToTheTrueCdfWithinTheDkwBound() {
        SparkSession spark = SparkTestSession.get();
        int n = 10000;
        int k = 257;
        // DKW: P(sup |F_n - F| > e) <= 2 exp(-2 n e^2); e at probability 1e-6, plus the knot spacing of the spline
        double bound = Math.sqrt(Math.log(2 / 1e-6) / (2 * n)) + 1.0 / (k - 1);
        Random r = new Random(11);
        double[] uni = r.doubles(n).toArray();
        double[] nor = new double[n];
        double[] logn = new double[n];
        for (int i = 0; i < n; i++) {
            nor[i] = r.nextGaussian();
            logn[i] = Math.exp(0.8 * r.nextGaussian());
        }
        Object[][] cases = {
            {uni, -0.5, 1.5, (DoubleUnaryOperator) x -> Math.min(1, Math.max(0, x))},
            {nor, -5.0, 5.0, (DoubleUnaryOperator) GpuMonotoneCdfTest::phi},
            {logn, 0.0, 30.0, (DoubleUnaryOperator) x -> x <= 0 ? 0 : phi(Math.log(x) / 0.8)},
        };
        for (Object[] c : cases) {
            GpuMonotoneCdfModel m = new GpuMonotoneCdf().setNumKnots(k).setBackend("cpu")
                    .fit(column(spark, (double[]) c[0], null, 3));
            double d = ks(m, (double) c[1], (double) c[2], (DoubleUnaryOperator) c[3]);
            assertTrue(d < bound, "KS " + d + " >= " + bound);
            if (c != cases[2]) {
                continue;
            }
            // a sample of about 4000 rows: the same bound at its size
            GpuMonotoneCdfModel s = new GpuMonotoneCdf().setNumKnots(k).setSampleSize(4000).setSeed(3)
                    .setBackend("cpu").fit(column(spark, (double[]) c[0], null, 3));
            double ds = ks(s, (double) c[1], (double) c[2], (DoubleUnaryOperator) c[3]);
            assertTrue(ds < Math.sqrt(Math.log(2 / 1e-6) / (2 * 3000)) + 1.0 / (k - 1), "sampled KS " + ds);
        }
    }

    @Test
    void quantilesWithinOneRankDensityAndInverse() {
        SparkSession spark = SparkTestSession.get();
        int n = 801;
        Random r = new Random(2);
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = Math.exp(r.nextGaussian());
        }
        double[] sorted = v.clone();
        Arrays.sort(sorted);
        GpuMonotoneCdfModel m = new GpuMonotoneCdf().setNumKnots(n).setBackend("cpu").fit(column(spark, v, null, 2));
        double[] ps = r.doubles(500).toArray();
        ps[0] = 0;
        ps[1] = 1;
        double[] q = m.quantile(ps);
        for (int i = 0; i < ps.length; i++) {
            double h = (n - 1) * ps[i];
            int lo = (int) Math.floor(h);
            int hi = Math.min(n - 1, (int) Math.ceil(h));
            assertTrue(q[i] >= sorted[lo] && q[i] <= sorted[hi], "p " + ps[i] + ": " + q[i]);
            assertEquals(ps[i], m.cdf(q[i]), 1e-9, "cdf(quantile(p)) = p");
        }
        assertEquals(sorted[0], q[0], 0.0);
        assertEquals(sorted[n - 1], q[1], 0.0);
        // with fewer knots: exact at the levels
        GpuMonotoneCdfModel m9 = new GpuMonotoneCdf().setNumKnots(9).setBackend("cpu").fit(column(spark, v, null, 2));
        for (int j = 0; j < 9; j++) {
            assertEquals(type7(sorted, j / 8.0), m9.quantile(j / 8.0), 1e-12 * sorted[n - 1]);
        }
        // density = the CDF's derivative (central differences), 0 outside; cdf 0 below, 1 above
        double[] z = {0.5, 1.0, 2.0, 3.5};
        double[] dens = m.density(z);
        for (int i = 0; i < z.length; i++) {
            double e = 1e-6;
            double fd = (m.cdf(z[i] + e) - m.cdf(z[i] - e)) / (2 * e);
            assertEquals(fd, dens[i], 1e-4 * (1 + dens[i]), "density at " + z[i]);
            assertTrue(dens[i] > 0);
        }
        assertEquals(0.0, m.cdf(sorted[0] - 1), 0.0);
        assertEquals(1.0, m.cdf(sorted[n - 1] + 1), 0.0);
        assertEquals(0.0, m.density(sorted[n - 1] + 1), 0.0);
        assertTrue(Double.isNaN(m.cdf(Double.NaN)));
    }

    @Test
    void transformAndSaveLoadKeepTheBits(@TempDir Path dir) throws Exception {
        SparkSession spark = SparkTestSession.get();
        double[] v = new Random(4).doubles(500, -3, 9).toArray();
        GpuMonotoneCdfModel m = new GpuMonotoneCdf().setNumKnots(33).setDensityCol("pdf").setBackend("cpu")
                .fit(column(spark, v, null, 2));
        String p = dir.resolve("cdf").toString();
        m.write().save(p);
        GpuMonotoneCdfModel back = GpuMonotoneCdfModel.load(p);
        assertTrue(m.spline().sameBits(back.spline()));
        assertArrayEquals(m.knotQuantiles(), back.knotQuantiles(), 0.0);
        assertEquals("pdf", back.getDensityCol());
        assertEquals(33, back.getNumKnots());
        assertTrue(dir.resolve("cdf").resolve(io.sparkgpu.ml.ParamsIO.INTEGRITY).toFile().exists());
        double[] z = {-4, -3, 0.25, 5, 9, 10};
        List<Row> rows = back.transform(column(spark, new double[] {-4, -3, 0.25, 5, 9, 10, Double.NaN}, null, 1))
                .collectAsList();
        double[] c = m.cdf(z);
        double[] d = m.density(z);
        int seen = 0;
        for (Row r : rows) {
            if (r.isNullAt(0)) {
                assertTrue(r.isNullAt(2) && r.isNullAt(3));
                continue;
            }
            int i = Arrays.binarySearch(z, r.getDouble(0));
            assertEquals(c[i], r.getDouble(2), 0.0);
            assertEquals(d[i], r.getDouble(3), 0.0);
            seen++;
        }
        assertEquals(z.length, seen);
        String est = dir.resolve("est").toString();
        new GpuMonotoneCdf().setNumKnots(17).setInputCol("v").write().save(est);
        assertEquals(17, GpuMonotoneCdf.load(est).getNumKnots());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GpuMonotoneSplineModel.load(p));
        assertTrue(e.getMessage().contains("GpuMonotoneCdfModel"), e.getMessage());
    }

    /**
     * The whole column's knots without a sort ({@link CountedQuantiles}: a sampled map, exact counts per bin, the
     * values of the needed bins only) are the bits of the local sort, on a column larger than the map's sample with
     * an atom, ties, a tight cluster and a long tail.
     */
    @Test
    void countedWholeColumnQuantilesAreTheSortedOnes() {
        SparkSession spark = SparkTestSession.get();
        org.apache.spark.sql.Column id = org.apache.spark.sql.functions.col("id");
        Dataset<Row> df = spark.range(0, 240_007, 1, 4).select(org.apache.spark.sql.functions
                .when(id.mod(11).equalTo(0), 4.0)
                .when(id.mod(7).equalTo(0), org.apache.spark.sql.functions.randn(3).multiply(1e-3).plus(10))
                .otherwise(org.apache.spark.sql.functions.floor(org.apache.spark.sql.functions.exp(
                        org.apache.spark.sql.functions.randn(5).multiply(2)).multiply(1e4)).divide(1e4))
                .as("value")).cache();
        double[] v = df.as(org.apache.spark.sql.Encoders.DOUBLE()).collectAsList().stream()
                .mapToDouble(Double::doubleValue).toArray();
        double[] local = SplineCdf.quantileKnots(v, null, 1025, "value", null);
        double[] counted = CountedQuantiles.knots(df, "value", 1025, io.sparkgpu.cuda.Backend.CPU);
        assertArrayEquals(local, counted, 0.0, "not the fallback sort: the counted path itself");
        assertArrayEquals(local, SplineCdf.quantileKnots(df, "value", null, 1025,
                org.apache.spark.storage.StorageLevel.MEMORY_ONLY()), 0.0);
        df.unpersist();
    }

    @Test
    void badInputIsRefusedWithTheRule() {
        SparkSession spark = SparkTestSession.get();
        double[] ok = {1, 2, 3, 4};
        String msg = assertThrows(IllegalArgumentException.class, () -> new GpuMonotoneCdf()
                .fit(column(spark, new double[] {1, 2, Double.NaN, 4, Double.NaN}, null, 2))).getMessage();
        assertTrue(msg.contains("value must be finite and not null") && msg.contains("2 bad rows"), msg);
        msg = assertThrows(IllegalArgumentException.class, () -> new GpuMonotoneCdf().setWeightCol("w")
                .fit(column(spark, ok, new double[] {1, 0, 1, 1}, 2))).getMessage();
        assertTrue(msg.contains("w must be finite and > 0, got 0.0"), msg);
        msg = assertThrows(IllegalArgumentException.class, () -> new GpuMonotoneCdf()
                .fit(column(spark, new double[] {7, 7, 7}, null, 2))).getMessage();
        assertTrue(msg.contains("value must hold at least 2 distinct values"), msg);
        msg = assertThrows(IllegalArgumentException.class, () -> new GpuMonotoneCdf()
                .fit(column(spark, new double[] {7}, null, 1))).getMessage();
        assertTrue(msg.contains("value must hold at least 2 values, got 1"), msg);
        msg = assertThrows(IllegalArgumentException.class, () -> new GpuMonotoneCdf().setInputCol("nope")
                .fit(column(spark, ok, null, 1))).getMessage();
        assertTrue(msg.contains("inputCol 'nope' is not a column"), msg);
        assertEquals("numKnots must be in [2, 16777216], got 1", assertThrows(IllegalArgumentException.class,
                () -> new GpuMonotoneCdf().setNumKnots(1)).getMessage());
        assertEquals("sampleSize must be 0 (the whole column) or >= 2, got 1",
                assertThrows(IllegalArgumentException.class, () -> new GpuMonotoneCdf().setSampleSize(1)).getMessage());
        GpuMonotoneCdfModel m = new GpuMonotoneCdf().setBackend("cpu").fit(column(spark, ok, null, 1));
        assertEquals("p must be in [0, 1], got 1.5", assertThrows(IllegalArgumentException.class,
                () -> m.quantile(1.5)).getMessage());
        assertEquals("p must be in [0, 1], got NaN", assertThrows(IllegalArgumentException.class,
                () -> m.quantile(Double.NaN)).getMessage());
        assertEquals("p must be in [0, 1], got -0.1", assertThrows(IllegalArgumentException.class,
                () -> m.quantile(new double[] {0.5, -0.1})).getMessage());
    }
}
