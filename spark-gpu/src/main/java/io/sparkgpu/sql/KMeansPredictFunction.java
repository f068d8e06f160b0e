package io.sparkgpu.sql;

import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.kmeans.KMeansPredictor;
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
 * The SQL function {@code sparkgpu_kmeans_predict(model_path, features)}.
 *
 * <p>When Catalyst resolves a call, the builder requires {@code model_path} to be a constant string, loads
 * the {@code GpuKMeansModel} saved there on the driver and broadcasts its centres. Loaded models are
 * cached by path (at most {@value SavedModelCache#MAX_CACHED}, least recently used first out), so a query, and later queries,
 * reuse the model and its broadcast; an entry is reloaded when the files under the path change (a save with
 * {@code overwrite()} writes new part files) or the SparkContext changed.
 */
public final class KMeansPredictFunction {
    public static final String NAME = "sparkgpu_kmeans_predict";
    private static final SavedModelCache<KMeansModelRef> MODELS = new SavedModelCache<>(NAME, KMeansPredictFunction::load);

    private KMeansPredictFunction() {
    }

    static SqlFunctionSpec spec() {
        ExpressionInfo info = new ExpressionInfo(
                KMeansPredictExpression.class.getName(),
                null,
                NAME,
                "_FUNC_(model_path, features) - Returns the index (INT) of the centre of the GpuKMeansModel saved at "
                        + "model_path that is nearest to features, or NULL when features is NULL.",
                "\n    Arguments:\n"
                        + "      * model_path - a constant STRING: the directory written by GpuKMeansModel.save(path).\n"
                        + "          The model is loaded once on the driver and broadcast to the executors.\n"
                        + "      * features - an ARRAY of numbers or an ml VECTOR with the model's number of features.\n"
                        + "          NaN, infinite values or a size mismatch raise an error.\n",
                "\n    Examples:\n"
                        + "      > SELECT _FUNC_('/models/kmeans', array(0.5D, 1.5D));\n"
                        + "       1\n"
                        + "      > SELECT id, _FUNC_('/models/kmeans', features) AS cluster FROM points;\n",
                "\n    Note: distances are computed on the CPU per row with the arithmetic of GpuKMeansModel.transform,\n"
                        + "    which gives the same predictions.\n  ",
                "misc_funcs",
                "0.1.0",
                "",
                "java_udf");
        return new SqlFunctionSpec(NAME, info, builder());
    }

    private static Function1<Seq<Expression>, Expression> builder() {
        return (Function1<Seq<Expression>, Expression> & Serializable) KMeansPredictFunction::build;
    }

    /** Builds the expression for resolved arguments; errors are AnalysisExceptions. */
    static Expression build(Seq<Expression> args) {
        String path = MODELS.literalPath(args, 2);
        return new KMeansPredictExpression(args.apply(1), path, model(SparkSession.active(), path));
    }

    /** The broadcast model for {@code path}, loading it when it is not cached or its files changed. */
    static KMeansModelRef model(SparkSession spark, String path) {
        return MODELS.get(spark, path);
    }

    private static KMeansModelRef load(SparkSession spark, String path) {
        KMeansPredictor predictor;
        try {
            GpuKMeansModel m = GpuKMeansModel.read().session(spark).load(path);
            predictor = m.predictor();
        } catch (RuntimeException e) {
            AnalysisException ae = SqlErrors.failedCall(NAME, new IllegalArgumentException(
                    "cannot load a GpuKMeansModel from '" + path + "': " + e.getMessage(), e));
            throw SqlErrors.sneakyThrow(ae);
        }
        Broadcast<KMeansPredictor> b = JavaSparkContext.fromSparkContext(spark.sparkContext()).broadcast(predictor);
        return new KMeansModelRef(b, predictor.k(), predictor.numFeatures());
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
