package io.sparkgpu.kmeans;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.ml.DoubleMatrixParam;
import io.sparkgpu.ml.ParamsIO;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.LongParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.types.StructType;

/**
 * k-means clustering as a Spark ML {@link Estimator}, a drop-in for
 * {@code org.apache.spark.ml.clustering.KMeans}: the same Param names, defaults and validation, plus
 * {@code backend} (auto|gpu|cpu) and {@code initialCenters}.
 *
 * <p><b>Algorithm.</b> Lloyd's algorithm (S. P. Lloyd, "Least squares quantization in PCM", IEEE Trans.
 * Information Theory 28(2), 1982) initialised either with k distinct points ({@code random}) or with
 * k-means|| (B. Bahmani, B. Moseley, A. Vattani, R. Kumar, S. Vassilvitskii, "Scalable K-Means++",
 * PVLDB 5(7), 2012). Training stops when no centre moves by more than {@code tol} or after {@code maxIter}
 * iterations, as in MLlib.
 *
 * <p><b>Execution and cost.</b> The input is packed once per partition into primitive arrays and cached.
 * Each iteration is one pass per partition, on the GPU or on its CPU twin, costing O(n k d) for n rows of
 * d features, followed by a driver-side combine of O(P k d) for P partitions. Partitions return their
 * per-cluster sums, weights, counts and cost as 128-bit fixed-point integers, so the combiner is
 * <i>exact</i>: the result does not depend on the number or order of partitions, nor on which of them ran on
 * a GPU. With {@code backend=auto} a partition falls back to the CPU twin (bitwise-identical results) when
 * no GPU is usable. Initialisation with k-means|| costs {@code initSteps} further passes plus a local
 * k-means++ on the O(k * initSteps) candidates. See {@link KMeansTrainer}.
 *
 * <p>Features may be an ml {@code Vector} column or an {@code array<numeric>} column; NaN, infinite values,
 * vectors of different sizes (and zero vectors under cosine) are rejected with an error naming the column.
 * {@code weightCol}, when set, must be numeric with finite weights {@code >= 0}.
 *
 * <p>Persistence uses MLlib's metadata layout ({@link ParamsIO}), so the estimator and its model can be
 * stages of a saved {@code Pipeline}.
 */
