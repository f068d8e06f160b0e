package io.sparkgpu.kmeans;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.ml.DoubleMatrixParam;
import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.LongParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Function1;

/**
 * The one place where the Params of {@link GpuKMeans} and {@link GpuKMeansModel} are declared, so that both
 * expose identical names, docs and validators (Spark copies values between them by name). Each owner gets
 * its own Param objects because a Param belongs to one uid.
 */
final class GpuKMeansParams {
    static final String EUCLIDEAN = "euclidean";
    static final String COSINE = "cosine";
    static final List<String> DISTANCES = List.of(EUCLIDEAN, COSINE);
    static final List<String> INIT_MODES = List.of(KMeansConfig.INIT_RANDOM, KMeansConfig.INIT_PARALLEL);

    static final int DEFAULT_K = 2;
    static final int DEFAULT_MAX_ITER = 20;
    static final double DEFAULT_TOL = 1e-4;
    static final int DEFAULT_INIT_STEPS = 2;
    static final String DEFAULT_FEATURES = "features";
    static final String DEFAULT_PREDICTION = "prediction";
    static final String DEFAULT_BACKEND = "auto";

    private GpuKMeansParams() {
    }

    static IntParam k(Identifiable owner) {
        return new IntParam(owner, "k", "Number of clusters to create (must be > 1).", ParamValidators.<Object>gt(1));
    }

    static IntParam maxIter(Identifiable owner) {
        return new IntParam(owner, "maxIter", "Maximum number of Lloyd iterations (>= 0).",
                ParamValidators.<Object>gtEq(0));
    }

    static DoubleParam tol(Identifiable owner) {
        return new DoubleParam(owner, "tol", "Convergence tolerance: training stops once no centre moved by more "
                + "than tol in an iteration (>= 0).", ParamValidators.<Object>gtEq(0));
    }

    static LongParam seed(Identifiable owner) {
        return new LongParam(owner, "seed", "Random seed of the initialisation.");
    }

    static Param<String> initMode(Identifiable owner) {
        return new Param<>(owner, "initMode", "Initialisation algorithm: 'random' picks k distinct points, "
                + "'k-means||' is the parallel k-means++ of Bahmani et al. (2012).", oneOf(INIT_MODES));
    }

    static IntParam initSteps(Identifiable owner) {
        return new IntParam(owner, "initSteps", "Number of sampling rounds of k-means|| (> 0).",
                ParamValidators.<Object>gt(0));
    }

    static Param<String> distanceMeasure(Identifiable owner) {
        return new Param<>(owner, "distanceMeasure", "Distance measure: 'euclidean' (squared Euclidean cost) or "
                + "'cosine' (1 - cosine similarity).", oneOf(DISTANCES));
    }

    static Param<String> weightCol(Identifiable owner) {
        return new Param<>(owner, "weightCol", "Column of non-negative instance weights; when unset or empty every "
                + "row has weight 1.");
    }

    static Param<String> featuresCol(Identifiable owner) {
        return new Param<>(owner, "featuresCol", "Features column: an ml Vector or an array of numbers.");
    }

    static Param<String> predictionCol(Identifiable owner) {
        return new Param<>(owner, "predictionCol", "Output column holding the index of the nearest centre (int).");
    }

    static Param<String> backend(Identifiable owner) {
        return new Param<>(owner, "backend", "Where passes run: 'auto' (GPU when usable, else the bitwise-identical "
                + "CPU twin), 'gpu' (fail without a usable GPU) or 'cpu'.", (Function1<String, Object> & Serializable) v -> {
                    Backend.parse(v, "backend");
                    return Boolean.TRUE;
                });
    }

    static DoubleMatrixParam initialCenters(Identifiable owner) {
        return new DoubleMatrixParam(owner, "initialCenters", "Optional k x d starting centres; when set, initMode "
                + "and initSteps are not used.");
    }

    private static Function1<String, Object> oneOf(List<String> allowed) {
        return (Function1<String, Object> & Serializable) v -> allowed.contains(v);
    }

    /**
     * Checks the input columns and returns {@code schema} with {@code predictionCol} (int, not null) appended.
     *
     * @param weightCol null when unweighted
     */
    static StructType appendPrediction(StructType schema, String featuresCol, String weightCol, String predictionCol) {
        Features.checkFeatures(schema, featuresCol);
        if (weightCol != null) {
            Features.checkWeight(schema, weightCol);
        }
        if (predictionCol == null || predictionCol.isEmpty()) {
            throw new IllegalArgumentException("predictionCol must be a non-empty column name");
        }
        if (Arrays.asList(schema.fieldNames()).contains(predictionCol)) {
            throw new IllegalArgumentException("predictionCol '" + predictionCol + "' already exists in the input "
                    + "columns (" + String.join(", ", schema.fieldNames()) + "); choose another name with setPredictionCol");
        }
        return schema.add(new StructField(predictionCol, DataTypes.IntegerType, false, Metadata.empty()));
    }
}
