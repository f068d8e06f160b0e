package io.sparkgpu.sql;

import io.sparkgpu.kmeans.KMeansPredictor;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.UserDefinedType;

/**
 * {@code sparkgpu_kmeans_predict(model_path, features)}: index (INT) of the centre of a saved
 * {@code GpuKMeansModel} nearest to {@code features}, an {@code ARRAY<numeric>} or ml {@code VECTOR};
 * NULL features give NULL. The model was loaded on the driver when the call was resolved and reaches the
 * executors through a broadcast ({@link KMeansModelRef}); each row costs O(k d) on the CPU, with the same
 * validation and arithmetic as {@code GpuKMeansModel.transform}.
 *
 * <p>The only child is {@code features}; the path and the model handle are constructor arguments (they are
 * also the product elements, so Catalyst's reflective copy finds this constructor). Catalyst's own
 * expressions are serializable because they are case classes; this one says so explicitly, since plans
 * holding it are shipped to executors.
 */
public final class KMeansPredictExpression extends ModelPathExpression {
    private static final long serialVersionUID = 1L;

    private final Expression features;
    private final KMeansModelRef model;
    private transient KMeansPredictor predictor;

    public KMeansPredictExpression(Expression features, String modelPath, KMeansModelRef model) {
        super(features, modelPath, model, model);
        this.features = features;
        this.model = model;
    }

    public Expression features() {
        return features;
    }

    public KMeansModelRef model() {
        return model;
    }

    @Override
    public String prettyName() {
        return KMeansPredictFunction.NAME;
    }

    @Override
    public DataType dataType() {
        return DataTypes.IntegerType;
    }

    @Override
    public boolean nullable() {
        return features.nullable();
    }

    @Override
    public boolean nullIntolerant() {
        return true;
    }

    @Override
    public TypeCheckResult checkInputDataTypes() {
        DataType t = features.dataType();
        if (isVector(t) || t instanceof NullType
                || (t instanceof ArrayType && ((ArrayType) t).elementType() instanceof NumericType)) {
            return TypeCheckResult.TypeCheckSuccess$.MODULE$;
        }
        return SqlErrors.inputTypeMismatch("second", "(\"ARRAY<NUMERIC>\" or \"VECTOR\")", features);
    }

    static boolean isVector(DataType t) {
        return t.equals(SQLDataTypes.VectorType());
    }

    @Override
    public Object eval(InternalRow input) {
        Object v = features.eval(input);
        if (v == null) {
            return null;
        }
        KMeansPredictor p = predictor;
        if (p == null) {
            p = model.predictor();
            predictor = p;
        }
        double[] x = toDoubles(v);
        try {
            return p.predict(x, "features");
        } catch (IllegalArgumentException e) { // the model's own message (predict(Vector)), after the function's name
            throw new IllegalArgumentException(prettyName() + ": " + e.getMessage(), e);
        }
    }

    private double[] toDoubles(Object v) {
        DataType t = features.dataType();
        if (isVector(t)) {
            @SuppressWarnings("unchecked")
            UserDefinedType<Vector> udt = (UserDefinedType<Vector>) t;
            return udt.deserialize(v).toArray();
        }
        return SqlNumbers.toDoubles((ArrayData) v, ((ArrayType) t).elementType(), prettyName(), "features");
    }

    // ------------------------------------------------------------------ Product, equality

    @Override
    protected Expression withArgument(Expression newArgument) {
        return new KMeansPredictExpression(newArgument, modelPath(), model);
    }
}
