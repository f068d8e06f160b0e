package io.sparkgpu.ml;

import org.apache.spark.ml.param.Param;

/** Param {@code predictionCol} (default {@value #DEFAULT}): the output column of {@code transform}. */
public interface HasPredictionCol<T extends HasPredictionCol<T>> extends SharedParams<T> {
    String DEFAULT = "prediction";

    default Param<String> predictionCol() {
        return slot("predictionCol", o -> new Param<>(o, "predictionCol", "Output column of the predictions "
                + "(k-means: index of the nearest centre, int; isotonic: the fitted value, double)."));
    }

    default String getPredictionCol() {
        return valueOrNull(predictionCol());
    }

    default T setPredictionCol(String value) {
        return withOrClear(predictionCol(), value);
    }
}
