package io.sparkgpu.spline;

import java.io.Serializable;

/**
 * A built monotone spline, in the one layout both kinds share and both twins read: knots {@code t} (non-decreasing),
 * values {@code a} and first derivatives {@code b} at the knots, all three of one length T, stored for the
 * <em>non-decreasing</em> version of the data (values and slopes multiplied by {@link #sign}, which is exact), so that
 * a decreasing spline is {@code sign * s(x)}.
 * <ul>
 *   <li>{@link SplineConfig.Kind#SCHUMAKER}: T = 2n - 1. Knot 2i is x_i and knot 2i + 1 is the extra knot of
 *       interval i (equal to x_i when the interval needs none); the piece on [t_j, t_j+1] is the quadratic with
 *       value a_j and slope b_j at t_j and slope b_j+1 at t_j+1 (its value there is a_j+1). The last knot is x_n-1
 *       (a terminal entry: its value and slope continue the spline when extrapolating linearly).</li>
 *   <li>{@link SplineConfig.Kind#RATIONAL}: T = n, the data itself: t = x, a = sign y, b = sign p (given or Butland
 *       slopes); the piece on [x_i, x_i+1] is Gregory and Delbourgo's rational quadratic.</li>
 * </ul>
 * Immutable by convention (the arrays are not copied for speed: do not change them).
 */
public final class Spline implements Serializable {
    private static final long serialVersionUID = 1L;

    public final SplineConfig.Kind kind;
    /** +1 when the data is non-decreasing (y[n-1] >= y[0]), -1 when non-increasing. */
    public final double sign;
    public final double[] t;
    public final double[] a;
    public final double[] b;

    public Spline(SplineConfig.Kind kind, double sign, double[] t, double[] a, double[] b) {
        if (t.length != a.length || t.length != b.length) {
            throw new IllegalArgumentException("knots, values and slopes must have one length, got " + t.length
                    + ", " + a.length + ", " + b.length);
        }
        this.kind = kind;
        this.sign = sign;
        this.t = t;
        this.a = a;
        this.b = b;
    }

    /** Entries T of the knot arrays. */
    public int size() {
        return t.length;
    }

    /** Number of data points n the spline interpolates. */
    public int dataPoints() {
        return kind == SplineConfig.Kind.SCHUMAKER ? (t.length + 1) / 2 : t.length;
    }

    public double xMin() {
        return t[0];
    }

    public double xMax() {
        return t[t.length - 1];
    }

    /** The smallest value (y) the spline takes on its knots. */
    public double yMin() {
        return sign > 0 ? a[0] : -a[a.length - 1];
    }

    public double yMax() {
        return sign > 0 ? a[a.length - 1] : -a[0];
    }

    /** True when the two hold the same bits. */
    public boolean sameBits(Spline o) {
        return kind == o.kind && Double.compare(sign, o.sign) == 0 && java.util.Arrays.equals(t, o.t)
                && java.util.Arrays.equals(a, o.a) && java.util.Arrays.equals(b, o.b);
    }

    @Override
    public String toString() {
        return "Spline(" + kind.id() + ", " + dataPoints() + " points, x in [" + xMin() + ", " + xMax() + "], "
                + (sign > 0 ? "non-decreasing" : "non-increasing") + ")";
    }
}
