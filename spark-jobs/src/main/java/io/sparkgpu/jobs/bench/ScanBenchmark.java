package io.sparkgpu.jobs.bench;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.scan.ScanBest;
import io.sparkgpu.scan.ScanDirection;
import io.sparkgpu.scan.ScanEngine;
import io.sparkgpu.scan.ScanGrid;
import io.sparkgpu.scan.ScanModel;
import io.sparkgpu.scan.ScanShape;
import io.sparkgpu.scan.ScanSpec;
import io.sparkgpu.scan.ScanTables;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Scan statistics, one Markdown table: range-LLR evaluations per second and the time of the Monte Carlo
 * replicas for our GPU kernel, our CPU twin on T threads and the naive O(range size) scan, on 1-D and 2-D
 * Poisson grids. Needs no Spark (runs in the GPU bundle). Usage: {@code --help}.
 *
 * <p>Every implementation scans the same generated grid; the GPU and CPU rows must agree exactly (same best
 * range, same LLR bits, same replica maxima), else the exit status is 3.
 */
public final class ScanBenchmark {
    static final List<String> ALL_IMPLS = List.of("gpu", "cpu", "naive");

    private final Options o;

    ScanBenchmark(Options o) {
        this.o = o;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs.main(args, Options::new, Options::parse, x -> x.help, x -> x.markdown, o -> {
            Report report = new ScanBenchmark(o).run();
            return new BenchArgs.Outcome(report.markdown(), report.mismatch ? 3 : 0);
        });
    }

    // ------------------------------------------------------------------------------------------ options

    @Command(name = "ScanBenchmark", sortOptions = false,
            description = {"scan statistics (Poisson), ours GPU / ours CPU / naive, one Markdown table."})
    static final class Options {
        List<int[]> grids = parseGrids("1d:10000,1d:100000,2d:64,2d:128,2d:256");
        @Option(order = 2, names = "--replicas", converter = BenchArgs.IntCount.class, paramLabel = "R",
                description = "Monte Carlo replicas on the GPU  [999]")
        int replicas = 999;
        @Option(order = 3, names = "--cpu-replicas", converter = BenchArgs.IntCount.class, paramLabel = "R",
                description = {"replicas actually run on the CPU (the rest is extrapolated) [2]"})
        int cpuReplicas = 2;
        @Option(order = 4, names = "--threads", converter = BenchArgs.IntCount.class, paramLabel = "T",
                description = "CPU threads  [available cores]")
        int threads = Runtime.getRuntime().availableProcessors();
        Set<String> impls = new LinkedHashSet<>(ALL_IMPLS);
        @Option(order = 6, names = "--naive-budget", paramLabel = "X",
                description = {"run the naive scan only when it adds at most X cells  [3e9]"})
        double naiveBudget = 3e9;
        @Option(order = 7, names = "--cpu-budget", paramLabel = "X",
                description = {"run the CPU twin only up to X ranges per scan  [2e10]"})
        double cpuBudget = 2e10;
        @Option(order = 8, names = "--seed", paramLabel = "S", description = "data and replica seed  [42]")
        long seed = 42;
        @Option(order = 9, names = "--device", paramLabel = "G", description = "CUDA device ordinal  [0]")
        int device = 0;
        @Option(order = 10, names = "--markdown", paramLabel = "FILE", description = "also write the report to FILE")
        String markdown;
        boolean help;
        String[] argv = new String[0];

        @Option(order = 1, names = "--grids", paramLabel = "LIST",
                description = {"grids: 1d:N or 2d:N (N x N) or 2d:NxM, comma-separated",
                    "[1d:10000,1d:100000,2d:64,2d:128,2d:256]"})
        void setGrids(String v) {
            this.grids = parseGrids(v);
        }

        @Option(order = 5, names = "--impls", paramLabel = "LIST", description = "any of gpu,cpu,naive  [all]")
        void setImpls(String v) {
            this.impls = new LinkedHashSet<>(BenchArgs.choices("--impls", v, ALL_IMPLS));
        }

