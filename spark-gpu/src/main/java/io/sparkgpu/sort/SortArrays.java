package io.sparkgpu.sort;

import io.sparkgpu.cuda.Backend;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.DataType;

/**
 * Sorting the elements of one array value (the SQL function {@code sparkgpu_sort_array}) with the sort engine's key
 * path ({@link SortKeys}): the elements become order-preserving keys, {@link SortKeys#order} gives their stable
 * order (counting sort for a key range up to about 4n + 256, radix sort above), and the elements are taken in that
 * order.
 *
 * <p>The order is Spark's {@code sort_array}: ascending puts nulls first, descending puts them last; NaN is above
 * every other value and all NaNs are equal; -0.0 equals 0.0; elements that compare equal keep their input order
 * (Spark's sort is a stable merge sort). The elements themselves are returned unchanged (-0.0 stays -0.0).
 *
 * <p>One array is one small sort: it runs on the backend given, and SQL passes the CPU twin (a kernel launch per
 * row would cost more than the sort); the GPU computes the same order, so the bits do not depend on the choice.
 */
public final class SortArrays {
    private SortArrays() {
    }

    /** The element types an array may have, for error messages. */
    public static final String SUPPORTED = SortKeys.SUPPORTED;

    /** Whether arrays of {@code elementType} can be sorted (the key types of {@link GpuSort}). */
    public static boolean sortable(DataType elementType) {
        try {
            SortKeys.checkKeyType("element", elementType);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** The elements of {@code a} (of {@code elementType}) sorted as Spark's {@code sort_array(a, ascending)}. */
    public static ArrayData sort(ArrayData a, DataType elementType, boolean ascending, Backend backend) {
        SortKeys.Reader r = new SortKeys.Reader(0, elementType, "array element", ascending);
        int n = a.numElements();
        int nulls = 0;
        for (int i = 0; i < n; i++) {
            if (a.isNullAt(i)) {
                nulls++;
            }
        }
        long[] keys = new long[n - nulls];
        int[] at = new int[n - nulls];
        for (int i = 0, k = 0; i < n; i++) {
            if (!a.isNullAt(i)) {
                keys[k] = r.key(a, i);
                at[k++] = i;
            }
        }
        // counting sort while its histogram is about the array's size, else the radix path (same order)
        int[] order = SortKeys.order(backend, keys, (int) Math.min(SortCpu.MAX_RANGE, 4L * keys.length + 256)).order;
        Object[] out = new Object[n];
        int from = ascending ? nulls : 0; // nulls first when ascending (out[0..nulls) stay null), else last
        for (int j = 0; j < order.length; j++) {
            out[from + j] = a.get(at[order[j]], elementType);
        }
        return new GenericArrayData(out);
    }
}
