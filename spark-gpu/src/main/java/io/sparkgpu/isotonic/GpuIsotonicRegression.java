package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.ml.ParamsIO;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.BooleanParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
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
public class GpuIsotonicRegression extends Estimator<GpuIsotonicRegressionModel> implements MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final GpuIsotonicParams p;
    private int numPartitions;

    public GpuIsotonicRegression() {
        this(Identifiable.randomUID("gpuIsoReg"));
    }

    public GpuIsotonicRegression(String uid) {
        this.uid = uid;
        this.p = GpuIsotonicParams.declare(this);
        p.setDefaults(new GpuIsotonicParams.Defaults() {
            @Override
            public <T> void setDefault(Param<T> param, T value) {
                GpuIsotonicRegression.this.setDefault(param, value);
            }
        });
    }

    @Override
    public String uid() {
        return uid;
    }

    public BooleanParam isotonic() { return p.isotonic; }
    public IntParam featureIndex() { return p.featureIndex; }
    public Param<String> weightCol() { return p.weightCol; }
    public Param<String> featuresCol() { return p.featuresCol; }
    public Param<String> labelCol() { return p.labelCol; }
    public Param<String> predictionCol() { return p.predictionCol; }
    public Param<String> loss() { return p.loss; }
    public Param<String> algorithm() { return p.algorithm; }
    public Param<String> increasing() { return p.increasing; }
    public Param<String> outOfBounds() { return p.outOfBounds; }
    public DoubleParam yMin() { return p.yMin; }
    public DoubleParam yMax() { return p.yMax; }
    public Param<String> backend() { return p.backend; }

    public boolean getIsotonic() { return (Boolean) getOrDefault(p.isotonic); }
    public int getFeatureIndex() { return (Integer) getOrDefault(p.featureIndex); }
    public String getFeaturesCol() { return getOrDefault(p.featuresCol); }
    public String getLabelCol() { return getOrDefault(p.labelCol); }
    public String getPredictionCol() { return getOrDefault(p.predictionCol); }
    public String getLoss() { return getOrDefault(p.loss); }
    public String getAlgorithm() { return getOrDefault(p.algorithm); }
    public String getOutOfBounds() { return getOrDefault(p.outOfBounds); }
    public String getBackend() { return getOrDefault(p.backend); }

    /** The weight column; throws {@link java.util.NoSuchElementException} when unset (as MLlib does). */
    public String getWeightCol() { return getOrDefault(p.weightCol); }

    /** "true", "false" or "auto"; when unset, {@link #getIsotonic()} as a string. */
    public String getIncreasing() { return isDefined(p.increasing) ? getOrDefault(p.increasing) : String.valueOf(getIsotonic()); }

    public GpuIsotonicRegression setIsotonic(boolean v) { set(p.isotonic, v); return this; }
    public GpuIsotonicRegression setFeatureIndex(int v) { set(p.featureIndex, v); return this; }
    public GpuIsotonicRegression setFeaturesCol(String v) { set(p.featuresCol, v); return this; }
    public GpuIsotonicRegression setLabelCol(String v) { set(p.labelCol, v); return this; }
    public GpuIsotonicRegression setPredictionCol(String v) { set(p.predictionCol, v); return this; }
    public GpuIsotonicRegression setLoss(String v) { set(p.loss, v.trim().toLowerCase(java.util.Locale.ROOT)); return this; }
    public GpuIsotonicRegression setAlgorithm(String v) { set(p.algorithm, v.trim().toLowerCase(java.util.Locale.ROOT)); return this; }
    public GpuIsotonicRegression setIncreasing(String v) { set(p.increasing, v.trim().toLowerCase(java.util.Locale.ROOT)); return this; }
    public GpuIsotonicRegression setOutOfBounds(String v) { set(p.outOfBounds, v.trim().toLowerCase(java.util.Locale.ROOT)); return this; }
    public GpuIsotonicRegression setYMin(double v) { set(p.yMin, v); return this; }
    public GpuIsotonicRegression setYMax(double v) { set(p.yMax, v); return this; }
    public GpuIsotonicRegression setBackend(String v) { set(p.backend, Backend.parse(v, "backend").id()); return this; }

    /** Sets the weight column; null or "" means unweighted. */
    public GpuIsotonicRegression setWeightCol(String v) {
        if (v == null) {
            clear(p.weightCol);
        } else {
            set(p.weightCol, v);
        }
        return this;
    }

    /**
     * Feature ranges of the fit's range path (not a Param: it does not change the model, only how the work is
     * split); 0 (default): one range per GPU with a GPU backend (least squares, PAVA), else the input's number of
     * partitions. Inputs of at most {@value IsotonicTrainer#LOCAL_ROWS} rows are solved on the driver regardless.
     */
    public GpuIsotonicRegression setNumPartitions(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("numPartitions must be >= 0, got " + n);
        }
        numPartitions = n;
        return this;
    }

    String weightColOrNull() {
        if (!isDefined(p.weightCol)) {
            return null;
        }
        String w = getOrDefault(p.weightCol);
        return w == null || w.isEmpty() ? null : w;
    }

    /** The engine settings these params describe (errors name the param). */
    IsotonicConfig toConfig() {
        IsotonicConfig c = new IsotonicConfig();
        c.loss = IsotonicConfig.parseLoss(getLoss());
        c.algorithm = IsotonicConfig.parseAlgorithm(getAlgorithm());
        c.direction = IsotonicConfig.parseDirection(getIncreasing());
        c.backend = Backend.parse(getBackend(), "backend");
        c.yMin = isDefined(p.yMin) ? (Double) getOrDefault(p.yMin) : Double.NaN;
        c.yMax = isDefined(p.yMax) ? (Double) getOrDefault(p.yMax) : Double.NaN;
        c.numPartitions = numPartitions;
        return c.validate();
    }

    @Override
    public GpuIsotonicRegressionModel fit(Dataset<?> dataset) {
        IsotonicConfig cfg = toConfig();
        transformSchema(dataset.schema());
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
        return GpuIsotonicParams.appendPrediction(schema, getFeaturesCol(), getLabelCol(), weightColOrNull(),
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
        return new MLWriter() {
            @Override
            public void saveImpl(String path) {
                ParamsIO.saveMetadata(GpuIsotonicRegression.this, path, sparkSession(), null);
            }
        };
    }

    public static MLReader<GpuIsotonicRegression> read() {
        return new MLReader<GpuIsotonicRegression>() {
            @Override
            public GpuIsotonicRegression load(String path) {
                ParamsIO.Metadata md = ParamsIO.loadMetadata(path, sparkSession(), GpuIsotonicRegression.class.getName());
                GpuIsotonicRegression e = new GpuIsotonicRegression(md.uid());
                md.applyTo(e);
                return e;
            }
        };
    }

    public static GpuIsotonicRegression load(String path) {
        return read().load(path);
    }
}
