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

/** {@code sparkgpu demo}: k-means on Iris and on a million generated points, with plots. */
@Command(name = "demo", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Demonstrate k-means on Iris and on a million generated points, with plots.",
                "Runs k-means on the Iris data (k=3, shipped in the jar) and on generated 2-D Gaussian blobs",
                "(8 blobs, k=8); prints cost, cluster sizes, backend and time; writes PNG plots.",
                "Works without a GPU: backend auto falls back to the CPU."})
final class DemoCommand extends SparkCommand {
    @Option(names = "--out-dir", paramLabel = "DIR", defaultValue = "./sparkgpu-demo",
            description = "Directory for the PNG plots. Default: ${DEFAULT-VALUE}.")
    Path outDir;

    @Option(names = "--overwrite", description = "Replace the plots of a previous run in --out-dir.")
    boolean overwrite;

    /** The plots the demo writes into --out-dir. */
    static final String[] PLOTS = {"iris-kmeans.png", "iris-species.png", "blobs-kmeans.png", "blobs-cost.png"};

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
        estimator(2); // checks --backend before Spark starts
        for (String name : PLOTS) {
            plots.put(name, checkFile(null, outDir.resolve(name), "--out-dir", overwrite));
        }
        long t0 = System.nanoTime();
        PrintWriter out = out();
        try (SparkSession spark = startSpark("spark-gpu demo")) {
            out.printf(Locale.ROOT, "spark-gpu demo: master %s, backend %s, plots in %s%n",
                    spark.sparkContext().master(), estimator(2).getBackend(), outDir.toAbsolutePath().normalize());
            iris(spark, out);
            blobs(spark, out);
            out.printf(Locale.ROOT, "%ndemo finished in %.2f s%n", secondsSince(t0));
        }
        return SparkGpuCli.EXIT_OK;
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
