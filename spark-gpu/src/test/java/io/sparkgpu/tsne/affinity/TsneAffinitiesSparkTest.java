package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.SparkTestSession;
import io.sparkgpu.tsne.TsneConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.apache.spark.api.java.JavaRDD;
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

/** The distributed affinities equal the local pipeline bit for bit, for 1, 3 and 7 partitions, both kNN modes. */
class TsneAffinitiesSparkTest {
    static final StructType VEC = new StructType().add("features", SQLDataTypes.VectorType(), true);
    static final StructType ARR = new StructType().add("f", DataTypes.createArrayType(DataTypes.DoubleType), true);

    static Dataset<Row> frame(List<Row> rows, int parts, StructType schema, boolean emptyPartition) {
        SparkSession spark = SparkTestSession.get();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        JavaRDD<Row> rdd = jsc.parallelize(rows, parts);
        if (emptyPartition) {
            rdd = rdd.mapPartitionsWithIndex((p, it) -> p == 1 ? Collections.<Row>emptyIterator() : it, true);
        }
        return spark.createDataFrame(rdd, schema);
    }

    static List<Row> points(Random r, int n, int d) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            double[] v = new double[d];
            for (int t = 0; t < d; t++) {
                v[t] = i % 5 == 0 ? r.nextInt(3) : r.nextGaussian() * (1 + t); // some exact ties
            }
            rows.add(RowFactory.create(Vectors.dense(v)));
        }
        return rows;
    }

    /** The local pipeline on the rows of df in order. */
    static SparseRows local(Dataset<Row> df, double perplexity, int k) {
        List<Row> rows = df.collectAsList();
        int n = rows.size();
        int d = ((org.apache.spark.ml.linalg.Vector) rows.get(0).get(0)).size();
        float[] x = new float[n * d];
        for (int i = 0; i < n; i++) {
            double[] v = ((org.apache.spark.ml.linalg.Vector) rows.get(i).get(0)).toArray();
            for (int t = 0; t < d; t++) {
                x[i * d + t] = (float) v[t];
            }
        }
        KnnGraph g = TsneAffinities.knn(x, n, d, k, Backend.CPU);
        return JointProbabilities.symmetrize(g, TsneAffinities.conditional(g, perplexity, Backend.CPU));
    }

    /** Concatenates the slices (in partition order) into one slice of all rows. */
    static SparseRows concat(TsneAffinitiesSpark.Result res) {
        List<SparseRows> slices = res.collect();
        assertEquals(res.numPartitions(), slices.size());
        int n = res.n;
        int[] rowPtr = new int[n + 1];
        List<Integer> col = new ArrayList<>();
        List<Double> val = new ArrayList<>();
        int row = 0;
        for (int p = 0; p < slices.size(); p++) {
            SparseRows s = slices.get(p);
            assertEquals(res.offsets[p], s.rowOffset);
            assertEquals(res.offsets[p + 1] - res.offsets[p], s.rows);
            assertEquals(n, s.n);
            for (int r = 0; r < s.rows; r++) {
                for (int e = s.rowPtr[r]; e < s.rowPtr[r + 1]; e++) {
                    col.add(s.col[e]);
                    val.add(s.val[e]);
                }
                rowPtr[++row] = col.size();
            }
        }
        assertEquals(n, row);
        return new SparseRows(n, 0, n, rowPtr, col.stream().mapToInt(Integer::intValue).toArray(),
                val.stream().mapToDouble(Double::doubleValue).toArray());
    }

    static void assertSameRows(SparseRows want, SparseRows got) {
        assertArrayEquals(want.rowPtr, got.rowPtr);
        assertArrayEquals(want.col, got.col);
        assertArrayEquals(want.val, got.val); // bitwise (assertArrayEquals on doubles compares exactly)
    }

    @Test
    void equalsLocalForAnyPartitioningBothKnnModes() {
        Random r = new Random(3);
        List<Row> rows = points(r, 47, 3);
        double perp = 4;
        int k = 12;
        SparseRows want = null;
        for (int parts : new int[] {1, 3, 7}) {
            for (long bytes : new long[] {TsneAffinitiesSpark.DEFAULT_BROADCAST_BYTES, 0}) {
                Dataset<Row> df = frame(rows, parts, VEC, false);
                if (want == null) {
                    want = local(df, perp, k);
                    TsneAffinitiesTest.checkSymmetricStochastic(want);
                }
                TsneAffinitiesSpark.Result res = TsneAffinitiesSpark.fromVectors(df, "features", perp, k, Backend.CPU,
                        bytes);
                assertEquals(47, res.n);
                assertEquals(k, res.k);
                assertEquals(parts, res.numPartitions());
                assertSameRows(want, concat(res));
                res.unpersist();
            }
        }
    }

    @Test
    void emptyPartitionsArraysAndDefaultK() {
        Random r = new Random(4);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            rows.add(RowFactory.create((Object) new double[] {r.nextGaussian(), r.nextInt(4)}));
        }
        Dataset<Row> df = frame(rows, 4, ARR, true);
        List<Row> kept = df.collectAsList();
        List<Row> asVec = new ArrayList<>();
        for (Row row : kept) {
            List<Double> l = row.getList(0);
            asVec.add(RowFactory.create(Vectors.dense(l.get(0), l.get(1))));
        }
        int n = kept.size();
        SparseRows want = local(frame(asVec, 1, VEC, false), 3, TsneConfig.defaultK(3, n));
        for (long bytes : new long[] {1L << 20, 0}) {
            TsneAffinitiesSpark.Result res = TsneAffinitiesSpark.fromVectors(df, "f", 3, 0, Backend.AUTO, bytes);
            assertEquals(9, res.k);
            assertEquals(res.offsets[1], res.offsets[2]); // partition 1 is empty
            assertSameRows(want, concat(res));
            res.unpersist();
        }
    }

    @Test
    void badInputsNameTheColumn() {
        Random r = new Random(5);
        List<Row> ok = points(r, 10, 2);
        List<Row> nan = new ArrayList<>(ok);
        nan.set(6, RowFactory.create(Vectors.dense(1, Double.NaN)));
        String m = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromVectors(
                frame(nan, 3, VEC, false), "features", 2, 5, Backend.CPU, 1 << 20)).getMessage();
        assertTrue(m.contains("featuresCol 'features'") && m.contains("NaN"), m);
        List<Row> inf = new ArrayList<>(ok);
        inf.set(2, RowFactory.create(Vectors.dense(Double.POSITIVE_INFINITY, 1)));
        m = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromVectors(
                frame(inf, 3, VEC, false), "features", 2, 5, Backend.CPU, 1 << 20)).getMessage();
        assertTrue(m.contains("featuresCol 'features'") && m.contains("Infinity"), m);
        List<Row> mixed = new ArrayList<>(ok);
        mixed.set(9, RowFactory.create(Vectors.dense(1, 2, 3)));
        for (int parts : new int[] {1, 3}) { // within one partition and across partitions
            m = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromVectors(
                    frame(mixed, parts, VEC, false), "features", 2, 5, Backend.CPU, 1 << 20)).getMessage();
            assertTrue(m.contains("featuresCol 'features'") && m.contains("different sizes"), m);
        }
        List<Row> nul = new ArrayList<>(ok);
        nul.set(4, RowFactory.create((Object) null));
        m = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromVectors(
                frame(nul, 3, VEC, false), "features", 2, 5, Backend.CPU, 1 << 20)).getMessage();
        assertTrue(m.contains("featuresCol 'features'") && m.contains("null"), m);
        m = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromVectors(
                frame(ok.subList(0, 3), 1, VEC, false), "features", 1.5, 2, Backend.CPU, 1 << 20)).getMessage();
        assertTrue(m.contains("featuresCol 'features'") && m.contains("at least 4 points"), m);
        m = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromVectors(
                frame(ok, 2, VEC, false), "features", 10, 0, Backend.CPU, 1 << 20)).getMessage();
        assertTrue(m.contains("lower the perplexity"), m);
        m = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromVectors(
                frame(ok, 2, VEC, false), "features", 2, 10, Backend.CPU, 1 << 20)).getMessage();
        assertTrue(m.contains("lower k"), m);
        m = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromVectors(
                frame(ok, 2, VEC, false), "nope", 2, 5, Backend.CPU, 1 << 20)).getMessage();
        assertTrue(m.contains("featuresCol") && m.contains("'nope' does not exist"), m);
        // duplicates: the executor's error reaches the caller as IllegalArgumentException naming the points
        List<Row> dup = new ArrayList<>(ok);
        for (int i : new int[] {3, 5, 7}) {
            dup.set(i, ok.get(1));
        }
        m = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromVectors(
                frame(dup, 3, VEC, false), "features", 2, 5, Backend.CPU, 0)).getMessage();
        assertTrue(m.contains("exact duplicates of point") && m.contains("raise the perplexity above 3"), m);
    }

    @Test
    void edgesEqualLocal() {
        SparkSession spark = SparkTestSession.get();
        Random r = new Random(6);
        int n = 25;
        int m = 120;
        int[] a = new int[m];
        int[] b = new int[m];
        double[] w = new double[m];
        List<Row> rows = new ArrayList<>();
        for (int e = 0; e < m; e++) {
            a[e] = r.nextInt(n - 3); // points 22..24 only as targets, some isolated
            b[e] = (a[e] + 1 + r.nextInt(n - 4)) % (n - 3);
            w[e] = r.nextInt(4) == 0 ? 0.0 : r.nextDouble() * 10;
            rows.add(RowFactory.create((long) a[e], b[e], w[e]));
        }
        SparseRows want = JointProbabilities.fromEdges(n, a, b, w);
        StructType schema = new StructType().add("src", DataTypes.LongType).add("dst", DataTypes.IntegerType)
                .add("w", DataTypes.DoubleType);
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        for (int parts : new int[] {1, 3, 7}) {
            Dataset<Row> df = spark.createDataFrame(jsc.parallelize(rows, parts), schema);
            TsneAffinitiesSpark.Result res = TsneAffinitiesSpark.fromEdges(df, "src", "dst", "w", n);
            assertSameRows(want, concat(res));
            res.unpersist();
        }
        List<Row> bad = new ArrayList<>(rows);
        bad.set(7, RowFactory.create(3L, 3, 1.0));
        String msg = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromEdges(
                spark.createDataFrame(jsc.parallelize(bad, 2), schema), "src", "dst", "w", n)).getMessage();
        assertTrue(msg.contains("self loop") && msg.contains("src"), msg);
        bad.set(7, RowFactory.create(3L, 30, 1.0));
        msg = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromEdges(
                spark.createDataFrame(jsc.parallelize(bad, 2), schema), "src", "dst", "w", n)).getMessage();
        assertTrue(msg.contains("outside 0..24"), msg);
        bad.set(7, RowFactory.create(3L, 4, -2.0));
        msg = assertThrows(IllegalArgumentException.class, () -> TsneAffinitiesSpark.fromEdges(
                spark.createDataFrame(jsc.parallelize(bad, 2), schema), "src", "dst", "w", n)).getMessage();
        assertTrue(msg.contains("weight -2.0") && msg.contains("w)"), msg);
    }
}
