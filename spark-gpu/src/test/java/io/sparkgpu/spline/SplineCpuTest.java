package io.sparkgpu.spline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.spline.SplineConfig.Extrapolate;
import io.sparkgpu.spline.SplineConfig.Kind;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The CPU twin against hand-computed cases, PCHIP's slopes, finite differences and the shape rules. */
class SplineCpuTest {
    private static final Kind[] KINDS = {Kind.SCHUMAKER, Kind.RATIONAL};

    static double[] values(Spline s, double[] z) {
        double[] v = new double[z.length];
        SplineCpu.eval(s, z, Extrapolate.CLIP, v, null);
        return v;
    }

    static double[] derivs(Spline s, double[] z) {
        double[] v = new double[z.length];
        double[] d = new double[z.length];
        SplineCpu.eval(s, z, Extrapolate.CLIP, v, d);
        return d;
    }

    static double value(Spline s, double z) {
        return values(s, new double[] {z})[0];
    }

    static double deriv(Spline s, double z) {
        return derivs(s, new double[] {z})[0];
    }

    @Test
    void passesThroughTheDataInBothDirections() {
        double[] x = {-3, -1, 0, 0.5, 2, 7, 7.25, 10};
        double[] y = {-5, -4, -4, -1, 2, 2.5, 9, 9};
        double[] yDown = Arrays.stream(y).map(v -> -v).toArray();
        for (Kind k : KINDS) {
            assertArrayEquals(y, values(SplineCpu.build(k, x, y, null), x), k + " up");
            assertArrayEquals(yDown, values(SplineCpu.build(k, x, yDown, null), x), k + " down");
        }
    }

    @Test
    void decreasingDataIsTheMirrorBitForBit() {
        double[] x = {0, 1, 2, 3, 4.5, 6};
        double[] y = {0, 0.1, 1, 3, 3.2, 8};
        double[] neg = Arrays.stream(y).map(v -> -v).toArray();
        double[] z = new Random(1).doubles(500, -0.5, 6.5).toArray();
        for (Kind k : KINDS) {
            double[] up = values(SplineCpu.build(k, x, y, null), z);
            double[] down = values(SplineCpu.build(k, x, neg, null), z);
            for (int i = 0; i < z.length; i++) {
                assertEquals(-up[i], down[i], 0.0, k + " at " + z[i]);
            }
        }
    }

    /** Schumaker's rule by hand: one interval needs no knot, one the midpoint, one the knot where the slope is delta. */
    @Test
    void schumakerExtraKnotsByHand() {
        // x = 0..3, y = 0, 1, 1.5, 3: deltas 1, 0.5, 1.5; d1 = 2/3, d2 = 3/4 (harmonic means)
        Spline s = SplineCpu.build(Kind.SCHUMAKER, new double[] {0, 1, 2, 3}, new double[] {0, 1, 1.5, 3}, null);
        assertEquals(7, s.size());
        // interval 1: d1, d2 both above delta = 1/2: midpoint, slope there 2 delta - (d1 + d2)/2 = 7/24
        assertEquals(1.5, s.t[3], 0.0);
        assertEquals(7.0 / 24, s.b[3], 1e-15);
        assertEquals(1 + 23.0 / 96, s.a[3], 1e-15);
        assertEquals(1 + 23.0 / 96, value(s, 1.5), 1e-15);
        // x = 0..3, y = 0, 0.1, 1, 3: interval 1 has d1 = 0.18 < delta = 0.9 < d2 = 3.6/2.9
        double d2 = 3.6 / 2.9;
        Spline c = SplineCpu.build(Kind.SCHUMAKER, new double[] {0, 1, 2, 3}, new double[] {0, 0.1, 1, 3}, null);
        double knot = 2 + (0.18 - 0.9) / (d2 - 0.18);
        assertEquals(knot, c.t[3], 1e-15);
        assertEquals(0.9, c.b[3], 1e-15);
        assertEquals(0.1 + 0.5 * (0.18 + 0.9) * (knot - 1), c.a[3], 1e-15);
        assertEquals(0.18, deriv(c, 1.0), 1e-15);
        assertEquals(0.9, deriv(c, knot), 1e-14);
        // three points: Butland's ends make d0 + d1 = 2 delta_0, so no interval needs a knot (t = x_i)
        Spline q = SplineCpu.build(Kind.SCHUMAKER, new double[] {0, 1, 2}, new double[] {0, 1, 3}, null);
        assertEquals(0.0, q.t[1], 0.0);
        // s = 2/3 x + 1/3 x^2 on [0, 1]
        assertEquals(2.0 / 3 * 0.3 + 0.09 / 3, value(q, 0.3), 1e-15);
    }

