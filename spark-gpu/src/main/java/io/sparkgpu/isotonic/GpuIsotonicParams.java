package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.Backend;
import java.io.Serializable;
import java.util.Arrays;
import org.apache.spark.ml.param.BooleanParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Function1;

/**
 * The Params shared by {@link GpuIsotonicRegression} and {@link GpuIsotonicRegressionModel}: MLlib's names
 * (isotonic, featureIndex, weightCol, featuresCol, labelCol, predictionCol) and ours (loss, algorithm,
 * increasing, outOfBounds, yMin, yMax, backend). Each owner gets its own Param objects (a Param belongs to one
 * uid); {@link #declare} creates them all and sets the defaults.
 */
final class GpuIsotonicParams implements Serializable {
    private static final long serialVersionUID = 1L;

    final BooleanParam isotonic;
    final IntParam featureIndex;
    final Param<String> weightCol;
    final Param<String> featuresCol;
    final Param<String> labelCol;
    final Param<String> predictionCol;
    final Param<String> loss;
    final Param<String> algorithm;
    final Param<String> increasing;
    final Param<String> outOfBounds;
    final DoubleParam yMin;
    final DoubleParam yMax;
    final Param<String> backend;

    private GpuIsotonicParams(Identifiable o) {
        isotonic = new BooleanParam(o, "isotonic", "Whether the output sequence should be isotonic/increasing (true) "
                + "or antitonic/decreasing (false); used when increasing is not set.");
        featureIndex = new IntParam(o, "featureIndex", "Index of the feature when featuresCol is a vector column (>= 0).",
                ParamValidators.<Object>gtEq(0));
        weightCol = new Param<>(o, "weightCol", "Column of non-negative instance weights; unset or empty: weight 1. "
                + "Rows of weight 0 are dropped, as MLlib does.");
        featuresCol = new Param<>(o, "featuresCol", "Feature column: a number or an ml Vector (see featureIndex).");
        labelCol = new Param<>(o, "labelCol", "Label column (numeric).");
        predictionCol = new Param<>(o, "predictionCol", "Output column of predictions (double).");
        loss = new Param<>(o, "loss", "Loss: 'l2' (weighted least squares, block means) or 'l1' (weighted absolute "
                + "deviations, block lower weighted medians).", check(IsotonicConfig::parseLoss));
        algorithm = new Param<>(o, "algorithm", "Least-squares algorithm: 'pava' (PAVA-merge, O(n log n) on GPU, O(n) "
                + "on CPU) or 'mls' (parallel minimum lower sets, O(n^2), for small partitions).",
                check(IsotonicConfig::parseAlgorithm));
        increasing = new Param<>(o, "increasing", "Direction: 'true', 'false' or 'auto' (sign of Spearman's rank "
                + "correlation, as scikit-learn); when unset, isotonic decides.", check(IsotonicConfig::parseDirection));
        outOfBounds = new Param<>(o, "outOfBounds", "Prediction outside the training range: 'clip' (nearest end, as "
                + "MLlib), 'nan' or 'error'.", check(IsotonicConfig::parseOutOfBounds));
        yMin = new DoubleParam(o, "yMin", "Lower bound of the fitted values (unset: none).");
        yMax = new DoubleParam(o, "yMax", "Upper bound of the fitted values (unset: none).");
        backend = new Param<>(o, "backend", "Where partitions are solved: 'auto' (GPU when usable, else the "
                + "bitwise-identical CPU twin), 'gpu' or 'cpu'.", check(v -> Backend.parse(v, "backend")));
    }

    static GpuIsotonicParams declare(Params owner) {
        GpuIsotonicParams p = new GpuIsotonicParams(owner);
        return p;
    }

    /** The defaults (MLlib's where MLlib has the param). */
    void setDefaults(Defaults d) {
        d.setDefault(isotonic, true);
        d.setDefault(featureIndex, 0);
        d.setDefault(featuresCol, "features");
        d.setDefault(labelCol, "label");
        d.setDefault(predictionCol, "prediction");
        d.setDefault(loss, "l2");
        d.setDefault(algorithm, "pava");
        d.setDefault(outOfBounds, "clip");
        d.setDefault(backend, "auto");
    }

    /** Access to the protected setDefault of the owner. */
    interface Defaults {
        <T> void setDefault(Param<T> p, T value);
    }

    private interface Check extends Serializable {
        Object apply(String v);
    }

    private static Function1<String, Object> check(Check c) {
        return (Function1<String, Object> & Serializable) v -> {
            try {
                c.apply(v);
                return Boolean.TRUE;
            } catch (IllegalArgumentException e) {
                return Boolean.FALSE;
            }
        };
    }

    /** Checks the columns and returns {@code schema} plus predictionCol (double). */
    static StructType appendPrediction(StructType schema, String featuresCol, String labelCol, String weightCol,
                                       String predictionCol) {
        IsotonicTrainer.checkSchema(schema, featuresCol, labelCol, weightCol);
        if (predictionCol == null || predictionCol.isEmpty()) {
            throw new IllegalArgumentException("predictionCol must be a non-empty column name");
        }
        if (Arrays.asList(schema.fieldNames()).contains(predictionCol)) {
            throw new IllegalArgumentException("predictionCol '" + predictionCol + "' already exists in the input columns ("
                    + String.join(", ", schema.fieldNames()) + "); choose another name with setPredictionCol");
        }
        return schema.add(new StructField(predictionCol, DataTypes.DoubleType, true, Metadata.empty()));
    }
}
