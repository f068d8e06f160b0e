package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.Backend;
import java.io.Serializable;
import java.util.Locale;

/** Settings of one isotonic fit (validated; messages name the parameter). */
public final class IsotonicConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    public enum Loss { L2, L1 }

    public enum Algorithm { PAVA, MLS }

    public enum Direction { INCREASING, DECREASING, AUTO }

    public enum OutOfBounds { CLIP, NAN, ERROR }

    public Loss loss = Loss.L2;
    public Algorithm algorithm = Algorithm.PAVA;
    public Direction direction = Direction.INCREASING;
    public Backend backend = Backend.AUTO;
    /** Lower and upper bounds of the fitted values; NaN when unset. */
    public double yMin = Double.NaN;
    public double yMax = Double.NaN;
    /** Points per GPU chunk of PAVA-merge. */
    public int chunk = IsotonicGpu.DEFAULT_CHUNK;
    /**
     * Feature ranges of the range path ({@link IsotonicTrainer}), each solved on its own and then merged exactly;
     * it changes only how the work is split, never the model. 0 (default): one range per GPU (more when a range
     * would not fit in device memory) with a GPU backend for L2/PAVA, else as many as the input has partitions.
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

    /** Checks the combination of settings. */
    public IsotonicConfig validate() {
        if (loss == Loss.L1 && algorithm == Algorithm.MLS) {
            throw new IllegalArgumentException("algorithm=mls supports loss=l2 only (the L1 loss runs median PAVA); "
                    + "set algorithm=pava");
        }
        if (yMin == Double.POSITIVE_INFINITY) {
            throw new IllegalArgumentException("yMin must not be +Infinity");
        }
        if (yMax == Double.NEGATIVE_INFINITY) {
            throw new IllegalArgumentException("yMax must not be -Infinity");
        }
        if (!Double.isNaN(yMin) && !Double.isNaN(yMax) && yMin > yMax) {
            throw new IllegalArgumentException("yMin (" + yMin + ") must be <= yMax (" + yMax + ")");
        }
        if (chunk < 1) {
            throw new IllegalArgumentException("chunk must be >= 1, got " + chunk);
        }
        if (localRows < -1) {
            throw new IllegalArgumentException("localRows must be >= 0, or -1 for the setting, got " + localRows);
        }
        if (numPartitions < 0) {
            throw new IllegalArgumentException("numPartitions must be >= 0, got " + numPartitions);
        }
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
