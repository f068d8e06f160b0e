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
 * {@code sparkgpu_tsne_embedding(model_path, id)}: the fitted coordinates (ARRAY&lt;DOUBLE&gt;) of the row with this
 * id; NULL ids give NULL, ids that were not fitted are an error. O(dimension) per row through a broadcast hash map.
 * The only child is {@code id}; the path and the broadcast are constructor arguments and product elements.
 */
public final class TsneEmbeddingExpression extends ModelPathExpression {
    private static final long serialVersionUID = 1L;

    private final Expression id;
    private final Broadcast<GpuTsneModel.Lookup> model;

    public TsneEmbeddingExpression(Expression id, String modelPath, Broadcast<GpuTsneModel.Lookup> model) {
        super(id, modelPath, model, model.id());
        this.id = id;
        this.model = model;
    }

    public Expression id() {
        return id;
    }

    public Broadcast<GpuTsneModel.Lookup> model() {
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
        return id.nullable();
    }

    @Override
    public boolean nullIntolerant() {
        return true;
    }

    @Override
    public TypeCheckResult checkInputDataTypes() {
        DataType t = id.dataType();
        if (t instanceof NumericType || t instanceof StringType || t instanceof NullType) {
            return TypeCheckResult.TypeCheckSuccess$.MODULE$;
        }
        return SqlErrors.inputTypeMismatch("second", "(\"NUMERIC\" or \"STRING\")", id);
    }

    @Override
    public Object eval(InternalRow input) {
        Object v = id.eval(input);
        if (v == null) {
            return null;
        }
        Object key = id.dataType() instanceof StringType ? v.toString() : v;
        if (key instanceof org.apache.spark.sql.types.Decimal) {
            key = ((org.apache.spark.sql.types.Decimal) key).toJavaBigDecimal();
        }
        double[] xy = model.value().get(key);
        if (xy == null) {
            throw new IllegalArgumentException(prettyName() + ": id " + key + " was not fitted by the model at '"
                    + modelPath() + "'; t-SNE embeds only the training rows");
        }
        return UnsafeArrayData.fromPrimitiveArray(xy);
    }

    @Override
    protected Expression withArgument(Expression newArgument) {
        return new TsneEmbeddingExpression(newArgument, modelPath(), model);
    }
}
