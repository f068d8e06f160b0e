package io.sparkgpu.ml;

import org.apache.spark.ml.param.Param;

/** Param {@code featuresCol} (default {@value #DEFAULT}); the types each capability accepts are in its javadoc. */
public interface HasFeaturesCol<T extends HasFeaturesCol<T>> extends SharedParams<T> {
    String DEFAULT = "features";

    default Param<String> featuresCol() {
        return slot("featuresCol", o -> new Param<>(o, "featuresCol", "Features column: an ml Vector or an array of "
                + "numbers (isotonic: also a number; t-SNE: feature mode)."));
    }

    /** The features column, or null when cleared and without default. */
    default String getFeaturesCol() {
        return valueOrNull(featuresCol());
    }

    /** Sets featuresCol; null clears the value set (the default applies again). */
    default T setFeaturesCol(String value) {
        return withOrClear(featuresCol(), value);
    }
}
