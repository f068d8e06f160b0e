package io.sparkgpu.pde;

import java.util.Arrays;

/**
 * The adaptive explicit scheme (CPU only): FTCS on a subset of the nodes of the underlying uniform grid, rebuilt
 * after every step where the solution changes. The second derivative on the non-uniform subset is the three-point
 * Lagrange formula v_xx = 2 ((v_r - v) / h_r - (v - v_l) / h_l) / (h_l + h_r) (first order on a non-uniform grid,
 * second on a uniform stretch; the Neumann end mirrors its neighbour). The grid after each step holds:
 * <ul>
 *   <li>a coarse grid: every {@code coarseStride}-th node, both ends and the two probes;</li>
 *   <li>every second node around an interval whose slope |v_x| exceeds {@code gradientTol} (a wave);</li>
 *   <li>every node around an interval whose end changed faster than {@code changeTol} per unit time, and within
 *       {@code inflectionRadius} nodes of a sign change of v_xx on a steep interval (a front's inflection point).</li>
 * </ul>
 * Each refinement extends one coarse stride to both sides, so a front never outruns its fine grid in one step.
 * Values on nodes new to the grid are interpolated linearly from the old one; nodes kept keep their values. The time
 * step is held to the explicit limit of the underlying spacing.
 */
final class FhnAdaptive {
    private FhnAdaptive() {
    }

    static FhnResult run(FhnSetup s, FhnParams p) {
        FhnConfig cfg = s.config;
        FhnSetup.checkExplicitStable(s, p, null);
        int big = s.n;
        double dx = s.dx;
        double dt = s.dt;
        boolean neumann = s.bc == FhnSetup.BC_NEUMANN;
        // active grid: sorted underlying indices, with values
        int[] idx = initialGrid(s);
        int m = idx.length;
        double[] v = new double[m];
        double[] w = new double[m];
        for (int j = 0; j < m; j++) {
            v[j] = s.v0[idx[j]];
        }
        FhnCpu.Observer obs = new FhnCpu.Observer(s, s.v0);
        int frames = FhnCpu.frames(s);
        double[] field = frames > 0 ? new double[frames * big] : null;
        if (field != null) {
            System.arraycopy(s.v0, 0, field, 0, big);
        }
        double nodeSteps = 0;
        double[] vn = new double[m];
        double[] wn = new double[m];
        double[] vxx = new double[m];
        boolean[] mark = new boolean[big];
        for (long k = 0; k < s.steps; k++) {
            double amp = p.current * s.signal(k);
            if (vn.length < m) {
                vn = new double[m];
                wn = new double[m];
                vxx = new double[m];
            }
            for (int j = 0; j < m; j++) {
                double vi = v[j];
                double wi = w[j];
                wn[j] = wi + dt * (p.eps * (vi - p.gamma * wi));
                double lap;
                if (j == 0 || j == m - 1) {
                    int nb = j == 0 ? 1 : m - 2;
                    double h = Math.abs(idx[nb] - idx[j]) * dx;
                    lap = 2.0 * (v[nb] - vi) / (h * h);
                } else {
                    double hl = (idx[j] - idx[j - 1]) * dx;
                    double hr = (idx[j + 1] - idx[j]) * dx;
                    lap = 2.0 * ((v[j + 1] - vi) / hr - (vi - v[j - 1]) / hl) / (hl + hr);
                }
                vxx[j] = lap;
                if (!neumann && (j == 0 || j == m - 1)) {
                    vn[j] = vi;
                } else {
                    vn[j] = vi + dt * ((((p.diffusion * lap) + FhnCpu.reaction(vi, p.a)) - wi)
                            + amp * s.profile[idx[j]]);
                }
            }
            nodeSteps += m;
            double oldNear = v[find(idx, m, s.probeNear)];
            double oldFar = v[find(idx, m, s.probeFar)];
            obs.step(k, oldNear, vn[find(idx, m, s.probeNear)], oldFar, vn[find(idx, m, s.probeFar)]);
            for (int j = 0; j < m; j++) {
                obs.max(vn[j]);
            }
            // rebuild the grid from the new values
            Arrays.fill(mark, false);
            markCoarse(s, mark);
            int stride = cfg.coarseStride;
            for (int j = 0; j + 1 < m; j++) {
                double h = (idx[j + 1] - idx[j]) * dx;
                double slope = Math.abs(vn[j + 1] - vn[j]) / h;
                double change = Math.max(Math.abs(vn[j] - v[j]), Math.abs(vn[j + 1] - v[j + 1])) / dt;
                boolean steep = slope > cfg.gradientTol;
                if (change > cfg.changeTol) {
                    markRange(mark, idx[j] - stride, idx[j + 1] + stride, 1);
                } else if (steep) {
                    markRange(mark, idx[j] - stride, idx[j + 1] + stride, 2);
                }
                if (steep && (vxx[j] < 0) != (vxx[j + 1] < 0)) {
                    markRange(mark, idx[j] - cfg.inflectionRadius, idx[j + 1] + cfg.inflectionRadius, 1);
                }
            }
            int[] nidx = marked(mark);
            double[] nv = interpolate(idx, m, vn, nidx);
            double[] nw = interpolate(idx, m, wn, nidx);
            idx = nidx;
            m = nidx.length;
            v = nv;
            w = nw;
            int every = cfg.recordEvery;
            if (field != null && (k + 1) % every == 0) {
                double[] full = interpolate(idx, m, v, all(big));
                System.arraycopy(full, 0, field, (int) ((k + 1) / every) * big, big);
            }
        }
        int[] full = all(big);
        double mean = s.steps == 0 ? m : nodeSteps / s.steps;
        return obs.result(interpolate(idx, m, v, full), interpolate(idx, m, w, full), field, frames, 0, 0, mean);
    }

