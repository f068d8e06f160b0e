package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.spark.GpuTasks;
import io.sparkgpu.ml.HasFeaturesCol;
import io.sparkgpu.ml.HasPredictionCol;
import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.types.StructType;

/**
 * Isotonic regression as a Spark ML {@link Estimator}, a drop-in for
 * {@code org.apache.spark.ml.regression.IsotonicRegression}: the same Param names and defaults (isotonic,
 * featureIndex, weightCol, featuresCol, labelCol, predictionCol) and the same model (boundaries, predictions,
 * linear interpolation), plus {@code loss} (l2|l1), {@code algorithm} (pava|mls), {@code increasing}
 * (true|false|auto), {@code outOfBounds} (clip|nan|error), {@code yMin}/{@code yMax} and {@code backend}.
 *
 * <p><b>Algorithms.</b> Least squares: pool adjacent violators (Ayer et al., Ann. Math. Statist. 26, 1955) per
 * partition, on the GPU as chunked PAVA plus pairwise merges (O(n log n) work) or as parallel minimum lower sets
 * (Best and Chakravarti, Math. Programming 47, 1990; O(n^2)); on the CPU twin serial PAVA, O(n). L1: PAVA with
 * lower weighted medians, O(n log^2 n), exact maximin solution u_i = max_{k<=i} min_{l>=i} med(k..l).
 *
 * <p><b>Distribution and exactness.</b> One pass packs the rows into primitive arrays; small inputs are solved
 * on the driver, larger ones are range-partitioned by feature as arrays, each range sorted and pooled (MLlib's
 * duplicate pooling: weighted mean label, summed weight, zero weights dropped), solved, and merged pairwise in a
 * tree by the decomposition theorem; the driver only receives the final blocks. Block
 * sums are 128-bit fixed-point integers and every comparison is exact, so the model is bitwise identical for any
 * number of partitions and either backend. See {@link IsotonicTrainer}.
 *
 * <p>Bad input (NaN or infinite label, feature or weight, negative weight, null values, featureIndex out of range,
 * an empty input or only zero weights) raises an {@link IllegalArgumentException} naming the column or parameter.
 */
public class GpuIsotonicRegression extends Estimator<GpuIsotonicRegressionModel>
        implements GpuIsotonicParams<GpuIsotonicRegression>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final ParamSlots slots = new ParamSlots();
    private int numPartitions;

    public GpuIsotonicRegression() {
        this(Identifiable.randomUID("gpuIsoReg"));
    }

    public GpuIsotonicRegression(String uid) {
        this.uid = uid;
        setIsotonicDefaults(this);
    }

    /** The defaults (MLlib's where MLlib has the param, else {@link IsotonicConfig}'s) of the estimator and model. */
    static void setIsotonicDefaults(GpuIsotonicModelParams<?> p) {
        p.setDefault(p.isotonic(), true);
        p.setDefault(p.featureIndex(), 0);
        p.setDefault(p.featuresCol(), HasFeaturesCol.DEFAULT);
        p.setDefault(p.labelCol(), "label");
        p.setDefault(p.predictionCol(), HasPredictionCol.DEFAULT);
        p.setDefault(p.loss(), "l2");
        p.setDefault(p.algorithm(), "pava");
        p.setDefault(p.outOfBounds(), "clip");
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    /**
     * Feature ranges of the fit's range path (not a Param: it does not change the model, only how the work is
     * split); 0 (default): with a GPU backend (least squares, PAVA) one range when one executor holds every GPU
     * and all rows fit in one device (no shuffle), else one per GPU; otherwise the input's number of partitions. Inputs of at most {@value IsotonicTrainer#LOCAL_ROWS} rows are solved on the driver regardless.
     */
    public GpuIsotonicRegression setNumPartitions(int n) {
        IsotonicConfig.checkNumPartitions(n);
        numPartitions = n;
        return this;
    }

    public int getNumPartitions() {
        return numPartitions;
    }

    /** The engine settings these params describe, numPartitions included (validated by the trainer). */
    @Override
    public IsotonicConfig toConfig() {
        IsotonicConfig c = GpuIsotonicParams.super.toConfig();
        c.numPartitions = numPartitions;
        return c;
    }

    /**
     * Fits: checks the columns, then runs {@link IsotonicTrainer#train} on {@link #toConfig()}, whose
     * {@link IsotonicConfig#validate()} checks every setting (errors name the param or column). With {@code backend=gpu}
     * and no usable GPU it fails on the driver before any Spark job ({@link GpuTasks#checkGpuBackend}).
     */
    @Override
    public GpuIsotonicRegressionModel fit(Dataset<?> dataset) {
        IsotonicConfig cfg = toConfig();
        transformSchema(dataset.schema());
        GpuTasks.checkGpuBackend(dataset.sparkSession().sparkContext(), SparkGpuConf.backend(cfg.backend),
                IsotonicGpu.MODULE, IsotonicGpu.PROBE_KERNEL, "isotonic regression");
        IsotonicResult r = IsotonicTrainer.train(dataset, getFeaturesCol(), getFeatureIndex(), getLabelCol(),
                weightColOrNull(), cfg);
        GpuIsotonicRegressionModel m = copyValues(new GpuIsotonicRegressionModel(uid, r.boundaries, r.predictions,
                r.isotonic), ParamMap.empty());
        m.setIsotonicInternal(r.isotonic);
        m.setTrainingInfo(r);
        return m.setParent(this);
    }

    @Override
    public StructType transformSchema(StructType schema) {
        return GpuIsotonicRegressionModel.appendPrediction(schema, getFeaturesCol(), getLabelCol(), weightColOrNull(),
                getPredictionCol());
    }

    @Override
    public GpuIsotonicRegression copy(ParamMap extra) {
        GpuIsotonicRegression c = defaultCopy(extra);
        c.numPartitions = numPartitions;
        return c;
    }

    @Override
    public MLWriter write() {
        return ParamsIO.paramsWriter(this);
    }

    public static MLReader<GpuIsotonicRegression> read() {
        return ParamsIO.paramsReader(GpuIsotonicRegression.class, GpuIsotonicRegression::new);
    }

    public static GpuIsotonicRegression load(String path) {
        return read().load(path);
    }
}
