package io.sparkgpu.jobs;

import io.sparkgpu.pde.FhnConfig;
import io.sparkgpu.pde.FhnParams;
import io.sparkgpu.pde.FhnResult;
import io.sparkgpu.pde.FhnStep;
import io.sparkgpu.pde.GpuFitzHughNagumo;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.storage.StorageLevel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sparkgpu fhn}: the FitzHugh-Nagumo reaction-diffusion system on a 1-D axon. Without {@code --input} one
 * simulation of the parameters given as options (no Spark needed), its summary printed and optionally a PNG of its
 * space-time field; with {@code --input} a sweep, one simulation per row of a CSV/Parquet of parameter sets through
 * {@link GpuFitzHughNagumo}, the rows plus their results written to {@code --output}.
 */
@Command(name = "fhn", mixinStandardHelpOptions = true, sortOptions = false,
        defaultValueProvider = EstimatorDefaults.class,
        description = {"Simulate the FitzHugh-Nagumo system v_t = D v_xx + v (a - v) (v - 1) - w + I p(x) s(t),",
                "w_t = eps (v - gamma w) on a 1-D axon, on GPU when usable (same bits as the CPU twin).",
                "Single run: the options give a, eps, gamma, I and D; prints the observables; --plot draws v over",
                "space and time and the final v and w profiles. Sweep: --input holds one parameter set per row",
                "(columns a, eps, gamma, I, D; a missing column takes the option's value); --output gets the rows",
                "plus waveSpeed, pulseCount, maxV, propagated, finalTime and solver statistics."},
        footer = {"", "Examples:",
                "  sparkgpu fhn --initial gaussian --stimulus none --plot pulses.png",
                "  sparkgpu fhn --input examples/params.csv --output results.parquet \\",
                "      --scheme crank-nicolson"})
final class FhnCommand extends SparkCommand implements EstimatorDefaults.Source {
    /** The options that are params of {@link GpuFitzHughNagumo}: their defaults and rules are the transformer's. */
    static final Map<String, String> PARAMS = params();

