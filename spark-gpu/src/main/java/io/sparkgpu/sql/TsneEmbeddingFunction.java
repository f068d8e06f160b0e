package io.sparkgpu.sql;

import io.sparkgpu.tsne.GpuTsneModel;
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
 * The SQL function {@code sparkgpu_tsne_embedding(model_path, id)}: the fitted coordinates of a row of a saved
 * {@code GpuTsneModel}. The model is loaded on the driver when the call is resolved and its id-to-coordinates map
 * is broadcast (n ids and n * dimension doubles), cached by path like the other model functions
 * ({@link SavedModelCache}).
 */
public final class TsneEmbeddingFunction {
    public static final String NAME = "sparkgpu_tsne_embedding";
    private static final SavedModelCache<Broadcast<GpuTsneModel.Lookup>> MODELS =
            new SavedModelCache<>(NAME, TsneEmbeddingFunction::load);

    private TsneEmbeddingFunction() {
    }

    static SqlFunctionSpec spec() {
        ExpressionInfo info = new ExpressionInfo(
                TsneEmbeddingExpression.class.getName(),
                null,
                NAME,
                "_FUNC_(model_path, id) - Returns the t-SNE coordinates (ARRAY<DOUBLE> of the model's dimension) of the "
                        + "row with this id in the GpuTsneModel saved at model_path, or NULL when id is NULL.",
                "\n    Arguments:\n"
                        + "      * model_path - a constant STRING: the directory written by GpuTsneModel.save(path).\n"
                        + "          The model is loaded once on the driver and broadcast to the executors.\n"
                        + "      * id - the row's id (idCol value, or the row index when the model was fitted without\n"
                        + "          idCol): a number or a string. An id that was not fitted raises an error.\n",
                "\n    Examples:\n"
                        + "      > SELECT _FUNC_('/models/tsne', 0);\n"
                        + "       [1.25, -3.5]\n"
                        + "      > SELECT cell, _FUNC_('/models/tsne', cell) AS xy FROM cells;\n",
                "\n    Note: t-SNE has no out-of-sample map; only the fitted rows have coordinates.\n  ",
                "misc_funcs",
                "0.1.0",
                "",
                "java_udf");
        return new SqlFunctionSpec(NAME, info, builder());
    }

    private static Function1<Seq<Expression>, Expression> builder() {
        return (Function1<Seq<Expression>, Expression> & Serializable) TsneEmbeddingFunction::build;
    }

    static Expression build(Seq<Expression> args) {
        String path = MODELS.literalPath(args, 2);
        return new TsneEmbeddingExpression(args.apply(1), path, MODELS.get(SparkSession.active(), path));
    }

    private static Broadcast<GpuTsneModel.Lookup> load(SparkSession spark, String path) {
        GpuTsneModel.Lookup lookup;
        try {
            lookup = GpuTsneModel.read().session(spark).load(path).lookup();
        } catch (RuntimeException e) {
            AnalysisException ae = SqlErrors.failedCall(NAME, new IllegalArgumentException(
                    "cannot load a GpuTsneModel from '" + path + "': " + e.getMessage(), e));
            throw SqlErrors.sneakyThrow(ae);
        }
        return JavaSparkContext.fromSparkContext(spark.sparkContext()).broadcast(lookup);
    }

    /** Forgets every cached model. */
    public static void clearCache() {
        MODELS.clear();
    }

    static long loadCount() {
        return MODELS.loads();
    }
}
