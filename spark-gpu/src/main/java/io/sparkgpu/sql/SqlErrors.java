package io.sparkgpu.sql;

import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import scala.Option;
import scala.collection.immutable.Map;
import scala.collection.immutable.Map$;
import scala.collection.immutable.Seq;

/** Analysis errors of our SQL functions, built from Spark's own error conditions. */
final class SqlErrors {
    static final String DOC_ROOT = "https://spark.apache.org/docs/latest";

    private SqlErrors() {
    }

    /** A Scala map from alternating keys and values. */
    static Map<String, String> params(String... kv) {
        Map<String, String> m = Map$.MODULE$.empty();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            m = m.updated(kv[i], kv[i + 1]);
        }
        return m;
    }

    /** {@code "fn(a, b)"} as Spark quotes expressions in messages. */
    static String callSql(String fn, Seq<Expression> args) {
        StringBuilder sb = new StringBuilder("\"").append(fn).append('(');
        for (int i = 0; i < args.size(); i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(args.apply(i).sql());
        }
        return sb.append(")\"").toString();
    }

    static AnalysisException wrongNumArgs(String fn, int expected, int actual) {
        return wrongNumArgs(fn, String.valueOf(expected), actual);
    }

    /** {@code expected} as Spark writes it for a range, e.g. "[4, 5, 6]". */
    static AnalysisException wrongNumArgs(String fn, String expected, int actual) {
        return new AnalysisException("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", params(
                "functionName", "`" + fn + "`", "expectedNum", expected,
                "actualNum", String.valueOf(actual), "docroot", DOC_ROOT));
    }

    static AnalysisException nonFoldable(String fn, Seq<Expression> args, String inputName, String type, Expression e) {
        return new AnalysisException("DATATYPE_MISMATCH.NON_FOLDABLE_INPUT", params(
                "sqlExpr", callSql(fn, args), "inputName", "`" + inputName + "`",
                "inputType", "\"" + type + "\"", "inputExpr", "\"" + e.sql() + "\""));
    }

    static AnalysisException unexpectedType(String fn, Seq<Expression> args, String ordinal, String required, Expression e) {
        return new AnalysisException("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE", params(
                "sqlExpr", callSql(fn, args), "paramIndex", ordinal, "requiredType", "\"" + required + "\"",
                "inputSql", "\"" + e.sql() + "\"", "inputType", "\"" + e.dataType().sql() + "\""));
    }

    /**
     * The type-check failure of argument {@code ordinal} ("first", ...) of an expression; {@code requiredType} as
     * Spark quotes it, e.g. {@code "\"NUMERIC\""}.
     */
    static TypeCheckResult.DataTypeMismatch inputTypeMismatch(String ordinal, String requiredType, Expression e) {
        return new TypeCheckResult.DataTypeMismatch("UNEXPECTED_INPUT_TYPE", params(
                "paramIndex", ordinal, "requiredType", requiredType,
                "inputSql", "\"" + e.sql() + "\"", "inputType", "\"" + e.dataType().sql() + "\""));
    }

    static AnalysisException nullString(String fn, String param) {
        return new AnalysisException("INVALID_PARAMETER_VALUE.STRING", params(
                "parameter", "`" + param + "`", "functionName", "`" + fn + "`", "invalidValue", "NULL"));
    }

    static AnalysisException pathNotFound(String path) {
        return new AnalysisException("PATH_NOT_FOUND", params("path", path));
    }

    /**
     * The function could not be prepared; {@code cause} says why, and its message is appended to Spark's (which
     * only says "double check function's arguments"), so the reason is in the top-level message (issue 18 item 4).
     * The condition stays FAILED_FUNCTION_CALL.
     */
    static AnalysisException failedCall(String fn, Throwable cause) {
        Map<String, String> params = params("funcName", "`" + fn + "`");
        AnalysisException base = new AnalysisException("FAILED_FUNCTION_CALL", params, Option.apply(cause));
        if (cause == null || cause.getMessage() == null) {
            return base;
        }
        return new AnalysisException(base.getMessage() + " Reason: " + cause.getMessage(), Option.empty(),
                Option.empty(), Option.apply(cause), Option.apply("FAILED_FUNCTION_CALL"), params,
                new org.apache.spark.QueryContext[0]);
    }

    /** Throws a checked exception (AnalysisException is one in Java) from code that cannot declare it. */
    @SuppressWarnings("unchecked")
    static <E extends Throwable> RuntimeException sneakyThrow(Throwable t) throws E {
        throw (E) t;
    }
}
