package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.testutil.SparkTestSession;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The trainer's two routes on local[2]: the driver-side small path and the range path over packed arrays with 1, 2
 * and 7 ranges give the bits of the local engine ({@link IsotonicLocal}, which the Row-based trainer matched) for
 * ties, zero weights, vector features, every direction and both losses; validation errors are the same on both;
 * the small path runs one job without a shuffle.
 */
class IsotonicTrainerPathsTest {
    private static final StructType SCHEMA = new StructType()
            .add("label", DataTypes.DoubleType).add("features", DataTypes.DoubleType).add("w", DataTypes.DoubleType);

    private static SparkSession spark() {
        return SparkTestSession.get();
    }

    private static Dataset<Row> frame(double[] x, double[] y, double[] w, int inputParts) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < x.length; i++) {
            rows.add(RowFactory.create(y[i], x[i], w == null ? 1.0 : w[i]));
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark().sparkContext());
        return spark().createDataFrame(jsc.parallelize(rows, inputParts), SCHEMA);
    }

    /** Features in {x: 0.5 k}, k < distinct, plus -0.0/0.0 ties; 10% zero weights. */
    private static IsoTestData data(long seed, int n, int distinct, boolean decreasing) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] x = new double[n];
        double[] y = new double[n];
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = r.nextInt(distinct) * 0.5;
            if (x[i] == 0 && r.nextBoolean()) {
                x[i] = -0.0;
            }
            double t = 3 + Math.log1p(Math.abs(x[i])) + r.nextGaussian() * 0.7;
            y[i] = decreasing ? -t : t;
            w[i] = r.nextInt(10) == 0 ? 0.0 : 0.25 + r.nextDouble();
        }
        return new IsoTestData(x, y, w);
    }

    private static IsotonicConfig cfg(IsotonicConfig.Loss loss, IsotonicConfig.Direction dir, long localRows, int parts) {
        IsotonicConfig c = new IsotonicConfig();
        c.loss = loss;
        c.direction = dir;
        c.backend = Backend.CPU;
        c.localRows = localRows;
        c.numPartitions = parts;
        return c;
    }

    private static void assertSame(IsotonicResult expected, IsotonicResult got, String what) {
        assertArrayEquals(expected.boundaries, got.boundaries, what + ": boundaries");
        assertArrayEquals(expected.predictions, got.predictions, what + ": predictions");
        assertEquals(expected.isotonic, got.isotonic, what + ": direction");
        assertEquals(expected.numRows, got.numRows, what + ": rows");
        assertEquals(expected.zeroWeightRows, got.zeroWeightRows, what + ": zero-weight rows");
    }

    private static void assertSmallPath(IsotonicResult r, String what) {
        assertTrue(r.timings().containsKey("collect") && !r.timings().containsKey("range split+shuffle"),
                what + ": expected the small path, timings " + r.timings());
    }

    private static void assertRangePath(IsotonicResult r, int ranges, String what) {
        assertTrue(r.timings().containsKey("range split+shuffle"), what + ": expected the range path, " + r.timings());
        String split = r.phaseBackends().get("range split+shuffle");
        assertTrue(ranges == 1 ? split.contains("no shuffle") : split.contains(ranges + " ranges"),
                what + ": expected " + ranges + " ranges, got " + split);
    }

    /** Small path, range path with 1, 2 and 7 ranges, and the local engine: the same model bits. */
    private static void allPathsAgree(Dataset<Row> df, String featuresCol, int featureIndex, String weightCol,
                                      IsoTestData d, IsotonicConfig.Loss loss, IsotonicConfig.Direction dir) {
        String what = loss + " " + dir + " " + featuresCol + (weightCol == null ? " unweighted" : " weighted");
        IsotonicConfig lc = cfg(loss, dir, -1, 0);
        IsotonicResult ref = IsotonicLocal.fit(d.x, d.y, weightCol == null ? null : d.w, lc);
        IsotonicResult small = IsotonicTrainer.train(df, featuresCol, featureIndex, "label", weightCol, cfg(loss, dir, -1, 0));
        assertSmallPath(small, what);
        assertSame(ref, small, what + ", small path");
        for (int parts : new int[] {1, 2, 7}) {
            IsotonicResult r = IsotonicTrainer.train(df, featuresCol, featureIndex, "label", weightCol,
                    cfg(loss, dir, 0, parts));
            assertRangePath(r, parts, what);
            assertSame(ref, r, what + ", " + parts + " ranges");
        }
    }

    /**
     * The automatic number of ranges on GPUs: one while one executor holds every GPU and every row fits in one
     * device (the coalesce path reads its blocks in place, no shuffle), else one per GPU, more when a range would not
     * fit (several executors: the shuffle beats one task fetching the other executors' blocks).
     */
    @Test
    void gpuRangesStayOneWhileOneExecutorAndOneDeviceHoldEveryRow() {
        long h200 = 143_771L << 20;
        long fits = (long) (0.6 * h200 / 128); // rows one H200 takes
        assertEquals(1, IsotonicTrainer.rangesFor(400_000_000L, 2, 1, h200), "one executor with 2 H200s: one range");
        assertEquals(2, IsotonicTrainer.rangesFor(400_000_000L, 2, 2, h200), "an executor per GPU: a range each");
        assertEquals(1, IsotonicTrainer.rangesFor(fits, 8, 1, h200));
        assertEquals(2, IsotonicTrainer.rangesFor(fits + 1, 2, 1, h200), "beyond one device: one range per GPU");
        assertEquals(4, IsotonicTrainer.rangesFor(fits + 1, 4, 1, h200));
        assertEquals(4, IsotonicTrainer.rangesFor(3 * fits, 2, 2, h200), "2 per GPU when half the rows do not fit one");
        long small = 16L << 30;
        assertEquals(1, IsotonicTrainer.rangesFor(80_000_000L, 1, 1, small));
        assertEquals(3, IsotonicTrainer.rangesFor(5_000_000_000L, 3, 3, 1L << 40), "2^31 rows at most per range");
    }

    @Test
    void everyPathGivesTheSameBitsWithTiesAndZeroWeights() {
        for (IsotonicConfig.Loss loss : IsotonicConfig.Loss.values()) {
            for (IsotonicConfig.Direction dir : IsotonicConfig.Direction.values()) {
                IsoTestData d = data(loss.ordinal() * 10 + dir.ordinal(), 1500, 200,
                        dir == IsotonicConfig.Direction.DECREASING);
                Dataset<Row> df = frame(d.x, d.y, d.w, 3);
                allPathsAgree(df, "features", 0, "w", d, loss, dir);
            }
        }
        IsoTestData d = data(77, 1200, 150, true); // unweighted, auto must pick antitonic
        Dataset<Row> df = frame(d.x, d.y, null, 4);
        allPathsAgree(df, "features", 0, null, new IsoTestData(d.x, d.y, null), IsotonicConfig.Loss.L2,
                IsotonicConfig.Direction.AUTO);
        assertFalse(IsotonicTrainer.train(df, "features", 0, "label", null,
                cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.AUTO, 0, 7)).isotonic);
    }

    /**
     * Many rows per feature: least squares with a known direction pools equal features in each packed block before
     * the shuffle (one entry per feature and block), and gives the bits of the local engine, weighted or not, with 2
     * and 7 ranges, -0.0/0.0 ties and zero weights; the L1 loss, direction auto and distinct features do not pool.
     */
    @Test
    void equalFeaturesArePooledBeforeTheShuffleWithTheSameBits() {
        for (IsotonicConfig.Direction dir : new IsotonicConfig.Direction[] {IsotonicConfig.Direction.INCREASING,
            IsotonicConfig.Direction.DECREASING}) {
            IsoTestData d = data(40 + dir.ordinal(), 6000, 40, dir == IsotonicConfig.Direction.DECREASING);
            for (boolean weighted : new boolean[] {true, false}) {
                IsoTestData dd = weighted ? d : new IsoTestData(d.x, d.y, null);
                Dataset<Row> df = frame(dd.x, dd.y, dd.w, 5);
                IsotonicResult ref = IsotonicLocal.fit(dd.x, dd.y, dd.w, cfg(IsotonicConfig.Loss.L2, dir, -1, 0));
                for (int parts : new int[] {2, 7}) {
                    String what = dir + (weighted ? " weighted, " : " unweighted, ") + parts + " ranges";
                    IsotonicResult r = IsotonicTrainer.train(df, "features", 0, "label", weighted ? "w" : null,
                            cfg(IsotonicConfig.Loss.L2, dir, 0, parts));
                    assertRangePath(r, parts, what);
                    assertTrue(r.phaseBackends().get("range split+shuffle").contains("pooled"), what + ": "
                            + r.phaseBackends());
                    assertSame(ref, r, what);
                }
            }
        }
        IsoTestData d = data(44, 6000, 40, false);
        Dataset<Row> df = frame(d.x, d.y, d.w, 5);
        for (IsotonicConfig.Loss loss : IsotonicConfig.Loss.values()) {
            for (IsotonicConfig.Direction dir : IsotonicConfig.Direction.values()) {
                if (loss == IsotonicConfig.Loss.L2 && dir != IsotonicConfig.Direction.AUTO) {
                    continue;
                }
                IsotonicResult r = IsotonicTrainer.train(df, "features", 0, "label", "w", cfg(loss, dir, 0, 3));
                assertFalse(r.phaseBackends().get("range split+shuffle").contains("pooled"), loss + " " + dir);
                assertSame(IsotonicLocal.fit(d.x, d.y, d.w, cfg(loss, dir, -1, 0)), r, loss + " " + dir);
            }
        }
        IsoTestData distinct = data(45, 6000, 1 << 30, false); // (almost) no equal features: rows shuffled as they are
        IsotonicResult r = IsotonicTrainer.train(frame(distinct.x, distinct.y, distinct.w, 5), "features", 0, "label",
                "w", cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.INCREASING, 0, 3));
        assertFalse(r.phaseBackends().get("range split+shuffle").contains("pooled"), r.phaseBackends().toString());
        assertSame(IsotonicLocal.fit(distinct.x, distinct.y, distinct.w,
                cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.INCREASING, -1, 0)), r, "distinct features");
    }

    /**
     * A GPU fit with several ranges pools the packed blocks in groups by the executor caching them
     * ({@link io.sparkgpu.spark.ExecutorCoalescer}; here without a GPU, so on the CPU twin): whatever the number of
     * groups, every block lands in one group (group sizes within one of each other) and each range's merged points
     * are {@link IsoPoints#pool} of exactly that range's rows, as with one part per block.
     */
    @Test
    void poolingInGroupsOfBlocksByExecutorGivesEachRangeItsPoints() {
        IsoTestData d = data(46, 7000, 40, false);
        int blocks = 7;
        List<IsotonicTrainer.Packed> packed = new ArrayList<>();
        for (int b = 0; b < blocks; b++) {
            int from = d.x.length * b / blocks;
            int to = d.x.length * (b + 1) / blocks;
            packed.add(new IsotonicTrainer.Packed(new IsoBlock(Arrays.copyOfRange(d.x, from, to),
                    Arrays.copyOfRange(d.y, from, to), b == 3 ? null : Arrays.copyOfRange(d.w, from, to), to - from),
                    new IsotonicTrainer.Stats()));
        }
        org.apache.spark.api.java.JavaRDD<IsotonicTrainer.Packed> rdd = JavaSparkContext.fromSparkContext(
                spark().sparkContext()).parallelize(packed, blocks).persist(org.apache.spark.storage.StorageLevel.MEMORY_ONLY());
        try {
            rdd.count();
            double[] w = d.w.clone();
            int from3 = d.x.length * 3 / blocks;
            Arrays.fill(w, from3, d.x.length * 4 / blocks, 1.0); // block 3 is unweighted: weight 1
            IsoScales sc = IsoScales.forData(d.y, w, w.length);
            double[] upper = {4.0, 11.5};
            for (int groups : new int[] {0, 1, 2, 3, 7, 9}) {
                if (groups > 0) {
                    List<Integer> sizes = io.sparkgpu.spark.ExecutorCoalescer.coalesce(rdd, groups)
                            .mapPartitions(it -> {
                                int k = 0;
                                for (; it.hasNext(); it.next()) {
                                    k++;
                                }
                                return java.util.Collections.singletonList(k).iterator();
                            }).collect();
                    assertEquals(Math.min(groups, blocks), sizes.size(), groups + " groups");
                    assertEquals(blocks, sizes.stream().mapToInt(Integer::intValue).sum(), groups + " groups");
                    assertTrue(java.util.Collections.max(sizes) - java.util.Collections.min(sizes) <= 1,
                            groups + " groups: " + sizes);
                }
                for (boolean negate : new boolean[] {false, true}) {
                    List<List<IsoPoints>> ranges = IsotonicTrainer.splitPooled(rdd, upper, negate, sc,
                            IsoColumns.DEFAULT, groups, Backend.AUTO).collect();
                    assertEquals(upper.length + 1, ranges.size());
                    long rows = 0;
                    long zero = 0;
                    for (int r = 0; r < ranges.size(); r++) {
                        double lo = r == 0 ? Double.NEGATIVE_INFINITY : upper[r - 1];
                        double hi = r == upper.length ? Double.POSITIVE_INFINITY : upper[r];
                        List<Double> xs = new ArrayList<>();
                        List<Double> ys = new ArrayList<>();
                        List<Double> ws = new ArrayList<>();
                        for (int i = 0; i < d.x.length; i++) {
                            if (d.x[i] > lo && d.x[i] <= hi) {
                                xs.add(d.x[i]);
                                ys.add(d.y[i]);
                                ws.add(w[i]);
                            }
                        }
                        IsoPoints want = IsoPoints.pool(xs.stream().mapToDouble(Double::doubleValue).toArray(),
                                ys.stream().mapToDouble(Double::doubleValue).toArray(),
                                ws.stream().mapToDouble(Double::doubleValue).toArray(), xs.size(), negate, sc, false,
                                IsoColumns.DEFAULT);
                        IsoPoints got = IsoPoints.merge(ranges.get(r), IsoColumns.DEFAULT);
                        String what = groups + " groups, negate=" + negate + ", range " + r;
                        assertTrue(groups == 0 ? ranges.get(r).size() <= blocks
                                : ranges.get(r).size() <= Math.min(groups, blocks), what + ": parts");
                        assertEquals(want.n, got.n, what + ": features");
                        assertArrayEquals(want.x, got.x, what + ": features");
                        assertArrayEquals(want.acc, got.acc, what + ": exact sums");
                        rows += got.rows; // a part's row counts travel with its first range: only their sum counts
                        zero += got.zeroWeightRows;
                    }
                    IsoPoints whole = IsoPoints.pool(d.x, d.y, w, d.x.length, negate, sc, false, IsoColumns.DEFAULT);
                    assertEquals(whole.rows, rows, groups + " groups: rows");
                    assertEquals(whole.zeroWeightRows, zero, groups + " groups: zero-weight rows");
                }
            }
        } finally {
            rdd.unpersist(false);
        }
    }

    /** The distinct-value estimate from a sample's equal pairs. */
    @Test
    void distinctEstimateFromEqualPairs() {
        assertEquals(Long.MAX_VALUE, IsotonicTrainer.distinctEstimate(new double[] {1, 2, 3}));
        assertEquals(6, IsotonicTrainer.distinctEstimate(new double[] {1, 1, 2, 3})); // 6 pairs, 1 equal
        assertEquals(1, IsotonicTrainer.distinctEstimate(new double[] {5, 5, 5, 5}));
        double[] s = new double[4000]; // 4000 draws from 10^4 equally common values: about 10^4
        SplittableRandom r = new SplittableRandom(1);
        for (int i = 0; i < s.length; i++) {
            s[i] = r.nextInt(10_000);
        }
        Arrays.sort(s);
        long est = IsotonicTrainer.distinctEstimate(s);
        assertTrue(est > 8_000 && est < 12_500, "estimate " + est);
        assertEquals(Long.MAX_VALUE, IsotonicTrainer.distinctEstimate(new double[0]));
    }

    @Test
    void vectorFeaturesDenseAndSparse() {
        IsoTestData d = data(5, 900, 120, false);
        List<Row> rows = new ArrayList<>();
        double[] x = d.x.clone();
        for (int i = 0; i < x.length; i++) {
            if (i % 3 == 0) { // sparse: element 1 stored, or absent (then 0.0)
                if (i % 6 == 0) {
                    x[i] = 0.0;
                    rows.add(RowFactory.create(d.y[i], Vectors.sparse(4, new int[] {0, 3}, new double[] {5, 6}), d.w[i]));
                } else {
                    rows.add(RowFactory.create(d.y[i], Vectors.sparse(4, new int[] {1, 2}, new double[] {x[i], 9}),
                            d.w[i]));
                }
            } else {
                rows.add(RowFactory.create(d.y[i], Vectors.dense(-1.0, x[i], 7.0), d.w[i]));
            }
        }
        StructType s = new StructType().add("label", DataTypes.DoubleType).add("features", SQLDataTypes.VectorType())
                .add("w", DataTypes.DoubleType);
        Dataset<Row> df = spark().createDataFrame(JavaSparkContext.fromSparkContext(spark().sparkContext())
                .parallelize(rows, 3), s);
        for (IsotonicConfig.Loss loss : IsotonicConfig.Loss.values()) {
            allPathsAgree(df, "features", 1, "w", new IsoTestData(x, d.y, d.w), loss, IsotonicConfig.Direction.INCREASING);
        }
    }

    /** The same message on the small and the range path, naming the column (or featureIndex). */
    @Test
    void validationErrorsAreTheSameOnBothPaths() {
        StructType s = new StructType().add("label", DataTypes.DoubleType, true)
                .add("features", DataTypes.DoubleType, true).add("w", DataTypes.DoubleType, true);
        Object[][] bad = {{null, 2.0, 1.0, "labelCol 'label' contains a null value"},
            {1.0, null, 1.0, "featuresCol 'features' contains a null value"},
            {1.0, 2.0, null, "weightCol 'w' contains a null value"},
            {1.0, Double.NaN, 1.0, "featuresCol 'features' contains NaN"},
            {Double.POSITIVE_INFINITY, 2.0, 1.0, "labelCol 'label' contains Infinity"},
            {1.0, 2.0, -1.0, "weightCol 'w' must hold finite weights >= 0, found -1.0"}};
        for (Object[] b : bad) {
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                rows.add(i == 31 ? RowFactory.create(b[0], b[1], b[2]) : RowFactory.create((double) i, (double) i, 1.0));
            }
            Dataset<Row> df = spark().createDataFrame(rows, s).repartition(3);
            String[] msgs = new String[2];
            for (int path = 0; path < 2; path++) {
                IsotonicConfig c = cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.INCREASING, path == 0 ? -1 : 0, 2);
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> IsotonicTrainer.train(df, "features", 0, "label", "w", c), String.valueOf(b[3]));
                msgs[path] = e.getMessage();
                assertTrue(e.getMessage().startsWith((String) b[3]), b[3] + " vs " + e.getMessage());
            }
            assertEquals(msgs[0], msgs[1], "small and range path report alike");
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            rows.add(RowFactory.create((double) i, i == 13 ? Vectors.sparse(2, new int[] {0}, new double[] {1})
                    : Vectors.dense(i, i, i)));
        }
        StructType vs = new StructType().add("label", DataTypes.DoubleType).add("features", SQLDataTypes.VectorType());
        Dataset<Row> df = spark().createDataFrame(rows, vs).repartition(2);
        for (long localRows : new long[] {-1, 0}) {
            IsotonicConfig c = cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.INCREASING, localRows, 2);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> IsotonicTrainer.train(df, "features", 2, "label", null, c));
            assertEquals("featureIndex 2 is out of range for a vector of size 2 in featuresCol 'features'", e.getMessage());
        }
    }

    /** Counts jobs and shuffle bytes written while it is registered. */
    static final class Jobs extends SparkListener {
        final AtomicInteger jobs = new AtomicInteger();
        final AtomicLong shuffleBytes = new AtomicLong();
        final AtomicInteger shuffleStages = new AtomicInteger();
        /** Names (call sites) of the stages that wrote shuffle data. */
        final List<String> shuffleWriters = java.util.Collections.synchronizedList(new ArrayList<>());

        @Override
        public void onJobStart(SparkListenerJobStart e) {
            jobs.incrementAndGet();
        }

        @Override
        public void onStageCompleted(SparkListenerStageCompleted e) {
            long b = e.stageInfo().taskMetrics().shuffleWriteMetrics().bytesWritten();
            shuffleBytes.addAndGet(b);
            if (b > 0 || !e.stageInfo().shuffleDepId().isEmpty()) {
                shuffleStages.incrementAndGet();
                shuffleWriters.add(e.stageInfo().name());
            }
        }
    }

    private static Jobs count(Runnable r) throws java.util.concurrent.TimeoutException {
        Jobs l = new Jobs();
        spark().sparkContext().listenerBus().waitUntilEmpty();
        spark().sparkContext().addSparkListener(l);
        try {
            r.run();
            spark().sparkContext().listenerBus().waitUntilEmpty();
        } finally {
            spark().sparkContext().removeSparkListener(l);
        }
        return l;
    }

    @Test
    void smallPathRunsOneJobWithoutShuffle() throws Exception {
        IsoTestData d = data(3, 3000, 400, false);
        Dataset<Row> df = frame(d.x, d.y, d.w, 4);
        IsotonicConfig.Direction auto = IsotonicConfig.Direction.AUTO;
        Jobs small = count(() -> IsotonicTrainer.train(df, "features", 0, "label", "w",
                cfg(IsotonicConfig.Loss.L2, auto, -1, 0)));
        assertEquals(0, small.shuffleBytes.get(), "small path: no shuffle");
        assertEquals(0, small.shuffleStages.get(), "small path: no shuffle stage");
        assertEquals(1, small.jobs.get(), "small path: one Spark job");
        Jobs one = count(() -> IsotonicTrainer.train(df, "features", 0, "label", "w",
                cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.INCREASING, 0, 1)));
        assertEquals(0, one.shuffleBytes.get(), "one range: coalesced, no shuffle");
        Jobs ranged = count(() -> IsotonicTrainer.train(df, "features", 0, "label", "w",
                cfg(IsotonicConfig.Loss.L2, auto, 0, 2)));
        assertTrue(ranged.shuffleBytes.get() > 0, "the listener sees the range path's shuffle");
    }

    /** Input partitions already ordered by feature are the ranges (no shuffle); a tie across an edge is not. */
    @Test
    void orderedInputPartitionsAreTheRanges() throws Exception {
        for (int group : new int[] {3, 7}) { // 900 rows in 3 slices of 300: groups of 3 never straddle, of 7 do
            int n = 900;
            double[] x = new double[n];
            double[] y = new double[n];
            double[] w = new double[n];
            SplittableRandom r = new SplittableRandom(group);
            for (int i = 0; i < n; i++) {
                x[i] = i / group;
                y[i] = Math.sqrt(x[i]) + r.nextGaussian();
                w[i] = r.nextInt(6) == 0 ? 0 : 1 + r.nextDouble();
            }
            Dataset<Row> df = frame(x, y, w, 3);
            IsotonicResult ref = IsotonicLocal.fit(x, y, w, cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.INCREASING, -1, 0));
            IsotonicResult[] got = new IsotonicResult[1];
            Jobs j = count(() -> got[0] = IsotonicTrainer.train(df, "features", 0, "label", "w",
                    cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.INCREASING, 0, 0)));
            assertSame(ref, got[0], "group " + group);
            String split = got[0].phaseBackends().get("range split+shuffle");
            // the split's map stage is named after the call that builds it, IsoBlock.split via flatMapToPair
            boolean splitShuffled = j.shuffleWriters.stream().anyMatch(nm -> nm.startsWith("flatMapToPair"));
            if (group == 3) {
                assertTrue(split.contains("already ordered"), split);
                assertFalse(splitShuffled, "ordered partitions: no split shuffle, stages " + j.shuffleWriters);
            } else {
                assertTrue(split.contains("3 ranges"), split);
                assertTrue(splitShuffled, "a tie across partitions: the rows are split, stages " + j.shuffleWriters);
            }
        }
    }

    @Test
    void localRowsSettingIsRead() {
        IsoTestData d = data(4, 500, 80, false);
        Dataset<Row> df = frame(d.x, d.y, d.w, 2);
        IsotonicConfig c = cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.INCREASING, -1, 2);
        assertEquals(IsotonicTrainer.DEFAULT_LOCAL_ROWS, IsotonicTrainer.localRows(c));
        String old = System.getProperty(IsotonicTrainer.LOCAL_ROWS);
        try {
            System.setProperty(IsotonicTrainer.LOCAL_ROWS, "499");
            assertRangePath(IsotonicTrainer.train(df, "features", 0, "label", "w", c), 2, "500 rows > localRows 499");
            System.setProperty(IsotonicTrainer.LOCAL_ROWS, "500");
            assertSmallPath(IsotonicTrainer.train(df, "features", 0, "label", "w", c), "500 rows <= localRows 500");
            System.setProperty(IsotonicTrainer.LOCAL_ROWS, "-3");
            assertThrows(IllegalArgumentException.class, () -> IsotonicTrainer.localRows(c));
        } finally {
            if (old == null) {
                System.clearProperty(IsotonicTrainer.LOCAL_ROWS);
            } else {
                System.setProperty(IsotonicTrainer.LOCAL_ROWS, old);
            }
        }
    }

    /** Distributed Spearman over 2 and 5 ranges equals the local exact sign on near-uncorrelated tied data. */
    @Test
    void spearmanSignMatchesLocalOnNearZeroCorrelation() {
        int flips = 0;
        for (int seed = 0; seed < 12; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            int n = 60;
            double[] x = new double[n];
            double[] y = new double[n];
            for (int i = 0; i < n; i++) {
                x[i] = r.nextInt(7);
                y[i] = r.nextInt(5);
            }
            boolean local = Spearman.increasing(x, y, n);
            flips += local ? 1 : 0;
            Dataset<Row> df = frame(x, y, null, 3);
            for (int parts : new int[] {2, 5}) {
                IsotonicResult res = IsotonicTrainer.train(df, "features", 0, "label", null,
                        cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.AUTO, 0, parts));
                assertEquals(local, res.isotonic, "seed " + seed + ", " + parts + " ranges");
            }
        }
        assertTrue(flips > 0 && flips < 12, "the seeds must cover both signs, got " + flips + " increasing");
    }

    @Test
    void timingsAreOrderedPhases() {
        IsoTestData d = data(8, 800, 100, false);
        Dataset<Row> df = frame(d.x, d.y, d.w, 2);
        IsotonicResult s = IsotonicTrainer.train(df, "features", 0, "label", "w",
                cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.AUTO, -1, 0));
        assertEquals(List.of("pack+validate", "collect", "spearman", "solve", "model"), new ArrayList<>(s.timings().keySet()));
        IsotonicResult g = IsotonicTrainer.train(df, "features", 0, "label", "w",
                cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.AUTO, 0, 3));
        assertEquals(List.of("pack+validate", "range split+shuffle", "spearman", "solve", "merge+collect", "model"),
                new ArrayList<>(g.timings().keySet()));
        for (double v : g.timings().values()) {
            assertTrue(v >= 0 && v < 60, "seconds " + v);
        }
        assertEquals("cpu", g.phaseBackends().get("solve"));
        GpuIsotonicRegressionModel m = new GpuIsotonicRegression().setWeightCol("w").setBackend("cpu").fit(df);
        assertEquals(Arrays.asList("pack+validate", "collect", "solve", "model"), new ArrayList<>(m.timings().keySet()));
    }

    /** GPU: the driver-side small path and the range path on the device give the CPU twin's bits. */
    @Tag("gpu")
    @Test
    void gpuPathsEqualCpuTwin() {
        GpuTestSupport.deviceOrSkip();
        IsoTestData d = data(21, 200_000, 50_000, false);
        Dataset<Row> df = frame(d.x, d.y, d.w, 4);
        IsotonicConfig cpu = cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.INCREASING, -1, 0);
        IsotonicResult ref = IsotonicTrainer.train(df, "features", 0, "label", "w", cpu);
        for (long localRows : new long[] {-1, 0}) {
            for (int parts : new int[] {0, 1, 2, 7}) {
                IsotonicConfig g = cfg(IsotonicConfig.Loss.L2, IsotonicConfig.Direction.INCREASING, localRows, parts);
                g.backend = Backend.GPU;
                IsotonicResult r = IsotonicTrainer.train(df, "features", 0, "label", "w", g);
                assertSame(ref, r, "gpu localRows=" + localRows + " parts=" + parts);
                assertEquals("gpu", r.backend);
                if (localRows == 0 && parts == 0) {
                    assertRangePath(r, 1, "one GPU in local mode: one range");
                }
            }
        }
    }

    @Test
    void spearmanSumIsExact() {
        // a direct check of the exact integer numerator against the local doubled ranks
        SplittableRandom r = new SplittableRandom(99);
        int n = 400;
        double[] x = new double[n];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = r.nextInt(30);
            y[i] = r.nextInt(20) - 10;
        }
        long[] rx = Spearman.doubledRanks(x, n);
        long[] ry = Spearman.doubledRanks(y, n);
        BigInteger expect = BigInteger.ZERO;
        for (int i = 0; i < n; i++) {
            expect = expect.add(BigInteger.valueOf(rx[i] * ry[i]));
        }
        double[] sx = x.clone();
        Arrays.sort(sx);
        double[] sy = y.clone();
        Arrays.sort(sy);
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark().sparkContext());
        for (int parts : new int[] {2, 4, 9}) {
            double[] upper = IsotonicTrainer.bounds(sx, parts);
            List<IsoBlock> ranges = new ArrayList<>();
            List<Integer> counts = new ArrayList<>();
            for (scala.Tuple2<Integer, IsoBlock> t : new IsoBlock(x, y, null, n).split(upper)) {
                assertEquals(ranges.size(), (int) t._1(), "no empty feature range here");
                ranges.add(t._2());
                counts.add(t._2().n);
            }
            assertEquals(upper.length + 1, ranges.size());
            BigInteger got = IsotonicTrainer.spearmanSum(jsc.parallelize(ranges, ranges.size()), counts, sy);
            assertEquals(expect, got, parts + " ranges");
        }
    }
}
