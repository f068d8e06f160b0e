package io.sparkgpu.kmeans;

/** Receives per-iteration progress on the driver. */
@FunctionalInterface
public interface KMeansProgress {
    /**
     * @param iteration 1-based Lloyd iteration
     * @param cost      sum of w * distance to the nearest centre before this iteration's update
     * @param maxShift  largest movement of a centre in this update (Euclidean norm, or cosine distance)
     */
    void onIteration(int iteration, double cost, double maxShift);
}
