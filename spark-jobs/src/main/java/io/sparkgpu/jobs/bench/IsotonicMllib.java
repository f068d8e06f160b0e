package io.sparkgpu.jobs.bench;

/**
 * The MLlib side of the isotonic benchmark behind a Spark-free interface: {@link IsotonicBenchmark} loads the
 * implementation ({@link MllibIsotonicRunner}) by name only when Spark is on the class path, so the benchmark
 * itself runs in the Spark-free GPU bundle.
 */
interface IsotonicMllib extends AutoCloseable {
    String IMPLEMENTATION = "io.sparkgpu.jobs.bench.MllibIsotonicRunner";

    /** One timed fit. */
    final class Fit {
        final double[] boundaries;
        final double[] predictions;
        final double seconds;

        Fit(double[] boundaries, double[] predictions, double seconds) {
            this.boundaries = boundaries;
            this.predictions = predictions;
            this.seconds = seconds;
        }
    }

    /** Spark version and master, for the report. */
    String describe();

    /**
     * Loads rows (x[i], y[i]) into a cached DataFrame of {@code partitions} partitions (not timed), then times one
     * {@code org.apache.spark.ml.regression.IsotonicRegression.fit} around the fit call alone.
     */
    Fit fit(double[] x, double[] y, int n, boolean isotonic, int partitions);

    /**
     * The same rows through our estimator, {@code GpuIsotonicRegression.fit} with {@code partitions} range
     * partitions and the given backend, timed the same way (the whole fit call on a cached DataFrame).
     */
    Fit fitOurs(double[] x, double[] y, int n, boolean isotonic, int partitions, String backend);

    @Override
    void close();
}
