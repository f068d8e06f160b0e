package io.sparkgpu.pde;

import static io.sparkgpu.ml.ParamChecks.require;

/**
 * What every solver of one validated {@link FhnConfig} derives from it, computed once on the host in Java and used
 * as-is by the CPU twin and uploaded to the GPU (so exp, the only transcendental, is evaluated in one place): the
 * spacing, the stimulus profile p(x_i) and signal s(t_k) for every step, the initial v, the probe nodes.
 */
final class FhnSetup {
    /** Boundary codes shared with pde.cu. */
    public static final int BC_DIRICHLET = 0;
    public static final int BC_NEUMANN = 1;
    public static final int BC_PERIODIC = 2;

    public final FhnConfig config;
    public final int n;
    public final double dx;
    /** 1 / dx^2. */
    public final double idx2;
    public final double dt;
    public final long steps;
    public final int bc;
    /** p(x_i), zeros without a stimulus. */
    public final double[] profile;
    /** Initial v (w starts at 0). */
    public final double[] v0;
    /** min(0, min v0) and max(1, max v0): where the stability limit takes the reaction's slope. */
    final double vLo;
    final double vHi;
    public final int probeNear;
    public final int probeFar;
    public final double threshold;

    public FhnSetup(FhnConfig c) {
        this.config = c;
        n = c.cells;
        dx = c.dx();
        idx2 = 1.0 / (dx * dx);
        dt = c.dt;
        steps = FhnConfig.steps(c.tEnd, c.dt);
        bc = FhnConfig.DIRICHLET.equals(c.boundary) ? BC_DIRICHLET
                : FhnConfig.NEUMANN.equals(c.boundary) ? BC_NEUMANN : BC_PERIODIC;
        profile = new double[n];
        if (!FhnConfig.NONE.equals(c.stimulus)) {
            for (int i = 0; i < n; i++) {
                // periodic: the distance to node 0 around the ring, so the profile has no jump at the seam
                double x = bc == BC_PERIODIC ? Math.min(i * dx, c.length - i * dx) : i * dx;
                double r = x / c.stimulusWidth;
                profile[i] = Math.exp(-(r * r));
            }
        }
        v0 = new double[n];
        if (FhnConfig.GAUSSIAN.equals(c.initial)) {
            double centre = c.pulseCenter * c.length;
            for (int i = 0; i < n; i++) {
                double r = (i * dx - centre) / c.pulseWidth;
                v0[i] = c.pulseAmplitude * Math.exp(-(r * r));
            }
        }
        double[] r = slopeRange(v0);
        vLo = r[0];
        vHi = r[1];
        probeNear = (int) Math.round(c.probeNear * (n - 1));
        probeFar = (int) Math.round(c.probeFar * (n - 1));
        threshold = c.threshold;
    }

    /** s(t_k) at t_k = k dt: 0 without a stimulus, 1 for a constant one, the interpolated series otherwise. */
    public double signal(long k) {
        FhnConfig c = config;
        if (FhnConfig.NONE.equals(c.stimulus)) {
            return 0.0;
        }
        double[] s = c.series;
        if (FhnConfig.CONSTANT.equals(c.stimulus) || s.length == 1) {
            return FhnConfig.CONSTANT.equals(c.stimulus) ? 1.0 : s[0];
        }
        double u = (k * dt) / c.seriesInterval;
        double j = Math.floor(u);
        if (j >= s.length - 1) {
            return s[s.length - 1];
        }
        int m = (int) j;
        return s[m] + (u - j) * (s[m + 1] - s[m]);
    }

    /** s(t_k) for k in [from, from + count). */
    public double[] signals(long from, int count) {
        double[] out = new double[count];
        for (int k = 0; k < count; k++) {
            out[k] = signal(from + k);
        }
        return out;
    }

    /** The time of step k: k dt. */
    public double time(long k) {
        return k * dt;
    }

