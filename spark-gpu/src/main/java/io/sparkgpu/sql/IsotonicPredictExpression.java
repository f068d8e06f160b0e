package io.sparkgpu.sql;

import io.sparkgpu.isotonic.IsotonicPredictor;
import java.io.Serializable;
import java.util.Objects;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.UserDefinedType;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code sparkgpu_isotonic_predict(model_path, x)}: the prediction (DOUBLE) of a saved
 * {@code GpuIsotonicRegressionModel} at feature {@code x}, a number or an ml VECTOR (element featureIndex of
 * the model); NULL gives NULL. Same arithmetic as {@code GpuIsotonicRegressionModel.predict}, O(log m) per row.
 * The model reaches executors through a broadcast ({@link IsotonicModelRef}).
 */
public final class IsotonicPredictExpression extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;

    private final Expression x;
    private final String modelPath;
    private final IsotonicModelRef model;
    private final Seq<Expression> children;
    private transient IsotonicPredictor predictor;

    public IsotonicPredictExpression(Expression x, String modelPath, IsotonicModelRef model) {
        this.x = x;
        this.modelPath = modelPath;
        this.model = model;
        this.children = CollectionConverters.asScala(java.util.List.of(x)).toList();
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
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        if (newChildren.size() != 1) {
            throw new IllegalArgumentException(prettyName() + " has one child, got " + newChildren.size());
        }
        return new IsotonicPredictExpression(newChildren.apply(0), modelPath, model);
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
        return p.predict(toDouble(v));
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
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return CodegenFallback.super.doGenCode(ctx, ev);
    }

    @Override
    public String sql() {
        return prettyName() + "('" + modelPath.replace("\\", "\\\\").replace("'", "\\'") + "', " + x.sql() + ")";
    }

    @Override
    public String toString() {
        return prettyName() + "(" + modelPath + ", " + x + ")";
    }

    @Override
    public int productArity() {
        return 3;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return x;
            case 1: return modelPath;
            case 2: return model;
            default: throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object that) {
        return that instanceof IsotonicPredictExpression;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof IsotonicPredictExpression)) {
            return false;
        }
        IsotonicPredictExpression e = (IsotonicPredictExpression) o;
        return x.equals(e.x) && modelPath.equals(e.modelPath) && model.equals(e.model);
    }

    @Override
    public int hashCode() {
        return Objects.hash(x, modelPath, model);
    }
}
