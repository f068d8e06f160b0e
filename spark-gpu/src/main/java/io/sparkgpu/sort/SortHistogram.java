package io.sparkgpu.sort;

import io.sparkgpu.common.SchemaColumns;
import io.sparkgpu.common.SparkErrors;
import io.sparkgpu.cuda.Backend;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StructType;

/**
 * The exact histogram of a bounded integer column ({@link GpuSort#histogram}): per partition, the keys are read in
 * blocks of {@link #BLOCK} into an int array and counted by {@link SortStep#histogram} (the counting sort's
 * histogram kernel, or its CPU twin), summed as longs; the partitions' counts are merged on the driver (a tree
 * reduce; sparse when few bins are used). Integer sums, so any partitioning gives the same counts.
 */
final class SortHistogram {
    /** Keys counted per kernel call. */
    static final int BLOCK = 1 << 24;

    private SortHistogram() {
    }

    /** The counts of one partition, or of several merged: dense (long[m]) or sparse (bins and counts). */
    static final class Counts implements Serializable {
        private static final long serialVersionUID = 1L;
        final int m;
        long nulls;
        long[] dense;
        int[] bins;
        long[] binCounts;

        Counts(int m) {
            this.m = m;
        }

        /** Dense form of these counts (converting once). */
        long[] dense() {
            if (dense == null) {
                dense = new long[m];
                if (bins != null) {
                    for (int j = 0; j < bins.length; j++) {
                        dense[bins[j]] += binCounts[j];
                    }
                }
                bins = null;
                binCounts = null;
            }
            return dense;
        }

        /** Sparse form when it is smaller (before shipping a partition's counts). */
        Counts compact() {
            if (dense == null) {
                return this;
            }
            int used = 0;
            for (long c : dense) {
                if (c != 0) {
                    used++;
                }
            }
            if (12L * used < 8L * m) {
                bins = new int[used];
                binCounts = new long[used];
                int j = 0;
                for (int k = 0; k < m; k++) {
                    if (dense[k] != 0) {
                        bins[j] = k;
                        binCounts[j++] = dense[k];
                    }
                }
                dense = null;
            }
            return this;
        }

        Counts merge(Counts o) {
            long[] d = dense();
            nulls += o.nulls;
            if (o.dense != null) {
                for (int k = 0; k < m; k++) {
                    d[k] += o.dense[k];
                }
            } else if (o.bins != null) {
                for (int j = 0; j < o.bins.length; j++) {
                    d[o.bins[j]] += o.binCounts[j];
                }
            }
            return this;
        }
    }

    /** The column must be byte, short, int or long; returns its type. */
    static DataType checkColumn(StructType schema, String col) {
        DataType t = schema.fields()[SchemaColumns.index(schema, col, "histogram column")].dataType();
        if (!(t instanceof ByteType || t instanceof ShortType || t instanceof IntegerType || t instanceof LongType)) {
            throw new IllegalArgumentException("histogram column '" + col + "' must be byte, short, int or long "
                    + "(values in [0, m)), got " + t.simpleString().toLowerCase(Locale.ROOT));
        }
        return t;
    }

    static IllegalArgumentException outside(String col, long v, int m) {
        return new IllegalArgumentException("histogram column '" + col + "' holds " + v + ", outside [0, m) for m = "
                + m + " (every value must lie in [0, m))");
    }

    static Dataset<Row> histogram(Dataset<Row> df, String col, int m, Backend backend) {
        SortCpu.checkRange(m);
        StructType schema = df.schema();
        DataType type = checkColumn(schema, col);
        int ord = SchemaColumns.index(schema, col, "histogram column");
        JavaRDD<Counts> parts = df.queryExecution().toRdd().toJavaRDD()
                .mapPartitions(it -> Collections.singletonList(count(it, ord, type, m, col, backend)).iterator());
        Counts all;
        try {
            all = parts.getNumPartitions() == 0 ? new Counts(m) : parts.treeReduce(Counts::merge);
        } catch (Exception e) {
            throw SparkErrors.unwrap(e);
        }
        long[] d = all.dense();
        List<Row> rows = new ArrayList<>();
        if (all.nulls > 0) {
            rows.add(RowFactory.create(null, all.nulls));
        }
        for (int k = 0; k < m; k++) {
            if (d[k] != 0) {
                rows.add(RowFactory.create(boxed(type, k), d[k]));
            }
        }
        StructType out = new StructType().add(col, type, true).add("count", DataTypes.LongType, false);
        return df.sparkSession().createDataFrame(rows, out);
    }

    private static Object boxed(DataType t, int k) {
        if (t instanceof ByteType) {
            return (byte) k;
        } else if (t instanceof ShortType) {
            return (short) k;
        } else if (t instanceof IntegerType) {
            return k;
        }
        return (long) k;
    }

    private static Counts count(Iterator<InternalRow> it, int ord, DataType type, int m, String col, Backend backend) {
        Counts c = new Counts(m);
        long[] d = c.dense();
        int[] block = new int[1024];
        int n = 0;
        while (true) {
            boolean more = it.hasNext();
            if (more) {
                InternalRow r = it.next();
                if (r.isNullAt(ord)) {
                    c.nulls++;
                    continue;
                }
                long v = value(r, ord, type);
                if (v < 0 || v >= m) {
                    throw outside(col, v, m);
                }
                if (n == block.length) {
                    if (n < BLOCK) {
                        block = Arrays.copyOf(block, Math.min(BLOCK, 2 * n));
                    } else {
                        add(d, block, n, m, backend);
                        n = 0;
                    }
                }
                block[n++] = (int) v;
            } else {
                add(d, block, n, m, backend);
                return c.compact();
            }
        }
    }

    private static void add(long[] d, int[] block, int n, int m, Backend backend) {
        if (n == 0) {
            return;
        }
        int[] keys = n == block.length ? block : Arrays.copyOf(block, n);
        int[] h = SortStep.histogram(backend, keys, m).value;
        for (int k = 0; k < m; k++) {
            d[k] += h[k];
        }
    }

    private static long value(InternalRow r, int ord, DataType t) {
        if (t instanceof ByteType) {
            return r.getByte(ord);
        } else if (t instanceof ShortType) {
            return r.getShort(ord);
        } else if (t instanceof IntegerType) {
            return r.getInt(ord);
        }
        return r.getLong(ord);
    }
}
