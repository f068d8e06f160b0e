package io.sparkgpu.sql;

import java.io.Serializable;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import scala.Function1;
import scala.collection.immutable.Seq;

/** The SQL function {@code sparkgpu_scan_best}; see {@link ScanBestExpression}. */
public final class ScanBestFunction {
    public static final String NAME = "sparkgpu_scan_best";

    private ScanBestFunction() {
    }

    static SqlFunctionSpec spec() {
        ExpressionInfo info = new ExpressionInfo(
                ScanBestExpression.class.getName(),
                null,
                NAME,
                "_FUNC_(cases, baseline[, statistic[, direction[, max_baseline_fraction]]]) - Returns the most likely "
                        + "cluster of a series as STRUCT<start INT, end INT, llr DOUBLE, observed DOUBLE, expected DOUBLE, "
                        + "relative_risk DOUBLE> (0-based inclusive interval), or NULL when no interval has a positive "
                        + "log-likelihood ratio or an array is NULL.",
                "\n    Arguments:\n"
                        + "      * cases - ARRAY of numbers: cases per position (fractional counts allowed for 'poisson'\n"
                        + "          and 'ebp'; for 'normal': the value sum).\n"
                        + "      * baseline - ARRAY of numbers of the same length: population or expected count (for\n"
                        + "          'normal': the number of observations).\n"
                        + "      * statistic - a constant STRING: 'poisson' (default), 'bernoulli', 'normal' or 'ebp'.\n"
                        + "      * direction - a constant STRING: 'high' (default), 'low' or 'both'.\n"
                        + "      * max_baseline_fraction - a constant number in (0, 1]: largest share of the total\n"
                        + "          baseline inside the interval (default 1).\n",
                "\n    Examples:\n"
                        + "      > SELECT _FUNC_(array(1, 1, 9, 8, 1, 1), array(10, 10, 10, 10, 10, 10)).start;\n"
                        + "       2\n"
                        + "      > SELECT region, _FUNC_(collect_list(cases), collect_list(pop)) FROM weekly GROUP BY region;\n",
                "\n    Note: O(n^2) per row on the CPU with the scan's exact arithmetic; no p-value (use\n"
                        + "    GpuScanStatistic for Monte Carlo significance). Order the arrays yourself (collect_list keeps\n"
                        + "    no order: sort structs with array_sort first).\n  ",
                "misc_funcs",
                "0.1.0",
                "",
                "java_udf");
        return new SqlFunctionSpec(NAME, info, (Function1<Seq<Expression>, Expression> & Serializable) ScanBestFunction::build);
    }

    static Expression build(Seq<Expression> args) {
        if (args.size() < 2 || args.size() > 5) {
            throw SqlErrors.sneakyThrow(SqlErrors.wrongNumArgs(NAME, "[2, 3, 4, 5]", args.size()));
        }
        String statistic = ScanSqlArgs.string(NAME, args, 2, "statistic", "third", "poisson");
        String direction = ScanSqlArgs.string(NAME, args, 3, "direction", "fourth", "high");
        double fraction = ScanSqlArgs.number(NAME, args, 4, "max_baseline_fraction", "fifth", 1.0);
        try {
            return new ScanBestExpression(args.apply(0), args.apply(1), statistic, direction, fraction);
        } catch (IllegalArgumentException e) {
            throw SqlErrors.sneakyThrow(SqlErrors.failedCall(NAME, e));
        }
    }
}
