package io.sparkgpu.scan;

import io.sparkgpu.ml.ParamChecks;
import io.sparkgpu.ml.SharedParams;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.StringArrayParam;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The params that {@link GpuScanStatistic} and {@link GpuScanModel} share (inputType, coordinateCols, statistic,
 * direction, clusterCol), declared once; validators are the rules of {@link ScanConfig} and {@link ScanInput}.
 */
public interface GpuScanModelParams<T extends GpuScanModelParams<T>> extends SharedParams<T> {
    String DEFAULT_CLUSTER = "cluster";

    default Param<String> inputType() {
        return slot("inputType", o -> new Param<>(o, "inputType", "'cells' (one row per grid cell: integer "
                + "coordinates, cases, baseline) or 'points' (one row per individual or event, binned onto gridSize "
                + "bins per axis).", ParamChecks.<String>validator(ScanInput::checkInputType)));
    }

    default StringArrayParam coordinateCols() {
        return slot("coordinateCols", o -> new StringArrayParam(this, "coordinateCols", "1 to 3 distinct numeric "
                + "coordinate columns, x first.", ParamChecks.<String[]>validator(ScanInput::checkCoordinateCols)));
    }

    default Param<String> statistic() {
        return slot("statistic", o -> new Param<>(o, "statistic", "Probability model: poisson (Kulldorff), bernoulli "
                + "(Kulldorff), normal (Kulldorff et al. 2009) or ebp (expectation-based Poisson, Neill et al. 2005). "
                + "poisson and ebp take fractional case counts, bernoulli whole ones.",
                ParamChecks.<String>validator(ScanConfig::checkStatistic)));
    }

    default Param<String> direction() {
        return slot("direction", o -> new Param<>(o, "direction", "Clusters of high rate, low rate or both.",
                ParamChecks.<String>validator(ScanConfig::checkDirection)));
    }

    default Param<String> clusterCol() {
        return slot("clusterCol", o -> new Param<>(o, "clusterCol", "Output column of transform: rank of the reported "
                + "cluster containing the row's cell (1 = most likely), null when none does."));
    }

    default String getInputType() {
        return getOrDefault(inputType());
    }

    /** The coordinate columns, or null when unset. */
    default String[] getCoordinateCols() {
        return valueOrNull(coordinateCols());
    }

    default String getStatistic() {
        return getOrDefault(statistic());
    }

    default String getDirection() {
        return getOrDefault(direction());
    }

    default String getClusterCol() {
        return getOrDefault(clusterCol());
    }

    default T setCoordinateCols(String... v) {
        return with(coordinateCols(), v);
    }

    default T setClusterCol(String v) {
        return with(clusterCol(), v);
    }

    /** Checks the coordinate columns and appends clusterCol (int, nullable). */
    static StructType appendCluster(StructType schema, String[] coordinateCols, String clusterCol) {
        if (coordinateCols == null || coordinateCols.length == 0) {
            throw new IllegalArgumentException("coordinateCols is not set");
        }
        for (String c : coordinateCols) {
            io.sparkgpu.common.SchemaColumns.numeric(schema, c, "coordinateCols");
        }
        return ParamChecks.appendColumn(schema, "clusterCol", clusterCol, DataTypes.IntegerType, true);
    }
}
