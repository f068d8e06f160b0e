package io.sparkgpu.jobs;

import io.sparkgpu.scan.GpuScanParams;
import io.sparkgpu.scan.GpuScanStatistic;
import io.sparkgpu.scan.ScanConfig;
import io.sparkgpu.scan.ScanGridInfo;
import io.sparkgpu.scan.ScanInput;
import io.sparkgpu.scan.ScanResult;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sparkgpu scan}: the scan statistic of a gridded table, with a JSON/CSV report and a PNG heat map. */
@Command(name = "scan", mixinStandardHelpOptions = true, sortOptions = false,
        defaultValueProvider = EstimatorDefaults.class,
        description = {"Find the most anomalous intervals, rectangles or boxes of a 1-, 2- or 3-D grid by the "
                + "likelihood-ratio scan statistic (GPU when usable, else CPU), with Monte Carlo p-values.",
                "Input: one row per grid cell (integer coordinates, cases, baseline) or one row per point (real "
                        + "coordinates binned onto --grid bins, a case flag or count)."},
        footer = {"", "Examples:",
                "  sparkgpu scan --input examples/cells.csv --coords x,y \\",
                "      --cases cases --baseline pop \\",
                "      --report scan.json --csv clusters.csv --heatmap grid.png",
                "  sparkgpu scan --input examples/cases.csv --input-type points \\",
                "      --coords lon,lat --grid 32,32 \\",
                "      --cases sick --statistic bernoulli --replicas 999 --heatmap map.png"})
final class ScanCommand extends SparkCommand implements EstimatorDefaults.Source {
    /** The options that are params of {@link GpuScanStatistic} with the estimator's defaults. */
    static final Map<String, String> PARAMS = Map.ofEntries(Map.entry("--input-type", "inputType"),
            Map.entry("--cases", "casesCol"), Map.entry("--statistic", "statistic"),
            Map.entry("--direction", "direction"), Map.entry("--min-cells", "minCells"),
            Map.entry("--max-cells", "maxCells"), Map.entry("--max-fraction", "maxBaselineFraction"),
            Map.entry("--clusters", "numClusters"), Map.entry("--replicas", "numReplicas"), Map.entry("--seed", "seed"),
            Map.entry("--partitions", "numPartitions"), Map.entry("--backend", "backend"));
    /** Every option that is a param (the input's have no default here: they depend on --input-type). */
    static final Map<String, String> ALL_PARAMS = new java.util.HashMap<>(PARAMS);

    static {
        ALL_PARAMS.putAll(Map.of("--coords", "coordinateCols", "--baseline", "baselineCol", "--sum-squares",
                "sumSquaresCol", "--grid", "gridSize", "--extent", "extent"));
    }

    @Option(names = "--input", required = true, paramLabel = "PATH",
            description = "Input file, directory or glob: CSV with a header row, or Parquet.")
    String input;

    @Option(names = "--format", paramLabel = "FMT", defaultValue = "auto",
            description = "Input format: csv, parquet or auto (from the file extension). Default: ${DEFAULT-VALUE}.")
    InputData.Format format;

    @Option(names = "--input-type", paramLabel = "TYPE",
            description = "cells (one row per cell) or points (one row per individual/event). Default: ${DEFAULT-VALUE}.")
    String inputType;

    @Option(names = "--coords", required = true, paramLabel = "COLS",
            description = "1 to 3 comma-separated coordinate columns, x first.")
    String coords;

    @Option(names = "--cases", paramLabel = "COL",
            description = "Cases (cells: counts; points: 0/1 flag or count; normal: the value), finite >= 0; "
                    + "fractional counts for poisson and ebp, whole for bernoulli. Default: ${DEFAULT-VALUE}.")
    String cases;

    @Option(names = "--baseline", paramLabel = "COL",
            description = "Population or expected count (normal: observations). Default: 'baseline' for cells, "
                    + "1 per point for points.")
    String baseline;

    @Option(names = "--sum-squares", paramLabel = "COL",
            description = "Normal model, cells input: per-cell sum of squared observations.")
    String sumSquares;

