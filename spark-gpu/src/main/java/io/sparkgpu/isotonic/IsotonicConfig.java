package io.sparkgpu.isotonic;

import static io.sparkgpu.ml.ParamChecks.require;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import java.io.Serializable;
import java.util.Locale;

/**
 * Settings of one isotonic fit, and the one place of their rules: the parse methods and static checks below are the
 * validators of the estimator's params ({@link GpuIsotonicParams}), {@link #validate()} runs them all at the
 * trainers' entry ({@link IsotonicTrainer#train}, {@link IsotonicLocal#fit}); messages name the setting. The
 * initial values are the defaults of every surface.
 */
public final class IsotonicConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    public enum Loss { L2, L1 }

    public enum Algorithm { PAVA, MLS }

    public enum Direction { INCREASING, DECREASING, AUTO }

    public enum OutOfBounds { CLIP, NAN, ERROR }

    public Loss loss = Loss.L2;
    public Algorithm algorithm = Algorithm.PAVA;
    public Direction direction = Direction.INCREASING;
    /** null: the setting spark.sparkgpu.backend, else auto (resolved by {@link #validate()}). */
    public Backend backend;
    /** Lower and upper bounds of the fitted values; NaN when unset. */
    public double yMin = Double.NaN;
    public double yMax = Double.NaN;
    /** Points per GPU chunk of PAVA-merge. */
    public int chunk = IsotonicGpu.DEFAULT_CHUNK;
    /**
     * Feature ranges of the range path ({@link IsotonicTrainer}), each solved on its own and then merged exactly;
     * it changes only how the work is split, never the model. 0 (default): with a GPU backend for L2/PAVA one
     * range when one executor holds every GPU and all rows fit in one device (no shuffle), else one per GPU (more
     * when a range would not fit); otherwise as many as the input has partitions.
     * Inputs of at most {@link #localRows} rows are solved on the driver whatever this says.
     */
    public int numPartitions;
    /**
     * Inputs of at most this many rows are solved on the driver in one piece (no shuffle); -1 (default): the
     * setting {@value IsotonicTrainer#LOCAL_ROWS} (default 2^20); 0: always the range path.
     */
    public long localRows = -1;

    public static Loss parseLoss(String v) {
        switch (lower(v, "loss")) {
            case "l2": case "squared": case "squared_error": return Loss.L2;
            case "l1": case "absolute": case "absolute_error": return Loss.L1;
            default: throw new IllegalArgumentException("loss must be l2 or l1, got '" + v + "'");
        }
    }

    public static Algorithm parseAlgorithm(String v) {
        switch (lower(v, "algorithm")) {
            case "pava": return Algorithm.PAVA;
            case "mls": return Algorithm.MLS;
            default: throw new IllegalArgumentException("algorithm must be pava or mls, got '" + v + "'");
        }
    }

    public static Direction parseDirection(String v) {
        switch (lower(v, "increasing")) {
            case "true": return Direction.INCREASING;
            case "false": return Direction.DECREASING;
            case "auto": return Direction.AUTO;
            default: throw new IllegalArgumentException("increasing must be true, false or auto, got '" + v + "'");
        }
    }

    public static OutOfBounds parseOutOfBounds(String v) {
        switch (lower(v, "outOfBounds")) {
            case "clip": return OutOfBounds.CLIP;
            case "nan": return OutOfBounds.NAN;
            case "error": case "raise": return OutOfBounds.ERROR;
            default: throw new IllegalArgumentException("outOfBounds must be clip, nan or error, got '" + v + "'");
        }
    }

    private static String lower(String v, String what) {
        if (v == null) {
            throw new IllegalArgumentException(what + " must be set, got null");
        }
        return v.trim().toLowerCase(Locale.ROOT);
    }

    /** featureIndex: the element of a vector feature column, &gt;= 0 (a trainer argument, checked at its entry). */
    public static void checkFeatureIndex(int featureIndex) {
        require(featureIndex >= 0, "featureIndex", ">= 0", featureIndex);
    }

    /** yMin: a lower bound of the fitted values; NaN means none, +Infinity is refused. */
    public static void checkYMin(double yMin) {
        require(yMin != Double.POSITIVE_INFINITY, "yMin", "a number below +Infinity (NaN: no bound)", yMin);
    }

    /** yMax: an upper bound of the fitted values; NaN means none, -Infinity is refused. */
    public static void checkYMax(double yMax) {
        require(yMax != Double.NEGATIVE_INFINITY, "yMax", "a number above -Infinity (NaN: no bound)", yMax);
    }

    /** chunk: points per GPU chunk of PAVA-merge, &gt;= 1. */
    public static void checkChunk(int chunk) {
        require(chunk >= 1, "chunk", ">= 1", chunk);
    }

    /** numPartitions: feature ranges of the range path, &gt;= 0 (0: automatic). */
    public static void checkNumPartitions(int numPartitions) {
        require(numPartitions >= 0, "numPartitions", ">= 0 (0: automatic)", numPartitions);
    }

    /** Every rule, the cross-setting ones included; resolves a null backend. Errors name the setting. */
    public IsotonicConfig validate() {
        require(loss != null, "loss", "l2 or l1", null);
        require(algorithm != null, "algorithm", "pava or mls", null);
        require(direction != null, "increasing", "true, false or auto", null);
        if (loss == Loss.L1 && algorithm == Algorithm.MLS) {
            throw new IllegalArgumentException("algorithm=mls supports loss=l2 only (the L1 loss runs median PAVA); "
                    + "set algorithm=pava");
        }
        checkYMin(yMin);
        checkYMax(yMax);
        if (!Double.isNaN(yMin) && !Double.isNaN(yMax) && yMin > yMax) {
            throw new IllegalArgumentException("yMin (" + yMin + ") must be <= yMax (" + yMax + ")");
        }
        checkChunk(chunk);
        require(localRows >= -1, "localRows", ">= 0, or -1 for the setting " + IsotonicTrainer.LOCAL_ROWS, localRows);
        checkNumPartitions(numPartitions);
        backend = SparkGpuConf.backend(backend);
        return this;
    }

    public IsotonicConfig copy() {
        IsotonicConfig c = new IsotonicConfig();
        c.loss = loss;
        c.algorithm = algorithm;
        c.direction = direction;
        c.backend = backend;
        c.yMin = yMin;
        c.yMax = yMax;
        c.chunk = chunk;
        c.numPartitions = numPartitions;
        c.localRows = localRows;
        return c;
    }
}