    /** Gregory and Delbourgo's form by hand: y = 0 -> 1 on [0, 1], slopes 0 and 3: s = th^2 / (1 + th - th^2). */
    @Test
    void rationalFormByHand() {
        Spline s = SplineCpu.build(Kind.RATIONAL, new double[] {0, 1}, new double[] {0, 1}, new double[] {0, 3});
        for (double th : new double[] {0.1, 0.25, 0.5, 0.9}) {
            double q = 1 + th - th * th;
            assertEquals(th * th / q, value(s, th), 1e-15);
            // Delta^2 (p1 th^2 + 2 Delta th u + p0 u^2) / Q^2
            assertEquals((3 * th * th + 2 * th * (1 - th)) / (q * q), deriv(s, th), 1e-14);
        }
        assertEquals(0.2, value(s, 0.5), 1e-16);
        assertEquals(0.8, deriv(s, 0.5), 1e-15);
    }

    /** On a uniform grid PCHIP's interior slopes (Fritsch-Carlson) are Butland's harmonic means: all three agree. */
    @Test
    void agreesWithPchipAtTheKnotsOnAUniformGrid() {
        double[] x = {0, 1, 2, 3, 4, 5};
        double[] y = {0, 1, 3, 3.5, 6, 10};
        // scipy.interpolate.PchipInterpolator(x, y).derivative()(x[1:5]) = 4/3, 0.8, 5/6, 40/13
        double[] pchip = {4.0 / 3, 0.8, 5.0 / 6, 40.0 / 13};
        for (Kind k : KINDS) {
            Spline s = SplineCpu.build(k, x, y, null);
            assertArrayEquals(y, values(s, x));
            double[] d = derivs(s, Arrays.copyOfRange(x, 1, 5));
            assertArrayEquals(pchip, d, 1e-15, k.id());
        }
    }

    @Test
    void linearDataGivesTheLine() {
        double[] x = {0, 0.3, 1, 4, 4.1};
        double[] y = Arrays.stream(x).map(v -> 2 * v + 1).toArray();
        for (Kind k : KINDS) {
            Spline s = SplineCpu.build(k, x, y, null);
            for (double z = 0; z <= 4.1; z += 0.01) {
                assertEquals(2 * z + 1, value(s, z), 1e-13, k + " at " + z);
                assertEquals(2, deriv(s, z), 1e-12, k + " slope at " + z);
            }
        }
    }

    /** Data where unconstrained interpolants overshoot, steps, flats, huge and tiny slopes, near-duplicate x. */
    static double[][][] adversarial() {
        double[] rpnX = {7.99, 8.09, 8.19, 8.7, 9.2, 10, 12, 15, 20};
        double[] rpnY = {0, 2.76429e-5, 4.37498e-2, 0.169183, 0.469428, 0.943740, 0.998636, 0.999919, 0.999994};
        double e = Math.ulp(1.0);
        return new double[][][] {
            {rpnX, rpnY},
            {{0, 1, 2, 3, 4, 5, 6}, {0, 0, 0, 1, 1, 1, 1}},
            {{0, 1, 2, 3}, {2, 2, 2, 2}},
            {{0, 1, 2, 3, 4}, {0, 1, 1, 1, 2}},
            {{0, 1e-9, 1, 2, 1e6}, {0, 1e-300, 1, 1e200, 1e290}},
            {{1, 1 + e, 1 + 2 * e, 2, 3}, {0, 1e-12, 5, 5.5, 6}},
            {{-1e-300, 0, 1e-300, 1}, {-1, 0, 1e-10, 1e-10}},
        };
    }

