package io.sparkgpu.tsne;

import java.io.Serializable;

/** The outcome of one t-SNE optimisation: the centred embedding, the KL history and the time per phase. */
public final class TsneResult implements Serializable {
    private static final long serialVersionUID = 1L;

    public final int n;
    public final int dim;
    /** Row-major n x dim, row i being point i (input order), centred (exact mean removed). */
    public final double[] embedding;
    /** Iterations (1-based) at which KL was evaluated; the last entry is the final, centred embedding. */
    public final int[] klIterations;
    public final double[] klValues;
    /** "single" or "distributed". */
    public final String mode;
    public final TsneTimings timings;

    public TsneResult(int n, int dim, double[] embedding, int[] klIterations, double[] klValues, String mode,
            TsneTimings timings) {
        this.n = n;
        this.dim = dim;
        this.embedding = embedding;
        this.klIterations = klIterations;
        this.klValues = klValues;
        this.mode = mode;
        this.timings = timings;
    }

    /** KL divergence of the final embedding (NaN when not evaluated). */
    public double finalKl() {
        return klValues.length == 0 ? Double.NaN : klValues[klValues.length - 1];
    }

    /** Point i's coordinates. */
    public double[] point(int i) {
        double[] out = new double[dim];
        System.arraycopy(embedding, i * dim, out, 0, dim);
        return out;
    }
}