        static Options parse(String[] args) {
            Options o = new Options();
            o.argv = args.clone();
            o.help = BenchArgs.parse(o, args);
            if (o.replicas < 0 || o.cpuReplicas < 0 || o.threads < 1) {
                throw new IllegalArgumentException("--replicas and --cpu-replicas must be >= 0, --threads >= 1");
            }
            return o;
        }

        static List<int[]> parseGrids(String list) {
            List<int[]> out = new ArrayList<>();
            for (String s : list.split(",")) {
                String t = s.trim().toLowerCase(Locale.ROOT);
                if (t.isEmpty()) {
                    continue;
                }
                if (t.startsWith("1d:")) {
                    out.add(new int[] {(int) KMeansBenchmark.Options.count(t.substring(3))});
                } else if (t.startsWith("2d:")) {
                    String[] xy = t.substring(3).split("x");
                    int nx = (int) KMeansBenchmark.Options.count(xy[0]);
                    int ny = xy.length > 1 ? (int) KMeansBenchmark.Options.count(xy[1]) : nx;
                    out.add(new int[] {nx, ny});
                } else if (t.startsWith("3d:")) {
                    int n = (int) KMeansBenchmark.Options.count(t.substring(3));
                    out.add(new int[] {n, n, n});
                } else {
                    throw new IllegalArgumentException("grid '" + s + "' is not 1d:N, 2d:N, 2d:NxM or 3d:N");
                }
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException("--grids is empty");
            }
            return out;
        }
    }

    // ------------------------------------------------------------------------------------------ report

    static final class Row {
        final String grid;
        final String impl;
        final long ranges;
        final double scanS;
        final double evalsPerS;
        final String replicasRun;
        final double replicaS;
        final String forR;
        final String notes;

        Row(String grid, String impl, long ranges, double scanS, double evalsPerS, String replicasRun, double replicaS,
            String forR, String notes) {
            this.grid = grid;
            this.impl = impl;
            this.ranges = ranges;
            this.scanS = scanS;
            this.evalsPerS = evalsPerS;
            this.replicasRun = replicasRun;
            this.replicaS = replicaS;
            this.forR = forR;
            this.notes = notes;
        }
    }

    static final class Report {
        final List<String> header = new ArrayList<>();
        final List<Row> rows = new ArrayList<>();
        final List<String> agreement = new ArrayList<>();
        boolean mismatch;
        int replicas;

        String markdown() {
            StringBuilder sb = new StringBuilder("## scan statistics benchmark\n\n");
            for (String h : header) {
                sb.append("- ").append(h).append('\n');
            }
            sb.append('\n');
            String[] cols = {"grid", "implementation", "ranges M", "observed scan s", "LLR evals/s", "replicas run",
                    "replicas s", "s for " + replicas + " replicas", "notes"};
            sb.append("| ").append(String.join(" | ", cols)).append(" |\n");
            sb.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
            for (Row r : rows) {
                sb.append("| ").append(r.grid).append(" | ").append(r.impl).append(" | ").append(r.ranges)
                        .append(" | ").append(KMeansBenchmark.seconds(r.scanS)).append(" | ").append(sci(r.evalsPerS))
                        .append(" | ").append(r.replicasRun).append(" | ").append(KMeansBenchmark.seconds(r.replicaS))
                        .append(" | ").append(r.forR).append(" | ").append(r.notes.replace("|", "\\|")).append(" |\n");
            }
            if (!agreement.isEmpty()) {
                sb.append("\nAgreement:\n\n");
                for (String a : agreement) {
                    sb.append("- ").append(a).append('\n');
                }
            }
            sb.append("\nobserved scan s: one scan of all M ranges of the observed grid (GPU: median of 3 after a "
                    + "warm-up, tables already on the device; CPU: one run). LLR evals/s = M / observed scan s for "
                    + "the scan, and M * replicas / replicas s where replicas ran. replicas s: wall time of the "
                    + "replicas run (GPU: drawing each replica on the device, its prefix table and its full scan). "
                    + "\"est.\" = extrapolated from the replicas run.\n");
            return sb.toString();
        }
    }

