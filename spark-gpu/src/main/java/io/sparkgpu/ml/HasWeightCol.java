package io.sparkgpu.ml;

import org.apache.spark.ml.param.Param;

/** Param {@code weightCol}: non-negative weights; unset or empty means weight 1 for every row (no default). */
public interface HasWeightCol<T extends HasWeightCol<T>> extends SharedParams<T> {
    default Param<String> weightCol() {
        return slot("weightCol", o -> new Param<>(o, "weightCol", "Column of non-negative weights (numeric); unset "
                + "or empty: every row (t-SNE graph mode: every edge) has weight 1."));
    }

    /** The weight column as set, or null when unset (unlike MLlib, which throws). */
    default String getWeightCol() {
        return valueOrNull(weightCol());
    }

    /** The weight column, or null when unweighted (unset or empty). */
    default String weightColOrNull() {
        String w = getWeightCol();
        return w == null || w.isEmpty() ? null : w;
    }

    /** Sets the weight column; null clears it (unweighted), as does "". */
    default T setWeightCol(String value) {
        return withOrClear(weightCol(), value);
    }
}
