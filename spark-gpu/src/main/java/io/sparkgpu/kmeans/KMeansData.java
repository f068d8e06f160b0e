package io.sparkgpu.kmeans;

import java.io.Serializable;

/**
 * One partition's points packed once into primitive arrays: {@code x} row-major (point i at
 * x[i*d .. i*d+d)), {@code w} the weights. For the cosine distance the rows are already unit vectors.
 * {@code residencyKey} names the rows for the GPU resident cache (null: do not keep on the device).
 */
public final class KMeansData implements Serializable {
    private static final long serialVersionUID = 1L;
    public final double[] x;
    public final double[] w;
    public final int n;
    public final int d;
    public final String residencyKey;

    public KMeansData(double[] x, double[] w, int n, int d, String residencyKey) {
        if (n < 0 || d < 0 || (long) n * d != x.length || w.length != n) {
            throw new IllegalArgumentException("inconsistent packed partition: n=" + n + " d=" + d
                    + " x.length=" + x.length + " w.length=" + w.length);
        }
        this.x = x;
        this.w = w;
        this.n = n;
        this.d = d;
        this.residencyKey = residencyKey;
    }

    public KMeansData withResidencyKey(String key) {
        return new KMeansData(x, w, n, d, key);
    }
}
