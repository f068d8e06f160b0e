package io.sparkgpu.sql;

import io.sparkgpu.spline.Spline;
import io.sparkgpu.spline.SplineConfig;
import java.io.Serializable;
import org.apache.spark.broadcast.Broadcast;

/**
 * Serializable handle of a spline the driver loaded once and broadcast, with the model's extrapolation mode. Equal
 * when they share the broadcast.
 */
public final class SplineModelRef implements Serializable {
    private static final long serialVersionUID = 1L;

    private final Broadcast<Spline> broadcast;
    private final SplineConfig.Extrapolate mode;

    SplineModelRef(Broadcast<Spline> broadcast, SplineConfig.Extrapolate mode) {
        this.broadcast = broadcast;
        this.mode = mode;
    }

    Spline spline() {
        return broadcast.value();
    }

    SplineConfig.Extrapolate mode() {
        return mode;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SplineModelRef && ((SplineModelRef) o).broadcast.id() == broadcast.id();
    }

    @Override
    public int hashCode() {
        return Long.hashCode(broadcast.id());
    }

    @Override
    public String toString() {
        return "GpuMonotoneSplineModel(broadcast=" + broadcast.id() + ")";
    }
}
