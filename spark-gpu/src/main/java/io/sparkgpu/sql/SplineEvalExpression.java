package io.sparkgpu.sql;

import io.sparkgpu.spline.SplineCdf;
import io.sparkgpu.spline.SplineEngine;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.NumericType;

/**
 * {@code sparkgpu_spline_eval(model_path, x)}: the value (DOUBLE) of a saved {@code GpuMonotoneSplineModel} at
 * {@code x} with the model's extrapolate policy; NULL gives NULL, NaN NaN. The arithmetic of the model's CPU twin,
 * per row; the spline reaches executors through a broadcast ({@link SplineModelRef}). The same expression with
 * another {@link Op} is {@code sparkgpu_cdf(model_path, x)} and {@code sparkgpu_quantile(model_path, p)} of a saved
 * {@code GpuMonotoneCdfModel} ({@link SplineCdfFunction}).
 */
public final class SplineEvalExpression extends ModelPathExpression {
    private static final long serialVersionUID = 1L;

    /** What the function computes from the spline at its argument. */
    public enum Op {
        /** The spline's value with the model's extrapolate policy. */
        VALUE(SplineEvalFunction.NAME),
        /** A CDF: 0 below the knots, 1 from the last on. */
        CDF(SplineCdfFunction.CDF),
        /** A CDF's quantile; the argument must be in [0, 1]. */
        QUANTILE(SplineCdfFunction.QUANTILE);

        final String function;

        Op(String function) {
            this.function = function;
        }
    }

    private final Expression x;
    private final SplineModelRef model;
    private final Op op;

    public SplineEvalExpression(Expression x, String modelPath, SplineModelRef model) {
        this(x, modelPath, model, Op.VALUE);
    }

    public SplineEvalExpression(Expression x, String modelPath, SplineModelRef model, Op op) {
        super(x, modelPath, model, java.util.List.of(op, model));
        this.x = x;
        this.model = model;
        this.op = op;
    }

    @Override
    public String prettyName() {
        return op.function;
    }

    @Override
    public DataType dataType() {
        return DataTypes.DoubleType;
    }

    @Override
    public boolean nullable() {
        return true;
    }

    @Override
    public TypeCheckResult checkInputDataTypes() {
        DataType t = x.dataType();
        if (t instanceof NumericType || t instanceof NullType) {
            return TypeCheckResult.TypeCheckSuccess$.MODULE$;
        }
        return new TypeCheckResult.DataTypeMismatch("UNEXPECTED_INPUT_TYPE", SqlErrors.params(
                "paramIndex", "second",
                "requiredType", "\"NUMERIC\"",
                "inputSql", "\"" + x.sql() + "\"",
                "inputType", "\"" + t.sql() + "\""));
    }

    @Override
    public Object eval(InternalRow input) {
        Object v = x.eval(input);
        if (v == null) {
            return null;
        }
        double z = v instanceof Decimal ? ((Decimal) v).toDouble() : ((Number) v).doubleValue();
        try {
            switch (op) {
                case CDF:
                    return SplineCdf.cdfAt(model.spline(), z);
                case QUANTILE:
                    return SplineCdf.quantileAt(model.spline(), z);
                default:
                    return SplineEngine.valueAt(model.spline(), z, model.mode());
            }
        } catch (IllegalArgumentException e) { // the model's own message, after the function's name
            throw new IllegalArgumentException(prettyName() + ": " + e.getMessage(), e);
        }
    }

    @Override
    protected Expression withArgument(Expression newArgument) {
        return new SplineEvalExpression(newArgument, modelPath(), model, op);
    }
}
