package io.sparkgpu.kmeans;

import java.util.List;

/** Outcome of {@link KMeansTrainer#train}. */
public final class KMeansResult {
    /** k x d final centres. */
    public final double[][] centers;
    /** Cost of the last Lloyd iteration's assignment (MLlib's trainingCost). */
    public final double trainingCost;
    /** Number of points nearest to each final centre. */
    public final long[] clusterSizes;
    /** Cost of the final centres (sum of w * distance). */
    public final double finalCost;
    public final int iterations;
    public final boolean converged;
    /** "gpu" if every pass ran on a GPU, "cpu" if none did, "mixed" otherwise. */
    public final String backend;
    /** Per iteration: {cost, maxShift}. */
    public final List<double[]> history;
    public final long numPoints;

    public KMeansResult(double[][] centers, double trainingCost, long[] clusterSizes, double finalCost, int iterations,
                        boolean converged, String backend, List<double[]> history, long numPoints) {
        this.centers = centers;
        this.trainingCost = trainingCost;
        this.clusterSizes = clusterSizes;
        this.finalCost = finalCost;
        this.iterations = iterations;
        this.converged = converged;
        this.backend = backend;
        this.history = history;
        this.numPoints = numPoints;
    }
}
