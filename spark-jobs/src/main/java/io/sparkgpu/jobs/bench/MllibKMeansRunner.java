package io.sparkgpu.jobs.bench;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.ml.clustering.KMeans;
import org.apache.spark.ml.clustering.KMeansModel;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.RDDInfo;
import org.apache.spark.storage.StorageLevel;

/**
 * MLlib's {@code org.apache.spark.ml.clustering.KMeans} on a local Spark session with one core per
 * benchmark thread. The only benchmark class that references Spark; loaded by name when Spark is present.
 */
public final class MllibKMeansRunner implements MllibBaseline {
    private final int threads;
    private final SparkSession spark;
    /** False when a session already existed in this JVM (tests): it is reused and left running. */
    private final boolean ownsSession;
    private JavaRDD<Row> rows;
    private Dataset<Row> df;
    private String cacheNote = "";

    public MllibKMeansRunner(int threads) {
        this.threads = threads;
        this.ownsSession = SparkSession.getDefaultSession().isEmpty() && SparkSession.getActiveSession().isEmpty();
        this.spark = SparkSession.builder()
                .master("local[" + threads + "]")
                .appName("spark-gpu k-means benchmark")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", String.valueOf(threads))
                .config("spark.default.parallelism", String.valueOf(threads))
                .getOrCreate();
        if (ownsSession) {
            spark.sparkContext().setLogLevel("WARN");
        }
    }

    @Override
    public String describe() {
        return "Spark " + spark.version() + ", master " + spark.sparkContext().master() + ", netlib BLAS: java=" + blas("javaBLAS")
                + ", native=" + blas("nativeBLAS");
    }

    private static String blas(String which) {
        try {
            Class<?> c = Class.forName("org.apache.spark.ml.linalg.BLAS$");
            Object module = c.getField("MODULE$").get(null);
            return c.getMethod(which).invoke(module).getClass().getSimpleName();
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return "unknown";
        }
    }

    @Override
    public void load(BlobData data, int n, int partitions) {
        unload();
        List<long[]> ranges = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            ranges.add(new long[] {(long) n * p / partitions, (long) n * (p + 1) / partitions});
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        rows = jsc.parallelize(ranges, partitions).flatMap(generator(data)).setName("k-means benchmark rows, n=" + n);
        rows.persist(StorageLevel.MEMORY_ONLY());
        long count = rows.count();
        if (count != n) {
            throw new IllegalStateException("generated " + count + " rows, expected " + n);
        }
        cacheNote = cacheState(rows.rdd());
        StructType schema = new StructType().add("features", SQLDataTypes.VectorType(), false);
        df = spark.createDataFrame(rows, schema);
    }

    @Override
    public String loadNote() {
        return cacheNote;
    }

    private String cacheState(RDD<?> rdd) {
        for (RDDInfo info : spark.sparkContext().getRDDStorageInfo()) {
            if (info.id() == rdd.id()) {
                if (info.numCachedPartitions() == info.numPartitions()) {
                    return "";
                }
                return "input only partly cached (" + info.numCachedPartitions() + "/" + info.numPartitions()
                        + " partitions): raise -Xmx";
            }
        }
        return "input not cached: raise -Xmx";
    }

    private static FlatMapFunction<long[], Row> generator(BlobData data) {
        final int d = data.d;
        return range -> new Iterator<Row>() {
            private long next = range[0];

            @Override
            public boolean hasNext() {
                return next < range[1];
            }

            @Override
            public Row next() {
                if (next >= range[1]) {
                    throw new NoSuchElementException();
                }
                double[] v = new double[d];
                data.row(next++, v, 0);
                return RowFactory.create(Vectors.dense(v));
            }
        };
    }

    @Override
    public Fit fit(String solver, int k, int maxIter, long seed) {
        if (df == null) {
            throw new IllegalStateException("load() first");
        }
        KMeans km = new KMeans()
                .setFeaturesCol("features")
                .setK(k)
                .setInitMode("random")
                .setSeed(seed)
                .setMaxIter(maxIter)
                .setTol(0.0)
                .setSolver(solver);
        long t0 = System.nanoTime();
        KMeansModel model = km.fit(df);
        double seconds = (System.nanoTime() - t0) / 1e9;
        Vector[] cs = model.clusterCenters();
        int d = cs.length == 0 ? 0 : cs[0].size();
        double[] flat = new double[cs.length * d];
        for (int c = 0; c < cs.length; c++) {
            System.arraycopy(cs[c].toArray(), 0, flat, c * d, d);
        }
        return new Fit(flat, model.summary().numIter(), seconds, model.summary().trainingCost());
    }

    @Override
    public void unload() {
        if (rows != null) {
            rows.unpersist(true);
            rows = null;
            df = null;
        }
    }

    @Override
    public void close() {
        unload();
        if (ownsSession) {
            spark.stop();
        }
    }
}
