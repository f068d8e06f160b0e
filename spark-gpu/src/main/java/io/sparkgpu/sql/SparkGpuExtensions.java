package io.sparkgpu.sql;

import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import scala.Function1;
import scala.Tuple3;
import scala.runtime.BoxedUnit;

/**
 * Spark session extension registering the SQL functions of spark-gpu ({@link SparkGpuFunctions}), e.g.
 * {@code sparkgpu_kmeans_predict(model_path, features)}. Enable it with
 * {@code --conf spark.sql.extensions=io.sparkgpu.sql.SparkGpuExtensions} (or
 * {@code SparkSession.builder().config("spark.sql.extensions", "io.sparkgpu.sql.SparkGpuExtensions")}); the
 * spark-gpu jar must be on the driver and executor class paths.
 */
public final class SparkGpuExtensions implements Function1<SparkSessionExtensions, BoxedUnit> {

    public SparkGpuExtensions() {
    }

    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        for (SqlFunctionSpec f : SparkGpuFunctions.all()) {
            extensions.injectFunction(new Tuple3<>(FunctionIdentifier.apply(f.name()), f.info(), f.builder()));
        }
        return BoxedUnit.UNIT;
    }
}