public class GpuKMeans extends Estimator<GpuKMeansModel> implements MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final IntParam k;
    private final IntParam maxIter;
    private final DoubleParam tol;
    private final LongParam seed;
    private final Param<String> initMode;
    private final IntParam initSteps;
    private final Param<String> distanceMeasure;
    private final Param<String> weightCol;
    private final Param<String> featuresCol;
    private final Param<String> predictionCol;
    private final Param<String> backend;
    private final DoubleMatrixParam initialCenters;
    private transient KMeansProgress progress;

    public GpuKMeans() {
        this(Identifiable.randomUID("gpukmeans"));
    }

    public GpuKMeans(String uid) {
        this.uid = uid;
        k = GpuKMeansParams.k(this);
        maxIter = GpuKMeansParams.maxIter(this);
        tol = GpuKMeansParams.tol(this);
        seed = GpuKMeansParams.seed(this);
        initMode = GpuKMeansParams.initMode(this);
        initSteps = GpuKMeansParams.initSteps(this);
        distanceMeasure = GpuKMeansParams.distanceMeasure(this);
        weightCol = GpuKMeansParams.weightCol(this);
        featuresCol = GpuKMeansParams.featuresCol(this);
        predictionCol = GpuKMeansParams.predictionCol(this);
        backend = GpuKMeansParams.backend(this);
        initialCenters = GpuKMeansParams.initialCenters(this);
        setDefault(k, GpuKMeansParams.DEFAULT_K);
        setDefault(maxIter, GpuKMeansParams.DEFAULT_MAX_ITER);
        setDefault(tol, GpuKMeansParams.DEFAULT_TOL);
        // like MLlib's HasSeed: the hash of the class name
        setDefault(seed, (long) GpuKMeans.class.getName().hashCode());
        setDefault(initMode, KMeansConfig.INIT_PARALLEL);
        setDefault(initSteps, GpuKMeansParams.DEFAULT_INIT_STEPS);
        setDefault(distanceMeasure, GpuKMeansParams.EUCLIDEAN);
        setDefault(featuresCol, GpuKMeansParams.DEFAULT_FEATURES);
        setDefault(predictionCol, GpuKMeansParams.DEFAULT_PREDICTION);
        setDefault(backend, GpuKMeansParams.DEFAULT_BACKEND);
    }

    @Override
    public String uid() {
        return uid;
    }

    // ------------------------------------------------------------------ params

    /** Number of clusters (> 1, default 2). */
    public IntParam k() {
        return k;
    }

    /** Maximum number of iterations (>= 0, default 20). */
    public IntParam maxIter() {
        return maxIter;
    }

    /** Convergence tolerance on centre movement (>= 0, default 1e-4). */
    public DoubleParam tol() {
        return tol;
    }

    /** Random seed (default: hash of this class name). */
    public LongParam seed() {
        return seed;
    }

    /** "random" or "k-means||" (default). */
    public Param<String> initMode() {
        return initMode;
    }

    /** k-means|| rounds (> 0, default 2). */
    public IntParam initSteps() {
        return initSteps;
    }

    /** "euclidean" (default) or "cosine". */
    public Param<String> distanceMeasure() {
        return distanceMeasure;
    }

    /** Optional numeric weight column (no default: unweighted). */
    public Param<String> weightCol() {
        return weightCol;
    }

    /** Features column (default "features"). */
    public Param<String> featuresCol() {
        return featuresCol;
    }

    /** Prediction column (default "prediction"). */
    public Param<String> predictionCol() {
        return predictionCol;
    }

    /** "auto" (default), "gpu" or "cpu". */
    public Param<String> backend() {
        return backend;
    }

    /** Optional k x d starting centres (no default). */
    public DoubleMatrixParam initialCenters() {
        return initialCenters;
    }

    public int getK() {
        return (Integer) getOrDefault(k);
    }

    public int getMaxIter() {
        return (Integer) getOrDefault(maxIter);
    }

    public double getTol() {
        return (Double) getOrDefault(tol);
    }

    public long getSeed() {
        return (Long) getOrDefault(seed);
    }

    public String getInitMode() {
        return getOrDefault(initMode);
    }

    public int getInitSteps() {
        return (Integer) getOrDefault(initSteps);
    }

    public String getDistanceMeasure() {
        return getOrDefault(distanceMeasure);
    }

    /** The weight column; throws {@link java.util.NoSuchElementException} when unset (as MLlib does). */
    public String getWeightCol() {
        return getOrDefault(weightCol);
    }

    public String getFeaturesCol() {
        return getOrDefault(featuresCol);
    }

    public String getPredictionCol() {
        return getOrDefault(predictionCol);
    }

    public String getBackend() {
        return getOrDefault(backend);
    }

    /** A copy of the starting centres, or null when unset. */
    public double[][] getInitialCenters() {
        return isDefined(initialCenters) ? DoubleMatrixParam.copy(getOrDefault(initialCenters)) : null;
    }

    public GpuKMeans setK(int value) {
        set(k, value);
        return this;
    }

    public GpuKMeans setMaxIter(int value) {
        set(maxIter, value);
        return this;
    }

    public GpuKMeans setTol(double value) {
        set(tol, value);
        return this;
    }

    public GpuKMeans setSeed(long value) {
        set(seed, value);
        return this;
    }

    public GpuKMeans setInitMode(String value) {
        set(initMode, value);
        return this;
    }

    public GpuKMeans setInitSteps(int value) {
        set(initSteps, value);
        return this;
    }

    public GpuKMeans setDistanceMeasure(String value) {
        set(distanceMeasure, value);
        return this;
    }

    /** Sets the weight column; null or "" means unweighted. */
    public GpuKMeans setWeightCol(String value) {
        if (value == null) {
            clear(weightCol);
        } else {
            set(weightCol, value);
        }
        return this;
    }

    public GpuKMeans setFeaturesCol(String value) {
        set(featuresCol, value);
        return this;
    }

    public GpuKMeans setPredictionCol(String value) {
        set(predictionCol, value);
        return this;
    }

    /** "auto", "gpu" or "cpu" (case-insensitive; stored in lower case). */
    public GpuKMeans setBackend(String value) {
        set(backend, Backend.parse(value, "backend").id());
        return this;
    }

    /** Starting centres (k rows of the feature size), copied; null clears them. */
    public GpuKMeans setInitialCenters(double[][] centers) {
        if (centers == null) {
            clear(initialCenters);
        } else {
            set(initialCenters, DoubleMatrixParam.copy(centers));
        }
        return this;
    }

    /** Listener called on the driver after every iteration (not a Param: neither copied to models nor saved). */
    public GpuKMeans setProgress(KMeansProgress listener) {
        this.progress = listener;
        return this;
    }

    public KMeansProgress getProgress() {
        return progress;
    }

    // ------------------------------------------------------------------ fitting

    /** The weight column, or null when unweighted. */
    String weightColOrNull() {
        if (!isDefined(weightCol)) {
            return null;
        }
        String w = getOrDefault(weightCol);
        return w == null || w.isEmpty() ? null : w;
    }

    /** The engine settings these params describe, validated (errors name the param). */
    KMeansConfig toConfig() {
        KMeansConfig cfg = new KMeansConfig();
        cfg.k = getK();
        cfg.maxIter = getMaxIter();
        cfg.tol = getTol();
        cfg.seed = getSeed();
        cfg.initMode = getInitMode();
        cfg.initSteps = getInitSteps();
        cfg.cosine = GpuKMeansParams.COSINE.equals(getDistanceMeasure());
        cfg.backend = Backend.parse(getBackend(), "backend");
        cfg.initialCenters = getInitialCenters();
        cfg.validate();
        return cfg;
    }

    /**
     * Trains on {@code dataset}. Validates params and columns first ({@link IllegalArgumentException} naming
     * the param or column), then runs {@link KMeansTrainer#train}; the model gets this estimator as parent,
     * the shared param values and a {@link GpuKMeansSummary}.
     */
    @Override
    public GpuKMeansModel fit(Dataset<?> dataset) {
        KMeansConfig cfg = toConfig();
        transformSchema(dataset.schema());
        KMeansResult r = KMeansTrainer.train(dataset, getFeaturesCol(), weightColOrNull(), cfg, progress);
        GpuKMeansModel model = copyValues(new GpuKMeansModel(uid, r.centers), ParamMap.empty());
        model.setSummary(GpuKMeansSummary.from(r));
        return model.setParent(this);
    }

    /** Checks features (vector or array of numbers), weights (numeric) and appends predictionCol (int). */
    @Override
    public StructType transformSchema(StructType schema) {
        return GpuKMeansParams.appendPrediction(schema, getFeaturesCol(), weightColOrNull(), getPredictionCol());
    }

    @Override
    public GpuKMeans copy(ParamMap extra) {
        GpuKMeans c = defaultCopy(extra);
        c.progress = progress;
        return c;
    }

    // ------------------------------------------------------------------ persistence

    /** Writes the params (MLlib metadata layout) under {@code path/metadata}. */
    @Override
    public MLWriter write() {
        return new Writer(this);
    }

    public static MLReader<GpuKMeans> read() {
        return new Reader();
    }

    public static GpuKMeans load(String path) {
        return read().load(path);
    }

    private static final class Writer extends MLWriter {
        private final GpuKMeans instance;

        Writer(GpuKMeans instance) {
            this.instance = instance;
        }

        @Override
        public void saveImpl(String path) {
            ParamsIO.saveMetadata(instance, path, sparkSession(), null);
        }
    }

    private static final class Reader extends MLReader<GpuKMeans> {
        @Override
        public GpuKMeans load(String path) {
            ParamsIO.Metadata md = ParamsIO.loadMetadata(path, sparkSession(), GpuKMeans.class.getName());
            GpuKMeans e = new GpuKMeans(md.uid());
            md.applyTo(e);
            return e;
        }
    }
}
