package io.sparkgpu.jobs.bench;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.isotonic.IsoColumns;
import io.sparkgpu.isotonic.IsoPoints;
import io.sparkgpu.isotonic.IsoScales;
import io.sparkgpu.isotonic.IsotonicConfig;
import io.sparkgpu.isotonic.IsotonicEngine;
import io.sparkgpu.isotonic.IsotonicPredictor;
import io.sparkgpu.isotonic.IsotonicResult;
import io.sparkgpu.isotonic.L2Blocks;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Isotonic regression (least squares), one table: ours on the GPU (PAVA-merge of host-pooled points, the whole
 * sort+pool+PAVA-merge on the device from the raw rows, and MLS where n is small enough for O(n^2)), ours on
 * the CPU (serial PAVA on one thread; T range partitions on T threads merged by the decomposition theorem) and
 * MLlib's {@code IsotonicRegression} on local[T] when Spark is on the class path.
 * Data as in the design document's table: noisy monotone, constant and antitone (decreasing data fitted
 * increasingly) labels of uniform random features. Every implementation fits the same rows; ours are checked to
 * be bitwise equal to the one-thread CPU result, MLlib by the largest absolute difference of predictions.
 *
 * <p>Runs without Spark (the GPU bundle): the MLlib part is {@link MllibIsotonicRunner}, loaded by name. Usage:
 * {@code --help}.
 */
public final class IsotonicBenchmark {
    static final List<String> ALL_IMPLS = List.of("gpu", "mls", "cpu1", "cpuN", "spark", "mllib");
    static final List<String> ALL_SHAPES = List.of("noisy", "constant", "antitone");

    private final Options o;

    IsotonicBenchmark(Options o) {
        this.o = o;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs.main(args, Options::new, Options::parse, x -> x.help, x -> x.markdown, o -> {
            IsotonicBenchmark b = new IsotonicBenchmark(o);
            String md = b.run();
            return new BenchArgs.Outcome(md, b.mismatch ? 3 : 0);
        });
    }

    // ------------------------------------------------------------------ options

    @Command(name = "IsotonicBenchmark", sortOptions = false,
            description = {"isotonic regression, ours (GPU PAVA-merge, GPU sort+pool+PAVA-merge, GPU MLS, CPU)",
                "vs MLlib, one Markdown table."})
    static final class Options {
        long[] ns = {1_000_000L, 10_000_000L, 100_000_000L};
        long[] smallNs = {4096, 16_384, 65_536};
        List<String> shapes = ALL_SHAPES;
        Set<String> impls = new LinkedHashSet<>(ALL_IMPLS);
        @Option(order = 5, names = "--threads", converter = BenchArgs.IntCount.class, paramLabel = "T",
                description = {"CPU threads / range partitions / local[T]  [available cores]"})
        int threads = Runtime.getRuntime().availableProcessors();
        @Option(order = 6, names = "--chunk", converter = BenchArgs.IntCount.class, paramLabel = "C",
                description = {"points per GPU thread in PAVA-merge's first round  [256]"})
        int chunk = IsotonicEngine.DEFAULT_CHUNK;
        @Option(order = 7, names = "--mls-max", converter = BenchArgs.Count.class, paramLabel = "N",
                description = {"MLS is O(n^2): run it only up to N distinct points  [65536]"})
        long mlsMax = 65_536;
        @Option(order = 8, names = "--mllib-max", converter = BenchArgs.Count.class, paramLabel = "N",
                description = "run MLlib only up to N rows  [10000000]")
        long mllibMax = 10_000_000L;
        @Option(order = 9, names = "--reps", converter = BenchArgs.IntCount.class, paramLabel = "R",
                description = "timed repetitions (median; 1 for n >= 5e7)  [3]")
        int reps = 3;
        @Option(order = 10, names = "--seed", paramLabel = "S", description = "data seed  [42]")
        long seed = 42;
        @Option(order = 11, names = "--device", paramLabel = "G", description = "CUDA device ordinal  [0]")
        int device = 0;
        @Option(order = 12, names = "--markdown", paramLabel = "FILE", description = "also write the report to FILE")
        String markdown;
        boolean help;

