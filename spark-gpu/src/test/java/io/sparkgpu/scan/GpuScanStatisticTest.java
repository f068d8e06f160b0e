package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Files;
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
import org.junit.jupiter.api.function.Executable;

/** The estimator on local[2]: grid building, task independence, transform, persistence, bad input. */
class GpuScanStatisticTest {
    static final StructType CELLS2 = new StructType().add("x", DataTypes.IntegerType).add("y", DataTypes.IntegerType)
            .add("cases", DataTypes.LongType).add("pop", DataTypes.DoubleType);

    /** 2-D cells (x from 10, y from 0) with a planted cluster, rows in random order, one row split in two. */
    static Dataset<Row> cells(SparkSession spark, long seed) {
        Random r = new Random(seed);
        List<Row> rows = new ArrayList<>();
        for (int x = 10; x < 22; x++) {
            for (int y = 0; y < 9; y++) {
                double pop = 50 + r.nextInt(100);
                boolean hot = x >= 14 && x <= 16 && y >= 5 && y <= 7;
                long c = ScanTestData.poisson(r, pop * (hot ? 0.09 : 0.03));
                if (x == 11 && y == 2) { // the same cell in two rows: added up
                    rows.add(RowFactory.create(x, y, c / 2, pop / 2));
                    rows.add(RowFactory.create(x, y, c - c / 2, pop - pop / 2));
                } else {
                    rows.add(RowFactory.create(x, y, c, pop));
                }
            }
        }
        java.util.Collections.shuffle(rows, r);
        return spark.createDataFrame(rows, CELLS2);
    }

    static GpuScanStatistic estimator() {
        return new GpuScanStatistic().setCoordinateCols("x", "y").setCasesCol("cases").setBaselineCol("pop")
                .setNumReplicas(19).setNumClusters(3).setSeed(5).setBackend("cpu");
    }

    /** The per-cell sums of a cells input: one exchange partition per 2^16 cells, within [1, input partitions]. */
    @Test
    void cellSumsArePartitionedByTheGrid() {
        assertEquals(1, ScanInput.cellPartitions(256 * 256, 32), "a 256 x 256 grid: one task, not 200");
        assertEquals(2, ScanInput.cellPartitions(256 * 256 + 1, 32));
        assertEquals(256, ScanInput.cellPartitions(1L << 24, 512));
        assertEquals(16, ScanInput.cellPartitions(1L << 24, 16), "at most the input's partitions");
        assertEquals(1, ScanInput.cellPartitions(1, 0));
    }

    @Test
    void fitFindsThePlantedClusterAndMatchesTheLocalEngine() {
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> df = cells(spark, 1);
        GpuScanModel m = estimator().fit(df);
        ScanCluster top = m.clusters().get(0);
        assertTrue(top.pValue() <= 0.1, m.toString());
        // local engine on the same grid gives the same clusters and replicas
        ScanInput.Built b = estimator().toInput().build(df, ScanModel.POISSON);
        assertArrayEquals(new int[] {12, 9}, b.info.sizes());
        assertEquals(10.0, b.info.origin()[0]);
        ScanResult local = LocalScan.run(ScanTables.of(b.grid), ScanSpec.all(ScanDirection.HIGH), 3, 19, 5,
                Backend.CPU, 2);
        assertEquals(local.clusters().size(), m.clusters().size());
        for (int i = 0; i < local.clusters().size(); i++) {
            assertEquals(local.clusters().get(i).index(), m.clusters().get(i).index());
            assertEquals(local.clusters().get(i).llr(), m.clusters().get(i).llr(), 0.0);
            assertEquals(local.clusters().get(i).pValue(), m.clusters().get(i).pValue(), 0.0);
        }
        assertArrayEquals(local.replicaLlrs(), m.replicaLlrs(), 0.0);
        assertEquals("cpu", m.result().backend());
    }

