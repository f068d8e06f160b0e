package io.sparkgpu.jobs.bench;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.tsne.TsneEngine;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.GridConvolution.Method;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * t-SNE G2G (grid-to-grid convolution of the repulsive term), one Markdown table: time of DIRECT and FFT on
 * the GPU (kernels alone and with the host transfers) and on the CPU twin for 1-D, 2-D and 3-D lattices, the
 * method AUTO picks, the agreement (GPU vs CPU twin per method, FFT vs DIRECT) and least-squares fits of the
 * cost-model constants of {@link GridConvolution}. Needs no Spark (runs in the GPU bundle). Usage: {@code --help}.
 *
 * <p>Exit status 3 when the GPU differs from its CPU twin by more than 1e-12 relative or FFT from DIRECT by
 * more than {@link #FFT_DIRECT_LIMIT} relative (both relative to the largest potential of each charge).
 */
public final class TsneG2GBenchmark {
    /**
     * Largest FFT-vs-DIRECT difference taken as agreement: the FFT's transforms run in float (about 1e-7 of each
     * charge's scale, G2GPlan), and the benchmark's signed uniform charges can cancel to potentials several times
     * smaller than the data they came from.
     */
    static final double FFT_DIRECT_LIMIT = 1e-5;
    private final Options o;

    TsneG2GBenchmark(Options o) {
        this.o = o;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs.main(args, Options::new, Options::parse, x -> x.help, x -> x.markdown, o -> {
            Report report = new TsneG2GBenchmark(o).run();
            return new BenchArgs.Outcome(report.markdown(), report.mismatch ? 3 : 0);
        });
    }

    // ------------------------------------------------------------------------------------------ options

    @Command(name = "TsneG2GBenchmark", sortOptions = false,
            description = {"t-SNE grid-to-grid convolution, DIRECT and FFT on GPU and CPU, one Markdown table."})
    static final class Options {
        List<int[]> grids = parseGrids("1d:150,1d:600,1d:1200,2d:30,2d:90,2d:150,2d:300,2d:600,3d:15,3d:30,"
                + "3d:60,3d:120");
        @Option(order = 2, names = "--box-width", paramLabel = "W",
                description = {"interpolation box edge (h = W / p, p = 3 when 3 divides N, else 1) [1]"})
        double boxWidth = 1.0;
        @Option(order = 3, names = "--reps", converter = BenchArgs.IntCount.class, paramLabel = "R",
                description = {"timed GPU repetitions after a warm-up (median reported)  [5]"})
        int reps = 5;
        @Option(order = 4, names = "--gpu-direct-budget", paramLabel = "X",
                description = {"run GPU DIRECT only up to X charge-node-pairs  [2e12]"})
        double gpuDirectBudget = 2e12;
        @Option(order = 5, names = "--cpu-direct-budget", paramLabel = "X",
                description = {"run CPU DIRECT only up to X charge-node-pairs  [1e10]"})
        double cpuDirectBudget = 1e10;
        @Option(order = 6, names = "--cpu-fft-budget", paramLabel = "X",
                description = {"run CPU FFT only up to X work units  [2e10]"})
        double cpuFftBudget = 2e10;
        boolean gpu = true;
        boolean cpu = true;
        @Option(order = 8, names = "--seed", paramLabel = "S", description = "charge seed  [42]")
        long seed = 42;
        @Option(order = 9, names = "--device", paramLabel = "G", description = "CUDA device ordinal  [0]")
        int device = 0;
        @Option(order = 10, names = "--markdown", paramLabel = "FILE", description = "also write the report to FILE")
        String markdown;
        boolean help;
        String[] argv = new String[0];

        @Option(order = 1, names = "--grids", paramLabel = "LIST",
                description = {"lattices 1d:N, 2d:N (N x N) or 3d:N (N^3 nodes), comma-separated",
                    "[1d:150,1d:600,1d:1200,2d:30,2d:90,2d:150,2d:300,2d:600,3d:15,3d:30,3d:60,3d:120]"})
        void setGrids(String v) {
            this.grids = parseGrids(v);
        }

        @Option(order = 7, names = "--impls", paramLabel = "LIST", description = "any of gpu,cpu  [gpu,cpu]")
        void setImpls(String v) {
            List<String> impls = BenchArgs.choices("--impls", v, List.of("gpu", "cpu"));
            this.gpu = impls.contains("gpu");
            this.cpu = impls.contains("cpu");
        }

        static Options parse(String[] args) {
            Options o = new Options();
            o.argv = args.clone();
            o.help = BenchArgs.parse(o, args);
            if (o.reps < 1 || !(o.boxWidth > 0) || Double.isInfinite(o.boxWidth)) {
                throw new IllegalArgumentException("--reps must be >= 1 and --box-width positive and finite");
            }
            return o;
        }

        /** Each entry {dim, n}. */
        static List<int[]> parseGrids(String list) {
            List<int[]> out = new ArrayList<>();
            for (String s : list.split(",")) {
                String t = s.trim().toLowerCase(Locale.ROOT);
                if (t.isEmpty()) {
                    continue;
                }
                if (t.length() < 4 || t.charAt(1) != 'd' || t.charAt(2) != ':' || "123".indexOf(t.charAt(0)) < 0) {
                    throw new IllegalArgumentException("grid '" + s + "' is not 1d:N, 2d:N or 3d:N");
                }
                int n = (int) KMeansBenchmark.Options.count(t.substring(3));
                if (n < 1) {
                    throw new IllegalArgumentException("grid '" + s + "': N must be >= 1");
                }
                out.add(new int[] {t.charAt(0) - '0', n});
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException("--grids is empty");
            }
            return out;
        }
    }

    // ------------------------------------------------------------------------------------------ report

    static final class Row {
        String grid;
        long nodes;
        String fft;
        double gpuDirectMs = Double.NaN;
        double gpuDirectKernelMs = Double.NaN;
        double gpuFftMs = Double.NaN;
        double gpuFftKernelMs = Double.NaN;
        double cpuDirectMs = Double.NaN;
        double cpuFftMs = Double.NaN;
        String auto = "";
        double relGpuCpuDirect = Double.NaN;
        double relGpuCpuFft = Double.NaN;
        double relFftDirect = Double.NaN;
        String notes = "";
    }

    static final class Report {
        final List<String> header = new ArrayList<>();
        final List<Row> rows = new ArrayList<>();
        final List<String> fits = new ArrayList<>();
        boolean mismatch;

        String markdown() {
            StringBuilder sb = new StringBuilder("## t-SNE G2G benchmark\n\n");
            for (String h : header) {
                sb.append("- ").append(h).append('\n');
            }
            sb.append('\n');
            String[] cols = {"grid", "nodes", "FFT m = radices", "GPU DIRECT ms (kernels)", "GPU FFT ms (kernels)",
                    "CPU DIRECT ms", "CPU FFT ms", "AUTO gpu/cpu", "GPU vs CPU DIRECT", "GPU vs CPU FFT",
                    "FFT vs DIRECT", "notes"};
            sb.append("| ").append(String.join(" | ", cols)).append(" |\n");
            sb.append("| --- | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |\n");
            for (Row r : rows) {
                sb.append("| ").append(r.grid).append(" | ").append(r.nodes).append(" | ").append(r.fft)
                        .append(" | ").append(ms(r.gpuDirectMs, r.gpuDirectKernelMs))
                        .append(" | ").append(ms(r.gpuFftMs, r.gpuFftKernelMs))
                        .append(" | ").append(ms(r.cpuDirectMs, Double.NaN))
                        .append(" | ").append(ms(r.cpuFftMs, Double.NaN))
                        .append(" | ").append(r.auto)
                        .append(" | ").append(sci(r.relGpuCpuDirect))
                        .append(" | ").append(sci(r.relGpuCpuFft))
                        .append(" | ").append(sci(r.relFftDirect))
                        .append(" | ").append(r.notes.replace("|", "\\|")).append(" |\n");
            }
            if (!fits.isEmpty()) {
                sb.append("\nCost-model fits (constants of GridConvolution, ns per unit):\n\n");
                for (String f : fits) {
                    sb.append("- ").append(f).append('\n');
                }
            }
            sb.append("\nGPU ms: median wall time of one GridConvolution call including the upload of the charges "
                    + "and the download of the potentials (workspace cached, after a warm-up); (kernels): the same "
                    + "call's kernels alone. CPU ms: the CPU twin on all cores (median of up to 3). Differences: "
                    + "max over charges of max |a - b| / max |b| (0 = identical bits). \"-\" = not run (budget or "
                    + "no device).\n");
            return sb.toString();
        }
    }

    static String ms(double wall, double kernels) {
        if (Double.isNaN(wall)) {
            return "-";
        }
        String s = String.format(Locale.ROOT, "%.3f", wall);
        return Double.isNaN(kernels) ? s : s + String.format(Locale.ROOT, " (%.3f)", kernels);
    }

    static String sci(double v) {
        return Double.isNaN(v) ? "-" : v == 0 ? "0" : String.format(Locale.ROOT, "%.1e", v);
    }

    // ------------------------------------------------------------------------------------------ run

    private static void progress(String fmt, Object... args) {
        System.err.println("[bench] " + String.format(Locale.ROOT, fmt, args));
        System.err.flush();
    }

    Report run() {
        Report rep = new Report();
        rep.header.addAll(BenchArgs.runHeader(o.argv));
        CudaDevice dev = null;
        String gpuWhy = "not requested";
        if (o.gpu) {
            try {
                CudaRuntime.Status st = CudaRuntime.status();
                if (!st.available) {
                    gpuWhy = KMeansBenchmark.shortReason(st.reason);
                } else {
                    dev = CudaRuntime.device(o.device);
                    TsneEngine.loadG2G(dev);
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
        rep.header.add(String.format(Locale.ROOT, "data: charges uniform in [-1, 1), dim + 2 charges per node, "
                + "box width %s, p = 3 nodes per box when 3 divides N (else 1); seed %d", o.boxWidth, o.seed));
        List<double[]> gpuFft = new ArrayList<>();
        List<double[]> gpuDirect = new ArrayList<>();
        List<double[]> cpuFft = new ArrayList<>();
        List<double[]> cpuDirect = new ArrayList<>();
        for (int[] gd : o.grids) {
            runOne(gd[0], gd[1], dev, rep, gpuFft, gpuDirect, cpuFft, cpuDirect);
        }
        TsneEngine.clearG2GCache();
        if (!gpuFft.isEmpty()) {
            double[] ab = fitTwo(gpuFft);
            rep.fits.add(String.format(Locale.ROOT, "GPU FFT kernels: FFT_NS_GPU = %.3g per work unit, LAUNCH_NS_GPU = "
                    + "%.3g per launch (least squares over %d grids)", ab[0], ab[1], gpuFft.size()));
        }
        if (!gpuDirect.isEmpty()) {
            rep.fits.add(String.format(Locale.ROOT, "GPU DIRECT kernels: DIRECT_NS_GPU = %.3g per charge-node-pair "
                    + "(largest grid run); DIRECT_SOURCE_NS_GPU = %.3g per source node (smallest grid run)",
                    ratioOfLargest(gpuDirect), smallestPerSource(gpuDirect)));
        }
        if (!cpuFft.isEmpty()) {
            double[] ab = fitTwo(cpuFft);
            rep.fits.add(String.format(Locale.ROOT, "CPU FFT: FFT_NS_CPU = %.3g per work unit, PHASE_NS_CPU = %.3g per "
                    + "parallel phase (least squares over %d grids)", ab[0], ab[1], cpuFft.size()));
        }
        if (!cpuDirect.isEmpty()) {
            rep.fits.add(String.format(Locale.ROOT, "CPU DIRECT: DIRECT_NS_CPU = %.3g per charge-node-pair "
                    + "(largest grid run)", ratioOfLargest(cpuDirect)));
        }
        List<String> inUse = new ArrayList<>();
        TsneEngine.g2gCostModel().forEach((name, v) -> inUse.add(String.format(Locale.ROOT, "%s %.3g", name, v)));
        rep.fits.add("in use: " + String.join(", ", inUse));
        return rep;
    }

    /** samples {units, ns}: ns per unit of the sample with the most units. */
    static double ratioOfLargest(List<double[]> samples) {
        double[] best = samples.get(0);
        for (double[] s : samples) {
            if (s[0] > best[0]) {
                best = s;
            }
        }
        return best[best.length - 1] / best[0];
    }

    /** GPU DIRECT samples {pairs, nodes, ns}: ns per source node of the sample with the fewest nodes. */
    static double smallestPerSource(List<double[]> samples) {
        double[] best = samples.get(0);
        for (double[] s : samples) {
            if (s[1] < best[1]) {
                best = s;
            }
        }
        return best[2] / best[1];
    }

    /** samples {work, launches, ns}: least squares ns = a * work + b * launches (b clamped at >= 0). */
    static double[] fitTwo(List<double[]> samples) {
        double sww = 0;
        double swl = 0;
        double sll = 0;
        double swy = 0;
        double sly = 0;
        for (double[] s : samples) {
            sww += s[0] * s[0];
            swl += s[0] * s[1];
            sll += s[1] * s[1];
            swy += s[0] * s[2];
            sly += s[1] * s[2];
        }
        double det = sww * sll - swl * swl;
        double a = det != 0 ? (swy * sll - sly * swl) / det : swy / sww;
        double b = det != 0 ? (sww * sly - swl * swy) / det : 0;
        if (b < 0 || a < 0) {
            b = Math.max(0, b);
            a = (swy - b * swl) / sww;
        }
        return new double[] {a, b};
    }

    private void runOne(int dim, int n, CudaDevice dev, Report rep, List<double[]> gpuFft, List<double[]> gpuDirect,
                        List<double[]> cpuFft, List<double[]> cpuDirect) {
        int p = n % 3 == 0 ? 3 : 1;
        InterpGrid g = new InterpGrid(dim, n / p, p, new double[dim], o.boxWidth);
        Row row = new Row();
        row.grid = dim + "-D " + n + (dim > 1 ? "^" + dim : "");
        row.nodes = g.nodes();
        row.fft = TsneEngine.fftShape(g);
        rep.rows.add(row);
        double pairs = (double) g.charges() * g.nodes() * g.nodes();
        double[] wl = TsneEngine.fftWorkAndLaunches(g);
        Random r = new Random(o.seed + 31L * n + dim);
        double[] q = new double[g.charges() * g.nodes()];
        for (int i = 0; i < q.length; i++) {
            q[i] = 2 * r.nextDouble() - 1;
        }
        row.auto = TsneEngine.autoChoice(g, true).name().toLowerCase(Locale.ROOT) + "/"
                + TsneEngine.autoChoice(g, false).name().toLowerCase(Locale.ROOT);
        progress("%s: %d nodes, FFT %s, %.3g charge-node-pairs, FFT work %.3g", row.grid, g.nodes(), row.fft,
                pairs, wl[0]);
        List<String> notes = new ArrayList<>();
        double[] gD = null;
        double[] gF = null;
        double[] cD = null;
        double[] cF = null;
        try {
            if (dev != null) {
                double[][] out = new double[1][];
                double[] t = timeGpu(dev, g, q, Method.FFT, out);
                gF = out[0];
                row.gpuFftMs = t[0];
                row.gpuFftKernelMs = t[1];
                gpuFft.add(new double[] {wl[0], wl[1], t[1] * 1e6});
                progress("%s: GPU FFT %.3f ms (kernels %.3f ms)", row.grid, t[0], t[1]);
                if (pairs <= o.gpuDirectBudget) {
                    t = timeGpu(dev, g, q, Method.DIRECT, out);
                    gD = out[0];
                    row.gpuDirectMs = t[0];
                    row.gpuDirectKernelMs = t[1];
                    gpuDirect.add(new double[] {pairs, g.nodes(), t[1] * 1e6});
                    progress("%s: GPU DIRECT %.3f ms (kernels %.3f ms)", row.grid, t[0], t[1]);
                }
            }
        } catch (RuntimeException e) {
            progress("%s: GPU failed: %s", row.grid, e);
            notes.add("GPU failed: " + e.getClass().getSimpleName() + ": " + e.getMessage());
        }
        if (o.cpu) {
            if (wl[0] <= o.cpuFftBudget) {
                double[][] out = new double[1][];
                row.cpuFftMs = timeCpu(g, q, Method.FFT, out);
                cF = out[0];
                cpuFft.add(new double[] {wl[0], wl[1], row.cpuFftMs * 1e6});
                progress("%s: CPU FFT %.3f ms", row.grid, row.cpuFftMs);
            }
            if (pairs <= o.cpuDirectBudget) {
                double[][] out = new double[1][];
                row.cpuDirectMs = timeCpu(g, q, Method.DIRECT, out);
                cD = out[0];
                cpuDirect.add(new double[] {pairs, row.cpuDirectMs * 1e6});
                progress("%s: CPU DIRECT %.3f ms", row.grid, row.cpuDirectMs);
            }
        }
        row.relGpuCpuDirect = TsneEngine.maxRelativeDifference(g, gD, cD);
        row.relGpuCpuFft = TsneEngine.maxRelativeDifference(g, gF, cF);
        row.relFftDirect = TsneEngine.maxRelativeDifference(g, cF != null ? cF : gF, cD != null ? cD : gD);
        if (row.relGpuCpuDirect > 1e-12 || row.relGpuCpuFft > 1e-12) {
            rep.mismatch = true;
            notes.add("GPU DIFFERS FROM CPU TWIN");
        }
        if (row.relFftDirect > FFT_DIRECT_LIMIT) {
            rep.mismatch = true;
            notes.add("FFT DIFFERS FROM DIRECT");
        }
        row.notes = String.join("; ", notes);
    }

    /** {median wall ms, median kernel ms} over o.reps calls after one warm-up; out[0] = last result. */
    private double[] timeGpu(CudaDevice dev, InterpGrid g, double[] q, Method m, double[][] out) {
        double[] km = new double[1];
        TsneEngine.convolveOn(dev, g, q, m, km);
        double[] wall = new double[o.reps];
        double[] kern = new double[o.reps];
        for (int i = 0; i < o.reps; i++) {
            long t0 = System.nanoTime();
            out[0] = TsneEngine.convolveOn(dev, g, q, m, null);
            wall[i] = (System.nanoTime() - t0) / 1e6;
            TsneEngine.convolveOn(dev, g, q, m, km);
            kern[i] = km[0];
        }
        Arrays.sort(wall);
        Arrays.sort(kern);
        return new double[] {wall[o.reps / 2], kern[o.reps / 2]};
    }

    /** Median ms of up to 3 runs (1 when the first takes over a second); out[0] = the result. */
    private static double timeCpu(InterpGrid g, double[] q, Method m, double[][] out) {
        double[] ts = new double[3];
        int runs = 0;
        for (int i = 0; i < 3; i++) {
            long t0 = System.nanoTime();
            out[0] = TsneEngine.convolveOn(null, g, q, m, null);
            ts[runs++] = (System.nanoTime() - t0) / 1e6;
            if (ts[0] > 1000) {
                break;
            }
        }
        double[] done = Arrays.copyOf(ts, runs);
        Arrays.sort(done);
        return done[runs / 2];
    }
}
