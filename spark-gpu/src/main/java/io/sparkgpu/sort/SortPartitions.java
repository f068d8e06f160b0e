package io.sparkgpu.sort;

import io.sparkgpu.cuda.Backend;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.Platform;

/**
 * The executor side of a DataFrame sort: one partition's rows, read once with their keys ({@link SortKeys.Reader}),
 * ordered by the stable order of the keys and emitted in that order. Spark reuses the row object it hands out, so
 * each row is kept: an {@code UnsafeRow}'s bytes are appended to large byte pages (no object per row, little for
 * the garbage collector; the rows come out gathered in order, batch by batch, through one reused {@code UnsafeRow},
 * as Spark's own sort emits them), any other row is copied.
 *
 * <p>Order: rows with a null key first or last, the others by the stable order of their keys ({@link
 * SortKeys#order}: counting sort or radix sort, GPU or CPU twin). "Stable" refers to the sequence the rows are taken
 * in: the partition's input order, or, with an id column (a global sort's reduce side, whose rows arrive from the
 * map tasks in no fixed order), the order of the ids, which is the input's row order (partition index, then row
 * index): the ids are sorted first, and the keys then in that order, as two LSD passes.
 *
 * <p>A partition is held in memory while it is sorted (the rows, 8 bytes of key, 4-8 bytes of order per row).
 */
final class SortPartitions implements Serializable {
    private static final long serialVersionUID = 1L;
    private final SortKeys.Reader reader;
    private final boolean nullsFirst;
    private final Backend backend;
    private final SortMetrics metrics;
    /** Ordinal of the long id column giving the input order, or -1: the input order is the partition's order. */
    private final int idOrdinal;

    SortPartitions(SortKeys.Reader reader, boolean nullsFirst, Backend backend, SortMetrics metrics, int idOrdinal) {
        this.reader = reader;
        this.nullsFirst = nullsFirst;
        this.backend = backend;
        this.metrics = metrics;
        this.idOrdinal = idOrdinal;
    }

    /** A growable long array. */
    static final class Longs {
        long[] a = new long[1024];
        int n;

