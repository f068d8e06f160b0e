package io.sparkgpu.pde;

import java.io.Serializable;

/**
 * The 2-D FitzHugh-Nagumo system v_t = D (v_xx + v_yy) + f(v) - w, w_t = eps (v - gamma w) with no-flux edges
 * ({@link Fhn2dConfig}), by Peaceman-Rachford ADI: the CPU twin of the {@code pde_adi_*} kernels ({@link Fhn2dGpu}).
 *
 * <p><b>Scheme.</b> With rx = (dt / 2) D / dx^2, ry likewise, δxx and δyy the 3-point second differences (the no-flux
 * edge through a mirrored ghost node: second order in space) and R(v, w) = f(v) - w the reaction, split explicitly:
 * <pre>
 *   (1 - rx δxx) v* = (1 + ry δyy) v^k + (dt/2) R(v^k, w^k)         rows: cellsY tridiagonal systems of cellsX
 *   (1 - ry δyy) v' = (1 + rx δxx) v* + (dt/2) R(v*, w^k)           columns: cellsX systems of cellsY
 *   w' = (w^k + dt eps v') / (1 + dt eps gamma)                     (linear, implicit: stable for any dt)
 * </pre>
 * The diffusion part is the unconditionally stable Peaceman-Rachford splitting (second order in space and time for
 * pure diffusion); the explicit reaction makes the whole first order in time and keeps every solve linear with
 * constant coefficients, so each half step is one batched Thomas solve of the existing kernel
 * ({@code pde_thomas_batch}, twin {@link FhnCpu#thomasInterleaved}) and no Newton iteration is needed. The reaction's
 * stiffness bounds dt (about dt |f'| < 1, with |f'| <= 1 + a + a^2 on [0, 1]), not the grid.
 *
 * <p><b>Layout.</b> v and w are row-major (node (i, j) at j cellsX + i). The row solve runs on the transposed layout
 * (i cellsY + j: element i of row system j interleaved, coalesced on the GPU), which the first right-hand side writes
 * and the second reads; the column solve's layout is the row-major one itself.
 */
public final class Fhn2d {
    private Fhn2d() {
    }

    /** Everything one simulation derives from its config and parameters, shared by both twins. */
    static final class Setup {
        final Fhn2dConfig c;
        final FhnParams p;
        final int nx;
        final int ny;
        final long steps;
        final double dt2;
        final double rx;
        final double ry;
        /** dt eps and 1 + dt eps gamma of the w update. */
        final double dtEps;
        final double wDen;
        /** Row systems (S = ny, n = nx) and column systems (S = nx, n = ny): sub, diagonal, super (pristine). */
        final double[] ax;
        final double[] bx;
        final double[] cx;
        final double[] ay;
        final double[] by;
        final double[] cy;
        final double[] v0;
        final double[] w0;

        Setup(Fhn2dConfig c, FhnParams p) {
            this.c = c;
            this.p = p;
            nx = c.cellsX;
            ny = c.cellsY;
            steps = FhnConfig.steps(c.tEnd, c.dt);
            dt2 = 0.5 * c.dt;
            double dx = c.dx();
            double dy = c.dy();
            rx = (dt2 * p.diffusion) / (dx * dx);
            ry = (dt2 * p.diffusion) / (dy * dy);
            dtEps = c.dt * p.eps;
            wDen = 1.0 + dtEps * p.gamma;
            int len = nx * ny;
            ax = new double[len];
            bx = new double[len];
            cx = new double[len];
            ay = new double[len];
            by = new double[len];
            cy = new double[len];
            coefficients(ny, nx, rx, ax, bx, cx);
            coefficients(nx, ny, ry, ay, by, cy);
            v0 = new double[len];
            w0 = new double[len];
            initial(c, v0, w0);
        }
    }

