package io.sparkgpu.jobs.bench;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.kmeans.KMeansData;
import io.sparkgpu.kmeans.KMeansEngine;
import io.sparkgpu.kmeans.KMeansScales;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Lloyd k-means, one table: our GPU step (data resident on the device), the step kernel alone, our CPU
 * twin on one thread and on T threads (T partitions, partials merged exactly), and MLlib's row and block
 * solvers on local[T] when Spark is on the classpath. Every implementation starts from the same centres
 * on the same generated data and runs a fixed number of iterations (tol 0, no early stop on our side).
 *
 * <p>Runs without Spark: the MLlib part lives in {@link MllibKMeansRunner}, loaded by name only when
 * {@code org.apache.spark.ml.clustering.KMeans} is loadable. Usage: {@code --help}.
 */
public final class KMeansBenchmark {
    static final List<String> ALL_IMPLS = List.of("gpu", "kernel", "cpu1", "cpuN", "row", "block");

    private final Options o;
    private final PrintStream log;

    KMeansBenchmark(Options o, PrintStream log) {
        this.o = o;
        this.log = log;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs.main(args, Options::new, Options::parse, x -> x.help, x -> x.markdown, o -> {
            Report report = new KMeansBenchmark(o, System.err).run();
            return new BenchArgs.Outcome(report.markdown(), report.mismatch ? 3 : 0);
        });
    }

    // ------------------------------------------------------------------------------------------ options

    @Command(name = "KMeansBenchmark", sortOptions = false,
            description = {"Lloyd k-means, ours (GPU, kernel, CPU twin) vs MLlib, one Markdown table."})
    static final class Options {
        long[] ns = {1_000_000L, 10_000_000L};
        int d = 32;
        int k = 64;
        @Option(order = 5, names = "--iters", converter = BenchArgs.IntCount.class, paramLabel = "I",
                description = "Lloyd iterations, fixed (tol 0)  [10]")
        int iters = 10;
        @Option(order = 6, names = "--threads", converter = BenchArgs.IntCount.class, paramLabel = "T",
                description = {"CPU threads, partitions and local[T]  [available cores]"})
        int threads = Runtime.getRuntime().availableProcessors();
        @Option(order = 7, names = "--seed", paramLabel = "S",
                description = "data, initialisation and MLlib seed  [42]")
        long seed = 42;
        @Option(order = 8, names = "--sigma", paramLabel = "X", description = "noise around each blob centre  [1.0]")
        double sigma = 1.0;
        Set<String> impls = new LinkedHashSet<>(ALL_IMPLS);
        @Option(order = 10, names = "--kernel-reps", converter = BenchArgs.IntCount.class, paramLabel = "R",
                description = "timed launches for the kernel-only row  [10]")
        int kernelReps = 10;
        @Option(order = 11, names = "--device", paramLabel = "G", description = "CUDA device ordinal  [0]")
        int device = 0;
        @Option(order = 12, names = "--markdown", paramLabel = "FILE", description = "also write the report to FILE")
        String markdown;
        boolean help;
        String[] argv = new String[0];
        /** The largest n*d of one Java array; larger runs are kernel-only over partitions. */
        static final long ARRAY_LIMIT = Integer.MAX_VALUE - 8;
        /** Which of --n, --d, --k, --impls were given (they win over the --shape preset), and the preset. */
        private final boolean[] explicit = new boolean[4];
        private String shape;

        @Option(order = 1, names = "--shape", paramLabel = "NAME",
                description = {"preset: rapids-ml = spark-rapids-ml's published shape, --n 1e6 --d 3000",
                    "--k 1000 (FP64 generic kernel; n*d > 2^31 runs the kernel row alone, over",
                    "partitions of < 2^31 values; impls default to kernel)  [none]"})
        void setShape(String v) {
            this.shape = BenchArgs.choice("--shape", v, List.of("rapids-ml"));
        }

        @Option(order = 2, names = "--n", paramLabel = "LIST",
                description = {"point counts, comma-separated (1000000 or 1e6)  [1000000,10000000]"})
        void setN(String v) {
            this.ns = Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                    .mapToLong(Options::count).toArray();
            explicit[0] = true;
        }

        @Option(order = 3, names = "--d", paramLabel = "D", description = "dimensions  [32]")
        void setD(String v) {
            this.d = (int) count(v);
            explicit[1] = true;
        }

        @Option(order = 4, names = "--k", paramLabel = "K",
                description = "clusters (also the number of generated blobs)  [64]")
        void setK(String v) {
            this.k = (int) count(v);
            explicit[2] = true;
        }

        @Option(order = 9, names = "--impls", paramLabel = "LIST",
                description = "any of gpu,kernel,cpu1,cpuN,row,block  [all]")
        void setImpls(String v) {
            this.impls = new LinkedHashSet<>(BenchArgs.choices("--impls", v, ALL_IMPLS));
            explicit[3] = true;
        }

