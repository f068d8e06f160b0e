package io.sparkgpu.sql;

import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.isotonic.IsotonicPredictor;
import java.io.Serializable;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import scala.Function1;
import scala.collection.immutable.Seq;

/**
 * The SQL function {@code sparkgpu_isotonic_predict(model_path, x)}.
 *
 * <p>When Catalyst resolves a call, the builder requires {@code model_path} to be a constant string, loads
 * the {@code GpuIsotonicRegressionModel} saved there on the driver and broadcasts its boundaries and predictions. Loaded models are
 * cached by path (at most {@value SavedModelCache#MAX_CACHED}, least recently used first out), so a query, and later queries,
 * reuse the model and its broadcast; an entry is reloaded when the files under the path change (a save with
 * {@code overwrite()} writes new part files) or the SparkContext changed.
 */
public final class IsotonicPredictFunction {
    public static final String NAME = "sparkgpu_isotonic_predict";
    private static final SavedModelCache<IsotonicModelRef> MODELS = new SavedModelCache<>(NAME, IsotonicPredictFunction::load);

    private IsotonicPredictFunction() {
    }

    static SqlFunctionSpec spec() {
        ExpressionInfo info = new ExpressionInfo(
                IsotonicPredictExpression.class.getName(),
                null,
                NAME,
                "_FUNC_(model_path, x) - Returns the prediction (DOUBLE) of the GpuIsotonicRegressionModel saved at "
                        + "model_path at feature x, or NULL when x is NULL.",
                "\n    Arguments:\n"
                        + "      * model_path - a constant STRING: the directory written by GpuIsotonicRegressionModel.save(path).\n"
                        + "          The model is loaded once on the driver and broadcast to the executors.\n"
                        + "      * x - a number, or an ml VECTOR (the model's featureIndex picks the element).\n"
                        + "          Between boundaries the prediction is interpolated linearly; outside them the\n"
                        + "          model's outOfBounds policy applies (clip, nan or error). NaN gives NaN.\n",
                "\n    Examples:\n"
                        + "      > SELECT _FUNC_('/models/iso', 2.5D);\n"
                        + "      > SELECT id, _FUNC_('/models/iso', score) AS calibrated FROM scores;\n",
                "\n    Note: evaluated on the CPU per row with the arithmetic of GpuIsotonicRegressionModel.predict.\n  ",
                "misc_funcs",
                "0.1.0",
                "",
                "java_udf");
        return new SqlFunctionSpec(NAME, info, builder());
    }

    private static Function1<Seq<Expression>, Expression> builder() {
        return (Function1<Seq<Expression>, Expression> & Serializable) IsotonicPredictFunction::build;
    }

    /** Builds the expression for resolved arguments; errors are AnalysisExceptions. */
    static Expression build(Seq<Expression> args) {
        String path = MODELS.literalPath(args, 2);
        return new IsotonicPredictExpression(args.apply(1), path, model(SparkSession.active(), path));
    }

    /** The broadcast model for {@code path}, loading it when it is not cached or its files changed. */
    static IsotonicModelRef model(SparkSession spark, String path) {
        return MODELS.get(spark, path);
    }

    private static IsotonicModelRef load(SparkSession spark, String path) {
        IsotonicPredictor predictor;
        int featureIndex;
        try {
            GpuIsotonicRegressionModel m = GpuIsotonicRegressionModel.read().session(spark).load(path);
            predictor = m.predictor();
            featureIndex = m.getFeatureIndex();
        } catch (RuntimeException e) {
            AnalysisException ae = SqlErrors.failedCall(NAME, new IllegalArgumentException(
                    "cannot load a GpuIsotonicRegressionModel from '" + path + "': " + e.getMessage(), e));
            throw SqlErrors.sneakyThrow(ae);
        }
        Broadcast<IsotonicPredictor> b = JavaSparkContext.fromSparkContext(spark.sparkContext()).broadcast(predictor);
        return new IsotonicModelRef(b, featureIndex);
    }

    /** Forgets every cached model (their broadcasts are cleaned up by Spark once unreferenced). */
    public static void clearCache() {
        MODELS.clear();
    }

    /** How many times a model was loaded (for tests). */
    static long loadCount() {
        return MODELS.loads();
    }
}
