package io.sparkgpu.sql;

import java.util.List;

/**
 * Registry of the SQL functions of spark-gpu. A capability that adds a function appends its
 * {@link SqlFunctionSpec} here; {@link SparkGpuExtensions} injects every entry into new sessions.
 */
public final class SparkGpuFunctions {
    private static final List<SqlFunctionSpec> ALL = List.of(
            KMeansPredictFunction.spec(),
            IsotonicPredictFunction.spec(),
            ScanLlrFunction.spec(),
            ScanBestFunction.spec(),
            TsneEmbeddingFunction.spec(),
            // spline (issue 15)
            SplineEvalFunction.spec(),
            SplineCdfFunction.cdfSpec(),
            SplineCdfFunction.quantileSpec(),
            // sort (issue 16)
            SortArrayFunction.spec()
    );

    private SparkGpuFunctions() {
    }

    /** Every function, in registration order. */
    public static List<SqlFunctionSpec> all() {
        return ALL;
    }
}
