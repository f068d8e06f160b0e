package io.sparkgpu.jobs;

import io.sparkgpu.tsne.GpuTsne;
import io.sparkgpu.tsne.GpuTsneModel;
import io.sparkgpu.tsne.GpuTsneModelParams;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneFit;
import io.sparkgpu.tsne.TsneResult;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.TsneTrainer;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import org.knowm.xchart.XYChart;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sparkgpu tsne}: embeds the rows of a CSV or Parquet input with t-SNE; writes coordinates, model and plot. */
@Command(name = "tsne", mixinStandardHelpOptions = true, sortOptions = false,
        defaultValueProvider = EstimatorDefaults.class,
        description = {"Embed the rows of a CSV or Parquet file in 1, 2 or 3 dimensions with t-SNE (GPU when usable, "
                + "else CPU).", "Prints the KL divergence every 50 iterations, quality on a sample and the time per "
                + "phase; optionally writes the embedding, the model and a scatter plot."},
        footer = {"", "Example:",
                "  sparkgpu tsne --input examples/digits.csv --features p0..p63 --label digit \\",
                "      --output embedding.parquet --plot digits.png"})
final class TsneCommand extends SparkCommand implements EstimatorDefaults.Source {
    /** The options that are params of {@link GpuTsne}: their defaults and rules are the estimator's. */
    static final Map<String, String> PARAMS = Map.ofEntries(Map.entry("--dimension", "dimension"),
            Map.entry("--perplexity", "perplexity"), Map.entry("--neighbors", "k"), Map.entry("--max-iter", "maxIter"),
            Map.entry("--knn-probes", "knnProbes"),
            Map.entry("--learning-rate", "learningRate"), Map.entry("--early-exaggeration", "earlyExaggeration"),
            Map.entry("--exaggeration-iter", "exaggerationIterations"), Map.entry("--init", "init"),
            Map.entry("--pca", "pcaDimension"), Map.entry("--seed", "seed"), Map.entry("--mode", "mode"),
            Map.entry("--distributed-partitions", "distributedPartitions"),
            Map.entry("--grid-per-unit", "gridIntervalsPerUnit"), Map.entry("--grid-min-intervals", "gridMinIntervals"),
            Map.entry("--grid-max-intervals", "gridMaxIntervals"), Map.entry("--quality-sample", "qualitySampleSize"),
            Map.entry("--backend", "backend"), Map.entry("--repulsion", "repulsion"), Map.entry("--dof", "dof"),
            Map.entry("--late-exaggeration", "lateExaggeration"),
            Map.entry("--late-exaggeration-iter", "lateExaggerationIter"));
    enum OutputFormat { parquet, csv }

    @Option(names = "--input", required = true, paramLabel = "PATH",
            description = "Input file, directory or glob: CSV with a header row, or Parquet.")
    String input;

    @Option(names = "--format", paramLabel = "FMT", defaultValue = "auto",
            description = "Input format: csv, parquet or auto (from the file extension). Default: ${DEFAULT-VALUE}.")
    InputData.Format format;

    @Option(names = "--features", paramLabel = "COLS",
            description = "Comma-separated numeric columns, or one vector/array column (feature mode).")
    String features;

    @Option(names = "--graph", paramLabel = "SRC,DST[,W]",
            description = "Graph mode instead of --features: source, destination and optional weight columns of "
                    + "the edges of a sparse similarity graph used as P.")
    String graph;

    @Option(names = "--id", paramLabel = "COL", description = "Column identifying rows (default: the row number).")
    String id;

    @Option(names = "--label", paramLabel = "COL",
            description = "Column colouring the plot and copied to --output (feature mode).")
    String label;

    @Option(names = "--dimension", paramLabel = "D",
            description = "Embedding dimension: 1, 2 or 3. Default: ${DEFAULT-VALUE}.")
    int dimension;

    @Option(names = "--perplexity", paramLabel = "P",
            description = "Perplexity (> 1, below the neighbours, so < rows - 1). Default: ${DEFAULT-VALUE}.")
    double perplexity;

    @Option(names = "--neighbors", paramLabel = "K",
            description = "Neighbours per point (> perplexity, < rows; 0: min(ceil(3 x perplexity), rows - 1)). "
                    + "Default: ${DEFAULT-VALUE}.")
    int neighbors;