    private static int[] initialGrid(FhnSetup s) {
        boolean[] mark = new boolean[s.n];
        markCoarse(s, mark);
        // refine wherever the initial state is not flat
        for (int i = 0; i + 1 < s.n; i++) {
            if (s.v0[i] != s.v0[i + 1] || s.profile[i] > 1e-12) {
                markRange(mark, i - s.config.coarseStride, i + 1 + s.config.coarseStride, 1);
            }
        }
        return marked(mark);
    }

    private static void markCoarse(FhnSetup s, boolean[] mark) {
        for (int i = 0; i < s.n; i += s.config.coarseStride) {
            mark[i] = true;
        }
        mark[0] = true;
        mark[s.n - 1] = true;
        mark[s.probeNear] = true;
        mark[s.probeFar] = true;
    }

    private static void markRange(boolean[] mark, int from, int to, int stride) {
        int lo = Math.max(0, from);
        int hi = Math.min(mark.length - 1, to);
        for (int i = lo; i <= hi; i++) {
            if (i % stride == 0) {
                mark[i] = true;
            }
        }
    }

    private static int[] marked(boolean[] mark) {
        int c = 0;
        for (boolean b : mark) {
            if (b) {
                c++;
            }
        }
        int[] out = new int[c];
        c = 0;
        for (int i = 0; i < mark.length; i++) {
            if (mark[i]) {
                out[c++] = i;
            }
        }
        return out;
    }

    private static int[] all(int n) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = i;
        }
        return out;
    }

    private static int find(int[] idx, int m, int node) {
        int j = Arrays.binarySearch(idx, 0, m, node);
        if (j < 0) {
            throw new IllegalStateException("probe node " + node + " not on the adaptive grid");
        }
        return j;
    }

    /** Values on the sorted nodes {@code to}: kept where the node is in {@code from}, linear in between. */
    static double[] interpolate(int[] from, int m, double[] val, int[] to) {
        double[] out = new double[to.length];
        int j = 0;
        for (int q = 0; q < to.length; q++) {
            int t = to[q];
            while (j + 1 < m && from[j + 1] <= t) {
                j++;
            }
            if (from[j] == t || j + 1 >= m) {
                out[q] = val[j];
            } else {
                double f = (double) (t - from[j]) / (from[j + 1] - from[j]);
                out[q] = val[j] + f * (val[j + 1] - val[j]);
            }
        }
        return out;
    }
}
