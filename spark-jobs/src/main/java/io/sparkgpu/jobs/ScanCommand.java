package io.sparkgpu.jobs;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.scan.ScanConfig;
import io.sparkgpu.scan.ScanDirection;
import io.sparkgpu.scan.ScanGridInfo;
import io.sparkgpu.scan.ScanInput;
import io.sparkgpu.scan.ScanModel;
import io.sparkgpu.scan.ScanTrainer;
import java.io.PrintWriter;
import java.nio.file.Files;
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
        description = {"Find the most anomalous intervals, rectangles or boxes of a 1-, 2- or 3-D grid by the "
                + "likelihood-ratio scan statistic (GPU when usable, else CPU), with Monte Carlo p-values.",
                "Input: one row per grid cell (integer coordinates, cases, baseline) or one row per point (real "
                        + "coordinates binned onto --grid bins, a case flag or count)."},
        footer = {"", "Examples:",
                "  sparkgpu scan --input cells.csv --coords x,y --cases cases --baseline pop \\",
                "      --report scan.json --csv clusters.csv --heatmap grid.png",
                "  sparkgpu scan --input points.parquet --input-type points --coords lon,lat --grid 128,128 \\",
                "      --cases sick --statistic bernoulli --replicas 999 --heatmap map.png"})
final class ScanCommand extends SparkCommand {

    @Option(names = "--input", required = true, paramLabel = "PATH",
            description = "Input file, directory or glob: CSV with a header row, or Parquet.")
    String input;

    @Option(names = "--format", paramLabel = "FMT", defaultValue = "auto",
            description = "Input format: csv, parquet or auto (from the file extension). Default: ${DEFAULT-VALUE}.")
    InputData.Format format;

    @Option(names = "--input-type", paramLabel = "TYPE", defaultValue = "cells",
            description = "cells (one row per cell) or points (one row per individual/event). Default: ${DEFAULT-VALUE}.")
    String inputType;

    @Option(names = "--coords", required = true, paramLabel = "COLS",
            description = "1 to 3 comma-separated coordinate columns, x first.")
    String coords;

    @Option(names = "--cases", paramLabel = "COL", defaultValue = "cases",
            description = "Cases (cells: counts; points: 0/1 flag or count; normal: the value). Default: ${DEFAULT-VALUE}.")
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

    @Option(names = "--statistic", paramLabel = "NAME", defaultValue = "poisson",
            description = "poisson, bernoulli, normal or ebp (expectation-based Poisson). Default: ${DEFAULT-VALUE}.")
    String statistic;

    @Option(names = "--direction", paramLabel = "DIR", defaultValue = "high",
            description = "high, low or both. Default: ${DEFAULT-VALUE}.")
    String direction;

    @Option(names = "--min-cells", paramLabel = "N", defaultValue = "1",
            description = "Smallest range in cells. Default: ${DEFAULT-VALUE}.")
    long minCells;

    @Option(names = "--max-cells", paramLabel = "N", defaultValue = "0",
            description = "Largest range in cells (0 = no limit). Default: ${DEFAULT-VALUE}.")
    long maxCells;

    @Option(names = "--max-fraction", paramLabel = "F", defaultValue = "1.0",
            description = "Largest share of the total baseline in a range, in (0, 1]. Default: ${DEFAULT-VALUE}.")
    double maxFraction;

    @Option(names = "--clusters", paramLabel = "K", defaultValue = "5",
            description = "Clusters to report (1 most likely + non-overlapping secondary ones). Default: ${DEFAULT-VALUE}.")
    int clusters;

    @Option(names = "--replicas", paramLabel = "R", defaultValue = "999",
            description = "Monte Carlo replicas for the p-values (0 = none). Default: ${DEFAULT-VALUE}.")
    int replicas;

