package io.sparkgpu.tsne;

import static io.sparkgpu.ml.ParamChecks.doubleValidator;
import static io.sparkgpu.ml.ParamChecks.intValidator;

import io.sparkgpu.ml.HasBackend;
import io.sparkgpu.ml.HasFeaturesCol;
import io.sparkgpu.ml.ParamChecks;
import io.sparkgpu.tsne.optimize.TsneTransform;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.param.Param;
import org.apache.spark.sql.types.StructType;

/**
 * The params that {@link GpuTsne} and {@link GpuTsneModel} share, declared once: idCol, outputCol, backend, the
 * kernel's dof (the model embeds new points with the fit's kernel), featuresCol and the settings of the transform of
 * new points (transformMaxIter, transformLearningRate; see {@link TsneTransform}).
 */
public interface GpuTsneModelParams<T extends GpuTsneModelParams<T>> extends HasBackend<T>, HasFeaturesCol<T> {
    String DEFAULT_OUTPUT = "embedding";
    /** Name of the id column of the embedding when idCol is unset (the generated row index). */
    String GENERATED_ID = "id";

    default Param<String> idCol() {
        return slot("idCol", o -> new Param<>(o, "idCol", "Column identifying rows (numbers or strings, unique, not "
                + "null); the fit numbers rows by id and draws starts from (seed, id), so the embedding does not depend "
                + "on the input's order. When unset the row index in DataFrame order (0..n-1, as a long column 'id' of "
                + "the embedding), and the embedding follows that order."));
    }

    default DoubleParam dof() {
        return slot("dof", o -> new DoubleParam(o, "dof", "Degrees of freedom of the similarity kernel (1 + d^2 / "
                + "dof)^-dof, in (0, 2]: 1 is standard t-SNE, smaller values give heavier tails (finer clusters).",
                doubleValidator(TsneConfig::checkDof)));
    }

    default IntParam transformMaxIter() {
        return slot("transformMaxIter", o -> new IntParam(o, "transformMaxIter", "Model: iterations that place rows "
                + "whose ids were not fitted (>= 0; 0: the P-weighted mean of their reference neighbours).",
                intValidator(TsneTransform.Settings::checkMaxIter)));
    }

    default DoubleParam transformLearningRate() {
        return slot("transformLearningRate", o -> new DoubleParam(o, "transformLearningRate", "Model: step of the "
                + "placement of new rows (finite, > 0).", doubleValidator(TsneTransform.Settings::checkLearningRate)));
    }

    default double getDof() {
        return (Double) getOrDefault(dof());
    }

    default T setDof(double v) {
        return with(dof(), v);
    }

    default int getTransformMaxIter() {
        return (Integer) getOrDefault(transformMaxIter());
    }

    default T setTransformMaxIter(int v) {
        return with(transformMaxIter(), v);
    }

    default double getTransformLearningRate() {
        return (Double) getOrDefault(transformLearningRate());
    }

    default T setTransformLearningRate(double v) {
        return with(transformLearningRate(), v);
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
