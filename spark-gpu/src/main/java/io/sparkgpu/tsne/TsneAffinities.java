package io.sparkgpu.tsne;

import io.sparkgpu.cuda.Backend;

/**
 * kNN graph and perplexity-calibrated affinities (local, one process). CONTRACT STUB: bodies are filled in by the
 * kNN/affinities work; signatures are shared with the optimiser and must stay.
 */
public final class TsneAffinities {
    private TsneAffinities() {
    }

    /** Exact k nearest neighbours of all n rows of x (row-major n x d), self excluded, ties by index. */
    public static KnnGraph knn(float[] x, int n, int d, int k, Backend backend) {
        throw new UnsupportedOperationException("TsneAffinities.knn: not implemented yet");
    }

    /**
     * kNN of the query rows (global indices queryOffset..queryOffset+nq-1) among the reference rows (global
     * indices refOffset..refOffset+nr-1), self excluded; n is the total number of points. Combine the results for
     * several reference blocks with {@link #merge}.
     */
    public static KnnGraph knnBlock(float[] query, int queryOffset, int nq, float[] ref, int refOffset, int nr,
            int d, int k, int n, Backend backend) {
        throw new UnsupportedOperationException("TsneAffinities.knnBlock: not implemented yet");
    }

    /** Top-k merge of two graphs of the same rows (ties by index); equals the kNN over the union of references. */
    public static KnnGraph merge(KnnGraph a, KnnGraph b) {
        throw new UnsupportedOperationException("TsneAffinities.merge: not implemented yet");
    }

    /** Conditional p_{j|i} (rows x k, each row summing to 1), bandwidth by binary search to the perplexity. */
    public static double[] conditional(KnnGraph g, double perplexity, Backend backend) {
        throw new UnsupportedOperationException("TsneAffinities.conditional: not implemented yet");
    }

    /** P = (P_cond + P_cond^T) / (2n) as one slice holding all n rows; symmetric, sums to 1. */
    public static SparseRows symmetrize(KnnGraph g, double[] pcond) {
        throw new UnsupportedOperationException("TsneAffinities.symmetrize: not implemented yet");
    }

    /** Stochastic-graph mode: weighted edges (i, j, w) symmetrised and normalised to sum 1, all n rows. */
    public static SparseRows fromEdges(int n, int[] i, int[] j, double[] w) {
        throw new UnsupportedOperationException("TsneAffinities.fromEdges: not implemented yet");
    }
}
