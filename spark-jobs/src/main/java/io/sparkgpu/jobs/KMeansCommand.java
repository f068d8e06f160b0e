package io.sparkgpu.jobs;

import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.kmeans.KMeansConfig;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sparkgpu kmeans}: fits a {@link GpuKMeans} to a CSV or Parquet input (the options are its params, so the
 * estimator's rules and defaults apply) and writes predictions, model and plot.
 */
@Command(name = "kmeans", mixinStandardHelpOptions = true, sortOptions = false,
        defaultValueProvider = EstimatorDefaults.class,
        description = {"Cluster the rows of a CSV or Parquet file with k-means (GPU when usable, else CPU).",
                "Prints per-iteration progress and a summary; optionally writes predictions, the model and a plot."},
        footer = {"", "Example:",
                "  sparkgpu kmeans --input examples/points.csv --features x,y -k 8 \\",
                "      --output pred.parquet --model-out model --plot clusters.png"})
final class KMeansCommand extends SparkCommand implements EstimatorDefaults.Source {
    /** The options that are params of {@link GpuKMeans}: their defaults and rules are the estimator's. */
    static final Map<String, String> PARAMS = Map.of("-k", "k", "--max-iter", "maxIter", "--tol", "tol",
            "--seed", "seed", "--init", "initMode", "--init-steps", "initSteps", "--distance", "distanceMeasure",
            "--prediction-col", "predictionCol", "--backend", "backend");

    enum Distance { euclidean, cosine }

    enum OutputFormat { parquet, csv }

    @Option(names = "--input", required = true, paramLabel = "PATH",
            description = "Input file, directory or glob: CSV with a header row, or Parquet.")
    String input;

    @Option(names = "--format", paramLabel = "FMT", defaultValue = "auto",
            description = "Input format: csv, parquet or auto (from the file extension). Default: ${DEFAULT-VALUE}.")
    InputData.Format format;

    @Option(names = "--features", required = true, paramLabel = "COLS",
            description = "Comma-separated numeric columns (assembled into one array<double>), or one vector/array column. "
                    + "An item FROM..TO is every column from FROM through TO in the input's order (e.g. p0..p63); "
                    + "PREFIX* every column whose name starts with PREFIX.")
    String features;

    @Option(names = "--weight", paramLabel = "COL", description = "Numeric column of non-negative point weights.")
    String weight;

    @Option(names = "-k", paramLabel = "K", description = "Number of clusters (>= 2). Default: ${DEFAULT-VALUE}.")
    int k;

    @Option(names = "--max-iter", paramLabel = "N",
            description = "Maximum number of Lloyd iterations (>= 0). Default: ${DEFAULT-VALUE}.")
    int maxIter;

    @Option(names = "--tol", paramLabel = "TOL",
            description = "Stop when no centre moves more than this (finite, >= 0). Default: ${DEFAULT-VALUE}.")
    double tol;

    @Option(names = "--seed", paramLabel = "SEED",
            description = "Seed of the initialisation (and of plot sampling). " + SEED_DEFAULT)
    long seed;

    @Option(names = "--init", paramLabel = "MODE",
            description = "Initialisation: random or k-means|| (quote it in a shell). Default: ${DEFAULT-VALUE}.")
    String init;

    @Option(names = "--init-steps", paramLabel = "N",
            description = "Rounds of k-means|| sampling (>= 1). Default: ${DEFAULT-VALUE}.")
    int initSteps;

    @Option(names = "--distance", paramLabel = "MEASURE", description = "euclidean or cosine. Default: ${DEFAULT-VALUE}.")
    Distance distance;

    @Option(names = "--output", paramLabel = "PATH", description = "Write the input columns plus the prediction here.")
    String output;

    @Option(names = "--output-format", paramLabel = "FMT", defaultValue = "parquet",
            description = "Format of --output: parquet or csv. Default: ${DEFAULT-VALUE}.")
    OutputFormat outputFormat;

    @Option(names = "--prediction-col", paramLabel = "COL",
            description = "Name of the cluster column in --output. Default: ${DEFAULT-VALUE}.")
    String predictionCol;

    @Option(names = "--model-out", paramLabel = "DIR",
            description = "Write the model: a GpuKMeansModel in Spark ML's layout (DIR/metadata, DIR/data, "
                    + "DIR/summary; GpuKMeansModel.load(DIR) and sparkgpu_kmeans_predict(DIR, ...) read it) plus "
                    + "DIR/summary.json, a readable record of the run.")
    String modelOut;

    @Option(names = "--overwrite", description = "Replace --output, --model-out and --plot if they exist (only "
            + "once the new one is complete).")
    boolean overwrite;

    @Option(names = "--plot", paramLabel = "FILE.png",
            description = "Write a PNG scatter plot of the first two features coloured by cluster, centres marked.")
    Path plot;

    @Option(names = "--plot-points", paramLabel = "N", defaultValue = "20000",
            description = "At most this many (sampled) points in --plot. Default: ${DEFAULT-VALUE}.")
    int plotPoints;

    /**
     * The estimator the options describe. Each value goes through the estimator's param, whose rule is
     * {@link KMeansConfig}'s, and the settings together through {@link KMeansConfig#validate()}, before Spark starts;
     * refusals are usage errors naming the option.
     */
    GpuKMeans estimator() {
        GpuKMeans est = new GpuKMeans();
        option("-k", () -> est.setK(k));
        option("--max-iter", () -> est.setMaxIter(maxIter));
        option("--tol", () -> est.setTol(tol));
        option("--seed", () -> est.setSeed(seed));
        option("--init", () -> est.setInitMode(init.trim().toLowerCase(Locale.ROOT)));
        option("--init-steps", () -> est.setInitSteps(initSteps));
        option("--distance", () -> est.setDistanceMeasure(distance.name()));
        backendOption(est);
        if (plotPoints < 1) {
            throw usage("Invalid value for option '--plot-points': must be >= 1, got " + plotPoints);
        }
        checkPng(plot);
        if (weight != null && weight.isBlank()) {
            throw usage("Invalid value for option '--weight': empty column name");
        }
        if (predictionCol.isBlank()) {
            throw usage("Invalid value for option '--prediction-col': empty column name");
        }
        settings(invert(PARAMS), () -> est.toConfig().validate());
        return est;
    }

    private GpuKMeans defaults;

    @Override
    public GpuKMeans defaults() {
        if (defaults == null) {
            defaults = new GpuKMeans();
        }
        return defaults;
    }

    @Override
    public Map<String, String> paramOfOption() {
        return PARAMS;
    }

    @Override
    public Integer call() throws Exception {
        GpuKMeans est = estimator();
        long t0 = System.nanoTime();
        PrintWriter out = out();
        try (SparkSession spark = startSpark("spark-gpu k-means")) {
            Dataset<Row> raw = InputData.read(spark, input, format, commandLine());
            InputData.Features feats = InputData.features(raw, features, "--features", commandLine());
            String weightCol = null;
            if (weight != null) {
                weightCol = InputData.field(raw.schema(), weight.trim(), "--weight", commandLine()).name();
            }
            for (String f : raw.schema().fieldNames()) {
                if (output != null && f.equalsIgnoreCase(predictionCol)) {
                    throw usage("--prediction-col: the input already has a column '" + f
                            + "'; choose another name with --prediction-col");
                }
            }
            SafeOutput outputTarget = checkTarget(spark, output, "--output", input, overwrite);
            SafeOutput modelTarget = checkTarget(spark, modelOut, "--model-out", input, overwrite);
            SafeOutput plotTarget = checkFile(spark, plot, "--plot", overwrite, input);
            // without --output the prediction column is never written: any free name passes the estimator's check
            est.setFeaturesCol(feats.column).setWeightCol(weightCol)
                    .setPredictionCol(output != null ? predictionCol : InputData.freshName(feats.df.schema(), predictionCol));

            out.printf(Locale.ROOT, "k-means: input %s, features %s, k=%d, distance %s, init %s, backend %s, master %s%n",
                    input, feats.names != null ? String.join(",", feats.names) : feats.column, est.getK(), distance,
                    est.getInitMode(), est.getBackend(), spark.sparkContext().master());
            out.flush();

            Dataset<Row> data = feats.df;
            boolean reuse = output != null || plot != null;
            if (reuse) {
                data = data.persist(StorageLevel.MEMORY_AND_DISK());
            }
            try {
                long tTrain = System.nanoTime();
                Dataset<Row> trainOn = data;
                GpuKMeansModel model = feats.fit(() -> est.fit(trainOn));
                double trainSeconds = secondsSince(tTrain);
                int d = model.numFeatures();

                if (output != null) {
                    Dataset<Row> pred = model.transform(data);
                    if (feats.assembled) {
                        pred = pred.drop(feats.column);
                    }
                    outputTarget.writeDataset(outputFormat == OutputFormat.csv ? flattenForCsv(pred) : pred,
                            outputFormat.name());
                    out.println("  predictions   " + output + " (" + outputFormat + ")");
                }
                if (modelOut != null) {
                    ModelOutput.writeKMeans(modelTarget, model, modelParams(feats, est));
                    out.println("  model         " + modelOut);
                }
                if (plot != null) {
                    if (d < 2) {
                        out.println("  plot          skipped: --plot needs at least two feature dimensions, got " + d);
                    } else {
                        KMeansReport.Sample s = KMeansReport.sample(data, model, plotPoints, est.getSeed(), 0, 1);
                        plotTarget.writePng(KMeansReport.clustersChart(String.format(Locale.ROOT, "k-means, k=%d (%s, %s distance)",
                                est.getK(), input, distance), feats.axisName(0), feats.axisName(1), s,
                                model.clusterCentersArray(), 0, 1));
                        out.println("  plot          " + plot + " (" + s.x.length + " points)");
                    }
                }
                out.println("k-means finished");
                KMeansReport.summary(out, model, trainSeconds, secondsSince(t0));
            } finally {
                if (reuse) {
                    data.unpersist(false);
                }
            }
        }
        return SparkGpuCli.EXIT_OK;
    }

    private Map<String, Object> modelParams(InputData.Features feats, GpuKMeans est) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("input", input);
        p.put("features", feats.names != null ? feats.names.toArray(new String[0]) : new String[] {feats.column});
        p.put("weight", weight);
        p.put("distance", distance.name());
        p.put("initMode", est.getInitMode());
        p.put("initSteps", est.getInitSteps());
        p.put("maxIter", est.getMaxIter());
        p.put("tol", est.getTol());
        p.put("seed", est.getSeed());
        return p;
    }

    /** CSV holds only scalars: vector, array, map and struct columns are written as JSON text. */
    static Dataset<Row> flattenForCsv(Dataset<Row> df) {
        StructType schema = df.schema();
        Column[] cols = new Column[schema.fields().length];
        for (int i = 0; i < cols.length; i++) {
            StructField f = schema.fields()[i];
            DataType t = f.dataType();
            Column c = df.col(InputData.quote(f.name()));
            if (t.equals(SQLDataTypes.VectorType())) {
                c = functions.to_json(org.apache.spark.ml.functions.vector_to_array(c, "float64"));
            } else if (t instanceof ArrayType || t instanceof MapType || t instanceof StructType) {
                c = functions.to_json(c);
            }
            cols[i] = c.as(f.name());
        }
        return df.select(cols);
    }
}
