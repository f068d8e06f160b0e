package io.sparkgpu.jobs;

import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.isotonic.IsotonicConfig;
import io.sparkgpu.isotonic.IsotonicResult;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;
import org.knowm.xchart.XYChart;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sparkgpu isotonic}: fits isotonic regression to a CSV or Parquet input; writes model, predictions, plot. */
@Command(name = "isotonic", mixinStandardHelpOptions = true, sortOptions = false,
        defaultValueProvider = EstimatorDefaults.class,
        description = {"Fit a monotone (isotonic or antitonic) function of one feature to a label, on GPU when usable.",
                "Prints a summary; optionally writes predictions, the model (loadable by GpuIsotonicRegressionModel.load",
                "and sparkgpu_isotonic_predict) and a PNG plot of the data and the fit."},
        footer = {"", "Example:",
                "  sparkgpu isotonic --input examples/scores.csv --feature score \\",
                "      --label clicked \\",
                "      --output calibrated.parquet --model-out iso-model --plot fit.png"})
final class IsotonicCommand extends SparkCommand implements EstimatorDefaults.Source {
    /** The options that are params of {@link GpuIsotonicRegression}: their defaults and rules are the estimator's. */
    static final Map<String, String> PARAMS = Map.of("--feature-index", "featureIndex", "--increasing", "increasing",
            "--loss", "loss", "--algorithm", "algorithm", "--out-of-bounds", "outOfBounds", "--y-min", "yMin",
            "--y-max", "yMax", "--prediction-col", "predictionCol", "--backend", "backend", "--partitions",
            "numPartitions");

    enum OutputFormat { parquet, csv }

    @Option(names = "--input", required = true, paramLabel = "PATH",
            description = "Input file, directory or glob: CSV with a header row, or Parquet.")
    String input;

    @Option(names = "--format", paramLabel = "FMT", defaultValue = "auto",
            description = "Input format: csv, parquet or auto (from the file extension). Default: ${DEFAULT-VALUE}.")
    InputData.Format format;

    @Option(names = "--feature", required = true, paramLabel = "COL",
            description = "Feature column: numeric, or a vector column with --feature-index.")
    String feature;

    @Option(names = "--feature-index", paramLabel = "I",
            description = "Element of a vector feature column. Default: ${DEFAULT-VALUE}.")
    int featureIndex;

    @Option(names = "--label", required = true, paramLabel = "COL", description = "Numeric label column.")
    String label;

    @Option(names = "--weight", paramLabel = "COL", description = "Numeric column of non-negative weights (0: row dropped).")
    String weight;

    @Option(names = "--increasing", paramLabel = "DIR",
            description = "true (isotonic), false (antitonic) or auto (sign of Spearman's rho). Default: true.")
    String increasing;

    @Option(names = "--loss", paramLabel = "LOSS",
            description = "l2 (least squares, block means) or l1 (absolute deviations, block medians). Default: ${DEFAULT-VALUE}.")
    String loss;

    @Option(names = "--algorithm", paramLabel = "ALG",
            description = "pava (PAVA-merge) or mls (minimum lower sets, O(n^2) per partition). Default: ${DEFAULT-VALUE}.")
    String algorithm;

    @Option(names = "--out-of-bounds", paramLabel = "MODE",
            description = "Predictions outside the training range: clip, nan or error. Default: ${DEFAULT-VALUE}.")
    String outOfBounds;

    @Option(names = "--y-min", paramLabel = "Y", description = "Lower bound of the fitted values.")
    Double yMin;

    @Option(names = "--y-max", paramLabel = "Y", description = "Upper bound of the fitted values.")
    Double yMax;

