package io.sparkgpu.tsne;

import java.io.Serializable;

/**
 * What a fitted map keeps to embed new rows ({@link GpuTsneModel#transform}, {@link
 * io.sparkgpu.tsne.optimize.TsneTransform}): the reference points' features as the kNN used them (n x d floats, in
 * training row order), the PCA applied to the input before that (inputDim x d column basis, or null), and the
 * fit's perplexity and neighbour count. Memory: 4 n d bytes on the driver and, broadcast, on the executors that
 * embed new rows.
 */
public final class TsneReference implements Serializable {
    private static final long serialVersionUID = 1L;

    public final float[] features;
    public final int n;
    /** Features per reference point (after the PCA). */
    public final int d;
    /** Features per input row (before the PCA; = d without one). */
    public final int inputDim;
    /** Row-major inputDim x d principal axes ({@code TsneInit.project}'s basis), or null. */
    public final double[] pca;
    public final double perplexity;
    public final int k;

    public TsneReference(float[] features, int n, int d, int inputDim, double[] pca, double perplexity, int k) {
        if (n < 1 || d < 1 || features == null || features.length != (long) n * d) {
            throw new IllegalArgumentException("reference features must hold n * d = " + ((long) n * d)
                    + " values, n >= 1, d >= 1; got " + (features == null ? "null" : features.length));
        }
        if (pca == null ? inputDim != d : pca.length != (long) inputDim * d) {
            throw new IllegalArgumentException("reference PCA basis must hold inputDim * d = " + ((long) inputDim * d)
                    + " values, got " + (pca == null ? "none for inputDim " + inputDim : pca.length));
        }
        for (int t = 0; t < features.length; t++) {
            if (!Float.isFinite(features[t])) {
                throw new IllegalArgumentException("reference features hold a non-finite value at row " + t / d);
            }
        }
        TsneConfig.checkPerplexity(perplexity);
        TsneConfig.checkNeighbourCount(k, n);
        TsneConfig.checkKAbovePerplexity(k, perplexity);
        this.features = features;
        this.n = n;
        this.d = d;
        this.inputDim = inputDim;
        this.pca = pca;
        this.perplexity = perplexity;
        this.k = k;
    }

    /** An input row (inputDim values) as the reference's floats: projected when there is a PCA. */
    public void encode(double[] x, float[] out, int at) {
        double[] v = pca == null ? x : io.sparkgpu.tsne.init.TsneInit.project(x, pca, inputDim, d);
        for (int a = 0; a < d; a++) {
            out[at + a] = (float) v[a];
        }
    }
}
