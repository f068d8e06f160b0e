package io.sparkgpu.spline;

import io.sparkgpu.common.ParallelScan;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * CPU twin of the {@code spline} module ({@code spline.cu}, launched by {@link SplineGpu}): construction and
 * evaluation of monotone splines in the layout of {@link Spline}, giving the kernels' bits. Only + - * / sqrt and
 * comparisons are used, in the kernels' order (no fused multiply-add on either side), so both round alike.
 *
 * <p><b>Slopes (Butland).</b> For the non-decreasing data (y times sign) with interval slopes
 * delta_i = (y_i+1 - y_i) / (x_i+1 - x_i): d_i = 2 delta_i-1 delta_i / (delta_i-1 + delta_i) when both are positive,
 * else 0 (interior); d_0 = 2 delta_0 - d_1 and d_n-1 = 2 delta_n-2 - d_n-2 when positive, else 0; for n = 2 both
 * ends take delta_0 (the line). Every d lies in [0, 2 min(adjacent deltas)], which is what keeps both splines
 * monotone.
 *
 * <p><b>Schumaker's quadratic.</b> Interval i gets one extra knot t (positions 2i, 2i+1 of the output are known in
 * advance, so every interval is built independently): none needed when d_i + d_i+1 = 2 delta_i exactly (t = x_i,
 * one quadratic); when d_i and d_i+1 lie on opposite sides of delta_i, t = x_i+1 + (d_i - delta_i) h /
 * (d_i+1 - d_i) and the slope there is delta_i; otherwise t is the midpoint and the slope there
 * 2 delta_i - (d_i + d_i+1) / 2 (Schumaker's general formula simplified for these two positions). The value at t is
 * y_i + (d_i + dbar) (t - x_i) / 2. A convex piece is evaluated from its left end and a concave one from its right
 * end, so that every rounded operation moves with x and the evaluation is monotone in floating point too; values
 * are clamped to the piece's end values, so pieces never overlap.
 *
 * <p><b>Gregory and Delbourgo's rational quadratic.</b> On [x_i, x_i+1] with theta = (x - x_i)/h, u = 1 - theta:
 * s = y_i + (y_i+1 - y_i) N / (N + M), N = theta (Delta theta + p_i u), M = u (Delta u + p_i+1 theta), which is the
 * paper's P/Q written with non-negative terms only (N + M = Delta + (p_i + p_i+1 - 2 Delta) theta u); derivative
 * Delta^2 (p_i+1 theta^2 + 2 Delta theta u + p_i u^2) / (N + M)^2. Monotone for any p >= 0; values clamped to
 * [y_i, y_i+1] (within a piece the rounding may wiggle by an ulp, across pieces never).
 *
 * <p><b>Inverse.</b> The smallest x with s(x) >= v (non-decreasing data): bisection on the knot values, then the
 * closed-form root of the quadratic piece (the cancellation-free form 2D / (B + sqrt(B^2 + 4CD)) on the scaled
 * piece), or a safeguarded Newton iteration for the rational piece (a Newton step, or bisection when it leaves
 * the bracket).
 */
final class SplineCpu {
    /** Largest magnitude of an interval slope or a given slope (sums of four stay finite). */
    public static final double MAX_SLOPE = 1e300;
    /** Iteration cap of the rational inverse (SPLINE_NEWTON_MAX_ITER in the kernel). */
    public static final int NEWTON_MAX_ITER = 100;
    /** Inputs shorter than this run on the calling thread. */
    static final int PARALLEL_MIN = 1 << 14;

    private SplineCpu() {
    }

    // ------------------------------------------------------------------------------------------ checks

    /** At least two data points. */
    public static void checkPoints(int n) {
        if (n < 2) {
            throw new IllegalArgumentException("a spline needs at least 2 points with distinct x, got " + n);
        }
    }

    /** +1 for non-decreasing data (y[n-1] >= y[0], or NaN there: the checks name it), -1 for non-increasing. */
    public static double signOf(double[] y) {
        return y[y.length - 1] < y[0] ? -1.0 : 1.0;
    }

    /**
     * Whether interval i is valid; the same predicate as {@code interval_ok} in spline.cu: finite ends, x strictly
     * increasing with a finite step, y moving with the sign, |slope| <= MAX_SLOPE, and given slopes (p may be null)
     * finite, of the data's direction and at most MAX_SLOPE.
     */
    static boolean intervalOk(double[] x, double[] y, double[] p, double sign, int i) {
        double x0 = x[i];
        double x1 = x[i + 1];
        double y0 = y[i];
        double y1 = y[i + 1];
        if (!(Double.isFinite(x0) && Double.isFinite(x1) && Double.isFinite(y0) && Double.isFinite(y1))) {
            return false;
        }
        double h = x1 - x0;
        double dy = sign * (y1 - y0);
        if (!(h > 0 && h <= Double.MAX_VALUE && dy >= 0 && dy / h <= MAX_SLOPE)) {
            return false;
        }
        if (p != null) {
            double p0 = sign * p[i];
            double p1 = sign * p[i + 1];
            return p0 >= 0 && p0 <= MAX_SLOPE && p1 >= 0 && p1 <= MAX_SLOPE;
        }
        return true;
    }

    /** The error for interval i, which fails {@link #intervalOk}: the first rule it breaks. */
    static IllegalArgumentException badInterval(double[] x, double[] y, double[] p, double sign, int i) {
        int n = x.length;
        for (int k = i; k <= i + 1; k++) {
            if (!Double.isFinite(x[k])) {
                return new IllegalArgumentException("x[" + k + "] must be finite, got " + x[k]);
            }
            if (!Double.isFinite(y[k])) {
                return new IllegalArgumentException("y[" + k + "] must be finite, got " + y[k]);
            }
        }
        double h = x[i + 1] - x[i];
        if (!(h > 0)) {
            return new IllegalArgumentException("x must be strictly increasing, got x[" + i + "] = " + x[i] + ", x["
                    + (i + 1) + "] = " + x[i + 1] + " (sort the points and merge duplicate x first)");
        }
        if (!(h <= Double.MAX_VALUE)) {
            return new IllegalArgumentException("x[" + (i + 1) + "] - x[" + i + "] must be finite, got " + h);
        }
        double dy = sign * (y[i + 1] - y[i]);
        if (!(dy >= 0)) {
            String dir = sign > 0 ? "non-decreasing" : "non-increasing";
            return new IllegalArgumentException("y must be monotone (" + dir + ", as y[0] = " + y[0] + " -> y["
                    + (n - 1) + "] = " + y[n - 1] + "), got y[" + i + "] = " + y[i] + ", y[" + (i + 1) + "] = "
                    + y[i + 1] + " (use smoothing=isotonic to make noisy data monotone first)");
        }
        if (!(dy / h <= MAX_SLOPE)) {
            return new IllegalArgumentException("the slope between points " + i + " and " + (i + 1) + " must be at "
                    + "most " + MAX_SLOPE + " in magnitude, got (" + y[i + 1] + " - " + y[i] + ") / (" + x[i + 1]
                    + " - " + x[i] + ")");
        }
        for (int k = i; p != null && k <= i + 1; k++) {
            double pk = sign * p[k];
            if (!(pk >= 0 && pk <= MAX_SLOPE)) {
                String want = sign > 0 ? ">= 0" : "<= 0";
                return new IllegalArgumentException("slope[" + k + "] must be finite, " + want + " (the direction of "
                        + "y) and at most " + MAX_SLOPE + " in magnitude, got " + p[k]);
            }
        }
        return new IllegalArgumentException("interval " + i + " is invalid");
    }

    /** Checks the data (as {@link #build} does) and returns the sign of its direction. */
    public static double check(double[] x, double[] y, double[] p) {
        double sign = checkShape(x, y, p);
        int bad = firstBad(x.length - 1, i -> !intervalOk(x, y, p, sign, i));
        if (bad >= 0) {
            throw badInterval(x, y, p, sign, bad);
        }
        return sign;
    }

    /** Checks the arrays (not null, one length, n >= 2) and returns the sign of the data's direction. */
    public static double checkShape(double[] x, double[] y, double[] p) {
        if (x == null || y == null) {
            throw new IllegalArgumentException("x and y must not be null");
        }
        int n = x.length;
        if (y.length != n || (p != null && p.length != n)) {
            throw new IllegalArgumentException("x, y and slopes must have the same length, got " + n + ", " + y.length
                    + (p == null ? "" : ", " + p.length));
        }
        checkPoints(n);
        return signOf(y);
    }

    // ------------------------------------------------------------------------------------------ parallel parts

    /** Contiguous parts of [0, n) run in parallel (1 below PARALLEL_MIN). */
    static int parts(long n) {
        if (n < PARALLEL_MIN) {
            return 1;
        }
        return (int) Math.max(1, Math.min(4L * Runtime.getRuntime().availableProcessors(), n / (PARALLEL_MIN / 4)));
    }

    static int lo(int n, int q, int p) {
        return (int) ((long) n * q / p);
    }

    /** A body run on the contiguous range [from, to) of one part. */
    @FunctionalInterface
    interface Range {
        void run(int from, int to);
    }

    /** Runs {@code body} on the parts of [0, n), in parallel when there are several. */
    static void forRanges(int n, Range body) {
        int p = parts(n);
        if (p == 1) {
            body.run(0, n);
        } else {
            IntStream.range(0, p).parallel().forEach(q -> body.run(lo(n, q, p), lo(n, q + 1, p)));
        }
    }

    static void forEach(int n, IntConsumer body) {
        forRanges(n, (from, to) -> {
            for (int i = from; i < to; i++) {
                body.accept(i);
            }
        });
    }

    /** The smallest i in [0, n) with bad(i), or -1 ({@link ParallelScan}). */
    static int firstBad(int n, java.util.function.IntPredicate bad) {
        return ParallelScan.firstIndex(n, bad);
    }

    // ------------------------------------------------------------------------------------------ slopes

    /** delta_i of the non-decreasing data. */
    static double delta(double[] x, double[] y, double sign, int i) {
        double dy = sign * (y[i + 1] - y[i]);
        return dy / (x[i + 1] - x[i]);
    }

    /** Twice the harmonic mean of two positive slopes, else 0. */
    static double harmonic(double a, double b) {
        return a > 0 && b > 0 ? 2.0 * (a * (b / (a + b))) : 0.0;
    }

    /** Butland's slope d_k of the non-decreasing data. */
    static double butland(double[] x, double[] y, double sign, int k) {
        int n = x.length;
        if (n == 2) {
            return delta(x, y, sign, 0);
        }
        if (k == 0) {
            double d0 = delta(x, y, sign, 0);
            double e = 2.0 * d0 - harmonic(d0, delta(x, y, sign, 1));
            return d0 > 0 && e > 0 ? e : 0.0;
        }
        if (k == n - 1) {
            double dl = delta(x, y, sign, n - 2);
            double e = 2.0 * dl - harmonic(delta(x, y, sign, n - 3), dl);
            return dl > 0 && e > 0 ? e : 0.0;
        }
        return harmonic(delta(x, y, sign, k - 1), delta(x, y, sign, k));
    }

    /** Butland's slopes of (x, y) in the data's own direction (sign applied back). */
    public static double[] butlandSlopes(double[] x, double[] y) {
        double sign = check(x, y, null);
        double[] d = new double[x.length];
        forEach(x.length, k -> d[k] = sign * butland(x, y, sign, k));
        return d;
    }

    // ------------------------------------------------------------------------------------------ construction

    /**
     * Builds the spline of (x, y): x strictly increasing, y monotone (either direction), p the slopes of the
     * rational kind (null: Butland's; must be null for Schumaker's, which has its own).
     */
    public static Spline build(SplineConfig.Kind kind, double[] x, double[] y, double[] p) {
        if (kind == SplineConfig.Kind.SCHUMAKER && p != null) {
            throw new IllegalArgumentException("slopes apply to kind=rational only (kind=schumaker uses Butland's "
                    + "slopes)");
        }
        double sign = check(x, y, p);
        int n = x.length;
        if (kind == SplineConfig.Kind.RATIONAL) {
            double[] a = new double[n];
            double[] b = new double[n];
            forEach(n, k -> {
                a[k] = sign * y[k];
                b[k] = p != null ? sign * p[k] : butland(x, y, sign, k);
            });
            return new Spline(kind, sign, x.clone(), a, b);
        }
        int T = 2 * n - 1;
        double[] t = new double[T];
        double[] a = new double[T];
        double[] b = new double[T];
        forEach(n - 1, i -> schumakerInterval(x, y, sign, i, t, a, b));
        return new Spline(kind, sign, t, a, b);
    }

    /** Knots 2i and 2i + 1 of Schumaker's spline (and the terminal knot 2n - 2 for the last interval). */
    static void schumakerInterval(double[] x, double[] y, double sign, int i, double[] t, double[] a, double[] b) {
        int n = x.length;
        double x0 = x[i];
        double x1 = x[i + 1];
        double y0 = sign * y[i];
        double y1 = sign * y[i + 1];
        double h = x1 - x0;
        double del = (y1 - y0) / h;
        double d0 = butland(x, y, sign, i);
        double d1 = butland(x, y, sign, i + 1);
        double tk;
        double dbar;
        if (d0 + d1 == 2.0 * del) {
            tk = x0;
            dbar = d0;
        } else if ((d0 < del && d1 > del) || (d0 > del && d1 < del)) {
            tk = x1 + ((d0 - del) / (d1 - d0)) * h;
            dbar = del;
        } else {
            tk = x0 + 0.5 * h;
            dbar = 2.0 * del - 0.5 * (d0 + d1);
            if (!(dbar >= 0)) {
                dbar = 0.0;
            }
        }
        if (!(tk >= x0)) {
            tk = x0;
        }
        if (tk > x1) {
            tk = x1;
        }
        double wa = tk - x0;
        double wb = x1 - tk;
        double abar;
        if (wa == 0) {
            abar = y0;
            dbar = d0;
        } else if (wb == 0) {
            abar = y1;
            dbar = d1;
        } else {
            abar = y0 + (0.5 * (d0 + dbar)) * wa;
            if (!(abar >= y0)) {
                abar = y0;
            }
            if (abar > y1) {
                abar = y1;
            }
        }
        t[2 * i] = x0;
        a[2 * i] = y0;
        b[2 * i] = d0;
        t[2 * i + 1] = tk;
        a[2 * i + 1] = abar;
        b[2 * i + 1] = dbar;
        if (i == n - 2) {
            t[2 * i + 2] = x1;
            a[2 * i + 2] = y1;
            b[2 * i + 2] = d1;
        }
    }

    // ------------------------------------------------------------------------------------------ evaluation

    /** The largest j in [0, T) with t[j] <= z, for t[0] <= z <= t[T-1] (unique: any search finds it). */
    static int findPiece(double[] t, double z) {
        int lo = 0;
        int hi = t.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (t[mid] <= z) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    /** The smallest k in [0, T) with a[k] >= v, for a[0] < v <= a[T-1] (unique). */
    static int findValue(double[] a, double v) {
        int lo = 0;
        int hi = a.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (a[mid] >= v) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /**
     * Value (out[0]) and derivative (out[1]) of piece j (j < T - 1, t[j] <= z < t[j+1]) of the non-decreasing
     * spline.
     */
    static void piece(SplineConfig.Kind kind, double[] t, double[] a, double[] b, int j, double z, double[] out) {
        double t0 = t[j];
        double t1 = t[j + 1];
        double a0 = a[j];
        double a1 = a[j + 1];
        double b0 = b[j];
        double b1 = b[j + 1];
        double w = t1 - t0;
        double v;
        double d;
        if (kind == SplineConfig.Kind.SCHUMAKER) {
            if (b1 >= b0) { // convex: every term grows with r
                double r = z - t0;
                double th = r / w;
                double g = b1 - b0;
                v = a0 + (r * b0 + r * ((g * th) * 0.5));
                d = b0 + g * th;
            } else { // concave: from the right end, every term shrinks as x grows
                double q = t1 - z;
                double th = q / w;
                double g = b0 - b1;
                v = a1 - (q * b1 + q * ((g * th) * 0.5));
                d = b1 + g * th;
            }
        } else {
            double dy = a1 - a0;
            double del = dy / w;
            double th = (z - t0) / w;
            if (!(del > 0)) { // flat (or a slope below the smallest double): the line
                v = a0 + dy * th;
                d = del;
            } else {
                double u = 1.0 - th;
                double nn = th * (del * th + b0 * u);
                double mm = u * (del * u + b1 * th);
                double den = nn + mm;
                v = a0 + dy * (nn / den);
                double kk = (b1 * (th * th) + (2.0 * del) * (th * u)) + b0 * (u * u);
                double qq = del / den;
                d = qq * (qq * kk);
            }
        }
        if (!(v >= a0)) {
            v = a0;
        }
        if (v > a1) {
            v = a1;
        }
        out[0] = v;
        out[1] = d;
    }

    /**
     * Value and derivative at z of the spline (signed), under the extrapolation mode, into out[0], out[1]. Returns
     * false when z lies outside the knots (the value is then that of the mode; NaN for error).
     */
    static boolean evalOne(Spline s, double z, SplineConfig.Extrapolate mode, double[] out) {
        double[] t = s.t;
        double[] a = s.a;
        double[] b = s.b;
        int last = t.length - 1;
        boolean inside = true;
        if (z != z) {
            out[0] = Double.NaN;
            out[1] = Double.NaN;
        } else if (z < t[0] || z > t[last]) {
            inside = false;
            int e = z < t[0] ? 0 : last;
            if (mode == SplineConfig.Extrapolate.CLIP) {
                out[0] = a[e];
                out[1] = 0.0;
            } else if (mode == SplineConfig.Extrapolate.LINEAR) {
                out[0] = b[e] == 0 ? a[e] : a[e] + b[e] * (z - t[e]);
                out[1] = b[e];
            } else {
                out[0] = Double.NaN;
                out[1] = Double.NaN;
            }
        } else {
            int j = findPiece(t, z);
            if (j == last) {
                out[0] = a[last];
                out[1] = b[last];
            } else {
                piece(s.kind, t, a, b, j, z, out);
            }
        }
        out[0] = s.sign * out[0];
        out[1] = s.sign * out[1];
        return inside;
    }

    /**
     * Values (and derivatives, when {@code deriv} is not null) at the queries z. NaN queries give NaN. Queries
     * outside [t_0, t_T-1]: clip (end value, derivative 0), linear (the end's tangent), nan, or error (an
     * IllegalArgumentException naming the first such query).
     */
    public static void eval(Spline s, double[] z, SplineConfig.Extrapolate mode, double[] value, double[] deriv) {
        int k = z.length;
        if (mode == SplineConfig.Extrapolate.ERROR) {
            int bad = firstBad(k, i -> z[i] < s.t[0] || z[i] > s.t[s.t.length - 1]);
            if (bad >= 0) {
                throw outsideKnots(s, z, bad);
            }
        }
        forRanges(k, (from, to) -> {
            double[] out = new double[2];
            for (int i = from; i < to; i++) {
                evalOne(s, z[i], mode, out);
                value[i] = out[0];
                if (deriv != null) {
                    deriv[i] = out[1];
                }
            }
        });
    }

    static IllegalArgumentException outsideKnots(Spline s, double[] z, int i) {
        return new IllegalArgumentException("x = " + z[i] + " (query " + i + ") must lie within the knots ["
                + s.xMin() + ", " + s.xMax() + "] with extrapolate=error");
    }

    static IllegalArgumentException outsideValues(Spline s, double[] v, int i) {
        return new IllegalArgumentException("y = " + v[i] + " (query " + i + ") must lie within the spline's values ["
                + s.yMin() + ", " + s.yMax() + "] with extrapolate=error");
    }

    // ------------------------------------------------------------------------------------------ inverse

    /** 2D / (B + sqrt(B^2 + 4 C D)) clamped to [0, 1]: the root theta in [0, 1] of C th^2 + B th = D. */
    static double quadRoot(double bb, double cc, double dd) {
        double den = bb + Math.sqrt(bb * bb + (4.0 * cc) * dd);
        double th = (2.0 * dd) / den;
        if (!(th > 0)) {
            th = 0.0;
        }
        if (th > 1) {
            th = 1.0;
        }
        return th;
    }

    /** x in [t_j, t_j+1] with s(x) = v on piece j (a_j < v < a_j+1) of the non-decreasing spline. */
    static double invertPiece(Spline s, int j, double v, double[] tmp) {
        double[] t = s.t;
        double[] a = s.a;
        double[] b = s.b;
        double t0 = t[j];
        double t1 = t[j + 1];
        double w = t1 - t0;
        double x;
        if (s.kind == SplineConfig.Kind.SCHUMAKER) {
            double sc = a[j + 1] - a[j];
            double b0 = b[j];
            double b1 = b[j + 1];
            if (b1 >= b0) {
                double th = quadRoot((b0 * w) / sc, (((b1 - b0) * w) * 0.5) / sc, (v - a[j]) / sc);
                x = t0 + th * w;
            } else {
                double th = quadRoot((b1 * w) / sc, (((b0 - b1) * w) * 0.5) / sc, (a[j + 1] - v) / sc);
                x = t1 - th * w;
            }
        } else {
            double lo = t0;
            double hi = t1;
            double g = (v - a[j]) / (a[j + 1] - a[j]);
            x = t0 + g * w;
            if (!(x > lo && x < hi)) {
                x = lo + 0.5 * (hi - lo);
            }
            boolean done = false;
            for (int it = 0; it < NEWTON_MAX_ITER && !done; it++) {
                piece(s.kind, t, a, b, j, x, tmp);
                double f = tmp[0] - v;
                if (f == 0) {
                    done = true;
                } else {
                    if (f < 0) {
                        lo = x;
                    } else {
                        hi = x;
                    }
                    double xn = x - f / tmp[1];
                    if (!(xn > lo && xn < hi)) {
                        xn = lo + 0.5 * (hi - lo);
                    }
                    if (!(xn > lo && xn < hi)) {
                        x = hi;
                        done = true;
                    } else {
                        x = xn;
                    }
                }
            }
            if (!done) {
                x = hi;
            }
        }
        if (!(x >= t0)) {
            x = t0;
        }
        if (x > t1) {
            x = t1;
        }
        return x;
    }

    /** The inverse at one value (signed data); see {@link #inverse}. */
    static double inverseOne(Spline s, double v, SplineConfig.Extrapolate mode, double[] tmp) {
        double[] t = s.t;
        double[] a = s.a;
        double[] b = s.b;
        int last = t.length - 1;
        double w = s.sign * v;
        if (w != w) {
            return Double.NaN;
        }
        if (w < a[0] || w > a[last]) {
            int e = w < a[0] ? 0 : last;
            if (mode == SplineConfig.Extrapolate.CLIP) {
                return t[e];
            }
            if (mode == SplineConfig.Extrapolate.LINEAR && b[e] > 0) {
                return t[e] + (w - a[e]) / b[e];
            }
            return Double.NaN;
        }
        int k = findValue(a, w);
        if (a[k] == w) {
            return t[k];
        }
        return invertPiece(s, k - 1, w, tmp);
    }

    /**
     * The inverse at the values v: the smallest x with s(x) >= v for non-decreasing data (s(x) <= v for
     * non-increasing), so a flat stretch maps to its left end. Values outside the spline's range: clip (the end
     * knot), linear (the inverse of the end tangent; NaN when it is flat), nan, or error.
     */
    public static void inverse(Spline s, double[] v, SplineConfig.Extrapolate mode, double[] out) {
        int k = v.length;
        int last = s.a.length - 1;
        if (mode == SplineConfig.Extrapolate.ERROR) {
            int bad = firstBad(k, i -> s.sign * v[i] < s.a[0] || s.sign * v[i] > s.a[last]);
            if (bad >= 0) {
                throw outsideValues(s, v, bad);
            }
        }
        forRanges(k, (from, to) -> {
            double[] tmp = new double[2];
            for (int i = from; i < to; i++) {
                out[i] = inverseOne(s, v[i], mode, tmp);
            }
        });
    }
}
