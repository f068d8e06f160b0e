package io.sparkgpu.sql;

import io.sparkgpu.scan.ScanDirection;
import io.sparkgpu.scan.ScanMath;
import io.sparkgpu.scan.ScanModel;
import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.NumericType;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code sparkgpu_scan_llr(cases, baseline, total_cases, total_baseline[, statistic[, direction]])}: the
 * scan-statistic log-likelihood ratio (DOUBLE) of one range from its sufficient statistics, with the arithmetic
 * of the scan itself ({@link ScanMath}): Kulldorff's Poisson (expected = total_cases * baseline /
 * total_baseline), Kulldorff's Bernoulli (baseline = population; every argument a whole number) or the
 * expectation-based Poisson (baseline = expected count; the totals are checked but not used). Case counts of the
 * Poisson models may be fractional, as in the estimator. 0 for a range that is not a cluster in the requested
 * direction; NULL when any argument is NULL. O(1) per row. The statistic and direction are constant strings
 * (product elements, so Catalyst's reflective copy finds this constructor).
 */
public final class ScanLlrExpression extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;
    private static final String[] ARGS = {"cases", "baseline", "total_cases", "total_baseline"};

    private final Expression cases;
    private final Expression baseline;
    private final Expression totalCases;
    private final Expression totalBaseline;
    private final String statistic;
    private final String direction;
    private final ScanModel model;
    private final int dir;
    private final Seq<Expression> children;

    public ScanLlrExpression(Expression cases, Expression baseline, Expression totalCases, Expression totalBaseline,
                             String statistic, String direction) {
        this.cases = cases;
        this.baseline = baseline;
        this.totalCases = totalCases;
        this.totalBaseline = totalBaseline;
        this.statistic = statistic;
        this.direction = direction;
        this.model = ScanModel.parse(statistic, "statistic");
        this.dir = ScanDirection.parse(direction, "direction").code();
        if (model == ScanModel.NORMAL) {
            throw new IllegalArgumentException(ScanLlrFunction.NAME + " supports poisson, bernoulli and ebp; the normal "
                    + "model needs the variance of all observations (use GpuScanStatistic)");
        }
        this.children = CollectionConverters.asScala(List.of(cases, baseline, totalCases, totalBaseline)).toList();
    }

    @Override
    public String prettyName() {
        return ScanLlrFunction.NAME;
    }

    @Override
    public DataType dataType() {
        return DataTypes.DoubleType;
    }

    @Override
    public boolean nullable() {
        return true;
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
    public Expression withNewChildrenInternal(IndexedSeq<Expression> c) {
        if (c.size() != 4) {
            throw new IllegalArgumentException(prettyName() + " has four children, got " + c.size());
        }
        return new ScanLlrExpression(c.apply(0), c.apply(1), c.apply(2), c.apply(3), statistic, direction);
    }

    @Override
    public TypeCheckResult checkInputDataTypes() {
        Expression[] args = {cases, baseline, totalCases, totalBaseline};
        String[] ordinals = {"first", "second", "third", "fourth"};
        for (int i = 0; i < 4; i++) {
            DataType t = args[i].dataType();
            if (!(t instanceof NumericType) && !(t instanceof NullType)) {
                return SqlErrors.inputTypeMismatch(ordinals[i], "\"NUMERIC\"", args[i]);
            }
        }
        return TypeCheckResult.TypeCheckSuccess$.MODULE$;
    }

    @Override
    public Object eval(InternalRow input) {
        Expression[] args = {cases, baseline, totalCases, totalBaseline};
        double[] v = new double[4];
        for (int i = 0; i < 4; i++) {
            Object o = args[i].eval(input);
            if (o == null) {
                return null;
            }
            v[i] = SqlNumbers.toDouble(o, args[i].dataType(), prettyName());
            if (!Double.isFinite(v[i]) || v[i] < 0) {
                throw new IllegalArgumentException(prettyName() + ": " + ARGS[i] + " must be a finite number >= 0, got "
                        + v[i]);
            }
        }
        return llr(model, dir, v[0], v[1], v[2], v[3]);
    }

    /** The LLR for the validated values (the function's definition, without Catalyst). */
    static double llr(ScanModel model, int dir, double c, double b, double tc, double tb) {
        if (!model.fractionalCases()) { // the estimator's rule (ScanGrid, ScanInput); poisson and ebp take fractions
            double[] v = {c, b, tc, tb};
            for (int i = 0; i < 4; i++) {
                if (v[i] != Math.rint(v[i])) {
                    throw new IllegalArgumentException(ScanLlrFunction.NAME + ": " + ARGS[i] + " must be a whole "
                            + "number for the " + model.id() + " model, got " + v[i] + " (" + ScanModel.WHOLE_CASES_REASON
                            + ")");
                }
            }
        }
        if (model != ScanModel.EBP && c > tc) {
            throw new IllegalArgumentException(ScanLlrFunction.NAME + ": cases (" + c + ") exceed total_cases (" + tc + ")");
        }
        if (model != ScanModel.EBP && b > tb) {
            throw new IllegalArgumentException(ScanLlrFunction.NAME + ": baseline (" + b + ") exceeds total_baseline ("
                    + tb + ")");
        }
        if (model != ScanModel.EBP && !(tb > 0)) {
            throw new IllegalArgumentException(ScanLlrFunction.NAME + ": total_baseline must be > 0");
        }
        if (model != ScanModel.BERNOULLI && c > 0 && b == 0) { // the estimator's rule for a cell (ScanGrid)
            throw new IllegalArgumentException(ScanLlrFunction.NAME + ": cases (" + c + ") with baseline 0 (the expected "
                    + "count there is 0)");
        }
        switch (model) {
            case POISSON: {
                // expected = baseline * (total_cases / total_baseline), in the scan's order (ScanTables.llr), so
                // that the LLR of a range has the bits the scan reports for it
                double f = tc / tb;
                return ScanMath.poisson(c, b * f, (tb - b) * f, tc, dir);
            }
            case BERNOULLI:
                if (c > b) {
                    throw new IllegalArgumentException(ScanLlrFunction.NAME + ": cases (" + c
                            + ") exceed the population (baseline " + b + ")");
                }
                return ScanMath.bernoulli(c, b, tc, tb, tc / tb, (tb - tc) / tb, dir);
            case EBP:
            default:
                return ScanMath.ebp(c, b, dir);
        }
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return CodegenFallback.super.doGenCode(ctx, ev);
    }

    @Override
    public String sql() {
        return prettyName() + "(" + cases.sql() + ", " + baseline.sql() + ", " + totalCases.sql() + ", "
                + totalBaseline.sql() + ", '" + statistic + "', '" + direction + "')";
    }

    @Override
    public String toString() {
        return prettyName() + "(" + cases + ", " + baseline + ", " + totalCases + ", " + totalBaseline + ", "
                + statistic + ", " + direction + ")";
    }

    @Override
    public int productArity() {
        return 6;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return cases;
            case 1: return baseline;
            case 2: return totalCases;
            case 3: return totalBaseline;
            case 4: return statistic;
            case 5: return direction;
            default: throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object that) {
        return that instanceof ScanLlrExpression;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ScanLlrExpression)) {
            return false;
        }
        ScanLlrExpression e = (ScanLlrExpression) o;
        return Arrays.asList(cases, baseline, totalCases, totalBaseline, statistic, direction)
                .equals(Arrays.asList(e.cases, e.baseline, e.totalCases, e.totalBaseline, e.statistic, e.direction));
    }

    @Override
    public int hashCode() {
        return Objects.hash(cases, baseline, totalCases, totalBaseline, statistic, direction);
    }
}