        void add(long v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, (int) Math.min(Integer.MAX_VALUE - 8, 2L * n));
            }
            a[n++] = v;
        }

        long[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }

    /** Page size of the packed rows (a larger row gets a page of its own). */
    static final int PAGE_BYTES = 1 << 24;

    /**
     * One partition's rows, kept: UnsafeRows packed into byte pages (row i at page {@code loc[i] >>> 32}, offset
     * {@code (int) loc[i]}, {@code size[i]} bytes), other rows as copies ({@code loc[i] = -1 - index}).
     */
    static final class Rows {
        final ArrayList<byte[]> pages = new ArrayList<>();
        final ArrayList<InternalRow> others = new ArrayList<>();
        final Longs loc = new Longs();
        int[] size = new int[1024];
        int fields = -1;
        byte[] page;
        int used;

        void add(InternalRow r) {
            int i = loc.n;
            if (i == size.length) {
                size = Arrays.copyOf(size, (int) Math.min(Integer.MAX_VALUE - 8, 2L * i));
            }
            if (r instanceof UnsafeRow u && (fields < 0 || fields == u.numFields())) {
                fields = u.numFields();
                int len = u.getSizeInBytes();
                if (page == null || used + len > page.length) {
                    page = new byte[Math.max(PAGE_BYTES, len)];
                    pages.add(page);
                    used = 0;
                }
                u.writeToMemory(page, Platform.BYTE_ARRAY_OFFSET + used);
                loc.add(((long) (pages.size() - 1) << 32) | used);
                size[i] = len;
                used += (len + 7) & ~7; // word-aligned rows, as UnsafeRow's readers expect
            } else {
                loc.add(-1L - others.size());
                others.add(r.copy());
            }
        }

        int count() {
            return loc.n;
        }
    }

    /** The rows of one partition in sorted order. */
    Iterator<InternalRow> sort(Iterator<InternalRow> it) {
        long t0 = System.nanoTime();
        Rows rows = new Rows();
        Longs keys = new Longs(); // one per row; 0 for a null key
        Longs ids = idOrdinal >= 0 ? new Longs() : null;
        java.util.BitSet nulls = new java.util.BitSet();
        while (it.hasNext()) {
            InternalRow r = it.next();
            int i = rows.count();
            if (reader.isNull(r)) {
                nulls.set(i);
                keys.add(0L);
            } else {
                keys.add(reader.key(r));
            }
            if (ids != null) {
                ids.add(r.getLong(idOrdinal));
            }
            rows.add(r);
        }
        long t1 = System.nanoTime();
        int[] order = order(keys.toArray(), nulls, ids == null ? null : ids.toArray());
        long t2 = System.nanoTime();
        if (metrics != null) {
            metrics.rows.add(order.length);
            metrics.readNanos.add(t1 - t0);
            metrics.sortNanos.add(t2 - t1);
        }
        return new Sorted(rows, order);
    }

    /** Rows gathered into a batch per refill (a tight copy loop keeps many of its cache misses in flight). */
    static final int GATHER_ROWS = 4096;

    /**
     * The kept rows in {@code order}: packed rows are copied in batches of {@link #GATHER_ROWS}, in order, into one
     * reused buffer and emitted from there through one reused UnsafeRow (emitting them straight from the pages
     * left each row's cache miss inside the consumer's per-row work, one at a time); other rows as kept.
     */
    static final class Sorted implements Iterator<InternalRow> {
        private final Rows rows;
        private final int[] order;
        private final UnsafeRow out;
        private byte[] buf = new byte[1 << 16];
        private final int[] at = new int[GATHER_ROWS];
        private final int[] len = new int[GATHER_ROWS];
        private int j;
        private int batchStart;
        private int batchEnd;

        Sorted(Rows rows, int[] order) {
            this.rows = rows;
            this.order = order;
            this.out = new UnsafeRow(Math.max(rows.fields, 0));
        }

        @Override
        public boolean hasNext() {
            return j < order.length;
        }

        @Override
        public InternalRow next() {
            if (j >= order.length) {
                throw new NoSuchElementException();
            }
            if (j == batchEnd) {
                gather();
            }
            int q = j++ - batchStart;
            if (len[q] < 0) {
                return rows.others.get(at[q]);
            }
            out.pointTo(buf, Platform.BYTE_ARRAY_OFFSET + at[q], len[q]);
            return out;
        }

        private void gather() {
            batchStart = j;
            batchEnd = Math.min(order.length, j + GATHER_ROWS);
            long need = 0;
            for (int q = batchStart; q < batchEnd; q++) {
                long l = rows.loc.a[order[q]];
                need += l < 0 ? 0 : (rows.size[order[q]] + 7) & ~7;
            }
            if (need > buf.length) {
                buf = new byte[(int) Math.min(Integer.MAX_VALUE - 8, Math.max(need, 2L * buf.length))];
            }
            int pos = 0;
            for (int q = batchStart; q < batchEnd; q++) {
                int i = order[q];
                long l = rows.loc.a[i];
                if (l < 0) {
                    at[q - batchStart] = (int) (-1 - l);
                    len[q - batchStart] = -1;
                    continue;
                }
                int size = rows.size[i];
                Platform.copyMemory(rows.pages.get((int) (l >>> 32)), Platform.BYTE_ARRAY_OFFSET + (int) l, buf,
                        Platform.BYTE_ARRAY_OFFSET + pos, size);
                at[q - batchStart] = pos;
                len[q - batchStart] = size;
                pos += (size + 7) & ~7;
            }
        }
    }

    /**
     * The row order: nulls first or last, the others by key; ties (and nulls) in the order of the ids when given
     * (distinct non-negative longs), else in index order.
     */
    int[] order(long[] keys, java.util.BitSet nulls, long[] ids) {
        int n = keys.length;
        int[] seq = null; // the input order, when it is not the index order
        if (ids != null) {
            seq = inputOrder(ids);
        }
        int nullCount = nulls.cardinality();
        long[] k = new long[n - nullCount];
        int[] at = new int[n - nullCount];
        int[] nullRows = new int[nullCount];
        int a = 0;
        int b = 0;
        for (int q = 0; q < n; q++) {
            int i = seq == null ? q : seq[q];
            if (nulls.get(i)) {
                nullRows[b++] = i;
            } else {
                k[a] = keys[i];
                at[a++] = i;
            }
        }
        int[] byKey = ordered(k).order;
        int[] out = new int[n];
        int o = 0;
        if (nullsFirst) {
            System.arraycopy(nullRows, 0, out, 0, nullCount);
            o = nullCount;
        }
        for (int j = 0; j < byKey.length; j++) {
            out[o++] = at[byKey[j]];
        }
        if (!nullsFirst) {
            System.arraycopy(nullRows, 0, out, o, nullCount);
        }
        return out;
    }

    /** Most ascending runs {@link #inputOrder} merges per row before it sorts the ids instead. */
    static final int MAX_RUN_SHARE = 64;

    /**
     * The order of the ids (distinct, non-negative). A global sort's reduce task receives the map tasks' blocks, each
     * in its map task's row order, so the ids form a few ascending runs whose ranges do not overlap: then the runs
     * in the order of their first ids are the order (O(n + r log r), no sort). Any other input (runs that overlap or
     * repeat an id, or more than one run per {@link #MAX_RUN_SHARE} rows) is sorted: the same order either way.
     */
    int[] inputOrder(long[] ids) {
        int n = ids.length;
        int[] starts = new int[16];
        int runs = 0;
        int limit = n / MAX_RUN_SHARE + 16;
        for (int i = 0; i < n; i++) {
            if (i == 0 || ids[i] <= ids[i - 1]) {
                if (runs == limit) {
                    return ordered(ids).order;
                }
                if (runs == starts.length) {
                    starts = Arrays.copyOf(starts, 2 * runs);
                }
                starts[runs++] = i;
            }
        }
        Integer[] byFirst = new Integer[runs];
        for (int r = 0; r < runs; r++) {
            byFirst[r] = r;
        }
        final int[] st = starts;
        Arrays.sort(byFirst, (x, y) -> Long.compare(ids[st[x]], ids[st[y]]));
        int[] out = new int[n];
        int o = 0;
        long prevLast = Long.MIN_VALUE;
        for (int q = 0; q < runs; q++) {
            int r = byFirst[q];
            int a = starts[r];
            int b = r + 1 < runs ? starts[r + 1] : n;
            if (q > 0 && ids[a] <= prevLast) {
                return ordered(ids).order; // overlapping runs
            }
            for (int i = a; i < b; i++) {
                out[o++] = i;
            }
            prevLast = ids[b - 1];
        }
        return out;
    }

    private SortKeys.Ordered ordered(long[] keys) {
        SortKeys.Ordered o = SortKeys.order(backend, keys);
        if (metrics != null) {
            metrics.record(o);
        }
        return o;
    }
}
