package io.sparkgpu.jobs.bench;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneEngine;
import io.sparkgpu.tsne.TsneQuality;
import io.sparkgpu.tsne.TsneResult;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.TsneTrainer;
import io.sparkgpu.tsne.affinity.KnnGraph;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import io.sparkgpu.tsne.repulsion.Repulsion;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * t-SNE, one Markdown report from one run: for each data set (generated Gaussian clusters n x d, the shipped UCI
 * digits, iris) and backend (our GPU kernels, our CPU twins where affordable), the time of the kNN and the
 * affinities, the time per iteration of the attractive term, S2G, G2G, G2S (or the exact repulsion) and the update,
 * end to end; the KL divergence, trustworthiness and kNN-label accuracy on a sample; and, when the grid was used, the
 * relative error of the interpolated repulsive force (F_rep / Z) against the exact O(m^2) one on a sample of m
 * points of the final embedding. Runs in
 * one process (single-device mode, the path the distributed mode shares bit for bit), needs no Spark.
 * Usage: {@code --help}. Exit status 3 when GPU and CPU embeddings of one data set differ in any bit.
 */
public final class TsneBenchmark {
    private final Options o;
    /** --spark-modes value: distributed mode with {@link TsneTrainer#DISTRIBUTED_STAGE} false. */
    static final String DISTRIBUTED_JOBS = "distributed-jobs";

    TsneBenchmark(Options o) {
        this.o = o;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs.main(args, Options::new, Options::parse, x -> x.help, x -> x.markdown, o -> {
            Report report = new TsneBenchmark(o).run();
            return new BenchArgs.Outcome(report.markdown(), report.mismatch ? 3 : 0);
        });
    }

    // ------------------------------------------------------------------------------------------ options

    @Command(name = "TsneBenchmark", sortOptions = false,
            description = {"t-SNE end to end and per phase, ours GPU / ours CPU, one Markdown report."})
    static final class Options {
        List<String> cases = new ArrayList<>(List.of("digits", "blobs:100000x50", "blobs:70000x784",
                "blobs:1000000x50"));
        Set<String> backends = new LinkedHashSet<>(List.of("gpu", "cpu"));
        @Option(order = 3, names = "--cpu-max-n", converter = BenchArgs.Count.class, paramLabel = "N",
                description = {"run the CPU twin only for data sets of at most N points  [20000]"})
        long cpuMaxN = 20000;
        @Option(order = 4, names = "--max-iter", converter = BenchArgs.IntCount.class, paramLabel = "N",
                description = "gradient iterations  [1000]")
        int maxIter = 1000;
        @Option(order = 5, names = "--perplexity", paramLabel = "P", description = "perplexity (k = 3 P)  [30]")
        double perplexity = 30;
        double learningRate = TsneConfig.LEARNING_RATE_AUTO;
        @Option(order = 7, names = "--dimension", paramLabel = "D", description = "embedding dimension 1..3  [2]")
        int dimension = 2;
        @Option(order = 8, names = "--clusters", converter = BenchArgs.IntCount.class, paramLabel = "C",
                description = "clusters of the generated data  [10]")
        int clusters = 10;
        @Option(order = 9, names = "--error-sample", converter = BenchArgs.IntCount.class, paramLabel = "M",
                description = {"points of the exact repulsive-force check (0: skip)  [10000]"})
        int errorSample = 10000;
        @Option(order = 10, names = "--quality-sample", converter = BenchArgs.IntCount.class, paramLabel = "M",
                description = {"points of the trustworthiness / kNN accuracy sample  [1000]"})
        int qualitySample = 1000;
        @Option(order = 21, names = "--knn-probes", converter = BenchArgs.IntCount.class, paramLabel = "P",
                description = {"0: the exact kNN (pruned by cells from 50,000 points); P > 0: the approximate kNN",
                    "searching P cells per point (also in the Spark runs)  [0]"})
        int knnProbes;
        @Option(order = 22, names = "--knn-check", converter = BenchArgs.IntCount.class, paramLabel = "M",
                description = {"GPU runs: the brute-force kNN of the first M points against all, timed, and the",
                    "recall of the run's graph on them (identical rows for the exact kNN; 0: skip)  [0]"})
        int knnCheck;
        @Option(order = 23, names = "--intrinsic", converter = BenchArgs.IntCount.class, paramLabel = "M",
                description = {"blobs: each cluster in a random M-dimensional subspace plus small noise (0: full",
                    "dimension, isotropic)  [0]"})
        int intrinsic;
        @Option(order = 19, names = "--seed", paramLabel = "S", description = "data and initialisation seed  [42]")
        long seed = 42;
        @Option(order = 11, names = "--spark", converter = BenchArgs.IntCount.class, paramLabel = "CORES",
                description = {"also run the Spark trainer on local[CORES] in single and distributed mode",
                    "(GPU, else CPU; each must give the plain run's bits)  [off]"})
        int sparkCores;
        @Option(order = 12, names = "--spark-partitions", converter = BenchArgs.IntCount.class, paramLabel = "P",
                description = {"input partitions of those runs (distributed: P slices of P) [CORES]"})
        int sparkPartitions;
        List<String> sparkModes = List.of(TsneConfig.MODE_SINGLE, TsneConfig.MODE_DISTRIBUTED);
        String sparkInit = TsneConfig.INIT_RANDOM;
        @Option(order = 15, names = "--grid-min", converter = BenchArgs.IntCount.class, paramLabel = "N",
                description = "fewest interpolation boxes per axis  [20]")
        int gridMin = 20;
        @Option(order = 16, names = "--grid-max", converter = BenchArgs.IntCount.class, paramLabel = "N",
                description = {"most boxes per axis (0: 2000, 320, 40 in 1-, 2-, 3-D)  [0]"})
        int gridMax = 0;
        @Option(order = 17, names = "--grid-per-unit", paramLabel = "X",
                description = "boxes per unit of embedding extent  [2]")
        double gridPerUnit = 2;
        @Option(order = 17, names = "--grid-p", converter = BenchArgs.IntCount.class, paramLabel = "P",
                description = {"interpolation nodes per box and axis, 1..8 (FIt-SNE's grid: --grid-p 3",
                    "--grid-per-unit 1)  [4]"})
        int gridP = io.sparkgpu.tsne.TsneGridOptions.defaults().p;
        String repulsion = TsneConfig.REPULSION_AUTO;
        @Option(order = 20, names = "--markdown", paramLabel = "FILE", description = "also write the report to FILE")
        String markdown;
        @Option(order = 24, names = "--sample-stacks", converter = BenchArgs.IntCount.class, paramLabel = "MS",
                description = {"sample the fitting thread's stack every MS ms and print, to stderr, where the kNN and",
                    "the whole fit spent their wall time (0: off)  [0]"})
        int sampleStacksMs;
        boolean help;
        io.sparkgpu.tsne.TsneGridOptions grid = io.sparkgpu.tsne.TsneGridOptions.defaults();

