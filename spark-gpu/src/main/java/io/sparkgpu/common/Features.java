package io.sparkgpu.common;

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

    // The input errors of the row path (read, readWeight, KMeansTrainer.pack) and of the Row-free path
    // (io.sparkgpu.spark.FeatureIngest): one wording for both.

    public static IllegalArgumentException nullFeatures(String featuresCol) {
        return new IllegalArgumentException("featuresCol '" + featuresCol + "' contains a null value");
    }

    public static IllegalArgumentException nullElement(String featuresCol) {
        return new IllegalArgumentException("featuresCol '" + featuresCol + "' contains an array with a null element");
    }

    public static IllegalArgumentException emptyVectors(String featuresCol) {
        return new IllegalArgumentException("featuresCol '" + featuresCol + "' contains empty vectors");
    }

    public static IllegalArgumentException differentSizes(String featuresCol, int d, int other) {
        return new IllegalArgumentException("featuresCol '" + featuresCol + "' has vectors of different sizes ("
                + d + " and " + other + ")");
    }

    public static IllegalArgumentException nullWeight(String weightCol) {
        return new IllegalArgumentException("weightCol '" + weightCol + "' contains a null value");
    }

    /** {@code w} if it is a finite weight >= 0, else the error naming the column. */
    public static double checkWeightValue(double w, String weightCol) {
        if (Double.isNaN(w) || Double.isInfinite(w) || w < 0) {
            throw new IllegalArgumentException("weightCol '" + weightCol + "' must hold finite weights >= 0, found " + w);
        }
        return w;
    }

    /** The feature values of {@code row} at {@code idx}; null values are an error naming the column. */
    public static double[] read(Row row, int idx, String featuresCol) {
        if (row.isNullAt(idx)) {
            throw nullFeatures(featuresCol);
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
                throw nullElement(featuresCol);
            }
            out[i] = ((Number) e).doubleValue();
        }
        return out;
    }

    public static double readWeight(Row row, int idx, String weightCol) {
        if (row.isNullAt(idx)) {
            throw nullWeight(weightCol);
        }
        return checkWeightValue(((Number) row.get(idx)).doubleValue(), weightCol);
    }

    /**
     * Validates one point in place: finite values, expected size; turns -0.0 into 0.0 so that equal points
     * have equal bits; for cosine normalises to a unit vector (zero vectors are rejected).
     */
    public static void clean(double[] p, String featuresCol, boolean cosine) {
        clean(p, 0, p.length, featuresCol, cosine);
    }

    /** {@link #clean(double[], String, boolean)} for the point {@code x[off, off + d)} of a packed block. */
    public static void clean(double[] x, int off, int d, String featuresCol, boolean cosine) {
        double ss = 0;
        for (int j = 0; j < d; j++) {
            double v = x[off + j];
            if (Double.isNaN(v) || Double.isInfinite(v)) {
                throw new IllegalArgumentException("featuresCol '" + featuresCol + "' contains " + v
                        + " (at index " + j + "); k-means needs finite features");
            }
            x[off + j] = v + 0.0;
            ss += v * v;
        }
        if (cosine) {
            if (ss == 0) {
                throw new IllegalArgumentException("featuresCol '" + featuresCol
                        + "' contains a zero vector; the cosine distance is not defined for it");
            }
            double norm = Math.sqrt(ss);
            for (int j = 0; j < d; j++) {
                x[off + j] = x[off + j] / norm + 0.0;
            }
        }
    }
}