    private static Map<String, String> params() {
        Map<String, String> m = new LinkedHashMap<>();
        String[][] pairs = {{"--a", "aValue"}, {"--eps", "epsValue"}, {"--gamma", "gammaValue"},
            {"--current", "IValue"}, {"--diffusion", "DValue"}, {"--scheme", "scheme"}, {"--solver", "solver"},
            {"--boundary", "boundary"}, {"--initial", "initial"}, {"--pulse-amplitude", "pulseAmplitude"},
            {"--pulse-center", "pulseCenter"}, {"--pulse-width", "pulseWidth"}, {"--stimulus", "stimulus"},
            {"--stimulus-width", "stimulusWidth"}, {"--series-interval", "seriesInterval"}, {"--cells", "cells"},
            {"--length", "length"}, {"--dt", "dt"}, {"--t-end", "tEnd"}, {"--newton-tol", "newtonTol"},
            {"--max-newton", "maxNewton"}, {"--threshold", "threshold"}, {"--probe-near", "probeNear"},
            {"--probe-far", "probeFar"}, {"--backend", "backend"}};
        for (String[] p : pairs) {
            m.put(p[0], p[1]);
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    enum OutputFormat { parquet, csv }

    @Option(names = "--a", paramLabel = "A", description = "Excitation threshold a. Default: ${DEFAULT-VALUE}.")
    double a;

    @Option(names = "--eps", paramLabel = "EPS", description = "Recovery rate eps. Default: ${DEFAULT-VALUE}.")
    double eps;

    @Option(names = "--gamma", paramLabel = "G", description = "Recovery coupling gamma. Default: ${DEFAULT-VALUE}.")
    double gamma;

    @Option(names = "--current", paramLabel = "I", description = "Stimulus amplitude I. Default: ${DEFAULT-VALUE}.")
    double current;

    @Option(names = "--diffusion", paramLabel = "D", description = "Diffusion coefficient D. Default: ${DEFAULT-VALUE}.")
    double diffusion;

    @Option(names = "--scheme", paramLabel = "S",
            description = "explicit, crank-nicolson or adaptive (CPU only). Default: ${DEFAULT-VALUE}.")
    String scheme;

    @Option(names = "--solver", paramLabel = "S",
            description = "Tridiagonal solver of crank-nicolson: thomas or cr. Default: ${DEFAULT-VALUE}.")
    String solver;

    @Option(names = "--boundary", paramLabel = "B",
            description = "dirichlet, neumann (no flux) or periodic. Default: ${DEFAULT-VALUE}.")
    String boundary;

    @Option(names = "--initial", paramLabel = "V0", description = "Initial v: rest or gaussian. Default: ${DEFAULT-VALUE}.")
    String initial;

    @Option(names = "--pulse-amplitude", paramLabel = "V", description = "Height of the gaussian impulse. "
            + "Default: ${DEFAULT-VALUE}.")
    double pulseAmplitude;

    @Option(names = "--pulse-center", paramLabel = "F", description = "Centre of the impulse, a fraction of --length. "
            + "Default: ${DEFAULT-VALUE}.")
    double pulseCenter;

    @Option(names = "--pulse-width", paramLabel = "W", description = "Width of the impulse. Default: ${DEFAULT-VALUE}.")
    double pulseWidth;

    @Option(names = "--stimulus", paramLabel = "S",
            description = "Current at the left end: none, constant or series. Default: ${DEFAULT-VALUE}.")
    String stimulus;

    @Option(names = "--stimulus-width", paramLabel = "W",
            description = "Width of the stimulus profile exp(-(x/W)^2). Default: ${DEFAULT-VALUE}.")
    double stimulusWidth;

    @Option(names = "--series", paramLabel = "S1,S2,...", split = ",",
            description = "The signal s(t) of --stimulus series, one value every --series-interval. Default: 1.")
    double[] series;

    @Option(names = "--series-interval", paramLabel = "T", description = "Time between --series values. "
            + "Default: ${DEFAULT-VALUE}.")
    double seriesInterval;

    @Option(names = "--cells", paramLabel = "N", description = "Grid nodes. Default: ${DEFAULT-VALUE}.")
    int cells;

    @Option(names = "--length", paramLabel = "L", description = "Length of the axon. Default: ${DEFAULT-VALUE}.")
    double length;

    @Option(names = "--dt", paramLabel = "DT", description = "Time step. Default: ${DEFAULT-VALUE}.")
    double dt;

    @Option(names = "--t-end", paramLabel = "T", description = "Final time. Default: ${DEFAULT-VALUE}.")
    double tEnd;

    @Option(names = "--newton-tol", paramLabel = "TOL", description = "Newton tolerance of crank-nicolson. "
            + "Default: ${DEFAULT-VALUE}.")
    double newtonTol;

    @Option(names = "--max-newton", paramLabel = "K", description = "Newton iterations per step at most. "
            + "Default: ${DEFAULT-VALUE}.")
    int maxNewton;

    @Option(names = "--threshold", paramLabel = "V", description = "v counted as fired at the probes. "
            + "Default: ${DEFAULT-VALUE}.")
    double threshold;

    @Option(names = "--probe-near", paramLabel = "F", description = "First probe, a fraction of --length. "
            + "Default: ${DEFAULT-VALUE}.")
    double probeNear;

    @Option(names = "--probe-far", paramLabel = "F", description = "Second probe, a fraction of --length. "
            + "Default: ${DEFAULT-VALUE}.")
    double probeFar;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Single run: write a PNG of v over space and "
            + "time (heat map) and the final v and w profiles.")
    Path plot;

    @Option(names = "--input", paramLabel = "PATH",
            description = "Sweep: parameter sets, one per row (CSV with a header row, or Parquet).")
    String input;

    @Option(names = "--format", paramLabel = "FMT", defaultValue = "auto",
            description = "Format of --input: csv, parquet or auto (from the file extension). Default: ${DEFAULT-VALUE}.")
    InputData.Format format;

    @Option(names = "--output", paramLabel = "PATH", description = "Sweep: write the rows plus their results here.")
    String output;

    @Option(names = "--output-format", paramLabel = "FMT", defaultValue = "parquet",
            description = "Format of --output: parquet or csv. Default: ${DEFAULT-VALUE}.")
    OutputFormat outputFormat;

    @Option(names = "--partitions", paramLabel = "P", defaultValue = "0",
            description = "Sweep: repartition the rows into P tasks (0: as read). The results do not depend on it. "
                    + "Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Option(names = "--overwrite", description = "Replace --output and --plot if they exist (only once the new one "
            + "is complete).")
    boolean overwrite;

    /**
     * The transformer the options describe: each value through its param (the rule of {@link FhnConfig} or
     * {@link FhnParams}), then the settings together through {@link FhnConfig#validate()}, before any work; refusals
     * are usage errors naming the option.
     */
    GpuFitzHughNagumo transformer() {
        GpuFitzHughNagumo t = new GpuFitzHughNagumo();
        option("--a", () -> t.set(t.aValue(), a));
        option("--eps", () -> t.set(t.epsValue(), eps));
        option("--gamma", () -> t.set(t.gammaValue(), gamma));
        option("--current", () -> t.set(t.currentValue(), current));
        option("--diffusion", () -> t.set(t.diffusionValue(), diffusion));
        option("--scheme", () -> t.setScheme(scheme));
        option("--solver", () -> t.setSolver(solver));
        option("--boundary", () -> t.setBoundary(boundary));
        option("--initial", () -> t.setInitial(initial));
        option("--pulse-amplitude", () -> t.setPulseAmplitude(pulseAmplitude));
        option("--pulse-center", () -> t.setPulseCenter(pulseCenter));
        option("--pulse-width", () -> t.setPulseWidth(pulseWidth));
        option("--stimulus", () -> t.setStimulus(stimulus));
        option("--stimulus-width", () -> t.setStimulusWidth(stimulusWidth));
        if (series != null) {
            option("--series", () -> t.setSeries(series));
        }
        option("--series-interval", () -> t.setSeriesInterval(seriesInterval));
        option("--cells", () -> t.setCells(cells));
        option("--length", () -> t.setLength(length));
        option("--dt", () -> t.setDt(dt));
        option("--t-end", () -> t.setTEnd(tEnd));
        option("--newton-tol", () -> t.setNewtonTol(newtonTol));
        option("--max-newton", () -> t.setMaxNewton(maxNewton));
        option("--threshold", () -> t.setThreshold(threshold));
        option("--probe-near", () -> t.setProbeNear(probeNear));
        option("--probe-far", () -> t.setProbeFar(probeFar));
        backendOption(t);
        if (input == null && (output != null || partitions != 0)) {
            throw usage((output != null ? "--output" : "--partitions") + " is for a sweep: give the parameter sets "
                    + "with --input (a single run prints its result; --plot draws it)");
        }
        if (input != null && plot != null) {
            throw usage("--plot draws a single run: leave out --input (a sweep writes its rows with --output)");
        }
        if (input != null && output == null) {
            throw usage("--input (a sweep) needs --output for its result rows");
        }
        if (partitions < 0) {
            throw usage("Invalid value for option '--partitions': must be >= 0, got " + partitions);
        }
        checkPng(plot);
        settings(invert(PARAMS), () -> t.toConfig().validate());
        return t;
    }

    private GpuFitzHughNagumo defaults;

    @Override
    public GpuFitzHughNagumo defaults() {
        if (defaults == null) {
            defaults = new GpuFitzHughNagumo();
        }
        return defaults;
    }

    @Override
    public Map<String, String> paramOfOption() {
        return PARAMS;
    }

    @Override
    public Integer call() throws Exception {
        GpuFitzHughNagumo t = transformer();
        return input == null ? single(t) : sweep(t);
    }

    private Integer single(GpuFitzHughNagumo t) throws Exception {
        long t0 = System.nanoTime();
        PrintWriter out = out();
        SafeOutput plotTarget = checkFile(null, plot, "--plot", overwrite);
        FhnConfig c = t.toConfig();
        if (plot != null) {
            c.recordEvery = FhnReport.recordEveryFor(FhnConfig.steps(c.tEnd, c.dt));
        }
        FhnParams p = new FhnParams(a, eps, gamma, current, diffusion);
        out.printf(Locale.ROOT, "fhn: %s, scheme %s%s, boundary %s, cells %d, length %s, dt %s, tEnd %s, initial %s, "
                        + "stimulus %s%n", p, c.scheme, FhnConfig.CRANK_NICOLSON.equals(c.scheme) ? " (" + c.solver
                        + ")" : "", c.boundary, c.cells, c.length, c.dt, c.tEnd, c.initial, c.stimulus);
        out.flush();
        var ran = FhnStep.run(c, new FhnParams[] {p}, 1);
        FhnResult r = ran.value[0];
        out.println("fhn finished");
        out.printf(Locale.ROOT, "  waveSpeed       %s%n", r.waveSpeed);
        out.printf(Locale.ROOT, "  pulseCount      %d%n", r.pulseCount);
        out.printf(Locale.ROOT, "  maxV            %s%n", r.maxV);
        out.printf(Locale.ROOT, "  propagated      %s%n", r.propagated);
        out.printf(Locale.ROOT, "  finalTime       %s%n", r.finalTime);
        out.printf(Locale.ROOT, "  steps           %d (Newton iterations %d, unconverged steps %d, mean nodes %s)%n",
                r.steps, r.newtonIterations, r.unconvergedSteps, r.meanNodes);
        out.printf(Locale.ROOT, "  backend         %s%n", ran.backend());
        if (plot != null) {
            FhnReport.write(plotTarget, c, r, String.format(Locale.ROOT, "FitzHugh-Nagumo, %s (%s, %s)", p, c.scheme,
                    c.boundary));
            out.println("  plot            " + plot + " (" + r.frames + " frames)");
        }
        out.printf(Locale.ROOT, "  time            %.3f s%n", secondsSince(t0));
        return SparkGpuCli.EXIT_OK;
    }

    private Integer sweep(GpuFitzHughNagumo t) throws Exception {
        long t0 = System.nanoTime();
        PrintWriter out = out();
        try (SparkSession spark = startSpark("spark-gpu fhn")) {
            Dataset<Row> raw = InputData.read(spark, input, format, commandLine());
            SafeOutput outputTarget = checkTarget(spark, output, "--output", input, overwrite);
            for (String col : GpuFitzHughNagumo.OUTPUTS) {
                for (String c : raw.schema().fieldNames()) {
                    if (c.equalsIgnoreCase(col)) {
                        throw usage("--input: a column '" + c + "' clashes with the result column '" + col
                                + "'; rename it");
                    }
                }
            }
            Dataset<Row> in = partitions > 0 ? raw.repartition(partitions) : raw;
            FhnConfig c = t.toConfig();
            out.printf(Locale.ROOT, "fhn sweep: input %s, scheme %s, boundary %s, cells %d, length %s, dt %s, tEnd %s, "
                    + "master %s%n", input, c.scheme, c.boundary, c.cells, c.length, c.dt, c.tEnd,
                    spark.sparkContext().master());
            out.flush();
            Dataset<Row> res = t.transform(in).persist(StorageLevel.MEMORY_AND_DISK());
            try {
                outputTarget.writeDataset(res, outputFormat.name());
                Row s = res.agg(functions.count(functions.lit(1)),
                        functions.sum(functions.when(functions.col("propagated"), 1).otherwise(0)),
                        functions.max("maxV"), functions.first("backend")).first();
                out.println("fhn sweep finished");
                out.printf(Locale.ROOT, "  rows            %d (%d propagated)%n", s.getLong(0),
                        s.isNullAt(1) ? 0L : s.getLong(1));
                out.printf(Locale.ROOT, "  max v           %s%n", s.isNullAt(2) ? "-" : s.get(2));
                out.printf(Locale.ROOT, "  backend         %s%n", s.isNullAt(3) ? "-" : s.getString(3));
                out.println("  results         " + output + " (" + outputFormat + ")");
                out.printf(Locale.ROOT, "  time            %.3f s%n", secondsSince(t0));
            } finally {
                res.unpersist(false);
            }
        }
        return SparkGpuCli.EXIT_OK;
    }
}