        @Option(order = 1, names = "--cases", paramLabel = "LIST",
                description = {"blobs:NxD (generated Gaussian clusters), digits (UCI, 1797 x 64), iris",
                    "[digits,blobs:100000x50,blobs:70000x784,blobs:1000000x50]"})
        void setCases(String v) {
            this.cases = new ArrayList<>();
            for (String c : v.split(",")) {
                String t = c.trim();
                parseCase(t);
                this.cases.add(t);
            }
        }

        @Option(order = 2, names = "--backends", paramLabel = "LIST", description = "any of gpu,cpu  [gpu,cpu]")
        void setBackends(String v) {
            this.backends = new LinkedHashSet<>(BenchArgs.choices("--backends", v, List.of("gpu", "cpu")));
        }

        @Option(order = 6, names = "--learning-rate", paramLabel = "X",
                description = "step, or auto = max(n / 12, 200)  [auto]")
        void setLearningRate(String v) {
            this.learningRate = v.trim().equalsIgnoreCase("auto") ? TsneConfig.LEARNING_RATE_AUTO
                    : Double.parseDouble(v.trim());
        }

        @Option(order = 13, names = "--spark-modes", paramLabel = "LIST",
                description = {"which Spark runs: single, distributed (all iterations in one barrier stage),",
                    "distributed-jobs (the fallback: two Spark jobs per iteration; slow at large n)",
                    "[single,distributed]"})
        void setSparkModes(String v) {
            this.sparkModes = BenchArgs.choices("--spark-modes", v, List.of(TsneConfig.MODE_SINGLE,
                    TsneConfig.MODE_DISTRIBUTED, DISTRIBUTED_JOBS));
        }

        @Option(order = 14, names = "--spark-init", paramLabel = "I",
                description = {"initialisation of those runs: random, or pca (MLlib principal components;",
                    "then they are not compared with the plain run, which starts at random) [random]"})
        void setSparkInit(String v) {
            this.sparkInit = BenchArgs.choice("--spark-init", v,
                    List.of(TsneConfig.INIT_RANDOM, TsneConfig.INIT_PCA));
        }