        @Option(order = 1, names = "--n", paramLabel = "LIST",
                description = "row counts (1e6 style accepted)  [1e6,1e7,1e8]")
        void setN(String v) {
            this.ns = counts(v);
        }

        @Option(order = 2, names = "--small-n", paramLabel = "LIST",
                description = {"extra small sizes where MLS competes  [4096,16384,65536]"})
        void setSmallN(String v) {
            this.smallNs = v.isBlank() ? new long[0] : counts(v);
        }

        @Option(order = 3, names = "--shapes", paramLabel = "LIST", description = "noisy,constant,antitone  [all]")
        void setShapes(String v) {
            this.shapes = BenchArgs.choices("--shapes", v, ALL_SHAPES);
        }

        @Option(order = 4, names = "--impls", paramLabel = "LIST",
                description = {"any of gpu,mls,cpu1,cpuN,spark,mllib (spark: our  [all]",
                    "estimator on local[T], backend auto)"})
        void setImpls(String v) {
            this.impls = new LinkedHashSet<>(BenchArgs.choices("--impls", v, ALL_IMPLS));
        }

        static Options parse(String[] args) {
            Options o = new Options();
            o.help = BenchArgs.parse(o, args);
            for (long n : o.ns) {
                if (n < 1 || n > Integer.MAX_VALUE - 8) {
                    throw new IllegalArgumentException("--n values must be in [1, 2^31 - 8)");
                }
            }
            if (o.threads < 1 || o.chunk < 1 || o.reps < 1) {
                throw new IllegalArgumentException("--threads, --chunk and --reps must be >= 1");
            }
            return o;
        }

        static long[] counts(String v) {
            return Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                    .mapToLong(KMeansBenchmark.Options::count).toArray();
        }
    }

    // ------------------------------------------------------------------ data

