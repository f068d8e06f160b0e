package io.sparkgpu.spark;

import java.io.Serializable;

/**
 * The features (and weights) of one Spark partition packed into primitive arrays by {@link FeatureIngest}: point
 * {@code i} is {@code x[i * d .. (i + 1) * d)} with weight {@code w[i]}, in the partition's row order.
 */
public final class FeatureBlock implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Row-major n x d values; length exactly {@code n * d}. */
    public final double[] x;
    /** One weight per point (length n); all 1.0 when there is no weight column. */
    public final double[] w;
    public final int n;
    /** Dimension; 0 when {@code n == 0}. */
    public final int d;
    /** Index of the Spark partition these points came from. */
    public final int partition;

    public FeatureBlock(double[] x, double[] w, int n, int d, int partition) {
        if (n < 0 || d < 0 || (n == 0) != (d == 0) || w.length != n || x.length != (long) n * d) {
            throw new IllegalArgumentException("inconsistent feature block: n=" + n + ", d=" + d + ", x.length="
                    + x.length + ", w.length=" + w.length);
        }
        this.x = x;
        this.w = w;
        this.n = n;
        this.d = d;
        this.partition = partition;
    }

    @Override
    public String toString() {
        return "FeatureBlock(partition " + partition + ", n=" + n + ", d=" + d + ")";
    }
}
