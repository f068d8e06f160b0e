package io.sparkgpu.scan;

import io.sparkgpu.cuda.Backend;
import java.io.Serializable;
import java.util.Arrays;
import org.apache.spark.ml.param.DoubleArrayParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntArrayParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.LongParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.param.StringArrayParam;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.Function1;

/**
 * The one place where the Params of {@link GpuScanStatistic} and {@link GpuScanModel} are declared, so that
 * both expose identical names, docs and validators (Spark copies values between them by name).
 */
final class GpuScanParams {
    static final String DEFAULT_CASES = "cases";
    static final String DEFAULT_BASELINE = "baseline";
    static final String DEFAULT_CLUSTER = "cluster";

    private GpuScanParams() {
    }

    private static <T> Function1<T, Object> check(java.util.function.Consumer<T> parse) {
        return (Function1<T, Object> & Serializable) v -> {
            try {
                parse.accept(v);
                return Boolean.TRUE;
            } catch (IllegalArgumentException e) {
                return Boolean.FALSE;
            }
        };
    }

    static Param<String> inputType(Identifiable o) {
        return new Param<>(o, "inputType", "'cells' (one row per grid cell: integer coordinates, cases, baseline) or "
                + "'points' (one row per individual or event, binned onto gridSize bins per axis).",
                check(v -> new ScanInput(v, new String[] {"x"}, "c", "b", null, new int[] {1}, null)));
    }

    static StringArrayParam coordinateCols(org.apache.spark.ml.param.Params o) {
        return new StringArrayParam(o, "coordinateCols", "1 to 3 numeric coordinate columns, x first.",
                (Function1<String[], Object> & Serializable) v -> v.length >= 1 && v.length <= 3);
    }

    static Param<String> casesCol(Identifiable o) {
        return new Param<>(o, "casesCol", "Cases per row: counts (cells), 0/1 flags or counts (points); the observed "
                + "value for the normal model.");
    }

    static Param<String> baselineCol(Identifiable o) {
        return new Param<>(o, "baselineCol", "Baseline per row: population or expected count (Poisson), population "
                + "(Bernoulli), expected count (ebp), number of observations (normal). Optional for points (1 each).");
    }

    static Param<String> sumSquaresCol(Identifiable o) {
        return new Param<>(o, "sumSquaresCol", "Normal model with cells input: per-cell sum of squared observations "
                + "(optional).");
    }

    static IntArrayParam gridSize(org.apache.spark.ml.param.Params o) {
        return new IntArrayParam(o, "gridSize", "Bins per axis (points, required); for cells an optional grid "
                + "size with 0-based coordinates.",
                (Function1<int[], Object> & Serializable) v -> Arrays.stream(v).allMatch(x -> x >= 1));
    }

    static DoubleArrayParam extent(org.apache.spark.ml.param.Params o) {
        return new DoubleArrayParam(o, "extent", "Points only, optional: lo, hi of each axis (default: the data's "
                + "range).");
    }

    static Param<String> statistic(Identifiable o) {
        return new Param<>(o, "statistic", "Probability model: poisson (Kulldorff), bernoulli (Kulldorff), normal "
                + "(Kulldorff et al. 2009) or ebp (expectation-based Poisson, Neill et al. 2005).",
                check(v -> ScanModel.parse(v, "statistic")));
    }

    static Param<String> direction(Identifiable o) {
        return new Param<>(o, "direction", "Clusters of high rate, low rate or both.",
                check(v -> ScanDirection.parse(v, "direction")));
    }

    static LongParam minCells(Identifiable o) {
        return new LongParam(o, "minCells", "Smallest range in cells (>= 1).", ParamValidators.<Object>gtEq(1));
    }

    static LongParam maxCells(Identifiable o) {
        return new LongParam(o, "maxCells", "Largest range in cells (0 = no limit).", ParamValidators.<Object>gtEq(0));
    }

    static DoubleParam maxBaselineFraction(Identifiable o) {
        return new DoubleParam(o, "maxBaselineFraction", "Largest share of the total baseline inside a range, in "
                + "(0, 1] (SaTScan's usual limit is 0.5).", ParamValidators.<Object>inRange(0, 1, false, true));
    }

    static IntParam numClusters(Identifiable o) {
        return new IntParam(o, "numClusters", "Clusters to report: the most likely one and up to numClusters-1 "
                + "non-overlapping secondary clusters.", ParamValidators.<Object>inRange(1, ScanSpec.MAX_EXCLUDED + 1));
    }

    static IntParam numReplicas(Identifiable o) {
        return new IntParam(o, "numReplicas", "Monte Carlo replicas for the p-values (0 = none).",
                ParamValidators.<Object>gtEq(0));
    }

    static LongParam seed(Identifiable o) {
        return new LongParam(o, "seed", "Seed of the Monte Carlo replicas.");
    }

    static IntParam numPartitions(Identifiable o) {
        return new IntParam(o, "numPartitions", "Spark tasks per scan (0 = the default parallelism).",
                ParamValidators.<Object>gtEq(0));
    }

    static Param<String> backend(Identifiable o) {
        return new Param<>(o, "backend", "Where scans run: 'auto' (GPU when usable, else the bitwise-identical CPU "
                + "twin), 'gpu' (fail without a usable GPU) or 'cpu'.", check(v -> Backend.parse(v, "backend")));
    }

    static Param<String> clusterCol(Identifiable o) {
        return new Param<>(o, "clusterCol", "Output column of transform: rank of the reported cluster containing the "
                + "row's cell (1 = most likely), null when none does.");
    }

    /** Checks the coordinate columns and appends clusterCol (int, nullable). */
    static StructType appendCluster(StructType schema, String[] coordinateCols, String clusterCol) {
        if (coordinateCols == null || coordinateCols.length == 0) {
            throw new IllegalArgumentException("coordinateCols is not set");
        }
        for (String c : coordinateCols) {
            io.sparkgpu.common.SchemaColumns.numeric(schema, c, "coordinateCols");
        }
        if (clusterCol == null || clusterCol.isEmpty()) {
            throw new IllegalArgumentException("clusterCol must be a non-empty column name");
        }
        if (Arrays.asList(schema.fieldNames()).contains(clusterCol)) {
            throw new IllegalArgumentException("clusterCol '" + clusterCol + "' already exists in the input columns ("
                    + String.join(", ", schema.fieldNames()) + "); choose another name with setClusterCol");
        }
        return schema.add(clusterCol, DataTypes.IntegerType, true);
    }
}