    @Option(names = "--knn-probes", paramLabel = "P",
            description = "0: the exact kNN. P > 0: the approximate kNN, searching each point's neighbours in the P "
                    + "cells (of about 2048 points) nearest to its own; single-device mode. Default: ${DEFAULT-VALUE}.")
    int knnProbes;

    @Option(names = "--max-iter", paramLabel = "N",
            description = "Gradient iterations. Default: ${DEFAULT-VALUE}.")
    int maxIter;

    @Option(names = "--learning-rate", paramLabel = "ETA", defaultValue = "auto",
            description = "Step: auto or 0 (max(rows / early exaggeration, 200)), or a number > 0. "
                    + "Default: ${DEFAULT-VALUE}.")
    String learningRate;

    @Option(names = "--early-exaggeration", paramLabel = "A",
            description = "Early exaggeration factor. Default: ${DEFAULT-VALUE}.")
    double earlyExaggeration;

    @Option(names = "--exaggeration-iter", paramLabel = "N",
            description = "Iterations with early exaggeration. Default: ${DEFAULT-VALUE}.")
    int exaggerationIter;

    @Option(names = "--dof", paramLabel = "A",
            description = "Degrees of freedom of the kernel (1 + d^2/A)^-A, in (0, 2]: 1 is standard t-SNE, smaller "
                    + "values give heavier tails (finer clusters). Default: ${DEFAULT-VALUE}.")
    double dof;

    @Option(names = "--late-exaggeration", paramLabel = "A",
            description = "Exaggeration factor from --late-exaggeration-iter on (>= 1; 1: off). "
                    + "Default: ${DEFAULT-VALUE}.")
    double lateExaggeration;

    @Option(names = "--late-exaggeration-iter", paramLabel = "N",
            description = "First (0-based) iteration of the late exaggeration, after the early phase. "
                    + "Default: ${DEFAULT-VALUE}.")
    int lateExaggerationIter;

    @Option(names = "--init", paramLabel = "INIT",
            description = "pca or random. Default: ${DEFAULT-VALUE}.")
    String init;

    @Option(names = "--pca", paramLabel = "D",
            description = "Reduce the features to D principal components first (0: no). Default: ${DEFAULT-VALUE}.")
    int pcaDimension;

    @Option(names = "--seed", paramLabel = "SEED",
            description = "Seed of the initialisation and samples. " + SEED_DEFAULT)
    long seed;

    @Option(names = "--mode", paramLabel = "MODE",
            description = "auto, single (P and Y on the driver's device) or distributed (P on the executors). "
                    + "Default: ${DEFAULT-VALUE}.")
    String mode;

    @Option(names = "--distributed-partitions", paramLabel = "N",
            description = "Distributed mode: coalesce P into at most N partitions, e.g. one per executor or GPU "
                    + "(0: keep the input's). Default: ${DEFAULT-VALUE}.")
    int distributedPartitions;

    @Option(names = "--repulsion", paramLabel = "METHOD",
            description = "Repulsive term: exact (all pairs), grid (interpolation on a grid sized from the embedding's "
                    + "extent) or auto (exact up to " + TsneConfig.EXACT_MAX_POINTS + " points, else grid); the same on "
                    + "every backend. Default: ${DEFAULT-VALUE}.")
    String repulsion;

    @Option(names = "--grid-per-unit", paramLabel = "X",
            description = "Interpolation grid boxes per unit of embedding extent. Default: ${DEFAULT-VALUE}.")
    double gridPerUnit;

    @Option(names = "--grid-min-intervals", paramLabel = "N",
            description = "Fewest grid boxes per axis. Default: ${DEFAULT-VALUE}.")
    int gridMin;

    @Option(names = "--grid-max-intervals", paramLabel = "N",
            description = "Most grid boxes per axis (0: 2000, 320, 40 in 1-, 2-, 3-D). Default: ${DEFAULT-VALUE}.")
    int gridMax;

    @Option(names = "--quality-sample", paramLabel = "N",
            description = "Points on which trustworthiness and kNN preservation are computed (0: skip). "
                    + "Default: ${DEFAULT-VALUE}.")
    int qualitySample;

    @Option(names = "--output", paramLabel = "PATH",
            description = "Write the embedding here: id, label (if --label), tsne_1..tsne_D.")
    String output;

