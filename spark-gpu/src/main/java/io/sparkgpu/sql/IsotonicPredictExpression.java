package io.sparkgpu.sql;

import io.sparkgpu.isotonic.IsotonicPredictor;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.UserDefinedType;

/**
 * {@code sparkgpu_isotonic_predict(model_path, x)}: the prediction (DOUBLE) of a saved
 * {@code GpuIsotonicRegressionModel} at feature {@code x}, a number or an ml VECTOR (element featureIndex of
 * the model); NULL gives NULL. Same arithmetic as {@code GpuIsotonicRegressionModel.predict}, O(log m) per row.
 * The model reaches executors through a broadcast ({@link IsotonicModelRef}).
 */
public final class IsotonicPredictExpression extends ModelPathExpression {
    private static final long serialVersionUID = 1L;

    private final Expression x;
    private final IsotonicModelRef model;
    private transient IsotonicPredictor predictor;

    public IsotonicPredictExpression(Expression x, String modelPath, IsotonicModelRef model) {
        super(x, modelPath, model, model);
        this.x = x;
        this.model = model;
    }

    @Override
    public String prettyName() {
        return IsotonicPredictFunction.NAME;
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
        if (t instanceof NumericType || t instanceof NullType || KMeansPredictExpression.isVector(t)) {
            return TypeCheckResult.TypeCheckSuccess$.MODULE$;
        }
        return new TypeCheckResult.DataTypeMismatch("UNEXPECTED_INPUT_TYPE", SqlErrors.params(
                "paramIndex", "second",
                "requiredType", "(\"NUMERIC\" or \"VECTOR\")",
                "inputSql", "\"" + x.sql() + "\"",
                "inputType", "\"" + t.sql() + "\""));
    }

    @Override
    public Object eval(InternalRow input) {
        Object v = x.eval(input);
        if (v == null) {
            return null;
        }
        IsotonicPredictor p = predictor;
        if (p == null) {
            p = model.predictor();
            predictor = p;
        }
        double z = toDouble(v);
        try {
            return p.predict(z);
        } catch (IllegalArgumentException e) { // e.g. outOfBounds=error: the model's own message, after our name
            throw new IllegalArgumentException(prettyName() + ": " + e.getMessage(), e);
        }
    }

    private double toDouble(Object v) {
        DataType t = x.dataType();
        if (KMeansPredictExpression.isVector(t)) {
            @SuppressWarnings("unchecked")
            UserDefinedType<Vector> udt = (UserDefinedType<Vector>) t;
            Vector vec = udt.deserialize(v);
            int i = model.featureIndex();
            if (i >= vec.size()) {
                throw new IllegalArgumentException(prettyName() + ": the model's featureIndex " + i
                        + " is out of range for a vector of size " + vec.size());
            }
            return vec.apply(i);
        }
        if (v instanceof Decimal) {
            return ((Decimal) v).toDouble();
        }
        return ((Number) v).doubleValue();
    }

    @Override
    protected Expression withArgument(Expression newArgument) {
        return new IsotonicPredictExpression(newArgument, modelPath(), model);
    }
}