    @Option(names = "--partitions", paramLabel = "P", defaultValue = "0",
            description = "Feature ranges solved in parallel (0: with a GPU backend one when one executor has every GPU and the "
                    + "rows fit one device, else one per GPU; without, as the input; "
                    + "inputs up to spark.sparkgpu.isotonic.localRows rows are solved on the driver). The model does "
                    + "not depend on it. Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Option(names = "--output", paramLabel = "PATH", description = "Write the input columns plus the prediction here.")
    String output;

    @Option(names = "--output-format", paramLabel = "FMT", defaultValue = "parquet",
            description = "Format of --output: parquet or csv. Default: ${DEFAULT-VALUE}.")
    OutputFormat outputFormat;

    @Option(names = "--prediction-col", paramLabel = "COL",
            description = "Name of the prediction column in --output. Default: ${DEFAULT-VALUE}.")
    String predictionCol;

    @Option(names = "--model-out", paramLabel = "DIR",
            description = "Write the model (GpuIsotonicRegressionModel) to DIR, plus DIR/summary.json.")
    String modelOut;

    @Option(names = "--overwrite", description = "Replace --output, --model-out and --plot if they exist (only "
            + "once the new one is complete).")
    boolean overwrite;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Write a PNG plot of (sampled) data and the fit.")
    Path plot;

    @Option(names = "--plot-points", paramLabel = "N", defaultValue = "20000",
            description = "At most this many (sampled) points in --plot. Default: ${DEFAULT-VALUE}.")
    int plotPoints;

    /**
     * The estimator the options describe. Each value goes through the estimator's param, whose rule is
     * {@link IsotonicConfig}'s, and the settings together through {@link IsotonicConfig#validate()}, before Spark
     * starts; refusals are usage errors naming the option.
     */
    GpuIsotonicRegression estimator() {
        GpuIsotonicRegression est = new GpuIsotonicRegression();
        option("--loss", () -> est.setLoss(loss));
        option("--algorithm", () -> est.setAlgorithm(algorithm));
        if (increasing != null) {
            option("--increasing", () -> est.setIncreasing(increasing));
        }
        option("--out-of-bounds", () -> est.setOutOfBounds(outOfBounds));
        option("--feature-index", () -> est.setFeatureIndex(featureIndex));
        option("--partitions", () -> est.setNumPartitions(partitions));
        if (yMin != null) {
            option("--y-min", () -> est.setYMin(yMin));
        }
        if (yMax != null) {
            option("--y-max", () -> est.setYMax(yMax));
        }
        backendOption(est);
        if (plotPoints < 1) {
            throw usage("Invalid value for option '--plot-points': must be >= 1, got " + plotPoints);
        }
        checkPng(plot);
        settings(invert(PARAMS), () -> est.toConfig().validate());
        return est;
    }

    private GpuIsotonicRegression defaults;

    @Override
    public GpuIsotonicRegression defaults() {
        if (defaults == null) {
            defaults = new GpuIsotonicRegression();
        }
        return defaults;
    }

    @Override
    public Map<String, String> paramOfOption() {
        return PARAMS;
    }

    @Override
    public Integer call() throws Exception {
        GpuIsotonicRegression est = estimator();
        long t0 = System.nanoTime();
        PrintWriter out = out();
        try (SparkSession spark = startSpark("spark-gpu isotonic")) {
            Dataset<Row> raw = InputData.read(spark, input, format, commandLine());
            String f = InputData.field(raw.schema(), feature.trim(), "--feature", commandLine()).name();
            String l = InputData.field(raw.schema(), label.trim(), "--label", commandLine()).name();
            String w = weight == null ? null : InputData.field(raw.schema(), weight.trim(), "--weight", commandLine()).name();
            for (String c : raw.schema().fieldNames()) {
                if (output != null && c.equalsIgnoreCase(predictionCol)) {
                    throw usage("--prediction-col: the input already has a column '" + c
                            + "'; choose another name with --prediction-col");
                }
            }
            SafeOutput outputTarget = checkTarget(spark, output, "--output", input, overwrite);
            SafeOutput modelTarget = checkTarget(spark, modelOut, "--model-out", input, overwrite);
            SafeOutput plotTarget = checkFile(spark, plot, "--plot", overwrite, input);
            // without --output the prediction column is never written: any free name passes the estimator's check
            est.setFeaturesCol(f).setLabelCol(l).setWeightCol(w)
                    .setPredictionCol(output != null ? predictionCol : InputData.freshName(raw.schema(), predictionCol));
            out.printf(Locale.ROOT, "isotonic: input %s, feature %s, label %s%s, loss %s, algorithm %s, increasing %s, "
                            + "backend %s, master %s%n", input, f, l, w == null ? "" : ", weight " + w,
                    IsotonicConfig.parseLoss(est.getLoss()), IsotonicConfig.parseAlgorithm(est.getAlgorithm()),
                    est.getIncreasing(), est.getBackend(), spark.sparkContext().master());
            out.flush();
            boolean reuse = output != null || plot != null;
            Dataset<Row> data = reuse ? raw.persist(StorageLevel.MEMORY_AND_DISK()) : raw;
            try {
                long tFit = System.nanoTime();
                GpuIsotonicRegressionModel model = est.fit(data);
                IsotonicResult r = model.trainingInfo();
                double fitSeconds = secondsSince(tFit);
                if (output != null) {
                    Dataset<Row> pred = model.transform(data);
                    outputTarget.writeDataset(outputFormat == OutputFormat.csv ? KMeansCommand.flattenForCsv(pred)
                            : pred, outputFormat.name());
                    out.println("  predictions   " + output + " (" + outputFormat + ")");
                }
                if (modelOut != null) {
                    writeModel(modelTarget, model, r, est, f, l, w);
                    out.println("  model         " + modelOut);
                }
                if (plot != null) {
                    int shown = writePlot(plotTarget, data, f, l, r);
                    out.println("  plot          " + plot + " (" + shown + " points)");
                }
                out.println("isotonic finished");
                out.printf(Locale.ROOT, "  rows          %d (%d of weight 0 dropped)%n", r.numRows + r.zeroWeightRows,
                        r.zeroWeightRows);
                out.printf(Locale.ROOT, "  blocks        %d, boundaries %d, direction %s%n", r.numBlocks,
                        r.boundaries.length, r.isotonic ? "increasing" : "decreasing");
                out.printf(Locale.ROOT, "  range         x in [%s, %s], fit in [%s, %s]%n", r.boundaries[0],
                        r.boundaries[r.boundaries.length - 1], min(r.predictions), max(r.predictions));
                out.printf(Locale.ROOT, "  backend       %s%n", r.backend);
                out.printf(Locale.ROOT, "  time          fit %.3f s, total %.3f s%n", fitSeconds, secondsSince(t0));
            } finally {
                if (reuse) {
                    data.unpersist(false);
                }
            }
        }
        return SparkGpuCli.EXIT_OK;
    }

    private static double min(double[] a) {
        double m = Double.POSITIVE_INFINITY;
        for (double v : a) {
            m = Math.min(m, v);
        }
        return m;
    }

    private static double max(double[] a) {
        double m = Double.NEGATIVE_INFINITY;
        for (double v : a) {
            m = Math.max(m, v);
        }
        return m;
    }

    private void writeModel(SafeOutput target, GpuIsotonicRegressionModel model, IsotonicResult r,
                            GpuIsotonicRegression est, String f, String l, String w) throws Exception {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("algorithm", "isotonic regression");
        s.put("input", input);
        s.put("feature", f);
        s.put("featureIndex", featureIndex);
        s.put("label", l);
        s.put("weight", w);
        s.put("loss", IsotonicConfig.parseLoss(est.getLoss()).name().toLowerCase(Locale.ROOT));
        s.put("solver", IsotonicConfig.parseAlgorithm(est.getAlgorithm()).name().toLowerCase(Locale.ROOT));
        s.put("increasing", est.getIncreasing());
        s.put("isotonic", r.isotonic);
        s.put("yMin", yMin);
        s.put("yMax", yMax);
        s.put("outOfBounds", model.getOutOfBounds());
        s.put("rows", r.numRows);
        s.put("zeroWeightRowsDropped", r.zeroWeightRows);
        s.put("blocks", r.numBlocks);
        s.put("backend", r.backend);
        s.put("boundaries", r.boundaries);
        s.put("predictions", r.predictions);
        ModelOutput.write(target, model, s);
    }

    /** Scatter of a sample of (feature, label) and the fitted step/interpolated line; returns the points shown. */
    /** Seed of the plot's sample of points (isotonic regression itself has no random part, hence no seed param). */
    private static final long PLOT_SEED = 42;

    private int writePlot(SafeOutput target, Dataset<Row> data, String f, String l, IsotonicResult r) throws Exception {
        long n = r.numRows + r.zeroWeightRows;
        double frac = Math.min(1.0, 1.2 * plotPoints / Math.max(1.0, n));
        Dataset<Row> s = frac < 1 ? data.sample(false, frac, PLOT_SEED) : data;
        List<Row> rows = s.select(f, l).limit(plotPoints).collectAsList();
        double[] xs = new double[rows.size()];
        double[] ys = new double[rows.size()];
        int k = 0;
        boolean vector = data.schema().apply(f).dataType().equals(SQLDataTypes.VectorType());
        for (Row row : rows) {
            if (row.isNullAt(0) || row.isNullAt(1)) {
                continue;
            }
            xs[k] = vector ? ((Vector) row.get(0)).apply(featureIndex) : ((Number) row.get(0)).doubleValue();
            ys[k++] = ((Number) row.get(1)).doubleValue();
        }
        XYChart chart = Plots.fitChart(String.format(Locale.ROOT, "isotonic regression (%s, %d blocks)",
                new org.apache.hadoop.fs.Path(input).getName(), r.numBlocks), f, l,
                "data (" + k + " of " + n + ")", java.util.Arrays.copyOf(xs, k), java.util.Arrays.copyOf(ys, k));
        Plots.addFit(chart, "fit", r.boundaries, r.predictions, Plots.FIT_COLOR);
        target.writePng(chart);
        return k;
    }
}
