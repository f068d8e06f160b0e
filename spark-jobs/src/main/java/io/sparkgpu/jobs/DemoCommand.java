package io.sparkgpu.jobs;

import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.GpuKMeansModel;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.knowm.xchart.XYChart;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sparkgpu demo}: every capability on small data, with plots: k-means (Iris, generated blobs), then the other
 * commands run in-process on small inputs the demo writes into {@code --out-dir/data}.
 */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Demonstrate every capability on small data, with PNG plots.",
                "kmeans: Iris (k=3, shipped in the jar) and generated 2-D Gaussian blobs (8 blobs, k=8);",
                "isotonic, spline: a noisy dose-response curve; scan: a 32 x 24 grid with a hot rectangle;",
                "tsne: Iris; sort: hours of a day; cdf: log-normal latencies; fhn: a FitzHugh-Nagumo pulse.",
                "Prints each one's results, backend and time. Works without a GPU: backend auto falls back to",
                "the CPU (about a minute on 2 cores). The inputs are written to --out-dir/data."},
        footer = {"", "Examples:", "  sparkgpu demo", "  sparkgpu demo --only tsne,scan --out-dir /tmp/demo"})
final class DemoCommand extends SparkCommand {
    @Option(names = "--out-dir", paramLabel = "DIR", defaultValue = "./sparkgpu-demo",
            description = "Directory for the PNG plots. Default: ${DEFAULT-VALUE}.")
    Path outDir;

    @Option(names = "--overwrite", description = "Replace the plots of a previous run in --out-dir.")
    boolean overwrite;

    /** The plots the k-means demo writes into --out-dir. */
    static final String[] PLOTS = {"iris-kmeans.png", "iris-species.png", "blobs-kmeans.png", "blobs-cost.png"};

    /** The demos, in the order they run. */
    static final List<String> DEMOS = List.of("kmeans", "isotonic", "scan", "tsne", "sort", "spline", "cdf", "fhn");

    /** The plot of each demo other than k-means (in --out-dir). */
    static final java.util.Map<String, String> PLOT_OF = java.util.Map.of("isotonic", "isotonic.png",
            "scan", "scan-heatmap.png", "tsne", "tsne-iris.png", "sort", "sort-hours.png", "spline", "spline.png",
            "cdf", "cdf-latency.png", "fhn", "fhn-pulse.png");

    /** The input file of each demo that reads one (in --out-dir/data). */
    static final java.util.Map<String, String> DATA_OF = java.util.Map.of("isotonic", "dose.csv", "spline", "dose.csv",
            "scan", "cells.csv", "tsne", "iris.csv", "sort", "hours.csv", "cdf", "latency.csv");

    @Option(names = "--only", paramLabel = "NAME", split = ",",
            description = "Run only these demos (comma-separated): kmeans, isotonic, scan, tsne, sort, spline, cdf, "
                    + "fhn. Default: all.")
    List<String> only;

    private final java.util.Map<String, SafeOutput> plots = new java.util.HashMap<>();

