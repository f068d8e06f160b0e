package io.sparkgpu.sql;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.sort.SortArrays;
import java.io.Serializable;
import java.util.Objects;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code sparkgpu_sort_array(array[, ascending])}: the array's elements in Spark's {@code sort_array} order (nulls
 * first ascending, last descending; NaN largest; -0.0 equal to 0.0; equal elements in input order), sorted by the
 * sort engine's key path on its CPU twin ({@link SortArrays}), per row; NULL gives NULL. One child (the array);
 * {@code ascending} is a constant of the call (a constructor argument and product element).
 */
public final class SortArrayExpression extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;

    private final Expression array;
    private final boolean ascending;
    private final Seq<Expression> children;

    public SortArrayExpression(Expression array, boolean ascending) {
        this.array = array;
        this.ascending = ascending;
        this.children = CollectionConverters.asScala(java.util.List.of(array)).toList();
    }

    @Override
    public String prettyName() {
        return SortArrayFunction.NAME;
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public DataType dataType() {
        return array.dataType();
    }

    @Override
    public boolean nullable() {
        return array.nullable();
    }

    @Override
    public TypeCheckResult checkInputDataTypes() {
        DataType t = array.dataType();
        if (t instanceof ArrayType && SortArrays.sortable(((ArrayType) t).elementType())) {
            return TypeCheckResult.TypeCheckSuccess$.MODULE$;
        }
        return SqlErrors.inputTypeMismatch("first", "\"ARRAY\" of " + SortArrays.SUPPORTED, array);
    }

    @Override
    public Object eval(InternalRow input) {
        Object v = array.eval(input);
        if (v == null) {
            return null;
        }
        return SortArrays.sort((ArrayData) v, ((ArrayType) array.dataType()).elementType(), ascending, Backend.CPU);
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        if (newChildren.size() != 1) {
            throw new IllegalArgumentException(prettyName() + " has one child, got " + newChildren.size());
        }
        return new SortArrayExpression(newChildren.apply(0), ascending);
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return CodegenFallback.super.doGenCode(ctx, ev);
    }

    @Override
    public String sql() {
        return prettyName() + "(" + array.sql() + ", " + ascending + ")";
    }

    @Override
    public String toString() {
        return prettyName() + "(" + array + ", " + ascending + ")";
    }

    @Override
    public int productArity() {
        return 2;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return array;
            case 1: return ascending;
            default: throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object that) {
        return that instanceof SortArrayExpression;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SortArrayExpression && ((SortArrayExpression) o).array.equals(array)
                && ((SortArrayExpression) o).ascending == ascending;
    }

    @Override
    public int hashCode() {
        return Objects.hash(SortArrayExpression.class, array, ascending);
    }
}
