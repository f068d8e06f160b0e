package io.sparkgpu.sql;

import java.io.Serializable;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import scala.Function1;
import scala.collection.immutable.Seq;

/** The SQL function {@code sparkgpu_scan_llr}; see {@link ScanLlrExpression}. */
public final class ScanLlrFunction {
    public static final String NAME = "sparkgpu_scan_llr";

    private ScanLlrFunction() {
    }

    static SqlFunctionSpec spec() {
        ExpressionInfo info = new ExpressionInfo(
                ScanLlrExpression.class.getName(),
                null,
                NAME,
                "_FUNC_(cases, baseline, total_cases, total_baseline[, statistic[, direction]]) - Returns the scan "
                        + "statistic's log-likelihood ratio (DOUBLE) of a range with these sufficient statistics: 0 when "
                        + "the range is not a cluster in the requested direction, NULL when an argument is NULL.",
                "\n    Arguments:\n"
                        + "      * cases - cases in the range (>= 0; fractional counts allowed for 'poisson' and\n"
                        + "          'ebp'; 'bernoulli' needs whole numbers in every argument).\n"
                        + "      * baseline - population or expected count in the range (>= 0).\n"
                        + "      * total_cases, total_baseline - the same over the whole study region.\n"
                        + "      * statistic - a constant STRING: 'poisson' (Kulldorff, default; expected = total_cases *\n"
                        + "          baseline / total_baseline), 'bernoulli' (baseline = population) or 'ebp'\n"
                        + "          (expectation-based Poisson; baseline = expected count, totals unused).\n"
                        + "      * direction - a constant STRING: 'high' (default), 'low' or 'both'.\n",
                "\n    Examples:\n"
                        + "      > SELECT _FUNC_(10, 5, 20, 20);\n"
                        + "       2.8768207245178083\n"
                        + "      > SELECT _FUNC_(8, 10, 20, 100, 'bernoulli');\n"
                        + "       9.695516067957206\n",
                "\n    Note: the arithmetic is that of GpuScanStatistic (exact on the GPU and the CPU twin alike).\n  ",
                "misc_funcs",
                "0.1.0",
                "",
                "java_udf");
        return new SqlFunctionSpec(NAME, info, (Function1<Seq<Expression>, Expression> & Serializable) ScanLlrFunction::build);
    }

    static Expression build(Seq<Expression> args) {
        if (args.size() < 4 || args.size() > 6) {
            throw SqlErrors.sneakyThrow(SqlErrors.wrongNumArgs(NAME, "[4, 5, 6]", args.size()));
        }
        String statistic = ScanSqlArgs.string(NAME, args, 4, "statistic", "fifth", "poisson");
        String direction = ScanSqlArgs.string(NAME, args, 5, "direction", "sixth", "high");
        try {
            return new ScanLlrExpression(args.apply(0), args.apply(1), args.apply(2), args.apply(3), statistic,
                    direction);
        } catch (IllegalArgumentException e) {
            throw SqlErrors.sneakyThrow(SqlErrors.failedCall(NAME, e));
        }
    }
}
