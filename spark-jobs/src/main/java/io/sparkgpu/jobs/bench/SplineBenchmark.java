package io.sparkgpu.jobs.bench;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.spline.GpuMonotoneCdf;
import io.sparkgpu.spline.GpuMonotoneCdfModel;
import io.sparkgpu.spline.Spline;
import io.sparkgpu.spline.SplineCdf;
import io.sparkgpu.spline.SplineConfig;
import io.sparkgpu.spline.SplineEngine;
import io.sparkgpu.spline.SplineRangePartitioner;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Monotone splines, one Markdown table: construction (knots/s) and evaluation and inverse throughput (queries/s,
 * random and sorted queries) of the GPU kernels alone (best of --reps launches, CUDA events) against the CPU twin on
 * all cores (best wall time); the GPU results must equal the twin's bits (exit status 3 otherwise). Then, on Spark
 * local[*] ({@code --ops cdf,partition} alone: no kernel case): the smooth CDF's quantiles ({@link GpuMonotoneCdf},
 * whole column and a 10^6 sample) against {@code approxQuantile} (time and the largest rank error against the exact
 * ranks, counted by one aggregation over the column), and the quantile range partitioner against Spark's range
 * partitioning ({@code repartitionByRange}) on skewed keys: partition imbalance (largest / mean) and time, fit and
 * shuffle apart. Each data set is generated in seeded partitions and cached once; every phase is a row (section
 * {@code data} for the generation) and a progress line on stderr. Usage: {@code --help}.
 */
public final class SplineBenchmark {

    static final List<String> BACKENDS = List.of("gpu", "cpu");
    static final List<String> OPS = List.of("build", "value", "inverse", "cdf", "partition");
    static final List<String> ORDERS = List.of("random", "sorted");
    static final List<String> DISTS = List.of("lognormal", "zipf", "bimodal");
    /** Queries the CPU twin evaluates to check the GPU's bits in a case above --cpu-max-size. */
    static final int CHECK_QUERIES = 1_000_000;

    @Command(name = "SplineBenchmark", sortOptions = false,
            description = {"monotone spline kernels, CDF vs approxQuantile, quantile partitioner; one Markdown table."})
    static final class Options {
        List<Long> n = List.of(1_000_000L, 10_000_000L, 100_000_000L);
        @Option(order = 2, names = "--queries", converter = BenchArgs.Count.class, paramLabel = "Q",
                description = "queries per evaluation case  [1e8]")
        long queries = 100_000_000L;
        List<String> backends = BACKENDS;
        List<String> ops = OPS;
        List<String> orders = ORDERS;
        @Option(order = 6, names = "--cpu-max-size", converter = BenchArgs.Count.class, paramLabel = "N",
                description = {"time the CPU twin only up to N knots and N queries; above, the GPU bits are",
                    "still checked: the twin builds once untimed and evaluates the first 10^6",
                    "queries  [1e7]"})
        long cpuMaxSize = 10_000_000L;
        @Option(order = 7, names = "--cdf-rows", converter = BenchArgs.Count.class, paramLabel = "N",
                description = {"rows of the CDF and partitioner cases (0 skips); generated in seeded",
                    "partitions, cached once per case; each phase's time is a row and a",
                    "progress line on stderr  [1e7]"})
        long cdfRows = 10_000_000L;
        @Option(order = 8, names = "--partitions", converter = BenchArgs.IntCount.class, paramLabel = "P",
                description = "partitions of the partitioner case  [64]")
        int partitions = 64;
        List<String> dists = DISTS;
        @Option(order = 9, names = "--reps", converter = BenchArgs.IntCount.class, paramLabel = "R",
                description = "timed runs (best)  [5]")
        int reps = 5;
        @Option(order = 10, names = "--device", paramLabel = "G", description = "CUDA device ordinal  [0]")
        int device;
        @Option(order = 11, names = "--markdown", paramLabel = "FILE", description = "also write the report to FILE")
        String markdown;
        boolean help;
        String[] argv = new String[0];

        @Option(order = 1, names = "--n", paramLabel = "LIST",
                description = {"knots of the construction and evaluation cases  [1e6,1e7,1e8]"})
        void setN(String v) {
            List<Long> l = new ArrayList<>();
            for (String s : v.split(",")) {
                l.add(KMeansBenchmark.Options.count(s));
            }
            this.n = l;
        }

