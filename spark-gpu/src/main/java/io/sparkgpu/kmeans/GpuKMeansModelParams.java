package io.sparkgpu.kmeans;

import io.sparkgpu.ml.HasBackend;
import io.sparkgpu.ml.HasFeaturesCol;
import io.sparkgpu.ml.HasPredictionCol;
import io.sparkgpu.ml.ParamChecks;
import org.apache.spark.ml.param.Param;

/**
 * The params that {@link GpuKMeans} and {@link GpuKMeansModel} share (featuresCol, predictionCol, backend and
 * distanceMeasure), declared once (Spark copies values from estimator to model by name).
 */
public interface GpuKMeansModelParams<T extends GpuKMeansModelParams<T>>
        extends HasFeaturesCol<T>, HasPredictionCol<T>, HasBackend<T> {

    /** "euclidean" (default) or "cosine"; the rule is {@link KMeansConfig#checkDistanceMeasure}. */
    default Param<String> distanceMeasure() {
        return slot("distanceMeasure", o -> new Param<>(o, "distanceMeasure", "Distance measure: 'euclidean' "
                + "(squared Euclidean cost) or 'cosine' (1 - cosine similarity).",
                ParamChecks.validator(KMeansConfig::checkDistanceMeasure)));
    }

    default String getDistanceMeasure() {
        return getOrDefault(distanceMeasure());
    }
}
