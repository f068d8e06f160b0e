package io.sparkgpu.jobs;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.sort.GpuSort;
import io.sparkgpu.sort.SortConfig;
import io.sparkgpu.sort.SortEngine;
import io.sparkgpu.sort.SortMetrics;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.knowm.xchart.XYChart;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sparkgpu sort}: sorts the rows of a CSV or Parquet input by one key column with {@link GpuSort} (the
 * counting or radix sort, GPU when usable) and writes them in that order; optionally plots the key histogram.
 */
@Command(name = "sort", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Sort the rows of a CSV or Parquet file by one column (GPU when usable, else CPU).",
                "Equal keys keep their input order. Writes the sorted rows; optionally a PNG of the key histogram."},
        footer = {"", "Example:",
                "  sparkgpu sort --input examples/events.csv --key hour --descending \\",
                "      --output sorted.parquet --plot hours.png"})
final class SortCommand extends SparkCommand {
    enum OutputFormat { parquet, csv }

    @Option(names = "--input", required = true, paramLabel = "PATH",
            description = "Input file, directory or glob: CSV with a header row, or Parquet.")
    String input;

    @Option(names = "--format", paramLabel = "FMT", defaultValue = "auto",
            description = "Input format: csv, parquet or auto (from the file extension). Default: ${DEFAULT-VALUE}.")
    InputData.Format format;

    @Option(names = "--key", required = true, paramLabel = "COL",
            description = "The column to sort by: " + SortEngine.KEY_TYPES + ".")
    String key;

    @Option(names = "--descending", description = "Largest keys first (default: ascending).")
    boolean descending;

    @Option(names = "--nulls-first", description = "Rows with a null key first (the default when ascending).")
    boolean nullsFirst;

    @Option(names = "--nulls-last", description = "Rows with a null key last (the default when descending).")
    boolean nullsLast;

