package io.sparkgpu.sort;

import io.sparkgpu.common.SchemaColumns;
import io.sparkgpu.cuda.Backend;
import java.io.Serializable;
import org.apache.spark.sql.types.StructType;

/**
 * Every setting of one DataFrame sort ({@link GpuSort}) and the one {@link #validate} holding its rules. Defaults
 * are Spark's: ascending; nulls first when ascending and last when descending; as many output partitions as {@code
 * spark.sql.shuffle.partitions}; the backend from {@code spark.sparkgpu.backend}.
 */
public final class SortConfig implements Serializable {
    private static final long serialVersionUID = 1L;
    /** Most output partitions of a global sort. */
    public static final int MAX_PARTITIONS = 1 << 20;
    /** Internal columns a global sort adds while it runs (dropped from the result). */
    static final String PARTITION_COL = "__sparkgpu_sort_partition";
    static final String ID_COL = "__sparkgpu_sort_id";

    String keyCol;
    boolean ascending = true;
    /** null: Spark's default for the direction. */
    Boolean nullsFirst;
    /** null: the Spark setting, else auto. */
    Backend backend;
    /** 0: spark.sql.shuffle.partitions. */
    int numPartitions;
    long seed = 42L;
    SortMetrics metrics;

    public SortConfig(String keyCol) {
        this.keyCol = keyCol;
    }

    public SortConfig ascending(boolean v) {
        ascending = v;
        return this;
    }

    public SortConfig nullsFirst(boolean v) {
        nullsFirst = v;
        return this;
    }

    public SortConfig backend(Backend v) {
        backend = v;
        return this;
    }

    public SortConfig numPartitions(int v) {
        numPartitions = checkNumPartitions(v);
        return this;
    }

    /** Seed of the sample that places the range boundaries (the result does not depend on it, only the balance). */
    public SortConfig seed(long v) {
        seed = v;
        return this;
    }

    /** Accumulators that collect where the time of the sort goes (benchmarks); null: none. */
    public SortConfig metrics(SortMetrics v) {
        metrics = v;
        return this;
    }

    public SortConfig keyCol(String v) {
        keyCol = v;
        return this;
    }

    public String keyCol() {
        return keyCol;
    }

    /** The backend asked for; null: the Spark setting, else auto. */
    public Backend backend() {
        return backend;
    }

    public boolean isAscending() {
        return ascending;
    }

    /** Nulls first: as set, else Spark's default (first when ascending, last when descending). */
    public boolean isNullsFirst() {
        return nullsFirst != null ? nullsFirst : ascending;
    }

    /** numPartitions: >= 0 (0: spark.sql.shuffle.partitions) and at most {@link #MAX_PARTITIONS}. */
    public static int checkNumPartitions(int v) {
        if (v < 0 || v > MAX_PARTITIONS) {
            throw new IllegalArgumentException("numPartitions must be in [0, " + MAX_PARTITIONS
                    + "] (0: spark.sql.shuffle.partitions), got " + v);
        }
        return v;
    }

    /** The key column: it must exist and have a sortable type ({@link SortKeys#checkKeyType}); returns its ordinal. */
    public static int checkKeyCol(StructType schema, String keyCol) {
        int i = SchemaColumns.index(schema, keyCol, "key column");
        SortKeys.checkKeyType(keyCol, schema.fields()[i].dataType());
        return i;
    }

    /** The input must not have the columns a global sort adds while it runs. */
    public static void checkNoInternalColumns(StructType schema) {
        for (String c : schema.fieldNames()) {
            if (c.equals(PARTITION_COL) || c.equals(ID_COL)) {
                throw new IllegalArgumentException("input columns must not be named " + c
                        + " (the sort adds a column of that name while it runs)");
            }
        }
    }

    /** Every rule, against the input's schema; returns the key column's ordinal. */
    public int validate(StructType schema) {
        checkNumPartitions(numPartitions);
        return checkKeyCol(schema, keyCol);
    }
}
