package io.sparkgpu.sql;

import io.sparkgpu.spline.GpuMonotoneSplineModel;
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
 * The SQL function {@code sparkgpu_spline_eval(model_path, x)}: {@code model_path} must be a constant string; the
 * {@code GpuMonotoneSplineModel} saved there is loaded on the driver, its spline broadcast, and cached by path as
 * {@link SavedModelCache} does for the other model functions.
 */
public final class SplineEvalFunction {
    public static final String NAME = "sparkgpu_spline_eval";
    private static final SavedModelCache<SplineModelRef> MODELS = new SavedModelCache<>(NAME, SplineEvalFunction::load);

    private SplineEvalFunction() {
    }

    static SqlFunctionSpec spec() {
        ExpressionInfo info = new ExpressionInfo(
                SplineEvalExpression.class.getName(),
                null,
                NAME,
                "_FUNC_(model_path, x) - Returns the value (DOUBLE) of the GpuMonotoneSplineModel saved at model_path "
                        + "at x, or NULL when x is NULL.",
                "\n    Arguments:\n"
                        + "      * model_path - a constant STRING: the directory written by GpuMonotoneSplineModel.save(path).\n"
                        + "          The model is loaded once on the driver and broadcast to the executors.\n"
                        + "      * x - a number. Outside the knots the model's extrapolate policy applies (clip,\n"
                        + "          linear, nan or error). NaN gives NaN.\n",
                "\n    Examples:\n"
                        + "      > SELECT _FUNC_('/models/spline', 2.5D);\n"
                        + "      > SELECT id, _FUNC_('/models/spline', dose) AS response FROM trials;\n",
                "\n    Note: evaluated on the CPU per row with the arithmetic of the model's CPU twin (the GPU's bits).\n  ",
                "misc_funcs",
                "0.1.0",
                "",
                "java_udf");
        return new SqlFunctionSpec(NAME, info, builder());
    }

    private static Function1<Seq<Expression>, Expression> builder() {
        return (Function1<Seq<Expression>, Expression> & Serializable) SplineEvalFunction::build;
    }

    static Expression build(Seq<Expression> args) {
        String path = MODELS.literalPath(args, 2);
        return new SplineEvalExpression(args.apply(1), path, MODELS.get(SparkSession.active(), path));
    }

    private static SplineModelRef load(SparkSession spark, String path) {
        Spline s;
        SplineConfig.Extrapolate mode;
        try {
            GpuMonotoneSplineModel m = GpuMonotoneSplineModel.read().session(spark).load(path);
            s = m.spline();
            mode = SplineConfig.parseExtrapolate(m.getExtrapolate());
        } catch (RuntimeException e) {
            AnalysisException ae = SqlErrors.failedCall(NAME, new IllegalArgumentException(
                    "cannot load a GpuMonotoneSplineModel from '" + path + "': " + e.getMessage(), e));
            throw SqlErrors.sneakyThrow(ae);
        }
        Broadcast<Spline> b = JavaSparkContext.fromSparkContext(spark.sparkContext()).broadcast(s);
        return new SplineModelRef(b, mode);
    }

    /** Forgets every cached model. */
    public static void clearCache() {
        MODELS.clear();
    }
}
