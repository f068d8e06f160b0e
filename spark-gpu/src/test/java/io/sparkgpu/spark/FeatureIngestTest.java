package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.common.SparkErrors;
import io.sparkgpu.common.Features;
import io.sparkgpu.testutil.SparkTestSession;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link FeatureIngest} against the Row path ({@link Features#read} / {@link Features#readWeight} in the loop of
 * KMeansTrainer.pack), bit for bit and block by block, for every supported column type, plain, cached and
 * read back from Parquet (the columnar path), for 1, 2 and 7 partitions; and the same errors naming the column.
 */
class FeatureIngestTest {
    static SparkSession spark;
    static JavaSparkContext jsc;
    static Path tmp;
    static int parquetCount;

    /** The caller's rule used in most comparisons: finite values, -0.0 becomes 0.0 (k-means' Features.clean). */
    static final FeatureIngest.PointCheck CLEAN = (x, off, d) -> Features.clean(x, off, d, "features", false);

    @BeforeAll
    static void start() throws IOException {
        spark = SparkTestSession.get();
        jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        tmp = Files.createTempDirectory("feature-ingest-test");
    }

    @AfterAll
    static void cleanUp() throws IOException {
        try (var s = Files.walk(tmp)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    // ------------------------------------------------------------------------------- data

    static double value(Random r) {
        switch (r.nextInt(8)) {
            case 0:
                return -0.0;
            case 1:
                return Double.MIN_VALUE * r.nextInt(1000); // subnormal
            case 2:
                return r.nextGaussian() * 1e300;
            case 3:
                return 0.0;
            default:
                return r.nextGaussian();
        }
    }

    enum Kind {
        VECTOR, DOUBLE, FLOAT, INT, LONG, SHORT, DECIMAL
    }

    static DataType featureType(Kind k) {
        switch (k) {
            case VECTOR:
                return SQLDataTypes.VectorType();
            case DOUBLE:
                return DataTypes.createArrayType(DataTypes.DoubleType, true);
            case FLOAT:
                return DataTypes.createArrayType(DataTypes.FloatType, false);
            case INT:
                return DataTypes.createArrayType(DataTypes.IntegerType, true);
            case LONG:
                return DataTypes.createArrayType(DataTypes.LongType, true);
            case SHORT:
                return DataTypes.createArrayType(DataTypes.ShortType, true);
            default:
                return DataTypes.createArrayType(DataTypes.createDecimalType(12, 4), true);
        }
    }

    static Object feature(Kind k, Random r, int d) {
        switch (k) {
            case VECTOR:
                if (r.nextBoolean()) {
                    double[] v = new double[d];
                    for (int j = 0; j < d; j++) {
                        v[j] = value(r);
                    }
                    return Vectors.dense(v);
                } else {
                    int nnz = r.nextInt(d + 1);
                    int[] idx = r.ints(0, d).distinct().limit(nnz).sorted().toArray();
                    double[] v = new double[idx.length];
                    for (int j = 0; j < v.length; j++) {
                        v[j] = value(r);
                    }
                    return Vectors.sparse(d, idx, v);
                }
            case DOUBLE: {
                Double[] a = new Double[d];
                for (int j = 0; j < d; j++) {
                    a[j] = value(r);
                }
                return a;
            }
            case FLOAT: {
                Float[] a = new Float[d];
                for (int j = 0; j < d; j++) {
                    a[j] = (float) (r.nextBoolean() ? -0.0 : r.nextGaussian() * 1e30);
                }
                return a;
            }
            case INT: {
                Integer[] a = new Integer[d];
                for (int j = 0; j < d; j++) {
                    a[j] = r.nextInt();
                }
                return a;
            }
            case LONG: {
                Long[] a = new Long[d];
                for (int j = 0; j < d; j++) {
                    a[j] = r.nextLong(); // not all exactly representable: rounds like Long.doubleValue
                }
                return a;
            }
            case SHORT: {
                Short[] a = new Short[d];
                for (int j = 0; j < d; j++) {
                    a[j] = (short) r.nextInt();
                }
                return a;
            }
            default: {
                BigDecimal[] a = new BigDecimal[d];
                for (int j = 0; j < d; j++) {
                    a[j] = BigDecimal.valueOf(r.nextLong() % 100_000_000L, 4);
                }
                return a;
            }
        }
    }

    /** n rows of features (size d) and, unless weightType is null, a weight column; in {@code slices} partitions. */
    static Dataset<Row> frame(Kind k, DataType weightType, int n, int d, int slices, long seed) {
        Random r = new Random(seed);
        StructType schema = new StructType().add("id", DataTypes.LongType, false).add("features", featureType(k), true);
        if (weightType != null) {
            schema = schema.add("w", weightType, true);
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Object f = feature(k, r, d);
            if (weightType == null) {
                rows.add(RowFactory.create((long) i, f));
            } else {
                Object w = weightType.equals(DataTypes.IntegerType) ? (Object) r.nextInt(5) : (Object) (r.nextDouble() * 3);
                rows.add(RowFactory.create((long) i, f, w));
            }
        }
        return spark.createDataFrame(jsc.parallelize(rows, slices), schema);
    }

    /** df written to Parquet and read back, split into small file partitions (some with no row group: empty). */
    static Dataset<Row> viaParquet(Dataset<Row> df) {
        String dir = tmp.resolve("p" + (parquetCount++)).toString();
        df.write().parquet(dir);
        return spark.read().parquet(dir);
    }

    // ------------------------------------------------------------------------------- the Row path

    /** What KMeansTrainer.pack's Row loop gives, with {@code check} in place of Features.clean. */
    static List<FeatureBlock> rowPath(Dataset<?> df, String featuresCol, String weightCol, FeatureIngest.PointCheck check) {
        StructType schema = df.schema();
        int fIdx = Features.checkFeatures(schema, featuresCol);
        int wIdx = weightCol == null ? -1 : Features.checkWeight(schema, weightCol);
        return df.toDF().javaRDD().mapPartitionsWithIndex((pid, rows) -> {
            List<double[]> xs = new ArrayList<>();
            List<Double> ws = new ArrayList<>();
            int d = -1;
            while (rows.hasNext()) {
                Row r = rows.next();
                double[] p = Features.read(r, fIdx, featuresCol);
                if (d < 0) {
                    d = p.length;
                    if (d == 0) {
                        throw Features.emptyVectors(featuresCol);
                    }
                } else if (p.length != d) {
                    throw Features.differentSizes(featuresCol, d, p.length);
                }
                if (check != null) {
                    check.check(p, 0, p.length);
                }
                xs.add(p);
                ws.add(wIdx < 0 ? 1.0 : Features.readWeight(r, wIdx, weightCol));
            }
            int n = xs.size();
            double[] x = new double[n * Math.max(d, 0)];
            double[] w = new double[n];
            for (int i = 0; i < n; i++) {
                System.arraycopy(xs.get(i), 0, x, i * d, d);
                w[i] = ws.get(i);
            }
            return List.of(new FeatureBlock(x, w, n, n == 0 ? 0 : d, pid)).iterator();
        }, true).collect();
    }

    static long[] bits(double[] a) {
        long[] b = new long[a.length];
        for (int i = 0; i < a.length; i++) {
            b[i] = Double.doubleToRawLongBits(a[i]);
        }
        return b;
    }

    /** Both paths on df: same partitions, same n and d, same bits. Returns the new blocks. */
    static List<FeatureBlock> assertSameAsRowPath(Dataset<?> df, String weightCol, FeatureIngest.PointCheck check, String what) {
        List<FeatureBlock> want = rowPath(df, "features", weightCol, check);
        List<FeatureBlock> got = FeatureIngest.read(df, "features", weightCol, check).collect();
        assertEquals(want.size(), got.size(), what + ": number of blocks");
        assertEquals(df.javaRDD().getNumPartitions(), got.size(), what + ": one block per partition");
        for (int p = 0; p < got.size(); p++) {
            FeatureBlock a = want.get(p);
            FeatureBlock b = got.get(p);
            String at = what + ", partition " + p;
            assertEquals(p, b.partition, at);
            assertEquals(a.n, b.n, at + ": n");
            assertEquals(a.d, b.d, at + ": d");
            assertEquals(b.n * b.d, b.x.length, at + ": x.length");
            assertEquals(b.n, b.w.length, at + ": w.length");
            assertArrayEquals(bits(a.x), bits(b.x), at + ": x bits");
            assertArrayEquals(bits(a.w), bits(b.w), at + ": w bits");
        }
        return got;
    }

    // ------------------------------------------------------------------------------- equality with the Row path

    @Test
    void everyTypeStorageAndPartitioningGivesTheRowPathsBits() {
        DataType[] weights = {DataTypes.DoubleType, DataTypes.IntegerType, null};
        int c = 0;
        for (Kind k : Kind.values()) {
            for (int slices : new int[] {1, 2, 7}) {
                DataType wt = weights[c++ % weights.length];
                String wcol = wt == null ? null : "w";
                Dataset<Row> df = frame(k, wt, 40 + slices, 5, slices, 17 * slices + k.ordinal());
                String what = k + " weight " + wt + " slices " + slices;
                assertEquals(FeatureIngest.Path.ROWS, FeatureIngest.path(df, "features", wcol), what);
                assertSameAsRowPath(df, wcol, CLEAN, what + " uncached");
                assertSameAsRowPath(df, wcol, null, what + " uncached, no check (-0.0 kept)");

                df.cache();
                try {
                    df.count();
                    assertSameAsRowPath(df, wcol, CLEAN, what + " cached");
                } finally {
                    df.unpersist(true);
                }

                Dataset<Row> pq = viaParquet(df);
                assertEquals(FeatureIngest.Path.COLUMNAR, FeatureIngest.path(pq, "features", wcol), what + " parquet");
                assertSameAsRowPath(pq, wcol, null, what + " parquet");
            }
        }
    }

    @Test
    void parquetSplitIntoManyPartitionsIncludingEmptyOnes() {
        String[] keys = {"spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes"};
        Dataset<Row> pq = viaParquet(frame(Kind.VECTOR, DataTypes.DoubleType, 300, 4, 3, 5));
        Dataset<Row> pqArr = viaParquet(frame(Kind.DOUBLE, DataTypes.IntegerType, 300, 4, 2, 6));
        try {
            spark.conf().set(keys[0], "1024");
            spark.conf().set(keys[1], "0");
            for (Dataset<Row> df : List.of(pq, pqArr)) {
                Dataset<Row> fresh = spark.read().parquet(df.inputFiles());
                assertEquals(FeatureIngest.Path.COLUMNAR, FeatureIngest.path(fresh, "features", "w"));
                List<FeatureBlock> got = assertSameAsRowPath(fresh, "w", CLEAN, "split parquet");
                assertTrue(got.size() > 3, "expected many file splits, got " + got.size());
                assertTrue(got.stream().anyMatch(b -> b.n == 0), "expected splits without a row group");
                assertEquals(300, got.stream().mapToInt(b -> b.n).sum());
                // the weight column first, and a projection that is not a plain column: still the same bits
                assertSameAsRowPath(fresh.select("w", "features"), "w", CLEAN, "reordered parquet");
                Dataset<Row> computed = fresh.withColumn("w", fresh.col("w").plus(1));
                assertEquals(FeatureIngest.Path.ROWS, FeatureIngest.path(computed, "features", "w"));
                assertSameAsRowPath(computed, "w", CLEAN, "computed weight over parquet");
            }
        } finally {
            for (String key : keys) {
                spark.conf().unset(key);
            }
        }
    }

    @Test
    void orcGivesTheRowPathsBitsToo() {
        for (Kind k : new Kind[] {Kind.DOUBLE, Kind.FLOAT, Kind.INT}) { // ORC keeps no ml vector UDT (reads back a struct)
            Dataset<Row> df = frame(k, DataTypes.DoubleType, 200, 6, 3, 40 + k.ordinal());
            String dir = tmp.resolve("orc" + (parquetCount++)).toString();
            df.write().orc(dir);
            Dataset<Row> orc = spark.read().orc(dir);
            assertEquals(FeatureIngest.Path.COLUMNAR, FeatureIngest.path(orc, "features", "w"), "ORC " + k);
            assertSameAsRowPath(orc, "w", CLEAN, "ORC " + k);
        }
    }

    @Test
    void emptyPartitionsGiveEmptyBlocks() {
        Dataset<Row> df = frame(Kind.VECTOR, null, 3, 4, 7, 9);
        List<FeatureBlock> got = assertSameAsRowPath(df, null, CLEAN, "3 rows in 7 partitions");
        assertEquals(7, got.size());
        int empty = 0;
        for (FeatureBlock b : got) {
            if (b.n == 0) {
                empty++;
                assertEquals(0, b.d);
                assertEquals(0, b.x.length);
                assertEquals(0, b.w.length);
            } else {
                assertEquals(4, b.d);
                for (double w : b.w) {
                    assertEquals(1.0, w);
                }
            }
        }
        assertEquals(4, empty);
        Dataset<Row> none = frame(Kind.DOUBLE, DataTypes.DoubleType, 0, 4, 2, 9);
        List<FeatureBlock> zero = FeatureIngest.read(viaParquet(none), "features", "w", CLEAN).collect();
        assertTrue(zero.stream().allMatch(b -> b.n == 0 && b.d == 0), zero.toString());
    }

    @Test
    void largePartitionsGrowAndTrim() {
        Dataset<Row> df = frame(Kind.DOUBLE, DataTypes.DoubleType, 5000, 33, 2, 3);
        assertSameAsRowPath(df, "w", CLEAN, "5000 x 33");
        assertSameAsRowPath(viaParquet(df), "w", CLEAN, "5000 x 33 parquet");
        long chunk = FeatureIngest.CHUNK_VALUES;
        try { // several chunks per partition (local[2] runs the tasks in this JVM): 33 values per point, 7 points a chunk
            FeatureIngest.CHUNK_VALUES = 250;
            assertSameAsRowPath(df, "w", CLEAN, "5000 x 33 in chunks of 7 points");
            FeatureIngest.CHUNK_VALUES = 33;
            assertSameAsRowPath(df, null, CLEAN, "5000 x 33 in chunks of 1 point");
        } finally {
            FeatureIngest.CHUNK_VALUES = chunk;
        }
    }

    // ------------------------------------------------------------------------------- chunk sinks

    /** What one partition's sink saw (local[2]: the tasks run in this JVM). */
    static final class Seen {
        final List<int[]> chunks = new ArrayList<>(); // first, points, d
        final List<double[]> xs = new ArrayList<>();
        final List<double[]> ws = new ArrayList<>();
        final List<String> calls = new ArrayList<>();
        int passed = -1;
        FeatureBlock block;
    }

    static final java.util.concurrent.ConcurrentHashMap<String, Seen> SEEN = new java.util.concurrent.ConcurrentHashMap<>();

    /** Records every call, copying the chunks it is handed; {@code failAt}: chunk() throws at that chunk (-1: never). */
    static final class RecordingSink implements FeatureIngest.ChunkSink {
        final Seen seen;
        final int failAt;

        RecordingSink(Seen seen, int failAt) {
            this.seen = seen;
            this.failAt = failAt;
        }

        @Override
        public void chunk(double[] x, double[] w, int first, int points, int d) {
            synchronized (seen) {
                seen.calls.add("chunk");
                if (seen.chunks.size() == failAt) {
                    throw new IllegalArgumentException("the sink broke at chunk " + failAt);
                }
                seen.chunks.add(new int[] {first, points, d});
                seen.xs.add(Arrays.copyOf(x, points * d));
                seen.ws.add(Arrays.copyOf(w, points));
            }
        }

        @Override
        public void finish(FeatureBlock block, int passed) {
            synchronized (seen) {
                seen.calls.add("finish");
                seen.passed = passed;
                seen.block = block;
            }
        }

        @Override
        public void close() {
            synchronized (seen) {
                seen.calls.add("close");
            }
        }
    }

    static FeatureIngest.ChunkSinks recording(String run, int failAt) {
        return pid -> new RecordingSink(SEEN.computeIfAbsent(run + "/" + pid, k -> new Seen()), failAt);
    }

    /**
     * Reads df with a recording sink: the blocks are those without a sink, and each partition's sink got, in order,
     * its full chunks (exactly the block's points [0, p), chunk by chunk), then the block and p, then one close.
     */
    static List<FeatureBlock> assertSinksSeeTheChunks(Dataset<?> df, String weightCol, String what) {
        String run = java.util.UUID.randomUUID().toString();
        List<FeatureBlock> want = FeatureIngest.read(df, "features", weightCol, CLEAN).collect();
        List<FeatureBlock> got = FeatureIngest.read(df, "features", weightCol, CLEAN, recording(run, -1)).collect();
        assertEquals(want.size(), got.size(), what);
        for (int p = 0; p < got.size(); p++) {
            FeatureBlock b = got.get(p);
            String at = what + ", partition " + p;
            assertEquals(want.get(p).n, b.n, at);
            assertArrayEquals(bits(want.get(p).x), bits(b.x), at + ": x with a sink");
            assertArrayEquals(bits(want.get(p).w), bits(b.w), at + ": w with a sink");
            Seen s = SEEN.remove(run + "/" + p);
            assertTrue(s != null, at + ": no sink opened");
            List<String> calls = new ArrayList<>(java.util.Collections.nCopies(s.chunks.size(), "chunk"));
            calls.add("finish");
            calls.add("close");
            assertEquals(calls, s.calls, at);
            assertEquals(b.n, s.block.n, at);
            assertArrayEquals(bits(b.x), bits(s.block.x), at + ": block handed to the sink");
            assertArrayEquals(bits(b.w), bits(s.block.w), at + ": block handed to the sink");
            int chunkPoints = b.n == 0 ? 1 : (int) Math.max(1, FeatureIngest.CHUNK_VALUES / b.d);
            int next = 0;
            for (int c = 0; c < s.chunks.size(); c++) {
                int[] ch = s.chunks.get(c);
                assertArrayEquals(new int[] {next, chunkPoints, b.d}, ch, at + ", chunk " + c);
                assertArrayEquals(bits(Arrays.copyOfRange(b.x, next * b.d, (next + chunkPoints) * b.d)),
                        bits(s.xs.get(c)), at + ", chunk " + c + ": x");
                assertArrayEquals(bits(Arrays.copyOfRange(b.w, next, next + chunkPoints)), bits(s.ws.get(c)),
                        at + ", chunk " + c + ": w");
                next += chunkPoints;
            }
            assertEquals(next, s.passed, at + ": points handed over before finish");
            if (b.n == 0) {
                assertEquals(0, s.passed, at);
            } else { // the last chunk, full or not, is never handed over as a chunk: the sink takes it from the block
                assertTrue(s.passed < b.n && b.n - s.passed <= chunkPoints, at + ": " + s.passed + " of " + b.n);
            }
        }
        return got;
    }

    @Test
    void chunkSinksSeeEveryFullChunkInOrderThenTheBlock() {
        // partitions of 0, 1, 5, 7, 14 and 100 points: empty, single partial chunk, an exact multiple, many chunks
        StructType schema = new StructType().add("features", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
                .add("w", DataTypes.DoubleType, false);
        Random r = new Random(3);
        List<List<Row>> parts = new ArrayList<>();
        for (int n : new int[] {100, 0, 1, 5, 7, 14}) {
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                double[] f = new double[33];
                for (int j = 0; j < f.length; j++) {
                    f[j] = value(r);
                }
                rows.add(RowFactory.create(f, r.nextDouble() * 3));
            }
            parts.add(rows);
        }
        Dataset<Row> df = spark.createDataFrame(jsc.parallelize(parts, parts.size()).flatMap(List::iterator), schema);
        Dataset<Row> pq = viaParquet(df);
        long chunk = FeatureIngest.CHUNK_VALUES;
        try {
            for (long values : new long[] {chunk, 250, 33, 5 * 33}) { // one chunk; 7 points; 1 point; exactly 5 points
                FeatureIngest.CHUNK_VALUES = values;
                List<FeatureBlock> got = assertSinksSeeTheChunks(df, "w", "rows, chunks of " + values + " values");
                assertEquals(List.of(100, 0, 1, 5, 7, 14), got.stream().map(b -> b.n).collect(
                        java.util.stream.Collectors.toList()));
                assertSinksSeeTheChunks(pq, "w", "parquet, chunks of " + values + " values");
                assertSinksSeeTheChunks(df, null, "rows without weights, chunks of " + values + " values");
            }
        } finally {
            FeatureIngest.CHUNK_VALUES = chunk;
        }
    }

    @Test
    void chunkSinksAreClosedAfterErrorsAndTheirOwnErrorsFailTheTask() {
        List<Object[]> rows = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            rows.add(new Object[] {arr(1.0 + i, 2.0)});
        }
        rows.add(new Object[] {arr(Double.NaN, 2.0)});
        Dataset<Row> bad = rows(DOUBLES, null, rows.toArray(new Object[0][]));
        Dataset<Row> good = rows(DOUBLES, null, rows.subList(0, 10).toArray(new Object[0][]));
        long chunk = FeatureIngest.CHUNK_VALUES;
        try {
            FeatureIngest.CHUNK_VALUES = 4; // 2 points a chunk
            for (Dataset<Row> df : List.of(bad, viaParquet(bad))) {
                String run = java.util.UUID.randomUUID().toString();
                assertEquals("featuresCol 'features' contains NaN (at index 0); k-means needs finite features",
                        message(() -> FeatureIngest.read(df, "features", null, CLEAN, recording(run, -1)).collect()));
                Seen s = SEEN.remove(run + "/0");
                List<String> calls = new ArrayList<>(java.util.Collections.nCopies(5, "chunk"));
                calls.add("close"); // 5 full chunks of 2 points, the error in the 11th point: no finish, one close
                assertEquals(calls, s.calls);
            }
            for (Dataset<Row> df : List.of(good, viaParquet(good))) {
                String run = java.util.UUID.randomUUID().toString();
                assertEquals("the sink broke at chunk 2",
                        message(() -> FeatureIngest.read(df, "features", null, CLEAN, recording(run, 2)).collect()));
                assertEquals(List.of("chunk", "chunk", "chunk", "close"), SEEN.remove(run + "/0").calls);
            }
        } finally {
            FeatureIngest.CHUNK_VALUES = chunk;
        }
    }

    // ------------------------------------------------------------------------------- errors

    static String message(Supplier<?> action) {
        Exception e = assertThrows(Exception.class, action::get);
        return SparkErrors.unwrap(e).getMessage();
    }

    /** Both paths fail with the same message, which is {@code expected}. */
    static void assertSameError(Dataset<Row> df, String weightCol, FeatureIngest.PointCheck check, String expected) {
        String oldMsg = message(() -> rowPath(df, "features", weightCol, check));
        String newMsg = message(() -> FeatureIngest.read(df, "features", weightCol, check).collect());
        assertEquals(expected, oldMsg, "Row path");
        assertEquals(expected, newMsg, "FeatureIngest");
    }

    static Dataset<Row> rows(DataType featureType, DataType weightType, Object[]... rows) {
        StructType schema = new StructType().add("features", featureType, true);
        if (weightType != null) {
            schema = schema.add("w", weightType, true);
        }
        List<Row> list = new ArrayList<>();
        for (Object[] r : rows) {
            list.add(RowFactory.create(r));
        }
        return spark.createDataFrame(jsc.parallelize(list, 1), schema);
    }

    /** A boxed array (what Spark accepts for an array column of a Row); null elements allowed. */
    static Double[] arr(Double... v) {
        return v;
    }

    static final DataType DOUBLES = DataTypes.createArrayType(DataTypes.DoubleType, true);

    @Test
    void nullsRaggedAndEmptyVectorsAreClearErrorsOnBothPaths() {
        List<Object[]> ok = new ArrayList<>();
        ok.add(new Object[] {arr(1.0, 2.0), 1.0});
        Dataset<Row> nullValue = rows(DOUBLES, DataTypes.DoubleType, ok.get(0), new Object[] {null, 1.0});
        Dataset<Row> nullElem = rows(DOUBLES, DataTypes.DoubleType, ok.get(0), new Object[] {arr(1.0, null), 1.0});
        Dataset<Row> ragged = rows(DOUBLES, DataTypes.DoubleType, ok.get(0), new Object[] {arr(1.0, 2.0, 3.0), 1.0});
        Dataset<Row> empty = rows(DOUBLES, DataTypes.DoubleType, new Object[] {arr(), 1.0});
        Dataset<Row> nullWeight = rows(DOUBLES, DataTypes.DoubleType, ok.get(0), new Object[] {arr(1.0, 2.0), null});
        Dataset<Row> negWeight = rows(DOUBLES, DataTypes.DoubleType, ok.get(0), new Object[] {arr(1.0, 2.0), -1.0});
        Dataset<Row> nanWeight = rows(DOUBLES, DataTypes.DoubleType, ok.get(0), new Object[] {arr(1.0, 2.0), Double.NaN});
        Dataset<Row> infWeight = rows(DOUBLES, DataTypes.DoubleType, new Object[] {arr(1.0, 2.0), Double.POSITIVE_INFINITY});
        Dataset<Row> vecRagged = rows(SQLDataTypes.VectorType(), null, new Object[] {Vectors.dense(1, 2)},
                new Object[] {Vectors.sparse(3, new int[] {1}, new double[] {4})});
        Dataset<Row> vecNull = rows(SQLDataTypes.VectorType(), null, new Object[] {Vectors.dense(1, 2)}, new Object[] {null});
        Dataset<Row> vecEmpty = rows(SQLDataTypes.VectorType(), null, new Object[] {Vectors.sparse(0, new int[0], new double[0])});

        for (boolean parquet : new boolean[] {false, true}) {
            java.util.function.UnaryOperator<Dataset<Row>> in = df -> parquet ? viaParquet(df) : df;
            assertSameError(in.apply(nullValue), "w", CLEAN, "featuresCol 'features' contains a null value");
            assertSameError(in.apply(nullElem), "w", CLEAN, "featuresCol 'features' contains an array with a null element");
            assertSameError(in.apply(ragged), "w", CLEAN, "featuresCol 'features' has vectors of different sizes (2 and 3)");
            assertSameError(in.apply(empty), "w", CLEAN, "featuresCol 'features' contains empty vectors");
            assertSameError(in.apply(nullWeight), "w", CLEAN, "weightCol 'w' contains a null value");
            assertSameError(in.apply(negWeight), "w", CLEAN, "weightCol 'w' must hold finite weights >= 0, found -1.0");
            assertSameError(in.apply(nanWeight), "w", CLEAN, "weightCol 'w' must hold finite weights >= 0, found NaN");
            assertSameError(in.apply(infWeight), "w", CLEAN, "weightCol 'w' must hold finite weights >= 0, found Infinity");
            assertSameError(in.apply(vecRagged), null, CLEAN, "featuresCol 'features' has vectors of different sizes (2 and 3)");
            assertSameError(in.apply(vecNull), null, CLEAN, "featuresCol 'features' contains a null value");
            assertSameError(in.apply(vecEmpty), null, CLEAN, "featuresCol 'features' contains empty vectors");
        }
    }

    @Test
    void nonFiniteValuesGoToThePointCheck() {
        Dataset<Row> df = rows(DOUBLES, null, new Object[] {arr(1.0, -0.0)},
                new Object[] {arr(Double.NaN, Double.NEGATIVE_INFINITY)});
        for (Dataset<Row> d : List.of(df, viaParquet(df))) {
            // no check: the values are kept as they are (the caller's rule decides)
            List<FeatureBlock> b = FeatureIngest.read(d, "features", null, null).collect();
            assertArrayEquals(bits(new double[] {1.0, -0.0, Double.NaN, Double.NEGATIVE_INFINITY}), bits(b.get(0).x));
            // the check sees each packed point at its offset and its error reaches the driver unchanged
            assertSameError(d, null, CLEAN, "featuresCol 'features' contains NaN (at index 0); k-means needs finite features");
            FeatureIngest.PointCheck seen = (x, off, dim) -> {
                throw new IllegalArgumentException("point at " + off + " of size " + dim + ": " + Arrays.toString(
                        Arrays.copyOfRange(x, off, off + dim)));
            };
            assertEquals("point at 0 of size 2: [1.0, -0.0]",
                    message(() -> FeatureIngest.read(d, "features", null, seen).collect()));
        }
    }

    @Test
    void wrongTypesAreSchemaErrorsNamingTheColumn() {
        StructType schema = new StructType().add("x", DataTypes.StringType).add("f", DOUBLES)
                .add("s", DataTypes.createArrayType(DataTypes.StringType)).add("w", DataTypes.StringType);
        Dataset<Row> df = spark.createDataFrame(List.of(RowFactory.create("a", arr(1.0), new String[] {"b"}, "c")),
                schema);
        assertEquals("featuresCol 'x' must be a vector or array<double> column, but has type string",
                assertThrows(IllegalArgumentException.class, () -> FeatureIngest.read(df, "x", null, null)).getMessage());
        assertEquals("featuresCol 's' must be a vector or array<double> column, but has type array<string>",
                assertThrows(IllegalArgumentException.class, () -> FeatureIngest.read(df, "s", null, null)).getMessage());
        assertEquals("weightCol 'w' must be numeric, but has type string",
                assertThrows(IllegalArgumentException.class, () -> FeatureIngest.read(df, "f", "w", null)).getMessage());
        assertEquals("featuresCol: column 'nope' does not exist. Available columns: x, f, s, w",
                assertThrows(IllegalArgumentException.class, () -> FeatureIngest.read(df, "nope", null, null)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> FeatureIngest.checkSchema(df.schema(), "f", "x"));
        FeatureIngest.checkSchema(df.schema(), "f", "");
    }

    @Test
    void oddColumnNamesAreQuoted() {
        StructType schema = new StructType().add("a.b`c", DOUBLES).add("w w", DataTypes.IntegerType);
        Dataset<Row> df = spark.createDataFrame(List.of(RowFactory.create(arr(1.0, 2.0), 3)), schema);
        List<FeatureBlock> b = FeatureIngest.read(df, "a.b`c", "w w", null).collect();
        assertArrayEquals(new double[] {1.0, 2.0}, b.get(0).x);
        assertArrayEquals(new double[] {3.0}, b.get(0).w);
    }
}
