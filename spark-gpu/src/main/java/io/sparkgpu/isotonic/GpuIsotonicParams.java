package io.sparkgpu.isotonic;

/**
 * The params of {@link GpuIsotonicRegression}: those of {@link GpuIsotonicModelParams} with the setters of the fit,
 * and {@link #toConfig()}, the settings they describe.
 */
public interface GpuIsotonicParams<T extends GpuIsotonicParams<T>> extends GpuIsotonicModelParams<T> {
    default T setIsotonic(boolean v) {
        return with(isotonic(), v);
    }

    default T setLabelCol(String v) {
        return withOrClear(labelCol(), v);
    }

    /** "l2" or "l1" (any case). */
    default T setLoss(String v) {
        return with(loss(), GpuIsotonicModelParams.lower(v));
    }

    /** "pava" or "mls" (any case). */
    default T setAlgorithm(String v) {
        return with(algorithm(), GpuIsotonicModelParams.lower(v));
    }

    /** "true", "false" or "auto" (any case); null clears it (isotonic decides). */
    default T setIncreasing(String v) {
        return withOrClear(increasing(), GpuIsotonicModelParams.lower(v));
    }

    default T setYMin(double v) {
        return with(yMin(), v);
    }

    default T setYMax(double v) {
        return with(yMax(), v);
    }

    /** The engine settings these params describe (numPartitions aside; validated by the trainer). */
    default IsotonicConfig toConfig() {
        IsotonicConfig c = new IsotonicConfig();
        c.loss = IsotonicConfig.parseLoss(getLoss());
        c.algorithm = IsotonicConfig.parseAlgorithm(getAlgorithm());
        c.direction = IsotonicConfig.parseDirection(getIncreasing());
        c.backend = backendSetting();
        c.yMin = getYMin();
        c.yMax = getYMax();
        return c;
    }
}