    @Option(names = "--grid", paramLabel = "N[,N[,N]]",
            description = "Bins per axis (points, required); for cells: the grid size with 0-based coordinates.")
    String grid;

    @Option(names = "--extent", paramLabel = "LO,HI[,...]",
            description = "Points: lo,hi of each axis. Default: the data's range.")
    String extent;

    @Option(names = "--statistic", paramLabel = "NAME",
            description = "poisson, bernoulli, normal or ebp (expectation-based Poisson). Default: ${DEFAULT-VALUE}.")
    String statistic;

    @Option(names = "--direction", paramLabel = "DIR",
            description = "high, low or both. Default: ${DEFAULT-VALUE}.")
    String direction;

    @Option(names = "--min-cells", paramLabel = "N",
            description = "Smallest range in cells. Default: ${DEFAULT-VALUE}.")
    long minCells;

    @Option(names = "--max-cells", paramLabel = "N",
            description = "Largest range in cells (0 = no limit). Default: ${DEFAULT-VALUE}.")
    long maxCells;

    @Option(names = "--max-fraction", paramLabel = "F",
            description = "Largest share of the total baseline in a range, in (0, 1]. Default: ${DEFAULT-VALUE}.")
    double maxFraction;

    @Option(names = "--clusters", paramLabel = "K",
            description = "Clusters to report (1 most likely + non-overlapping secondary ones). Default: ${DEFAULT-VALUE}.")
    int clusters;

    @Option(names = "--replicas", paramLabel = "R",
            description = "Monte Carlo replicas for the p-values (0 = none). Default: ${DEFAULT-VALUE}.")
    int replicas;

    @Option(names = "--seed", paramLabel = "SEED", description = "Seed of the replicas. " + SEED_DEFAULT)
    long seed;