        @Option(order = 18, names = "--repulsion", paramLabel = "R",
                description = "exact, grid, or auto (exact for n <= " + TsneConfig.EXACT_MAX_POINTS + ")  [auto]")
        void setRepulsion(String v) {
            this.repulsion = TsneConfig.parseRepulsion(v);
        }

        static Options parse(String[] args) {
            Options o = new Options();
            o.help = BenchArgs.parse(o, args);
            o.grid = io.sparkgpu.tsne.TsneConfig.gridOptions(o.gridP, o.gridPerUnit, o.gridMin, o.gridMax);
            if (o.clusters < 1) {
                throw new IllegalArgumentException("--clusters must be >= 1");
            }
            return o;
        }

        /** {n, d} of a "blobs:NxD" case, or null for a shipped data set; other names are an error. */
        static long[] parseCase(String c) {
            if (c.equals("digits") || c.equals("iris")) {
                return null;
            }
            if (c.startsWith("blobs:")) {
                String[] nd = c.substring(6).split("x");
                if (nd.length == 2) {
                    long n = KMeansBenchmark.Options.count(nd[0]);
                    long d = KMeansBenchmark.Options.count(nd[1]);
                    if (n >= 4 && d >= 1 && n * d <= Integer.MAX_VALUE) {
                        return new long[] {n, d};
                    }
                }
            }
            throw new IllegalArgumentException("--cases: expected blobs:NxD (n >= 4, n d < 2^31), digits or iris, got '"
                    + c + "'");
        }
    }

    // ------------------------------------------------------------------------------------------ data

    /** One data set: n x d floats (row-major) and labels. */
    static final class Data {
        final String name;
        final int n;
        final int d;
        final float[] x;
        final int[] labels;

        Data(String name, int n, int d, float[] x, int[] labels) {
            this.name = name;
            this.n = n;
            this.d = d;
            this.x = x;
            this.labels = labels;
        }
    }

    /** C Gaussian clusters (unit spread) with centres drawn uniformly in [-10, 10]^d; cluster i % C for row i. */
    static Data blobs(int n, int d, int clusters, long seed) {
        return blobs(n, d, clusters, 0, seed);
    }

    /**
     * {@link #blobs(int, int, int, long)}, or with {@code intrinsic} m in 1..d-1: each cluster a unit Gaussian in a
     * random m-dimensional subspace (a d x m matrix of N(0, 1/m) entries) plus N(0, 0.05^2) noise in every
     * dimension, data of low intrinsic dimension as real features often are.
     */
    static Data blobs(int n, int d, int clusters, int intrinsic, long seed) {
        Random rnd = new Random(seed);
        double[] centres = new double[clusters * d];
        for (int t = 0; t < centres.length; t++) {
            centres[t] = 20 * rnd.nextDouble() - 10;
        }
        int m = intrinsic > 0 && intrinsic < d ? intrinsic : 0;
        double[] basis = new double[clusters * d * Math.max(m, 1)];
        for (int t = 0; t < basis.length && m > 0; t++) {
            basis[t] = rnd.nextGaussian() / Math.sqrt(m);
        }
        float[] x = new float[n * d];
        int[] labels = new int[n];
        double[] z = new double[Math.max(m, 1)];
        for (int i = 0; i < n; i++) {
            int c = i % clusters;
            labels[i] = c;
            if (m == 0) {
                for (int a = 0; a < d; a++) {
                    x[i * d + a] = (float) (centres[c * d + a] + rnd.nextGaussian());
                }
                continue;
            }
            for (int u = 0; u < m; u++) {
                z[u] = rnd.nextGaussian();
            }
            for (int a = 0; a < d; a++) {
                double v = centres[c * d + a] + 0.05 * rnd.nextGaussian();
                for (int u = 0; u < m; u++) {
                    v += basis[(c * d + a) * m + u] * z[u];
                }
                x[i * d + a] = (float) v;
            }
        }
        return new Data("blobs " + n + " x " + d + " (" + clusters + " clusters" + (m > 0 ? ", intrinsic dimension "
                + m : "") + ")", n, d, x, labels);
    }

