package io.sparkgpu.sql;

import io.sparkgpu.kmeans.KMeansPredictor;
import java.io.Serializable;
import org.apache.spark.broadcast.Broadcast;

/**
 * Serializable handle of a k-means model that the driver loaded once and broadcast: executors fetch the
 * centres once per executor, not once per task or row. Two handles are equal when they share the broadcast.
 */
public final class KMeansModelRef implements Serializable {
    private static final long serialVersionUID = 1L;

    private final Broadcast<KMeansPredictor> broadcast;
    private final int k;
    private final int numFeatures;

    KMeansModelRef(Broadcast<KMeansPredictor> broadcast, int k, int numFeatures) {
        this.broadcast = broadcast;
        this.k = k;
        this.numFeatures = numFeatures;
    }

    KMeansPredictor predictor() {
        return broadcast.value();
    }

    long broadcastId() {
        return broadcast.id();
    }

    public int k() {
        return k;
    }

    public int numFeatures() {
        return numFeatures;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KMeansModelRef && ((KMeansModelRef) o).broadcast.id() == broadcast.id();
    }

    @Override
    public int hashCode() {
        return Long.hashCode(broadcast.id());
    }

    @Override
    public String toString() {
        return "GpuKMeansModel(k=" + k + ", numFeatures=" + numFeatures + ", broadcast=" + broadcast.id() + ")";
    }
}