    @Option(names = "--partitions", paramLabel = "P",
            description = "Spark tasks per scan (0 = default parallelism). Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Option(names = "--report", paramLabel = "FILE.json", description = "Write a JSON report.")
    Path report;

    @Option(names = "--csv", paramLabel = "FILE.csv", description = "Write the clusters as CSV.")
    Path csv;

    @Option(names = "--heatmap", paramLabel = "FILE.png", description = "Write a PNG heat map with the clusters outlined.")
    Path heatmap;

    @Option(names = "--overwrite", description = "Replace existing output files.")
    boolean overwrite;

    private static int[] ints(String s) {
        return Arrays.stream(s.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
    }

    private static double[] doubles(String s) {
        return Arrays.stream(s.split(",")).map(String::trim).mapToDouble(Double::parseDouble).toArray();
    }

    /**
     * The estimator the options describe. Each value goes through the estimator's param, whose rule is
     * {@link ScanConfig}'s or {@link ScanInput}'s, and the settings together through {@link ScanConfig#validate()} and
     * {@link ScanInput}, before Spark starts; refusals are usage errors naming the option.
     */
    GpuScanStatistic estimator() {
        GpuScanStatistic est = new GpuScanStatistic();
        option("--input-type", () -> est.setInputType(inputType));
        String[] cols = Arrays.stream(coords.split(",", -1)).map(String::trim).toArray(String[]::new);
        option("--coords", () -> est.setCoordinateCols(cols));
        option("--cases", () -> est.setCasesCol(cases));
        boolean points = ScanGridInfo.POINTS.equalsIgnoreCase(inputType.trim());
        String base = baseline != null ? baseline : points ? null : GpuScanParams.DEFAULT_BASELINE;
        option("--baseline", () -> est.setBaselineCol(base));
        option("--sum-squares", () -> est.setSumSquaresCol(sumSquares));
        if (grid != null) {
            int[] g;
            try {
                g = ints(grid);
            } catch (NumberFormatException ex) {
                throw usage("Invalid value for option '--grid': expected comma-separated integers, got '" + grid + "'");
            }
            option("--grid", () -> est.setGridSize(g));
        }
        if (extent != null) {
            double[] e;
            try {
                e = doubles(extent);
            } catch (NumberFormatException ex) {
                throw usage("Invalid value for option '--extent': expected comma-separated numbers, got '" + extent + "'");
            }
            option("--extent", () -> est.setExtent(e));
        }
        option("--statistic", () -> est.setStatistic(statistic));
        option("--direction", () -> est.setDirection(direction));
        option("--min-cells", () -> est.setMinCells(minCells));
        option("--max-cells", () -> est.setMaxCells(maxCells));
        option("--max-fraction", () -> est.setMaxBaselineFraction(maxFraction));
        option("--clusters", () -> est.setNumClusters(clusters));
        option("--replicas", () -> est.setNumReplicas(replicas));
        option("--seed", () -> est.setSeed(seed));
        option("--partitions", () -> est.setNumPartitions(partitions));
        backendOption(est);
        for (Object[] f : new Object[][] {{report, ".json", "--report"}, {csv, ".csv", "--csv"},
                {heatmap, ".png", "--heatmap"}}) {
            Path p = (Path) f[0];
            if (p != null && !p.getFileName().toString().toLowerCase(Locale.ROOT).endsWith((String) f[1])) {
                throw usage("Invalid value for option '" + f[2] + "': the file name must end in " + f[1] + ", got " + p);
            }
        }
        settings(invert(ALL_PARAMS), () -> {
            est.toConfig().validate();
            est.toInput();
        });
        return est;
    }

    private GpuScanStatistic defaults;

    @Override
    public GpuScanStatistic defaults() {
        if (defaults == null) {
            defaults = new GpuScanStatistic();
        }
        return defaults;
    }

    @Override
    public Map<String, String> paramOfOption() {
        return PARAMS;
    }

    @Override
    public Integer call() throws Exception {
        GpuScanStatistic est = estimator();
        long t0 = System.nanoTime();
        PrintWriter out = out();
        try (SparkSession spark = startSpark("spark-gpu scan statistic")) {
            Dataset<Row> raw = InputData.read(spark, input, format, commandLine());
            SafeOutput reportTarget = checkFile(spark, report, "--report", overwrite, input);
            SafeOutput csvTarget = checkFile(spark, csv, "--csv", overwrite, input);
            SafeOutput heatmapTarget = checkFile(spark, heatmap, "--heatmap", overwrite, input);
            est.toInput().checkSchema(raw.schema(), ScanConfig.checkStatistic(est.getStatistic()));
            // the CLI does not transform: any free name passes the estimator's check of its output column
            est.setClusterCol(InputData.freshName(raw.schema(), est.getClusterCol()));
            out.printf(Locale.ROOT, "scan: input %s, coordinates %s, %s model, %s rate, %d replicas, backend %s, master %s%n",
                    input, coords, est.getStatistic(), est.getDirection(), est.getNumReplicas(), est.getBackend(),
                    spark.sparkContext().master());
            out.flush();
            GpuScanStatistic.Fitted f = est.fitWithGrid(raw);
            ScanResult result = f.model.result();
            double seconds = secondsSince(t0);
            out.println("scan finished");
            ScanReport.summary(out, f.input.grid, f.input.info, result, f.input.rows, seconds);
            if (report != null) {
                reportTarget.writeText(ScanReport.jsonText(ScanReport.json(result, f.input.info, settings(est), f.input.rows, seconds)));
                out.println("  report        " + report);
            }
            if (csv != null) {
                csvTarget.writeText(ScanReport.csvText(result, f.input.info));
                out.println("  clusters csv  " + csv);
            }
            if (heatmap != null) {
                ScanReport.heatMap(heatmapTarget, f.input.grid, f.input.info, result, "Scan statistic: " + input);
                out.println("  heat map      " + heatmap);
            }
        }
        return SparkGpuCli.EXIT_OK;
    }

    private Map<String, Object> settings(GpuScanStatistic est) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("input", input);
        m.put("casesCol", cases);
        m.put("baselineCol", baseline);
        m.put("minCells", est.getMinCells());
        m.put("maxCells", est.getMaxCells());
        m.put("maxBaselineFraction", est.getMaxBaselineFraction());
        m.put("numClusters", est.getNumClusters());
        m.put("backendRequested", est.getBackend());
        return m;
    }
}