    @Option(names = "--within-partitions",
            description = "Sort each input partition on its own (no shuffle) instead of a total order.")
    boolean withinPartitions;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "0",
            description = "Output partitions (files) of the total order; 0: spark.sql.shuffle.partitions. "
                    + "Default: ${DEFAULT-VALUE}.")
    int partitions;

    @Option(names = "--output", paramLabel = "PATH", description = "Write the sorted rows here.")
    String output;

    @Option(names = "--output-format", paramLabel = "FMT", defaultValue = "parquet",
            description = "Format of --output: parquet or csv. Default: ${DEFAULT-VALUE}.")
    OutputFormat outputFormat;

    @Option(names = "--overwrite", description = "Replace --output and --plot if they exist (only a previous "
            + "output: a dataset directory must hold _SUCCESS or part files). The old one is removed only after "
            + "the new one is complete.")
    boolean overwrite;

    @Option(names = "--plot", paramLabel = "FILE.png",
            description = "Write a PNG of the histogram of the key (equal-width bins over its range).")
    Path plot;

    @Option(names = "--plot-bins", paramLabel = "N", defaultValue = "64",
            description = "Bins of --plot (1..100000). Default: ${DEFAULT-VALUE}.")
    int plotBins;

    /** The sort the options describe; refused values are usage errors naming the option, before Spark starts. */
    SortConfig config() {
        if (key.isBlank()) {
            throw usage("Invalid value for option '--key': empty column name");
        }
        if (nullsFirst && nullsLast) {
            throw usage("--nulls-first and --nulls-last exclude each other");
        }
        SortConfig cfg = new SortConfig(key.trim()).ascending(!descending);
        if (nullsFirst || nullsLast) {
            cfg.nullsFirst(nullsFirst);
        }
        option("--partitions", () -> cfg.numPartitions(partitions));
        if (backend != null) {
            option("--backend", () -> cfg.backend(Backend.parse(backend, "backend")));
        }
        if (plotBins < 1 || plotBins > 100_000) {
            throw usage("Invalid value for option '--plot-bins': must be in [1, 100000], got " + plotBins);
        }
        checkPng(plot);
        if (output == null && plot == null) {
            throw usage("nothing to do: give --output (the sorted rows) and/or --plot (the key histogram)");
        }
        return cfg;
    }

    @Override
    public Integer call() throws Exception {
        SortConfig cfg = config();
        long t0 = System.nanoTime();
        PrintWriter out = out();
        try (SparkSession spark = startSpark("spark-gpu sort")) {
            Dataset<Row> raw = InputData.read(spark, input, format, commandLine());
            StructField f = InputData.field(raw.schema(), key.trim(), "--key", commandLine());
            SortMetrics metrics = new SortMetrics(spark.sparkContext());
            cfg.keyCol(f.name()).metrics(metrics);
            try {
                cfg.validate(raw.schema());
            } catch (IllegalArgumentException e) {
                throw usage("--key: " + e.getMessage());
            }
            SafeOutput outTarget = checkTarget(spark, output, "--output", input, overwrite);
            SafeOutput plotTarget = plot == null ? null : checkFile(spark, plot, "--plot", overwrite, input);
            out.printf(Locale.ROOT, "sort: input %s, key %s (%s), %s, nulls %s, %s, master %s%n", input, f.name(),
                    f.dataType().simpleString(), cfg.isAscending() ? "ascending" : "descending",
                    cfg.isNullsFirst() ? "first" : "last", withinPartitions ? "within partitions" : "total order",
                    spark.sparkContext().master());
            out.flush();
            if (output != null) {
                long ts = System.nanoTime();
                Dataset<Row> sorted = withinPartitions ? GpuSort.sortWithinPartitions(raw, cfg) : GpuSort.sort(raw, cfg);
                outTarget.writeDataset(outputFormat == OutputFormat.csv ? KMeansCommand.flattenForCsv(sorted) : sorted,
                        outputFormat.name());
                out.printf(Locale.ROOT, "  sorted        %d rows in %.2f s -> %s (%s)%n", metrics.rows.value(),
                        secondsSince(ts), output, outputFormat);
                out.printf(Locale.ROOT, "  backend       %s (%d counting, %d radix sorts)%n", metrics.backend(),
                        metrics.countingSorts.value(), metrics.radixSorts.value());
            }
            if (plot != null) {
                String what = plotHistogram(raw, f, cfg, plotTarget);
                out.println("  plot          " + plot + " (" + what + ")");
            }
            out.printf(Locale.ROOT, "sort finished in %.2f s%n", secondsSince(t0));
        }
        return SparkGpuCli.EXIT_OK;
    }

    /** The key as a double for binning: numbers as they are, dates in days, timestamps in seconds. */
    static Column numericKey(Dataset<Row> df, StructField f) {
        Column c = df.col(InputData.quote(f.name()));
        DataType t = f.dataType();
        if (t instanceof DateType) {
            return functions.unix_date(c).cast(DataTypes.DoubleType);
        }
        if (t instanceof TimestampNTZType) {
            c = c.cast(DataTypes.TimestampType);
            t = DataTypes.TimestampType;
        }
        if (t instanceof TimestampType) {
            return functions.unix_micros(c).cast(DataTypes.DoubleType).divide(1e6);
        }
        return c.cast(DataTypes.DoubleType);
    }

    /**
     * Equal-width bins over [min, max] of the finite keys (not null, NaN or infinite; the infinite ones are counted
     * and reported), counted exactly by {@link GpuSort#histogram} (the counting sort's histogram kernel); returns what
     * was plotted. When max - min overflows (keys near both ends of the double range) the binning runs on halved
     * values, which cannot overflow; otherwise on the values themselves.
     */
    private String plotHistogram(Dataset<Row> raw, StructField f, SortConfig cfg, SafeOutput target)
            throws java.io.IOException {
        Column key = functions.col("x");
        Column finite = key.gt(Double.NEGATIVE_INFINITY).and(key.lt(Double.POSITIVE_INFINITY));
        Dataset<Row> all = raw.select(numericKey(raw, f).as("x")).where("x IS NOT NULL AND NOT isnan(x)");
        Row mm = all.agg(functions.min(functions.when(finite, key)), functions.max(functions.when(finite, key)),
                functions.count(functions.when(functions.not(finite), 1))).first();
        long infinite = mm.getLong(2);
        String skipped = infinite == 0 ? "" : ", " + infinite + " infinite keys not plotted";
        if (mm.isNullAt(0)) {
            XYChart chart = Plots.lines("Histogram of " + f.name() + " (no finite values)", f.name(), "rows", false);
            target.writePng(chart);
            return "no finite values" + skipped;
        }
        Dataset<Row> keys = all.where(finite);
        double lo = mm.getDouble(0);
        double hi = mm.getDouble(1);
        double scale = Double.isFinite(hi - lo) ? 1 : 0.5;
        int bins = hi > lo ? plotBins : 1;
        double width = hi > lo ? (hi * scale - lo * scale) / bins : 1;
        Column bin = functions.least(functions.lit(bins - 1), functions.floor(key.multiply(scale).minus(lo * scale)
                .divide(width)).cast(DataTypes.IntegerType));
        List<Row> counts = GpuSort.histogram(keys.select(bin.as("bin")), "bin", bins, cfg.backend()).collectAsList();
        double[] x = new double[bins];
        double[] y = new double[bins];
        for (int b = 0; b < bins; b++) {
            x[b] = (lo * scale + (b + 0.5) * width) / scale;
        }
        long total = 0;
        for (Row r : counts) {
            y[r.getInt(0)] = r.getLong(1);
            total += r.getLong(1);
        }
        XYChart chart = Plots.lines(String.format(Locale.ROOT, "Histogram of %s (%d rows, %d bins%s)", f.name(), total,
                bins, skipped), f.name(), "rows per bin", false);
        Plots.addLine(chart, "rows", x, y);
        target.writePng(chart);
        return total + " keys in " + bins + " bins" + skipped;
    }
}