    @Option(names = "--output-format", paramLabel = "FMT", defaultValue = "parquet",
            description = "Format of --output: parquet or csv. Default: ${DEFAULT-VALUE}.")
    OutputFormat outputFormat;

    @Option(names = "--model-out", paramLabel = "DIR",
            description = "Save the GpuTsneModel (usable by sparkgpu_tsne_embedding) and DIR/summary.json.")
    String modelOut;

    @Option(names = "--overwrite", description = "Replace --output, --model-out and --plot if they exist (only "
            + "once the new one is complete).")
    boolean overwrite;

    @Option(names = "--plot", paramLabel = "FILE.png",
            description = "Write a PNG scatter plot of the first two embedding axes, coloured by --label.")
    Path plot;

    @Option(names = "--plot-points", paramLabel = "N", defaultValue = "20000",
            description = "At most this many (sampled) points in --plot. Default: ${DEFAULT-VALUE}.")
    int plotPoints;

    /**
     * The estimator the options describe. Each value goes through the estimator's param, whose rule is
     * {@link TsneConfig}'s, and the settings together through {@link TsneConfig#validate()}, before Spark starts;
     * refusals are usage errors naming the option. The rules that need the number of rows run in the fit.
     */
    GpuTsne estimator() {
        if ((features == null) == (graph == null)) {
            throw usage("Pass exactly one of --features (feature mode) and --graph (graph mode)");
        }
        if (graph != null && label != null) {
            throw usage("--label: only in feature mode (graph vertices have no label column)");
        }
        if (plotPoints < 1) {
            throw usage("Invalid value for option '--plot-points': must be >= 1, got " + plotPoints);
        }
        checkPng(plot);
        GpuTsne est = new GpuTsne();
        option("--dimension", () -> est.setDimension(dimension));
        option("--perplexity", () -> est.setPerplexity(perplexity));
        option("--neighbors", () -> est.setK(neighbors));
        option("--knn-probes", () -> est.setKnnProbes(knnProbes));
        option("--max-iter", () -> est.setMaxIter(maxIter));
        option("--early-exaggeration", () -> est.setEarlyExaggeration(earlyExaggeration));
        option("--exaggeration-iter", () -> est.setExaggerationIterations(exaggerationIter));
        option("--dof", () -> est.setDof(dof));
        option("--late-exaggeration", () -> est.setLateExaggeration(lateExaggeration));
        option("--late-exaggeration-iter", () -> est.setLateExaggerationIter(lateExaggerationIter));
        option("--init", () -> est.setInit(init));
        option("--pca", () -> est.setPcaDimension(pcaDimension));
        option("--seed", () -> est.setSeed(seed));
        option("--mode", () -> est.setMode(mode));
        option("--distributed-partitions", () -> est.setDistributedPartitions(distributedPartitions));
        option("--repulsion", () -> est.setRepulsion(repulsion));
        option("--grid-per-unit", () -> est.setGridIntervalsPerUnit(gridPerUnit));
        option("--grid-min-intervals", () -> est.setGridMinIntervals(gridMin));
        option("--grid-max-intervals", () -> est.setGridMaxIntervals(gridMax));
        option("--quality-sample", () -> est.setQualitySampleSize(qualitySample));
        double rate;
        String lr = learningRate.trim();
        try {
            rate = "auto".equalsIgnoreCase(lr) ? TsneConfig.LEARNING_RATE_AUTO : Double.parseDouble(lr);
        } catch (NumberFormatException e) {
            throw usage("Invalid value for option '--learning-rate': expected auto or a number, got '" + learningRate
                    + "'");
        }
        option("--learning-rate", () -> est.setLearningRate(rate));
        backendOption(est);
        settings(invert(PARAMS), () -> est.toConfig().validate());
        return est;
    }

    private GpuTsne defaults;

    @Override
    public GpuTsne defaults() {
        if (defaults == null) {
            defaults = new GpuTsne();
        }
        return defaults;
    }

    @Override
    public Map<String, String> paramOfOption() {
        return PARAMS;
    }