    @Test
    void resultDoesNotDependOnTheNumberOfTasksOrInputPartitions() {
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> df = cells(spark, 2);
        GpuScanModel ref = estimator().setNumClusters(2).setNumReplicas(9).setNumPartitions(1).fit(df.coalesce(1));
        for (int parts : new int[] {3, 7}) {
            GpuScanModel m = ScanTrainerPathsTest.with(() -> estimator().setNumClusters(2).setNumReplicas(9)
                    .setNumPartitions(parts).fit(df.repartition(parts + 1)), ScanTrainer.LOCAL_WORK, "0");
            assertEquals("cpu in " + parts + " tasks", m.phaseBackends().get(ScanResult.SCAN));
            assertEquals(ref.clusters().size(), m.clusters().size(), parts + " tasks");
            for (int i = 0; i < ref.clusters().size(); i++) {
                assertEquals(ref.clusters().get(i).index(), m.clusters().get(i).index(), parts + " tasks");
                assertEquals(ref.clusters().get(i).llr(), m.clusters().get(i).llr(), 0.0);
                assertEquals(ref.clusters().get(i).pValue(), m.clusters().get(i).pValue(), 0.0);
            }
            assertArrayEquals(ref.replicaLlrs(), m.replicaLlrs(), 0.0, parts + " tasks");
        }
    }

    @Test
    void transformLabelsRowsAndTheModelSurvivesSaveAndLoad() throws Exception {
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> df = cells(spark, 3);
        GpuScanModel m = estimator().fit(df);
        Dataset<Row> out = m.transform(df);
        ScanCluster top = m.clusters().get(0);
        for (Row r : out.collectAsList()) {
            int x = r.getInt(0) - 10;
            int y = r.getInt(1);
            Object label = r.get(r.fieldIndex("cluster"));
            Integer want = null;
            for (ScanCluster c : m.clusters()) {
                if (c.contains(x, y, 0)) {
                    want = c.rank();
                    break;
                }
            }
            assertEquals(want, label, "row " + r);
        }
        assertTrue(out.filter("cluster = 1").count() >= 1);
        assertEquals(m.clusters().size(), m.clusterTable(spark).count());
        Row first = m.clusterTable(spark).orderBy("rank").first();
        assertEquals(10.0 + top.lo(0), first.<Double>getList(first.fieldIndex("coordLo")).get(0));

        Path dir = Files.createTempDirectory("scan-model");
        String path = dir.resolve("m").toString();
        m.write().overwrite().save(path);
        GpuScanModel back = GpuScanModel.load(path);
        assertEquals(m.uid(), back.uid());
        assertEquals(m.clusters().size(), back.clusters().size());
        for (int i = 0; i < m.clusters().size(); i++) {
            assertArrayEquals(m.clusters().get(i).box(), back.clusters().get(i).box());
            assertEquals(m.clusters().get(i).pValue(), back.clusters().get(i).pValue(), 0.0);
            assertEquals(m.clusters().get(i).llr(), back.clusters().get(i).llr(), 0.0);
        }
        assertArrayEquals(m.replicaLlrs(), back.replicaLlrs(), 0.0);
        assertTrue(m.timings().containsKey(ScanResult.TOTAL) && back.timings().isEmpty(), "timings are not saved");
        assertEquals(out.orderBy("x", "y").collectAsList(), back.transform(df).orderBy("x", "y").collectAsList());
        assertEquals(m.pValue(top.llr()), back.pValue(top.llr()));

        GpuScanStatistic est = estimator().setMaxBaselineFraction(0.4).setDirection("both");
        est.write().overwrite().save(dir.resolve("e").toString());
        GpuScanStatistic e2 = GpuScanStatistic.load(dir.resolve("e").toString());
        assertEquals(0.4, e2.getMaxBaselineFraction());
        assertEquals("both", e2.getDirection());
        assertArrayEquals(new String[] {"x", "y"}, e2.getCoordinateCols());
    }

