package io.sparkgpu.common;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** Looking up the input columns that a param names, with errors that name the param and the column. */
public final class SchemaColumns {
    private SchemaColumns() {
    }

    /** Index of column {@code col} (exact name); IllegalArgumentException naming {@code param} if unset or missing. */
    public static int index(StructType schema, String col, String param) {
        if (col == null || col.isEmpty()) {
            throw new IllegalArgumentException(param + " is not set");
        }
        StructField[] fs = schema.fields();
        for (int i = 0; i < fs.length; i++) {
            if (fs[i].name().equals(col)) {
                return i;
            }
        }
        throw new IllegalArgumentException(param + ": column '" + col + "' does not exist. Available columns: "
                + String.join(", ", schema.fieldNames()));
    }

    /** Column {@code col}, which must exist and be numeric. */
    public static StructField numeric(StructType schema, String col, String param) {
        StructField f = schema.fields()[index(schema, col, param)];
        DataType t = f.dataType();
        if (!(t instanceof NumericType)) {
            throw new IllegalArgumentException(param + ": column '" + col + "' must be numeric, but has type "
                    + t.simpleString());
        }
        return f;
    }
}