    @Test
    void monotoneOnDenseEvaluationOfAdversarialData() {
        Random r = new Random(7);
        for (double[][] d : adversarial()) {
            double[] x = d[0];
            double[] y = d[1];
            for (Kind k : KINDS) {
                for (double sg : new double[] {1, -1}) {
                    double[] ys = Arrays.stream(y).map(v -> sg * v).toArray();
                    Spline s = SplineCpu.build(k, x, ys, null);
                    double[] z = densePoints(x, r);
                    double[] v = values(s, z);
                    double[] dv = derivs(s, z);
                    for (int i = 0; i < z.length; i++) {
                        assertTrue(Double.isFinite(v[i]) && sg * dv[i] >= 0, k + " finite, slope sign at " + z[i]);
                        if (i > 0) {
                            assertTrue(sg * v[i] >= sg * v[i - 1], k + " not monotone at " + z[i - 1] + " -> " + z[i]
                                    + ": " + v[i - 1] + " -> " + v[i] + " for " + Arrays.toString(ys));
                        }
                    }
                    // flats stay exactly flat
                    for (int i = 0; i + 1 < x.length; i++) {
                        if (y[i] == y[i + 1]) {
                            for (double th : new double[] {0.1, 0.5, 0.99}) {
                                assertEquals(ys[i], value(s, x[i] + th * (x[i + 1] - x[i])), 0.0, k + " flat");
                            }
                        }
                    }
                    // values stay within the data's range
                    for (double vi : v) {
                        assertTrue(vi >= Math.min(ys[0], ys[ys.length - 1]) && vi <= Math.max(ys[0], ys[ys.length - 1]));
                    }
                }
            }
        }
    }

    /** Sorted points: a grid per interval, the knots and their neighbouring doubles, and random points. */
    static double[] densePoints(double[] x, Random r) {
        int per = 400;
        double[] z = new double[(x.length - 1) * per + 5 * x.length + 2000];
        int m = 0;
        for (int i = 0; i + 1 < x.length; i++) {
            for (int j = 0; j < per; j++) {
                z[m++] = x[i] + (x[i + 1] - x[i]) * j / per;
            }
        }
        for (double xi : x) {
            z[m++] = xi;
            z[m++] = Math.nextUp(xi);
            z[m++] = Math.nextDown(xi);
            z[m++] = Math.nextUp(Math.nextUp(xi));
            z[m++] = Math.nextDown(Math.nextDown(xi));
        }
        while (m < z.length) {
            z[m++] = x[0] + r.nextDouble() * (x[x.length - 1] - x[0]);
        }
        Arrays.sort(z);
        return z;
    }

    static double[][] smoothData(int n, long seed) {
        Random r = new Random(seed);
        double[] x = new double[n];
        double[] y = new double[n];
        double xv = -2;
        for (int i = 0; i < n; i++) {
            xv += 0.05 + r.nextDouble();
            x[i] = xv;
            y[i] = Math.atan(xv) * 3 + 0.1 * xv;
        }
        return new double[][] {x, y};
    }

    @Test
    void strictlyMonotoneDataStaysStrictlyMonotoneAndC1() {
        double[][] d = smoothData(40, 3);
        double[] x = d[0];
        for (Kind k : KINDS) {
            Spline s = SplineCpu.build(k, x, d[1], null);
            for (int i = 0; i + 1 < x.length; i++) {
                double h = x[i + 1] - x[i];
                double prev = value(s, x[i]);
                for (double th = 0.125; th <= 1; th += 0.125) {
                    double v = value(s, x[i] + th * h);
                    assertTrue(v > prev, k + " strictly increasing in interval " + i);
                    prev = v;
                }
                // C1 at the knot x_i+1: derivative and value continuous from both sides
                double e = 1e-9 * h;
                double k1 = x[i + 1];
                if (i + 2 < x.length) {
                    assertEquals(deriv(s, k1 - e), deriv(s, k1 + e), 1e-6 * (1 + Math.abs(deriv(s, k1))), k + " C1");
                    assertEquals(value(s, k1 - e), value(s, k1 + e), 1e-8, k + " C0");
                }
            }
        }
    }