    @Test
    void pointsAreBinnedOntoTheGrid() {
        SparkSession spark = SparkTestSession.get();
        StructType schema = new StructType().add("lon", DataTypes.DoubleType).add("lat", DataTypes.DoubleType)
                .add("sick", DataTypes.IntegerType);
        Random r = new Random(4);
        List<Row> rows = new ArrayList<>();
        long[][] casesIn = new long[8][6];
        long[][] popIn = new long[8][6];
        for (int i = 0; i < 3000; i++) {
            double lon = r.nextDouble() * 8;
            double lat = r.nextDouble() * 6;
            boolean hot = lon >= 2 && lon < 4 && lat >= 1 && lat < 3;
            int sick = r.nextDouble() < (hot ? 0.5 : 0.15) ? 1 : 0;
            rows.add(RowFactory.create(lon, lat, sick));
            int bx = (int) Math.floor(lon);
            int by = (int) Math.floor(lat);
            casesIn[bx][by] += sick;
            popIn[bx][by]++;
        }
        Dataset<Row> df = spark.createDataFrame(rows, schema);
        GpuScanStatistic est = new GpuScanStatistic().setInputType("points").setCoordinateCols("lon", "lat")
                .setCasesCol("sick").setBaselineCol("").setGridSize(8, 6).setExtent(0, 8, 0, 6)
                .setStatistic("bernoulli").setNumReplicas(9).setNumClusters(1).setBackend("cpu");
        ScanInput.Built b = est.toInput().build(df, ScanModel.BERNOULLI);
        for (int x = 0; x < 8; x++) {
            for (int y = 0; y < 6; y++) {
                int c = b.info.shape().cell(x, y, 0);
                assertEquals(casesIn[x][y], b.grid.cases(c), "cases of bin " + x + "," + y);
                assertEquals(popIn[x][y], b.grid.baseline(c), "population of bin " + x + "," + y);
            }
        }
        GpuScanModel m = est.fit(df);
        ScanCluster top = m.clusters().get(0);
        assertTrue(top.lo(0) <= 3 && top.hi(0) >= 2 && top.lo(1) <= 2 && top.hi(1) >= 1, top.toString());
        assertEquals(0.1, top.pValue(), 1e-12);
        Row labelled = m.transform(spark.createDataFrame(List.of(RowFactory.create(2.5, 1.5, 1),
                RowFactory.create(99.0, 1.5, 0)), schema)).orderBy("lon").collectAsList().get(0);
        assertEquals(1, labelled.getInt(3));
        assertNull(m.transform(spark.createDataFrame(List.of(RowFactory.create(99.0, 1.5, 0)), schema)).first().get(3),
                "a point outside the grid is in no cluster");
    }

    @Test
    void oneAndThreeDimensionalCells() {
        SparkSession spark = SparkTestSession.get();
        StructType s1 = new StructType().add("t", DataTypes.IntegerType).add("cases", DataTypes.IntegerType)
                .add("baseline", DataTypes.DoubleType);
        List<Row> rows = new ArrayList<>();
        for (int t = 0; t < 40; t++) {
            rows.add(RowFactory.create(1990 + t, t >= 20 && t < 25 ? 12 : 3, 10.0));
        }
        GpuScanModel m1 = new GpuScanStatistic().setCoordinateCols("t").setNumReplicas(9).setBackend("cpu")
                .fit(spark.createDataFrame(rows, s1));
        assertEquals(20, m1.clusters().get(0).lo(0));
        assertEquals(24, m1.clusters().get(0).hi(0));
        assertTrue(m1.toString().contains("t 2010..2014"), m1.toString());

        StructType s3 = new StructType().add("x", DataTypes.IntegerType).add("y", DataTypes.IntegerType)
                .add("z", DataTypes.IntegerType).add("v", DataTypes.DoubleType).add("n", DataTypes.IntegerType);
        List<Row> r3 = new ArrayList<>();
        Random r = new Random(8);
        for (int x = 0; x < 4; x++) {
            for (int y = 0; y < 3; y++) {
                for (int z = 0; z < 5; z++) {
                    double v = r.nextGaussian() + (x == 2 && z >= 3 ? 4 : 0);
                    r3.add(RowFactory.create(x, y, z, v, 1));
                }
            }
        }
        GpuScanModel m3 = new GpuScanStatistic().setCoordinateCols("x", "y", "z").setCasesCol("v").setBaselineCol("n")
                .setStatistic("normal").setNumReplicas(19).setBackend("cpu").fit(spark.createDataFrame(r3, s3));
        ScanCluster c = m3.clusters().get(0);
        assertTrue(c.lo(0) <= 2 && c.hi(0) >= 2 && c.hi(2) >= 3, c.toString());
    }

