package io.sparkgpu.kmeans;

import static io.sparkgpu.ml.ParamChecks.require;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.ml.DoubleMatrixParam;
import io.sparkgpu.ml.HasSeed;
import io.sparkgpu.ml.ParamChecks;
import java.io.Serializable;

/**
 * Settings of one k-means fit, and the one place of their rules. The estimator's params ({@link GpuKMeansParams})
 * use the static checks below as their validators and map onto these fields; {@link #validate()} runs them all at
 * {@link KMeansTrainer#train}'s entry, whoever built the config (estimator, CLI through the estimator, benchmark).
 * The initial values are the defaults of every surface.
 */
public final class KMeansConfig implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final String INIT_RANDOM = "random";
    public static final String INIT_PARALLEL = "k-means||";
    public static final String EUCLIDEAN = "euclidean";
    public static final String COSINE = "cosine";

    public int k = 2;
    public int maxIter = 20;
    public double tol = 1e-4;
    public long seed = HasSeed.defaultSeed(GpuKMeans.class);
    public String initMode = INIT_PARALLEL;
    public int initSteps = 2;
    public boolean cosine;
    /** null: the setting spark.sparkgpu.backend, else auto (resolved by {@link #validate()}). */
    public Backend backend;
    /** Optional k x d starting centres; when set, initMode is not used. */
    public double[][] initialCenters;

    /** k: at least 2 clusters (as MLlib: k &gt; 1). */
    public static void checkK(int k) {
        require(k >= 2, "k", ">= 2", k);
    }

    public static void checkMaxIter(int maxIter) {
        require(maxIter >= 0, "maxIter", ">= 0", maxIter);
    }

    /** tol: largest centre movement that still counts as converged; finite and &gt;= 0. */
    public static void checkTol(double tol) {
        require(tol >= 0 && !Double.isInfinite(tol), "tol", "a finite number >= 0", tol);
    }

    public static void checkInitMode(String initMode) {
        ParamChecks.oneOf("initMode", INIT_RANDOM, INIT_PARALLEL).check(initMode);
    }

    /** initSteps: rounds of k-means|| sampling, &gt; 0. */
    public static void checkInitSteps(int initSteps) {
        require(initSteps >= 1, "initSteps", ">= 1", initSteps);
    }

    public static void checkDistanceMeasure(String distanceMeasure) {
        ParamChecks.oneOf("distanceMeasure", EUCLIDEAN, COSINE).check(distanceMeasure);
    }

    /** MLlib's solver values, accepted for porting; every value runs the same engine (packed blocks). */
    public static final String[] SOLVERS = {"auto", "row", "block"};

    /**
     * solver: {@code auto|row|block} as MLlib. Accepted and ignored: this engine always packs rows into blocks
     * (GPU or CPU twin), and every value gives the same bits.
     */
    public static void checkSolver(String solver) {
        ParamChecks.oneOf("solver", SOLVERS).check(solver);
    }

    /**
     * maxBlockSizeInMB: finite, &gt;= 0 as MLlib (0: automatic). Accepted and ignored: block and memory sizes come
     * from the engine settings ({@code spark.sparkgpu.*}), and the result does not depend on them.
     */
    public static void checkMaxBlockSizeInMB(double mb) {
        require(mb >= 0 && !Double.isInfinite(mb), "maxBlockSizeInMB", "a finite number >= 0", mb);
    }

    /** initialCenters: non-empty, rectangular, finite ({@link DoubleMatrixParam#check}). */
    public static void checkInitialCenters(double[][] centers) {
        DoubleMatrixParam.check(centers, "initialCenters");
    }

    /** Every rule, the cross-setting ones included; resolves a null backend. Errors name the setting. */
    public KMeansConfig validate() {
        checkK(k);
        checkMaxIter(maxIter);
        checkTol(tol);
        checkInitMode(initMode);
        checkInitSteps(initSteps);
        if (initialCenters != null) {
            checkInitialCenters(initialCenters);
            require(initialCenters.length == k, "initialCenters", "k=" + k + " centres", initialCenters.length
                    + " centres");
        }
        backend = SparkGpuConf.backend(backend);
        return this;
    }
}
