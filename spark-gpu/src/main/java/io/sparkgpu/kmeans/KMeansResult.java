package io.sparkgpu.kmeans;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Outcome of {@link KMeansTrainer#train}. */
final class KMeansResult {
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
    /** Where the iterations ran: "local" (driver), "single-stage" (one barrier stage on GPUs) or "job-per-pass". */
    public String mode = "";
    /** Seconds per phase of the fit, in order (pack, initialisation, iterations, final pass, ...); not saved. */
    public Map<String, Double> timings = new LinkedHashMap<>();
    /** Wall seconds of each Lloyd iteration where the loop ran. */
    public double[] iterationSeconds = new double[0];

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

    KMeansResult withTimings(String mode, Map<String, Double> timings, double[] iterationSeconds) {
        this.mode = mode;
        this.timings = new LinkedHashMap<>(timings);
        this.iterationSeconds = iterationSeconds.clone();
        return this;
    }
}