    @Override
    public Integer call() throws Exception {
        GpuTsne est = estimator();
        long t0 = System.nanoTime();
        PrintWriter out = out();
        try (SparkSession spark = startSpark("spark-gpu t-SNE")) {
            Dataset<Row> raw = InputData.read(spark, input, format, commandLine());
            SafeOutput outputTarget = checkTarget(spark, output, "--output", input, overwrite);
            SafeOutput modelTarget = checkTarget(spark, modelOut, "--model-out", input, overwrite);
            SafeOutput plotTarget = checkFile(spark, plot, "--plot", overwrite, input);
            String idCol = id == null ? null : InputData.field(raw.schema(), id.trim(), "--id", commandLine()).name();
            String labelCol = label == null ? null
                    : InputData.field(raw.schema(), label.trim(), "--label", commandLine()).name();
            // the CLI writes the embedding itself: any free name passes the estimator's check of its output column
            est.setIdCol(idCol).setOutputCol(InputData.freshName(raw.schema(), est.getOutputCol()));
            GpuTsneModel model;
            Object[] labels = null;
            if (graph != null) {
                String[] g = graph.split(",", -1);
                if (g.length < 2 || g.length > 3) {
                    throw usage("--graph: expected SRC,DST or SRC,DST,WEIGHT, got '" + graph + "'");
                }
                String src = InputData.field(raw.schema(), g[0].trim(), "--graph", commandLine()).name();
                String dst = InputData.field(raw.schema(), g[1].trim(), "--graph", commandLine()).name();
                String w = g.length == 3 ? InputData.field(raw.schema(), g[2].trim(), "--graph", commandLine()).name()
                        : null;
                out.printf(Locale.ROOT, "t-SNE: graph %s -> %s%s from %s, dimension %d, backend %s, master %s%n", src,
                        dst, w == null ? "" : " (weights " + w + ")", input, est.getDimension(), est.getBackend(),
                        spark.sparkContext().master());
                out.flush();
                model = est.setSrcCol(src).setDstCol(dst).setWeightCol(w).fit(raw);
            } else {
                InputData.Features feats = InputData.features(raw, features, "--features", commandLine());
                out.printf(Locale.ROOT, "t-SNE: input %s, features %s, dimension %d, perplexity %s, backend %s, "
                        + "master %s%n", input, feats.names != null ? String.join(",", feats.names) : feats.column,
                        est.getDimension(), perplexity, est.getBackend(), spark.sparkContext().master());
                out.flush();
                Dataset<Row> data = feats.df.persist(StorageLevel.MEMORY_AND_DISK());
                try {
                    model = feats.fit(() -> est.setFeaturesCol(feats.column).fit(data));
                    if (labelCol != null) {
                        labels = new Object[model.numPoints()];
                        for (scala.Tuple2<Row, Long> t : data.select(InputData.quote(labelCol)).javaRDD()
                                .zipWithIndex().collect()) {
                            labels[(int) (long) t._2()] = t._1().get(0);
                        }
                    }
                } finally {
                    data.unpersist(false);
                }
            }
            TsneFit fit = model.trainingFit();
            if (output != null) {
                writeEmbedding(outputTarget, spark, fit, labelCol, labels);
                out.println("  embedding     " + output + " (" + outputFormat + ")");
            }
            if (modelOut != null) {
                writeModel(modelTarget, model, fit, est);
                out.println("  model         " + modelOut);
            }
            if (plot != null) {
                int shown = plot(plotTarget, fit, labels, labelCol, est.getSeed());
                out.println("  plot          " + plot + " (" + shown + " points)");
            }
            out.println("t-SNE finished");
            printSummary(out, fit, secondsSince(t0));
        }
        return SparkGpuCli.EXIT_OK;
    }

    static void printSummary(PrintWriter out, TsneFit fit, double seconds) {
        TsneResult r = fit.result;
        out.printf(Locale.ROOT, "  points        %d (%s, %d features used), dimension %d, mode %s%n", r.n, fit.input,
                fit.numFeatures, r.dim, r.mode);
        out.printf(Locale.ROOT, "  final KL      %.6f%n", r.finalKl());
        if (fit.qualitySample > 0) {
            out.printf(Locale.ROOT, "  quality       trustworthiness %.4f, kNN preservation %.4f (k=%d, sampled: %d of %d "
                    + "points)%n", fit.trustworthiness, fit.knnPreservation, fit.qualityK, fit.qualitySample, r.n);
        }
        StringBuilder sb = new StringBuilder();
        for (TsneTimings.Phase p : TsneTimings.Phase.values()) {
            if (p != TsneTimings.Phase.TOTAL) {
                sb.append(String.format(Locale.ROOT, " %s %.3f", p.name().toLowerCase(Locale.ROOT), r.timings.seconds(p)));
            }
        }
        out.println("  seconds      " + sb);
        out.printf(Locale.ROOT, "  time          %.3f s total, %.3f s t-SNE%n", seconds,
                r.timings.seconds(TsneTimings.Phase.TOTAL));
    }

