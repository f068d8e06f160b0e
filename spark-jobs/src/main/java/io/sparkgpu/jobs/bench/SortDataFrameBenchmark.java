package io.sparkgpu.jobs.bench;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.monotonically_increasing_id;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.sort.GpuSort;
import io.sparkgpu.sort.SortConfig;
import io.sparkgpu.sort.SortMetrics;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.storage.StorageLevel;

/**
 * Sorting a cached DataFrame by one column: {@code GpuSort.sort} (GPU and CPU backends), {@code
 * GpuSort.sortWithinPartitions}, against Spark's {@code orderBy} and {@code sortWithinPartitions} on the same data,
 * each timed to a full evaluation (every internal row of the executed plan), median of the repetitions; one Markdown table with
 * where our time goes (the sampling job on the driver; summed over tasks: reading rows and keys, which includes
 * the shuffle fetch of a global sort, the sort kernel or twin, the permutation). Needs Spark (the Spark bundle:
 * {@code run bench sort-df}). Usage: {@code --help}.
 *
 * <p>Up to {@code --verify-max-n} rows, GpuSort's order must equal {@code orderBy(key,
 * monotonically_increasing_id())} row for row (compared by the id column), else the exit status is 3.
 */
public final class SortDataFrameBenchmark {
    static final List<String> ALL_IMPLS = List.of("ours-gpu", "ours-cpu", "spark", "spark-range", "ours-within-gpu",
            "ours-within-cpu", "spark-within");
    static final List<String> ALL_KEYS = List.of("int", "long", "double");

    private final Options o;
    private final List<String> rows = new ArrayList<>();
    private boolean mismatch;

    SortDataFrameBenchmark(Options o) {
        this.o = o;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs.main(args, Options::new, Options::parse, x -> x.help, x -> x.markdown, o -> {
            SortDataFrameBenchmark b = new SortDataFrameBenchmark(o);
            String md = b.run(args);
            return new BenchArgs.Outcome(md, b.mismatch ? 3 : 0);
        });
    }

    @Command(name = "SortDataFrameBenchmark", sortOptions = false,
            description = {"GpuSort vs Spark's orderBy / sortWithinPartitions on a cached DataFrame."})
    static final class Options {
        List<Long> ns = List.of(1_000_000L, 10_000_000L, 100_000_000L);
        List<Long> ranges = List.of(1L << 16, 1L << 32);
        String key = "long";
        int cores = Runtime.getRuntime().availableProcessors();
        int partitions;
        Set<String> impls = new LinkedHashSet<>(ALL_IMPLS);
        int reps = 3;
        long verifyMaxN = 1_000_000L;
        @Option(order = 9, names = "--seed", paramLabel = "S", description = "data seed  [42]")
        long seed = 42;
        @Option(order = 10, names = "--markdown", paramLabel = "FILE", description = "also write the report to FILE")
        String markdown;
        boolean help;

        @Option(order = 1, names = "--n", paramLabel = "LIST",
                description = {"rows, comma-separated (1e6, 1_000_000)  [1e6,1e7,1e8]"})
        void setN(String v) {
            this.ns = longs("--n", v);
        }

        @Option(order = 2, names = "--range", paramLabel = "LIST",
                description = {"keys uniform in [0, range) (2^k or numbers)  [2^16,2^32]",
                    "(<= 2^24 after offsetting: counting sort; above: radix sort)"})
        void setRange(String v) {
            this.ranges = longs("--range", v);
        }

        @Option(order = 3, names = "--key", paramLabel = "TYPE",
                description = {"int, long or double (double: uniform in [0, range))  [long]"})
        void setKey(String v) {
            this.key = BenchArgs.choice("--key", v, ALL_KEYS);
        }

        @Option(order = 4, names = "--partitions", paramLabel = "P",
                description = "input and output partitions  [cores]")
        void setPartitions(String v) {
            this.partitions = positive("--partitions", v);
        }

        @Option(order = 5, names = "--cores", paramLabel = "C", description = "Spark local[C]  [available cores]")
        void setCores(String v) {
            this.cores = positive("--cores", v);
        }

