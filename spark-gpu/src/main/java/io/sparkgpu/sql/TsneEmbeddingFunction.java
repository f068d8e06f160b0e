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
 * The SQL function {@code sparkgpu_tsne_embedding(model_path, id [, features])}: the fitted coordinates of a row of a
 * saved {@code GpuTsneModel}, or, for an id that was not fitted and a features argument, the row placed into the map
 * as {@code GpuTsneModel.transform} places it (the same bits: each new row depends only on the model). The model is
 * loaded on the driver when the call is resolved and its {@link GpuTsneModel.Placer} is broadcast (n ids, n *
 * dimension doubles and, with a reference, n * referenceDim floats), cached by path like the other model functions
 * ({@link SavedModelCache}). The two-argument form is a one-child expression over id; the three-argument form's
 * child is struct(id, features).
 */
public final class TsneEmbeddingFunction {
    public static final String NAME = "sparkgpu_tsne_embedding";
    private static final SavedModelCache<Broadcast<GpuTsneModel.Placer>> MODELS =
            new SavedModelCache<>(NAME, TsneEmbeddingFunction::load);

    private TsneEmbeddingFunction() {
    }

    static SqlFunctionSpec spec() {
        ExpressionInfo info = new ExpressionInfo(
                TsneEmbeddingExpression.class.getName(),
                null,
                NAME,
                "_FUNC_(model_path, id [, features]) - Returns the t-SNE coordinates (ARRAY<DOUBLE> of the model's "
                        + "dimension) of the row with this id in the GpuTsneModel saved at model_path, or NULL when id "
                        + "is NULL; with features, a row whose id was not fitted is placed into the map.",
                "\n    Arguments:\n"
                        + "      * model_path - a constant STRING: the directory written by GpuTsneModel.save(path).\n"
                        + "          The model is loaded once on the driver and broadcast to the executors.\n"
                        + "      * id - the row's id (idCol value, or the row index when the model was fitted without\n"
                        + "          idCol): a number or a string. An id that was not fitted raises an error unless\n"
                        + "          features is given.\n"
                        + "      * features - optional ML vector or ARRAY<DOUBLE> of the fit's input features: rows of\n"
                        + "          ids that were not fitted are placed into the fixed map from them (kNN into the\n"
                        + "          model's reference features, the fit's perplexity and dof), as\n"
                        + "          GpuTsneModel.transform places them (models fitted on features only).\n",
                "\n    Examples:\n"
                        + "      > SELECT _FUNC_('/models/tsne', 0);\n"
                        + "       [1.25, -3.5]\n"
                        + "      > SELECT cell, _FUNC_('/models/tsne', cell) AS xy FROM cells;\n"
                        + "      > SELECT cell, _FUNC_('/models/tsne', cell, features) AS xy FROM new_cells;\n",
                "\n    Note: placing a new row optimises it against the fixed map (transformMaxIter iterations).\n  ",
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
        if (args.size() != 2 && args.size() != 3) {
            throw SqlErrors.sneakyThrow(SqlErrors.wrongNumArgs(NAME, "[2, 3]", args.size()));
        }
        if (args.size() == 3) {
            String path = MODELS.literalPath(args, 3);
            Expression both = org.apache.spark.sql.catalyst.expressions.CreateStruct.apply(
                    scala.jdk.javaapi.CollectionConverters.asScala(java.util.List.of(args.apply(1), args.apply(2)))
                            .toSeq());
            return new TsneEmbeddingExpression(both, path, MODELS.get(SparkSession.active(), path), true);
        }
        String path = MODELS.literalPath(args, 2);
        return new TsneEmbeddingExpression(args.apply(1), path, MODELS.get(SparkSession.active(), path), false);
    }

    private static Broadcast<GpuTsneModel.Placer> load(SparkSession spark, String path) {
        GpuTsneModel.Placer lookup;
        try {
            lookup = GpuTsneModel.read().session(spark).load(path).placer();
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
