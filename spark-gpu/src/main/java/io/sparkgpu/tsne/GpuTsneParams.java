package io.sparkgpu.tsne;

import io.sparkgpu.cuda.Backend;
import java.io.Serializable;
import java.util.Arrays;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Function1;

/** The Params shared by {@link GpuTsne} and {@link GpuTsneModel} (same names and docs, one object per owner). */
final class GpuTsneParams {
    static final String DEFAULT_FEATURES = "features";
    static final String DEFAULT_OUTPUT = "embedding";
    /** Name of the id column of the embedding when idCol is unset (the generated row index). */
    static final String GENERATED_ID = "id";

    private GpuTsneParams() {
    }

    static Param<String> idCol(Identifiable owner) {
        return new Param<>(owner, "idCol", "Column identifying rows (numbers or strings, unique, not null); when unset "
                + "the row index in DataFrame order (0..n-1, as a long column 'id' of the embedding).");
    }

    static Param<String> outputCol(Identifiable owner) {
        return new Param<>(owner, "outputCol", "Output column holding the embedding (ml Vector of dimension values).");
    }

    static Param<String> backend(Identifiable owner) {
        return new Param<>(owner, "backend", "Where the kNN, affinities and forces run: 'auto' (GPU when usable, else "
                + "the bitwise-identical CPU twin), 'gpu' or 'cpu'.", (Function1<String, Object> & Serializable) v -> {
                    Backend.parse(v, "backend");
                    return Boolean.TRUE;
                });
    }

    static Function1<String, Object> oneOf(String... allowed) {
        return (Function1<String, Object> & Serializable) v -> v != null && Arrays.asList(allowed).contains(v);
    }

    /** The id column name of the embedding for an idCol setting (null or empty: generated). */
    static String idName(String idCol) {
        return idCol == null || idCol.isEmpty() ? GENERATED_ID : idCol;
    }

    /** Checks that the output column is new and appends it (ml Vector). */
    static StructType appendOutput(StructType schema, String outputCol) {
        if (outputCol == null || outputCol.isEmpty()) {
            throw new IllegalArgumentException("outputCol must be a non-empty column name");
        }
        if (Arrays.asList(schema.fieldNames()).contains(outputCol)) {
            throw new IllegalArgumentException("outputCol '" + outputCol + "' already exists in the input columns ("
                    + String.join(", ", schema.fieldNames()) + "); choose another name with setOutputCol");
        }
        return schema.add(new StructField(outputCol, SQLDataTypes.VectorType(), false, Metadata.empty()));
    }
}