    static String sci(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.3e", v);
    }

    // ------------------------------------------------------------------------------------------ data

    /**
     * A Poisson grid: populations log-normal around 1000 per cell, a case rate of 1% with a planted cluster at
     * three times the rate over about 1% of the cells, cases Poisson-distributed.
     */
    static ScanGrid poissonGrid(int[] dims, long seed) {
        ScanShape sh = new ScanShape(dims);
        Random r = new Random(seed);
        int cells = sh.cells();
        double[] pop = new double[cells];
        double[] cases = new double[cells];
        int[] hot = new int[6];
        for (int k = 0; k < 3; k++) {
            int n = sh.size(k);
            int len = Math.max(1, (int) Math.round(n * Math.pow(0.01, 1.0 / dims.length)));
            int a = r.nextInt(n - len + 1);
            hot[2 * k] = a;
            hot[2 * k + 1] = a + len - 1;
        }
        for (int c = 0; c < cells; c++) {
            int x = c % sh.size(0);
            int y = (c / sh.size(0)) % sh.size(1);
            int z = c / (sh.size(0) * sh.size(1));
            boolean in = x >= hot[0] && x <= hot[1] && y >= hot[2] && y <= hot[3] && z >= hot[4] && z <= hot[5];
            pop[c] = Math.rint(1000 * Math.exp(0.5 * r.nextGaussian()));
            double mean = pop[c] * 0.01 * (in ? 3 : 1);
            cases[c] = poisson(r, mean);
        }
        return ScanGrid.of(ScanModel.POISSON, sh, cases, pop, null, new String[] {"cases", "population", "ss"});
    }

    static long poisson(Random r, double mean) {
        if (mean > 50) {
            return Math.max(0, Math.round(mean + Math.sqrt(mean) * r.nextGaussian()));
        }
        double l = Math.exp(-mean);
        long k = 0;
        double p = r.nextDouble();
        while (p > l) {
            p *= r.nextDouble();
            k++;
        }
        return k;
    }

    /** Cells added by the naive scan: the product over axes of n(n+1)(n+2)/6. */
    static double naiveCellAdds(ScanShape sh) {
        double a = 1;
        for (int k = 0; k < sh.dims(); k++) {
            double n = sh.size(k);
            a *= n * (n + 1) * (n + 2) / 6;
        }
        return a;
    }

    // ------------------------------------------------------------------------------------------ run

