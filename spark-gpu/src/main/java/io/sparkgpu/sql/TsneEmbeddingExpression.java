package io.sparkgpu.sql;

import io.sparkgpu.tsne.GpuTsneModel;
import java.io.Serializable;
import java.util.Objects;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StringType;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code sparkgpu_tsne_embedding(model_path, id)}: the fitted coordinates (ARRAY&lt;DOUBLE&gt;) of the row with this
 * id; NULL ids give NULL, ids that were not fitted are an error. O(dimension) per row through a broadcast hash map.
 * The only child is {@code id}; the path and the broadcast are constructor arguments and product elements.
 */
public final class TsneEmbeddingExpression extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;

    private final Expression id;
    private final String modelPath;
    private final Broadcast<GpuTsneModel.Lookup> model;
    private final Seq<Expression> children;

    public TsneEmbeddingExpression(Expression id, String modelPath, Broadcast<GpuTsneModel.Lookup> model) {
        this.id = id;
        this.modelPath = modelPath;
        this.model = model;
        this.children = CollectionConverters.asScala(java.util.List.of(id)).toList();
    }

    public Expression id() {
        return id;
    }

    public String modelPath() {
        return modelPath;
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
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        if (newChildren.size() != 1) {
            throw new IllegalArgumentException(prettyName() + " has one child, got " + newChildren.size());
        }
        return new TsneEmbeddingExpression(newChildren.apply(0), modelPath, model);
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
                    + modelPath + "'; t-SNE embeds only the training rows");
        }
        return UnsafeArrayData.fromPrimitiveArray(xy);
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return CodegenFallback.super.doGenCode(ctx, ev);
    }

    @Override
    public String sql() {
        return prettyName() + "('" + modelPath.replace("\\", "\\\\").replace("'", "\\'") + "', " + id.sql() + ")";
    }

    @Override
    public String toString() {
        return prettyName() + "(" + modelPath + ", " + id + ")";
    }

    @Override
    public int productArity() {
        return 3;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return id;
            case 1: return modelPath;
            case 2: return model;
            default: throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object that) {
        return that instanceof TsneEmbeddingExpression;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof TsneEmbeddingExpression)) {
            return false;
        }
        TsneEmbeddingExpression e = (TsneEmbeddingExpression) o;
        return id.equals(e.id) && modelPath.equals(e.modelPath) && model.id() == e.model.id();
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, modelPath, model.id());
    }
}
