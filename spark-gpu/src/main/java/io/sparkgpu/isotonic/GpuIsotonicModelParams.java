package io.sparkgpu.isotonic;

import io.sparkgpu.ml.HasBackend;
import io.sparkgpu.ml.HasFeaturesCol;
import io.sparkgpu.ml.HasPredictionCol;
import io.sparkgpu.ml.HasWeightCol;
import io.sparkgpu.ml.ParamChecks;
import java.util.Locale;
import org.apache.spark.ml.param.BooleanParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;

/**
 * The params of {@link GpuIsotonicRegression} and {@link GpuIsotonicRegressionModel}, declared once: MLlib's names
 * (isotonic, featureIndex, weightCol, featuresCol, labelCol, predictionCol) and ours (loss, algorithm, increasing,
 * outOfBounds, yMin, yMax, backend). The validators are the rules of {@link IsotonicConfig}. This interface has the
 * setters a fitted model may change (columns, featureIndex, outOfBounds, backend); {@link GpuIsotonicParams} adds
 * those of the fit.
 */
public interface GpuIsotonicModelParams<T extends GpuIsotonicModelParams<T>>
        extends HasFeaturesCol<T>, HasWeightCol<T>, HasPredictionCol<T>, HasBackend<T> {

    /** Lower-cases and trims a choice (null stays null). */
    static String lower(String v) {
        return v == null ? null : v.trim().toLowerCase(Locale.ROOT);
    }

    default BooleanParam isotonic() {
        return slot("isotonic", o -> new BooleanParam(o, "isotonic", "Whether the output sequence should be "
                + "isotonic/increasing (true) or antitonic/decreasing (false); used when increasing is not set."));
    }

    default IntParam featureIndex() {
        return slot("featureIndex", o -> new IntParam(o, "featureIndex", "Index of the feature when featuresCol is "
                + "a vector column (>= 0).", ParamChecks.intValidator(IsotonicConfig::checkFeatureIndex)));
    }

    default Param<String> labelCol() {
        return slot("labelCol", o -> new Param<>(o, "labelCol", "Label column (numeric)."));
    }

    default Param<String> loss() {
        return slot("loss", o -> new Param<>(o, "loss", "Loss: 'l2' (weighted least squares, block means) or 'l1' "
                + "(weighted absolute deviations, block lower weighted medians).",
                ParamChecks.<String>validator(IsotonicConfig::parseLoss)));
    }

    default Param<String> algorithm() {
        return slot("algorithm", o -> new Param<>(o, "algorithm", "Least-squares algorithm: 'pava' (PAVA-merge, "
                + "O(n log n) on GPU, O(n) on CPU) or 'mls' (parallel minimum lower sets, O(n^2), for small "
                + "partitions).", ParamChecks.<String>validator(IsotonicConfig::parseAlgorithm)));
    }

    default Param<String> increasing() {
        return slot("increasing", o -> new Param<>(o, "increasing", "Direction: 'true', 'false' or 'auto' (sign of "
                + "Spearman's rank correlation, as scikit-learn); when unset, isotonic decides.",
                ParamChecks.<String>validator(IsotonicConfig::parseDirection)));
    }

    default Param<String> outOfBounds() {
        return slot("outOfBounds", o -> new Param<>(o, "outOfBounds", "Prediction outside the training range: "
                + "'clip' (nearest end, as MLlib), 'nan' or 'error'.",
                ParamChecks.<String>validator(IsotonicConfig::parseOutOfBounds)));
    }

    default DoubleParam yMin() {
        return slot("yMin", o -> new DoubleParam(o, "yMin", "Lower bound of the fitted values (unset: none).",
                ParamChecks.doubleValidator(IsotonicConfig::checkYMin)));
    }

    default DoubleParam yMax() {
        return slot("yMax", o -> new DoubleParam(o, "yMax", "Upper bound of the fitted values (unset: none).",
                ParamChecks.doubleValidator(IsotonicConfig::checkYMax)));
    }

    default boolean getIsotonic() {
        return (Boolean) getOrDefault(isotonic());
    }

    default int getFeatureIndex() {
        return (Integer) getOrDefault(featureIndex());
    }

    default String getLabelCol() {
        return valueOrNull(labelCol());
    }

    default String getLoss() {
        return getOrDefault(loss());
    }

    default String getAlgorithm() {
        return getOrDefault(algorithm());
    }

    /** "true", "false" or "auto"; when unset, {@link #getIsotonic()} as a string. */
    default String getIncreasing() {
        return isDefined(increasing()) ? getOrDefault(increasing()) : String.valueOf(getIsotonic());
    }

    default String getOutOfBounds() {
        return getOrDefault(outOfBounds());
    }

    /** The lower bound, NaN when unset. */
    default double getYMin() {
        return isDefined(yMin()) ? (Double) getOrDefault(yMin()) : Double.NaN;
    }

    /** The upper bound, NaN when unset. */
    default double getYMax() {
        return isDefined(yMax()) ? (Double) getOrDefault(yMax()) : Double.NaN;
    }

    default T setFeatureIndex(int v) {
        return with(featureIndex(), v);
    }

    /** "clip", "nan" or "error" (any case). */
    default T setOutOfBounds(String v) {
        return with(outOfBounds(), lower(v));
    }
}
