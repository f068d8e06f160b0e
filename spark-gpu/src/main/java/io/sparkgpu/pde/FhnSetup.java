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
     * The explicit scheme's stability limit for diffusion D: dt <= dx^2 / (2 D) (refused above it, with the limit
     * in the message; the adaptive scheme is held to the limit of its finest spacing, the underlying grid's).
     */
    public static void checkExplicitStable(FhnConfig c, double diffusion, String where) {
        double dx = c.dx();
        double limit = dx * dx / (2.0 * diffusion);
        require(c.dt <= limit, (where == null ? "" : where + ": ") + "dt",
                "<= dx^2 / (2 D) = " + limit + " for the " + c.scheme + " scheme (its stability limit with D = "
                        + diffusion + ", dx = " + dx + "; lower dt, raise length / cells, or use crank-nicolson)",
                c.dt);
    }
}