        static Options parse(String[] args) {
            Options o = new Options();
            o.argv = args.clone();
            o.help = BenchArgs.parse(o, args);
            if ("rapids-ml".equals(o.shape)) { // explicit --n/--d/--k/--impls win over the preset
                if (!o.explicit[0]) {
                    o.ns = new long[] {1_000_000L};
                }
                if (!o.explicit[1]) {
                    o.d = 3000;
                }
                if (!o.explicit[2]) {
                    o.k = 1000;
                }
                if (!o.explicit[3]) {
                    o.impls = new LinkedHashSet<>(List.of("kernel"));
                }
            }
            if (o.ns.length == 0 || Arrays.stream(o.ns).anyMatch(n -> n < 1 || n > Integer.MAX_VALUE)) {
                throw new IllegalArgumentException("--n values must be in [1, 2^31)");
            }
            if (o.d < 1 || o.k < 1 || o.iters < 1 || o.threads < 1 || o.kernelReps < 1) {
                throw new IllegalArgumentException("--d, --k, --iters, --threads and --kernel-reps must be >= 1");
            }
            for (long n : o.ns) {
                if (n * o.d > ARRAY_LIMIT && !o.impls.equals(Set.of("kernel"))) {
                    throw new IllegalArgumentException("n*d = " + n * o.d + " exceeds one Java array (n=" + n
                            + "); only --impls kernel runs such shapes (over partitions)");
                }
                if (n < o.k) {
                    throw new IllegalArgumentException("n=" + n + " is smaller than k=" + o.k);
                }
            }
            if (!(o.sigma >= 0)) {
                throw new IllegalArgumentException("--sigma must be >= 0");
            }
            return o;
        }

        /** Accepts 1000000, 1_000_000 and 1e6. */
        static long count(String s) {
            String t = s.trim().replace("_", "");
            try {
                return Long.parseLong(t);
            } catch (NumberFormatException e) {
                double v = Double.parseDouble(t);
                if (v != Math.rint(v) || Math.abs(v) > 9e18) {
                    throw new IllegalArgumentException("not a whole number: " + s);
                }
                return (long) v;
            }
        }

        boolean wants(String impl) {
            return impls.contains(impl);
        }
    }

    // ------------------------------------------------------------------------------------------ results

    /** One table row; NaN seconds print as "n/a". */
    static final class Row {
        final String impl;
        final long n;
        final int d;
        final int k;
        final String iters;
        final double totalS;
        final double perIterS;
        double speedUp = Double.NaN;
        String notes;

        Row(String impl, long n, int d, int k, String iters, double totalS, double perIterS, String notes) {
            this.impl = impl;
            this.n = n;
            this.d = d;
            this.k = k;
            this.iters = iters;
            this.totalS = totalS;
            this.perIterS = perIterS;
            this.notes = notes;
        }
    }

    static final class Report {
        final List<String> header = new ArrayList<>();
        final List<Row> rows = new ArrayList<>();
        final List<String> agreement = new ArrayList<>();
        final List<String> footnotes = new ArrayList<>();
        boolean mismatch;

        String markdown() {
            StringBuilder sb = new StringBuilder();
            sb.append("## k-means benchmark\n\n");
            for (String h : header) {
                sb.append("- ").append(h).append('\n');
            }
            sb.append('\n');
            String[] cols = {"implementation", "n", "d", "k", "iters", "total s", "s/iter", "speed-up vs MLlib row",
                    "notes"};
            List<String[]> cells = new ArrayList<>();
            for (Row r : rows) {
                cells.add(new String[] {r.impl, String.valueOf(r.n), String.valueOf(r.d), String.valueOf(r.k), r.iters,
                        seconds(r.totalS), seconds(r.perIterS),
                        Double.isNaN(r.speedUp) ? "n/a" : String.format(Locale.ROOT, "%.2fx", r.speedUp), r.notes});
            }
            int[] width = new int[cols.length];
            for (int c = 0; c < cols.length; c++) {
                width[c] = cols[c].length();
                for (String[] row : cells) {
                    if (c < cols.length - 1) {
                        width[c] = Math.max(width[c], row[c].length());
                    }
                }
            }
            appendRow(sb, cols, width);
            StringBuilder sep = new StringBuilder("|");
            for (int c = 0; c < cols.length; c++) {
                boolean numeric = c >= 1 && c <= 7;
                int w = c == cols.length - 1 ? 3 : width[c];
                sep.append(numeric ? " " + "-".repeat(Math.max(1, w - 1)) + ": |" : " " + "-".repeat(w) + " |");
            }
            sb.append(sep).append('\n');
            for (String[] row : cells) {
                appendRow(sb, row, width);
            }
            if (!agreement.isEmpty()) {
                sb.append("\nAgreement:\n\n");
                for (String a : agreement) {
                    sb.append("- ").append(a).append('\n');
                }
            }
            if (!footnotes.isEmpty()) {
                sb.append('\n');
                for (String f : footnotes) {
                    sb.append(f).append('\n');
                }
            }
            return sb.toString();
        }

        private static void appendRow(StringBuilder sb, String[] row, int[] width) {
            sb.append('|');
            for (int c = 0; c < row.length; c++) {
                String cell = row[c].replace("|", "\\|");
                boolean numeric = c >= 1 && c <= 7;
                int pad = c == row.length - 1 ? 0 : Math.max(0, width[c] - cell.length());
                sb.append(' ').append(numeric ? " ".repeat(pad) + cell : cell + " ".repeat(pad)).append(" |");
            }
            sb.append('\n');
        }
    }

