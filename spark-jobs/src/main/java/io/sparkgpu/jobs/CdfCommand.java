package io.sparkgpu.jobs;

import io.sparkgpu.spline.GpuMonotoneCdf;
import io.sparkgpu.spline.GpuMonotoneCdfModel;
import io.sparkgpu.spline.Spline;
import io.sparkgpu.spline.SplineConfig;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code sparkgpu cdf}: a smooth monotone CDF of a numeric column; quantiles, model, CDF values, plot. */
@Command(name = "cdf", mixinStandardHelpOptions = true, sortOptions = false,
        defaultValueProvider = EstimatorDefaults.class,
        description = {"Estimate a smooth monotone CDF of a numeric column from its exact quantiles (of the whole",
                "column, or of a sample), on GPU when usable. Prints quantiles; optionally writes the CDF (and density)",
                "at each row, the model (loadable by GpuMonotoneCdfModel.load, sparkgpu_cdf and sparkgpu_quantile) and",
                "a PNG plot of the empirical CDF, the spline CDF and the density."},
        footer = {"", "Example:",
                "  sparkgpu cdf --input examples/latency.csv --column ms \\",
                "      --quantiles 0.5,0.99,0.999 \\",
                "      --model-out latency-cdf --plot latency.png"})
final class CdfCommand extends SparkCommand implements EstimatorDefaults.Source {
    /** The options that are params of {@link GpuMonotoneCdf}: their defaults and rules are the estimator's. */
    static final Map<String, String> PARAMS = Map.of("--knots", "numKnots", "--sample-size", "sampleSize",
            "--seed", "seed", "--kind", "kind", "--output-col", "outputCol", "--density-col", "densityCol",
            "--backend", "backend");

    @Mixin
    SplineCliOptions io;

    @Option(names = "--column", required = true, paramLabel = "COL", description = "Numeric column.")
    String column;

    @Option(names = "--weight", paramLabel = "COL", description = "Numeric column of positive weights.")
    String weight;

    @Option(names = "--knots", paramLabel = "K",
            description = "Probability levels k/(K-1) whose exact quantiles are the knots. Default: ${DEFAULT-VALUE}.")
    int knots;

    @Option(names = "--sample-size", paramLabel = "N",
            description = "0: the whole column (exact, no sort unless weighted); else a sample of about N rows. "
                    + "Default: ${DEFAULT-VALUE}.")
    long sampleSize;

    @Option(names = "--seed", paramLabel = "SEED", description = "Seed of the sample. " + SEED_DEFAULT)
    Long seed;

    @Option(names = "--kind", paramLabel = "KIND", description = "rational or schumaker. Default: ${DEFAULT-VALUE}.")
    String kind;

    @Option(names = "--quantiles", paramLabel = "P,...", split = ",", defaultValue = "0.01,0.1,0.25,0.5,0.75,0.9,0.99",
            description = "Levels whose quantiles are printed, each in [0, 1]. Default: ${DEFAULT-VALUE}.")
    double[] quantiles;

    @Option(names = "--output-col", paramLabel = "COL",
            description = "Name of the CDF column in --output. Default: ${DEFAULT-VALUE}.")
    String outputCol;

    @Option(names = "--density-col", paramLabel = "COL", description = "Also write the density, as COL.")
    String densityCol;

    /** The estimator the options describe; refusals are usage errors naming the option, before Spark starts. */
    GpuMonotoneCdf estimator() {
        GpuMonotoneCdf est = new GpuMonotoneCdf();
        option("--knots", () -> est.setNumKnots(knots));
        option("--sample-size", () -> est.setSampleSize(sampleSize));
        if (seed != null) {
            option("--seed", () -> est.setSeed(seed));
        }
        option("--kind", () -> est.setKind(kind));
        backendOption(est);
        for (double p : quantiles) {
            option("--quantiles", () -> SplineConfig.checkProbability(p));
        }
        SplinePlots.checkPlot(this, io.plot, io.plotPoints);
        return est;
    }

    private GpuMonotoneCdf defaults;

    @Override
    public GpuMonotoneCdf defaults() {
        if (defaults == null) {
            defaults = new GpuMonotoneCdf();
        }
        return defaults;
    }

    @Override
    public Map<String, String> paramOfOption() {
        return PARAMS;
    }

