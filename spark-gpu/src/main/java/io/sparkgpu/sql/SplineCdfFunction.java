package io.sparkgpu.sql;

import io.sparkgpu.spline.GpuMonotoneCdfModel;
import io.sparkgpu.spline.Spline;
import io.sparkgpu.spline.SplineConfig;
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
 * The SQL functions {@code sparkgpu_cdf(model_path, x)} and {@code sparkgpu_quantile(model_path, p)} of a saved
 * {@code GpuMonotoneCdfModel}: built as {@code sparkgpu_spline_eval} is ({@link SplineEvalFunction}: constant path,
 * loaded once on the driver, the spline broadcast, cached by path), evaluated by {@link SplineEvalExpression} with
 * the CDF's operations, with the CPU twin's arithmetic per row.
 */
public final class SplineCdfFunction {
    public static final String CDF = "sparkgpu_cdf";
    public static final String QUANTILE = "sparkgpu_quantile";
    private static final SavedModelCache<SplineModelRef> CDF_MODELS = new SavedModelCache<>(CDF,
            (spark, path) -> load(spark, path, CDF));
    private static final SavedModelCache<SplineModelRef> QUANTILE_MODELS = new SavedModelCache<>(QUANTILE,
            (spark, path) -> load(spark, path, QUANTILE));

    private SplineCdfFunction() {
    }

    static SqlFunctionSpec cdfSpec() {
        return spec(CDF, "x", "Returns the CDF (DOUBLE, in [0, 1]) of the GpuMonotoneCdfModel saved at "
                + "model_path at x, or NULL when x is NULL.",
                "      * x - a number: 0 below the model's smallest knot, 1 from its largest; NaN gives NaN.\n",
                "      > SELECT _FUNC_('/models/cdf', 2.5D);\n"
                        + "      > SELECT id, _FUNC_('/models/cdf', latency) AS percentile FROM requests;\n",
                SplineEvalExpression.Op.CDF, CDF_MODELS);
    }

    static SqlFunctionSpec quantileSpec() {
        return spec(QUANTILE, "p", "Returns the quantile (DOUBLE) at level p of the GpuMonotoneCdfModel saved at "
                + "model_path (the smallest x with cdf(x) >= p), or NULL when p is NULL.",
                "      * p - a number in [0, 1] (else an error 'p must be in [0, 1]').\n",
                "      > SELECT _FUNC_('/models/cdf', 0.99D);\n",
                SplineEvalExpression.Op.QUANTILE, QUANTILE_MODELS);
    }

    private static SqlFunctionSpec spec(String name, String arg, String usage, String argDoc, String examples,
                                        SplineEvalExpression.Op op, SavedModelCache<SplineModelRef> cache) {
        ExpressionInfo info = new ExpressionInfo(
                SplineEvalExpression.class.getName(),
                null,
                name,
                "_FUNC_(model_path, " + arg + ") - " + usage,
                "\n    Arguments:\n"
                        + "      * model_path - a constant STRING: the directory written by GpuMonotoneCdfModel.save(path).\n"
                        + "          The model is loaded once on the driver and broadcast to the executors.\n"
                        + argDoc,
                "\n    Examples:\n" + examples,
                "\n    Note: evaluated on the CPU per row with the arithmetic of the model's CPU twin (the GPU's bits).\n  ",
                "misc_funcs",
                "0.1.0",
                "",
                "java_udf");
        Function1<Seq<Expression>, Expression> builder = (Function1<Seq<Expression>, Expression> & Serializable)
                args -> {
                    String path = cache.literalPath(args, 2);
                    return new SplineEvalExpression(args.apply(1), path, cache.get(SparkSession.active(), path), op);
                };
        return new SqlFunctionSpec(name, info, builder);
    }

    private static SplineModelRef load(SparkSession spark, String path, String function) {
        Spline s;
        try {
            s = GpuMonotoneCdfModel.read().session(spark).load(path).spline();
        } catch (RuntimeException e) {
            AnalysisException ae = SqlErrors.failedCall(function, new IllegalArgumentException(
                    "cannot load a GpuMonotoneCdfModel from '" + path + "': " + e.getMessage(), e));
            throw SqlErrors.sneakyThrow(ae);
        }
        Broadcast<Spline> b = JavaSparkContext.fromSparkContext(spark.sparkContext()).broadcast(s);
        return new SplineModelRef(b, SplineConfig.Extrapolate.CLIP);
    }

    /** Forgets every cached model. */
    public static void clearCache() {
        CDF_MODELS.clear();
        QUANTILE_MODELS.clear();
    }
}
