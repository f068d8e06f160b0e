package io.sparkgpu.pde;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The CPU twin's maths: convergence orders by grid refinement against a fine reference, Thomas, Sherman-Morrison and
 * cyclic reduction against dense elimination and each other, the known behaviour of the seed's cases, the adaptive
 * scheme's node saving, the stability refusal and the input rules.
 */
class FhnCpuTest {

    /** A smooth case: a Gaussian impulse in the middle plus a current at the left end, on [0, 20]. */
    static FhnConfig smooth(String scheme, String boundary, int cells, double dt, double tEnd) {
        FhnConfig c = new FhnConfig();
        c.scheme = scheme;
        c.boundary = boundary;
        c.cells = cells;
        c.length = 20;
        c.dt = dt;
        c.tEnd = tEnd;
        c.initial = FhnConfig.GAUSSIAN;
        c.pulseAmplitude = 0.8;
        c.pulseWidth = 2.0;
        c.stimulus = FhnConfig.CONSTANT;
        c.stimulusWidth = 2.0;
        c.newtonTol = 1e-13;
        return c;
    }

    static final FhnParams P = new FhnParams(0.1, 0.05, 0.5, 0.3, 1.0);

    static double[] solve(FhnConfig c) {
        return FhnCpu.one(new FhnSetup(c.validate()), P).v;
    }

    /** Max error of v on a coarse grid against a fine one sharing its nodes (node i of coarse = node r i of fine). */
    static double spaceError(double[] coarse, double[] fine, boolean periodic) {
        int nc = coarse.length;
        int r = periodic ? fine.length / nc : (fine.length - 1) / (nc - 1);
        double e = 0;
        for (int i = 0; i < nc; i++) {
            e = Math.max(e, Math.abs(coarse[i] - fine[i * r]));
        }
        return e;
    }

    static double maxDiff(double[] x, double[] y) {
        double e = 0;
        for (int i = 0; i < x.length; i++) {
            e = Math.max(e, Math.abs(x[i] - y[i]));
        }
        return e;
    }

    static double log2(double x) {
        return Math.log(x) / Math.log(2);
    }

    /** Space order: same dt everywhere (the time error cancels), cells refined 2x, reference 4x the finest. */
    static double[] spaceOrders(String scheme, String boundary, double dt) {
        boolean per = FhnConfig.PERIODIC.equals(boundary);
        int[] cells = per ? new int[] {40, 80, 160, 640} : new int[] {41, 81, 161, 641};
        double[][] v = new double[4][];
        for (int j = 0; j < 4; j++) {
            v[j] = solve(smooth(scheme, boundary, cells[j], dt, 1.0));
        }
        double e0 = spaceError(v[0], v[3], per);
        double e1 = spaceError(v[1], v[3], per);
        double e2 = spaceError(v[2], v[3], per);
        return new double[] {log2(e0 / e1), log2(e1 / e2)};
    }

    /** Time order: same grid, dt halved twice, reference dt / 32 of the finest. */
    static double[] timeOrders(String scheme, String boundary, double dt0) {
        double[] dts = {dt0, dt0 / 2, dt0 / 4, dt0 / 64};
        double[][] v = new double[4][];
        for (int j = 0; j < 4; j++) {
            v[j] = solve(smooth(scheme, boundary, 81, dts[j], 1.0));
        }
        double e0 = maxDiff(v[0], v[3]);
        double e1 = maxDiff(v[1], v[3]);
        double e2 = maxDiff(v[2], v[3]);
        return new double[] {log2(e0 / e1), log2(e1 / e2)};
    }

    @Test
    void explicitIsSecondOrderInSpaceForEveryBoundaryAndFirstInTime() {
        for (String bc : new String[] {FhnConfig.NEUMANN, FhnConfig.DIRICHLET, FhnConfig.PERIODIC}) {
            double[] o = spaceOrders(FhnConfig.EXPLICIT, bc, 0.0004);
            assertEquals(2.0, o[1], 0.2, bc + " explicit space orders " + o[0] + ", " + o[1]);
        }
        double[] t = timeOrders(FhnConfig.EXPLICIT, FhnConfig.NEUMANN, 0.02);
        assertEquals(1.0, t[1], 0.15, "explicit time orders " + t[0] + ", " + t[1]);
    }