        @Option(order = 6, names = "--impls", paramLabel = "LIST",
                description = {"any of ours-gpu,ours-cpu,spark,spark-range,ours-within-gpu,ours-within-cpu,spark-within  [all]",
                    "(spark-range: Spark's repartitionByRange, the sampling and the exchange of orderBy without its sort)"})
        void setImpls(String v) {
            this.impls = new LinkedHashSet<>(BenchArgs.choices("--impls", v, ALL_IMPLS));
        }

        @Option(order = 7, names = "--reps", paramLabel = "R",
                description = "timed runs after a warm-up (median reported)  [3]")
        void setReps(String v) {
            this.reps = positive("--reps", v);
        }

        @Option(order = 8, names = "--verify-max-n", paramLabel = "N",
                description = {"check GpuSort against orderBy up to N rows  [1e6]"})
        void setVerifyMaxN(String v) {
            this.verifyMaxN = (long) number("--verify-max-n", v);
        }

        static Options parse(String[] args) {
            Options o = new Options();
            o.help = BenchArgs.parse(o, args);
            if (o.partitions == 0) {
                o.partitions = o.cores;
            }
            return o;
        }

        static double number(String k, String v) {
            String t = v.trim().replace("_", "");
            try {
                if (t.startsWith("2^")) {
                    return Math.pow(2, Integer.parseInt(t.substring(2)));
                }
                return Double.parseDouble(t);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(k + ": not a number: '" + v + "'");
            }
        }

        static List<Long> longs(String k, String v) {
            List<Long> out = new ArrayList<>();
            for (String s : v.split(",")) {
                if (!s.isBlank()) {
                    double d = number(k, s);
                    if (d < 1 || d > 0x1p62) {
                        throw new IllegalArgumentException(k + ": must be in [1, 2^62], got " + s.trim());
                    }
                    out.add((long) d);
                }
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException(k + ": no value given");
            }
            return out;
        }

        static int positive(String k, String v) {
            int x = (int) number(k, v);
            if (x < 1) {
                throw new IllegalArgumentException(k + ": must be >= 1, got " + v.trim());
            }
            return x;
        }
    }