    /** Rows of one shape: features uniform in [0, 1), labels f(x) + N(0, 0.1^2). */
    static double[][] generate(int n, String shape, long seed) {
        SplittableRandom r = new SplittableRandom(seed ^ shape.hashCode());
        double[] x = new double[n];
        double[] y = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = r.nextDouble();
            double e = 0.1 * r.nextGaussian();
            switch (shape) {
                case "constant": y[i] = 1 + e; break;
                case "antitone": y[i] = 1 - x[i] + e; break;
                default: y[i] = x[i] + e;
            }
        }
        return new double[][] {x, y};
    }

    // ------------------------------------------------------------------ run

    boolean mismatch;
    private final List<String[]> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    private void row(String impl, String shape, long n, int distinct, String pool, String solve, String kernel,
                     String total, String blocks, String diff, String note) {
        rows.add(new String[] {impl, shape, String.valueOf(n), String.valueOf(distinct), pool, solve, kernel, total,
            blocks, diff, note});
    }

    private void note(String n) {
        if (!notes.contains(n)) {
            notes.add(n);
        }
    }

    private static String s(double seconds) {
        return String.format(Locale.ROOT, "%.4f", seconds);
    }

    interface Timed<T> {
        T run() throws Exception;
    }

    /** Median seconds of {@code reps} runs; the last result is kept in out[0]. */
    static <T> double median(int reps, Timed<T> body, Object[] out) throws Exception {
        double[] t = new double[reps];
        for (int i = 0; i < reps; i++) {
            long t0 = System.nanoTime();
            out[0] = body.run();
            t[i] = (System.nanoTime() - t0) / 1e9;
        }
        Arrays.sort(t);
        return t[reps / 2];
    }

    String run() throws Exception {
        CudaDevice dev = null;
        String gpuReason = "";
        if (o.impls.contains("gpu") || o.impls.contains("mls")) {
            CudaRuntime.Status st = CudaRuntime.status();
            if (st.available) {
                try {
                    dev = CudaRuntime.device(o.device);
                    IsotonicEngine.load(dev);
                    // warm-up: module load and first launches outside the timings
                    IsotonicEngine.gpuPavaMerge(dev, pool(generate(1000, "noisy", 1), 1000), o.chunk, null);
                    IsotonicEngine.gpuMls(dev, pool(generate(1000, "noisy", 1), 1000), null);
                    double[][] w = generate(5000, "noisy", 1);
                    IsotonicEngine.gpuSolve(dev, w[0], w[1], null, 5000, false, IsoScales.forData(w[1], null, 5000),
                            IsoColumns.DEFAULT, o.chunk, null);
                } catch (RuntimeException | LinkageError e) {
                    gpuReason = "GPU unusable: " + e.getMessage();
                    dev = null;
                }
            } else {
                gpuReason = "no GPU: " + KMeansBenchmark.shortReason(st.reason);
            }
        }
        IsotonicMllib mllib = null;
        String mllibReason = "";
        if (o.impls.contains("mllib") || o.impls.contains("spark")) {
            try {
                Class.forName("org.apache.spark.ml.regression.IsotonicRegression");
                mllib = (IsotonicMllib) Class.forName(IsotonicMllib.IMPLEMENTATION).getDeclaredConstructor(int.class)
                        .newInstance(o.threads);
            } catch (ClassNotFoundException | LinkageError e) {
                mllibReason = "Spark is not on the class path (GPU bundle): MLlib rows are measured with Spark";
            }
        }
        try {
            TreeSet<Long> sizes = new TreeSet<>();
            for (long n : o.smallNs) {
                sizes.add(n);
            }
            for (long n : o.ns) {
                sizes.add(n);
            }
            for (String shape : o.shapes) {
                for (long nl : sizes) {
                    measure(shape, (int) nl, dev, gpuReason, mllib, mllibReason);
                }
            }
        } finally {
            if (mllib != null) {
                mllib.close();
            }
        }
        return markdown(dev, mllib);
    }

    private static IsoPoints pool(double[][] d, int n) {
        return IsoPoints.pool(d[0], d[1], null, n, false, IsoScales.forData(d[1], null, n), false, IsoColumns.DEFAULT);
    }

    private void measure(String shape, int n, CudaDevice dev, String gpuReason, IsotonicMllib mllib,
                         String mllibReason) throws Exception {
        System.err.printf(Locale.ROOT, "[bench] %s n=%d%n", shape, n);
        int reps = n >= 50_000_000 ? 1 : o.reps;
        double[][] d = generate(n, shape, o.seed);
        IsoScales sc = IsoScales.forData(d[1], null, n);
        Object[] box = new Object[1];
        double tPool = median(reps, () -> IsoPoints.pool(d[0], d[1], null, n, false, sc, false, IsoColumns.DEFAULT), box);
        IsoPoints p = (IsoPoints) box[0];
        double tCpu = median(reps, () -> IsotonicEngine.pava(p), box);
        L2Blocks ref = (L2Blocks) box[0];
        IsotonicResult refModel = IsotonicEngine.result(ref, sc, true, Double.NaN, Double.NaN, p.rows, 0, "cpu");
        if (o.impls.contains("cpu1")) {
            row("ours CPU, 1 thread (sort+pool, PAVA)", shape, n, p.n, s(tPool), s(tCpu), "", s(tPool + tCpu),
                    String.valueOf(ref.m), "reference", "");
        }
        if (o.impls.contains("gpu")) {
            if (dev == null) {
                note("GPU rows not run: " + gpuReason);
            } else {
                CudaDevice dv = dev;
                double[] ms = new double[1];
                double[] kms = new double[reps];
                int[] k = {0};
                double tGpu = median(reps, () -> {
                    L2Blocks b = IsotonicEngine.gpuPavaMerge(dv, p, o.chunk, ms);
                    kms[k[0]++] = ms[0];
                    return b;
                }, box);
                Arrays.sort(kms);
                boolean same = ref.sameAs((L2Blocks) box[0]);
                mismatch |= !same;
                row("ours GPU PAVA-merge (chunk " + o.chunk + ")", shape, n, p.n, s(tPool), s(tGpu),
                        String.format(Locale.ROOT, "%.3f", kms[reps / 2]), s(tPool + tGpu), String.valueOf(ref.m),
                        same ? "0 (bitwise)" : "DIFFERENT", "solve = upload + kernels + download; "
                                + String.format(Locale.ROOT, "%.1fx CPU solve", tCpu / tGpu));
                k[0] = 0;
                double tDev = median(reps, () -> {
                    L2Blocks b = IsotonicEngine.gpuSolve(dv, d[0], d[1], null, n, false, sc, IsoColumns.DEFAULT,
                            o.chunk, ms);
                    kms[k[0]++] = ms[0];
                    return b;
                }, box);
                Arrays.sort(kms);
                boolean sameDev = ref.sameAs((L2Blocks) box[0]);
                mismatch |= !sameDev;
                row("ours GPU sort+pool+PAVA-merge (device)", shape, n, p.n, "", "",
                        String.format(Locale.ROOT, "%.3f", kms[reps / 2]), s(tDev), String.valueOf(ref.m),
                        sameDev ? "0 (bitwise)" : "DIFFERENT", "total = upload of x, y + validation, radix sort, "
                                + "pooling, PAVA-merge + download of the blocks; "
                                + String.format(Locale.ROOT, "%.1fx CPU sort+pool+PAVA", (tPool + tCpu) / tDev));
            }
        }
        if (o.impls.contains("mls")) {
            if (dev == null) {
                note("GPU rows not run: " + gpuReason);
            } else if (p.n > o.mlsMax) {
                row("ours GPU MLS", shape, n, p.n, "", "skipped", "", "", "", "", "O(n^2): " + p.n + " > --mls-max "
                        + o.mlsMax);
            } else {
                CudaDevice dv = dev;
                double[] ms = new double[1];
                double tMls = median(reps, () -> IsotonicEngine.gpuMls(dv, p, ms), box);
                boolean same = ref.sameAs((L2Blocks) box[0]);
                mismatch |= !same;
                row("ours GPU MLS", shape, n, p.n, s(tPool), s(tMls), String.format(Locale.ROOT, "%.3f", ms[0]),
                        s(tPool + tMls), String.valueOf(ref.m), same ? "0 (bitwise)" : "DIFFERENT", "");
            }
        }
        if (o.impls.contains("cpuN")) {
            double tPar = median(reps, () -> cpuParallel(d[0], d[1], n, o.threads, sc), box);
            IsotonicResult par = (IsotonicResult) box[0];
            boolean same = Arrays.equals(par.boundaries, refModel.boundaries)
                    && Arrays.equals(par.predictions, refModel.predictions);
            mismatch |= !same;
            row("ours CPU, " + o.threads + " threads (" + o.threads + " range partitions, tree merge)", shape, n, p.n,
                    "", "", "", s(tPar), String.valueOf(par.numBlocks), same ? "0 (bitwise)" : "DIFFERENT",
                    "split + parallel sort/pool/PAVA + merge");
        }
        if (o.impls.contains("spark") && mllib != null && n <= o.mllibMax) {
            IsotonicMllib.Fit f = mllib.fitOurs(d[0], d[1], n, true, o.threads, "auto");
            boolean same = Arrays.equals(f.boundaries, refModel.boundaries) && Arrays.equals(f.predictions, refModel.predictions);
            mismatch |= !same;
            row("ours GpuIsotonicRegression.fit, local[" + o.threads + "], backend auto", shape, n, p.n, "", "", "",
                    s(f.seconds), String.valueOf(f.boundaries.length) + " boundaries", same ? "0 (bitwise)" : "DIFFERENT",
                    "whole fit call, " + o.threads + " input partitions (ranges: the trainer's choice)");
        }
        if (o.impls.contains("mllib")) {
            if (mllib == null) {
                note("MLlib rows not run: " + mllibReason);
            } else if (n > o.mllibMax) {
                row("MLlib IsotonicRegression", shape, n, p.n, "", "skipped", "", "", "", "", "n > --mllib-max " + o.mllibMax);
            } else {
                IsotonicMllib.Fit f = mllib.fit(d[0], d[1], n, true, o.threads);
                double ourFit = Double.NaN;
                double ourPar = Double.NaN;
                for (String[] rr : rows) {
                    if (rr[1].equals(shape) && rr[2].equals(String.valueOf(n))) {
                        if (rr[0].startsWith("ours GpuIsotonicRegression.fit")) {
                            ourFit = Double.parseDouble(rr[7]);
                        } else if (rr[0].startsWith("ours CPU, " + o.threads + " threads")) {
                            ourPar = Double.parseDouble(rr[7]);
                        }
                    }
                }
                StringBuilder note = new StringBuilder("whole fit call");
                if (!Double.isNaN(ourFit)) {
                    note.append(String.format(Locale.ROOT, "; our estimator %.1fx faster", f.seconds / ourFit));
                }
                if (!Double.isNaN(ourPar)) {
                    note.append(String.format(Locale.ROOT, "; our engine on %d threads %.1fx faster", o.threads,
                            f.seconds / ourPar));
                }
                row("MLlib IsotonicRegression, local[" + o.threads + "]", shape, n, p.n, "", "", "", s(f.seconds),
                        f.boundaries.length + " boundaries (ours " + refModel.boundaries.length + ")",
                        String.format(Locale.ROOT, "%.3g", maxDiff(refModel, f, d[0], n)), note.toString());
            }
        }
    }

    /** Largest |difference| of the two models' predictions at (up to 100,000) of the data's features. */
    static double maxDiff(IsotonicResult ours, IsotonicMllib.Fit theirs, double[] x, int n) {
        IsotonicPredictor a = new IsotonicPredictor(ours.boundaries, ours.predictions, IsotonicConfig.OutOfBounds.CLIP);
        IsotonicPredictor b = new IsotonicPredictor(theirs.boundaries, theirs.predictions, IsotonicConfig.OutOfBounds.CLIP);
        int step = Math.max(1, n / 100_000);
        double m = 0;
        for (int i = 0; i < n; i += step) {
            m = Math.max(m, Math.abs(a.predict(x[i]) - b.predict(x[i])));
        }
        return m;
    }

    /**
     * Our CPU engine on T threads as the Spark trainer runs it: rows split into T feature ranges at sampled
     * quantiles, each range sorted, pooled and solved by PAVA on its own thread, then the range solutions merged
     * pairwise by the decomposition theorem.
     */
    static IsotonicResult cpuParallel(double[] x, double[] y, int n, int threads, IsoScales sc) throws Exception {
        SplittableRandom r = new SplittableRandom(7);
        int samples = Math.min(n, 200 * threads);
        double[] sample = new double[samples];
        for (int i = 0; i < samples; i++) {
            sample[i] = x[r.nextInt(n)];
        }
        Arrays.sort(sample);
        double[] c = new double[Math.max(0, threads - 1)];
        for (int t = 1; t < threads; t++) {
            c[t - 1] = sample[(int) ((long) t * samples / threads)] + 0.0;
        }
        double[] cuts = Arrays.stream(c).distinct().toArray();
        int parts = cuts.length + 1;
        int[] part = new int[n];
        int[] count = new int[parts];
        for (int i = 0; i < n; i++) {
            int k = Arrays.binarySearch(cuts, x[i]);
            k = k >= 0 ? k + 1 : -k - 1;
            part[i] = k;
            count[k]++;
        }
        double[][] px = new double[parts][];
        double[][] py = new double[parts][];
        for (int k = 0; k < parts; k++) {
            px[k] = new double[count[k]];
            py[k] = new double[count[k]];
        }
        int[] fill = new int[parts];
        for (int i = 0; i < n; i++) {
            int k = part[i];
            px[k][fill[k]] = x[i];
            py[k][fill[k]++] = y[i];
        }
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        try {
            List<Future<L2Blocks>> fs = new ArrayList<>();
            for (int k = 0; k < parts; k++) {
                final int kk = k;
                fs.add(ex.submit(() -> IsotonicEngine.pava(IsoPoints.pool(px[kk], py[kk], null, px[kk].length, false, sc,
                        false, IsoColumns.DEFAULT))));
            }
            List<L2Blocks> level = new ArrayList<>();
            long rows = 0;
            for (Future<L2Blocks> f : fs) {
                level.add(f.get());
            }
            for (int k = 0; k < parts; k++) {
                rows += px[k].length;
            }
            while (level.size() > 1) {
                List<Future<L2Blocks>> next = new ArrayList<>();
                for (int i = 0; i < level.size(); i += 2) {
                    L2Blocks a = level.get(i);
                    if (i + 1 == level.size()) {
                        next.add(java.util.concurrent.CompletableFuture.completedFuture(a));
                    } else {
                        L2Blocks b = level.get(i + 1);
                        next.add(ex.submit(() -> L2Blocks.merge(a, b)));
                    }
                }
                level = new ArrayList<>();
                for (Future<L2Blocks> f : next) {
                    level.add(f.get());
                }
            }
            return IsotonicEngine.result(level.get(0), sc, true, Double.NaN, Double.NaN, rows, 0, "cpu");
        } finally {
            ex.shutdown();
        }
    }

    // ------------------------------------------------------------------ report

    String markdown(CudaDevice dev, IsotonicMllib mllib) {
        StringBuilder sb = new StringBuilder();
        sb.append("## isotonic regression benchmark\n\n");
        String cmd = System.getenv("SPARKGPU_BENCH_COMMAND");
        if (cmd != null) {
            sb.append("- Command: `").append(cmd).append("`\n");
        }
        sb.append("- Host: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, Java ")
                .append(System.getProperty("java.version")).append(", max heap ")
                .append(Runtime.getRuntime().maxMemory() >> 20).append(" MiB\n");
        sb.append("- GPU: ").append(dev == null ? "none" : dev.toString()).append('\n');
        sb.append("- MLlib: ").append(mllib == null ? "not run" : mllib.describe()).append('\n');
        sb.append("- Data: features uniform in [0,1), labels f(x) + N(0, 0.1^2) with f(x) = x (noisy), 1 (constant), "
                + "1 - x (antitone, fitted increasingly); weights 1; seed ").append(o.seed).append(". Times are medians of ")
                .append(o.reps).append(" runs (1 run for n >= 5e7), in seconds; kernel = CUDA events around the kernels.\n");
        sb.append("- \"vs ours CPU\": ours are compared bit for bit with the 1-thread CPU model; MLlib by the largest "
                + "|difference| of predictions at up to 100,000 of the features.\n\n");
        String[] head = {"implementation", "data", "n", "distinct x", "sort+pool s", "solve s", "kernel ms", "total s",
            "blocks", "vs ours CPU", "note"};
        sb.append('|');
        for (String h : head) {
            sb.append(' ').append(h).append(" |");
        }
        sb.append("\n|");
        for (int i = 0; i < head.length; i++) {
            sb.append(i >= 2 && i <= 7 ? " ---: |" : " --- |");
        }
        sb.append('\n');
        for (String[] r : rows) {
            sb.append('|');
            for (String c : r) {
                sb.append(' ').append(c).append(" |");
            }
            sb.append('\n');
        }
        for (String n : notes) {
            sb.append("\n- ").append(n);
        }
        if (mismatch) {
            sb.append("\n**MISMATCH: one of our implementations differed from the CPU reference.**\n");
        }
        return sb.toString();
    }
}