        @Option(order = 3, names = "--backends", paramLabel = "LIST", description = "gpu,cpu  [gpu,cpu]")
        void setBackends(String v) {
            this.backends = BenchArgs.choices("--backends", v, BACKENDS);
        }

        @Option(order = 4, names = "--ops", paramLabel = "LIST", description = {"any of build,value,inverse (kernels), cdf (quantiles vs approxQuantile),",
                    "partition (partitioner vs repartitionByRange)  [all]"})
        void setOps(String v) {
            this.ops = BenchArgs.choices("--ops", v, OPS);
        }

        @Option(order = 5, names = "--orders", paramLabel = "LIST",
                description = {"query orders of value/inverse: random,sorted  [all]"})
        void setOrders(String v) {
            this.orders = BenchArgs.choices("--orders", v, ORDERS);
        }

        @Option(order = 8, names = "--dists", paramLabel = "LIST",
                description = "keys of the partitioner case: lognormal,zipf,bimodal  [all]")
        void setDists(String v) {
            this.dists = BenchArgs.choices("--dists", v, DISTS);
        }

        static Options parse(String[] args) {
            Options o = new Options();
            o.argv = args.clone();
            o.help = BenchArgs.parse(o, args);
            for (long k : o.n) {
                if (k < 2 || k > Integer.MAX_VALUE / 2) {
                    throw new IllegalArgumentException("--n: each must be in [2, 2^30], got " + k);
                }
            }
            if (o.queries < 1 || o.queries > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("--queries must be in [1, 2^31 - 9], got " + o.queries);
            }
            if (o.cdfRows != 0 && (o.cdfRows < 2 || o.cdfRows > Integer.MAX_VALUE - 8)) {
                throw new IllegalArgumentException("--cdf-rows must be 0 or in [2, 2^31 - 9], got " + o.cdfRows);
            }
            if (o.cpuMaxSize < 0) {
                throw new IllegalArgumentException("--cpu-max-size must be >= 0, got " + o.cpuMaxSize);
            }
            if (o.reps < 1 || o.partitions < 1) {
                throw new IllegalArgumentException("--reps and --partitions must be >= 1");
            }
            return o;
        }
    }

    public static void main(String[] args) throws Exception {
        BenchArgs.main(args, Options::new, Options::parse, x -> x.help, x -> x.markdown, SplineBenchmark::run);
    }