    private void writeEmbedding(SafeOutput target, SparkSession spark, TsneFit fit, String labelCol, Object[] labels)
            throws java.io.IOException {
        TsneResult r = fit.result;
        String idName = id != null ? id.trim() : "id";
        StructType schema = new StructType().add(idName, fit.idType, false);
        if (labels != null) {
            schema = schema.add(labelCol, DataTypes.StringType, true);
        }
        for (int a = 0; a < r.dim; a++) {
            schema = schema.add("tsne_" + (a + 1), DataTypes.DoubleType, false);
        }
        List<Row> rows = new ArrayList<>(r.n);
        for (int i = 0; i < r.n; i++) {
            List<Object> v = new ArrayList<>();
            v.add(fit.ids[i]);
            if (labels != null) {
                v.add(labels[i] == null ? null : labels[i].toString());
            }
            for (int a = 0; a < r.dim; a++) {
                v.add(r.embedding[i * r.dim + a]);
            }
            rows.add(RowFactory.create(v.toArray()));
        }
        target.writeDataset(spark.createDataFrame(rows, schema).coalesce(1), outputFormat.name());
    }

    private void writeModel(SafeOutput target, GpuTsneModel model, TsneFit fit, GpuTsne est) throws Exception {
        // the saved model's output column is the estimator's default name, whatever the CLI used during the fit
        GpuTsneModel saved = model.copy(org.apache.spark.ml.param.ParamMap.empty())
                .setOutputCol(GpuTsneModelParams.DEFAULT_OUTPUT);
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("algorithm", "t-SNE");
        s.put("input", input);
        s.put("mode", fit.input);
        s.put("numPoints", fit.result.n);
        s.put("dimension", fit.result.dim);
        s.put("perplexity", est.getPerplexity());
        s.put("maxIter", est.getMaxIter());
        s.put("learningRate", fit.learningRate);
        s.put("seed", est.getSeed());
        s.put("execution", fit.result.mode);
        s.put("klIterations", fit.result.klIterations);
        s.put("klValues", fit.result.klValues);
        s.put("trustworthiness", fit.trustworthiness);
        s.put("knnPreservation", fit.knnPreservation);
        s.put("seconds", new LinkedHashMap<>(fit.result.timings.toMap()));
        ModelOutput.write(target, saved, s);
    }

    private int plot(SafeOutput target, TsneFit fit, Object[] labels, String labelCol, long seed) throws Exception {
        TsneResult r = fit.result;
        int[] idx = TsneTrainer.sampleIndices(r.n, plotPoints, seed);
        double[] x = new double[idx.length];
        double[] y = new double[idx.length];
        int[] group = new int[idx.length];
        Map<String, Integer> groups = new TreeMap<>();
        if (labels != null) {
            for (int i : idx) {
                groups.putIfAbsent(String.valueOf(labels[i]), 0);
            }
            int g = 0;
            for (Map.Entry<String, Integer> e : groups.entrySet()) {
                e.setValue(g++);
            }
        }
        for (int s = 0; s < idx.length; s++) {
            int i = idx[s];
            x[s] = r.embedding[i * r.dim];
            y[s] = r.dim > 1 ? r.embedding[i * r.dim + 1] : 0.0;
            group[s] = labels == null ? 0 : groups.get(String.valueOf(labels[i]));
        }
        List<String> names = labels == null ? List.of("points") : new ArrayList<>(groups.keySet());
        if (labels != null) {
            for (int g = 0; g < names.size(); g++) {
                names.set(g, labelCol + "=" + names.get(g));
            }
        }
        XYChart chart = Plots.scatter(String.format(Locale.ROOT, "t-SNE of %s (perplexity %s, KL %.3f)", input,
                perplexity, r.finalKl()), "t-SNE 1", r.dim > 1 ? "t-SNE 2" : "", x, y, group, names);
        target.writePng(chart);
        return idx.length;
    }
}
