package io.sparkgpu.isotonic;

import io.sparkgpu.ml.ParamChecks;
import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A fitted isotonic function: strictly increasing {@link #boundaries()} with {@link #predictions()}, evaluated by
 * {@link #predict(double)} with linear interpolation between boundaries exactly as MLlib's model (same formula,
 * same bits) and the {@code outOfBounds} policy outside them (clip, as MLlib, by default). Produced by
 * {@link GpuIsotonicRegression#fit}; convertible to and from MLlib's
 * {@code org.apache.spark.ml.regression.IsotonicRegressionModel} and the RDD-based
 * {@code org.apache.spark.mllib.regression.IsotonicRegressionModel}.
 *
 * <p>Saved as {@code path/metadata} (MLlib's metadata layout, see {@link ParamsIO}) and {@code path/data}
 * (Parquet, one row: boundaries, predictions, isotonic), the layout MLlib's model uses for its data.
 * {@link #transform} appends predictionCol (double); a NaN feature predicts NaN (MLlib would return the last
 * prediction), a null feature null. O(log m) per row for m boundaries.
 */
public class GpuIsotonicRegressionModel extends Model<GpuIsotonicRegressionModel>
        implements GpuIsotonicModelParams<GpuIsotonicRegressionModel>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final double[] boundaries;
    private final double[] predictions;
    private final ParamSlots slots = new ParamSlots();
    private IsotonicResult trainingInfo;

    /**
     * A model from boundaries (strictly increasing, finite) and predictions (finite; non-decreasing when
     * {@code isotonic}, non-increasing otherwise), with default params.
     */
    public GpuIsotonicRegressionModel(String uid, double[] boundaries, double[] predictions, boolean isotonic) {
        IsotonicPredictor.check(boundaries, predictions);
        for (int i = 1; i < predictions.length; i++) {
            if (isotonic ? predictions[i] < predictions[i - 1] : predictions[i] > predictions[i - 1]) {
                throw new IllegalArgumentException("predictions must be " + (isotonic ? "non-decreasing" : "non-increasing")
                        + " for isotonic=" + isotonic + " (index " + i + ")");
            }
        }
        this.uid = uid;
        this.boundaries = boundaries.clone();
        this.predictions = predictions.clone();
        GpuIsotonicRegression.setIsotonicDefaults(this);
        set(isotonic(), isotonic);
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    /** Checks the columns and returns {@code schema} plus predictionCol (double). */
    static StructType appendPrediction(StructType schema, String featuresCol, String labelCol, String weightCol,
                                       String predictionCol) {
        IsotonicTrainer.checkSchema(schema, featuresCol, labelCol, weightCol);
        return ParamChecks.appendColumn(schema, "predictionCol", predictionCol, DataTypes.DoubleType, true);
    }

    void setIsotonicInternal(boolean v) {
        set(isotonic(), v);
    }

    void setTrainingInfo(IsotonicResult r) {
        trainingInfo = r;
    }

    /** What the fit did (rows, zero-weight rows dropped, blocks, backend), or null for a loaded or built model. */
    public IsotonicResult trainingInfo() {
        return trainingInfo;
    }

    /**
     * Seconds of each phase of the fit that produced this model, in order ({@link IsotonicResult#timings()}); empty
     * for a loaded or built model.
     */
    public Map<String, Double> timings() {
        return trainingInfo == null ? Map.of() : trainingInfo.timings();
    }

    /** The boundaries as an ml vector (as MLlib's model). */
    public Vector boundaries() {
        return Vectors.dense(boundaries.clone());
    }

    public Vector predictions() {
        return Vectors.dense(predictions.clone());
    }

    public double[] boundaryArray() {
        return boundaries.clone();
    }

    public double[] predictionArray() {
        return predictions.clone();
    }

    /** Number of features the model expects: 1 (as MLlib's {@code numFeatures}). */
    public int numFeatures() {
        return 1;
    }

    public IsotonicPredictor predictor() {
        return new IsotonicPredictor(boundaries, predictions, IsotonicConfig.parseOutOfBounds(getOutOfBounds()));
    }

    /** The prediction for one feature value (see the class comment). */
    public double predict(double feature) {
        return predictor().predict(feature);
    }

    @Override
    public Dataset<Row> transform(Dataset<?> dataset) {
        transformSchema(dataset.schema());
        Dataset<Row> df = dataset.toDF();
        boolean vector = IsotonicTrainer.checkSchema(df.schema(), getFeaturesCol(), null, null);
        final int idx = getFeatureIndex();
        final String fc = getFeaturesCol();
        SparkSession spark = df.sparkSession();
        final Broadcast<IsotonicPredictor> b = JavaSparkContext.fromSparkContext(spark.sparkContext()).broadcast(predictor());
        Column f = df.col(IsotonicTrainer.quote(fc));
        UserDefinedFunction udf;
        if (vector) {
            udf = functions.udf((UDF1<Vector, Double>) v -> {
                if (v == null) {
                    return null;
                }
                if (idx >= v.size()) {
                    throw new IllegalArgumentException("featureIndex " + idx + " is out of range for a vector of size "
                            + v.size() + " in featuresCol '" + fc + "'");
                }
                return b.value().predict(v.apply(idx));
            }, DataTypes.DoubleType);
        } else {
            udf = functions.udf((UDF1<Double, Double>) x -> x == null ? null : b.value().predict(x), DataTypes.DoubleType);
            f = f.cast(DataTypes.DoubleType);
        }
        return df.withColumn(getPredictionCol(), udf.apply(f));
    }

    @Override
    public StructType transformSchema(StructType schema) {
        return appendPrediction(schema, getFeaturesCol(), null, null, getPredictionCol());
    }

    @Override
    public GpuIsotonicRegressionModel copy(ParamMap extra) {
        GpuIsotonicRegressionModel c = copyValues(new GpuIsotonicRegressionModel(uid, boundaries, predictions,
                getIsotonic()), extra);
        c.trainingInfo = trainingInfo;
        return hasParent() ? c.setParent(parent()) : c;
    }

    // ------------------------------------------------------------------ MLlib conversion

    /**
     * This model as MLlib's {@code org.apache.spark.ml.regression.IsotonicRegressionModel} (same uid,
     * boundaries, predictions, isotonic, featuresCol, featureIndex, predictionCol). Its constructor
     * {@code (String, mllib IsotonicRegressionModel)} is {@code private[ml]} in Scala, i.e. public in bytecode.
     */
    public org.apache.spark.ml.regression.IsotonicRegressionModel toMLlib() {
        org.apache.spark.ml.regression.IsotonicRegressionModel m =
                new org.apache.spark.ml.regression.IsotonicRegressionModel(uid, toOldMLlib());
        m.setFeaturesCol(getFeaturesCol()).setFeatureIndex(getFeatureIndex()).setPredictionCol(getPredictionCol());
        return m;
    }

    /** This model as the RDD-based {@code org.apache.spark.mllib.regression.IsotonicRegressionModel}. */
    public org.apache.spark.mllib.regression.IsotonicRegressionModel toOldMLlib() {
        return new org.apache.spark.mllib.regression.IsotonicRegressionModel(boundaries.clone(), predictions.clone(),
                getIsotonic());
    }

    /** A model with MLlib's boundaries, predictions, direction and column params. */
    public static GpuIsotonicRegressionModel fromMLlib(org.apache.spark.ml.regression.IsotonicRegressionModel m) {
        GpuIsotonicRegressionModel g = new GpuIsotonicRegressionModel(m.uid(), m.boundaries().toArray(),
                m.predictions().toArray(), m.getIsotonic());
        return g.setFeaturesCol(m.getFeaturesCol()).setFeatureIndex(m.getFeatureIndex())
                .setPredictionCol(m.getPredictionCol());
    }

    public static GpuIsotonicRegressionModel fromOldMLlib(org.apache.spark.mllib.regression.IsotonicRegressionModel m) {
        return new GpuIsotonicRegressionModel(Identifiable.randomUID("gpuIsoReg"), m.boundaries(), m.predictions(),
                m.isotonic());
    }

    @Override
    public String toString() {
        return "GpuIsotonicRegressionModel: uid=" + uid + ", boundaries=" + boundaries.length + ", isotonic="
                + getIsotonic();
    }

    // ------------------------------------------------------------------ persistence

    static final StructType DATA_SCHEMA = new StructType()
            .add("boundaries", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
            .add("predictions", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
            .add("isotonic", DataTypes.BooleanType, false);

    @Override
    public MLWriter write() {
        return new MLWriter() {
            @Override
            public void saveImpl(String path) {
                SparkSession spark = sparkSession();
                ParamsIO.saveMetadata(GpuIsotonicRegressionModel.this, path, spark,
                        Map.of("numBoundaries", boundaries.length));
                Row row = RowFactory.create(list(boundaries), list(predictions), getIsotonic());
                spark.createDataFrame(List.of(row), DATA_SCHEMA).coalesce(1).write().parquet(ParamsIO.child(path, "data"));
                ParamsIO.seal(GpuIsotonicRegressionModel.this, path, spark);
            }
        };
    }

    private static List<Double> list(double[] a) {
        List<Double> l = new ArrayList<>(a.length);
        for (double v : a) {
            l.add(v);
        }
        return l;
    }

    public static MLReader<GpuIsotonicRegressionModel> read() {
        return new MLReader<GpuIsotonicRegressionModel>() {
            @Override
            public GpuIsotonicRegressionModel load(String path) {
                SparkSession spark = sparkSession();
                ParamsIO.Metadata md = ParamsIO.loadMetadata(path, spark, GpuIsotonicRegressionModel.class.getName());
                List<Row> rows = spark.read().parquet(ParamsIO.child(path, "data"))
                        .select("boundaries", "predictions", "isotonic").collectAsList();
                if (rows.size() != 1) {
                    throw new IllegalArgumentException("model at " + path + ": data must hold one row, found " + rows.size());
                }
                Row r = rows.get(0);
                double[] b = r.<Double>getList(0).stream().mapToDouble(Double::doubleValue).toArray();
                double[] pr = r.<Double>getList(1).stream().mapToDouble(Double::doubleValue).toArray();
                GpuIsotonicRegressionModel m;
                try {
                    m = new GpuIsotonicRegressionModel(md.uid(), b, pr, r.getBoolean(2));
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("model at " + path + ": data/ breaks an invariant of a fit: "
                            + e.getMessage(), e);
                }
                if (md.field("numBoundaries").isInt() && md.field("numBoundaries").asInt() != b.length) {
                    throw new IllegalArgumentException("model at " + path + ": metadata says numBoundaries="
                            + md.field("numBoundaries") + " but data/ holds " + b.length);
                }
                md.applyTo(m);
                return m;
            }
        };
    }

    public static GpuIsotonicRegressionModel load(String path) {
        return read().load(path);
    }
}
