package io.sparkgpu.pde;

import java.util.Arrays;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.ArrayList;
import java.util.List;

/**
 * The CPU twin of {@code pde.cu}: the reference arithmetic of every FitzHugh-Nagumo solver, in fp64, using only
 * + - * / on values that the GPU computes in the same order (the kernels are built without FMA contraction), so
 * each simulation gives the same bits on both. exp is evaluated once on the host ({@link FhnSetup}).
 *
 * <p><b>Explicit (FTCS).</b> v' = v + dt (((D lap v + f(v)) - w) + (I s_k) p_i), w' = w + dt (eps (v - gamma w)),
 * lap v = ((v_{i-1} + v_{i+1}) - (v_i + v_i)) / dx^2 with f(v) = (v (a - v)) (v - 1). Neumann (no flux) uses the
 * ghost node v_{-1} = v_1 (second order, the central difference of v_x = 0 at the end node); periodic wraps; Dirichlet
 * holds the end nodes. First order in time, second in space; dt above FhnSetup.explicitLimit (dx^2 / (2 D) lowered
 * by the reaction) is refused.
 *
 * <p><b>Crank-Nicolson.</b> Both equations are averaged between t_k and t_{k+1}. The w equation is linear, so
 * w' = alpha w + beta (v + v') with h = dt eps gamma / 2, alpha = (1 - h) / (1 + h), beta = (dt eps / 2) / (1 + h);
 * substituting leaves for u = v' the nonlinear system G(u) = u - dt/2 (D lap u + f(u) - beta u) - R = 0, with R from
 * the old state and both stimuli. Newton from u = v: J delta = -G, J tridiagonal (constant off-diagonals, diagonal
 * 1 - dt/2 (-2 D / dx^2 + f'(u) - beta)), until max |delta| <= newtonTol or maxNewton iterations. Second order in
 * time and space. J is solved by Thomas (Sherman-Morrison for the periodic corners) or by cyclic reduction.
 */
final class FhnCpu {
    private FhnCpu() {
    }

    // ------------------------------------------------------------------------------------------ model

    /** f(v) = v (a - v) (v - 1), in the kernels' order. */
    static double reaction(double v, double a) {
        return (v * (a - v)) * (v - 1.0);
    }

    /** f'(v) = (2 (1 + a) - 3 v) v - a. */
    static double reactionSlope(double v, double a) {
        return ((2.0 * (1.0 + a)) - 3.0 * v) * v - a;
    }

    /** Observables of one simulation, updated after each step exactly as the kernels do. */
    static final class Observer {
        final FhnSetup s;
        double tNear = Double.NaN;
        double tFar = Double.NaN;
        int pulses;
        double maxV = Double.NEGATIVE_INFINITY;

        Observer(FhnSetup s, double[] v) {
            this.s = s;
            maxV = initialMax(v);
        }

        /** Step k -> k + 1 took the probe values from (oldNear, oldFar) to (newNear, newFar). */
        void step(long k, double oldNear, double newNear, double oldFar, double newFar) {
            double th = s.threshold;
            if (Double.isNaN(tNear) && oldNear < th && newNear >= th) {
                tNear = s.time(k) + s.dt * ((th - oldNear) / (newNear - oldNear));
            }
            if (oldFar < th && newFar >= th) {
                if (Double.isNaN(tFar)) {
                    tFar = s.time(k) + s.dt * ((th - oldFar) / (newFar - oldFar));
                }
                pulses++;
            }
        }

        void max(double x) {
            if (x > maxV) {
                maxV = x;
            }
        }

        FhnResult result(double[] v, double[] w, double[] field, int frames, long newton, long unconverged,
                         double meanNodes) {
            return FhnCpu.result(s, tNear, tFar, pulses, maxV, v, w, field, frames, newton, unconverged, meanNodes);
        }
    }

    /** The result of one simulation from its observables (both twins). */
    static FhnResult result(FhnSetup s, double tNear, double tFar, int pulses, double maxV, double[] v, double[] w,
                            double[] field, int frames, long newton, long unconverged, double meanNodes) {
        return new FhnResult(tNear, tFar, pulses, maxV, s.time(s.steps), s.steps, newton, unconverged, meanNodes,
                s.probeNear * s.dx, s.probeFar * s.dx, v, w, field, frames);
    }

