package io.sparkgpu.jobs.bench;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.ml.clustering.KMeans;
import org.apache.spark.ml.clustering.KMeansModel;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.RDDInfo;
import org.apache.spark.storage.StorageLevel;
import scala.jdk.javaapi.CollectionConverters;

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
    private final JobTimes jobs = new JobTimes();

    /**
     * Start and end time and result-stage name (the action's call site, e.g. "collectAsMap at
     * KMeans.scala:NNN") of every Spark job, to time MLlib's Lloyd iterations: each is one job whose
     * action is collectAsMap in KMeans.scala, for the row and the block solver alike.
     */
    static final class JobTimes extends SparkListener {
        static final class Job {
            final long start;
            final String name;
            long end = -1;

            Job(long start, String name) {
                this.start = start;
                this.name = name;
            }
        }

        private final TreeMap<Integer, Job> byId = new TreeMap<>();

        @Override
        public synchronized void onJobStart(SparkListenerJobStart e) {
            StageInfo last = null;
            for (StageInfo si : CollectionConverters.asJava(e.stageInfos())) {
                if (last == null || si.stageId() > last.stageId()) {
                    last = si;
                }
            }
            byId.put(e.jobId(), new Job(e.time(), last == null ? "" : last.name()));
        }

        @Override
        public synchronized void onJobEnd(SparkListenerJobEnd e) {
            Job j = byId.get(e.jobId());
            if (j != null) {
                j.end = e.time();
            }
        }

        synchronized int nextId() {
            return byId.isEmpty() ? 0 : byId.lastKey() + 1;
        }

        /** Per-iteration seconds of the iteration jobs with id >= fromId, or null if they are not numIter. */
        synchronized double[] iterations(int fromId, int numIter) {
            List<Job> it = new ArrayList<>();
            for (Map.Entry<Integer, Job> en : byId.entrySet()) {
                Job j = en.getValue();
                if (en.getKey() >= fromId && j.name.startsWith("collectAsMap at KMeans.scala")) {
                    it.add(j);
                }
            }
            if (it.size() != numIter || it.stream().anyMatch(j -> j.end < 0)) {
                return null;
            }
            double[] s = new double[numIter];
            for (int i = 0; i < numIter; i++) {
                long stop = i + 1 < numIter ? it.get(i + 1).start : it.get(i).end;
                s[i] = (stop - it.get(i).start) / 1e3;
            }
            return s;
        }
    }

    /**
     * Runs on {@code spark}, which the caller owns: {@link #close()} leaves it running. Used by
     * {@link EndToEndBenchmark}, which times our estimator on the very input {@link #load} builds here.
     */
    MllibKMeansRunner(SparkSession spark) {
        this.threads = spark.sparkContext().defaultParallelism();
        this.ownsSession = false;
        this.spark = spark;
        spark.sparkContext().addSparkListener(jobs);
    }

    /** The DataFrame of the last {@link #load} (vector column "features"), or null. */
    Dataset<Row> input() {
        return df;
    }

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
        spark.sparkContext().addSparkListener(jobs);
    }

    @Override
    public void close() {
        unload();
        spark.sparkContext().removeSparkListener(jobs);
        if (ownsSession) {
            spark.stop();
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
        StructType schema = new StructType().add("features", SQLDataTypes.VectorType(), false);
        // a cached DataFrame (Spark's in-memory columnar cache), as a user's df.cache() gives: every
        // implementation reads the same cached plan
        df = spark.createDataFrame(rows, schema).persist(StorageLevel.MEMORY_ONLY());
        long cached = df.count();
        if (cached != n) {
            throw new IllegalStateException("cached " + cached + " rows, expected " + n);
        }
        cacheNote = cacheState(partitions);
        rows.unpersist(true);
    }

    @Override
    public String loadNote() {
        return cacheNote;
    }

    /** Empty when a fully cached RDD of {@code partitions} partitions (the DataFrame's cache) exists, else a warning. */
    private String cacheState(int partitions) {
        for (RDDInfo info : spark.sparkContext().getRDDStorageInfo()) {
            if (info.numPartitions() == partitions && info.numCachedPartitions() == partitions) {
                return "";
            }
        }
        return "input DataFrame not (fully) cached: raise -Xmx";
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
        int firstJob = jobs.nextId();
        long t0 = System.nanoTime();
        KMeansModel model = km.fit(df);
        double seconds = (System.nanoTime() - t0) / 1e9;
        try {
            spark.sparkContext().listenerBus().waitUntilEmpty();
        } catch (TimeoutException e) {
            // the iteration times below then come back null
        }
        Vector[] cs = model.clusterCenters();
        int d = cs.length == 0 ? 0 : cs[0].size();
        double[] flat = new double[cs.length * d];
        for (int c = 0; c < cs.length; c++) {
            System.arraycopy(cs[c].toArray(), 0, flat, c * d, d);
        }
        int numIter = model.summary().numIter();
        return new Fit(flat, numIter, seconds, model.summary().trainingCost(), jobs.iterations(firstJob, numIter));
    }

    @Override
    public void unload() {
        if (rows != null) {
            rows.unpersist(true);
            rows = null;
        }
        if (df != null) {
            df.unpersist(true);
            df = null;
        }
    }

}
