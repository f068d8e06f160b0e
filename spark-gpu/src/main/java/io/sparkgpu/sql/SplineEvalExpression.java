package io.sparkgpu.sql;

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
 * per row; the spline reaches executors through a broadcast ({@link SplineModelRef}).
 */
public final class SplineEvalExpression extends ModelPathExpression {
    private static final long serialVersionUID = 1L;

    private final Expression x;
    private final SplineModelRef model;

    public SplineEvalExpression(Expression x, String modelPath, SplineModelRef model) {
        super(x, modelPath, model, model);
        this.x = x;
        this.model = model;
    }

    @Override
    public String prettyName() {
        return SplineEvalFunction.NAME;
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
        return SplineEngine.valueAt(model.spline(), z, model.mode());
    }

    @Override
    protected Expression withArgument(Expression newArgument) {
        return new SplineEvalExpression(newArgument, modelPath(), model);
    }
}
