package io.sparkgpu.ml;

import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Function1;

/**
 * The one helper for settings and output columns of every capability.
 *
 * <p><b>Rules.</b> Each setting has one rule, a static method of its capability's config ({@code KMeansConfig},
 * {@code IsotonicConfig}, {@code ScanConfig}, {@code TsneConfig}) that throws an {@link IllegalArgumentException}
 * whose message names the setting and the rule ({@code "k must be >= 2, got 1"}; {@link #require} writes it). The
 * same method is the Spark {@code Param} validator ({@link #validator}: {@code set} refuses the value with that
 * message), runs in the config's {@code validate()} at the trainer's entry, and is what inner layers call instead of
 * re-deriving the rule. The CLI reaches the rules through the estimators.
 *
 * <p><b>Output columns.</b> {@link #appendColumn} is the check every {@code transformSchema} makes of its output
 * column (set, not already present) before appending it.
 */
public final class ParamChecks {
    private ParamChecks() {
    }

    /** A rule on one value: returns normally, or throws an IllegalArgumentException naming the setting. */
    @FunctionalInterface
    public interface Rule<T> extends Serializable {
        void check(T value);
    }

    /** Throws {@code IllegalArgumentException("<name> must be <rule>, got <value>")} unless {@code ok}. */
    public static void require(boolean ok, String name, String rule, Object value) {
        if (!ok) {
            throw new IllegalArgumentException(name + " must be " + rule + ", got " + show(value));
        }
    }

    private static String show(Object value) {
        if (value instanceof String) {
            return "'" + value + "'";
        }
        if (value instanceof int[]) {
            return Arrays.toString((int[]) value);
        }
        if (value instanceof double[]) {
            return Arrays.toString((double[]) value);
        }
        if (value instanceof Object[]) {
            return Arrays.toString((Object[]) value);
        }
        return String.valueOf(value);
    }

    /**
     * The Spark Param validator of a rule: Spark calls it on {@code set}, {@code setDefault}, a {@code ParamMap}
     * entry and a loaded value; a refused value surfaces as the rule's own IllegalArgumentException (Spark's generic
     * "given invalid value" message is never reached).
     */
    public static <T> Function1<T, Object> validator(Rule<T> rule) {
        return (Function1<T, Object> & Serializable) v -> {
            rule.check(v);
            return Boolean.TRUE;
        };
    }

    /** A rule on an int setting (IntParam). */
    @FunctionalInterface
    public interface IntRule extends Serializable {
        void check(int value);
    }

    /** A rule on a long setting (LongParam). */
    @FunctionalInterface
    public interface LongRule extends Serializable {
        void check(long value);
    }

    /** A rule on a double setting (DoubleParam). */
    @FunctionalInterface
    public interface DoubleRule extends Serializable {
        void check(double value);
    }

    /** {@link #validator} for an IntParam (Spark passes the boxed value). */
    public static Function1<Object, Object> intValidator(IntRule rule) {
        return (Function1<Object, Object> & Serializable) v -> {
            rule.check((Integer) v);
            return Boolean.TRUE;
        };
    }

    /** {@link #validator} for a LongParam. */
    public static Function1<Object, Object> longValidator(LongRule rule) {
        return (Function1<Object, Object> & Serializable) v -> {
            rule.check((Long) v);
            return Boolean.TRUE;
        };
    }

    /** {@link #validator} for a DoubleParam. */
    public static Function1<Object, Object> doubleValidator(DoubleRule rule) {
        return (Function1<Object, Object> & Serializable) v -> {
            rule.check((Double) v);
            return Boolean.TRUE;
        };
    }

    /** Rule: the value is one of {@code allowed} (exactly, case-sensitive). */
    public static Rule<String> oneOf(String name, String... allowed) {
        List<String> values = List.of(allowed);
        return v -> require(v != null && values.contains(v), name, "one of " + String.join("|", values), v);
    }

    /**
     * Checks that output column {@code column} (the value of param {@code param}) is a name that {@code schema}
     * does not have yet, and returns the schema with it appended.
     */
    public static StructType appendColumn(StructType schema, String param, String column, DataType type,
                                          boolean nullable) {
        if (column == null || column.isEmpty()) {
            throw new IllegalArgumentException(param + " must be a non-empty column name");
        }
        if (Arrays.asList(schema.fieldNames()).contains(column)) {
            throw new IllegalArgumentException(param + " '" + column + "' already exists in the input columns ("
                    + String.join(", ", schema.fieldNames()) + "); choose another name with set"
                    + Character.toUpperCase(param.charAt(0)) + param.substring(1));
        }
        return schema.add(new StructField(column, type, nullable, Metadata.empty()));
    }
}
