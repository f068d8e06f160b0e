package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.DeviceFaults;
import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.pde.GpuFitzHughNagumo;
import io.sparkgpu.scan.GpuScanModel;
import io.sparkgpu.scan.GpuScanStatistic;
import io.sparkgpu.sort.GpuSort;
import io.sparkgpu.sort.SortConfig;
import io.sparkgpu.spline.GpuMonotoneSpline;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.testutil.SparkTestSession;
import io.sparkgpu.tsne.GpuTsne;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 item 7: the device path of every capability failed at chosen points by the test-only injector
 * ({@link DeviceFaults}, key {@value DeviceFaults#KEY}): the context, an allocation, the 4th kernel launch, the 3rd
 * copy. Under {@code auto} each fit gives the undisturbed GPU bits (the phase is redone on the CPU twin); under
 * {@code gpu} it fails with a message naming the fault. Each fault must have struck, else the case proves nothing.
 */
@Tag("gpu")
class DeviceFaultInjectionGpuTest {
    static final String[] POINTS = {"context", "alloc", "launch:3", "copy:2"};
    static Map<String, Function<Backend, String>> capabilities;

    @BeforeAll
    static void data() {
        GpuTestSupport.deviceOrSkip();
        SparkSession spark = SparkTestSession.get();
        SplittableRandom r = new SplittableRandom(17);
        capabilities = new LinkedHashMap<>();

        List<Row> vec = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            double c = (i % 3) * 6;
            vec.add(RowFactory.create((long) i, Vectors.dense(c + r.nextGaussian(), -c + r.nextGaussian(), r.nextGaussian())));
        }
        Dataset<Row> points = spark.createDataFrame(vec, new StructType().add("id", DataTypes.LongType)
                .add("features", SQLDataTypes.VectorType(), false)).repartition(2).cache();
        capabilities.put("k-means", b -> {
            GpuKMeansModel m = new GpuKMeans().setK(3).setSeed(1L).setMaxIter(8).setTol(0).setBackend(b.name().toLowerCase())
                    .fit(points);
            return m.summary().trainingCost() + " " + Arrays.toString(m.summary().clusterSizes());
        });
        Dataset<Row> small = points.limit(600).repartition(2).cache();
        capabilities.put("t-SNE", b -> Arrays.toString(new GpuTsne().setIdCol("id").setPerplexity(10).setMaxIter(60)
                .setExaggerationIterations(30).setSeed(3).setInit("random").setQualitySampleSize(0)
                .setBackend(b.name().toLowerCase()).fit(small).embeddingArray()));

        List<Row> reg = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            double x = r.nextDouble(0, 10);
            reg.add(RowFactory.create(Math.sqrt(x) + r.nextGaussian() * 0.2, x));
        }
        Dataset<Row> xy = spark.createDataFrame(reg, new StructType().add("label", DataTypes.DoubleType)
                .add("features", DataTypes.DoubleType)).repartition(2).cache();
        capabilities.put("isotonic", b -> {
            GpuIsotonicRegressionModel m = new GpuIsotonicRegression().setBackend(b.name().toLowerCase()).fit(xy);
            return Arrays.toString(m.boundaryArray()) + Arrays.toString(m.predictionArray());
        });
        List<Row> sp = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            double x = i * 0.05;
            sp.add(RowFactory.create(x, Math.tanh(x - 5) + 0.01 * x));
        }
        Dataset<Row> curve = spark.createDataFrame(sp, new StructType().add("x", DataTypes.DoubleType)
                .add("y", DataTypes.DoubleType)).repartition(2).cache();
        capabilities.put("spline", b -> new GpuMonotoneSpline().setBackend(b.name().toLowerCase()).fit(curve)
                .transform(curve).orderBy("x").select("prediction").collectAsList().toString());

        List<Row> cells = new ArrayList<>();
        for (int x = 0; x < 24; x++) {
            for (int y = 0; y < 24; y++) {
                double pop = 100 + r.nextInt(100);
                cells.add(RowFactory.create(x, y, (double) Math.round(pop * ((x < 5 && y < 4) ? 0.06 : 0.02)), pop));
            }
        }
        Dataset<Row> grid = spark.createDataFrame(cells, new StructType().add("x", DataTypes.IntegerType)
                .add("y", DataTypes.IntegerType).add("cases", DataTypes.DoubleType).add("pop", DataTypes.DoubleType))
                .repartition(2).cache();
        capabilities.put("scan", b -> {
            GpuScanModel m = new GpuScanStatistic().setCoordinateCols("x", "y").setCasesCol("cases").setBaselineCol("pop")
                    .setStatistic("poisson").setNumReplicas(19).setSeed(2L).setBackend(b.name().toLowerCase()).fit(grid);
            return m.clusters() + Arrays.toString(m.replicaLlrs());
        });

        List<Row> keys = new ArrayList<>();
        for (int i = 0; i < 20000; i++) {
            keys.add(RowFactory.create(r.nextInt(300), (long) i));
        }
        Dataset<Row> hours = spark.createDataFrame(keys, new StructType().add("k", DataTypes.IntegerType)
                .add("i", DataTypes.LongType)).repartition(2).cache();
        capabilities.put("sort", b -> {
            List<Row> out = GpuSort.sortWithinPartitions(hours, new SortConfig("k").backend(b)).collectAsList();
            return Integer.toHexString(out.hashCode()) + " " + out.size();
        });

        List<Row> params = new ArrayList<>();
        for (int j = 0; j < 6; j++) {
            params.add(RowFactory.create(j, 0.1 + 0.02 * j, 0.01, 0.0, 1.0));
        }
        Dataset<Row> sweep = spark.createDataFrame(params, new StructType().add("id", DataTypes.IntegerType)
                .add("a", DataTypes.DoubleType).add("eps", DataTypes.DoubleType).add("I", DataTypes.DoubleType)
                .add("D", DataTypes.DoubleType)).repartition(2).cache();
        capabilities.put("FitzHugh-Nagumo", b -> new GpuFitzHughNagumo().setCells(41).setLength(20).setDt(0.05)
                .setTEnd(4).setScheme("crank-nicolson").setInitial("gaussian").setBackend(b.name().toLowerCase())
                .transform(sweep).orderBy("id").drop("backend").collectAsList().toString());
    }

    @AfterEach
    void off() {
        System.clearProperty(DeviceFaults.KEY);
        DeviceFaults.reset();
    }

    static String rootMessage(Throwable t) {
        StringBuilder all = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            all.append(c.getMessage()).append(" | ");
        }
        return all.toString();
    }

    @Test
    void everyCapabilityKeepsItsBitsUnderAutoAndFailsClearlyUnderGpu() {
        List<String> report = new ArrayList<>();
        for (Map.Entry<String, Function<Backend, String>> c : capabilities.entrySet()) {
            String clean = c.getValue().apply(Backend.GPU);
            for (String point : POINTS) {
                System.setProperty(DeviceFaults.KEY, point);
                DeviceFaults.reset();
                String auto = c.getValue().apply(Backend.AUTO);
                long firedAuto = DeviceFaults.fired();
                DeviceFaults.reset();
                // Spark rethrows a task's failure as SparkException (checked, thrown through Scala)
                Throwable e = assertThrows(Throwable.class, () -> c.getValue().apply(Backend.GPU),
                        c.getKey() + ", fault " + point + ", backend gpu");
                long firedGpu = DeviceFaults.fired();
                System.clearProperty(DeviceFaults.KEY);
                report.add(c.getKey() + " / " + point + ": struck " + firedAuto + " (auto), " + firedGpu + " (gpu)");
                assertTrue(firedAuto > 0 && firedGpu > 0, c.getKey() + ": fault " + point + " never struck");
                assertEquals(clean, auto, c.getKey() + ": fault " + point + " under auto changed the result");
                String m = rootMessage(e);
                assertTrue(m.contains("injected device fault at " + point.replaceAll(":.*", "")),
                        c.getKey() + ", fault " + point + ": " + m);
            }
        }
        System.err.println("[spark-gpu] device faults: " + String.join("; ", report));
    }
}
