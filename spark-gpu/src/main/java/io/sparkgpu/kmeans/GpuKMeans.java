package io.sparkgpu.kmeans;

import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.ml.HasFeaturesCol;
import io.sparkgpu.ml.HasPredictionCol;
import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import io.sparkgpu.spark.GpuTasks;
import org.apache.spark.ml.Estimator;
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
 *
 * <p>The params and their accessors are declared in {@link GpuKMeansParams} (the rules in {@link KMeansConfig});
 * the seed defaults to {@link io.sparkgpu.ml.HasSeed#defaultSeed} of this class and the backend, when unset, to the setting
 * {@code spark.sparkgpu.backend}, else auto.
 */
public class GpuKMeans extends Estimator<GpuKMeansModel> implements GpuKMeansParams<GpuKMeans>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final ParamSlots slots = new ParamSlots();
    private transient KMeansProgress progress;

    public GpuKMeans() {
        this(Identifiable.randomUID("gpukmeans"));
    }

    /** An estimator with the defaults of {@link KMeansConfig} (backend: unset, see {@link #getBackend()}). */
    public GpuKMeans(String uid) {
        this.uid = uid;
        KMeansConfig d = new KMeansConfig();
        setDefault(k(), d.k);
        setDefault(maxIter(), d.maxIter);
        setDefault(tol(), d.tol);
        setDefault(seed(), d.seed);
        setDefault(initMode(), d.initMode);
        setDefault(initSteps(), d.initSteps);
        setDefault(distanceMeasure(), KMeansConfig.EUCLIDEAN);
        setDefault(solver(), "auto");
        setDefault(maxBlockSizeInMB(), 0.0);
        setDefault(featuresCol(), HasFeaturesCol.DEFAULT);
        setDefault(predictionCol(), HasPredictionCol.DEFAULT);
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
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

    /**
     * Trains on {@code dataset}: checks the columns ({@link IllegalArgumentException} naming the column), then runs
     * {@link KMeansTrainer#train} on {@link #toConfig()}, whose {@link KMeansConfig#validate()} checks every setting
     * (errors name the param). With {@code backend=gpu} and no usable GPU it fails on the driver before any Spark job
     * ({@link GpuTasks#checkGpuBackend}). The model gets this estimator as parent, the shared param values and a
     * {@link GpuKMeansSummary}.
     */
    @Override
    public GpuKMeansModel fit(Dataset<?> dataset) {
        KMeansConfig cfg = toConfig();
        transformSchema(dataset.schema());
        GpuTasks.checkGpuBackend(dataset.sparkSession().sparkContext(), SparkGpuConf.backend(cfg.backend),
                KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL, "k-means");
        KMeansResult r = KMeansTrainer.train(dataset, getFeaturesCol(), weightColOrNull(), cfg, progress);
        GpuKMeansModel model = copyValues(new GpuKMeansModel(uid, r.centers), ParamMap.empty());
        model.setSummary(GpuKMeansSummary.from(r).withPredictions(model.transform(dataset), getFeaturesCol(),
                getPredictionCol()));
        return model.setParent(this);
    }

    /** Checks features (vector or array of numbers), weights (numeric) and appends predictionCol (int). */
    @Override
    public StructType transformSchema(StructType schema) {
        return GpuKMeansModel.appendPrediction(schema, getFeaturesCol(), weightColOrNull(), getPredictionCol());
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
        return ParamsIO.paramsWriter(this);
    }

    public static MLReader<GpuKMeans> read() {
        return ParamsIO.paramsReader(GpuKMeans.class, GpuKMeans::new);
    }

    public static GpuKMeans load(String path) {
        return read().load(path);
    }
}
