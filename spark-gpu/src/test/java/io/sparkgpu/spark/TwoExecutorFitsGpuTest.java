package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.pde.FhnConfig;
import io.sparkgpu.pde.GpuFitzHughNagumo;
import io.sparkgpu.scan.GpuScanModel;
import io.sparkgpu.scan.GpuScanStatistic;
import io.sparkgpu.scan.ScanCluster;
import io.sparkgpu.sort.GpuSort;
import io.sparkgpu.sort.SortConfig;
import io.sparkgpu.spline.GpuMonotoneCdf;
import io.sparkgpu.spline.GpuMonotoneCdfModel;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.testutil.LocalGpuSessions;
import io.sparkgpu.tsne.GpuTsne;
import io.sparkgpu.tsne.GpuTsneModel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 20 on what a one-GPU host allows: isotonic, a scan with replicas and t-SNE's distributed mode fitted on
 * two executors with a GPU each (the host's first two GPUs when it has two, else two scheduled addresses mapped to
 * the one device by {@code spark.sparkgpu.gpu.addressMap}), every Spark job spread over both executors (the
 * driver-local shortcuts are off), give the CPU twin's bits; so do the capabilities that landed after it: the
 * monotone CDF's distributed quantiles, the DataFrame sort (equal to {@code orderBy} row for row) and the
 * FitzHugh-Nagumo sweep. k-means is in {@link SparkGpuResourceGpuTest#twoExecutorsWithAGpuEachGiveTheOneExecutorBits}.
 */
@Tag("gpu")
class TwoExecutorFitsGpuTest {
    static SparkSession spark;
    static String layout;

    @BeforeAll
    static void start() {
        GpuTestSupport.deviceOrSkip();
        List<String> all = LocalGpuSpark.cudaAddresses();
        boolean real = all.size() >= 2;
        LocalGpuSpark spec = LocalGpuSpark.of(4, 4, real ? all.subList(0, 2) : List.of("0", "1"), 4096).executors(2)
                .config("spark.sparkgpu.isotonic.localRows", "0").config("spark.sparkgpu.scan.localWork", "0")
                .config("spark.sparkgpu.kmeans.localValues", "0")
                .config(GpuTasks.TASKS, "2"); // t-SNE's small fits too: a task per GPU (else one per 500,000 points)
        if (!real) {
            spec.config(SparkGpuConf.ADDRESS_MAP, "0:0,1:0");
        }
        layout = real ? "two GPUs" : "one GPU as two mapped addresses";
        spark = LocalGpuSessions.start(spec);
        System.err.println("[spark-gpu] two executors (" + layout + "): "
                + SparkGpuResourceTest.addressesPerExecutor(spark, 16));
    }

    @AfterAll
    static void stop() {
        LocalGpuSessions.stopAll();
    }

    @Test
    void isotonicOnTwoExecutorsGivesTheCpuBits() {
        StructType schema = new StructType().add("label", DataTypes.DoubleType).add("features", DataTypes.DoubleType)
                .add("w", DataTypes.DoubleType);
        SplittableRandom r = new SplittableRandom(3);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 200_000; i++) {
            double x = r.nextDouble(0, 10);
            rows.add(RowFactory.create(Math.log1p(x) + r.nextGaussian() * 0.3, x, r.nextDouble(0.5, 2)));
        }
        Dataset<Row> df = spark.createDataFrame(rows, schema).repartition(8);
        GpuIsotonicRegression iso = new GpuIsotonicRegression().setWeightCol("w");
        GpuIsotonicRegressionModel gpu = iso.copy(ParamMap.empty()).setBackend("gpu").fit(df); // a range per GPU
        GpuIsotonicRegressionModel one = iso.copy(ParamMap.empty()).setBackend("gpu").setNumPartitions(1).fit(df);
        GpuIsotonicRegressionModel cpu = iso.copy(ParamMap.empty()).setBackend("cpu").fit(df);
        System.err.println("[spark-gpu] isotonic on two executors (" + layout + "): " + gpu.boundaryArray().length
                + " boundaries; a range per GPU " + gpu.trainingInfo().timingsLine() + "; one range "
                + one.trainingInfo().timingsLine());
        assertArrayEquals(cpu.boundaryArray(), gpu.boundaryArray(), "boundaries");
        assertArrayEquals(cpu.predictionArray(), gpu.predictionArray(), "predictions");
        assertArrayEquals(cpu.boundaryArray(), one.boundaryArray(), "boundaries, one range over both executors");
        assertArrayEquals(cpu.predictionArray(), one.predictionArray(), "predictions, one range over both executors");
        // features rounded to 0.01 (1,001 values): each block pools its equal features before the range shuffle
        Dataset<Row> tied = df.withColumn("features", org.apache.spark.sql.functions.round(df.col("features"), 2));
        GpuIsotonicRegressionModel pooled = iso.copy(ParamMap.empty()).setBackend("gpu").fit(tied);
        GpuIsotonicRegressionModel tiedCpu = iso.copy(ParamMap.empty()).setBackend("cpu").setNumPartitions(1)
                .fit(tied);
        System.err.println("[spark-gpu] isotonic, rounded features, on two executors (" + layout + "): "
                + pooled.trainingInfo().timingsLine());
        assertArrayEquals(tiedCpu.boundaryArray(), pooled.boundaryArray(), "boundaries, equal features pooled first");
        assertArrayEquals(tiedCpu.predictionArray(), pooled.predictionArray(),
                "predictions, equal features pooled first");
    }

    @Test
    void scanWithReplicasOnTwoExecutorsGivesTheCpuBits() {
        StructType schema = new StructType().add("x", DataTypes.IntegerType).add("y", DataTypes.IntegerType)
                .add("cases", DataTypes.DoubleType).add("pop", DataTypes.DoubleType);
        SplittableRandom r = new SplittableRandom(5);
        List<Row> rows = new ArrayList<>();
        for (int x = 0; x < 48; x++) {
            for (int y = 0; y < 48; y++) {
                double pop = 50 + r.nextInt(200);
                double rate = (x >= 10 && x < 16 && y >= 20 && y < 25) ? 0.05 : 0.02;
                rows.add(RowFactory.create(x, y, (double) Math.max(0, Math.round(pop * rate + r.nextGaussian())), pop));
            }
        }
        Dataset<Row> df = spark.createDataFrame(rows, schema).repartition(8);
        GpuScanStatistic scan = new GpuScanStatistic().setCoordinateCols("x", "y").setCasesCol("cases")
                .setBaselineCol("pop").setStatistic("poisson").setNumReplicas(99).setSeed(7L);
        GpuScanModel gpu = scan.copy(ParamMap.empty()).setBackend("gpu").fit(df);
        GpuScanModel cpu = scan.copy(ParamMap.empty()).setBackend("cpu").fit(df);
        System.err.println("[spark-gpu] scan on two executors (" + layout + "): " + gpu.clusters().get(0)
                + ", phases " + gpu.phaseBackends());
        assertArrayEquals(cpu.replicaLlrs(), gpu.replicaLlrs(), "replica LLRs");
        assertEquals(cpu.clusters().size(), gpu.clusters().size());
        for (int i = 0; i < cpu.clusters().size(); i++) {
            ScanCluster a = cpu.clusters().get(i);
            ScanCluster b = gpu.clusters().get(i);
            assertEquals(a.toString(), b.toString(), "cluster " + i);
            assertEquals(a.llr(), b.llr(), 0.0, "cluster " + i);
        }
    }

    @Test
    void distributedTsneOnTwoExecutorsGivesTheCpuBits() {
        StructType schema = new StructType().add("id", DataTypes.LongType)
                .add("features", SQLDataTypes.VectorType(), false);
        SplittableRandom r = new SplittableRandom(9);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 1200; i++) {
            double[] v = new double[10];
            for (int j = 0; j < v.length; j++) {
                v[j] = (i % 4) * 8 * ((j + i % 4) % 3 == 0 ? 1 : 0) + r.nextGaussian();
            }
            rows.add(RowFactory.create((long) i, Vectors.dense(v)));
        }
        Dataset<Row> df = spark.createDataFrame(rows, schema).repartition(4);
        GpuTsne e = new GpuTsne().setIdCol("id").setPerplexity(15).setMaxIter(150).setExaggerationIterations(60)
                .setSeed(4).setLearningRate(100).setInit("random").setQualitySampleSize(0);
        GpuTsneModel cpu = e.copy(ParamMap.empty()).setBackend("cpu").setMode("single").fit(df);
        GpuTsneModel gpu = e.copy(ParamMap.empty()).setBackend("gpu").setMode("distributed").fit(df);
        System.err.println("[spark-gpu] t-SNE distributed on two executors (" + layout + "): timings "
                + gpu.summary().timings());
        assertEquals("distributed", gpu.summary().mode());
        assertArrayEquals(cpu.embeddingArray(), gpu.embeddingArray(), "embedding");
    }

    /**
     * The device-resident loop of several barrier tasks on the grid path (n above the exact repulsion's limit): rows
     * shared device to device (CUDA IPC between the executors) and through the host (the job's local property
     * spark.sparkgpu.tsne.rowExchange=host) give the CPU twin's single-device bits, KL history included.
     */
    @Test
    void distributedTsneDeviceLoopOnTheGridGivesTheCpuBits() {
        Dataset<Row> df = tsneFrame(spark, 10_500, 6);
        GpuTsne e = new GpuTsne().setIdCol("id").setPerplexity(20).setMaxIter(120).setExaggerationIterations(50)
                .setSeed(8).setInit("random").setQualitySampleSize(0).setKlEvery(40);
        GpuTsneModel cpu = e.copy(ParamMap.empty()).setBackend("cpu").setMode("single").fit(df);
        GpuTsneModel device = e.copy(ParamMap.empty()).setBackend("gpu").setMode("distributed").fit(df);
        GpuTsneModel host;
        spark.sparkContext().setLocalProperty("spark.sparkgpu.tsne.rowExchange", "host");
        try {
            host = e.copy(ParamMap.empty()).setBackend("gpu").setMode("distributed").fit(df);
        } finally {
            spark.sparkContext().setLocalProperty("spark.sparkgpu.tsne.rowExchange", null);
        }
        System.err.println("[spark-gpu] t-SNE device loop on two executors (" + layout + "): device rows "
                + device.summary().timings() + "; host rows " + host.summary().timings());
        assertEquals("distributed", device.summary().mode());
        assertArrayEquals(cpu.embeddingArray(), device.embeddingArray(), "embedding, rows device to device");
        assertArrayEquals(cpu.embeddingArray(), host.embeddingArray(), "embedding, rows through the host");
        assertArrayEquals(cpu.summary().klHistory(), device.summary().klHistory(), "KL history");
    }

    /** Gaussian clusters of n points in 10 dimensions, ids 0..n-1, in {@code parts} partitions. */
    static Dataset<Row> tsneFrame(SparkSession spark, int n, int parts) {
        StructType schema = new StructType().add("id", DataTypes.LongType)
                .add("features", SQLDataTypes.VectorType(), false);
        SplittableRandom r = new SplittableRandom(n);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            double[] v = new double[10];
            for (int j = 0; j < v.length; j++) {
                v[j] = (i % 4) * 8 * ((j + i % 4) % 3 == 0 ? 1 : 0) + r.nextGaussian();
            }
            rows.add(RowFactory.create((long) i, Vectors.dense(v)));
        }
        return spark.createDataFrame(rows, schema).repartition(parts);
    }

    @Test
    void monotoneCdfOnTwoExecutorsGivesTheCpuBits() {
        StructType schema = new StructType().add("value", DataTypes.DoubleType).add("w", DataTypes.DoubleType);
        SplittableRandom r = new SplittableRandom(11);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 120_000; i++) {
            double v = i % 9 == 0 ? 2.5 : Math.floor(r.nextGaussian() * 1e4) / 100; // ties and an atom
            rows.add(RowFactory.create(v, r.nextDouble(0.5, 2)));
        }
        Dataset<Row> df = spark.createDataFrame(rows, schema).repartition(8);
        GpuMonotoneCdf cdf = new GpuMonotoneCdf().setNumKnots(257).setWeightCol("w");
        GpuMonotoneCdfModel gpu = cdf.copy(ParamMap.empty()).setBackend("gpu").fit(df);
        GpuMonotoneCdfModel cpu = cdf.copy(ParamMap.empty()).setBackend("cpu").fit(df);
        System.err.println("[spark-gpu] monotone CDF on two executors (" + layout + "): " + gpu);
        assertArrayEquals(cpu.knotQuantiles(), gpu.knotQuantiles(), 0.0, "knot quantiles");
        assertTrue(cpu.spline().sameBits(gpu.spline()), "spline");
        List<Row> a = gpu.transform(df).orderBy("value", "w").collectAsList();
        List<Row> b = cpu.transform(df).orderBy("value", "w").collectAsList();
        assertEquals(b, a, "CDF values of every row");
    }

    @Test
    void dataFrameSortOnTwoExecutorsEqualsOrderBy() {
        StructType schema = new StructType().add("k", DataTypes.IntegerType, true).add("id", DataTypes.IntegerType)
                .add("x", DataTypes.LongType);
        SplittableRandom r = new SplittableRandom(13);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 200_000; i++) {
            Integer k = r.nextInt(50) == 0 ? null : i % 7 == 0 ? 4242 : r.nextInt(1 << 18); // nulls, a hot key
            rows.add(RowFactory.create(k, i, r.nextLong()));
        }
        Dataset<Row> df = spark.createDataFrame(rows, schema).repartition(8).cache();
        List<Row> want = df.orderBy(functions.col("k").asc_nulls_first(), functions.monotonically_increasing_id())
                .collectAsList();
        for (Backend b : new Backend[] {Backend.GPU, Backend.CPU}) {
            List<Row> got = GpuSort.sort(df, new SortConfig("k").backend(b).numPartitions(6)).collectAsList();
            assertEquals(want.size(), got.size(), b + ": rows");
            assertEquals(want, got, b + ": the sort equals orderBy row for row");
        }
        df.unpersist();
    }

    @Test
    void fitzHughNagumoSweepOnTwoExecutorsGivesTheCpuBits() {
        StructType schema = new StructType().add("id", DataTypes.IntegerType).add("a", DataTypes.DoubleType)
                .add("eps", DataTypes.DoubleType).add("I", DataTypes.DoubleType).add("D", DataTypes.DoubleType);
        List<Row> rows = new ArrayList<>();
        for (int j = 0; j < 48; j++) {
            rows.add(RowFactory.create(j, 0.05 + 0.01 * (j % 8), 0.005 + 0.002 * (j / 8), 0.1 * (j % 3), 1.0));
        }
        Dataset<Row> in = spark.createDataFrame(rows, schema).repartition(6);
        for (String scheme : new String[] {FhnConfig.CRANK_NICOLSON, FhnConfig.EXPLICIT}) {
            GpuFitzHughNagumo t = new GpuFitzHughNagumo().setCells(101).setLength(40).setDt(0.02).setTEnd(8)
                    .setScheme(scheme).setInitial(FhnConfig.GAUSSIAN).setRecordEvery(50);
            List<Row> gpu = t.copy(ParamMap.empty()).setBackend("gpu").transform(in).orderBy("id").drop("backend")
                    .collectAsList();
            List<Row> cpu = t.copy(ParamMap.empty()).setBackend("cpu").transform(in).orderBy("id").drop("backend")
                    .collectAsList();
            List<Row> ran = t.copy(ParamMap.empty()).setBackend("gpu").transform(in).select("backend").distinct()
                    .collectAsList();
            System.err.println("[spark-gpu] FitzHugh-Nagumo " + scheme + " sweep on two executors (" + layout
                    + "): backends " + ran);
            assertEquals(List.of(RowFactory.create("gpu")), ran, scheme + ": every row ran on the GPU");
            assertEquals(cpu, gpu, scheme + ": every output column of every row");
        }
    }
}