    @Test
    void crankNicolsonIsSecondOrderInSpaceAndTime() {
        for (String bc : new String[] {FhnConfig.NEUMANN, FhnConfig.DIRICHLET, FhnConfig.PERIODIC}) {
            double[] o = spaceOrders(FhnConfig.CRANK_NICOLSON, bc, 0.01);
            assertEquals(2.0, o[1], 0.2, bc + " CN space orders " + o[0] + ", " + o[1]);
        }
        double[] t = timeOrders(FhnConfig.CRANK_NICOLSON, FhnConfig.NEUMANN, 0.1);
        assertEquals(2.0, t[1], 0.2, "CN time orders " + t[0] + ", " + t[1]);
    }

    @Test
    void crankNicolsonWithCyclicReductionMatchesThomas() {
        for (String bc : new String[] {FhnConfig.NEUMANN, FhnConfig.DIRICHLET}) {
            FhnConfig c = smooth(FhnConfig.CRANK_NICOLSON, bc, 97, 0.05, 2.0);
            double[] th = solve(c);
            c.solver = FhnConfig.CYCLIC_REDUCTION;
            double[] cr = solve(c);
            assertTrue(maxDiff(th, cr) < 1e-12, bc + ": " + maxDiff(th, cr));
        }
    }

    static double[] dense(double[] a, double[] b, double[] c, double[] d, int n, boolean periodic) {
        double[][] m = new double[n][n + 1];
        for (int i = 0; i < n; i++) {
            m[i][i] = b[i];
            if (i > 0) {
                m[i][i - 1] += a[i];
            } else if (periodic) {
                m[i][n - 1] += a[i];
            }
            if (i < n - 1) {
                m[i][i + 1] += c[i];
            } else if (periodic) {
                m[i][0] += c[i];
            }
            m[i][n] = d[i];
        }
        for (int p = 0; p < n; p++) {
            int best = p;
            for (int r = p + 1; r < n; r++) {
                if (Math.abs(m[r][p]) > Math.abs(m[best][p])) {
                    best = r;
                }
            }
            double[] t = m[p];
            m[p] = m[best];
            m[best] = t;
            for (int r = 0; r < n; r++) {
                if (r != p) {
                    double f = m[r][p] / m[p][p];
                    for (int q = p; q <= n; q++) {
                        m[r][q] -= f * m[p][q];
                    }
                }
            }
        }
        double[] x = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = m[i][n] / m[i][i];
        }
        return x;
    }

    @Test
    void thomasShermanMorrisonAndCyclicReductionAgreeWithDenseEliminationTo1e12() {
        Random r = new Random(5);
        for (int n : new int[] {1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 100, 300}) {
            double[] a = new double[n];
            double[] b = new double[n];
            double[] c = new double[n];
            double[] d = new double[n];
            for (int i = 0; i < n; i++) {
                a[i] = r.nextDouble() * 2 - 1;
                c[i] = r.nextDouble() * 2 - 1;
                b[i] = 2.5 + r.nextDouble();
                d[i] = r.nextDouble() * 2 - 1;
            }
            double[] a0 = a.clone();
            double[] c0 = c.clone();
            a0[0] = 0;
            c0[n - 1] = 0;
            double[] ref = dense(a0, b, c0, d, n, false);
            double[] x = new double[n];
            FhnCpu.thomas(a0, b, c0, d, x, n, new double[3 * n]);
            assertTrue(maxDiff(ref, x) < 1e-12, "thomas n=" + n);
            double[] y = new double[n];
            FhnCpu.cyclicReduction(a0.clone(), b.clone(), c0.clone(), d.clone(), y, n);
            assertTrue(maxDiff(ref, y) < 1e-12, "cr n=" + n + ": " + maxDiff(ref, y));
            assertTrue(maxDiff(x, y) < 1e-12, "thomas vs cr n=" + n);
            if (n >= 3) {
                double[] pref = dense(a, b, c, d, n, true);
                double[] z = new double[n];
                FhnCpu.thomasPeriodic(a, b, c, d, z, n, new double[3 * n]);
                assertTrue(maxDiff(pref, z) < 1e-12, "periodic n=" + n + ": " + maxDiff(pref, z));
            }
            // the batched interleaved layout gives the plain Thomas bits
            int sys = 3;
            double[] ia = new double[sys * n];
            double[] ib = new double[sys * n];
            double[] ic = new double[sys * n];
            double[] id = new double[sys * n];
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < sys; j++) {
                    ia[i * sys + j] = a0[i];
                    ib[i * sys + j] = b[i];
                    ic[i * sys + j] = c0[i];
                    id[i * sys + j] = d[i];
                }
            }
            FhnCpu.thomasInterleaved(sys, n, ia, ib, ic, id);
            for (int i = 0; i < n; i++) {
                assertEquals(Double.doubleToLongBits(x[i]), Double.doubleToLongBits(id[i * sys + 2]));
            }
        }
    }

    /** The seed's divergent case: a Gaussian impulse in the middle of a long axon. */
    static FhnConfig divergent(int cells, double tEnd) {
        FhnConfig c = new FhnConfig();
        c.length = 100;
        c.cells = cells;
        c.dt = 0.02;
        c.tEnd = tEnd;
        c.initial = FhnConfig.GAUSSIAN;
        c.pulseAmplitude = 1.0;
        c.pulseWidth = 2.0;
        c.stimulus = FhnConfig.NONE;
        c.recordEvery = 500;
        return c;
    }

    /** Position of the largest v in [from, to) of a frame. */
    static int argmax(double[] field, int frame, int n, int from, int to) {
        int best = from;
        for (int i = from; i < to; i++) {
            if (field[frame * n + i] > field[frame * n + best]) {
                best = i;
            }
        }
        return best;
    }

    @Test
    void gaussianImpulseSplitsIntoTwoPulsesMovingApartAtEqualSpeed() {
        int n = 401;
        FhnResult r = FhnCpu.one(new FhnSetup(divergent(n, 40).validate()), FhnParams.excitable(0));
        int mid = n / 2;
        // frames at t = 10, 20, 30, 40
        int l2 = argmax(r.field, 2, n, 0, mid);
        int r2 = argmax(r.field, 2, n, mid, n);
        int l4 = argmax(r.field, 4, n, 0, mid);
        int r4 = argmax(r.field, 4, n, mid, n);
        assertTrue(r.field[4 * n + l4] > 0.5 && r.field[4 * n + r4] > 0.5, "two excited pulses");
        assertTrue(r4 - r2 > 20 && l2 - l4 > 20, "the pulses move apart: " + l2 + "->" + l4 + ", " + r2 + "->" + r4);
        assertEquals(r4 - r2, l2 - l4, 1, "equal speeds");
        assertEquals(mid - l4, r4 - mid, 1, "symmetric positions");
        assertTrue(r.field[4 * n + mid] < 0.2, "the middle has recovered");
    }

    @Test
    void subThresholdStimulusDecaysToRest() {
        FhnConfig c = divergent(201, 60);
        c.pulseAmplitude = 0.08; // below a = 0.1
        FhnResult r = FhnCpu.one(new FhnSetup(c.validate()), FhnParams.excitable(0));
        assertFalse(r.propagated);
        assertEquals(0.08, r.maxV, 1e-12);
        double m = 0;
        for (double x : r.v) {
            m = Math.max(m, Math.abs(x));
        }
        assertTrue(m < 0.01, "decayed: " + m);
    }

    /** A travelling pulse from a current at the left end, timed between the probes. */
    static FhnConfig travelling(int cells, String scheme) {
        FhnConfig c = new FhnConfig();
        c.length = 60;
        c.cells = cells;
        c.scheme = scheme;
        c.dt = 0.01;
        c.tEnd = 130;
        c.stimulus = FhnConfig.SERIES;
        c.series = new double[] {1.0, 1.0, 0.0}; // a 10-time-unit kick, then off
        c.seriesInterval = 5.0;
        c.stimulusWidth = 2.0;
        c.probeNear = 0.4;
        c.probeFar = 0.8;
        return c;
    }

    @Test
    void travellingPulseSpeedConvergesUnderRefinement() {
        double[] speed = new double[3];
        int[] cells = {121, 241, 481};
        for (int j = 0; j < 3; j++) {
            FhnResult r = FhnCpu.one(new FhnSetup(travelling(cells[j], FhnConfig.CRANK_NICOLSON).validate()),
                    FhnParams.excitable(0.5));
            assertTrue(r.propagated, "propagated at " + cells[j] + ": max v " + r.maxV + ", t near " + r.tNear);
            assertEquals(1, r.pulseCount);
            speed[j] = r.waveSpeed;
        }
        double d1 = Math.abs(speed[1] - speed[0]);
        double d2 = Math.abs(speed[2] - speed[1]);
        System.out.println("travelling pulse speeds at 121, 241, 481 cells: " + java.util.Arrays.toString(speed));
        assertTrue(d2 < 0.5 * d1, "speeds " + java.util.Arrays.toString(speed));
        assertTrue(speed[2] > 0.3 && speed[2] < 1.0, "a plausible speed " + speed[2]);
    }

    @Test
    void adaptiveUsesFewerNodesAtEqualError() {
        int n = 801;
        FhnConfig ref = divergent(n, 30);
        ref.dt = 0.005;
        ref.recordEvery = 0;
        FhnResult fine = FhnCpu.one(new FhnSetup(ref.validate()), FhnParams.excitable(0));
        FhnConfig ad = ref.copy();
        ad.scheme = FhnConfig.ADAPTIVE;
        FhnResult adaptive = FhnCpu.one(new FhnSetup(ad.validate()), FhnParams.excitable(0));
        double errAdaptive = maxDiff(adaptive.v, fine.v);
        // the uniform grid with about as many nodes as the adaptive one used on average
        int coarseCells = (int) Math.round(adaptive.meanNodes);
        int stride = (n - 1) / Math.max(1, coarseCells - 1);
        FhnConfig uc = ref.copy();
        uc.cells = (n - 1) / stride + 1;
        FhnResult uniform = FhnCpu.one(new FhnSetup(uc.validate()), FhnParams.excitable(0));
        double errUniform = spaceError(uniform.v, fine.v, false);
        double ratio = n / adaptive.meanNodes;
        System.out.printf("adaptive: %.1f mean nodes of %d (ratio %.2f), error %.3g; uniform %d nodes: error %.3g%n",
                adaptive.meanNodes, n, ratio, errAdaptive, uc.cells, errUniform);
        assertTrue(ratio > 2, "fewer nodes: ratio " + ratio);
        assertTrue(errAdaptive < 0.05, "adaptive error " + errAdaptive);
        assertTrue(errAdaptive < errUniform, "better than a uniform grid of as many nodes: " + errAdaptive + " vs "
                + errUniform);
    }

    @Test
    void explicitRefusesATimeStepAboveItsStabilityLimit() {
        FhnConfig c = smooth(FhnConfig.EXPLICIT, FhnConfig.NEUMANN, 81, 0.04, 1.0); // dx^2 / (2 D) = 0.03125
        double limit = new FhnSetup(c.validate()).explicitLimit(P);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> solve(c));
        assertTrue(e.getMessage().startsWith("dt must be <= " + limit + " for the explicit scheme"), e.getMessage());
        assertTrue(e.getMessage().contains("dx^2 / (2 D) = 0.03125 for diffusion alone"), e.getMessage());
        c.scheme = FhnConfig.ADAPTIVE;
        assertThrows(IllegalArgumentException.class, () -> solve(c));
        c.scheme = FhnConfig.CRANK_NICOLSON; // unconditionally stable
        solve(c);
    }

    /**
     * At exactly dt = dx^2 / (2 D) the checkerboard mode at rest is multiplied by -1 - a dt per step: the run blows up
     * (shown without the check), so that dt is refused; at the limit that counts the reaction (a hair lower) the same
     * run stays bounded. The limit matches the closed form of the fastest mode at rest and on the excited branch.
     */
    @Test
    void theStabilityLimitCountsTheReactionAtItsBoundary() {
        FhnParams p = new FhnParams(0.1, 0.01, 0.5, 0.0, 1.0);
        double dx = 0.25;
        double diffusionOnly = dx * dx / 2.0;
        FhnConfig c = smooth(FhnConfig.EXPLICIT, FhnConfig.PERIODIC, 80, diffusionOnly, 400.0);
        c.stimulus = FhnConfig.NONE;
        c.pulseAmplitude = 1e-3; // sub-threshold: decays to rest, where the reaction damps at rate a
        FhnSetup at = new FhnSetup(c.validate());
        double limit = at.explicitLimit(p);
        // closed form: the fastest mode, J = [[q - 4 D / dx^2, -1], [eps, -eps gamma]], at rest (q = f'(0) = -a) and
        // on the excited branch (q = f'(1) = a - 1), its faster real eigenvalue mu, dt <= -2 / mu
        double expect = Double.POSITIVE_INFINITY;
        for (double q : new double[] {-p.a, p.a - 1}) {
            double cc = q - 4 * p.diffusion / (dx * dx);
            double eg = p.eps * p.gamma;
            double mu = 0.5 * ((cc - eg) - Math.sqrt((cc - eg) * (cc - eg) - 4 * (p.eps - cc * eg)));
            expect = Math.min(expect, -2.0 / mu);
        }
        assertEquals(expect, limit, 1e-15 * expect);
        assertTrue(limit < diffusionOnly && limit > 0.98 * diffusionOnly, limit + " vs " + diffusionOnly);
        String msg = assertThrows(IllegalArgumentException.class, () -> FhnCpu.explicit(at, p)).getMessage();
        assertTrue(msg.startsWith("dt must be <= " + limit), msg);
        double[] blown = FhnCpu.explicitUnchecked(at, p).v;
        double bad = 0;
        for (double v : blown) {
            bad = Double.isNaN(v) ? Double.POSITIVE_INFINITY : Math.max(bad, Math.abs(v));
        }
        // the checkerboard grows by 1 + a dt per step: the 10^-3 bump ends 100 times larger instead of decaying
        assertTrue(bad > 100 * c.pulseAmplitude, "dx^2 / (2 D) itself is unstable: max |v| " + bad);
        c.dt = limit;
        FhnResult ok = FhnCpu.explicit(new FhnSetup(c.validate()), p);
        for (double v : ok.v) {
            assertTrue(Math.abs(v) < 1e-3, "bounded at the limit: " + v);
        }
    }

    static String error(Runnable r) {
        return assertThrows(IllegalArgumentException.class, r::run).getMessage();
    }

    @Test
    void badInputIsRefusedWithTheRule() {
        assertEquals("cells must be in [3, 268435456], got 2", error(() -> {
            FhnConfig c = new FhnConfig();
            c.cells = 2;
            c.validate();
        }));
        assertEquals("dt must be a finite number > 0, got 0.0", error(() -> {
            FhnConfig c = new FhnConfig();
            c.dt = 0;
            c.validate();
        }));
        assertEquals("length must be a finite number > 0, got -1.0", error(() -> {
            FhnConfig c = new FhnConfig();
            c.length = -1;
            c.validate();
        }));
        assertEquals("boundary must be one of dirichlet|neumann|periodic, got 'robin'", error(() -> {
            FhnConfig c = new FhnConfig();
            c.boundary = "robin";
            c.validate();
        }));
        assertTrue(error(() -> {
            FhnConfig c = new FhnConfig();
            c.scheme = FhnConfig.CRANK_NICOLSON;
            c.solver = FhnConfig.CYCLIC_REDUCTION;
            c.boundary = FhnConfig.PERIODIC;
            c.validate();
        }).startsWith("solver must be thomas with the periodic boundary"));
        assertEquals("row 3: a must be finite, got NaN",
                error(() -> new FhnParams(Double.NaN, 0.01, 0.5, 0, 1).check("row 3")));
        assertEquals("D must be a finite number > 0, got 0.0",
                error(() -> new FhnParams(0.1, 0.01, 0.5, 0, 0).check(null)));
        assertEquals("D must be a finite number > 0, got -1.0",
                error(() -> new FhnParams(0.1, 0.01, 0.5, 0, -1).check(null)));
        assertEquals("probeFar must be > probeNear = 0.6, got 0.5", error(() -> {
            FhnConfig c = new FhnConfig();
            c.probeFar = 0.5;
            c.validate();
        }));
    }

    @Test
    void resultsDoNotDependOnTheThreadCount() {
        FhnConfig c = smooth(FhnConfig.CRANK_NICOLSON, FhnConfig.PERIODIC, 40, 0.05, 1.0);
        FhnSetup s = new FhnSetup(c.validate());
        FhnParams[] ps = new FhnParams[5];
        for (int j = 0; j < ps.length; j++) {
            ps[j] = new FhnParams(0.05 * j, 0.01, 0.5, 0.1 * j, 1.0 + j);
        }
        FhnResult[] one = FhnCpu.run(s, ps, 1);
        FhnResult[] many = FhnCpu.run(s, ps, 3);
        for (int j = 0; j < ps.length; j++) {
            assertEquals(0, java.util.Arrays.compare(one[j].v, many[j].v));
        }
    }
}