    Report run() {
        Report rep = new Report();
        rep.replicas = o.replicas;
        rep.header.addAll(BenchArgs.runHeader(o.argv));
        CudaDevice dev = null;
        String gpuWhy = "not requested";
        if (o.impls.contains("gpu")) {
            try {
                CudaRuntime.Status st = CudaRuntime.status();
                if (!st.available) {
                    gpuWhy = KMeansBenchmark.shortReason(st.reason);
                } else {
                    dev = CudaRuntime.device(o.device);
                    ScanEngine.load(dev);
                    rep.header.add(String.format(Locale.ROOT, "GPU: %s, CUDA driver %d.%d", dev,
                            st.driverVersion / 1000, (st.driverVersion % 1000) / 10));
                }
            } catch (RuntimeException | LinkageError e) {
                dev = null;
                gpuWhy = KMeansBenchmark.shortReason(e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
        if (dev == null) {
            rep.header.add("GPU: n/a: " + gpuWhy);
        }
        rep.header.add(String.format(Locale.ROOT, "data: Poisson grids, populations ~ 1000 * exp(0.5 N(0,1)), case "
                + "rate 1%% with a planted box of ~1%% of the cells at 3x; high-rate Kulldorff LLR, no size limits; "
                + "seed %d; CPU threads T = %d", o.seed, o.threads));
        ExecutorService pool = Executors.newFixedThreadPool(o.threads, r -> {
            Thread t = new Thread(r, "scan-bench-cpu");
            t.setDaemon(true);
            return t;
        });
        try {
            for (int[] dims : o.grids) {
                runOne(dims, dev, gpuWhy, pool, rep);
            }
        } finally {
            pool.shutdownNow();
        }
        return rep;
    }

    private static void progress(String fmt, Object... args) {
        System.err.println("[bench] " + String.format(Locale.ROOT, fmt, args));
        System.err.flush();
    }

    private void runOne(int[] dims, CudaDevice dev, String gpuWhy, ExecutorService pool, Report rep) {
        ScanGrid grid = poissonGrid(dims, o.seed);
        ScanTables t = ScanTables.of(grid);
        ScanShape sh = t.shape();
        String name = (sh.dims() == 1 ? "1-D " : sh.dims() + "-D ") + sh;
        long m = sh.ranges();
        ScanSpec spec = ScanSpec.all(ScanDirection.HIGH);
        progress("%s: %d ranges, total cases %.0f", name, m, t.totalCases());

        ScanBest gpuBest = null;
        double[] gpuReps = null;
        if (o.impls.contains("gpu")) {
            if (dev == null) {
                rep.rows.add(new Row(name, "ours GPU", m, Double.NaN, Double.NaN, "0", Double.NaN, "n/a", "n/a: " + gpuWhy));
            } else {
                try (ScanEngine.GpuSession s = ScanEngine.gpuSession(dev, t)) {
                    s.best(spec, 0, m); // warm-up: module load, first launch
                    double[] ts = new double[3];
                    for (int i = 0; i < 3; i++) {
                        long t0 = System.nanoTime();
                        gpuBest = s.best(spec, 0, m);
                        ts[i] = (System.nanoTime() - t0) / 1e9;
                    }
                    Arrays.sort(ts);
                    double scanS = ts[1];
                    progress("%s: GPU scan %.4f s (%s), best %s", name, scanS, Arrays.toString(ts), gpuBest);
                    double repS = Double.NaN;
                    if (o.replicas > 0) {
                        long t0 = System.nanoTime();
                        gpuReps = s.replicaMaxima(spec, o.seed, 0, o.replicas);
                        repS = (System.nanoTime() - t0) / 1e9;
                        progress("%s: GPU %d replicas %.3f s", name, o.replicas, repS);
                    }
                    double eps = o.replicas > 0 ? (double) m * o.replicas / repS : m / scanS;
                    rep.rows.add(new Row(name, "ours GPU", m, scanS, eps, String.valueOf(o.replicas), repS,
                            o.replicas > 0 ? KMeansBenchmark.seconds(repS) : "n/a",
                            String.format(Locale.ROOT, "scan alone %.3e evals/s; %s kernel, grid %d x %d",
                                    m / scanS, sh.dims() > 1 || 16L * (sh.size(0) + 1) <= 96 * 1024 ? "shared-strip"
                                            : "global-strip", s.residentBlocks(), 256)));
                } catch (RuntimeException e) {
                    progress("%s: GPU failed: %s", name, e);
                    rep.rows.add(new Row(name, "ours GPU", m, Double.NaN, Double.NaN, "0", Double.NaN, "n/a",
                            "failed: " + e.getClass().getSimpleName() + ": " + e.getMessage()));
                }
            }
        }

        ScanBest cpuBest = null;
        double[] cpuReps = null;
        if (o.impls.contains("cpu")) {
            if (m > o.cpuBudget) {
                rep.rows.add(new Row(name, "ours CPU, " + o.threads + " threads", m, Double.NaN, Double.NaN, "0",
                        Double.NaN, "n/a", String.format(Locale.ROOT, "skipped: %d ranges > --cpu-budget %.1e", m,
                        o.cpuBudget)));
            } else {
                long t0 = System.nanoTime();
                cpuBest = ScanEngine.cpuScan(t, t.casesPrefix(), spec, 0, m, 4 * o.threads, pool);
                double scanS = (System.nanoTime() - t0) / 1e9;
                progress("%s: CPU scan %.3f s, best %s", name, scanS, cpuBest);
                int nr = Math.min(o.cpuReplicas, o.replicas);
                double repS = Double.NaN;
                String forR = "n/a";
                if (nr > 0) {
                    t0 = System.nanoTime();
                    cpuReps = new double[nr];
                    for (int r = 0; r < nr; r++) {
                        long[] prefix = ScanEngine.replicaPrefix(t, o.seed, r);
                        cpuReps[r] = ScanEngine.cpuScan(t, prefix, spec, 0, m, 4 * o.threads, pool).llr;
                    }
                    repS = (System.nanoTime() - t0) / 1e9;
                    forR = nr >= o.replicas ? KMeansBenchmark.seconds(repS)
                            : "est. " + KMeansBenchmark.seconds(repS / nr * o.replicas);
                    progress("%s: CPU %d replicas %.3f s", name, nr, repS);
                }
                double eps = nr > 0 ? (double) m * nr / repS : m / scanS;
                rep.rows.add(new Row(name, "ours CPU, " + o.threads + " threads", m, scanS, eps, String.valueOf(nr),
                        repS, forR, String.format(Locale.ROOT, "scan alone %.3e evals/s", m / scanS)));
            }
        }

        if (o.impls.contains("naive")) {
            double adds = naiveCellAdds(sh);
            if (adds > o.naiveBudget) {
                rep.rows.add(new Row(name, "naive O(range size), 1 thread", m, Double.NaN, Double.NaN, "0", Double.NaN,
                        "n/a", String.format(Locale.ROOT, "skipped: %.2e cell additions > --naive-budget %.1e", adds,
                        o.naiveBudget)));
            } else {
                long t0 = System.nanoTime();
                ScanBest nb = ScanEngine.naiveScan(grid, spec);
                double scanS = (System.nanoTime() - t0) / 1e9;
                progress("%s: naive scan %.3f s, best %s", name, scanS, nb);
                ScanBest ref = cpuBest != null ? cpuBest : gpuBest;
                String agree = ref == null ? "" : String.format(Locale.ROOT, "; max LLR %.12g vs ours %.12g, same range: %s",
                        nb.llr, ref.llr, nb.index == ref.index ? "yes" : "no");
                rep.rows.add(new Row(name, "naive O(range size), 1 thread", m, scanS, m / scanS, "0", Double.NaN,
                        o.replicas > 0 ? "est. " + KMeansBenchmark.seconds(scanS * o.replicas) : "n/a",
                        String.format(Locale.ROOT, "%.2e cell additions%s", adds, agree)));
            }
        }

        if (gpuBest != null && cpuBest != null) {
            boolean eq = gpuBest.equals(cpuBest);
            rep.mismatch |= !eq;
            rep.agreement.add(String.format(Locale.ROOT, "%s: GPU vs CPU twin best range %s, LLR %s (%.17g vs %.17g)",
                    name, gpuBest.index == cpuBest.index ? "same" : "DIFFERENT",
                    Double.doubleToLongBits(gpuBest.llr) == Double.doubleToLongBits(cpuBest.llr) ? "bitwise equal"
                            : "NOT bitwise equal", gpuBest.llr, cpuBest.llr));
        }
        if (gpuReps != null && cpuReps != null) {
            boolean eq = Arrays.equals(Arrays.copyOf(gpuReps, cpuReps.length), cpuReps);
            rep.mismatch |= !eq;
            rep.agreement.add(name + ": GPU vs CPU replica maxima (first " + cpuReps.length + ") bitwise equal: "
                    + (eq ? "yes" : "NO"));
        }
    }
}