    String run(String[] argv) {
        SparkSession spark = SparkSession.builder().master("local[" + o.cores + "]").appName("sort-df-benchmark")
                .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", String.valueOf(o.partitions)).getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        try {
            for (long n : o.ns) {
                for (long range : o.ranges) {
                    measure(spark, n, range);
                }
            }
        } finally {
            spark.stop();
        }
        List<String> md = new ArrayList<>(BenchArgs.runHeader(argv));
        md.add("Spark " + spark.version() + " local[" + o.cores + "], " + o.partitions + " partitions, key " + o.key
                + "; seconds: median of " + o.reps + " after a warm-up, to a full evaluation (every row of the executed plan).");
        md.add("Our breakdown: sample = driver seconds of the sampling job; read, sort = task seconds summed over "
                + "partitions (read includes a global sort's shuffle fetch; sort: the counting/radix sort incl. the "
                + "input-order pass; emitting the sorted rows is the consumer's time); backend and sorts: where they "
                + "ran.");
        md.add("");
        md.add("| n | range | impl | seconds | M rows/s | vs spark | sample s | read s | sort s | backend | sorts |");
        md.add("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |");
        md.addAll(rows);
        if (mismatch) {
            md.add("");
            md.add("**MISMATCH: GpuSort's order differs from orderBy(key, monotonically_increasing_id())**");
        }
        return String.join("\n", md) + "\n";
    }

    private Dataset<Row> data(SparkSession spark, long n, long range) {
        Column u = functions.rand(o.seed);
        Column k;
        switch (o.key) {
            case "int":
                k = functions.floor(u.multiply((double) range)).cast(DataTypes.IntegerType);
                break;
            case "double":
                k = u.multiply((double) range);
                break;
            default:
                k = functions.floor(u.multiply((double) range)).cast(DataTypes.LongType);
        }
        Dataset<Row> df = spark.range(0, n, 1, o.partitions).select(col("id"), k.as("k"))
                .persist(StorageLevel.MEMORY_ONLY());
        df.count();
        return df;
    }

    private void measure(SparkSession spark, long n, long range) {
        if (o.key.equals("int") && range > (1L << 31)) {
            System.err.println("[sort-df] skipping range " + range + ": above the int keys' range");
            return;
        }
        System.err.printf(Locale.ROOT, "[sort-df] n=%d range=%d%n", n, range);
        Dataset<Row> df = data(spark, n, range);
        try {
            double sparkSeconds = Double.NaN;
            if (o.impls.contains("spark")) {
                sparkSeconds = time(() -> df.orderBy(col("k")));
                row(n, range, "spark orderBy", sparkSeconds, sparkSeconds, null);
            }
            if (o.impls.contains("spark-range")) {
                // what every global sort through Spark's exchange pays before sorting anything
                double s = time(() -> df.repartitionByRange(o.partitions, col("k")));
                row(n, range, "spark repartitionByRange (no sort)", s, sparkSeconds, null);
            }
            double sparkWithin = Double.NaN;
            if (o.impls.contains("spark-within")) {
                sparkWithin = time(() -> df.sortWithinPartitions(col("k")));
                row(n, range, "spark sortWithinPartitions", sparkWithin, sparkWithin, null);
            }
            for (String impl : List.of("ours-gpu", "ours-cpu", "ours-within-gpu", "ours-within-cpu")) {
                if (!o.impls.contains(impl)) {
                    continue;
                }
                boolean within = impl.contains("within");
                Backend b = impl.endsWith("gpu") ? Backend.GPU : Backend.CPU;
                SortMetrics[] last = new SortMetrics[1];
                double s;
                try {
                    s = time(() -> {
                        last[0] = new SortMetrics(spark.sparkContext());
                        SortConfig cfg = new SortConfig("k").backend(b).numPartitions(o.partitions).metrics(last[0]);
                        return within ? GpuSort.sortWithinPartitions(df, cfg) : GpuSort.sort(df, cfg);
                    });
                } catch (RuntimeException e) {
                    rows.add(String.format(Locale.ROOT, "| %d | %d | %s | failed: %s | | | | | | | |", n, range, impl,
                            e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage().replace('|', '/')));
                    continue;
                }
                row(n, range, "GpuSort " + (within ? "sortWithinPartitions" : "sort") + " (" + b.id() + ")", s,
                        within ? sparkWithin : sparkSeconds, last[0]);
            }
            if (n <= o.verifyMaxN && (o.impls.contains("ours-cpu") || o.impls.contains("ours-gpu"))) {
                Backend b = o.impls.contains("ours-gpu") ? Backend.AUTO : Backend.CPU;
                List<Row> want = df.orderBy(col("k"), monotonically_increasing_id()).select("id").collectAsList();
                List<Row> got = GpuSort.sort(df, new SortConfig("k").backend(b).numPartitions(o.partitions))
                        .select("id").collectAsList();
                if (!want.equals(got)) {
                    mismatch = true;
                    System.err.println("[sort-df] MISMATCH at n=" + n + " range=" + range);
                }
            }
        } finally {
            df.unpersist(true);
        }
    }

    /** Median seconds of o.reps evaluations after one warm-up. */
    private double time(Supplier<Dataset<Row>> sorted) {
        double[] s = new double[o.reps];
        for (int r = -1; r < o.reps; r++) {
            long t0 = System.nanoTime();
            // every row of the executed plan, as internal rows (what the noop sink does, without its data source
            // lookup, whose service loader would pull every file source into the trimmed Spark bundle)
            sorted.get().queryExecution().toRdd().count();
            double sec = (System.nanoTime() - t0) / 1e9;
            if (r >= 0) {
                s[r] = sec;
            }
        }
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private void row(long n, long range, String impl, double seconds, double spark, SortMetrics m) {
        String breakdown = m == null ? "| | | | | "
                : String.format(Locale.ROOT, "| %.3f | %.3f | %.3f | %s | %d counting, %d radix ",
                        m.sampleSeconds, m.readNanos.value() / 1e9, m.sortNanos.value() / 1e9, m.backend(),
                        m.countingSorts.value(), m.radixSorts.value());
        rows.add(String.format(Locale.ROOT, "| %d | %d | %s | %.3f | %.1f | %s %s|", n, range, impl, seconds,
                n / seconds / 1e6, Double.isNaN(spark) ? "" : String.format(Locale.ROOT, "%.2fx", spark / seconds),
                breakdown));
    }
}