    @Test
    void derivativesMatchFiniteDifferences() {
        double[][] d = smoothData(30, 5);
        double[] x = d[0];
        Random r = new Random(11);
        for (Kind k : KINDS) {
            Spline s = SplineCpu.build(k, x, d[1], null);
            for (int it = 0; it < 300; it++) {
                int i = r.nextInt(x.length - 1);
                double h = x[i + 1] - x[i];
                double z = x[i] + h * (0.05 + 0.9 * r.nextDouble());
                double step = 1e-6 * h;
                double fd = (value(s, z + step) - value(s, z - step)) / (2 * step);
                assertEquals(fd, deriv(s, z), 1e-6 * (1 + Math.abs(fd)), k + " at " + z);
            }
        }
    }

    @Test
    void inverseOfValueIsTheIdentity() {
        double[][] d = smoothData(50, 9);
        double[] x = d[0];
        Random r = new Random(13);
        for (Kind k : KINDS) {
            for (double sg : new double[] {1, -1}) {
                double[] ys = Arrays.stream(d[1]).map(v -> sg * v).toArray();
                Spline s = SplineCpu.build(k, x, ys, null);
                double[] z = r.doubles(2000, x[1], x[x.length - 2]).toArray();
                double[] v = values(s, z);
                double[] back = new double[z.length];
                SplineCpu.inverse(s, v, Extrapolate.CLIP, back);
                for (int i = 0; i < z.length; i++) {
                    assertEquals(z[i], back[i], 1e-12 * Math.abs(z[i]) + 1e-300, k + " sign " + sg);
                }
                double[] atKnots = new double[x.length];
                SplineCpu.inverse(s, ys, Extrapolate.CLIP, atKnots);
                assertArrayEquals(x, atKnots, 0.0, "knots map back exactly");
            }
        }
    }

    @Test
    void inverseOfAFlatStretchIsItsLeftEnd() {
        double[] x = {0, 1, 2, 3, 4};
        double[] y = {0, 1, 1, 1, 2};
        for (Kind k : KINDS) {
            Spline s = SplineCpu.build(k, x, y, null);
            double[] out = new double[3];
            SplineCpu.inverse(s, new double[] {1, 0, 2}, Extrapolate.CLIP, out);
            assertArrayEquals(new double[] {1, 0, 4}, out, 0.0);
            Spline down = SplineCpu.build(k, x, new double[] {0, -1, -1, -1, -2}, null);
            SplineCpu.inverse(down, new double[] {-1}, Extrapolate.CLIP, out);
            assertEquals(1, out[0], 0.0);
        }
    }

