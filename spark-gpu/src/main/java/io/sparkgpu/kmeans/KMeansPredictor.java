package io.sparkgpu.kmeans;

import io.sparkgpu.common.Features;
import io.sparkgpu.ml.DoubleMatrixParam;
import java.io.Serializable;

/**
 * Nearest-centre lookup for single points on the CPU (O(k d) per point), with the same validation and the
 * same arithmetic as the batch prediction of {@link KMeansTrainer#predict}. The centres are validated and
 * flattened once, so it is cheap to call per row (the SQL function ships one through a broadcast).
 */
public final class KMeansPredictor implements Serializable {
    private static final long serialVersionUID = 1L;

    private final double[] flat;
    private final int k;
    private final int d;
    private final boolean cosine;

    public KMeansPredictor(double[][] centers, boolean cosine) {
        DoubleMatrixParam.check(centers, "clusterCenters");
        this.k = centers.length;
        this.d = centers[0].length;
        this.cosine = cosine;
        this.flat = KMeansTrainer.flattenInitial(centers, d, cosine);
    }

    /**
     * Index of the centre nearest to {@code features}.
     *
     * @param what names the input in error messages (wrong size, non-finite values, zero vector under cosine)
     */
    public int predict(double[] features, String what) {
        if (features.length != d) {
            throw new IllegalArgumentException(what + " has size " + features.length + " but the model has "
                    + d + " features");
        }
        double[] p = features.clone();
        Features.clean(p, what, cosine);
        return KMeansCpu.nearest(p, flat, k, d, cosine);
    }

    public int k() {
        return k;
    }

    public int numFeatures() {
        return d;
    }

    public boolean cosine() {
        return cosine;
    }
}