    private static void assertBad(Executable e, String... fragments) {
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, e);
        for (String f : fragments) {
            assertTrue(ex.getMessage().contains(f), "message '" + ex.getMessage() + "' should contain '" + f + "'");
        }
    }

    @Test
    void badInputGetsClearErrors() {
        SparkSession spark = SparkTestSession.get();
        StructType s = new StructType().add("x", DataTypes.DoubleType).add("cases", DataTypes.DoubleType)
                .add("pop", DataTypes.DoubleType);
        GpuScanStatistic est = new GpuScanStatistic().setCoordinateCols("x").setBaselineCol("pop").setNumReplicas(0)
                .setBackend("cpu");
        java.util.function.Function<Row[], Dataset<Row>> df = rs -> spark.createDataFrame(List.of(rs), s);
        assertBad(() -> est.fit(df.apply(new Row[] {RowFactory.create(0.0, -1.0, 5.0), RowFactory.create(1.0, 2.0, 5.0)})),
                "casesCol", "'cases'", "negative");
        assertBad(() -> est.fit(df.apply(new Row[] {RowFactory.create(0.0, 1.0, -5.0)})), "baselineCol", "'pop'",
                "negative");
        assertBad(() -> est.fit(df.apply(new Row[] {RowFactory.create(0.0, Double.NaN, 5.0)})), "'cases'", "NaN");
        assertBad(() -> est.fit(df.apply(new Row[] {RowFactory.create(0.0, null, 5.0)})), "'cases'", "null");
        assertBad(() -> est.fit(df.apply(new Row[] {RowFactory.create(0.5, 1.0, 5.0)})), "'x'", "whole cell coordinates");
        assertBad(() -> est.fit(df.apply(new Row[] {RowFactory.create(0.0, 0.0, 0.0), RowFactory.create(1.0, 0.0, 0.0)})),
                "total baseline is 0");
        assertBad(() -> est.fit(spark.createDataFrame(List.of(), s)), "no rows", "empty");
        assertBad(() -> est.fit(df.apply(new Row[] {RowFactory.create(0.0, 1.0, 5.0),
                RowFactory.create(5e6, 1.0, 5.0)})), "'x'", "over the supported maximum");
        assertBad(() -> est.copy(new org.apache.spark.ml.param.ParamMap()).setStatistic("bernoulli")
                .fit(df.apply(new Row[] {RowFactory.create(0.0, 6.0, 5.0), RowFactory.create(1.0, 1.0, 5.0)})),
                "'cases'", "more cases than the population");
        assertBad(() -> est.copy(new org.apache.spark.ml.param.ParamMap()).setCoordinateCols("nope")
                .fit(df.apply(new Row[] {RowFactory.create(0.0, 1.0, 5.0)})), "'nope'", "does not exist");
        assertBad(() -> new GpuScanStatistic().setStatistic("gauss"), "statistic");
        assertBad(() -> est.copy(new org.apache.spark.ml.param.ParamMap()).setInputType("points")
                .fit(df.apply(new Row[] {RowFactory.create(0.0, 1.0, 5.0)})), "gridSize");
        assertBad(() -> est.copy(new org.apache.spark.ml.param.ParamMap()).setInputType("points").setGridSize(4)
                .setExtent(0, 1).fit(df.apply(new Row[] {RowFactory.create(0.5, 1.0, 1.0),
                        RowFactory.create(3.0, 1.0, 1.0)})), "outside the extent");
    }
}
