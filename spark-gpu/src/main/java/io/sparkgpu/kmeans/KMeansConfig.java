package io.sparkgpu.kmeans;

import io.sparkgpu.cuda.Backend;
import java.io.Serializable;

/** Settings of one k-means fit (the estimator's Params map onto these). */
public final class KMeansConfig implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final String INIT_RANDOM = "random";
    public static final String INIT_PARALLEL = "k-means||";

    public int k = 2;
    public int maxIter = 20;
    public double tol = 1e-4;
    public long seed = 42L;
    public String initMode = INIT_PARALLEL;
    public int initSteps = 2;
    public boolean cosine;
    public Backend backend = Backend.AUTO;
    /** Optional k x d starting centres; when set, initMode is not used. */
    public double[][] initialCenters;

    public void validate() {
        if (k < 2) {
            throw new IllegalArgumentException("k must be >= 2, got " + k);
        }
        if (maxIter < 0) {
            throw new IllegalArgumentException("maxIter must be >= 0, got " + maxIter);
        }
        if (!(tol >= 0) || Double.isInfinite(tol)) {
            throw new IllegalArgumentException("tol must be a finite number >= 0, got " + tol);
        }
        if (!INIT_RANDOM.equals(initMode) && !INIT_PARALLEL.equals(initMode)) {
            throw new IllegalArgumentException("initMode must be 'random' or 'k-means||', got '" + initMode + "'");
        }
        if (initSteps < 1) {
            throw new IllegalArgumentException("initSteps must be > 0, got " + initSteps);
        }
        if (initialCenters != null && initialCenters.length != k) {
            throw new IllegalArgumentException("initialCenters has " + initialCenters.length + " centres but k=" + k);
        }
    }
}