    /** The largest initial v, as the observers start (NaN ignored). */
    static double initialMax(double[] v) {
        double m = Double.NEGATIVE_INFINITY;
        for (double x : v) {
            if (x > m) {
                m = x;
            }
        }
        return m;
    }

    /** An integer whose signed order is the order of the non-NaN doubles (pde.cu's order_key; its own inverse). */
    static long orderKey(double x) {
        long b = Double.doubleToRawLongBits(x);
        return b >= 0 ? b : b ^ 0x7fffffffffffffffL;
    }

    static double fromOrderKey(long k) {
        return Double.longBitsToDouble(k >= 0 ? k : k ^ 0x7fffffffffffffffL);
    }

    /** Frames of the space-time field: the initial state and every recordEvery-th step. */
    static int frames(FhnSetup s) {
        int every = s.config.recordEvery;
        if (every <= 0) {
            return 0;
        }
        long f = 1 + s.steps / every;
        if (f * s.n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("recordEvery must keep the field under 2^31 values, got "
                    + every + " (" + f + " frames of " + s.n + " cells)");
        }
        return (int) f;
    }

    // ------------------------------------------------------------------------------------------ runs

    /** Every simulation of {@code params} on the setup's grid, on {@code threads} threads (same bits for any). */
    public static FhnResult[] run(FhnSetup s, FhnParams[] params, int threads) {
        FhnResult[] out = new FhnResult[params.length];
        if (threads <= 1 || params.length <= 1) {
            for (int j = 0; j < params.length; j++) {
                out[j] = one(s, params[j]);
            }
            return out;
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, params.length), r -> {
            Thread t = new Thread(r, "fhn-cpu");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int j = 0; j < params.length; j++) {
                final int jj = j;
                fs.add(pool.submit(() -> {
                    out[jj] = one(s, params[jj]);
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            throw new IllegalStateException(c);
        } finally {
            pool.shutdownNow();
        }
        return out;
    }

    /** One simulation with the config's scheme. */
    public static FhnResult one(FhnSetup s, FhnParams p) {
        switch (s.config.scheme) {
            case FhnConfig.EXPLICIT:
                return explicit(s, p);
            case FhnConfig.ADAPTIVE:
                return FhnAdaptive.run(s, p);
            default:
                return crankNicolson(s, p);
        }
    }

    // ------------------------------------------------------------------------------------------ explicit

    /** One explicit step of one axon from (v, w) into (vn, wn); sg = s(t_k). */
    static void explicitStep(FhnSetup s, FhnParams p, double sg, double[] v, double[] w, double[] vn, double[] wn) {
        int n = s.n;
        double dt = s.dt;
        double idx2 = s.idx2;
        double a = p.a;
        double eps = p.eps;
        double gamma = p.gamma;
        double d = p.diffusion;
        double amp = p.current * sg;
        for (int i = 0; i < n; i++) {
            double vi = v[i];
            double wi = w[i];
            wn[i] = wi + dt * (eps * (vi - gamma * wi));
            double vl;
            double vr;
            if (s.bc == FhnSetup.BC_PERIODIC) {
                vl = v[i == 0 ? n - 1 : i - 1];
                vr = v[i == n - 1 ? 0 : i + 1];
            } else if (s.bc == FhnSetup.BC_NEUMANN) {
                vl = v[i == 0 ? 1 : i - 1];
                vr = v[i == n - 1 ? n - 2 : i + 1];
            } else {
                if (i == 0 || i == n - 1) {
                    vn[i] = vi;
                    continue;
                }
                vl = v[i - 1];
                vr = v[i + 1];
            }
            double lap = ((vl + vr) - (vi + vi)) * idx2;
            vn[i] = vi + dt * ((((d * lap) + reaction(vi, a)) - wi) + amp * s.profile[i]);
        }
    }

    /** The explicit FTCS scheme for one axon (refuses dt above the stability limit). */
    public static FhnResult explicit(FhnSetup s, FhnParams p) {
        FhnSetup.checkExplicitStable(s, p, null);
        return explicitUnchecked(s, p);
    }

    /** The explicit scheme without the stability check (the tests' look at what the check prevents). */
    static FhnResult explicitUnchecked(FhnSetup s, FhnParams p) {
        int n = s.n;
        double[] v = s.v0.clone();
        double[] w = new double[n];
        double[] vn = new double[n];
        double[] wn = new double[n];
        Observer obs = new Observer(s, v);
        int frames = frames(s);
        double[] field = frames > 0 ? new double[frames * n] : null;
        if (field != null) {
            System.arraycopy(v, 0, field, 0, n);
        }
        for (long k = 0; k < s.steps; k++) {
            explicitStep(s, p, s.signal(k), v, w, vn, wn);
            obs.step(k, v[s.probeNear], vn[s.probeNear], v[s.probeFar], vn[s.probeFar]);
            for (int i = 0; i < n; i++) {
                obs.max(vn[i]);
            }
            double[] t = v;
            v = vn;
            vn = t;
            t = w;
            w = wn;
            wn = t;
            record(s, field, k + 1, v);
        }
        return obs.result(v, w, field, frames, 0, 0, n);
    }

    static void record(FhnSetup s, double[] field, long step, double[] v) {
        int every = s.config.recordEvery;
        if (field != null && step % every == 0) {
            System.arraycopy(v, 0, field, (int) (step / every) * s.n, s.n);
        }
    }

    // ------------------------------------------------------------------------------------------ Crank-Nicolson

    /** Per-simulation constants of the Crank-Nicolson step (the kernels compute the same from the same inputs). */
    static final class CnCoefficients {
        final double hd;
        final double alpha;
        final double beta;
        final double dd;

        CnCoefficients(FhnSetup s, FhnParams p) {
            hd = 0.5 * s.dt;
            double he = hd * p.eps;
            double h = he * p.gamma;
            alpha = (1.0 - h) / (1.0 + h);
            beta = he / (1.0 + h);
            dd = p.diffusion * s.idx2;
        }
    }

    static double laplacian(FhnSetup s, double[] u, int i) {
        int n = s.n;
        double ul;
        double ur;
        if (s.bc == FhnSetup.BC_PERIODIC) {
            ul = u[i == 0 ? n - 1 : i - 1];
            ur = u[i == n - 1 ? 0 : i + 1];
        } else {
            ul = u[i == 0 ? 1 : i - 1];
            ur = u[i == n - 1 ? n - 2 : i + 1];
        }
        return ((ul + ur) - (u[i] + u[i])) * s.idx2;
    }

    /** R_i: the known part of the Crank-Nicolson equation of node i (sg0 = s(t_k), sg1 = s(t_{k+1})). */
    static double cnRhs(FhnSetup s, FhnParams p, CnCoefficients c, double[] v, double[] w, int i, double sg0,
                        double sg1) {
        double vi = v[i];
        double wi = w[i];
        double src = (p.current * sg0) * s.profile[i] + (p.current * sg1) * s.profile[i];
        return vi + c.hd * (((((p.diffusion * laplacian(s, v, i) + reaction(vi, p.a)) - wi) - c.alpha * wi)
                - c.beta * vi) + src);
    }

    /**
     * The Newton system J delta = -G at u: sub-diagonal a, diagonal b, super-diagonal c, right-hand side d (for
     * periodic rows a[0] couples to u[n-1] and c[n-1] to u[0]).
     */
    static void cnSystem(FhnSetup s, FhnParams p, CnCoefficients c, double[] u, double[] r, double[] sa, double[] sb,
                         double[] sc, double[] sd) {
        int n = s.n;
        double off = -(c.hd * c.dd);
        double off2 = -(c.hd * (2.0 * c.dd));
        for (int i = 0; i < n; i++) {
            if (s.bc == FhnSetup.BC_DIRICHLET && (i == 0 || i == n - 1)) {
                sa[i] = 0.0;
                sb[i] = 1.0;
                sc[i] = 0.0;
                sd[i] = 0.0;
                continue;
            }
            double ui = u[i];
            double g = (ui - c.hd * (((p.diffusion * laplacian(s, u, i)) + reaction(ui, p.a)) - c.beta * ui)) - r[i];
            sb[i] = 1.0 - c.hd * (((-2.0 * c.dd) + reactionSlope(ui, p.a)) - c.beta);
            sd[i] = -g;
            if (s.bc == FhnSetup.BC_NEUMANN && i == 0) {
                sa[i] = 0.0;
                sc[i] = off2;
            } else if (s.bc == FhnSetup.BC_NEUMANN && i == n - 1) {
                sa[i] = off2;
                sc[i] = 0.0;
            } else {
                sa[i] = off;
                sc[i] = off;
            }
        }
        if (s.bc != FhnSetup.BC_PERIODIC) {
            sa[0] = 0.0;
            sc[n - 1] = 0.0;
        }
    }

    /** The Crank-Nicolson + Newton scheme for one axon, with the config's tridiagonal solver. */
    public static FhnResult crankNicolson(FhnSetup s, FhnParams p) {
        int n = s.n;
        boolean cr = FhnConfig.CYCLIC_REDUCTION.equals(s.config.solver);
        CnCoefficients c = new CnCoefficients(s, p);
        double[] v = s.v0.clone();
        double[] w = new double[n];
        double[] u = new double[n];
        double[] r = new double[n];
        double[] sa = new double[n];
        double[] sb = new double[n];
        double[] sc = new double[n];
        double[] sd = new double[n];
        double[] x = new double[n];
        double[] scratch = new double[3 * n];
        Observer obs = new Observer(s, v);
        int frames = frames(s);
        double[] field = frames > 0 ? new double[frames * n] : null;
        if (field != null) {
            System.arraycopy(v, 0, field, 0, n);
        }
        long newton = 0;
        long unconverged = 0;
        double tol = s.config.newtonTol;
        int maxNewton = s.config.maxNewton;
        for (long k = 0; k < s.steps; k++) {
            double sg0 = s.signal(k);
            double sg1 = s.signal(k + 1);
            for (int i = 0; i < n; i++) {
                r[i] = cnRhs(s, p, c, v, w, i, sg0, sg1);
            }
            System.arraycopy(v, 0, u, 0, n);
            boolean converged = false;
            for (int it = 0; it < maxNewton; it++) {
                cnSystem(s, p, c, u, r, sa, sb, sc, sd);
                double err;
                if (cr) {
                    cyclicReduction(sa, sb, sc, sd, x, n);
                    long key = 0;
                    for (int i = 0; i < n; i++) {
                        u[i] = u[i] + x[i];
                        key = Math.max(key, Double.doubleToRawLongBits(Math.abs(x[i])));
                    }
                    err = Double.longBitsToDouble(key);
                } else {
                    if (s.bc == FhnSetup.BC_PERIODIC) {
                        thomasPeriodic(sa, sb, sc, sd, x, n, scratch);
                    } else {
                        thomas(sa, sb, sc, sd, x, n, scratch);
                    }
                    err = 0.0;
                    for (int i = 0; i < n; i++) {
                        u[i] = u[i] + x[i];
                        double e = Math.abs(x[i]);
                        if (e > err) {
                            err = e;
                        }
                    }
                }
                newton++;
                if (err <= tol) {
                    converged = true;
                    break;
                }
            }
            if (!converged) {
                unconverged++;
            }
            double oldNear = v[s.probeNear];
            double oldFar = v[s.probeFar];
            for (int i = 0; i < n; i++) {
                w[i] = c.alpha * w[i] + c.beta * (v[i] + u[i]);
                v[i] = u[i];
                obs.max(u[i]);
            }
            obs.step(k, oldNear, v[s.probeNear], oldFar, v[s.probeFar]);
            record(s, field, k + 1, v);
        }
        return obs.result(v, w, field, frames, newton, unconverged, n);
    }

    // ------------------------------------------------------------------------------------------ tridiagonal

    /**
     * Thomas' algorithm for a[i] x[i-1] + b[i] x[i] + c[i] x[i+1] = d[i] (a[0], c[n-1] unused), without pivoting
     * (the Crank-Nicolson Jacobian is diagonally dominant for dt below the reaction's time scale). scratch: >= 2n.
     */
    public static void thomas(double[] a, double[] b, double[] c, double[] d, double[] x, int n, double[] scratch) {
        double[] cp = scratch;
        double m = b[0];
        cp[0] = c[0] / m;
        x[0] = d[0] / m;
        for (int i = 1; i < n; i++) {
            m = b[i] - a[i] * cp[i - 1];
            cp[i] = c[i] / m;
            x[i] = (d[i] - a[i] * x[i - 1]) / m;
        }
        for (int i = n - 2; i >= 0; i--) {
            x[i] = x[i] - cp[i] * x[i + 1];
        }
    }

    /**
     * The cyclic tridiagonal system (a[0] couples x[0] to x[n-1], c[n-1] couples x[n-1] to x[0]) by Sherman-Morrison
     * around Thomas: with g = -b[0], solve T y = d and T z = (g, 0, ..., 0, c[n-1]) where T has b[0] - g and
     * b[n-1] - c[n-1] a[0] / g on its diagonal ends, then x = y - z (y[0] + (a[0] / g) y[n-1]) / ((1 + z[0]) +
     * (a[0] / g) z[n-1]). scratch: >= 3n.
     */
    public static void thomasPeriodic(double[] a, double[] b, double[] c, double[] d, double[] x, int n,
                                      double[] scratch) {
        double top = a[0];
        double bottom = c[n - 1];
        double g = -b[0];
        double[] cp = scratch;
        int zo = n;
        double m = b[0] - g;
        cp[0] = c[0] / m;
        x[0] = d[0] / m;
        scratch[zo] = g / m;
        for (int i = 1; i < n; i++) {
            double bi = i == n - 1 ? b[i] - (bottom * top) / g : b[i];
            double zi = i == n - 1 ? bottom : 0.0;
            m = bi - a[i] * cp[i - 1];
            cp[i] = c[i] / m;
            x[i] = (d[i] - a[i] * x[i - 1]) / m;
            scratch[zo + i] = (zi - a[i] * scratch[zo + i - 1]) / m;
        }
        for (int i = n - 2; i >= 0; i--) {
            x[i] = x[i] - cp[i] * x[i + 1];
            scratch[zo + i] = scratch[zo + i] - cp[i] * scratch[zo + i + 1];
        }
        double q = top / g;
        double fact = (x[0] + q * x[n - 1]) / ((1.0 + scratch[zo]) + q * scratch[zo + n - 1]);
        for (int i = 0; i < n; i++) {
            x[i] = x[i] - fact * scratch[zo + i];
        }
    }

    /** Levels k of cyclic reduction: the smallest k with 2^k - 1 >= n. */
    public static int crLevels(int n) {
        int k = 1;
        while ((1L << k) - 1 < n) {
            k++;
        }
        return k;
    }

    /** Forward reduction of one level (stride s): rows i = 2s - 1 (mod 2s) eliminate their neighbours i +- s. */
    static void crForwardRow(double[] a, double[] b, double[] c, double[] d, int off, int n, int i, int s) {
        int il = off + i - s;
        int ir = off + i + s;
        int ii = off + i;
        double k1 = a[ii] / b[il];
        if (i + s < n) {
            double k2 = c[ii] / b[ir];
            a[ii] = -(a[il] * k1);
            b[ii] = (b[ii] - c[il] * k1) - a[ir] * k2;
            c[ii] = -(c[ir] * k2);
            d[ii] = (d[ii] - d[il] * k1) - d[ir] * k2;
        } else {
            a[ii] = -(a[il] * k1);
            b[ii] = b[ii] - c[il] * k1;
            c[ii] = 0.0;
            d[ii] = d[ii] - d[il] * k1;
        }
    }

    /** Back substitution of one level (stride s): rows i = s - 1 (mod 2s) from x[i - s] and x[i + s]. */
    static void crBackwardRow(double[] a, double[] b, double[] c, double[] d, double[] x, int off, int n, int i,
                              int s) {
        double xl = i - s >= 0 ? x[off + i - s] : 0.0;
        double xr = i + s < n ? x[off + i + s] : 0.0;
        int ii = off + i;
        x[ii] = ((d[ii] - a[ii] * xl) - c[ii] * xr) / b[ii];
    }

    /**
     * Cyclic reduction (Hockney) for a non-periodic tridiagonal system of any n (conceptually padded to 2^k - 1 with
     * decoupled rows): log2 levels of odd-even elimination, the middle row solved directly, log2 levels of back
     * substitution. Overwrites a, b, c, d. Each level's rows are independent: the kernels run them in parallel with
     * the same per-row arithmetic, so the bits agree.
     */
    public static void cyclicReduction(double[] a, double[] b, double[] c, double[] d, double[] x, int n) {
        cyclicReduction(a, b, c, d, x, 0, n);
    }

    /** {@link #cyclicReduction} of the system stored at [off, off + n) of the arrays. */
    public static void cyclicReduction(double[] a, double[] b, double[] c, double[] d, double[] x, int off, int n) {
        a[off] = 0.0;
        c[off + n - 1] = 0.0;
        int k = crLevels(n);
        for (int l = 0; l <= k - 2; l++) {
            int s = 1 << l;
            for (int i = 2 * s - 1; i < n; i += 2 * s) {
                crForwardRow(a, b, c, d, off, n, i, s);
            }
        }
        int top = (1 << (k - 1)) - 1;
        x[off + top] = d[off + top] / b[off + top];
        for (int l = k - 2; l >= 0; l--) {
            int s = 1 << l;
            for (int i = s - 1; i < n; i += 2 * s) {
                crBackwardRow(a, b, c, d, x, off, n, i, s);
            }
        }
    }

    /**
     * Batched Thomas on the interleaved layout of the kernel (element i of system j at i * systems + j), in place:
     * c receives the modified super-diagonal, d the solution.
     */
    public static void thomasInterleaved(int systems, int n, double[] a, double[] b, double[] c, double[] d) {
        for (int j = 0; j < systems; j++) {
            double m = b[j];
            c[j] = c[j] / m;
            d[j] = d[j] / m;
            for (int i = 1; i < n; i++) {
                int e = i * systems + j;
                int p = e - systems;
                m = b[e] - a[e] * c[p];
                c[e] = c[e] / m;
                d[e] = (d[e] - a[e] * d[p]) / m;
            }
            for (int i = n - 2; i >= 0; i--) {
                int e = i * systems + j;
                d[e] = d[e] - c[e] * d[e + systems];
            }
        }
    }

    /**
     * The partitioned batched solver (pde.cu's pde_tridiag_partition_R&lt;r&gt;, its twin operation for operation) on
     * the interleaved layout of {@link #thomasInterleaved}: d receives the solutions, a, b and c are not written.
     * Each system is cut into K = ceil(n / r) chunks of r rows (rows past n: identity rows a = c = 0, b = 1, d = 0;
     * a[0] and c[n - 1] count as 0). Per chunk, a down and an up sweep (the "modified Thomas") write each row through
     * the chunk's first and last unknowns; the chunks' last unknowns form a K-row tridiagonal system with unit
     * diagonal, solved by parallel cyclic reduction (ceil(log2 K) steps, a neighbour outside [0, K) the zero row);
     * then the first and interior unknowns of every chunk follow. Without pivoting, like Thomas: diagonal dominance
     * suffices. r >= 3 (the kernels: 4, 8, 16); n >= 1.
     */
    public static void partitionInterleaved(int systems, int n, int r, double[] a, double[] b, double[] c,
                                            double[] d) {
        if (r < 3 || n < 1) {
            throw new IllegalArgumentException("partitioned solver: need r >= 3 and n >= 1, got r = " + r
                    + ", n = " + n);
        }
        int chunks = (n + r - 1) / r;
        int rows = chunks * r;
        double[] ra = new double[rows];
        double[] rb = new double[rows];
        double[] rc = new double[rows];
        double[] rd = new double[rows];
        // the reduced rows, double buffered like the kernel's shared memory
        double[][] ea = new double[2][chunks];
        double[][] ec = new double[2][chunks];
        double[][] ed = new double[2][chunks];
        for (int j = 0; j < systems; j++) {
            for (int g = 0; g < rows; g++) {
                int e = g * systems + j;
                boolean real = g < n;
                ra[g] = real && g > 0 ? a[e] : 0.0;
                rb[g] = real ? b[e] : 1.0;
                rc[g] = real && g < n - 1 ? c[e] : 0.0;
                rd[g] = real ? d[e] : 0.0;
            }
            for (int k = 0; k < chunks; k++) {
                partitionSweeps(k * r, r, ra, rb, rc, rd);
            }
            // row r - 1 of chunk k with its own row 0 and chunk k+1's row 0 eliminated
            for (int k = 0; k < chunks; k++) {
                int f = k * r;
                int l = f + r - 1;
                double na = 0.0;
                double nc = 0.0;
                double nd = 0.0;
                if (k + 1 < chunks) {
                    na = ra[f + r];
                    nc = rc[f + r];
                    nd = rd[f + r];
                }
                double q = 1.0 / ((1.0 - ra[l] * rc[f]) - rc[l] * na);
                ea[0][k] = -((ra[l] * ra[f]) * q);
                ec[0][k] = -((rc[l] * nc) * q);
                ed[0][k] = ((rd[l] - ra[l] * rd[f]) - rc[l] * nd) * q;
            }
            int p = 0;
            for (int s = 1; s < chunks; s <<= 1) {
                double[] oa = ea[p];
                double[] oc = ec[p];
                double[] od = ed[p];
                for (int k = 0; k < chunks; k++) {
                    double am = 0.0;
                    double cm = 0.0;
                    double dm = 0.0;
                    double ap = 0.0;
                    double cp = 0.0;
                    double dp = 0.0;
                    if (k - s >= 0) {
                        am = oa[k - s];
                        cm = oc[k - s];
                        dm = od[k - s];
                    }
                    if (k + s < chunks) {
                        ap = oa[k + s];
                        cp = oc[k + s];
                        dp = od[k + s];
                    }
                    double q = 1.0 / ((1.0 - oa[k] * cm) - oc[k] * ap);
                    ea[1 - p][k] = -((oa[k] * am) * q);
                    ec[1 - p][k] = -((oc[k] * cp) * q);
                    ed[1 - p][k] = ((od[k] - oa[k] * dm) - oc[k] * dp) * q;
                }
                p = 1 - p;
            }
            double[] xl = ed[p];
            for (int k = 0; k < chunks; k++) {
                int f = k * r;
                double xprev = k > 0 ? xl[k - 1] : 0.0;
                double xf = (rd[f] - ra[f] * xprev) - rc[f] * xl[k];
                for (int i = 0; i < r && f + i < n; i++) {
                    int g = f + i;
                    double x = i == 0 ? xf : (i == r - 1 ? xl[k] : (rd[g] - ra[g] * xf) - rc[g] * xl[k]);
                    d[g * systems + j] = x;
                }
            }
        }
    }

    /**
     * The chunk [f, f + r) of {@link #partitionInterleaved}: the down sweep (rows 0 and 1 normalised, row i >= 2 on
     * x_first, x_i, x_(i+1)), then the up sweep (interior rows on x_first and x_last, row 0 on the previous chunk's
     * last unknown and x_last), in place: afterwards row i reads a[i] x_first + x_i + c[i] x_last = d[i] (row 0:
     * a[0] x_(f-1), row r - 1: c x_(f+r)).
     */
    static void partitionSweeps(int f, int r, double[] a, double[] b, double[] c, double[] d) {
        for (int i = f; i < f + 2; i++) {
            double q = 1.0 / b[i];
            d[i] = d[i] * q;
            a[i] = a[i] * q;
            c[i] = c[i] * q;
        }
        for (int i = f + 2; i < f + r; i++) {
            double q = 1.0 / (b[i] - a[i] * c[i - 1]);
            d[i] = (d[i] - a[i] * d[i - 1]) * q;
            a[i] = -((a[i] * a[i - 1]) * q);
            c[i] = c[i] * q;
        }
        for (int i = f + r - 3; i >= f + 1; i--) {
            d[i] = d[i] - c[i] * d[i + 1];
            a[i] = a[i] - c[i] * a[i + 1];
            c[i] = -(c[i] * c[i + 1]);
        }
        double q = 1.0 / (1.0 - c[f] * a[f + 1]);
        d[f] = (d[f] - c[f] * d[f + 1]) * q;
        a[f] = a[f] * q;
        c[f] = -((c[f] * c[f + 1]) * q);
    }

    /** Batched cyclic reduction, system-major (system j at [j n, (j + 1) n)); x receives the solutions. */
    public static void cyclicReductionBatch(int systems, int n, double[] a, double[] b, double[] c, double[] d,
                                            double[] x) {
        for (int j = 0; j < systems; j++) {
            cyclicReduction(a, b, c, d, x, j * n, n);
        }
    }

    static double[] copy(double[] x) {
        return Arrays.copyOf(x, x.length);
    }
}
