package io.sparkgpu.sql;

import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;

/** Catalyst's internal numeric values (scalars and arrays) as doubles, for our SQL expressions. */
final class SqlNumbers {
    private SqlNumbers() {
    }

    /** A non-null internal value of numeric type {@code t} as a double. */
    static double toDouble(Object v, DataType t, String fn) {
        if (t instanceof DecimalType) {
            return ((org.apache.spark.sql.types.Decimal) v).toDouble();
        }
        if (v instanceof Number) {
            return ((Number) v).doubleValue();
        }
        throw new IllegalArgumentException(fn + ": unsupported numeric type " + t.sql());
    }

    /** The elements of an array of numeric type {@code et}; a null element is an error naming {@code what}. */
    static double[] toDoubles(ArrayData a, DataType et, String fn, String what) {
        int n = a.numElements();
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            if (a.isNullAt(i)) {
                throw new IllegalArgumentException(fn + ": the " + what + " array contains a null element (at index "
                        + i + ")");
            }
            if (et instanceof DoubleType) {
                out[i] = a.getDouble(i);
            } else if (et instanceof FloatType) {
                out[i] = a.getFloat(i);
            } else if (et instanceof IntegerType) {
                out[i] = a.getInt(i);
            } else if (et instanceof LongType) {
                out[i] = a.getLong(i);
            } else if (et instanceof ShortType) {
                out[i] = a.getShort(i);
            } else if (et instanceof ByteType) {
                out[i] = a.getByte(i);
            } else if (et instanceof DecimalType) {
                DecimalType dt = (DecimalType) et;
                out[i] = a.getDecimal(i, dt.precision(), dt.scale()).toDouble();
            } else {
                throw new IllegalArgumentException(fn + ": unsupported element type " + et.sql());
            }
        }
        return out;
    }
}