    static String seconds(double s) {
        if (Double.isNaN(s)) {
            return "n/a";
        }
        if (s < 0.01) {
            return String.format(Locale.ROOT, "%.5f", s);
        }
        if (s < 1) {
            return String.format(Locale.ROOT, "%.4f", s);
        }
        return String.format(Locale.ROOT, "%.3f", s);
    }

    // ------------------------------------------------------------------------------------------ run

    /** A usable GPU, or why not. */
    private static final class Gpu {
        final CudaDevice dev;
        final String reason;

        Gpu(CudaDevice dev, String reason) {
            this.dev = dev;
            this.reason = reason;
        }
    }

    private Gpu openGpu() {
        try {
            CudaRuntime.Status st = CudaRuntime.status();
            if (!st.available) {
                return new Gpu(null, shortReason(st.reason));
            }
            CudaDevice dev = CudaRuntime.device(o.device);
            KMeansEngine.load(dev);
            return new Gpu(dev, null);
        } catch (RuntimeException | LinkageError e) {
            return new Gpu(null, shortReason(e.getClass().getSimpleName() + ": " + e.getMessage()));
        }
    }

    /** A one-line reason for the table: JCuda's load errors run to several lines of diagnostics. */
    static String shortReason(String reason) {
        String r = reason == null ? "unknown" : reason.replaceAll("\\s+", " ").trim();
        int cut = r.indexOf(" Operating system name");
        if (cut > 0) {
            r = r.substring(0, cut);
        }
        if (r.length() > 160) {
            r = r.substring(0, 157) + "...";
        }
        if (r.contains("could not be loaded") && !libcudaVisible()) {
            r = "no NVIDIA driver on this host (libcuda.so.1 not found); " + r;
        }
        return r;
    }

