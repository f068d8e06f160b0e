package io.sparkgpu.spline;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Appends double columns computed from one numeric column, per partition on the executors, in batches of
 * {@link #BATCH} rows (one GPU launch per batch when a GPU is used): the transform of the spline and CDF models.
 * A null input gives null outputs; the row order is kept.
 */
final class SplineTransform {
    /** Rows per evaluation batch. */
    static final int BATCH = 1 << 16;

    private SplineTransform() {
    }

    /** The outputs (one array per appended column) of a batch of inputs. */
    @FunctionalInterface
    public interface BatchFn extends Serializable {
        double[][] apply(double[] in);
    }

    /** Checks that {@code col} is a numeric column of {@code schema} and returns its index. */
    public static int checkNumeric(StructType schema, String param, String col) {
        if (col == null || !Arrays.asList(schema.fieldNames()).contains(col)) {
            throw new IllegalArgumentException(param + " '" + col + "' is not a column of the input (columns: "
                    + String.join(", ", schema.fieldNames()) + ")");
        }
        StructField f = schema.apply(col);
        if (!(f.dataType() instanceof NumericType)) {
            throw new IllegalArgumentException(param + " '" + col + "' must be numeric, got " + f.dataType().simpleString());
        }
        return schema.fieldIndex(col);
    }

    /** {@code df} with the columns {@code outCols} (doubles, nullable) appended. */
    public static Dataset<Row> append(Dataset<?> df, String inCol, String inParam, String[] outCols, BatchFn fn) {
        StructType schema = df.schema();
        int idx = checkNumeric(schema, inParam, inCol);
        StructType out = schema;
        for (String c : outCols) {
            out = out.add(c, DataTypes.DoubleType, true);
        }
        int k = outCols.length;
        return df.toDF().mapPartitions((Iterator<Row> rows) -> new Iterator<Row>() {
            private final List<Row> buf = new ArrayList<>();
            private double[][] res = new double[0][];
            private int pos;

            @Override
            public boolean hasNext() {
                if (pos < buf.size()) {
                    return true;
                }
                buf.clear();
                pos = 0;
                double[] xs = new double[BATCH];
                int n = 0;
                while (rows.hasNext() && n < BATCH) {
                    Row r = rows.next();
                    xs[n++] = r.isNullAt(idx) ? Double.NaN : ((Number) r.get(idx)).doubleValue();
                    buf.add(r);
                }
                if (n == 0) {
                    return false;
                }
                res = fn.apply(n == BATCH ? xs : Arrays.copyOf(xs, n));
                return true;
            }

            @Override
            public Row next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Row r = buf.get(pos);
                Object[] vals = new Object[r.size() + k];
                for (int i = 0; i < r.size(); i++) {
                    vals[i] = r.get(i);
                }
                boolean nul = r.isNullAt(idx);
                for (int c = 0; c < k; c++) {
                    vals[r.size() + c] = nul ? null : res[c][pos];
                }
                pos++;
                return RowFactory.create(vals);
            }
        }, Encoders.row(out));
    }
}
