package io.sparkgpu.sort;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.junit.jupiter.api.Test;

/**
 * The global sort's partition expression: a value's key in Catalyst's internal form equals the key read from a row
 * for every key type, both directions; the expression gives the partition of that key by the boundaries, and a
 * null its own partition.
 */
class RangePartitionIdTest {
    @Test
    void keyOfEqualsTheRowsKeyForEveryType() {
        List<Object[]> cases = List.of(
                new Object[] {DataTypes.BooleanType, List.of(true, false)},
                new Object[] {DataTypes.ByteType, List.of((byte) -128, (byte) 0, (byte) 127)},
                new Object[] {DataTypes.ShortType, List.of((short) -5, (short) 7)},
                new Object[] {DataTypes.IntegerType, List.of(Integer.MIN_VALUE, -1, 0, 42)},
                new Object[] {DataTypes.DateType, List.of(-3, 19000)},
                new Object[] {DataTypes.LongType, List.of(Long.MIN_VALUE, -2L, Long.MAX_VALUE)},
                new Object[] {DataTypes.TimestampType, List.of(-1L, 1_700_000_000_000_000L)},
                new Object[] {DataTypes.FloatType, List.of(-0.0f, 0.0f, Float.NaN, -1.5f, Float.POSITIVE_INFINITY)},
                new Object[] {DataTypes.DoubleType, List.of(-0.0, Double.NaN, -Double.MAX_VALUE, 3.25)},
                new Object[] {DataTypes.createDecimalType(12, 3),
                    List.of(Decimal.apply("-123.456"), Decimal.apply("0.001"), Decimal.apply("999999999.999"))});
        for (Object[] c : cases) {
            DataType type = (DataType) c[0];
            for (boolean ascending : new boolean[] {true, false}) {
                SortKeys.Reader reader = new SortKeys.Reader(0, type, "k", ascending);
                for (Object v : (List<?>) c[1]) {
                    Object internal = v;
                    InternalRow row = new GenericInternalRow(new Object[] {internal});
                    assertEquals(reader.key(row), reader.keyOf(internal), type + " " + v + " ascending " + ascending);
                }
            }
        }
    }

    @Test
    void partitionOfTheKeyAndNullsApart() {
        SortKeys.Reader reader = new SortKeys.Reader(0, DataTypes.LongType, "k", true);
        long[] bounds = {SortKeys.signed(-10), SortKeys.signed(0), SortKeys.signed(100)};
        RangePartitionId e = new RangePartitionId(new BoundReference(0, DataTypes.LongType, true), reader, bounds, 3);
        long[] values = {-11, -10, -9, 0, 1, 100, 101, Long.MAX_VALUE};
        int[] want = {0, 0, 1, 1, 2, 2, 3, 3};
        for (int i = 0; i < values.length; i++) {
            assertEquals(want[i], e.eval(new GenericInternalRow(new Object[] {values[i]})), "value " + values[i]);
            // a child that is not a column reference is evaluated as an expression (its boxed value)
            RangePartitionId lit = new RangePartitionId(
                    org.apache.spark.sql.catalyst.expressions.Literal.create(values[i], DataTypes.LongType), reader,
                    bounds, 3);
            assertEquals(want[i], lit.eval(new GenericInternalRow(0)), "literal " + values[i]);
        }
        assertEquals(3, e.eval(new GenericInternalRow(new Object[] {null})));
        RangePartitionId first = new RangePartitionId(new BoundReference(0, DataTypes.LongType, true), reader, bounds, 0);
        assertEquals(0, first.eval(new GenericInternalRow(new Object[] {null})));
    }
}
