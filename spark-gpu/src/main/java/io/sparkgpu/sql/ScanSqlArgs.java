package io.sparkgpu.sql;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StringType;
import scala.collection.immutable.Seq;

/** Reading the constant (foldable) arguments of the scan SQL functions; errors are AnalysisExceptions. */
final class ScanSqlArgs {
    private ScanSqlArgs() {
    }

    /** Argument {@code i} as a constant string, or {@code dflt} when there are not that many arguments. */
    static String string(String fn, Seq<Expression> args, int i, String name, String ordinal, String dflt) {
        if (args.size() <= i) {
            return dflt;
        }
        Expression e = args.apply(i);
        if (!e.foldable()) {
            throw SqlErrors.sneakyThrow(SqlErrors.nonFoldable(fn, args, name, "STRING", e));
        }
        if (!(e.dataType() instanceof StringType)) {
            throw SqlErrors.sneakyThrow(SqlErrors.unexpectedType(fn, args, ordinal, "STRING", e));
        }
        Object v = e.eval(null);
        if (v == null) {
            throw SqlErrors.sneakyThrow(SqlErrors.nullString(fn, name));
        }
        return v.toString();
    }

    /** Argument {@code i} as a constant number, or {@code dflt} when there are not that many arguments. */
    static double number(String fn, Seq<Expression> args, int i, String name, String ordinal, double dflt) {
        if (args.size() <= i) {
            return dflt;
        }
        Expression e = args.apply(i);
        if (!e.foldable()) {
            throw SqlErrors.sneakyThrow(SqlErrors.nonFoldable(fn, args, name, "DOUBLE", e));
        }
        if (!(e.dataType() instanceof NumericType)) {
            throw SqlErrors.sneakyThrow(SqlErrors.unexpectedType(fn, args, ordinal, "NUMERIC", e));
        }
        Object v = e.eval(null);
        if (v == null) {
            throw SqlErrors.sneakyThrow(SqlErrors.failedCall(fn, new IllegalArgumentException(name + " is NULL")));
        }
        return SqlNumbers.toDouble(v, e.dataType(), fn);
    }
}