    /** Strictly increasing x with gaps in (0.5, 1.5], increasing y with flat stretches (deterministic). */
    static double[][] data(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] x = new double[n];
        double[] y = new double[n];
        for (int i = 1; i < n; i++) {
            x[i] = x[i - 1] + 0.5 + r.nextDouble();
            y[i] = y[i - 1] + (r.nextInt(8) == 0 ? 0 : r.nextDouble());
        }
        return new double[][] {x, y};
    }

    /** q uniform queries over [lo, hi]: random order, or sorted. */
    static double[] queries(int q, double lo, double hi, boolean sorted, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] z = new double[q];
        for (int i = 0; i < q; i++) {
            z[i] = lo + (hi - lo) * r.nextDouble();
        }
        if (sorted) {
            Arrays.parallelSort(z);
        }
        return z;
    }

    interface Timed {
        void run();
    }

    static double bestMillis(int reps, Timed t) {
        double best = Double.MAX_VALUE;
        for (int i = 0; i < reps; i++) {
            long t0 = System.nanoTime();
            t.run();
            best = Math.min(best, (System.nanoTime() - t0) / 1e6);
        }
        return best;
    }

    static String row(String section, String c, String size, String backend, double ms, String rate, String notes) {
        return String.format(Locale.ROOT, "| %s | %s | %s | %s | %.3f | %s | %s |", section, c, size, backend, ms, rate,
                notes);
    }

    static String rate(double count, double ms, String unit) {
        return String.format(Locale.ROOT, "%.3g %s", count / (ms / 1e3), unit);
    }

    static BenchArgs.Outcome run(Options o) {
        List<String> out = new ArrayList<>(BenchArgs.runHeader(o.argv));
        boolean gpu = o.backends.contains("gpu");
        boolean cpu = o.backends.contains("cpu");
        CudaDevice dev = gpu ? CudaRuntime.device(o.device) : null;
        out.add("Device: " + (gpu ? dev.toString() : "none (cpu only)") + "; CPU twin: "
                + Runtime.getRuntime().availableProcessors() + " cores");
        out.add("");
        out.add("| section | case | size | backend | ms | rate | notes |");
        out.add("| --- | --- | --- | --- | ---: | ---: | --- |");
        int mismatches = 0;
        boolean build = o.ops.contains("build");
        boolean kernels = build || o.ops.contains("value") || o.ops.contains("inverse");
        for (long nl : kernels ? o.n : List.<Long>of()) {
            int n = (int) nl;
            double[][] d = data(n, 7 + n);
            boolean timeCpu = cpu && n <= o.cpuMaxSize;
            for (SplineConfig.Kind kind : SplineConfig.Kind.values()) {
                Spline ref = null;
                if (timeCpu && build) {
                    Spline[] s = new Spline[1];
                    double ms = bestMillis(o.reps, () -> s[0] = SplineEngine.buildCpu(kind, d[0], d[1], null));
                    ref = s[0];
                    out.add(row("build", kind.id(), n + " points", "cpu", ms, rate(n, ms, "points/s"), ""));
                } else if (cpu) {
                    ref = SplineEngine.buildCpu(kind, d[0], d[1], null); // untimed: the reference bits
                }
                if (gpu && build) {
                    double[] ms = new double[1];
                    Spline g = SplineEngine.buildTimed(dev, kind, d[0], d[1], o.reps, ms);
                    boolean same = ref == null || ref.sameBits(g);
                    mismatches += same ? 0 : 1;
                    out.add(row("build", kind.id(), n + " points", "gpu", ms[0], rate(n, ms[0], "points/s"),
                            ref == null ? "" : same ? "= CPU bits" : "DIFFERS from CPU"));
                }
                if (o.ops.contains("value") || o.ops.contains("inverse")) {
                    Spline s = ref != null ? ref : SplineEngine.buildTimed(dev, kind, d[0], d[1], 0, null);
                    mismatches += queries(o, dev, s, n, out);
                }
            }
        }
        if (o.cdfRows > 0 && (o.ops.contains("cdf") || o.ops.contains("partition"))) {
            SparkSession spark = SparkSession.builder().master("local[*]").appName("SplineBenchmark")
                    .config("spark.ui.enabled", "false").getOrCreate();
            try {
                if (o.ops.contains("cdf")) {
                    cdf(o, spark, out);
                }
                if (o.ops.contains("partition")) {
                    partitioner(o, spark, out);
                }
            } finally {
                spark.stop();
            }
        }
        out.add("");
        out.add(mismatches == 0 ? "Every GPU result equals the CPU twin's bits."
                : mismatches + " GPU results differ from the CPU twin.");
        return new BenchArgs.Outcome(String.join("\n", out) + "\n", mismatches == 0 ? 0 : 3);
    }

    /** Evaluation and inverse, random and sorted queries; returns the mismatches. */
    static int queries(Options o, CudaDevice dev, Spline s, int n, List<String> out) {
        int q = (int) o.queries;
        boolean cpu = o.backends.contains("cpu");
        boolean timeCpu = cpu && n <= o.cpuMaxSize && q <= o.cpuMaxSize;
        int bad = 0;
        for (String order : o.orders) {
            boolean sorted = order.equals("sorted");
            for (boolean inverse : new boolean[] {false, true}) {
                if (!o.ops.contains(inverse ? "inverse" : "value")) {
                    continue;
                }
                double[] in = inverse ? queries(q, s.yMin(), s.yMax(), sorted, 13)
                        : queries(q, s.xMin(), s.xMax(), sorted, 11);
                String c = s.kind.id() + (inverse ? " inverse, " : " value, ") + order;
                double[] ref = null;
                if (timeCpu) {
                    double[] res = new double[q];
                    double ms = bestMillis(o.reps, () -> cpuQueries(s, in, inverse, res));
                    ref = res;
                    out.add(row("eval", c, n + " points, " + q + " queries", "cpu", ms, rate(q, ms, "queries/s"),
                            ""));
                } else if (cpu) {
                    ref = new double[Math.min(q, CHECK_QUERIES)]; // untimed: the reference bits of a prefix
                    cpuQueries(s, Arrays.copyOf(in, ref.length), inverse, ref);
                }
                if (dev != null) {
                    double[] res = new double[q];
                    double[] ms = new double[1];
                    SplineEngine.queriesTimed(dev, s, in, inverse, res, o.reps, ms);
                    boolean same = ref == null || Arrays.equals(ref, Arrays.copyOf(res, ref.length));
                    bad += same ? 0 : 1;
                    String note = ref == null ? "" : (same ? "= CPU bits" : "DIFFERS from CPU")
                            + (ref.length < q ? " (first " + ref.length + " queries)" : "");
                    out.add(row("eval", c, n + " points, " + q + " queries", "gpu", ms[0],
                            rate(q, ms[0], "queries/s"), note));
                }
            }
        }
        return bad;
    }

    private static void cpuQueries(Spline s, double[] in, boolean inverse, double[] res) {
        if (inverse) {
            SplineEngine.inverseCpu(s, in, SplineConfig.Extrapolate.CLIP, res);
        } else {
            SplineEngine.evalCpu(s, in, SplineConfig.Extrapolate.CLIP, res, null);
        }
    }

    static final double[] PROBS = {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999};

    /** The largest |rank(estimate) - p (n - 1)| / n over the levels, against the sorted column. */
    static double rankError(double[] sorted, double[] est) {
        long[] less = new long[est.length];
        long[] leq = new long[est.length];
        for (int i = 0; i < est.length; i++) {
            less[i] = SplineCdf.lowerBound(sorted, est[i]);
            leq[i] = SplineCdf.lowerBound(sorted, Math.nextUp(est[i]));
        }
        return rankError(sorted.length, less, leq);
    }

    /**
     * The same from counts: less[i] rows below estimate i and leq[i] at or below it (ranks less..leq-1 hold its
     * value), of n.
     */
    static double rankError(long n, long[] less, long[] leq) {
        double worst = 0;
        for (int i = 0; i < PROBS.length; i++) {
            long lo = less[i];
            long hi = Math.max(lo, leq[i] - 1);
            double target = PROBS[i] * (n - 1);
            double e = target < lo ? lo - target : target > hi ? target - hi : 0;
            worst = Math.max(worst, e / n);
        }
        return worst;
    }

    /** Rows of df's column v below and at or below each estimate: one aggregation pass (no sort, no collect). */
    static long[][] rankCounts(Dataset<Row> df, List<double[]> estimates) {
        List<org.apache.spark.sql.Column> aggs = new ArrayList<>();
        for (double[] est : estimates) {
            for (double e : est) {
                aggs.add(functions.count(functions.when(functions.col("v").lt(e), 1)));
                aggs.add(functions.count(functions.when(functions.col("v").leq(e), 1)));
            }
        }
        Row r = df.agg(aggs.get(0), aggs.subList(1, aggs.size()).toArray(new org.apache.spark.sql.Column[0])).head();
        long[][] out = new long[estimates.size() * 2][];
        int c = 0;
        for (int m = 0; m < estimates.size(); m++) {
            int k = estimates.get(m).length;
            out[2 * m] = new long[k];
            out[2 * m + 1] = new long[k];
            for (int i = 0; i < k; i++) {
                out[2 * m][i] = r.getLong(c++);
                out[2 * m + 1][i] = r.getLong(c++);
            }
        }
        return out;
    }

    /** Seconds since t0 as a progress line on stderr (a run cut off by a time limit still shows where it was). */
    static double phase(String what, long t0) {
        double sec = (System.nanoTime() - t0) / 1e9;
        System.err.printf(Locale.ROOT, "[spline bench] %s: %.2f s%n", what, sec);
        return sec;
    }

    /** A lognormal column of n rows (seeded per partition). */
    static Dataset<Row> lognormal(SparkSession spark, long n, int parts) {
        return spark.range(0, n, 1, parts).select(functions.exp(functions.randn(5).multiply(1.5)).as("v"));
    }

    static void cdf(Options o, SparkSession spark, List<String> out) {
        long n = o.cdfRows;
        int parts = Math.max(2, Runtime.getRuntime().availableProcessors());
        long t0 = System.nanoTime();
        Dataset<Row> df = lognormal(spark, n, parts).cache();
        df.count();
        double gen = phase("cdf data: " + n + " lognormal rows generated and cached", t0);
        out.add(row("data", "lognormal, generated in " + parts + " seeded partitions and cached", n + " rows",
                "spark", gen * 1e3, rate(n, gen * 1e3, "rows/s"), ""));
        String backend = o.backends.contains("gpu") ? "auto" : "cpu";
        List<String> names = new ArrayList<>();
        List<String> backends = new ArrayList<>();
        List<Double> times = new ArrayList<>();
        List<double[]> estimates = new ArrayList<>();
        for (long sample : new long[] {0, 1_000_000}) {
            if (sample >= n) {
                continue;
            }
            GpuMonotoneCdfModel[] m = new GpuMonotoneCdfModel[1];
            long t = System.nanoTime();
            m[0] = new GpuMonotoneCdf().setInputCol("v").setSampleSize(sample).setBackend(backend).fit(df);
            String name = "GpuMonotoneCdf, " + (sample == 0 ? "whole column" : "sample " + sample) + ", 1025 knots";
            times.add(phase("cdf: " + name, t) * 1e3);
            names.add(name);
            backends.add(backend);
            estimates.add(m[0].quantile(PROBS));
        }
        for (double rel : new double[] {1e-2, 1e-3}) {
            long t = System.nanoTime();
            estimates.add(df.stat().approxQuantile("v", PROBS, rel));
            String name = "approxQuantile, relativeError " + rel;
            times.add(phase("cdf: " + name, t) * 1e3);
            names.add(name);
            backends.add("spark");
        }
        long t = System.nanoTime();
        long[][] counts = rankCounts(df, estimates); // the exact ranks of every estimate, one pass
        phase("cdf: exact ranks of the estimates (one aggregation)", t);
        for (int i = 0; i < names.size(); i++) {
            out.add(row("quantiles", names.get(i), n + " rows", backends.get(i), times.get(i),
                    rate(n, times.get(i), "rows/s"), String.format(Locale.ROOT, "max rank error %.2e n",
                            rankError(n, counts[2 * i], counts[2 * i + 1]))));
        }
        df.unpersist();
    }

    /** Skewed keys: lognormal, Zipf-like with ties, bimodal. */
    static Dataset<Row> skewed(SparkSession spark, String kind, long n, int parts) {
        Dataset<Row> ids = spark.range(0, n, 1, parts).toDF();
        switch (kind) {
            case "lognormal":
                return ids.select(functions.col("id"), functions.exp(functions.randn(3).multiply(2)).as("key"));
            case "zipf":
                return ids.select(functions.col("id"), functions.floor(functions.pow(functions.lit(1.0)
                        .minus(functions.rand(3)), -1 / 1.2)).as("key"));
            default:
                return ids.select(functions.col("id"), functions.when(functions.rand(3).lt(0.5),
                        functions.randn(4)).otherwise(functions.randn(4).multiply(0.01).plus(1000)).as("key"));
        }
    }

    static void partitioner(Options o, SparkSession spark, List<String> out) {
        long n = o.cdfRows;
        int p = o.partitions;
        int parts = Math.max(2, Runtime.getRuntime().availableProcessors());
        for (String kind : o.dists) {
            long t0 = System.nanoTime();
            Dataset<Row> df = skewed(spark, kind, n, parts).cache();
            df.count();
            double gen = phase("partition data: " + n + " " + kind + " rows generated and cached", t0);
            out.add(row("data", kind + ", generated in " + parts + " seeded partitions and cached", n + " rows",
                    "spark", gen * 1e3, rate(n, gen * 1e3, "rows/s"), ""));
            long t1 = System.nanoTime();
            String backend = o.backends.contains("gpu") ? "auto" : "cpu";
            SplineRangePartitioner sp = SplineRangePartitioner.fit(df, "key", p, backend);
            double fit = phase("partition: " + kind + ", fit (sample map, exact bin counts)", t1);
            long t2 = System.nanoTime();
            long[] sizes = SplineRangePartitioner.partitionSizes(sp.partition(df, "key"));
            double shuffle = phase("partition: " + kind + ", shuffle and count", t2);
            double ms = (fit + shuffle) * 1e3;
            out.add(row("partition", "SplineRangePartitioner, " + kind, n + " rows, " + p + " partitions", backend,
                    ms, rate(n, ms, "rows/s"), String.format(Locale.ROOT, "imbalance %.4f; fit %.0f ms, shuffle %.0f"
                            + " ms; sizes %s the counted ones", SplineRangePartitioner.imbalance(sizes), fit * 1e3,
                            shuffle * 1e3, Arrays.equals(sizes, sp.expectedSizes()) ? "=" : "DIFFER from")));
            long t3 = System.nanoTime();
            sizes = SplineRangePartitioner.partitionSizes(df.repartitionByRange(p, functions.col("key")));
            double ms2 = phase("partition: " + kind + ", repartitionByRange and count", t3) * 1e3;
            out.add(row("partition", "repartitionByRange, " + kind, n + " rows, " + p + " partitions", "spark",
                    ms2, rate(n, ms2, "rows/s"), String.format(Locale.ROOT, "imbalance %.4f",
                            SplineRangePartitioner.imbalance(sizes))));
            df.unpersist();
        }
    }
}
