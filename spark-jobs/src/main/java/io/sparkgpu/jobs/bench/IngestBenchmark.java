package io.sparkgpu.jobs.bench;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.HostToDevice;
import io.sparkgpu.cuda.PinnedStagingPool;
import io.sparkgpu.common.Features;
import io.sparkgpu.kmeans.KMeansEngine;
import io.sparkgpu.spark.FeatureIngest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Partition packing, one Markdown table: the Row path of today's fits ({@link KMeansEngine#pack}: {@code
 * javaRDD()} deserialises every value into a Row and a DenseVector) against {@link FeatureIngest#read}
 * (InternalRows or ColumnarBatches into primitive arrays), both with k-means' point check, on a cached (or Parquet) DataFrame of
 * n x d random doubles as an ml vector column and as an array&lt;double&gt; column, on local[cores]; GB/s counts
 * the n * d * 8 bytes of features. When a GPU is present, also the host-to-device upload of n * d doubles from a
 * Java array: pageable ({@code cuMemcpyHtoDAsync} from the array) against {@link HostToDevice#copy} (pinned,
 * chunked, double-buffered), with 1 thread and with T threads (each its own stream and share). Usage: {@code
 * --help}.
 */
public final class IngestBenchmark {
    private final Options o;

    IngestBenchmark(Options o) {
        this.o = o;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs.main(args, Options::new, Options::parse, x -> x.help, x -> x.markdown,
                o -> new BenchArgs.Outcome(new IngestBenchmark(o).run(), 0));
    }

    // ------------------------------------------------------------------------------------------ options

    @Command(name = "IngestBenchmark", sortOptions = false,
            description = {"packing partitions (Row path vs FeatureIngest) and GPU upload (pageable vs pinned)."})
    static final class Options {
        static final List<String> COLUMNS = List.of("vector", "array");
        static final List<String> PATHS = List.of("scan", "rows", "ingest");
        static final List<String> SOURCES = List.of("cache", "parquet");
        long n = 2_000_000;
        @Option(order = 2, names = "--d", paramLabel = "D", description = "features per row  [32]")
        int d = 32;
        @Option(order = 3, names = "--cores", paramLabel = "C", description = "local[C]  [all cores]")
        int cores = Runtime.getRuntime().availableProcessors();
        @Option(order = 4, names = "--partitions", paramLabel = "P",
                description = "partitions of the cached DataFrame  [C]")
        int partitions = -1;
        List<String> columns = COLUMNS;
        List<String> paths = PATHS;
        List<String> sources = List.of("cache");
        @Option(order = 8, names = "--reps", paramLabel = "R",
                description = {"timed repetitions after a warm-up (median reported) [3]"})
        int reps = 3;
        boolean upload = true;
        @Option(order = 10, names = "--threads", paramLabel = "T",
                description = "threads of the multi-threaded upload rows  [C]")
        int threads = -1;
        @Option(order = 11, names = "--device", paramLabel = "G", description = "CUDA device ordinal  [0]")
        int device = 0;
        @Option(order = 12, names = "--markdown", paramLabel = "FILE", description = "also write the report to FILE")
        String markdown;
        boolean help;
        String[] argv = new String[0];

        @Option(order = 1, names = "--n", paramLabel = "N", description = "rows  [2000000]")
        void setN(String v) {
            this.n = (long) Double.parseDouble(v.trim());
        }

        @Option(order = 5, names = "--columns", paramLabel = "LIST",
                description = "any of vector,array  [vector,array]")
        void setColumns(String v) {
            this.columns = BenchArgs.choices("--columns", v, COLUMNS);
        }

        @Option(order = 6, names = "--paths", paramLabel = "LIST",
                description = {"any of scan (the source's rows, counted: the floor),",
                    "rows (KMeansTrainer.pack), ingest (FeatureIngest)  [scan,rows,ingest]"})
        void setPaths(String v) {
            this.paths = BenchArgs.choices("--paths", v, PATHS);
        }

        @Option(order = 7, names = "--sources", paramLabel = "LIST",
                description = {"any of cache (df.cache()), parquet (written to a temp dir, read back) [cache]"})
        void setSources(String v) {
            this.sources = BenchArgs.choices("--sources", v, SOURCES);
        }

        @Option(order = 9, names = "--upload", paramLabel = "on|off",
                description = {"the GPU upload rows (skipped without a GPU)  [on]"})
        void setUpload(String v) {
            this.upload = BenchArgs.choice("--upload", v, List.of("on", "off")).equals("on");
        }

        static Options parse(String[] args) {
            Options o = new Options();
            o.argv = args.clone();
            o.help = BenchArgs.parse(o, args);
            if (o.n < 1 || o.d < 1 || o.n * o.d > Integer.MAX_VALUE - 16) {
                throw new IllegalArgumentException("--n and --d must be >= 1 with n * d < 2^31");
            }
            if (o.cores < 1 || o.reps < 1) {
                throw new IllegalArgumentException("--cores and --reps must be >= 1");
            }
            if (o.partitions < 0) {
                o.partitions = o.cores;
            }
            if (o.threads < 0) {
                o.threads = o.cores;
            }
            if (o.partitions < 1 || o.threads < 1) {
                throw new IllegalArgumentException("--partitions and --threads must be >= 1");
            }
            return o;
        }
    }

    // ------------------------------------------------------------------------------------------ run

    record Result(String what, String column, double seconds, double bytes) {
        double gbs() {
            return bytes / seconds / 1e9;
        }
    }

    final List<Result> results = new ArrayList<>();
    final List<String> notes = new ArrayList<>();

    String run() throws Exception {
        if (!o.paths.isEmpty()) {
            runIngest();
        }
        if (o.upload) {
            runUpload();
        }
        return markdown();
    }

    static double median(double[] t) {
        double[] s = t.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : 0.5 * (s[s.length / 2 - 1] + s[s.length / 2]);
    }

    interface Timed {
        void run() throws Exception;
    }

    double time(Timed body) throws Exception {
        body.run(); // warm-up
        double[] t = new double[o.reps];
        for (int r = 0; r < o.reps; r++) {
            long t0 = System.nanoTime();
            body.run();
            t[r] = (System.nanoTime() - t0) * 1e-9;
        }
        return median(t);
    }

    static Dataset<Row> frame(SparkSession spark, long n, int d, int partitions, boolean vector) {
        StructType schema = new StructType().add("features",
                vector ? SQLDataTypes.VectorType() : DataTypes.createArrayType(DataTypes.DoubleType, false), false);
        MapPartitionsFunction<Long, Row> gen = ids -> new Iterator<Row>() {
            @Override
            public boolean hasNext() {
                return ids.hasNext();
            }

            @Override
            public Row next() {
                long id = ids.next();
                SplittableRandom r = new SplittableRandom(id * 0x9E3779B97F4A7C15L + 7);
                double[] p = new double[d];
                for (int j = 0; j < d; j++) {
                    p[j] = r.nextGaussian();
                }
                return RowFactory.create(vector ? Vectors.dense(p) : p);
            }
        };
        return spark.range(0, n, 1, partitions).mapPartitions(gen, Encoders.row(schema));
    }

    void runIngest() throws Exception {
        SparkSession spark = SparkSession.builder()
                .master("local[" + o.cores + "]")
                .appName("spark-gpu ingest benchmark")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        try {
            double bytes = 8.0 * o.n * o.d;
            FeatureIngest.PointCheck clean = (x, off, dim) -> Features.clean(x, off, dim, "features", false);
            for (String source : o.sources) {
                for (String col : o.columns) {
                    Dataset<Row> gen = frame(spark, o.n, o.d, o.partitions, col.equals("vector"));
                    Path dir = null;
                    Dataset<Row> df;
                    if (source.equals("parquet")) {
                        dir = Files.createTempDirectory("ingest-bench");
                        gen.write().mode("overwrite").parquet(dir.toString());
                        df = spark.read().parquet(dir.toString());
                    } else {
                        df = gen;
                        df.cache();
                    }
                    long count = df.count();
                    if (count != o.n) {
                        throw new IllegalStateException(source + ": " + count + " rows, expected " + o.n);
                    }
                    String what = col + " column, " + source;
                    notes.add(what + ": FeatureIngest path " + FeatureIngest.path(df, "features", null) + ", "
                            + df.javaRDD().getNumPartitions() + " partitions");
                    if (o.paths.contains("scan")) {
                        double s = time(() -> df.select("features").queryExecution().toRdd().count());
                        results.add(new Result("scan floor (InternalRows counted)", what, s, bytes));
                        System.err.printf(Locale.ROOT, "[ingest] %s scan: %.3f s%n", what, s);
                    }
                    if (o.paths.contains("rows")) {
                        double s = time(() -> KMeansEngine.pack(df, "features", null, false, null).count());
                        results.add(new Result("Row path (KMeansTrainer.pack)", what, s, bytes));
                        System.err.printf(Locale.ROOT, "[ingest] %s rows: %.3f s%n", what, s);
                    }
                    if (o.paths.contains("ingest")) {
                        double s = time(() -> FeatureIngest.read(df, "features", null, clean).count());
                        results.add(new Result("FeatureIngest.read", what, s, bytes));
                        System.err.printf(Locale.ROOT, "[ingest] %s FeatureIngest: %.3f s%n", what, s);
                    }
                    if (dir != null) {
                        deleteTree(dir);
                    } else {
                        df.unpersist(true);
                    }
                }
            }
        } finally {
            spark.stop();
        }
    }

    static void deleteTree(Path dir) throws IOException {
        try (var s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    void runUpload() throws Exception {
        CudaRuntime.Status st = CudaRuntime.status();
        if (!st.available) {
            notes.add("upload rows skipped: " + st.reason);
            return;
        }
        CudaDevice dev = CudaRuntime.device(o.device);
        notes.add("upload on " + dev);
        int total = (int) (o.n * o.d);
        double[] src = new double[total];
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < total; i++) {
            src[i] = r.nextDouble();
        }
        double bytes = 8.0 * total;
        try (DeviceBuffer dst = DeviceBuffer.ofDoubles(dev, total)) {
            for (int threads : o.threads == 1 ? new int[] {1} : new int[] {1, o.threads}) {
                for (boolean pinned : new boolean[] {false, true}) {
                    double s = time(() -> upload(dev, src, dst, threads, pinned));
                    results.add(new Result("upload " + (pinned ? "pinned (HostToDevice)" : "pageable") + ", "
                            + threads + " thread" + (threads == 1 ? "" : "s"), "double[]", s, bytes));
                    System.err.printf(Locale.ROOT, "[ingest] upload %s x%d: %.3f s%n", pinned ? "pinned" : "pageable",
                            threads, s);
                }
            }
        } finally {
            PinnedStagingPool.releaseIdle();
        }
    }

    static void upload(CudaDevice dev, double[] src, DeviceBuffer dst, int threads, boolean pinned) throws Exception {
        int total = src.length;
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int from = (int) ((long) total * t / threads);
                int to = (int) ((long) total * (t + 1) / threads);
                fs.add(ex.submit(() -> {
                    try (GpuStream s = new GpuStream(dev)) {
                        if (pinned) {
                            HostToDevice.copy(src, from, to - from, dst, 8L * from, s);
                        } else {
                            HostToDevice.copyPageable(src, from, to - from, dst, 8L * from, s);
                        }
                        s.synchronize("upload benchmark");
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            ex.shutdown();
        }
    }

    String markdown() {
        List<String> lines = new ArrayList<>(BenchArgs.runHeader(o.argv));
        lines.add(String.format(Locale.ROOT, "n = %d, d = %d, local[%d], %d generated partitions, median of %d after a warm-up; "
                + "GB/s = n * d * 8 bytes / time", o.n, o.d, o.cores, o.partitions, o.reps));
        for (String note : notes) {
            lines.add(note);
        }
        lines.add("");
        lines.add("| what | column | seconds | GB/s |");
        lines.add("| --- | --- | ---: | ---: |");
        for (Result r : results) {
            lines.add(String.format(Locale.ROOT, "| %s | %s | %.3f | %.2f |", r.what, r.column, r.seconds, r.gbs()));
        }
        return String.join("\n", lines) + "\n";
    }
}
