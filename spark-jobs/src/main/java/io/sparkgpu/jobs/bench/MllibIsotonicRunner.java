package io.sparkgpu.jobs.bench;

import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.ml.regression.IsotonicRegression;
import org.apache.spark.ml.regression.IsotonicRegressionModel;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.api.java.function.MapFunction;

/**
 * MLlib's IsotonicRegression, and our estimator for the same end-to-end comparison, on local[T] (loaded by name by
 * {@link IsotonicBenchmark}; needs Spark).
 */
final class MllibIsotonicRunner implements IsotonicMllib {
    private final SparkSession spark;

    MllibIsotonicRunner(int threads) {
        spark = SparkSession.builder().master("local[" + threads + "]").appName("isotonic-benchmark")
                .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", String.valueOf(threads)).getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
    }

    @Override
    public String describe() {
        return "Spark " + spark.version() + " " + spark.sparkContext().master();
    }

    @Override
    public Fit fit(double[] x, double[] y, int n, boolean isotonic, int partitions) {
        return run(x, y, n, partitions, df -> {
            IsotonicRegressionModel m = new IsotonicRegression().setIsotonic(isotonic).fit(df);
            return new double[][] {m.boundaries().toArray(), m.predictions().toArray()};
        });
    }

    @Override
    public Fit fitOurs(double[] x, double[] y, int n, boolean isotonic, int partitions, String backend) {
        return run(x, y, n, partitions, df -> {
            // numPartitions 0: the trainer picks the ranges (see IsotonicTrainer.gpuRanges; without a GPU one per input partition), or solves
            // small inputs on the driver
            GpuIsotonicRegressionModel m = new GpuIsotonicRegression().setIsotonic(isotonic).setBackend(backend).fit(df);
            return new double[][] {m.boundaryArray(), m.predictionArray()};
        });
    }

    private Fit run(double[] x, double[] y, int n, int partitions,
                    java.util.function.Function<Dataset<Row>, double[][]> fit) {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        Broadcast<double[]> bx = jsc.broadcast(x);
        Broadcast<double[]> by = jsc.broadcast(y);
        StructType schema = new StructType().add("label", DataTypes.DoubleType, false)
                .add("features", DataTypes.DoubleType, false);
        Dataset<Row> df = spark.range(0, n, 1, partitions).map((MapFunction<Long, Row>) i -> {
            int k = (int) (long) i;
            return RowFactory.create(by.value()[k], bx.value()[k]);
        }, Encoders.row(schema)).cache();
        try {
            df.count();
            long t0 = System.nanoTime();
            double[][] m = fit.apply(df);
            double s = (System.nanoTime() - t0) / 1e9;
            return new Fit(m[0], m[1], s);
        } finally {
            df.unpersist(true);
            bx.destroy();
            by.destroy();
        }
    }

    @Override
    public void close() {
        spark.stop();
    }
}
