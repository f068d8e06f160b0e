package io.sparkgpu.spline;

import io.sparkgpu.ml.HasBackend;
import io.sparkgpu.ml.HasPredictionCol;
import io.sparkgpu.ml.ParamChecks;
import java.util.Locale;
import org.apache.spark.ml.param.Param;

/**
 * The params of {@link GpuMonotoneSpline} and {@link GpuMonotoneSplineModel}, declared once: xCol, yCol, slopeCol,
 * weightCol, kind, smoothing, extrapolate, predictionCol, derivativeCol and backend. Validators are the rules of
 * {@link SplineConfig}. This interface has the setters a fitted model may change (xCol, extrapolate, the output
 * columns, backend); {@link GpuMonotoneSplineParams} adds those of the fit.
 */
public interface GpuMonotoneSplineModelParams<T extends GpuMonotoneSplineModelParams<T>>
        extends HasPredictionCol<T>, HasBackend<T> {

    static String lower(String v) {
        return v == null ? null : v.trim().toLowerCase(Locale.ROOT);
    }

    default Param<String> xCol() {
        return slot("xCol", o -> new Param<>(o, "xCol", "Column of the abscissae (numeric)."));
    }

    default Param<String> yCol() {
        return slot("yCol", o -> new Param<>(o, "yCol", "Column of the values to interpolate (numeric, monotone in x "
                + "unless smoothing=isotonic)."));
    }

    default Param<String> slopeCol() {
        return slot("slopeCol", o -> new Param<>(o, "slopeCol", "Column of the derivatives at the points (kind="
                + "rational only; unset: Butland's harmonic-mean slopes)."));
    }

    default Param<String> weightCol() {
        return slot("weightCol", o -> new Param<>(o, "weightCol", "Column of positive weights of the rows, used when "
                + "merging duplicate x (weighted mean) and by isotonic smoothing; unset: 1."));
    }

    default Param<String> kind() {
        return slot("kind", o -> new Param<>(o, "kind", "'schumaker' (monotone C1 quadratic, Butland slopes) or "
                + "'rational' (Gregory-Delbourgo monotone C1 rational quadratic Hermite).",
                ParamChecks.<String>validator(SplineConfig::parseKind)));
    }

    default Param<String> smoothing() {
        return slot("smoothing", o -> new Param<>(o, "smoothing", "'none' (y must be monotone) or 'isotonic' "
                + "(interpolate the weighted isotonic regression of y).",
                ParamChecks.<String>validator(SplineConfig::parseSmoothing)));
    }

    default Param<String> extrapolate() {
        return slot("extrapolate", o -> new Param<>(o, "extrapolate", "Queries outside the knots: 'clip' (end value), "
                + "'linear' (end tangent), 'nan' or 'error'.",
                ParamChecks.<String>validator(SplineConfig::parseExtrapolate)));
    }

    default Param<String> derivativeCol() {
        return slot("derivativeCol", o -> new Param<>(o, "derivativeCol", "Output column of the first derivative "
                + "(unset or empty: none)."));
    }

    default String getXCol() {
        return valueOrNull(xCol());
    }

    default String getYCol() {
        return valueOrNull(yCol());
    }

    default String getSlopeCol() {
        String v = valueOrNull(slopeCol());
        return v == null || v.isEmpty() ? null : v;
    }

    default String getWeightCol() {
        String v = valueOrNull(weightCol());
        return v == null || v.isEmpty() ? null : v;
    }

    default String getKind() {
        return getOrDefault(kind());
    }

    default String getSmoothing() {
        return getOrDefault(smoothing());
    }

    default String getExtrapolate() {
        return getOrDefault(extrapolate());
    }

    default String getDerivativeCol() {
        String v = valueOrNull(derivativeCol());
        return v == null || v.isEmpty() ? null : v;
    }

    default T setXCol(String v) {
        return with(xCol(), v);
    }

    /** "clip", "linear", "nan" or "error" (any case). */
    default T setExtrapolate(String v) {
        return with(extrapolate(), lower(v));
    }

    default T setDerivativeCol(String v) {
        return withOrClear(derivativeCol(), v);
    }

    /** The defaults of the estimator and the model. */
    static void setDefaults(GpuMonotoneSplineModelParams<?> p) {
        p.setDefault(p.xCol(), "x");
        p.setDefault(p.yCol(), "y");
        p.setDefault(p.kind(), "schumaker");
        p.setDefault(p.smoothing(), "none");
        p.setDefault(p.extrapolate(), "clip");
        p.setDefault(p.predictionCol(), HasPredictionCol.DEFAULT);
    }

    /** The settings these params describe. */
    default SplineConfig toConfig() {
        SplineConfig c = new SplineConfig();
        c.kind = SplineConfig.parseKind(getKind());
        c.smoothing = SplineConfig.parseSmoothing(getSmoothing());
        c.extrapolate = SplineConfig.parseExtrapolate(getExtrapolate());
        c.backend = backendSetting();
        return c;
    }
}