    private static boolean libcudaVisible() {
        List<String> dirs = new ArrayList<>(List.of("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                "/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/local/cuda/compat"));
        String ld = System.getenv("LD_LIBRARY_PATH");
        if (ld != null) {
            dirs.addAll(Arrays.asList(ld.split(":")));
        }
        for (String dir : dirs) {
            if (!dir.isEmpty() && Files.exists(Paths.get(dir, "libcuda.so.1"))) {
                return true;
            }
        }
        return false;
    }

    private MllibBaseline openMllib(String[] why) {
        try {
            Class.forName("org.apache.spark.ml.clustering.KMeans", false, KMeansBenchmark.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            why[0] = "Spark not on classpath";
            return null;
        }
        try {
            return (MllibBaseline) Class.forName(MllibBaseline.IMPLEMENTATION).getConstructor(int.class)
                    .newInstance(o.threads);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            Throwable c = e instanceof java.lang.reflect.InvocationTargetException && e.getCause() != null ? e.getCause() : e;
            why[0] = "Spark present but could not start: " + c;
            return null;
        }
    }

    Report run() {
        Report rep = new Report();
        boolean wantGpu = o.wants("gpu") || o.wants("kernel");
        boolean wantMllib = o.wants("row") || o.wants("block");
        Gpu gpu = wantGpu ? openGpu() : new Gpu(null, "not requested");
        String[] why = {"not requested"};
        MllibBaseline mllib = wantMllib ? openMllib(why) : null;
        String mllibWhy = why[0];

        String wrapper = System.getenv("SPARKGPU_BENCH_COMMAND");
        if (wrapper != null && !wrapper.isBlank()) {
            rep.header.add("command: `" + wrapper.trim() + "`");
        }
        rep.header.add("JVM command: `" + jvmCommand(o.argv) + "`");
        rep.header.add("date: " + Instant.now().truncatedTo(ChronoUnit.SECONDS));
        rep.header.add("host: " + Runtime.getRuntime().availableProcessors() + " cores (" + cpuModel() + "), max heap "
                + (Runtime.getRuntime().maxMemory() >> 20) + " MiB, Java " + System.getProperty("java.version")
                + " (" + System.getProperty("java.vm.name") + "), load average at start " + loadAverage());
        if (gpu.dev != null) {
            CudaRuntime.Status st = CudaRuntime.status();
            rep.header.add(String.format(Locale.ROOT, "GPU: %s, peak DRAM %.0f GB/s, CUDA driver %d.%d",
                    gpu.dev, gpu.dev.peakBandwidthGBs(), st.driverVersion / 1000, (st.driverVersion % 1000) / 10));
        } else {
            rep.header.add("GPU: n/a: " + gpu.reason);
        }
        rep.header.add("MLlib: " + (mllib != null ? mllib.describe() : "n/a (" + mllibWhy + ")"));
        rep.header.add(String.format(Locale.ROOT, "data: %d Gaussian blobs (centres uniform in [-5,5)^d, sigma %s), "
                + "weights 1, seed %d; threads T = %d", o.k, o.sigma, o.seed, o.threads));

        try {
            for (long n : o.ns) {
                runOne((int) n, gpu, mllib, mllibWhy, rep);
            }
        } finally {
            if (mllib != null) {
                mllib.close();
            }
        }
        rep.footnotes.add("total s: wall time of all timed iterations (ours; the GPU's first iteration includes the "
                + "upload of x and w) or of the whole KMeans.fit call (MLlib: also initialisation, its own caching "
                + "pass and the summary). s/iter: steady state = mean of iterations 2..iters; for MLlib an "
                + "iteration runs from the start of its Spark job (collectAsMap in KMeans.scala) to the start of "
                + "the next one, so driver work counts as it does for ours. speed-up = MLlib row s/iter / this "
                + "row's s/iter. "
                + "Each implementation ran one untimed warm-up iteration (MLlib: one untimed fit with maxIter 1) "
                + "first. kernel row: median of the timed launches (CUDA events); GB/s counts the bytes of x and w "
                + "read once.");
        return rep;
    }

    private void progress(String fmt, Object... args) {
        log.println("[bench] " + String.format(Locale.ROOT, fmt, args));
        log.flush();
    }

    private void runOne(int n, Gpu gpu, MllibBaseline mllib, String mllibWhy, Report rep) {
        final int d = o.d;
        final int k = o.k;
        final int iters = o.iters;
        if ((long) n * d > Options.ARRAY_LIMIT) {
            rep.rows.add(runKernelPartitioned(n, gpu));
            rep.agreement.add("n=" + n + ": n*d > 2^31: kernel row only (partitions of <= 2^30 values); initial "
                    + "centres: " + k + " generated rows drawn with seed " + o.seed);
            return;
        }
        long heapNeed = 8L * n * (d + 1) * (o.wants("cpuN") ? 2 : 1);
        if (Runtime.getRuntime().maxMemory() < heapNeed * 3 / 2) {
            progress("warning: max heap %d MiB is small for n=%d (our arrays alone need ~%d MiB); raise -Xmx",
                    Runtime.getRuntime().maxMemory() >> 20, n, heapNeed >> 20);
        }
        BlobData gen = new BlobData(o.seed, d, k, o.sigma);
        long t0 = System.nanoTime();
        double[] x = gen.generate(n);
        double[] w = new double[n];
        Arrays.fill(w, 1.0);
        double[] maxAbs = maxAbs(x, n, d);
        KMeansScales scales = KMeansScales.fromBounds(n, 1.0, maxAbs, false);
        progress("n=%d: generated %d x %d points in %.1f s", n, n, d, (System.nanoTime() - t0) / 1e9);

        // Initial centres: MLlib's own random initialisation when Spark is here, so every row starts equal.
        double[] init;
        String initNote;
        if (mllib != null) {
            t0 = System.nanoTime();
            mllib.load(gen, n, o.threads);
            progress("n=%d: Spark input built and cached in %.1f s %s", n, (System.nanoTime() - t0) / 1e9,
                    mllib.loadNote());
            MllibBaseline.Fit f0 = mllib.fit("row", k, 0, o.seed);
            if (f0.centres.length != k * d) {
                throw new IllegalStateException("MLlib initialisation returned " + f0.centres.length / d
                        + " centres, expected " + k);
            }
            init = f0.centres;
            initNote = "MLlib KMeans initMode=random seed=" + o.seed + " (fit with maxIter 0)";
        } else {
            int[] pick = BlobData.sampleRows(n, k, o.seed);
            init = new double[k * d];
            for (int c = 0; c < k; c++) {
                System.arraycopy(x, pick[c] * d, init, c * d, d);
            }
            initNote = k + " rows drawn with seed " + o.seed + " (Spark absent, so not MLlib's initialisation)";
        }

        List<Row> rows = new ArrayList<>();
        double[] gpuCentres = null;
        double gpuCost = Double.NaN;
        double[] cpu1Centres = null;
        double cpu1Cost = Double.NaN;
        double[] cpuNCentres = null;
        double cpuNCost = Double.NaN;
        Row gpuRow = null;
        Row cpu1Row = null;
        Row cpuNRow = null;

        // (a) ours on the GPU, (d) its kernel alone
        if (o.wants("gpu") || o.wants("kernel")) {
            if (gpu.dev == null) {
                if (o.wants("gpu")) {
                    rows.add(new Row("ours GPU (KMeansGpu.step, resident)", n, d, k, String.valueOf(iters), Double.NaN,
                            Double.NaN, "n/a: " + gpu.reason));
                }
                if (o.wants("kernel")) {
                    rows.add(new Row("ours GPU kernel only", n, d, k, "1", Double.NaN, Double.NaN, "n/a: " + gpu.reason));
                }
            } else {
                Object[] g = runGpu(gpu.dev, x, w, n, init, scales, rows);
                gpuCentres = (double[]) g[0];
                gpuCost = (double) g[1];
                gpuRow = (Row) g[2];
            }
        }

        // (b) our CPU twin, 1 thread and T threads
        if (o.wants("cpu1")) {
            progress("n=%d: CPU twin, 1 thread", n);
            KMeansData all = new KMeansData(x, w, n, d, null);
            Object[] r = lloyd(init, scales, iters, true,
                    c -> KMeansEngine.cpuStep(all, c, k, false, scales, true, null, null, false));
            cpu1Centres = (double[]) r[0];
            cpu1Cost = (double) r[1];
            double[] t = (double[]) r[2];
            cpu1Row = new Row("ours CPU twin, 1 thread", n, d, k, String.valueOf(iters), sum(t), steady(t), "");
            rows.add(cpu1Row);
        }
        if (o.wants("cpuN")) {
            progress("n=%d: CPU twin, %d threads", n, o.threads);
            KMeansData[] parts = partitions(x, w, n, d, o.threads);
            ExecutorService pool = Executors.newFixedThreadPool(o.threads, r -> {
                Thread th = new Thread(r, "kmeans-bench-cpu");
                th.setDaemon(true);
                return th;
            });
            try {
                Object[] r = lloyd(init, scales, iters, true, c -> parallelStep(pool, parts, c, k, d, scales));
                cpuNCentres = (double[]) r[0];
                cpuNCost = (double) r[1];
                double[] t = (double[]) r[2];
                cpuNRow = new Row("ours CPU twin, " + o.threads + " threads", n, d, k, String.valueOf(iters), sum(t),
                        steady(t), o.threads + " partitions, exact merge");
                rows.add(cpuNRow);
            } finally {
                pool.shutdownNow();
            }
        }

        // (c) MLlib
        double[] oursRef = cpu1Centres != null ? cpu1Centres : cpuNCentres != null ? cpuNCentres : gpuCentres;
        String oursRefName = cpu1Centres != null ? "CPU 1 thread" : cpuNCentres != null ? "CPU T threads" : "GPU";
        double oursRefCost = cpu1Centres != null ? cpu1Cost : cpuNCentres != null ? cpuNCost : gpuCost;
        Row mllibRow = null;
        for (String solver : new String[] {"row", "block"}) {
            if (!o.wants(solver)) {
                continue;
            }
            String name = "MLlib KMeans solver=" + solver + ", local[" + o.threads + "]";
            if (mllib == null) {
                rows.add(new Row(name, n, d, k, String.valueOf(iters), Double.NaN, Double.NaN, "n/a (" + mllibWhy + ")"));
                continue;
            }
            progress("n=%d: MLlib %s solver (untimed warm-up fit with maxIter 1, then fit with maxIter %d)", n, solver,
                    iters);
            String sameInit = "";
            if (solver.equals("block")) {
                MllibBaseline.Fit b0 = mllib.fit(solver, k, 0, o.seed);
                sameInit = Arrays.equals(b0.centres, init) ? "" : "; WARNING: block init differs from row init";
            }
            mllib.fit(solver, k, 1, o.seed); // warm-up
            MllibBaseline.Fit f = mllib.fit(solver, k, iters, o.seed);
            double perIter = Double.NaN;
            String timing;
            if (f.iterationSeconds != null) {
                perIter = steady(f.iterationSeconds);
                timing = String.format(Locale.ROOT, "first iter %.3f s%s", f.iterationSeconds[0],
                        solver.equals("block") ? " incl. blockify+cache" : "");
                progress("  iteration seconds: %s", join(f.iterationSeconds));
            } else {
                timing = "iteration jobs not identified, s/iter n/a";
            }
            String rel = oursRef == null ? "" : String.format(Locale.ROOT, "; max rel. centre diff vs ours %.2e",
                    maxRelDiff(oursRef, f.centres, k, d));
            Row r = new Row(name, n, d, k, String.valueOf(f.numIter), f.seconds, perIter, timing + rel + sameInit);
            rows.add(r);
            if (solver.equals("row")) {
                mllibRow = r;
            }
            rep.agreement.add(String.format(Locale.ROOT, "n=%d: MLlib %s: numIter %d, trainingCost %.10e; "
                    + "ours (%s) cost %.10e; max relative centre difference (ours %s vs MLlib) %s", n, solver,
                    f.numIter, f.trainingCost, oursRefName, oursRefCost, oursRefName,
                    oursRef == null ? "n/a" : String.format(Locale.ROOT, "%.3e", maxRelDiff(oursRef, f.centres, k, d))));
            if (f.numIter < iters) {
                rep.agreement.add("n=" + n + ": MLlib " + solver + " stopped after " + f.numIter
                        + " iterations (centres stopped moving; tol 0)");
            }
        }
        if (mllib != null) {
            mllib.unload();
        }

        // agreement of our exact implementations
        if (gpuCentres != null && (cpu1Centres != null || cpuNCentres != null)) {
            double[] ref = cpu1Centres != null ? cpu1Centres : cpuNCentres;
            boolean eq = Arrays.equals(gpuCentres, ref);
            rep.mismatch |= !eq;
            rep.agreement.add("n=" + n + ": ours GPU vs CPU twin (" + (cpu1Centres != null ? "1 thread" : "T threads")
                    + ") final centres bitwise equal: " + (eq ? "yes" : "NO"));
        }
        if (cpu1Centres != null && cpuNCentres != null) {
            boolean eq = Arrays.equals(cpu1Centres, cpuNCentres);
            rep.mismatch |= !eq;
            rep.agreement.add("n=" + n + ": ours CPU 1 thread vs " + o.threads + " partitions final centres bitwise equal: "
                    + (eq ? "yes" : "NO"));
        }
        rep.agreement.add("n=" + n + ": initial centres: " + initNote);

        // speed-ups
        for (Row r : rows) {
            if (mllibRow != null && !Double.isNaN(r.perIterS) && r.perIterS > 0) {
                r.speedUp = mllibRow.perIterS / r.perIterS;
            }
        }
        if (gpuRow != null && !Double.isNaN(gpuRow.perIterS)) {
            StringBuilder extra = new StringBuilder();
            if (cpu1Row != null) {
                extra.append(String.format(Locale.ROOT, "; %.1fx CPU 1 thread", cpu1Row.perIterS / gpuRow.perIterS));
            }
            if (cpuNRow != null) {
                extra.append(String.format(Locale.ROOT, "; %.1fx CPU %d threads", cpuNRow.perIterS / gpuRow.perIterS,
                        o.threads));
            }
            gpuRow.notes += extra;
        }
        rep.rows.addAll(rows);
    }

    /** Runs the GPU rows; returns {final centres, last cost, the GPU row}. */
    private Object[] runGpu(CudaDevice dev, double[] x, double[] w, int n, double[] init, KMeansScales scales,
                            List<Row> rows) {
        final int d = o.d;
        final int k = o.k;
        final int iters = o.iters;
        String key = "kmeans-bench-" + n + "-" + UUID.randomUUID();
        KMeansData resident = new KMeansData(x, w, n, d, key);
        DeviceResidentCache cache = DeviceResidentCache.of(dev);
        double[] centres = null;
        double cost = Double.NaN;
        Row gpuRow = null;
        try {
            if (o.wants("gpu")) {
                progress("n=%d: GPU (warm-up streams the rows; timed iterations keep them resident)", n);
                KMeansEngine.gpuStep(dev, new KMeansData(x, w, n, d, null), init, k, false, scales, true, null, null, false);
                long before = cache.usedBytes();
                Object[] r = lloyd(init, scales, iters, false,
                        c -> KMeansEngine.gpuStep(dev, resident, c, k, false, scales, true, null, null, false));
                boolean wasResident = cache.usedBytes() - before >= 8L * (d + 1) * n;
                centres = (double[]) r[0];
                cost = (double) r[1];
                double[] t = (double[]) r[2];
                gpuRow = new Row("ours GPU (KMeansGpu.step" + (wasResident ? ", resident)" : ", streamed)"), n, d, k,
                        String.valueOf(iters), sum(t), steady(t),
                        String.format(Locale.ROOT, "first iter incl. upload %.3f s", t[0])
                                + (wasResident ? "" : "; rows did NOT fit the resident cache, streamed every iteration"));
                rows.add(gpuRow);
            }
            if (o.wants("kernel")) {
                progress("n=%d: kernel alone, %d timed launches", n, o.kernelReps);
                double[] ms = KMeansEngine.kernelMillis(dev, resident, init, k, false, scales, o.kernelReps);
                double[] sorted = ms.clone();
                Arrays.sort(sorted);
                double median = median(sorted);
                double bytes = 8.0 * n * (d + 1);
                double gbs = bytes / (median / 1e3) / 1e9;
                rows.add(new Row("ours GPU kernel only (" + o.kernelReps + " launches)", n, d, k, "1", Double.NaN,
                        median / 1e3, String.format(Locale.ROOT, "%.3f ms/pass (min %.3f ms); %.1f GB/s = %.1f%% of "
                                + "peak %.0f GB/s; %s", median, sorted[0], gbs, 100 * gbs / dev.peakBandwidthGBs(),
                                dev.peakBandwidthGBs(), kernelNote(KMeansEngine.lastKernel(),
                                        KMeansEngine.lastRecheckCount(), KMeansEngine.lastPointCount()))));
                progress("n=%d: same kernel with accumulate = 0 (search only), %d timed launches", n, o.kernelReps);
                double[] sms = KMeansEngine.kernelMillis(dev, resident, init, k, false, scales, o.kernelReps, true);
                Arrays.sort(sms);
                double sMedian = median(sms);
                rows.add(new Row("ours GPU kernel, search only (" + o.kernelReps + " launches)", n, d, k, "1",
                        Double.NaN, sMedian / 1e3, String.format(Locale.ROOT, "%.3f ms/pass (min %.3f ms); "
                                + "accumulation = %.3f ms of the %.3f ms kernel-only pass (%.0f%%); %s", sMedian, sms[0],
                                median - sMedian, median, 100 * (median - sMedian) / median,
                                kernelNote(KMeansEngine.lastKernel(), KMeansEngine.lastRecheckCount(),
                                        KMeansEngine.lastPointCount()))));
            }
        } catch (RuntimeException e) {
            progress("n=%d: GPU run failed: %s", n, e);
            rows.add(new Row("ours GPU", n, d, k, String.valueOf(iters), Double.NaN, Double.NaN,
                    "failed: " + e.getClass().getSimpleName() + ": " + e.getMessage()));
        } finally {
            cache.evictPrefix(key);
        }
        return new Object[] {centres, cost, gpuRow};
    }

    static double median(double[] sorted) {
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }

    /** Kernel name and, for the FP32 screening kernels, the FP64 recheck rate of the last timed launch. */
    static String kernelNote(String kernel, long rechecks, long points) {
        if (!kernel.startsWith("kmeans_filt_")) {
            return "kernel " + kernel + " (FP64 search, no rechecks)";
        }
        return String.format(Locale.ROOT, "kernel %s, FP64 rechecks %d of %d points (%.4f%%)", kernel, rechecks,
                points, 100.0 * rechecks / Math.max(1, points));
    }

    /**
     * The kernel row for n*d beyond one Java array (e.g. --shape rapids-ml, 10^6 x 3000): the rows are made in
     * partitions of at most 2^30 values, each made resident, timed with {@link KMeansEngine#kernelMillis} and
     * evicted again; a pass is the sum of the partitions' median launch times (they run one after another on
     * one GPU, as a Spark executor's tasks would). Initial centres: k generated rows (seed), weights 1.
     */
    private Row runKernelPartitioned(int n, Gpu gpu) {
        final int d = o.d;
        final int k = o.k;
        String name = "ours GPU kernel only (" + o.kernelReps + " launches per partition)";
        if (!o.wants("kernel")) {
            return new Row(name, n, d, k, "1", Double.NaN, Double.NaN, "n/a: n*d > 2^31 runs only --impls kernel");
        }
        if (gpu.dev == null) {
            return new Row(name, n, d, k, "1", Double.NaN, Double.NaN, "n/a: " + gpu.reason);
        }
        final CudaDevice dev = gpu.dev;
        final BlobData gen = new BlobData(o.seed, d, k, o.sigma);
        final int rowsPer = (int) Math.max(1, (1L << 30) / d);
        final int parts = (int) ((n + (long) rowsPer - 1) / rowsPer);
        // global bounds for the fixed-point scales: a first generating pass, row by row
        double[] maxAbs = new double[d];
        double[] row = new double[d];
        for (long i = 0; i < n; i++) {
            gen.row(i, row, 0);
            for (int j = 0; j < d; j++) {
                maxAbs[j] = Math.max(maxAbs[j], Math.abs(row[j]));
            }
        }
        KMeansScales scales = KMeansScales.fromBounds(n, 1.0, maxAbs, false);
        int[] pick = BlobData.sampleRows(n, k, o.seed);
        double[] init = new double[k * d];
        for (int c = 0; c < k; c++) {
            gen.row(pick[c], init, c * d);
        }
        double passMs = 0;
        double minMs = 0;
        long rechecks = 0;
        String kernel = "";
        String key = "kmeans-bench-part-" + UUID.randomUUID();
        DeviceResidentCache cache = DeviceResidentCache.of(dev);
        try {
            for (int p = 0; p < parts; p++) {
                int from = p * rowsPer;
                int m = (int) Math.min(rowsPer, (long) n - from);
                progress("n=%d: partition %d/%d (%d rows): generating and timing the kernel", n, p + 1, parts, m);
                double[] x = new double[m * d];
                gen.fill(from, m, x, 0);
                double[] w = new double[m];
                Arrays.fill(w, 1.0);
                KMeansData part = new KMeansData(x, w, m, d, key + "/" + p);
                double[] ms = KMeansEngine.kernelMillis(dev, part, init, k, false, scales, o.kernelReps);
                cache.evictPrefix(key + "/" + p);
                Arrays.sort(ms);
                passMs += median(ms);
                minMs += ms[0];
                rechecks += KMeansEngine.lastRecheckCount();
                kernel = KMeansEngine.lastKernel();
            }
        } catch (RuntimeException e) {
            progress("n=%d: partitioned kernel timing failed: %s", n, e);
            return new Row(name, n, d, k, "1", Double.NaN, Double.NaN,
                    "failed: " + e.getClass().getSimpleName() + ": " + e.getMessage());
        } finally {
            cache.evictPrefix(key);
        }
        double gbs = 8.0 * n * (d + 1) / (passMs / 1e3) / 1e9;
        return new Row(name, n, d, k, "1", Double.NaN, passMs / 1e3, String.format(Locale.ROOT,
                "%.3f ms/pass (sum over %d partitions of the median launch; sum of minima %.3f ms); %.1f GB/s = "
                        + "%.1f%% of peak %.0f GB/s; %s", passMs, parts, minMs, gbs,
                100 * gbs / dev.peakBandwidthGBs(), dev.peakBandwidthGBs(), kernelNote(kernel, rechecks, n)));
    }

    @FunctionalInterface
    interface Step {
        long[] apply(double[] centres);
    }

    /**
     * Optionally one untimed warm-up step from {@code init}, then {@code iters} timed Lloyd iterations (step +
     * host centre update). Returns {final centres, cost of the last step, per-iteration seconds}.
     */
    private Object[] lloyd(double[] init, KMeansScales scales, int iters, boolean warmUp, Step step) {
        final int k = o.k;
        final int d = o.d;
        if (warmUp) {
            step.apply(init);
        }
        double[] c = init;
        double[] t = new double[iters];
        long[] acc = null;
        for (int it = 0; it < iters; it++) {
            long t0 = System.nanoTime();
            acc = step.apply(c);
            c = KMeansEngine.centres(acc, c, k, d, false, scales);
            t[it] = (System.nanoTime() - t0) / 1e9;
        }
        double cost = FixedPoint.toDouble(acc, KMeansEngine.costAt(k, d), scales.costShift());
        progress("  iteration seconds: %s", join(t));
        return new Object[] {c, cost, t};
    }

    private static long[] parallelStep(ExecutorService pool, KMeansData[] parts, double[] c, int k, int d,
                                       KMeansScales scales) {
        List<Future<long[]>> fs = new ArrayList<>();
        for (KMeansData p : parts) {
            fs.add(pool.submit(() -> KMeansEngine.cpuStep(p, c, k, false, scales, true, null, null, false)));
        }
        long[] acc = null;
        try {
            for (Future<long[]> f : fs) {
                long[] part = f.get();
                acc = acc == null ? part : KMeansEngine.merge(acc, part, k, d);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("CPU partition step failed", e.getCause());
        }
        return acc;
    }

    /** T contiguous row ranges, each copied into its own KMeansData, like T Spark partitions. */
    static KMeansData[] partitions(double[] x, double[] w, int n, int d, int parts) {
        KMeansData[] out = new KMeansData[parts];
        for (int p = 0; p < parts; p++) {
            int from = (int) ((long) n * p / parts);
            int to = (int) ((long) n * (p + 1) / parts);
            out[p] = new KMeansData(Arrays.copyOfRange(x, from * d, to * d), Arrays.copyOfRange(w, from, to), to - from,
                    d, null);
        }
        return out;
    }

    static double[] maxAbs(double[] x, int n, int d) {
        int blocks = Math.max(1, Math.min(256, n / 4096));
        double[][] part = new double[blocks][d];
        IntStream.range(0, blocks).parallel().forEach(b -> {
            int from = (int) ((long) n * b / blocks);
            int to = (int) ((long) n * (b + 1) / blocks);
            double[] m = part[b];
            for (int i = from; i < to; i++) {
                for (int j = 0; j < d; j++) {
                    m[j] = Math.max(m[j], Math.abs(x[i * d + j]));
                }
            }
        });
        double[] m = new double[d];
        for (double[] p : part) {
            for (int j = 0; j < d; j++) {
                m[j] = Math.max(m[j], p[j]);
            }
        }
        return m;
    }

    /** max over clusters of ||a_c - b_c|| / ||b_c|| (Euclidean norms). */
    static double maxRelDiff(double[] a, double[] b, int k, int d) {
        if (a.length != b.length) {
            return Double.NaN;
        }
        double worst = 0;
        for (int c = 0; c < k; c++) {
            double diff = 0;
            double norm = 0;
            for (int j = 0; j < d; j++) {
                double t = a[c * d + j] - b[c * d + j];
                diff += t * t;
                norm += b[c * d + j] * b[c * d + j];
            }
            worst = Math.max(worst, Math.sqrt(diff) / Math.max(Math.sqrt(norm), Double.MIN_NORMAL));
        }
        return worst;
    }

    static String join(double[] t) {
        StringBuilder sb = new StringBuilder();
        for (double v : t) {
            sb.append(sb.length() == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.4f", v));
        }
        return sb.toString();
    }

    static double sum(double[] t) {
        double s = 0;
        for (double v : t) {
            s += v;
        }
        return s;
    }

    /** Mean of iterations 2..n (the first may include one-off work such as the upload). */
    static double steady(double[] t) {
        if (t.length == 1) {
            return t[0];
        }
        return (sum(t) - t[0]) / (t.length - 1);
    }

    /**
     * This JVM's command line with the class path and Spark's long list of --add-opens/--add-exports options
     * abbreviated, so the report stays readable; falls back to the benchmark's own arguments.
     */
    static String jvmCommand(String[] argv) {
        String[] a;
        try {
            // ProcessHandle.Info drops the arguments of long command lines; /proc has them all
            String raw = new String(Files.readAllBytes(Paths.get("/proc/self/cmdline")), StandardCharsets.UTF_8);
            a = raw.split("\0");
        } catch (IOException | RuntimeException e) {
            a = new String[0];
        }
        if (a.length == 0 || a[0].isEmpty()) {
            return "KMeansBenchmark " + String.join(" ", argv);
        }
        List<String> out = new ArrayList<>();
        int opens = 0;
        for (int i = 0; i < a.length; i++) {
            String t = a[i];
            if (t.equals("-cp") || t.equals("-classpath") || t.equals("--class-path")) {
                out.add(t);
                out.add("<" + (i + 1 < a.length ? a[i + 1].split(java.io.File.pathSeparator).length : 0) + " entries>");
                i++;
            } else if (t.startsWith("--add-opens") || t.startsWith("--add-exports")) {
                if (opens++ == 0) {
                    out.add("<--add-opens/--add-exports>");
                }
            } else {
                out.add(t);
            }
        }
        return String.join(" ", out);
    }

    static String loadAverage() {
        try {
            String[] f = Files.readString(Paths.get("/proc/loadavg"), StandardCharsets.UTF_8).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException | RuntimeException e) {
            return "n/a";
        }
    }

    static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: fall through
        }
        return System.getProperty("os.arch");
    }
}
