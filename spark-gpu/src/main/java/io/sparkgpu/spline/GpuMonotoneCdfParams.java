package io.sparkgpu.spline;

import io.sparkgpu.ml.HasBackend;
import io.sparkgpu.ml.HasSeed;
import io.sparkgpu.ml.HasWeightCol;
import io.sparkgpu.ml.ParamChecks;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.LongParam;
import org.apache.spark.ml.param.Param;

/**
 * The params of {@link GpuMonotoneCdf} and {@link GpuMonotoneCdfModel}, declared once: inputCol, weightCol,
 * numKnots, sampleSize, kind, outputCol, densityCol, seed and backend. Validators are the rules of
 * {@link SplineConfig} (checkNumKnots, checkSampleSize, parseKind).
 */
public interface GpuMonotoneCdfParams<T extends GpuMonotoneCdfParams<T>>
        extends HasWeightCol<T>, HasSeed<T>, HasBackend<T> {
    /** Default numKnots: 1025 levels, every 1/1024 of probability. */
    int DEFAULT_KNOTS = 1025;

    default Param<String> inputCol() {
        return slot("inputCol", o -> new Param<>(o, "inputCol", "Numeric column whose distribution is estimated."));
    }

    default IntParam numKnots() {
        return slot("numKnots", o -> new IntParam(o, "numKnots", "Probability levels k/(numKnots-1) whose exact "
                + "quantiles are the knots of the CDF, in [2, 2^24].",
                ParamChecks.intValidator(SplineConfig::checkNumKnots)));
    }

    default LongParam sampleSize() {
        return slot("sampleSize", o -> new LongParam(o, "sampleSize", "0: exact quantiles of the whole column (exact "
                + "counts per bin, no sort; a Spark sort when weighted); else a random sample of about that many "
                + "rows (seed) when the column is larger.",
                ParamChecks.longValidator(SplineConfig::checkSampleSize)));
    }

    default Param<String> kind() {
        return slot("kind", o -> new Param<>(o, "kind", "'rational' (Gregory-Delbourgo, Butland density slopes; "
                + "default) or 'schumaker' (monotone quadratic).",
                ParamChecks.<String>validator(SplineConfig::parseKind)));
    }

    default Param<String> outputCol() {
        return slot("outputCol", o -> new Param<>(o, "outputCol", "Output column of transform: the CDF at inputCol."));
    }

    default Param<String> densityCol() {
        return slot("densityCol", o -> new Param<>(o, "densityCol", "Output column of the density (the CDF's "
                + "derivative; unset or empty: none)."));
    }

    default String getInputCol() {
        return valueOrNull(inputCol());
    }

    default int getNumKnots() {
        return (Integer) getOrDefault(numKnots());
    }

    default long getSampleSize() {
        return (Long) getOrDefault(sampleSize());
    }

    default String getKind() {
        return getOrDefault(kind());
    }

    default String getOutputCol() {
        return valueOrNull(outputCol());
    }

    default String getDensityCol() {
        String v = valueOrNull(densityCol());
        return v == null || v.isEmpty() ? null : v;
    }

    default T setInputCol(String v) {
        return with(inputCol(), v);
    }

    default T setNumKnots(int v) {
        return with(numKnots(), v);
    }

    default T setSampleSize(long v) {
        return with(sampleSize(), v);
    }

    /** "rational" or "schumaker" (any case). */
    default T setKind(String v) {
        return with(kind(), GpuMonotoneSplineModelParams.lower(v));
    }

    default T setOutputCol(String v) {
        return with(outputCol(), v);
    }

    default T setDensityCol(String v) {
        return withOrClear(densityCol(), v);
    }

    /** The defaults of the estimator and the model. */
    static void setDefaults(GpuMonotoneCdfParams<?> p) {
        p.setDefault(p.inputCol(), "value");
        p.setDefault(p.numKnots(), DEFAULT_KNOTS);
        p.setDefault(p.sampleSize(), 0L);
        p.setDefault(p.kind(), "rational");
        p.setDefault(p.outputCol(), "cdf");
        p.setDefault(p.seed(), HasSeed.defaultSeed(GpuMonotoneCdf.class));
    }
}