    @Override
    public Integer call() throws Exception {
        GpuMonotoneCdf est = estimator();
        long t0 = System.nanoTime();
        PrintWriter out = out();
        try (SparkSession spark = startSpark("spark-gpu cdf")) {
            Dataset<Row> raw = InputData.read(spark, io.input, io.format, commandLine());
            String c = InputData.field(raw.schema(), column.trim(), "--column", commandLine()).name();
            String w = weight == null ? null : InputData.field(raw.schema(), weight.trim(), "--weight",
                    commandLine()).name();
            SafeOutput outputTarget = checkTarget(spark, io.output, "--output", io.input, io.overwrite);
            SafeOutput modelTarget = checkTarget(spark, io.modelOut, "--model-out", io.input, io.overwrite);
            SafeOutput plotTarget = checkFile(spark, io.plot, "--plot", io.overwrite, io.input);
            option("--output-col", () -> est.setOutputCol(io.output != null ? outputCol
                    : InputData.freshName(raw.schema(), outputCol)));
            if (densityCol != null) {
                option("--density-col", () -> est.setDensityCol(densityCol));
            }
            est.setInputCol(c).setWeightCol(w);
            est.transformSchema(raw.schema());
            out.printf(Locale.ROOT, "cdf: input %s, column %s%s, knots %d, %s, kind %s, backend %s, master %s%n",
                    io.input, c, w == null ? "" : ", weight " + w, est.getNumKnots(), est.getSampleSize() == 0
                            ? "whole column" : "sample of " + est.getSampleSize(), est.getKind(), est.getBackend(),
                    spark.sparkContext().master());
            out.flush();
            boolean reuse = io.output != null || io.plot != null;
            Dataset<Row> data = reuse ? raw.persist(StorageLevel.MEMORY_AND_DISK()) : raw;
            try {
                long tFit = System.nanoTime();
                GpuMonotoneCdfModel model = est.fit(data);
                double fitSeconds = secondsSince(tFit);
                Spline s = model.spline();
                if (io.output != null) {
                    outputTarget.writeDataset(model.transform(data), io.outputFormat.name());
                    out.println("  cdf           " + io.output + " (" + io.outputFormat + ")");
                }
                if (io.modelOut != null) {
                    Map<String, Object> sum = new LinkedHashMap<>();
                    sum.put("algorithm", "monotone spline CDF");
                    sum.put("input", io.input);
                    sum.put("column", c);
                    sum.put("weight", w);
                    sum.put("numKnots", model.getNumKnots());
                    sum.put("sampleSize", est.getSampleSize());
                    sum.put("kind", s.kind.id());
                    sum.put("knots", s.size());
                    sum.put("quantiles", model.knotQuantiles());
                    ModelOutput.write(modelTarget, model, sum);
                    out.println("  model         " + io.modelOut);
                }
                if (io.plot != null) {
                    double[][] pts = SplinePlots.empirical(SplinePlots.sample(data, c, null, data.count(),
                            io.plotPoints)[0]);
                    plotTarget.writePng(SplinePlots.chart(String.format(Locale.ROOT, "smooth CDF (%s, %d knots)",
                            SplinePlots.name(io.input), s.size()), c, "CDF", "empirical CDF (" + pts[0].length
                            + " points)", pts, "spline CDF", SplinePlots.grid(s.xMin(), s.xMax()),
                            g -> new double[][] {model.cdf(g), model.density(g)}, "density"));
                    out.println("  plot          " + io.plot + " (" + pts[0].length + " points)");
                }
                out.println("cdf finished");
                out.printf(Locale.ROOT, "  range         [%s, %s], %d knots%n", SplinePlots.fmt(s.xMin()),
                        SplinePlots.fmt(s.xMax()), s.size());
                double[] q = model.quantile(quantiles);
                for (int i = 0; i < q.length; i++) {
                    out.printf(Locale.ROOT, "  quantile      %-8s %s%n", SplinePlots.fmt(quantiles[i]),
                            SplinePlots.fmt(q[i]));
                }
                out.printf(Locale.ROOT, "  time          fit %.3f s, total %.3f s%n", fitSeconds, secondsSince(t0));
            } finally {
                if (reuse) {
                    data.unpersist(false);
                }
            }
        }
        return SparkGpuCli.EXIT_OK;
    }
}
