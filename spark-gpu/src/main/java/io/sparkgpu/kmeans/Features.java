package io.sparkgpu.kmeans;

import io.sparkgpu.common.SchemaColumns;
import java.util.List;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructType;

/** Reading and validating feature and weight columns (ml Vector or array of numbers). */
public final class Features {
    private Features() {
    }

    /** Checks that {@code featuresCol} exists and holds vectors or numeric arrays; returns its index. */
    public static int checkFeatures(StructType schema, String featuresCol) {
        int idx = SchemaColumns.index(schema, featuresCol, "featuresCol");
        DataType t = schema.fields()[idx].dataType();
        boolean ok = t.equals(SQLDataTypes.VectorType())
                || (t instanceof ArrayType && ((ArrayType) t).elementType() instanceof NumericType);
        if (!ok) {
            throw new IllegalArgumentException("featuresCol '" + featuresCol + "' must be a vector or array<double> column, but has type "
                    + t.simpleString());
        }
        return idx;
    }

    /** Checks that {@code weightCol} exists and is numeric; returns its index. */
    public static int checkWeight(StructType schema, String weightCol) {
        int idx = SchemaColumns.index(schema, weightCol, "weightCol");
        DataType t = schema.fields()[idx].dataType();
        if (!(t instanceof NumericType)) {
            throw new IllegalArgumentException("weightCol '" + weightCol + "' must be numeric, but has type " + t.simpleString());
        }
        return idx;
    }

    /** The feature values of {@code row} at {@code idx}; null values are an error naming the column. */
    public static double[] read(Row row, int idx, String featuresCol) {
        if (row.isNullAt(idx)) {
            throw new IllegalArgumentException("featuresCol '" + featuresCol + "' contains a null value");
        }
        Object v = row.get(idx);
        if (v instanceof Vector) {
            return ((Vector) v).toArray();
        }
        List<Object> list = row.getList(idx);
        double[] out = new double[list.size()];
        for (int i = 0; i < out.length; i++) {
            Object e = list.get(i);
            if (e == null) {
                throw new IllegalArgumentException("featuresCol '" + featuresCol + "' contains an array with a null element");
            }
            out[i] = ((Number) e).doubleValue();
        }
        return out;
    }

    public static double readWeight(Row row, int idx, String weightCol) {
        if (row.isNullAt(idx)) {
            throw new IllegalArgumentException("weightCol '" + weightCol + "' contains a null value");
        }
        double w = ((Number) row.get(idx)).doubleValue();
        if (Double.isNaN(w) || Double.isInfinite(w) || w < 0) {
            throw new IllegalArgumentException("weightCol '" + weightCol + "' must hold finite weights >= 0, found " + w);
        }
        return w;
    }

    /**
     * Validates one point in place: finite values, expected size; turns -0.0 into 0.0 so that equal points
     * have equal bits; for cosine normalises to a unit vector (zero vectors are rejected).
     */
    public static void clean(double[] p, String featuresCol, boolean cosine) {
        double ss = 0;
        for (int j = 0; j < p.length; j++) {
            double v = p[j];
            if (Double.isNaN(v) || Double.isInfinite(v)) {
                throw new IllegalArgumentException("featuresCol '" + featuresCol + "' contains " + v
                        + " (at index " + j + "); k-means needs finite features");
            }
            p[j] = v + 0.0;
            ss += v * v;
        }
        if (cosine) {
            if (ss == 0) {
                throw new IllegalArgumentException("featuresCol '" + featuresCol
                        + "' contains a zero vector; the cosine distance is not defined for it");
            }
            double norm = Math.sqrt(ss);
            for (int j = 0; j < p.length; j++) {
                p[j] = p[j] / norm + 0.0;
            }
        }
    }
}
