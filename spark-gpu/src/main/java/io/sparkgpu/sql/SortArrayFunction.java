package io.sparkgpu.sql;

import io.sparkgpu.sort.SortArrays;
import java.io.Serializable;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.types.BooleanType;
import scala.Function1;
import scala.collection.immutable.Seq;

/**
 * The SQL function {@code sparkgpu_sort_array(array[, ascending])} (issue 16): Spark's {@code sort_array} computed
 * by the sort engine ({@link SortArrayExpression}). {@code ascending} must be a constant, non-null BOOLEAN (default
 * true), as for {@code sort_array}.
 */
public final class SortArrayFunction {
    public static final String NAME = "sparkgpu_sort_array";

    private SortArrayFunction() {
    }

    static SqlFunctionSpec spec() {
        ExpressionInfo info = new ExpressionInfo(
                SortArrayExpression.class.getName(),
                null,
                NAME,
                "_FUNC_(array[, ascending]) - Sorts the array in ascending (default) or descending order, as "
                        + "sort_array does, or returns NULL when the array is NULL.",
                "\n    Arguments:\n"
                        + "      * array - an ARRAY of " + SortArrays.SUPPORTED + ".\n"
                        + "      * ascending - a constant BOOLEAN (default true). Ascending puts NULL elements first,\n"
                        + "          descending last; NaN is above every other value; -0.0 equals 0.0; equal\n"
                        + "          elements keep their order.\n",
                "\n    Examples:\n"
                        + "      > SELECT _FUNC_(array(3, NULL, 1, 2));\n"
                        + "       [null,1,2,3]\n"
                        + "      > SELECT _FUNC_(array(3.0D, 'NaN', 1.0D), false);\n"
                        + "       [NaN,3.0,1.0]\n",
                "\n    Note: each array is sorted per row by the sort engine's CPU twin (counting sort of the element "
                        + "keys when their range is within 4n + 256, radix sort above), which the GPU kernels equal "
                        + "bit for bit.\n  ",
                "array_funcs",
                "0.1.0",
                "",
                "java_udf");
        return new SqlFunctionSpec(NAME, info, builder());
    }

    private static Function1<Seq<Expression>, Expression> builder() {
        return (Function1<Seq<Expression>, Expression> & Serializable) SortArrayFunction::build;
    }

    static Expression build(Seq<Expression> args) {
        if (args.size() != 1 && args.size() != 2) {
            throw SqlErrors.sneakyThrow(SqlErrors.wrongNumArgs(NAME, "[1, 2]", args.size()));
        }
        boolean ascending = true;
        if (args.size() == 2) {
            Expression a = args.apply(1);
            if (!a.foldable()) {
                throw SqlErrors.sneakyThrow(SqlErrors.nonFoldable(NAME, args, "ascending", "BOOLEAN", a));
            }
            if (!(a.dataType() instanceof BooleanType)) {
                throw SqlErrors.sneakyThrow(SqlErrors.unexpectedType(NAME, args, "second", "BOOLEAN", a));
            }
            Object v = a.eval(null);
            if (v == null) {
                throw SqlErrors.sneakyThrow(SqlErrors.unexpectedType(NAME, args, "second", "BOOLEAN NOT NULL", a));
            }
            ascending = (Boolean) v;
        }
        return new SortArrayExpression(args.apply(0), ascending);
    }
}
