package io.sparkgpu.tsne;

import io.sparkgpu.ml.HasBackend;
import io.sparkgpu.ml.ParamChecks;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.param.Param;
import org.apache.spark.sql.types.StructType;

/** The params that {@link GpuTsne} and {@link GpuTsneModel} share (idCol, outputCol, backend), declared once. */
public interface GpuTsneModelParams<T extends GpuTsneModelParams<T>> extends HasBackend<T> {
    String DEFAULT_OUTPUT = "embedding";
    /** Name of the id column of the embedding when idCol is unset (the generated row index). */
    String GENERATED_ID = "id";

    default Param<String> idCol() {
        return slot("idCol", o -> new Param<>(o, "idCol", "Column identifying rows (numbers or strings, unique, not "
                + "null); the fit numbers rows by id and draws starts from (seed, id), so the embedding does not depend "
                + "on the input's order. When unset the row index in DataFrame order (0..n-1, as a long column 'id' of "
                + "the embedding), and the embedding follows that order."));
    }

    default Param<String> outputCol() {
        return slot("outputCol", o -> new Param<>(o, "outputCol", "Output column holding the embedding (ml Vector of "
                + "dimension values)."));
    }

    /** The id column, or null when unset (estimator: the generated row index; a model defaults to "id"). */
    default String getIdCol() {
        return valueOrNull(idCol());
    }

    default String getOutputCol() {
        return getOrDefault(outputCol());
    }

    /** Sets idCol; null or "" clears it. */
    default T setIdCol(String value) {
        return withOrClear(idCol(), value == null || value.isEmpty() ? null : value);
    }

    default T setOutputCol(String value) {
        return with(outputCol(), value);
    }

    /** The id column name of the embedding for an idCol setting (null or empty: generated). */
    static String idName(String idCol) {
        return idCol == null || idCol.isEmpty() ? GENERATED_ID : idCol;
    }

    /** Checks that the output column is new and appends it (ml Vector). */
    static StructType appendOutput(StructType schema, String outputCol) {
        return ParamChecks.appendColumn(schema, "outputCol", outputCol, SQLDataTypes.VectorType(), false);
    }
}