    @Option(names = "--points", paramLabel = "N", defaultValue = "1000000",
            description = "Number of generated points (>= 1000). Default: ${DEFAULT-VALUE}.")
    long points;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "8",
            description = "Partitions of the generated data. Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Option(names = "--seed", paramLabel = "SEED", defaultValue = "42",
            description = "Seed of the data generator and of the initialisation (the demo's fixed seed, so that its "
                    + "output is reproducible). Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--plot-points", paramLabel = "N", defaultValue = "20000",
            description = "At most this many (sampled) generated points in the blob plot. Default: ${DEFAULT-VALUE}.")
    int plotPoints;

    @Override
    public Integer call() throws Exception {
        if (points < 1000) {
            throw usage("Invalid value for option '--points': must be >= 1000, got " + points);
        }
        if (partitions < 1) {
            throw usage("Invalid value for option '--partitions': must be >= 1, got " + partitions);
        }
        if (plotPoints < 1) {
            throw usage("Invalid value for option '--plot-points': must be >= 1, got " + plotPoints);
        }
        List<String> demos = selected();
        estimator(2); // checks --backend before Spark starts
        // every output is checked before any work: the plots, and the inputs the demo writes
        java.util.Map<String, SafeOutput> data = new java.util.LinkedHashMap<>();
        for (String d : demos) {
            if (d.equals("kmeans")) {
                for (String name : PLOTS) {
                    plots.put(name, checkFile(null, outDir.resolve(name), "--out-dir", overwrite));
                }
            } else {
                checkFile(null, outDir.resolve(PLOT_OF.get(d)), "--out-dir", overwrite);
                String in = DATA_OF.get(d);
                if (in != null && !data.containsKey(in)) {
                    data.put(in, checkFile(null, outDir.resolve("data").resolve(in), "--out-dir", overwrite));
                }
            }
        }
        long t0 = System.nanoTime();
        PrintWriter out = out();
        out.printf(Locale.ROOT, "spark-gpu demo: %s; backend %s, plots in %s%n", String.join(", ", demos),
                estimator(2).getBackend(), outDir.toAbsolutePath().normalize());
        if (demos.contains("kmeans")) {
            try (SparkSession spark = startSpark("spark-gpu demo")) {
                out.printf(Locale.ROOT, "master %s%n", spark.sparkContext().master());
                iris(spark, out);
                blobs(spark, out);
            }
        }
        for (java.util.Map.Entry<String, SafeOutput> e : data.entrySet()) { // temporary sibling, then moved
            byte[] text = input(e.getKey()).getBytes(java.nio.charset.StandardCharsets.UTF_8);
            e.getValue().writeStream(os -> os.write(text));
        }
        for (String d : demos) {
            if (!d.equals("kmeans")) {
                int code = runCommand(d, out);
                if (code != SparkGpuCli.EXIT_OK) {
                    return code;
                }
            }
        }
        out.printf(Locale.ROOT, "%ndemo finished in %.2f s%n", secondsSince(t0));
        return SparkGpuCli.EXIT_OK;
    }

    /** The demos to run, in {@link #DEMOS}' order; an unknown name is a usage error. */
    private List<String> selected() {
        if (only == null || only.isEmpty()) {
            return DEMOS;
        }
        java.util.Set<String> want = new java.util.HashSet<>();
        for (String o : only) {
            String n = o.trim().toLowerCase(Locale.ROOT);
            if (!DEMOS.contains(n)) {
                throw usage("Invalid value for option '--only': must be among " + String.join(", ", DEMOS) + ", got '"
                        + o + "'");
            }
            want.add(n);
        }
        return DEMOS.stream().filter(want::contains).collect(java.util.stream.Collectors.toList());
    }

    /** The content of one of the demo's inputs ({@link #DATA_OF}). */
    private String input(String file) {
        switch (file) {
            case "dose.csv":
                return DemoData.doseCsv(2000, seed);
            case "cells.csv":
                return DemoData.cellsCsv(seed);
            case "iris.csv":
                return DemoData.irisCsv();
            case "hours.csv":
                return DemoData.hoursCsv(20000, seed);
            case "latency.csv":
                return DemoData.latencyCsv(5000, seed);
            default:
                throw new IllegalStateException("no demo input " + file);
        }
    }

    /** The command line of demo {@code d} (its input is in --out-dir/data, its plot in --out-dir). */
    List<String> commandOf(String d) {
        String in = DATA_OF.containsKey(d) ? outDir.resolve("data").resolve(DATA_OF.get(d)).toString() : null;
        String plot = outDir.resolve(PLOT_OF.get(d)).toString();
        List<String> a;
        switch (d) {
            case "isotonic":
                a = List.of("isotonic", "--input", in, "--feature", "dose", "--label", "response", "--plot", plot);
                break;
            case "scan":
                a = List.of("scan", "--input", in, "--coords", "x,y", "--cases", "cases", "--baseline", "pop",
                        "--replicas", "99", "--clusters", "2", "--heatmap", plot);
                break;
            case "tsne":
                a = List.of("tsne", "--input", in, "--features",
                        String.join(",", DemoData.IRIS_FEATURES), "--label", "species", "--perplexity", "20",
                        "--max-iter", "500", "--plot", plot);
                break;
            case "sort":
                a = List.of("sort", "--input", in, "--key", "hour", "--plot", plot, "--plot-bins", "24");
                break;
            case "spline":
                a = List.of("spline", "--input", in, "--x", "dose", "--y", "response", "--smoothing", "isotonic",
                        "--plot", plot);
                break;
            case "cdf":
                a = List.of("cdf", "--input", in, "--column", "latency", "--knots", "33", "--quantiles", "0.5,0.9,0.99",
                        "--plot", plot);
                break;
            case "fhn":
                a = List.of("fhn", "--cells", "201", "--length", "100", "--dt", "0.05", "--t-end", "60", "--initial",
                        "gaussian", "--stimulus", "none", "--plot", plot);
                break;
            default:
                throw new IllegalStateException("no demo " + d);
        }
        List<String> args = new java.util.ArrayList<>(a);
        args.add("--overwrite"); // the demo checked its outputs above, before any work
        if (common.master != null) {
            args.add("--master");
            args.add(common.master);
        }
        if (backend != null) {
            args.add("--backend");
            args.add(backend);
        }
        if (common.quiet) {
            args.add("--quiet");
        }
        if (!common.ui) {
            args.add("--no-ui");
        }
        if (common.verbose) {
            args.add("--verbose");
        }
        return args;
    }

    /** Runs demo {@code d} as its own command, in this JVM, on this console. */
    private int runCommand(String d, PrintWriter out) {
        out.printf(Locale.ROOT, "%n== %s ==%n", d);
        List<String> args = commandOf(d);
        out.println("  $ sparkgpu " + String.join(" ", args));
        out.flush();
        return SparkGpuCli.run(out, spec.commandLine().getErr(), args.toArray(new String[0]));
    }

    /** The demo's k-means: the estimator's defaults (20 iterations, tol 1e-4, k-means||), the demo's seed. */
    private GpuKMeans estimator(int k) {
        GpuKMeans est = new GpuKMeans().setK(k).setSeed(seed).setFeaturesCol("features");
        backendOption(est);
        return est;
    }

    private void iris(SparkSession spark, PrintWriter out) throws Exception {
        out.printf(Locale.ROOT, "%n== Iris (Fisher 1936): 150 flowers, 4 measurements, k=3 ==%n");
        long t0 = System.nanoTime();
        Dataset<Row> iris = DemoData.iris(spark).cache();
        GpuKMeansModel r = estimator(3).fit(iris);
        double trainSeconds = secondsSince(t0);
        List<Row> rows = r.transform(iris)
                .select("petal_length", "petal_width", "species", "prediction").collectAsList();
        iris.unpersist(false);

        long[][] table = new long[3][DemoData.IRIS_SPECIES.length];
        int n = rows.size();
        double[] px = new double[n];
        double[] py = new double[n];
        int[] cluster = new int[n];
        int[] species = new int[n];
        for (int i = 0; i < n; i++) {
            Row row = rows.get(i);
            px[i] = row.getDouble(0);
            py[i] = row.getDouble(1);
            species[i] = DemoData.speciesIndex(row.getString(2));
            cluster[i] = row.getInt(3);
            table[cluster[i]][species[i]]++;
        }
        KMeansReport.summary(out, r, trainSeconds, secondsSince(t0));
        out.println("  cluster x species:");
        out.printf(Locale.ROOT, "    %-9s %10s %10s %10s%n", "", "setosa", "versicolor", "virginica");
        for (int c = 0; c < table.length; c++) {
            out.printf(Locale.ROOT, "    cluster %d %10d %10d %10d%n", c, table[c][0], table[c][1], table[c][2]);
        }
        out.printf(Locale.ROOT, "  purity        %.4f (share of flowers in their cluster's majority species)%n",
                purity(table));

        // petal length and width separate the species best, so the plots use them (dimensions 2 and 3)
        KMeansReport.Sample s = new KMeansReport.Sample(px, py, cluster);
        Path clusters = plot("iris-kmeans.png", KMeansReport.clustersChart(
                "Iris: k-means clusters (k=3, all four measurements)", "petal length (cm)", "petal width (cm)",
                s, r.clusterCentersArray(), 2, 3));
        XYChart bySpecies = Plots.scatter("Iris: species", "petal length (cm)", "petal width (cm)", px, py, species,
                Arrays.asList(DemoData.IRIS_SPECIES));
        Path speciesPlot = plot("iris-species.png", bySpecies);
        out.println("  plots         " + clusters + ", " + speciesPlot);
        out.flush();
    }

    private void blobs(SparkSession spark, PrintWriter out) throws Exception {
        out.printf(Locale.ROOT, "%n== Gaussian blobs: %,d points in 2-D, %d blobs (radius %.0f, sigma %.0f), k=%d ==%n",
                points, DemoData.BLOBS, DemoData.BLOB_RADIUS, DemoData.BLOB_SIGMA, DemoData.BLOBS);
        long t0 = System.nanoTime();
        Dataset<Row> blobs = DemoData.blobs(spark, points, seed, partitions);
        GpuKMeansModel r = estimator(DemoData.BLOBS).fit(blobs);
        double trainSeconds = secondsSince(t0);

        List<Row> counts = r.transform(blobs).groupBy("prediction", "blob").count().collectAsList();
        long[][] table = new long[r.getK()][DemoData.BLOBS];
        for (Row row : counts) {
            table[row.getInt(0)][row.getInt(1)] = row.getLong(2);
        }
        double worst = 0;
        for (int b = 0; b < DemoData.BLOBS; b++) {
            double[] t = DemoData.blobCentre(b);
            double best = Double.POSITIVE_INFINITY;
            for (double[] c : r.clusterCentersArray()) {
                best = Math.min(best, Math.hypot(c[0] - t[0], c[1] - t[1]));
            }
            worst = Math.max(worst, best);
        }
        KMeansReport.summary(out, r, trainSeconds, secondsSince(t0));
        out.printf(Locale.ROOT, "  purity        %.4f (share of points in their cluster's majority blob)%n", purity(table));
        out.printf(Locale.ROOT, "  centre error  %.4f (largest distance from a true blob centre to the nearest found one)%n",
                worst);

        KMeansReport.Sample s = KMeansReport.sample(blobs, r, plotPoints, seed, 0, 1);
        Path clusters = plot("blobs-kmeans.png", KMeansReport.clustersChart(
                String.format(Locale.ROOT, "Gaussian blobs: k-means clusters (k=%d, %,d of %,d points shown)",
                        r.getK(), s.x.length, r.summary().numPoints()), "x", "y", s, r.clusterCentersArray(), 0, 1));
        Path cost = plot("blobs-cost.png", KMeansReport.costChart("Gaussian blobs: k-means cost per iteration",
                r.summary()));
        out.println("  plots         " + clusters + ", " + cost);
        out.flush();
    }

    /** Writes one of {@link #PLOTS} (checked before the work) and returns its path. */
    private Path plot(String name, XYChart chart) throws java.io.IOException {
        plots.get(name).writePng(chart);
        return outDir.resolve(name);
    }

    /** Share of points that belong to the majority label of their cluster (table[cluster][label]). */
    static double purity(long[][] table) {
        long total = 0;
        long majority = 0;
        for (long[] row : table) {
            long max = 0;
            for (long v : row) {
                total += v;
                max = Math.max(max, v);
            }
            majority += max;
        }
        return total == 0 ? Double.NaN : (double) majority / total;
    }
}
