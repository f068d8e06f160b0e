package io.sparkgpu.sql;

import io.sparkgpu.scan.LocalScan;
import io.sparkgpu.scan.ScanCluster;
import io.sparkgpu.scan.ScanDirection;
import io.sparkgpu.scan.ScanGrid;
import io.sparkgpu.scan.ScanModel;
import io.sparkgpu.scan.ScanShape;
import io.sparkgpu.scan.ScanSpec;
import io.sparkgpu.scan.ScanTables;
import java.io.Serializable;
import java.util.List;
import java.util.Objects;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructType;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code sparkgpu_scan_best(cases, baseline[, statistic[, direction[, max_baseline_fraction]]])}: the most likely
 * cluster of a series, e.g. one region's weekly counts gathered with {@code collect_list}: the interval
 * [start, end] (0-based, inclusive) with the largest LLR over all n(n+1)/2 intervals, as
 * {@code STRUCT<start INT, end INT, llr DOUBLE, observed DOUBLE, expected DOUBLE, relative_risk DOUBLE>}.
 * NULL when an array is NULL or no interval has a positive LLR. Same validation and arithmetic as
 * {@code GpuScanStatistic} on a 1-D grid (CPU twin, O(n^2) per row, no p-value: use the estimator for Monte
 * Carlo significance). Ties go to the lowest range index.
 */
public final class ScanBestExpression extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;

    static final StructType RESULT = new StructType()
            .add("start", DataTypes.IntegerType, false)
            .add("end", DataTypes.IntegerType, false)
            .add("llr", DataTypes.DoubleType, false)
            .add("observed", DataTypes.DoubleType, false)
            .add("expected", DataTypes.DoubleType, false)
            .add("relative_risk", DataTypes.DoubleType, false);

    private final Expression cases;
    private final Expression baseline;
    private final String statistic;
    private final String direction;
    private final double maxBaselineFraction;
    private final ScanModel model;
    private final ScanSpec spec;
    private final Seq<Expression> children;

    public ScanBestExpression(Expression cases, Expression baseline, String statistic, String direction,
                              double maxBaselineFraction) {
        this.cases = cases;
        this.baseline = baseline;
        this.statistic = statistic;
        this.direction = direction;
        this.maxBaselineFraction = maxBaselineFraction;
        this.model = ScanModel.parse(statistic, "statistic");
        this.spec = new ScanSpec(ScanDirection.parse(direction, "direction"), 1, Long.MAX_VALUE, maxBaselineFraction);
        this.children = CollectionConverters.asScala(List.of(cases, baseline)).toList();
    }

    @Override
    public String prettyName() {
        return ScanBestFunction.NAME;
    }

    @Override
    public DataType dataType() {
        return RESULT;
    }

    @Override
    public boolean nullable() {
        return true;
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> c) {
        if (c.size() != 2) {
            throw new IllegalArgumentException(prettyName() + " has two children, got " + c.size());
        }
        return new ScanBestExpression(c.apply(0), c.apply(1), statistic, direction, maxBaselineFraction);
    }

    static boolean numericArray(DataType t) {
        return t instanceof NullType || (t instanceof ArrayType && ((ArrayType) t).elementType() instanceof NumericType);
    }

    @Override
    public TypeCheckResult checkInputDataTypes() {
        Expression[] args = {cases, baseline};
        String[] ordinals = {"first", "second"};
        for (int i = 0; i < 2; i++) {
            DataType t = args[i].dataType();
            if (!numericArray(t)) {
                return SqlErrors.inputTypeMismatch(ordinals[i], "\"ARRAY<NUMERIC>\"", args[i]);
            }
        }
        return TypeCheckResult.TypeCheckSuccess$.MODULE$;
    }

    @Override
    public Object eval(InternalRow input) {
        Object c = cases.eval(input);
        Object b = baseline.eval(input);
        if (c == null || b == null) {
            return null;
        }
        double[] cv = SqlNumbers.toDoubles((ArrayData) c, ((ArrayType) cases.dataType()).elementType(), prettyName(),
                "cases");
        double[] bv = SqlNumbers.toDoubles((ArrayData) b, ((ArrayType) baseline.dataType()).elementType(), prettyName(),
                "baseline");
        ScanCluster best = best(model, spec, cv, bv);
        if (best == null) {
            return null;
        }
        return new GenericInternalRow(new Object[] {best.lo(0), best.hi(0), best.llr(), best.observed(),
                best.expected(), best.relativeRisk()});
    }

    /** The most likely interval of a series, or null (the function's definition, without Catalyst). */
    static ScanCluster best(ScanModel model, ScanSpec spec, double[] cases, double[] baseline) {
        String fn = ScanBestFunction.NAME;
        if (cases.length != baseline.length) {
            throw new IllegalArgumentException(fn + ": cases has " + cases.length + " elements but baseline has "
                    + baseline.length);
        }
        if (cases.length == 0) {
            throw new IllegalArgumentException(fn + ": the arrays are empty; there is no interval to scan");
        }
        ScanGrid g;
        try {
            g = ScanGrid.of(model, new ScanShape(cases.length), cases, baseline, null,
                    new String[] {"cases", "baseline", "sum of squares"});
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(fn + ": " + e.getMessage(), e);
        }
        return LocalScan.mostLikely(ScanTables.of(g), spec);
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return CodegenFallback.super.doGenCode(ctx, ev);
    }

    @Override
    public String sql() {
        return prettyName() + "(" + cases.sql() + ", " + baseline.sql() + ", '" + statistic + "', '" + direction + "', "
                + maxBaselineFraction + ")";
    }

    @Override
    public String toString() {
        return prettyName() + "(" + cases + ", " + baseline + ", " + statistic + ", " + direction + ", "
                + maxBaselineFraction + ")";
    }

    @Override
    public int productArity() {
        return 5;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return cases;
            case 1: return baseline;
            case 2: return statistic;
            case 3: return direction;
            case 4: return maxBaselineFraction;
            default: throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object that) {
        return that instanceof ScanBestExpression;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ScanBestExpression)) {
            return false;
        }
        ScanBestExpression e = (ScanBestExpression) o;
        return cases.equals(e.cases) && baseline.equals(e.baseline) && statistic.equals(e.statistic)
                && direction.equals(e.direction) && maxBaselineFraction == e.maxBaselineFraction;
    }

    @Override
    public int hashCode() {
        return Objects.hash(cases, baseline, statistic, direction, maxBaselineFraction);
    }
}