    @Test
    void extrapolationModes() {
        double[] x = {0, 1, 2, 4};
        double[] y = {1, 2, 4, 5};
        for (Kind k : KINDS) {
            Spline s = SplineCpu.build(k, x, y, null);
            double[] z = {-1, 5, Double.NaN, 1};
            double[] v = new double[4];
            double[] d = new double[4];
            SplineCpu.eval(s, z, Extrapolate.CLIP, v, d);
            assertArrayEquals(new double[] {1, 5, Double.NaN, 2}, v);
            assertEquals(0.0, d[0]);
            SplineCpu.eval(s, z, Extrapolate.LINEAR, v, d);
            double d0 = s.b[0];
            double dl = s.b[s.size() - 1];
            assertArrayEquals(new double[] {1 - d0, 5 + dl, Double.NaN, 2}, v, 1e-15);
            assertEquals(d0, d[0]);
            SplineCpu.eval(s, z, Extrapolate.NAN, v, d);
            assertTrue(Double.isNaN(v[0]) && Double.isNaN(v[1]) && v[3] == 2);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SplineCpu.eval(s, z, Extrapolate.ERROR, v, null));
            assertTrue(e.getMessage().contains("query 0") && e.getMessage().contains("extrapolate=error"), e.getMessage());
            double[] inv = new double[2];
            SplineCpu.inverse(s, new double[] {0, 6}, Extrapolate.CLIP, inv);
            assertArrayEquals(new double[] {0, 4}, inv);
            SplineCpu.inverse(s, new double[] {0, 6}, Extrapolate.LINEAR, inv);
            assertArrayEquals(new double[] {-1 / d0, 4 + 1 / dl}, inv, 1e-15);
            assertThrows(IllegalArgumentException.class, () -> SplineCpu.inverse(s, new double[] {3, 6},
                    Extrapolate.ERROR, inv));
        }
    }

    @Test
    void badInputIsRefusedWithTheRule() {
        double[] x = {0, 1, 2};
        assertMessage("at least 2 points", () -> SplineCpu.build(Kind.SCHUMAKER, new double[] {1}, new double[] {1}, null));
        assertMessage("x[1] must be finite", () -> SplineCpu.build(Kind.SCHUMAKER, new double[] {0, Double.NaN, 2},
                new double[] {0, 1, 2}, null));
        assertMessage("y[2] must be finite", () -> SplineCpu.build(Kind.RATIONAL, x,
                new double[] {0, 1, Double.POSITIVE_INFINITY}, null));
        assertMessage("strictly increasing", () -> SplineCpu.build(Kind.SCHUMAKER, new double[] {0, 2, 1},
                new double[] {0, 1, 2}, null));
        assertMessage("strictly increasing", () -> SplineCpu.build(Kind.SCHUMAKER, new double[] {0, 1, 1},
                new double[] {0, 1, 2}, null));
        assertMessage("y must be monotone", () -> SplineCpu.build(Kind.SCHUMAKER, x, new double[] {0, 3, 2}, null));
        assertMessage("smoothing=isotonic", () -> SplineCpu.build(Kind.RATIONAL, x, new double[] {2, 3, 1}, null));
        assertMessage("slope[1] must be", () -> SplineCpu.build(Kind.RATIONAL, x, new double[] {0, 1, 2},
                new double[] {1, -1, 1}));
        assertMessage("slope[0] must be", () -> SplineCpu.build(Kind.RATIONAL, x, new double[] {0, 1, 2},
                new double[] {Double.NaN, 1, 1}));
        assertMessage("kind=rational only", () -> SplineCpu.build(Kind.SCHUMAKER, x, x, x));
        assertMessage("slope between points 0 and 1", () -> SplineCpu.build(Kind.SCHUMAKER,
                new double[] {0, 1e-300, 1}, new double[] {0, 10, 20}, null));
    }

    static void assertMessage(String part, org.junit.jupiter.api.function.Executable e) {
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, e);
        assertTrue(ex.getMessage().contains(part), "expected '" + part + "' in: " + ex.getMessage());
    }

    @Test
    void parallelEvaluationEqualsTheSerialOne() {
        double[][] d = smoothData(3000, 17);
        Random r = new Random(19);
        double[] z = r.doubles(SplineCpu.PARALLEL_MIN * 3 + 5, d[0][0] - 1, d[0][2999] + 1).toArray();
        for (Kind k : KINDS) {
            Spline s = SplineCpu.build(k, d[0], d[1], null);
            double[] v = new double[z.length];
            SplineCpu.eval(s, z, Extrapolate.LINEAR, v, null);
            double[] out = new double[2];
            for (int i = 0; i < z.length; i += 97) {
                SplineCpu.evalOne(s, z[i], Extrapolate.LINEAR, out);
                assertEquals(out[0], v[i], 0.0);
            }
        }
    }
}