    /** digits.csv (64 pixel columns, then the digit) or iris.csv (4 measures, then the species). */
    static Data shipped(String name) throws IOException {
        String res = "/io/sparkgpu/jobs/data/" + name + ".csv";
        List<float[]> rows = new ArrayList<>();
        List<String> labelNames = new ArrayList<>();
        List<Integer> labels = new ArrayList<>();
        try (InputStream in = TsneBenchmark.class.getResourceAsStream(res)) {
            if (in == null) {
                throw new IOException("resource " + res + " not found");
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            r.readLine();
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.isBlank()) {
                    continue;
                }
                String[] f = line.split(",");
                float[] v = new float[f.length - 1];
                for (int a = 0; a < v.length; a++) {
                    v[a] = Float.parseFloat(f[a]);
                }
                String lab = f[f.length - 1].trim();
                int li = labelNames.indexOf(lab);
                if (li < 0) {
                    li = labelNames.size();
                    labelNames.add(lab);
                }
                rows.add(v);
                labels.add(li);
            }
        }
        int n = rows.size();
        int d = rows.get(0).length;
        float[] x = new float[n * d];
        for (int i = 0; i < n; i++) {
            System.arraycopy(rows.get(i), 0, x, i * d, d);
        }
        String title = name.equals("digits") ? "UCI digits 1797 x 64 (real)" : "iris 150 x 4 (real)";
        return new Data(title, n, d, x, labels.stream().mapToInt(Integer::intValue).toArray());
    }

    Data load(String c) throws IOException {
        long[] nd = Options.parseCase(c);
        return nd == null ? shipped(c) : blobs((int) nd[0], (int) nd[1], o.clusters, o.intrinsic, o.seed);
    }

    // ------------------------------------------------------------------------------------------ runs

    /** One (data set, backend) run. */
    static final class Row {
        String data;
        String backend;
        int n;
        int d;
        double knnS;
        double affS;
        TsneTimings t;
        double endToEndS;
        double kl;
        double trust = Double.NaN;
        double labelAcc = Double.NaN;
        double repRelErr = Double.NaN;
        int errSample;
        String note = "";
        double[] embedding;
        boolean mismatchKnn;
    }

    static final class Report {
        final List<String> header = new ArrayList<>();
        final List<Row> rows = new ArrayList<>();
        final List<String> notes = new ArrayList<>();
        boolean mismatch;

        String markdown() {
            StringBuilder sb = new StringBuilder("## t-SNE\n\n");
            for (String h : header) {
                sb.append("- ").append(h).append('\n');
            }
            sb.append("\n| data | backend | kNN s | affinities s | attractive ms/it | S2G ms/it | G2G ms/it | G2S ms/it "
                    + "| exact ms/it | update ms/it | iterations s | end to end s | KL | trustworthiness | kNN-label acc. "
                    + "| rep. rel. error | note |\n");
            sb.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
            for (Row r : rows) {
                if (r.t == null) {
                    sb.append(String.format(Locale.ROOT, "| %s | %s | | | | | | | | | | | | | | | %s |%n", r.data,
                            r.backend, r.note));
                    continue;
                }
                double iterS = iterationSeconds(r.t);
                sb.append(String.format(Locale.ROOT, "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f "
                        + "| %.3f | %.2f | %.2f | %.4f | %s | %s | %s | %s |%n", r.data, r.backend, r.knnS, r.affS,
                        ms(r.t, TsneTimings.Phase.ATTRACTIVE), ms(r.t, TsneTimings.Phase.S2G),
                        ms(r.t, TsneTimings.Phase.G2G), ms(r.t, TsneTimings.Phase.G2S),
                        ms(r.t, TsneTimings.Phase.EXACT), ms(r.t, TsneTimings.Phase.UPDATE), iterS, r.endToEndS, r.kl, fmt(r.trust, "%.4f"),
                        fmt(r.labelAcc, "%.4f"), Double.isNaN(r.repRelErr) ? "" : String.format(Locale.ROOT,
                                "%.2e (m=%d)", r.repRelErr, r.errSample), r.note));
            }
            for (String n : notes) {
                sb.append('\n').append(n).append('\n');
            }
            return sb.toString();
        }

        private static double ms(TsneTimings t, TsneTimings.Phase p) {
            return t.secondsPerIteration(p) * 1e3;
        }

        private static String fmt(double v, String f) {
            return Double.isNaN(v) ? "" : String.format(Locale.ROOT, f, v);
        }
    }

    Report run() throws IOException {
        // The logging system starts before any clock, as a Spark application's SparkSession starts it: left to the
        // library's first logger, a fresh JVM put its initialisation (0.27 s on the GPU host) into the kNN's time.
        org.slf4j.LoggerFactory.getLogger(TsneBenchmark.class);
        Report rep = new Report();
        rep.header.add("date: " + Instant.now().truncatedTo(ChronoUnit.SECONDS));
        CudaRuntime.Status st = CudaRuntime.status();
        rep.header.add("device: " + (st.available ? CudaRuntime.device(CudaRuntime.selectDeviceOrdinal()).toString()
                : "none (" + KMeansBenchmark.shortReason(st.reason) + ")"));
        rep.header.add("host: " + Runtime.getRuntime().availableProcessors() + " cores, java "
                + System.getProperty("java.version") + ", max heap " + (Runtime.getRuntime().maxMemory() >> 20) + " MiB");
        rep.header.add(String.format(Locale.ROOT, "settings: dimension %d, perplexity %s (k = %d), %d iterations "
                + "(exaggeration 12 for min(250, iterations), momentum 0.5 -> 0.8, learning rate %s), random init "
                + "(std 1e-4, seed %d), repulsion %s (auto: exact sums for n <= %d, else the grid), grid: p = %d "
                + "nodes per box, %s boxes per unit, %d..%d boxes per axis",
                o.dimension, o.perplexity, (int) Math.ceil(3 * o.perplexity), o.maxIter,
                o.learningRate > 0 ? Double.toString(o.learningRate) : "max(n/12, 200)", o.seed, o.repulsion,
                TsneConfig.EXACT_MAX_POINTS, o.grid.p, o.grid.intervalsPerUnit,
                o.grid.minIntervals, o.grid.maxIntervals[o.dimension]));
        rep.header.add("single-device mode in one JVM (the distributed mode runs the same calls per row slice and "
                + "gives the same bits); kNN " + (o.knnProbes > 0 ? "approximate (" + o.knnProbes + " cells per point)"
                : "exact (tiled brute force, pruned by cells from 50,000 points: the same lists)") + "; times are wall clock of one run, including "
                + "the first-call kernel loading (logging is started before the clocks)");
        for (String c : o.cases) {
            Data data = load(c);
            Row gpuRow = null;
            Row cpuRow = null;
            for (String b : o.backends) {
                Row r = new Row();
                r.data = data.name;
                r.backend = b.equals("gpu") ? "ours GPU" : "ours CPU";
                r.n = data.n;
                r.d = data.d;
                if (b.equals("gpu") && !st.available) {
                    r.note = "no GPU";
                } else if (b.equals("cpu") && data.n > o.cpuMaxN) {
                    r.note = "CPU skipped (n > --cpu-max-n " + o.cpuMaxN + ")";
                } else {
                    System.err.printf(Locale.ROOT, "[bench] %s on %s ...%n", data.name, r.backend);
                    runOne(data, b.equals("gpu") ? Backend.GPU : Backend.CPU, r);
                    rep.mismatch |= r.mismatchKnn;
                    if (b.equals("gpu")) {
                        gpuRow = r;
                    } else {
                        cpuRow = r;
                    }
                }
                rep.rows.add(r);
            }
            if (o.sparkCores > 0) {
                Backend sparkBackend = st.available ? Backend.GPU : Backend.CPU;
                // the plain run starts at random: with PCA the distributed run is held to the single-mode run's bits
                boolean pca = o.sparkInit.equals(TsneConfig.INIT_PCA);
                Row plain = pca ? null : st.available ? gpuRow : cpuRow;
                List<String> perIteration = new ArrayList<>();
                for (String mode : o.sparkModes) {
                    Row r = new Row();
                    r.data = data.name;
                    r.backend = "Spark local[" + o.sparkCores + "], " + mode + ", " + sparkBackend.id().toUpperCase(
                            Locale.ROOT);
                    r.n = data.n;
                    r.d = data.d;
                    System.err.printf(Locale.ROOT, "[bench] %s on %s ...%n", data.name, r.backend);
                    runSpark(data, mode, sparkBackend, r);
                    rep.rows.add(r);
                    if (plain != null) {
                        boolean same = Arrays.equals(plain.embedding, r.embedding);
                        rep.mismatch |= !same;
                        rep.notes.add(data.name + ": " + r.backend + " embedding " + (same
                                ? "is identical to the " + (pca ? "single-mode" : "plain") + " run's (every bit)"
                                : "DIFFERS from the " + (pca ? "single-mode" : "plain") + " run's"));
                    }
                    if (pca && plain == null) {
                        plain = r;
                    }
                    if (r.t != null && r.t.iterations() > 0) {
                        perIteration.add(String.format(Locale.ROOT, "%s %.2f ms", mode, 1e3 * iterationSeconds(r.t)
                                / r.t.iterations()));
                    }
                }
                if (!perIteration.isEmpty()) {
                    rep.notes.add(data.name + ", Spark local[" + o.sparkCores + "], time per iteration (attractive + "
                            + "S2G + G2G + G2S + update): " + String.join(", ", perIteration));
                }
            }
            if (gpuRow != null && cpuRow != null) {
                boolean same = Arrays.equals(gpuRow.embedding, cpuRow.embedding);
                rep.mismatch |= !same;
                rep.notes.add(data.name + ": GPU and CPU embeddings " + (same ? "are identical (every bit)"
                        : "DIFFER (they must be bit-identical)"));
            }
        }
        rep.notes.add("Columns: kNN and affinities (perplexity calibration + symmetrisation) once; per-iteration phase "
                + "times averaged over the iterations; 'iterations s' their sum; end to end = data in memory to "
                + "centred embedding including the final KL. KL of the final embedding; trustworthiness (k = 10) and "
                + "leave-one-out 10-NN label accuracy in the embedding on a seeded sample of --quality-sample points; "
                + "rep. rel. error = |F/Z (interpolated) - F/Z (exact O(m^2))| / |F/Z (exact)| (Euclidean norms over "
                + "all coordinates) for a seeded sample of m points of the final embedding, treated as a point set.");
        return rep;
    }

    private void runOne(Data data, Backend backend, Row r) {
        TsneConfig cfg = new TsneConfig();
        cfg.dimension = o.dimension;
        cfg.perplexity = o.perplexity;
        cfg.learningRate = o.learningRate;
        cfg.maxIter = o.maxIter;
        cfg.seed = o.seed;
        cfg.init = TsneConfig.INIT_RANDOM;
        cfg.backend = backend;
        cfg.grid = o.grid;
        cfg.repulsion = o.repulsion;
        cfg.validate(data.n);
        // one sampler: the kNN's counts are copied when it ends, the whole fit's read at the end; both printed after
        // the clocks stop
        StackSampler stacks = o.sampleStacksMs > 0 ? new StackSampler(Thread.currentThread(), o.sampleStacksMs) : null;
        long t0 = System.nanoTime();
        int k = cfg.effectiveK(data.n);
        long[] pairsBefore = TsneEngine.lastKnnCellPairs();
        KnnGraph g = o.knnProbes > 0 ? TsneEngine.knnApproximate(data.x, data.n, data.d, k, o.knnProbes, backend)
                : TsneEngine.knn(data.x, data.n, data.d, k, backend);
        long t1 = System.nanoTime();
        StackSampler.Snapshot knnStacks = stacks != null ? stacks.snapshot() : null;
        long[] pairs = TsneEngine.lastKnnCellPairs();
        if (o.knnProbes == 0 && !Arrays.equals(pairs, pairsBefore)) {
            r.note = String.format(Locale.ROOT, "exact kNN over cells scanned %.2f%% of the n^2 pairs (round 1 "
                    + "%.2f%%)", 100.0 * (pairs[0] + pairs[1]) / ((double) data.n * data.n),
                    100.0 * pairs[0] / ((double) data.n * data.n));
        } else if (o.knnProbes > 0) {
            r.note = "approximate kNN, " + o.knnProbes + " cells per point";
        }
        SparseRows p = TsneEngine.joint(g, cfg.perplexity, backend);
        long t2 = System.nanoTime();
        double[] y0 = TsneEngine.randomInit(data.n, cfg.dimension, cfg.seed);
        TsneResult res = TsneEngine.optimize(p, y0, cfg, null);
        long t3 = System.nanoTime();
        if (stacks != null) {
            stacks.close();
            System.err.print(knnStacks.report(data.name + " " + backend + ": kNN", 40));
            System.err.print(stacks.report(data.name + " " + backend + ": whole fit", 40));
        }
        r.knnS = (t1 - t0) / 1e9;
        r.affS = (t2 - t1) / 1e9;
        double klS = res.timings.seconds(TsneTimings.Phase.KL);
        String split = String.format(Locale.ROOT, "optimiser %.2f s = iterations %.2f + KL evaluations %.2f + the "
                + "rest (set-up, uploads, final KL) %.2f", (t3 - t2) / 1e9, iterationSeconds(res.timings), klS,
                (t3 - t2) / 1e9 - iterationSeconds(res.timings) - klS);
        r.note = r.note.isEmpty() ? split : r.note + "; " + split;
        if (o.knnCheck > 0 && backend == Backend.GPU) {
            int m = Math.min(o.knnCheck, data.n);
            float[] q = Arrays.copyOf(data.x, m * data.d);
            long b0 = System.nanoTime();
            KnnGraph brute = TsneEngine.knnBlock(q, 0, m, data.x, 0, data.n, data.d, k, data.n, backend);
            double bs = (System.nanoTime() - b0) / 1e9;
            long hit = 0;
            int sameRows = 0;
            for (int i = 0; i < m; i++) {
                Set<Integer> want = new java.util.HashSet<>();
                boolean same = true;
                for (int j = 0; j < k; j++) {
                    want.add(brute.index[i * k + j]);
                    same &= brute.index[i * k + j] == g.index[i * k + j] && brute.dist2[i * k + j] == g.dist2[i * k + j];
                }
                for (int j = 0; j < k; j++) {
                    hit += want.contains(g.index[i * k + j]) ? 1 : 0;
                }
                sameRows += same ? 1 : 0;
            }
            String check = String.format(Locale.ROOT, "kNN check on %d points: recall %.4f, %d rows identical to the "
                    + "brute force (its time for them %.3f s, i.e. %.1f s for all %d)", m, hit / ((double) m * k),
                    sameRows, bs, bs * data.n / m, data.n);
            r.note = r.note.isEmpty() ? check : r.note + "; " + check;
            if (o.knnProbes == 0 && sameRows != m) {
                r.note += " (MISMATCH: the exact kNN must equal the brute force)";
                r.mismatchKnn = true;
            }
        }
        r.t = res.timings;
        r.endToEndS = (t3 - t0) / 1e9;
        r.kl = res.finalKl();
        r.embedding = res.embedding;
        int m = Math.min(data.n, o.qualitySample);
        if (m >= 40) {
            int[] idx = TsneTrainer.sampleIndices(data.n, m, o.seed + 1);
            double[] xs = new double[m * data.d];
            double[] ys = new double[m * cfg.dimension];
            int[] labels = new int[m];
            for (int s = 0; s < m; s++) {
                for (int a = 0; a < data.d; a++) {
                    xs[s * data.d + a] = data.x[idx[s] * data.d + a];
                }
                System.arraycopy(res.embedding, idx[s] * cfg.dimension, ys, s * cfg.dimension, cfg.dimension);
                labels[s] = data.labels[idx[s]];
            }
            r.trust = TsneQuality.trustworthiness(xs, data.d, ys, cfg.dimension, m, 10);
            r.labelAcc = TsneQuality.knnLabelAccuracy(ys, cfg.dimension, labels, 10);
        }
        int me = Math.min(data.n, o.errorSample);
        if (cfg.exactRepulsion(data.n)) {
            r.note = (r.note.isEmpty() ? "" : r.note + "; ") + "exact repulsion (no interpolation error)";
        } else if (me >= 4) {
            r.errSample = me;
            r.repRelErr = repulsionError(res.embedding, data.n, cfg.dimension, me, backend, o.grid, o.seed + 2);
        }
    }

    /**
     * Seconds of all iterations: attractive, S2G, G2G, G2S (or the exact repulsion) and update (with the exchange in
     * distributed mode).
     */
    static double iterationSeconds(TsneTimings t) {
        return t.seconds(TsneTimings.Phase.ATTRACTIVE) + t.seconds(TsneTimings.Phase.S2G)
                + t.seconds(TsneTimings.Phase.G2G) + t.seconds(TsneTimings.Phase.G2S)
                + t.seconds(TsneTimings.Phase.EXACT) + t.seconds(TsneTimings.Phase.UPDATE);
    }

    /** GpuTsne's trainer through Spark (input DataFrame of P partitions), timed end to end from the DataFrame. */
    private void runSpark(Data data, String mode, Backend backend, Row r) {
        org.apache.spark.sql.SparkSession spark = org.apache.spark.sql.SparkSession.builder()
                .master("local[" + o.sparkCores + "]")
                .appName("spark-gpu t-SNE benchmark")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.default.parallelism", String.valueOf(o.sparkCores))
                .config("spark.sql.shuffle.partitions", String.valueOf(o.sparkCores))
                .config(TsneTrainer.DISTRIBUTED_STAGE, String.valueOf(!mode.equals(DISTRIBUTED_JOBS)))
                .getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        org.apache.spark.api.java.JavaSparkContext jsc =
                org.apache.spark.api.java.JavaSparkContext.fromSparkContext(spark.sparkContext());
        int parts = o.sparkPartitions > 0 ? o.sparkPartitions : o.sparkCores;
        org.apache.spark.broadcast.Broadcast<float[]> bx = jsc.broadcast(data.x);
        List<Integer> ids = new ArrayList<>();
        for (int p = 0; p < parts; p++) {
            ids.add(p);
        }
        final int n = data.n;
        final int d = data.d;
        org.apache.spark.api.java.JavaRDD<org.apache.spark.sql.Row> rows = jsc.parallelize(ids, parts)
                .flatMap(p -> {
                    List<org.apache.spark.sql.Row> out = new ArrayList<>();
                    float[] x = bx.value();
                    for (int i = (int) ((long) n * p / parts); i < (int) ((long) n * (p + 1) / parts); i++) {
                        double[] v = new double[d];
                        for (int a = 0; a < d; a++) {
                            v[a] = x[i * d + a];
                        }
                        out.add(org.apache.spark.sql.RowFactory.create(org.apache.spark.ml.linalg.Vectors.dense(v)));
                    }
                    return out.iterator();
                });
        org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> df = spark.createDataFrame(rows,
                new org.apache.spark.sql.types.StructType().add("features",
                        org.apache.spark.ml.linalg.SQLDataTypes.VectorType(), false)).cache();
        df.count();
        TsneConfig cfg = new TsneConfig();
        cfg.dimension = o.dimension;
        cfg.perplexity = o.perplexity;
        cfg.learningRate = o.learningRate;
        cfg.maxIter = o.maxIter;
        cfg.seed = o.seed;
        cfg.init = o.sparkInit;
        cfg.backend = backend;
        cfg.grid = o.grid;
        cfg.repulsion = o.repulsion;
        cfg.mode = mode.equals(DISTRIBUTED_JOBS) ? TsneConfig.MODE_DISTRIBUTED : mode;
        cfg.knnProbes = o.knnProbes;
        try {
            long t0 = System.nanoTime();
            cfg.pcaDimension = 0;
            cfg.qualitySampleSize = 0;
            io.sparkgpu.tsne.TsneFit f = TsneTrainer.fitFeatures(df, "features", null, cfg, null);
            r.endToEndS = (System.nanoTime() - t0) / 1e9;
            r.t = f.result.timings;
            r.knnS = r.t.seconds(TsneTimings.Phase.KNN);
            r.affS = r.t.seconds(TsneTimings.Phase.AFFINITIES);
            r.kl = f.result.finalKl();
            r.embedding = f.result.embedding;
            r.note = mode.equals(TsneConfig.MODE_SINGLE) ? "features gathered to the driver"
                    : "kNN column: distributed kNN + affinities; " + parts + " P slices; " + (mode.equals(DISTRIBUTED_JOBS)
                    ? "two Spark jobs per iteration" : "iterations in one barrier stage");
        } finally {
            df.unpersist();
            bx.destroy();
            spark.stop();
        }
    }

    /** Relative error of the interpolated F_rep / Z against the exact O(m^2) one on m sampled points. */
    static double repulsionError(double[] y, int n, int dim, int m, Backend backend,
            io.sparkgpu.tsne.TsneGridOptions options, long seed) {
        int[] idx = TsneTrainer.sampleIndices(n, m, seed);
        double[] ys = new double[m * dim];
        for (int s = 0; s < m; s++) {
            System.arraycopy(y, idx[s] * dim, ys, s * dim, dim);
        }
        double[] min = new double[dim];
        double[] max = new double[dim];
        Arrays.fill(min, Double.POSITIVE_INFINITY);
        Arrays.fill(max, Double.NEGATIVE_INFINITY);
        for (int s = 0; s < m; s++) {
            for (int a = 0; a < dim; a++) {
                min[a] = Math.min(min[a], ys[s * dim + a]);
                max[a] = Math.max(max[a], ys[s * dim + a]);
            }
        }
        InterpGrid grid = TsneEngine.plan(min, max, dim, options);
        long[] q = TsneEngine.s2g(grid, m, ys, m, backend);
        double[] phi = TsneEngine.convolve(grid, TsneEngine.chargesToDouble(grid, m, q),
                GridConvolution.Method.AUTO, backend);
        Repulsion rep = TsneEngine.g2s(grid, m, phi, ys, m, backend);
        double z = io.sparkgpu.common.FixedPoint.toDouble(rep.zFixed, 0, rep.zShift) - m;
        double[] exact = TsneEngine.exactRepulsive(ys, m, dim);
        double zExact = TsneEngine.exactZ(ys, m, dim);
        double num = 0;
        double den = 0;
        for (int t = 0; t < exact.length; t++) {
            double e = exact[t] / zExact;
            double diff = rep.force[t] / z - e;
            num += diff * diff;
            den += e * e;
        }
        return Math.sqrt(num / den);
    }
}
