package io.sparkgpu.spline;

/** The params of {@link GpuMonotoneSpline}: those of the model plus the setters of the fit. */
public interface GpuMonotoneSplineParams<T extends GpuMonotoneSplineParams<T>> extends GpuMonotoneSplineModelParams<T> {
    default T setYCol(String v) {
        return with(yCol(), v);
    }

    /** null or "" clears it (Butland's slopes). */
    default T setSlopeCol(String v) {
        return withOrClear(slopeCol(), v);
    }

    /** null or "" clears it (weight 1). */
    default T setWeightCol(String v) {
        return withOrClear(weightCol(), v);
    }

    /** "schumaker" or "rational" (any case). */
    default T setKind(String v) {
        return with(kind(), GpuMonotoneSplineModelParams.lower(v));
    }

    /** "none" or "isotonic" (any case). */
    default T setSmoothing(String v) {
        return with(smoothing(), GpuMonotoneSplineModelParams.lower(v));
    }
}
