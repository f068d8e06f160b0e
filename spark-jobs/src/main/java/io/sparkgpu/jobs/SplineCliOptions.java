package io.sparkgpu.jobs;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The input and output options {@code sparkgpu spline} and {@code sparkgpu cdf} share (a picocli mixin). */
final class SplineCliOptions {
    @Option(names = "--input", required = true, paramLabel = "PATH",
            description = "Input file, directory or glob: CSV with a header row, or Parquet.")
    String input;

    @Option(names = "--format", paramLabel = "FMT", defaultValue = "auto",
            description = "Input format: csv, parquet or auto (from the file extension). Default: ${DEFAULT-VALUE}.")
    InputData.Format format;

    @Option(names = "--output", paramLabel = "PATH", description = "Write the input columns plus the computed "
            + "columns here.")
    String output;

    @Option(names = "--output-format", paramLabel = "FMT", defaultValue = "csv",
            description = "Format of --output: parquet or csv. Default: ${DEFAULT-VALUE}.")
    IsotonicCommand.OutputFormat outputFormat;

    @Option(names = "--model-out", paramLabel = "DIR", description = "Write the model to DIR, plus DIR/summary.json.")
    String modelOut;

    @Option(names = "--overwrite", description = "Replace --output, --model-out and --plot if they exist (only "
            + "once the new one is complete).")
    boolean overwrite;

    @Option(names = "--plot", paramLabel = "FILE.png", description = "Write a PNG plot of (sampled) data, the "
            + "fitted curve and its derivative.")
    Path plot;

    @Option(names = "--plot-points", paramLabel = "N", defaultValue = "20000",
            description = "At most this many (sampled) points in --plot. Default: ${DEFAULT-VALUE}.")
    int plotPoints;
}