    /** 1 - r δ with mirrored ends on the interleaved layout (element i of system j at i S + j). */
    static void coefficients(int S, int n, double r, double[] a, double[] b, double[] cc) {
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < S; j++) {
                int e = i * S + j;
                a[e] = i == 0 ? 0.0 : i == n - 1 ? -2.0 * r : -r;
                cc[e] = i == n - 1 ? 0.0 : i == 0 ? -2.0 * r : -r;
                b[e] = 1.0 + 2.0 * r;
            }
        }
    }

    static void initial(Fhn2dConfig c, double[] v, double[] w) {
        int nx = c.cellsX;
        int ny = c.cellsY;
        double dx = c.dx();
        double dy = c.dy();
        for (int j = 0; j < ny; j++) {
            for (int i = 0; i < nx; i++) {
                double x = i * dx;
                double y = j * dy;
                int k = j * nx + i;
                switch (c.initial) {
                    case Fhn2dConfig.PLANE: {
                        double r = (x - c.pulseCenter * c.lengthX) / c.pulseWidth;
                        v[k] = c.pulseAmplitude * Math.exp(-(r * r));
                        break;
                    }
                    case Fhn2dConfig.GAUSSIAN: {
                        double rx = (x - c.pulseCenter * c.lengthX) / c.pulseWidth;
                        double ry = (y - c.pulseCenter * c.lengthY) / c.pulseWidth;
                        v[k] = c.pulseAmplitude * Math.exp(-(rx * rx + ry * ry));
                        break;
                    }
                    default: {
                        double off = x - 0.5 * c.lengthX;
                        boolean lower = y <= 0.5 * c.lengthY;
                        v[k] = lower && Math.abs(off) <= c.pulseWidth ? 1.0 : 0.0;
                        w[k] = lower && off < -c.pulseWidth && off >= -2 * c.pulseWidth ? Fhn2dConfig.SPIRAL_W : 0.0;
                    }
                }
            }
        }
    }

    /** The outcome of one 2-D simulation. */
    public static final class Result implements Serializable {
        private static final long serialVersionUID = 1L;
        public final int cellsX;
        public final int cellsY;
        /** Final v and w, row-major (node (i, j) at j cellsX + i). */
        public final double[] v;
        public final double[] w;
        /** v at every recorded step, frame-major (frames x cellsY x cellsX), or null. */
        public final double[] field;
        public final int frames;
        public final long steps;
        public final double finalTime;

        Result(Setup s, double[] v, double[] w, double[] field, int frames) {
            this.cellsX = s.nx;
            this.cellsY = s.ny;
            this.v = v;
            this.w = w;
            this.field = field;
            this.frames = frames;
            this.steps = s.steps;
            this.finalTime = s.steps * s.c.dt;
        }

        /** v at node (i, j). */
        public double v(int i, int j) {
            return v[j * cellsX + i];
        }
    }

    static int frames(Setup s) {
        return s.c.recordEvery > 0 ? (int) (1 + s.steps / s.c.recordEvery) : 0;
    }

    /** R at a node in the kernels' order: f(v) - w. */
    static double reaction(double v, double a, double w) {
        return FhnCpu.reaction(v, a) - w;
    }

    /**
     * The row solve's right-hand side of node (i, j), written transposed (at i ny + j): (v + ry δyy v) + (dt/2) R.
     */
    static void rhsRows(Setup s, double[] v, double[] w, double[] dT) {
        int nx = s.nx;
        int ny = s.ny;
        for (int j = 0; j < ny; j++) {
            int jd = j == 0 ? 1 : j - 1;
            int ju = j == ny - 1 ? ny - 2 : j + 1;
            for (int i = 0; i < nx; i++) {
                int k = j * nx + i;
                double vi = v[k];
                double lap = (v[jd * nx + i] + v[ju * nx + i]) - (vi + vi);
                dT[i * ny + j] = (vi + s.ry * lap) + s.dt2 * reaction(vi, s.p.a, w[k]);
            }
        }
    }

    /**
     * The column solve's right-hand side of node (i, j), from v* on the transposed layout, written row-major:
     * (v* + rx δxx v*) + (dt/2) R(v*, w).
     */
    static void rhsColumns(Setup s, double[] vsT, double[] w, double[] d) {
        int nx = s.nx;
        int ny = s.ny;
        for (int j = 0; j < ny; j++) {
            for (int i = 0; i < nx; i++) {
                int il = i == 0 ? 1 : i - 1;
                int ir = i == nx - 1 ? nx - 2 : i + 1;
                double vi = vsT[i * ny + j];
                double lap = (vsT[il * ny + j] + vsT[ir * ny + j]) - (vi + vi);
                int k = j * nx + i;
                d[k] = (vi + s.rx * lap) + s.dt2 * reaction(vi, s.p.a, w[k]);
            }
        }
    }

    static void updateW(Setup s, double[] v, double[] w) {
        for (int k = 0; k < w.length; k++) {
            w[k] = (w[k] + s.dtEps * v[k]) / s.wDen;
        }
    }

    /** One simulation on the CPU. */
    public static Result cpu(Fhn2dConfig config, FhnParams p) {
        Setup s = new Setup(config, p);
        int len = s.nx * s.ny;
        double[] v = s.v0.clone();
        double[] w = s.w0.clone();
        double[] dT = new double[len];
        double[] c = new double[len];
        int frames = frames(s);
        double[] field = frames > 0 ? new double[frames * len] : null;
        if (field != null) {
            System.arraycopy(v, 0, field, 0, len);
        }
        for (long k = 0; k < s.steps; k++) {
            rhsRows(s, v, w, dT);
            System.arraycopy(s.cx, 0, c, 0, len);
            FhnCpu.thomasInterleaved(s.ny, s.nx, s.ax, s.bx, c, dT);
            rhsColumns(s, dT, w, v);
            System.arraycopy(s.cy, 0, c, 0, len);
            FhnCpu.thomasInterleaved(s.nx, s.ny, s.ay, s.by, c, v);
            updateW(s, v, w);
            if (field != null && (k + 1) % s.c.recordEvery == 0) {
                System.arraycopy(v, 0, field, (int) ((k + 1) / s.c.recordEvery) * len, len);
            }
        }
        return new Result(s, v, w, field, frames);
    }
}
