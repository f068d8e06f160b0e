package io.sparkgpu.jobs;

import io.sparkgpu.spline.GpuMonotoneSpline;
import io.sparkgpu.spline.GpuMonotoneSplineModel;
import io.sparkgpu.spline.Spline;
import io.sparkgpu.spline.SplineEngine;
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

/** {@code sparkgpu spline}: fits a monotone spline to (x, y) of a CSV or Parquet input; model, values, plot. */
@Command(name = "spline", mixinStandardHelpOptions = true, sortOptions = false,
        defaultValueProvider = EstimatorDefaults.class,
        description = {"Fit a C1 monotone spline (Schumaker quadratic or Gregory-Delbourgo rational) through (x, y),",
                "on GPU when usable. Prints a summary; optionally writes the values (and derivatives) at x, the model",
                "(loadable by GpuMonotoneSplineModel.load and sparkgpu_spline_eval) and a PNG plot of the data, the",
                "spline and its derivative."},
        footer = {"", "Example:",
                "  sparkgpu spline --input examples/dose.csv --x dose --y response \\",
                "      --smoothing isotonic --output fitted.csv --output-format csv \\",
                "      --model-out spline-model --plot spline.png"})
final class SplineCommand extends SparkCommand implements EstimatorDefaults.Source {
    /** The options that are params of {@link GpuMonotoneSpline}: their defaults and rules are the estimator's. */
    static final Map<String, String> PARAMS = Map.of("--kind", "kind", "--smoothing", "smoothing", "--extrapolate",
            "extrapolate", "--prediction-col", "predictionCol", "--derivative-col", "derivativeCol", "--backend",
            "backend");

    @Mixin
    SplineCliOptions io;

    @Option(names = "--x", required = true, paramLabel = "COL", description = "Numeric column of the abscissae.")
    String x;

    @Option(names = "--y", required = true, paramLabel = "COL", description = "Numeric column of the values.")
    String y;

    @Option(names = "--slope", paramLabel = "COL", description = "Numeric column of derivatives (--kind rational).")
    String slope;

    @Option(names = "--weight", paramLabel = "COL", description = "Numeric column of positive weights.")
    String weight;

    @Option(names = "--kind", paramLabel = "KIND", description = "schumaker or rational. Default: ${DEFAULT-VALUE}.")
    String kind;

    @Option(names = "--smoothing", paramLabel = "S",
            description = "none (y must be monotone) or isotonic. Default: ${DEFAULT-VALUE}.")
    String smoothing;

    @Option(names = "--extrapolate", paramLabel = "MODE",
            description = "Outside the knots: clip, linear, nan or error. Default: ${DEFAULT-VALUE}.")
    String extrapolate;

    @Option(names = "--prediction-col", paramLabel = "COL",
            description = "Name of the value column in --output. Default: ${DEFAULT-VALUE}.")
    String predictionCol;

    @Option(names = "--derivative-col", paramLabel = "COL", description = "Also write the derivative, as COL.")
    String derivativeCol;

    /** The estimator the options describe; refusals are usage errors naming the option, before Spark starts. */
    GpuMonotoneSpline estimator() {
        GpuMonotoneSpline est = new GpuMonotoneSpline();
        option("--kind", () -> est.setKind(kind));
        option("--smoothing", () -> est.setSmoothing(smoothing));
        option("--extrapolate", () -> est.setExtrapolate(extrapolate));
        backendOption(est);
        SplinePlots.checkPlot(this, io.plot, io.plotPoints);
        settings(invert(PARAMS), () -> est.toConfig().validate());
        return est;
    }

    private GpuMonotoneSpline defaults;

    @Override
    public GpuMonotoneSpline defaults() {
        if (defaults == null) {
            defaults = new GpuMonotoneSpline();
        }
        return defaults;
    }

    @Override
    public Map<String, String> paramOfOption() {
        return PARAMS;
    }

    private String column(Dataset<Row> raw, String name, String option) {
        return name == null ? null : InputData.field(raw.schema(), name.trim(), option, commandLine()).name();
    }

