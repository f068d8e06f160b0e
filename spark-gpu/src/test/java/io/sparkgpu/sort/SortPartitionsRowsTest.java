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
    /** The stable order of the ids, by the sort the reduce side would otherwise run. */
    private static int[] sortedOrder(long[] ids) {
        return SortKeys.order(io.sparkgpu.cuda.Backend.CPU, ids).order;
    }

    @Test
    void inputOrderOfShuffledBlocksEqualsTheSortOfTheIds() {
        SortPartitions p = new SortPartitions(null, true, io.sparkgpu.cuda.Backend.CPU, null, 0);
        java.util.SplittableRandom r = new java.util.SplittableRandom(5);
        for (int trial = 0; trial < 40; trial++) {
            // map task j's rows have ids (j << 33) + row: blocks of ascending ids, fetched in a shuffled order
            int maps = 1 + r.nextInt(30);
            java.util.List<long[]> blocks = new java.util.ArrayList<>();
            for (int j = 0; j < maps; j++) {
                int len = r.nextInt(4) == 0 ? 0 : 1 + r.nextInt(500);
                long[] b = new long[len];
                long row = r.nextInt(1000);
                for (int i = 0; i < len; i++) {
                    row += 1 + r.nextInt(3);
                    b[i] = ((long) j << 33) + row;
                }
                blocks.add(b);
            }
            java.util.Collections.shuffle(blocks, new java.util.Random(trial));
            long[] ids = blocks.stream().flatMapToLong(java.util.Arrays::stream).toArray();
            if (trial % 5 == 4 && ids.length > 3) { // runs that overlap: the sort decides
                long t = ids[0];
                ids[0] = ids[ids.length - 1];
                ids[ids.length - 1] = t;
            }
            assertEquals(java.util.Arrays.toString(sortedOrder(ids)), java.util.Arrays.toString(p.inputOrder(ids)),
                    "trial " + trial);
        }
        long[] many = new long[10_000]; // more runs than rows / 64: sorted
        for (int i = 0; i < many.length; i++) {
            many[i] = (i % 2 == 0 ? 1_000_000L : 0L) + i;
        }
        assertEquals(java.util.Arrays.toString(sortedOrder(many)), java.util.Arrays.toString(p.inputOrder(many)));
        assertEquals(0, p.inputOrder(new long[0]).length);
    }

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
