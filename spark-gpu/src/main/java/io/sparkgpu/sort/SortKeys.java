package io.sparkgpu.sort;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import java.io.Serializable;
import java.util.Locale;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * The general key path of the sort: a column value as an order-preserving unsigned 64-bit key, and the stable order
 * of such keys on the counting sort or the radix sort.
 *
 * <p>Keys ({@link #key}): Spark's ascending order of the column is the unsigned order of the keys. Integral, date,
 * timestamp and decimal (precision <= 18: the unscaled long, one scale per column) values flip their sign bit.
 * Floating values are first made canonical as Spark compares them ({@code SQLOrderingUtil}): -0.0 equals 0.0 (adding
 * 0.0 turns -0.0 into 0.0) and every NaN is one value, above +Infinity ({@code doubleToLongBits} maps every NaN to
 * 0x7ff8...); then a negative value has all its bits flipped and a positive one its sign bit. Floats are widened to
 * double first (exact, same order). Descending order complements the key, which reverses the unsigned order and
 * keeps equal keys equal. Nulls have no key: the callers place them first or last.
 *
 * <p>Order ({@link #order}): the keys are offset by their minimum; a range of at most {@link SortCpu#MAX_RANGE} keys
 * goes to the counting sort (int keys in [0, range]), a larger one to the radix sort of {@code bits} = the bit
 * length of the range ({@link SortStep#orderWide}). Both give the unique stable order: ties in index order.
 */
final class SortKeys {
    /** How a column's values are read and mapped to keys. */
    public enum Kind {
        BOOLEAN, BYTE, SHORT, INT, LONG, FLOAT, DOUBLE, DECIMAL
    }

    /** The types a sort key may have, for error messages. */
    public static final String SUPPORTED = "boolean, byte, short, int, long, float, double, date, timestamp, "
            + "timestamp_ntz or decimal with precision <= 18";

    private SortKeys() {
    }

    /**
     * The kind of a key column of type {@code t}; an IllegalArgumentException naming the column and the supported
     * types otherwise (strings, arrays, structs, wide decimals, ...).
     */
    public static Kind checkKeyType(String col, DataType t) {
        if (t instanceof BooleanType) {
            return Kind.BOOLEAN;
        } else if (t instanceof ByteType) {
            return Kind.BYTE;
        } else if (t instanceof ShortType) {
            return Kind.SHORT;
        } else if (t instanceof IntegerType || t instanceof DateType) {
            return Kind.INT;
        } else if (t instanceof LongType || t instanceof TimestampType || t instanceof TimestampNTZType) {
            return Kind.LONG;
        } else if (t instanceof FloatType) {
            return Kind.FLOAT;
        } else if (t instanceof DoubleType) {
            return Kind.DOUBLE;
        } else if (t instanceof DecimalType && ((DecimalType) t).precision() <= 18) {
            return Kind.DECIMAL;
        }
        throw new IllegalArgumentException("sort key column '" + col + "' must be " + SUPPORTED + ", got "
                + t.simpleString().toLowerCase(Locale.ROOT));
    }

    /** A key column: its ordinal, kind and direction (serializable, for executors). */
    public static final class Reader implements Serializable {
        private static final long serialVersionUID = 1L;
        final int ordinal;
        final Kind kind;
        final boolean ascending;
        private final int precision;
        private final int scale;

        public Reader(int ordinal, DataType type, String col, boolean ascending) {
            this.ordinal = ordinal;
            this.kind = checkKeyType(col, type);
            this.ascending = ascending;
            this.precision = type instanceof DecimalType ? ((DecimalType) type).precision() : 0;
            this.scale = type instanceof DecimalType ? ((DecimalType) type).scale() : 0;
        }

        public boolean isNull(InternalRow row) {
            return row.isNullAt(ordinal);
        }

        /** The key of a non-null value of the row (complemented when descending). */
        public long key(InternalRow row) {
            return key(row, ordinal);
        }

        /**
         * The key of a non-null value in Catalyst's internal form (Boolean, Byte, Short, Integer (also dates), Long
         * (also timestamps), Float, Double, Decimal), as {@link #key(SpecializedGetters, int)} reads it from a row.
         */
        public long keyOf(Object v) {
            long k;
            switch (kind) {
                case BOOLEAN:
                    k = (Boolean) v ? 1L : 0L;
                    break;
                case BYTE:
                    k = signed((Byte) v);
                    break;
                case SHORT:
                    k = signed((Short) v);
                    break;
                case INT:
                    k = signed((Integer) v);
                    break;
                case LONG:
                    k = signed((Long) v);
                    break;
                case FLOAT:
                    k = ofDouble((Float) v);
                    break;
                case DOUBLE:
                    k = ofDouble((Double) v);
                    break;
                case DECIMAL:
                    k = signed(((Decimal) v).toUnscaledLong());
                    break;
                default:
                    throw new IllegalStateException("unknown key kind " + kind);
            }
            return ascending ? k : ~k;
        }

        /** The key of the non-null value at {@code i} of a row or an array (complemented when descending). */
        public long key(SpecializedGetters row, int i) {
            long k;
            switch (kind) {
                case BOOLEAN:
                    k = row.getBoolean(i) ? 1L : 0L;
                    break;
                case BYTE:
                    k = signed(row.getByte(i));
                    break;
                case SHORT:
                    k = signed(row.getShort(i));
                    break;
                case INT:
                    k = signed(row.getInt(i));
                    break;
                case LONG:
                    k = signed(row.getLong(i));
                    break;
                case FLOAT:
                    k = ofDouble(row.getFloat(i));
                    break;
                case DOUBLE:
                    k = ofDouble(row.getDouble(i));
                    break;
                case DECIMAL:
                    k = signed(row.getDecimal(i, precision, scale).toUnscaledLong());
                    break;
                default:
                    throw new IllegalStateException("unknown key kind " + kind);
            }
            return ascending ? k : ~k;
        }
    }

    /** Key of a signed integer: its unsigned order is the signed order. */
    public static long signed(long v) {
        return v ^ Long.MIN_VALUE;
    }

    /** Key of a double in Spark's order: -0.0 == 0.0, every NaN equal and above +Infinity. */
    public static long ofDouble(double v) {
        long b = Double.doubleToLongBits(v + 0.0);
        return b ^ ((b >> 63) | Long.MIN_VALUE);
    }

    /** The stable order of {@code keys} and where it was computed ("gpu", "cpu", or "none" below two keys). */
    public static final class Ordered {
        public final int[] order;
        public final String backend;
        /** "counting" (range <= 2^24), "radix" (above), or "none". */
        public final String path;

        Ordered(int[] order, String backend, String path) {
            this.order = order;
            this.backend = backend;
            this.path = path;
        }
    }

    /**
     * The stable sorting permutation of unsigned keys: {@code Long.compareUnsigned(keys[p[j]], keys[p[j+1]]) <= 0},
     * ties in index order. Counting sort when max - min < 2^24, radix sort otherwise.
     */
    public static Ordered order(Backend backend, long[] keys) {
        return order(backend, keys, SortCpu.MAX_RANGE);
    }

    /**
     * {@link #order} with the counting sort only for a key range of at most {@code countingMaxRange} (<= 2^24)
     * keys, e.g. a few times n for a small array, whose histogram should not cost more than its sort. The order is
     * the same on either path.
     */
    public static Ordered order(Backend backend, long[] keys, int countingMaxRange) {
        int n = keys.length;
        if (n < 2) {
            return new Ordered(n == 0 ? new int[0] : new int[] {0}, "none", "none");
        }
        long min = -1L;
        long max = 0L;
        for (long k : keys) {
            if (Long.compareUnsigned(k, min) < 0) {
                min = k;
            }
            if (Long.compareUnsigned(k, max) > 0) {
                max = k;
            }
        }
        long range = max - min; // unsigned, max >= min
        if (Long.compareUnsigned(range, Math.min(SortCpu.MAX_RANGE, countingMaxRange) - 1) <= 0) {
            int[] small = new int[n];
            for (int i = 0; i < n; i++) {
                small[i] = (int) (keys[i] - min);
            }
            BackendChooser.Ran<int[]> r = SortStep.order(backend, small, (int) range + 1);
            return new Ordered(r.value, r.backend(), "counting");
        }
        long[] off = new long[n];
        for (int i = 0; i < n; i++) {
            off[i] = keys[i] - min;
        }
        int bits = 64 - Long.numberOfLeadingZeros(range);
        BackendChooser.Ran<int[]> r = SortStep.orderWide(backend, off, bits);
        return new Ordered(r.value, r.backend(), "radix");
    }
}
