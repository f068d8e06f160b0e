package io.sparkgpu.kmeans;

import io.sparkgpu.ml.DoubleMatrixParam;
import io.sparkgpu.ml.HasSeed;
import io.sparkgpu.ml.HasWeightCol;
import io.sparkgpu.ml.ParamChecks;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;

/**
 * The params of {@link GpuKMeans}: MLlib's KMeans names and defaults (k, maxIter, tol, seed, initMode, initSteps,
 * distanceMeasure, weightCol, featuresCol, predictionCol; solver and maxBlockSizeInMB accepted and ignored) plus
 * backend and initialCenters. Each validator is the rule
 * of {@link KMeansConfig}; the defaults are {@link KMeansConfig}'s initial values.
 */
public interface GpuKMeansParams<T extends GpuKMeansParams<T>>
        extends GpuKMeansModelParams<T>, HasWeightCol<T>, HasSeed<T> {

    /** Number of clusters (&gt; 1, default 2). */
    default IntParam k() {
        return slot("k", o -> new IntParam(o, "k", "Number of clusters to create (>= 2).",
                ParamChecks.intValidator(KMeansConfig::checkK)));
    }

    /** Maximum number of iterations (&gt;= 0, default 20). */
    default IntParam maxIter() {
        return slot("maxIter", o -> new IntParam(o, "maxIter", "Maximum number of Lloyd iterations (>= 0).",
                ParamChecks.intValidator(KMeansConfig::checkMaxIter)));
    }

    /** Convergence tolerance on centre movement (finite, &gt;= 0, default 1e-4). */
    default DoubleParam tol() {
        return slot("tol", o -> new DoubleParam(o, "tol", "Convergence tolerance: training stops once no centre "
                + "moved by more than tol in an iteration (finite, >= 0).", ParamChecks.doubleValidator(KMeansConfig::checkTol)));
    }

    /** "random" or "k-means||" (default). */
    default Param<String> initMode() {
        return slot("initMode", o -> new Param<>(o, "initMode", "Initialisation algorithm: 'random' picks k distinct "
                + "points, 'k-means||' is the parallel k-means++ of Bahmani et al. (2012).",
                ParamChecks.validator(KMeansConfig::checkInitMode)));
    }

    /** k-means|| rounds (&gt; 0, default 2). */
    default IntParam initSteps() {
        return slot("initSteps", o -> new IntParam(o, "initSteps", "Number of sampling rounds of k-means|| (>= 1).",
                ParamChecks.intValidator(KMeansConfig::checkInitSteps)));
    }

    /** Optional k x d starting centres (no default). */
    default DoubleMatrixParam initialCenters() {
        return slot("initialCenters", o -> new DoubleMatrixParam(o, "initialCenters", "Optional k x d starting "
                + "centres; when set, initMode and initSteps are not used."));
    }

    /** MLlib's solver (auto|row|block, default auto): accepted for porting and ignored ({@link KMeansConfig#checkSolver}). */
    default Param<String> solver() {
        return slot("solver", o -> new Param<>(o, "solver", "MLlib's solver (auto|row|block), accepted for porting and "
                + "ignored: every value runs the same packed-block engine with the same result.",
                ParamChecks.validator(KMeansConfig::checkSolver)));
    }

    /** MLlib's maxBlockSizeInMB (&gt;= 0, default 0): accepted for porting and ignored. */
    default DoubleParam maxBlockSizeInMB() {
        return slot("maxBlockSizeInMB", o -> new DoubleParam(o, "maxBlockSizeInMB", "MLlib's block size limit (finite, "
                + ">= 0; 0: automatic), accepted for porting and ignored: sizes come from the spark.sparkgpu.* "
                + "settings and do not change the result.", ParamChecks.doubleValidator(KMeansConfig::checkMaxBlockSizeInMB)));
    }

    default String getSolver() {
        return getOrDefault(solver());
    }

    default double getMaxBlockSizeInMB() {
        return (Double) getOrDefault(maxBlockSizeInMB());
    }

    default T setSolver(String value) {
        return with(solver(), value);
    }

    default T setMaxBlockSizeInMB(double value) {
        return with(maxBlockSizeInMB(), value);
    }

    default int getK() {
        return (Integer) getOrDefault(k());
    }

    default int getMaxIter() {
        return (Integer) getOrDefault(maxIter());
    }

    default double getTol() {
        return (Double) getOrDefault(tol());
    }

    default String getInitMode() {
        return getOrDefault(initMode());
    }

    default int getInitSteps() {
        return (Integer) getOrDefault(initSteps());
    }

    /** A copy of the starting centres, or null when unset. */
    default double[][] getInitialCenters() {
        return DoubleMatrixParam.copy(valueOrNull(initialCenters()));
    }

    default T setK(int value) {
        return with(k(), value);
    }

    default T setMaxIter(int value) {
        return with(maxIter(), value);
    }

    default T setTol(double value) {
        return with(tol(), value);
    }

    default T setInitMode(String value) {
        return with(initMode(), value);
    }

    default T setInitSteps(int value) {
        return with(initSteps(), value);
    }

    default T setDistanceMeasure(String value) {
        return with(distanceMeasure(), value);
    }

    /** Starting centres (k rows of the feature size), copied; null clears them. */
    default T setInitialCenters(double[][] centers) {
        return withOrClear(initialCenters(), DoubleMatrixParam.copy(centers));
    }

    /** The engine settings these params describe (validated by {@link KMeansTrainer#train}). */
    default KMeansConfig toConfig() {
        KMeansConfig cfg = new KMeansConfig();
        cfg.k = getK();
        cfg.maxIter = getMaxIter();
        cfg.tol = getTol();
        cfg.seed = getSeed();
        cfg.initMode = getInitMode();
        cfg.initSteps = getInitSteps();
        cfg.cosine = KMeansConfig.COSINE.equals(getDistanceMeasure());
        cfg.backend = backendSetting();
        cfg.initialCenters = getInitialCenters();
        return cfg;
    }
}