    @Option(names = "--seed", paramLabel = "SEED", defaultValue = "42",
            description = "Seed of the replicas. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--partitions", paramLabel = "P", defaultValue = "0",
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

    /** The run settings; usage errors name the option. */
    ScanConfig config() {
        ScanConfig c = new ScanConfig();
        try {
            c.model = ScanModel.parse(statistic, "--statistic");
            c.direction = ScanDirection.parse(direction, "--direction");
        } catch (IllegalArgumentException e) {
            throw usage("Invalid value: " + e.getMessage());
        }
        if (minCells < 1) {
            throw usage("Invalid value for option '--min-cells': must be >= 1, got " + minCells);
        }
        if (maxCells < 0) {
            throw usage("Invalid value for option '--max-cells': must be >= 0, got " + maxCells);
        }
        if (!(maxFraction > 0 && maxFraction <= 1)) {
            throw usage("Invalid value for option '--max-fraction': must be in (0, 1], got " + maxFraction);
        }
        if (clusters < 1 || clusters > 65) {
            throw usage("Invalid value for option '--clusters': must be in [1, 65], got " + clusters);
        }
        if (replicas < 0) {
            throw usage("Invalid value for option '--replicas': must be >= 0, got " + replicas);
        }
        if (partitions < 0) {
            throw usage("Invalid value for option '--partitions': must be >= 0, got " + partitions);
        }
        for (Object[] f : new Object[][] {{report, ".json", "--report"}, {csv, ".csv", "--csv"},
                {heatmap, ".png", "--heatmap"}}) {
            Path p = (Path) f[0];
            if (p != null && !p.getFileName().toString().toLowerCase(Locale.ROOT).endsWith((String) f[1])) {
                throw usage("Invalid value for option '" + f[2] + "': the file name must end in " + f[1] + ", got " + p);
            }
            if (p != null && !overwrite && Files.exists(p)) {
                throw usage(f[2] + ": " + p + " already exists (pass --overwrite to replace it)");
            }
        }
        c.minCells = minCells;
        c.maxCells = maxCells;
        c.maxBaselineFraction = maxFraction;
        c.numClusters = clusters;
        c.numReplicas = replicas;
        c.seed = seed;
        c.numPartitions = partitions;
        c.backend = parseBackend(backend, "--backend");
        return c;
    }

    /** The input description; usage errors name the option. */
    ScanInput input() {
        String[] cols = Arrays.stream(coords.split(",", -1)).map(String::trim).toArray(String[]::new);
        int[] g;
        double[] e;
        try {
            g = grid == null ? null : ints(grid);
        } catch (NumberFormatException ex) {
            throw usage("Invalid value for option '--grid': expected comma-separated integers, got '" + grid + "'");
        }
        try {
            e = extent == null ? null : doubles(extent);
        } catch (NumberFormatException ex) {
            throw usage("Invalid value for option '--extent': expected comma-separated numbers, got '" + extent + "'");
        }
        boolean points = ScanGridInfo.POINTS.equalsIgnoreCase(inputType.trim());
        String base = baseline != null ? baseline : points ? null : "baseline";
        try {
            return new ScanInput(inputType, cols, cases, base, sumSquares, g, e);
        } catch (IllegalArgumentException ex) {
            throw usage(ex.getMessage());
        }
    }

    @Override
    public Integer call() throws Exception {
        ScanConfig cfg = config();
        ScanInput in = input();
        long t0 = System.nanoTime();
        PrintWriter out = out();
        try (SparkSession spark = startSpark("spark-gpu scan statistic")) {
            Dataset<Row> raw = InputData.read(spark, input, format, commandLine());
            if (cfg.backend == null) {
                cfg.backend = backendOrConfigured(null);
            }
            in.checkSchema(raw.schema(), cfg.model);
            out.printf(Locale.ROOT, "scan: input %s, coordinates %s, %s model, %s rate, %d replicas, backend %s, master %s%n",
                    input, coords, cfg.model.id(), cfg.direction.id(), cfg.numReplicas, cfg.backend.id(),
                    spark.sparkContext().master());
            out.flush();
            ScanTrainer.Fitted f = ScanTrainer.fit(raw, in, cfg);
            double seconds = secondsSince(t0);
            out.println("scan finished");
            ScanReport.summary(out, f.input.grid, f.input.info, f.result, f.input.rows, seconds);
            if (report != null) {
                ScanReport.writeJson(report, ScanReport.json(f.result, f.input.info, settings(cfg), f.input.rows, seconds));
                out.println("  report        " + report);
            }
            if (csv != null) {
                ScanReport.writeCsv(csv, f.result, f.input.info);
                out.println("  clusters csv  " + csv);
            }
            if (heatmap != null) {
                ScanReport.heatMap(heatmap, f.input.grid, f.input.info, f.result, "Scan statistic: " + input);
                out.println("  heat map      " + heatmap);
            }
        }
        return SparkGpuCli.EXIT_OK;
    }

    private Map<String, Object> settings(ScanConfig cfg) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("input", input);
        m.put("casesCol", cases);
        m.put("baselineCol", baseline);
        m.put("minCells", cfg.minCells);
        m.put("maxCells", cfg.maxCells);
        m.put("maxBaselineFraction", cfg.maxBaselineFraction);
        m.put("numClusters", cfg.numClusters);
        m.put("backendRequested", cfg.backend == null ? Backend.AUTO.id() : cfg.backend.id());
        return m;
    }
}
