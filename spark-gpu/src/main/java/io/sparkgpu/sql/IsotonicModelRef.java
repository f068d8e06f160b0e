package io.sparkgpu.sql;

import io.sparkgpu.isotonic.IsotonicPredictor;
import java.io.Serializable;
import org.apache.spark.broadcast.Broadcast;

/**
 * Serializable handle of an isotonic model that the driver loaded once and broadcast (boundaries, predictions,
 * outOfBounds policy, and the feature index used for vector arguments). Equal when they share the broadcast.
 */
public final class IsotonicModelRef implements Serializable {
    private static final long serialVersionUID = 1L;

    private final Broadcast<IsotonicPredictor> broadcast;
    private final int featureIndex;

    IsotonicModelRef(Broadcast<IsotonicPredictor> broadcast, int featureIndex) {
        this.broadcast = broadcast;
        this.featureIndex = featureIndex;
    }

    IsotonicPredictor predictor() {
        return broadcast.value();
    }

    public int featureIndex() {
        return featureIndex;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IsotonicModelRef && ((IsotonicModelRef) o).broadcast.id() == broadcast.id();
    }

    @Override
    public int hashCode() {
        return Long.hashCode(broadcast.id());
    }

    @Override
    public String toString() {
        return "GpuIsotonicRegressionModel(broadcast=" + broadcast.id() + ")";
    }
}
