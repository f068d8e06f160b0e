package io.sparkgpu.isotonic;

import java.io.Serializable;
import java.util.Arrays;

/**
 * Evaluates a fitted isotonic function: at a boundary its prediction, between two boundaries linear
 * interpolation with MLlib's formula {@code y1 + (y2 - y1) * (x - x1) / (x2 - x1)} (so the values equal MLlib's
 * bit for bit), and outside the boundaries by the {@code outOfBounds} policy: {@code clip} (the nearest end's
 * prediction, as MLlib), {@code nan}, or {@code error}. A NaN feature gives NaN. O(log m) per call.
 */
public final class IsotonicPredictor implements Serializable {
    private static final long serialVersionUID = 1L;

    private final double[] boundaries;
    private final double[] predictions;
    private final IsotonicConfig.OutOfBounds outOfBounds;

    public IsotonicPredictor(double[] boundaries, double[] predictions, IsotonicConfig.OutOfBounds outOfBounds) {
        check(boundaries, predictions);
        this.boundaries = boundaries.clone();
        this.predictions = predictions.clone();
        this.outOfBounds = outOfBounds;
    }

    /** Boundaries strictly increasing and finite, predictions finite, same non-zero length. */
    static void check(double[] boundaries, double[] predictions) {
        if (boundaries == null || predictions == null || boundaries.length != predictions.length) {
            throw new IllegalArgumentException("boundaries and predictions must have the same length");
        }
        if (boundaries.length == 0) {
            throw new IllegalArgumentException("an isotonic model needs at least one boundary");
        }
        for (int i = 0; i < boundaries.length; i++) {
            if (!Double.isFinite(boundaries[i]) || !Double.isFinite(predictions[i])) {
                throw new IllegalArgumentException("boundaries and predictions must be finite (index " + i + ")");
            }
            if (i > 0 && !(boundaries[i - 1] < boundaries[i])) {
                throw new IllegalArgumentException("boundaries must be strictly increasing (index " + i + ": "
                        + boundaries[i - 1] + " then " + boundaries[i] + ")");
            }
        }
    }

    public IsotonicConfig.OutOfBounds outOfBounds() {
        return outOfBounds;
    }

    public int size() {
        return boundaries.length;
    }

    public double predict(double x) {
        if (Double.isNaN(x)) {
            return Double.NaN;
        }
        int last = boundaries.length - 1;
        if (x < boundaries[0] || x > boundaries[last]) {
            switch (outOfBounds) {
                case NAN:
                    return Double.NaN;
                case ERROR:
                    throw new IllegalArgumentException("feature " + x + " is outside the training range ["
                            + boundaries[0] + ", " + boundaries[last] + "] (outOfBounds=error)");
                default:
                    return x < boundaries[0] ? predictions[0] : predictions[last];
            }
        }
        // Arrays.binarySearch orders -0.0 before 0.0 where the range check above does not: search for +0.0, and a zero
        // that still lands outside (a boundary of -0.0 at the end, or 0.0 at the start) is that boundary
        int found = Arrays.binarySearch(boundaries, x + 0.0);
        if (found >= 0) {
            return predictions[found];
        }
        int ins = -found - 1;
        if (ins == 0 || ins > last) {
            return predictions[ins == 0 ? 0 : last];
        }
        double x1 = boundaries[ins - 1];
        double y1 = predictions[ins - 1];
        double x2 = boundaries[ins];
        double y2 = predictions[ins];
        return y1 + (y2 - y1) * (x - x1) / (x2 - x1);
    }
}
