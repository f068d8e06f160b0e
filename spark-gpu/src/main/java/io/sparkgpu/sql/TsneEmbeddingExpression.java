package io.sparkgpu.sql;

import io.sparkgpu.tsne.GpuTsneModel;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StringType;

/**
 * {@code sparkgpu_tsne_embedding(model_path, id [, features])}: the fitted coordinates (ARRAY&lt;DOUBLE&gt;) of the row
 * with this id; NULL ids give NULL; an id that was not fitted is placed from its features (the three-argument form,
 * whose only child is struct(id, features)) by {@link GpuTsneModel.Placer#place}, else it is an error. O(dimension)
 * per fitted row through a broadcast hash map; a placed row costs transformMaxIter iterations against the reference.
 * The path and the broadcast are constructor arguments and product elements.
 */
public final class TsneEmbeddingExpression extends ModelPathExpression {
    private static final long serialVersionUID = 1L;

    private final Expression id;
    private final Broadcast<GpuTsneModel.Placer> model;
    /** The child is struct(id, features). */
    private final boolean withFeatures;

    public TsneEmbeddingExpression(Expression id, String modelPath, Broadcast<GpuTsneModel.Placer> model,
            boolean withFeatures) {
        super(id, modelPath, model, java.util.List.of(model.id(), withFeatures));
        this.id = id;
        this.model = model;
        this.withFeatures = withFeatures;
    }

    public Expression id() {
        return id;
    }

    public Broadcast<GpuTsneModel.Placer> model() {
        return model;
    }

    @Override
    public String prettyName() {
        return TsneEmbeddingFunction.NAME;
    }

    @Override
    public DataType dataType() {
        return DataTypes.createArrayType(DataTypes.DoubleType, false);
    }

    @Override
    public boolean nullable() {
        return withFeatures ? idOf(id).nullable() : id.nullable();
    }

    private static Expression idOf(Expression struct) {
        return struct.children().apply(1); // CreateNamedStruct's children: name, value, name, value
    }

    private static Expression featuresOf(Expression struct) {
        return struct.children().apply(3);
    }

    @Override
    public boolean nullIntolerant() {
        return true;
    }

    @Override
    public TypeCheckResult checkInputDataTypes() {
        if (withFeatures) {
            Expression f = featuresOf(id);
            DataType ft = f.dataType();
            boolean vector = ft instanceof org.apache.spark.ml.linalg.VectorUDT;
            boolean doubles = ft instanceof org.apache.spark.sql.types.ArrayType
                    && ((org.apache.spark.sql.types.ArrayType) ft).elementType() instanceof NumericType;
            if (!vector && !doubles && !(ft instanceof NullType)) {
                return SqlErrors.inputTypeMismatch("third", "(\"VECTOR\" or \"ARRAY<NUMERIC>\")", f);
            }
        }
        DataType t = withFeatures ? idOf(id).dataType() : id.dataType();
        if (t instanceof NumericType || t instanceof StringType || t instanceof NullType) {
            return TypeCheckResult.TypeCheckSuccess$.MODULE$;
        }
        return SqlErrors.inputTypeMismatch("second", "(\"NUMERIC\" or \"STRING\")", withFeatures ? idOf(id) : id);
    }

    @Override
    public Object eval(InternalRow input) {
        Expression idExpr = withFeatures ? idOf(id) : id;
        InternalRow both = withFeatures ? (InternalRow) id.eval(input) : null;
        Object v = withFeatures ? both.get(0, idExpr.dataType()) : id.eval(input);
        if (v == null) {
            return null;
        }
        Object key = idExpr.dataType() instanceof StringType ? v.toString() : v;
        if (key instanceof org.apache.spark.sql.types.Decimal) {
            key = ((org.apache.spark.sql.types.Decimal) key).toJavaBigDecimal();
        }
        GpuTsneModel.Placer placer = model.value();
        double[] xy = placer.lookup().get(key);
        if (xy == null) {
            if (!withFeatures || both.isNullAt(1)) {
                throw new IllegalArgumentException(prettyName() + ": id " + key + " was not fitted by the model at '"
                        + modelPath() + "'" + (withFeatures ? " and its features are NULL"
                        : "; pass the row's features as a third argument to place it into the map"));
            }
            if (!placer.canPlace()) {
                throw new IllegalArgumentException(prettyName() + ": id " + key + " was not fitted by the model at '"
                        + modelPath() + "', which has no reference features to place new rows (graph mode)");
            }
            xy = placer.place(java.util.List.of(features(both, featuresOf(id).dataType())),
                    prettyName() + "'s features");
        }
        return UnsafeArrayData.fromPrimitiveArray(xy);
    }

    /** The features field of struct(id, features): an ml Vector or an array of numbers, as doubles. */
    private static double[] features(InternalRow both, DataType t) {
        if (t instanceof org.apache.spark.ml.linalg.VectorUDT) {
            InternalRow vec = both.getStruct(1, ((org.apache.spark.ml.linalg.VectorUDT) t).sqlType().size());
            return ((org.apache.spark.ml.linalg.VectorUDT) t).deserialize(vec).toArray();
        }
        return SqlNumbers.toDoubles(both.getArray(1), ((org.apache.spark.sql.types.ArrayType) t).elementType(),
                TsneEmbeddingFunction.NAME, "features");
    }

    @Override
    protected Expression withArgument(Expression newArgument) {
        return new TsneEmbeddingExpression(newArgument, modelPath(), model, withFeatures);
    }
}
