package io.sparkgpu.sort;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Objects;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The output partition of a global sort's row, as a Catalyst expression over the sort column (internal to {@link
 * GpuSort#sort}): the first boundary &gt;= the value's key ({@link GpuSort#partitionOf}), or {@code nullPartition}
 * for a null. Spark's exchange evaluates it per row ({@code repartitionById}), so the partition travels with no
 * column of its own.
 */
final class RangePartitionId extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;

    private final Expression key;
    private final SortKeys.Reader reader;
    private final long[] bounds;
    private final int nullPartition;
    private final Seq<Expression> children;

    RangePartitionId(Expression key, SortKeys.Reader reader, long[] bounds, int nullPartition) {
        this.key = key;
        this.reader = reader;
        this.bounds = bounds;
        this.nullPartition = nullPartition;
        this.children = CollectionConverters.asScala(java.util.List.of(key)).toList();
    }

    @Override
    public String prettyName() {
        return "sparkgpu_sort_partition";
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public DataType dataType() {
        return DataTypes.IntegerType;
    }

    @Override
    public boolean nullable() {
        return false;
    }

    @Override
    public Object eval(InternalRow input) {
        if (key instanceof BoundReference b) { // the bound column read in place: no boxed value per row
            int i = b.ordinal();
            return input.isNullAt(i) ? nullPartition : GpuSort.partitionOf(bounds, reader.key(input, i));
        }
        Object v = key.eval(input);
        return v == null ? nullPartition : GpuSort.partitionOf(bounds, reader.keyOf(v));
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        if (newChildren.size() != 1) {
            throw new IllegalArgumentException(prettyName() + " has one child, got " + newChildren.size());
        }
        return new RangePartitionId(newChildren.apply(0), reader, bounds, nullPartition);
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return CodegenFallback.super.doGenCode(ctx, ev);
    }

    @Override
    public String toString() {
        return prettyName() + "(" + key + ", " + bounds.length + " bounds)";
    }

    @Override
    public int productArity() {
        return 3;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return key;
            case 1: return bounds;
            case 2: return nullPartition;
            default: throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object that) {
        return that instanceof RangePartitionId;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RangePartitionId r && r.key.equals(key) && Arrays.equals(r.bounds, bounds)
                && r.nullPartition == nullPartition && r.reader.ordinal == reader.ordinal
                && r.reader.ascending == reader.ascending;
    }

    @Override
    public int hashCode() {
        return Objects.hash(RangePartitionId.class, key, Arrays.hashCode(bounds), nullPartition);
    }
}