    @Override
    public Integer call() throws Exception {
        GpuMonotoneSpline est = estimator();
        long t0 = System.nanoTime();
        PrintWriter out = out();
        try (SparkSession spark = startSpark("spark-gpu spline")) {
            Dataset<Row> raw = InputData.read(spark, io.input, io.format, commandLine());
            String xc = column(raw, x, "--x");
            String yc = column(raw, y, "--y");
            String sc = column(raw, slope, "--slope");
            String wc = column(raw, weight, "--weight");
            SafeOutput outputTarget = checkTarget(spark, io.output, "--output", io.input, io.overwrite);
            SafeOutput modelTarget = checkTarget(spark, io.modelOut, "--model-out", io.input, io.overwrite);
            SafeOutput plotTarget = checkFile(spark, io.plot, "--plot", io.overwrite, io.input);
            option("--prediction-col", () -> est.setPredictionCol(io.output != null ? predictionCol
                    : InputData.freshName(raw.schema(), predictionCol)));
            if (derivativeCol != null) {
                option("--derivative-col", () -> est.setDerivativeCol(derivativeCol));
            }
            est.setXCol(xc).setYCol(yc).setSlopeCol(sc).setWeightCol(wc);
            est.transformSchema(raw.schema());
            out.printf(Locale.ROOT, "spline: input %s, x %s, y %s%s%s, kind %s, smoothing %s, backend %s, master %s%n",
                    io.input, xc, yc, sc == null ? "" : ", slope " + sc, wc == null ? "" : ", weight " + wc, est.getKind(),
                    est.getSmoothing(), est.getBackend(), spark.sparkContext().master());
            out.flush();
            boolean reuse = io.output != null || io.plot != null;
            Dataset<Row> data = reuse ? raw.persist(StorageLevel.MEMORY_AND_DISK()) : raw;
            try {
                long tFit = System.nanoTime();
                GpuMonotoneSplineModel model = est.fit(data);
                double fitSeconds = secondsSince(tFit);
                SplineEngine.Fit f = model.fitInfo();
                Spline s = model.spline();
                if (io.output != null) {
                    outputTarget.writeDataset(model.transform(data), io.outputFormat.name());
                    out.println("  values        " + io.output + " (" + io.outputFormat + ")");
                }
                if (io.modelOut != null) {
                    Map<String, Object> sum = new LinkedHashMap<>();
                    sum.put("algorithm", "monotone spline");
                    sum.put("input", io.input);
                    sum.put("x", xc);
                    sum.put("y", yc);
                    sum.put("slope", sc);
                    sum.put("weight", wc);
                    sum.put("kind", s.kind.id());
                    sum.put("smoothing", est.getSmoothing());
                    sum.put("extrapolate", est.getExtrapolate());
                    sum.put("rows", f.points.rows);
                    sum.put("duplicatesMerged", f.points.duplicatesMerged());
                    sum.put("knots", s.size());
                    sum.put("backend", f.backend);
                    ModelOutput.write(modelTarget, model, sum);
                    out.println("  model         " + io.modelOut);
                }
                if (io.plot != null) {
                    double[][] pts = SplinePlots.sample(data, xc, yc, f.points.rows, io.plotPoints);
                    plotTarget.writePng(SplinePlots.chart(String.format(Locale.ROOT, "monotone spline (%s, %s)",
                            SplinePlots.name(io.input), s.kind.id()), xc, yc, "data (" + pts[0].length + " of "
                            + f.points.rows + ")", pts, "spline", SplinePlots.grid(s.xMin(), s.xMax()),
                            g -> new double[][] {model.predict(g), model.derivative(g)}, "derivative"));
                    out.println("  plot          " + io.plot + " (" + pts[0].length + " points)");
                }
                out.println("spline finished");
                out.printf(Locale.ROOT, "  rows          %d (%d duplicate x merged)%n", f.points.rows,
                        f.points.duplicatesMerged());
                out.printf(Locale.ROOT, "  knots         %d, %s%n", s.size(), s);
                out.printf(Locale.ROOT, "  backend       %s%s%n", f.backend, f.smoothingBackend == null ? ""
                        : " (isotonic smoothing: " + f.smoothingBackend + ")");
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
