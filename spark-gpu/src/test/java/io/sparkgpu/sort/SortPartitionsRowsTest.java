package io.sparkgpu.sort;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.NoSuchElementException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

/**
 * A sorted partition's rows as kept and emitted: UnsafeRows of varying length (a string column) packed into pages
 * and gathered in batches, other rows kept as copies, all emitted in the given order with their values, across
 * several gather batches; the source row object may be reused by its producer.
 */
class SortPartitionsRowsTest {
    @Test
    void packedAndCopiedRowsComeOutInOrderAcrossBatches() {
        StructType schema = new StructType().add("k", DataTypes.LongType, false).add("s", DataTypes.StringType, true);
        UnsafeProjection proj = UnsafeProjection.create(schema);
        int n = 3 * SortPartitions.GATHER_ROWS + 17;
        SortPartitions.Rows rows = new SortPartitions.Rows();
        for (int i = 0; i < n; i++) {
            GenericInternalRow g = new GenericInternalRow(new Object[] {(long) i,
                i % 5 == 0 ? null : UTF8String.fromString("v" + "x".repeat(i % 40) + i)});
            // every 7th row is not an UnsafeRow; the UnsafeRow from the projection is reused by it (as Spark does)
            InternalRow r = i % 7 == 0 ? g : proj.apply(g);
            rows.add(r);
        }
        int[] order = new int[n];
        for (int j = 0; j < n; j++) {
            order[j] = (int) ((long) j * 7919 % n); // a permutation (7919 is prime, n is not a multiple of it)
        }
        SortPartitions.Sorted it = new SortPartitions.Sorted(rows, order);
        for (int j = 0; j < n; j++) {
            int i = order[j];
            InternalRow r = it.next();
            assertEquals(i % 7 == 0, !(r instanceof UnsafeRow), "row " + i);
            assertEquals(i, r.getLong(0), "position " + j);
            if (i % 5 == 0) {
                assertEquals(true, r.isNullAt(1), "row " + i);
            } else {
                assertEquals("v" + "x".repeat(i % 40) + i, r.getUTF8String(1).toString(), "row " + i);
            }
        }
        assertFalse(it.hasNext());
        assertThrows(NoSuchElementException.class, it::next);
    }
}