    /**
     * The explicit (FTCS) scheme's stability limit for one parameter set: the largest dt for which forward Euler
     * does not amplify any Fourier mode that the linearised equations damp. dx^2 / (2 D) is the limit of diffusion
     * alone; the reaction's damping f'(v) < 0 and the w coupling lower it: at rest (f'(0) = -a) and dt = dx^2 / (2 D)
     * the checkerboard mode is multiplied by -1 - a dt per step and grows without bound.
     *
     * <p>Per mode of wave number k the linearised step is x <- (I + dt J) x with J = [[q - lam, -1], [eps,
     * -eps gamma]], lam = (4 D / dx^2) sin^2(k dx / 2) in [0, 4 D / dx^2] (Dirichlet, Neumann and periodic
     * alike), q = f'(v) = (2 (1 + a) - 3 v) v - a. An eigenvalue mu of J with Re mu < 0 is damped by the step iff
     * |1 + dt mu| <= 1, i.e. dt <= -2 Re mu / |mu|^2 (eigenvalues with Re mu >= 0 grow in the equations themselves).
     * q is taken at both ends of [min(0, min v0), max(1, max v0)] (rest, the excited branch and the initial state; f'
     * is concave, so its most damping value on that range is at an end); the bound, a ratio of linear functions of
     * lam on each piece where the eigenvalues stay real or complex, is evaluated at lam = 0, 4 D / dx^2 and the
     * pieces' ends. The result is at most dx^2 / (2 D) and equal to it only without damping.
     */
    public static double explicitLimit(double dx, double[] v0, FhnParams p) {
        double[] r = slopeRange(v0);
        return explicitLimit(dx, r[0], r[1], p);
    }

    /** {min(0, min v0), max(1, max v0)}. */
    static double[] slopeRange(double[] v0) {
        double lo = 0.0;
        double hi = 1.0;
        for (double v : v0) {
            lo = Math.min(lo, v);
            hi = Math.max(hi, v);
        }
        return new double[] {lo, hi};
    }

    /** {@link #explicitLimit(double, double[], FhnParams)} with f' taken at v = lo and v = hi. */
    static double explicitLimit(double dx, double lo, double hi, FhnParams p) {
        double lamMax = 4.0 * p.diffusion / (dx * dx);
        double eg = p.eps * p.gamma;
        double limit = Double.POSITIVE_INFINITY;
        for (double v : new double[] {lo, hi}) {
            double q = ((2.0 * (1.0 + p.a)) - 3.0 * v) * v - p.a;
            double root = 2.0 * Math.sqrt(p.eps);
            for (double lam : new double[] {0.0, lamMax, q + eg - root, q + eg + root}) {
                if (lam >= 0.0 && lam <= lamMax) {
                    limit = Math.min(limit, modeLimit(q - lam, p.eps, eg));
                }
            }
        }
        return limit;
    }

    /** The largest dt with |1 + dt mu| <= 1 for every eigenvalue mu of [[c, -1], [eps, -eg]] with Re mu < 0. */
    static double modeLimit(double c, double eps, double eg) {
        double tr = c - eg;
        double det = eps - c * eg;
        double disc = tr * tr - 4.0 * det;
        double limit = Double.POSITIVE_INFINITY;
        if (disc >= 0.0) {
            double r = Math.sqrt(disc);
            for (double mu : new double[] {0.5 * (tr - r), 0.5 * (tr + r)}) {
                if (mu < 0.0) {
                    limit = Math.min(limit, -2.0 / mu);
                }
            }
        } else if (tr < 0.0) {
            limit = -tr / det; // mu = tr / 2 +- i sqrt(-disc) / 2, |mu|^2 = det
        }
        return limit;
    }

    /** The stability limit of {@link #explicitLimit} for this grid and initial state. */
    public double explicitLimit(FhnParams p) {
        return explicitLimit(dx, vLo, vHi, p);
    }

    /**
     * Refuses a dt above {@link #explicitLimit} (explicit and adaptive schemes; the adaptive one is held to the
     * limit of its finest spacing, the underlying grid's), with the limit and the diffusion-only bound in the message.
     */
    public static void checkExplicitStable(FhnSetup s, FhnParams p, String where) {
        FhnConfig c = s.config;
        double limit = s.explicitLimit(p);
        if (c.dt <= limit) {
            return; // the message below is built only for an error (a sweep checks every row)
        }
        require(c.dt <= limit, (where == null ? "" : where + ": ") + "dt",
                "<= " + limit + " for the " + c.scheme + " scheme (its stability limit with D = " + p.diffusion
                        + ", dx = " + s.dx + ": dx^2 / (2 D) = " + s.dx * s.dx / (2.0 * p.diffusion)
                        + " for diffusion alone, lowered by the reaction's damping with a = " + p.a + ", eps = "
                        + p.eps + ", gamma = " + p.gamma + "; lower dt, raise length / cells, or use crank-nicolson)",
                c.dt);
    }
}
