package io.sparkgpu.tsne.repulsion;

import java.util.stream.IntStream;

/**
 * CPU twin of the G2G kernels in tsne.cu (section G2G): the same operations, one rounding each, in the same
 * order per output value, so {@link G2GGpu} returns the same bits (the transforms in Java float arithmetic, the
 * kernels' __fadd_rn / __fmul_rn; pack and accumulate in double, see {@link G2GPlan}). Work is split across threads by output
 * element only; no sum is ever split, so the result does not depend on the thread count.
 */
final class G2GCpu {
    /** Output elements per parallel task. */
    private static final int CHUNK = 1 << 14;

    private G2GCpu() {
    }

    /**
     * Direct summation: phi_c(a) = sum over b ascending of kt[|a - b|] * q_c(b), starting from 0.0.
     * O(charges * nodes^2), exact up to the rounding of each product and sum.
     */
    static double[] direct(G2GPlan plan, double h2, double dof, double[] q, int charges) {
        final int n = plan.n;
        final int dim = plan.dim;
        final int nodes = plan.gridNodes;
        final double[] kt = G2GPlan.kernelTable(dim, n, h2, dof);
        final double[] phi = new double[charges * nodes];
        final int[] cx = new int[nodes];
        final int[] cy = new int[nodes];
        final int[] cz = new int[nodes];
        for (int b = 0; b < nodes; b++) {
            cx[b] = b % n;
            cy[b] = dim >= 2 ? (b / n) % n : 0;
            cz[b] = dim >= 3 ? b / (n * n) : 0;
        }
        IntStream.range(0, nodes).parallel().forEach(a -> {
            double[] acc = new double[charges];
            int ax = cx[a];
            int ay = cy[a];
            int az = cz[a];
            for (int b = 0; b < nodes; b++) {
                double k = kt[Math.abs(ax - cx[b]) + n * (Math.abs(ay - cy[b]) + n * Math.abs(az - cz[b]))];
                for (int c = 0; c < charges; c++) {
                    acc[c] = acc[c] + k * q[c * nodes + b];
                }
            }
            for (int c = 0; c < charges; c++) {
                phi[c * nodes + a] = acc[c];
            }
        });
        return phi;
    }

    /**
     * FFT method without zero-padding (see {@link G2GPlan}); O(2^dim * ceil(charges/2) * m^dim * log m): two real
     * charges share one complex transform. The transforms run in float; charge c enters them times 2^e_c
     * ({@link G2GPlan#chargeExponents}) and leaves them divided by it (exact).
     */
    static double[] fft(G2GPlan plan, double h2, double dof, double[] q, int charges) {
        final int fn = plan.fftNodes;
        final double[] kt = G2GPlan.kernelTable(plan.dim, plan.n, h2, dof);
        final double[] acc = new double[charges * plan.gridNodes];
        final double[] phi = new double[charges * plan.gridNodes];
        final int slots = G2GPlan.slots(charges);
        final int[] exps = G2GPlan.chargeExponents(q, charges, plan.gridNodes);
        float[] a = new float[2 * (slots + 1) * fn];
        float[] b = new float[a.length];
        final double scale = 1.0 / ((double) plan.parities * (double) fn);
        for (int par = 0; par < plan.parities; par++) {
            final int sigma = par;
            final float[] x = a;
            parallel(fn, (from, to) -> {
                double[] tw = new double[2];
                for (long i = from; i < to; i++) {
                    pack(plan, sigma, kt, q, charges, exps, x, i, tw);
                }
            });
            float[][] ab = {a, b};
            transform(plan, ab, slots + 1, false);
            final float[] y = ab[0];
            parallel((long) slots * fn, (from, to) -> {
                for (long i = from; i < to; i++) {
                    multiply(y, slots, fn, i);
                }
            });
            transform(plan, ab, slots, true);
            final float[] z = ab[0];
            final boolean last = par == plan.parities - 1;
            parallel(plan.gridNodes, (from, to) -> {
                double[] tw = new double[2];
                for (long i = from; i < to; i++) {
                    accumulate(plan, sigma, last, scale, z, charges, exps, acc, phi, i, tw);
                }
            });
            a = ab[0];
            b = ab[1];
        }
        return phi;
    }

    /**
     * All passes of the d-dimensional transform of the first {@code arrays} arrays; ab[0] holds the result. The
     * forward transform runs the axes 0..dim-1, the inverse dim-1..0, so that the last forward and the first inverse
     * axis are the same (the GPU runs them, with the multiply between, in one kernel: tsne_g2g_middle).
     */
    static void transform(G2GPlan plan, float[][] ab, int arrays, boolean inverse) {
        for (int t = 0; t < plan.dim; t++) {
            final int axis = inverse ? plan.dim - 1 - t : t;
            final int inner = G2GPlan.pow(plan.m, axis);
            int ns = 1;
            for (int r : plan.radices) {
                final float[] in = ab[0];
                final float[] out = ab[1];
                final int fr = r;
                final int fns = ns;
                final int finner = inner;
                long items = (long) arrays * plan.fftNodes / r;
                parallel(items, (from, to) -> passRange(plan.roots, plan.m, fr, fns, finner, inverse, in, out,
                        from, to));
                ab[0] = out;
                ab[1] = in;
                ns *= r;
            }
        }
    }

    private interface Range {
        void run(long from, long to);
    }

    /** Runs body over [0, items) in chunks of CHUNK on the common pool (items are independent). */
    private static void parallel(long items, Range body) {
        int tasks = (int) ((items + CHUNK - 1) / CHUNK);
        if (tasks <= 1) {
            body.run(0, items);
            return;
        }
        IntStream.range(0, tasks).parallel().forEach(t -> body.run((long) t * CHUNK,
                Math.min(items, (long) (t + 1) * CHUNK)));
    }

    // ---------------------------------------------------------------- per-element bodies (mirrored in tsne.cu)

    /** Half-sample shift of parity sigma at FFT node (jx, jy, jz): product of shift[j_a] over odd axes. */
    static void twiddle(double[] shift, int sigma, int jx, int jy, int jz, double[] out) {
        double re = 1.0;
        double im = 0.0;
        boolean first = true;
        for (int ax = 0; ax < 3; ax++) {
            if ((sigma >> ax & 1) == 0) {
                continue;
            }
            int j = ax == 0 ? jx : ax == 1 ? jy : jz;
            double cr = shift[2 * j];
            double ci = shift[2 * j + 1];
            if (first) {
                re = cr;
                im = ci;
                first = false;
            } else {
                double r2 = re * cr - im * ci;
                double i2 = re * ci + im * cr;
                re = r2;
                im = i2;
            }
        }
        out[0] = re;
        out[1] = im;
    }

    /**
     * Node i of the m^dim lattice for parity sigma: array s < slots gets the shifted complex charge
     * q_{2s} + i q_{2s+1} (zero outside the n^dim grid; q_{2s+1} = 0 past the last charge), each charge times its
     * power of two 2^exps[c] ({@link G2GPlan#chargeExponents}), array {@code slots} the shifted kernel sum_s (sign) K(delta_s)
     * over the 2^dim corners of the 2m circulant that fold onto this node. Computed in double, stored rounded to
     * float.
     */
    static void pack(G2GPlan plan, int sigma, double[] kt, double[] q, int charges, int[] exps, float[] x, long li,
                     double[] tw) {
        int i = (int) li;
        int m = plan.m;
        int n = plan.n;
        int dim = plan.dim;
        int fn = plan.fftNodes;
        int jx = i % m;
        int jy = dim >= 2 ? (i / m) % m : 0;
        int jz = dim >= 3 ? i / (m * m) : 0;
        twiddle(plan.shift, sigma, jx, jy, jz, tw);
        boolean inside = jx < n && jy < n && jz < n;
        int g = inside ? jx + n * (jy + n * jz) : 0;
        int slots = G2GPlan.slots(charges);
        for (int sl = 0; sl < slots; sl++) {
            double re = inside ? Math.scalb(q[2 * sl * plan.gridNodes + g], exps[2 * sl]) : 0.0;
            double im = inside && 2 * sl + 1 < charges
                    ? Math.scalb(q[(2 * sl + 1) * plan.gridNodes + g], exps[2 * sl + 1]) : 0.0;
            x[2 * (sl * fn + i)] = (float) (re * tw[0] - im * tw[1]);
            x[2 * (sl * fn + i) + 1] = (float) (re * tw[1] + im * tw[0]);
        }
        double k = 0.0;
        for (int s = 0; s < plan.parities; s++) {
            int idx = 0;
            int mul = 1;
            boolean negative = false;
            boolean valid = true;
            for (int ax = 0; ax < dim; ax++) {
                int d;
                int jj = ax == 0 ? jx : ax == 1 ? jy : jz;
                if ((s >> ax & 1) == 0) {
                    d = jj;
                } else {
                    d = m - jj;
                    negative ^= (sigma >> ax & 1) == 1;
                }
                if (d > n - 1) {
                    valid = false;
                }
                idx += d * mul;
                mul *= n;
            }
            if (valid) {
                k = negative ? k - kt[idx] : k + kt[idx];
            }
        }
        x[2 * (slots * fn + i)] = (float) (k * tw[0]);
        x[2 * (slots * fn + i) + 1] = (float) (k * tw[1]);
    }

    /**
     * Items [from, to) of one radix-r Stockham pass (see {@link #butterfly}); walks (lo, j, outer) by increments
     * instead of dividing per item, and looks the r-th roots up through a precomputed (t * u) mod r table.
     */
    static void passRange(float[] roots, int m, int r, int ns, int inner, boolean inverse, float[] in,
                          float[] out, long from, long to) {
        int mr = m / r;
        float[] v = new float[4 * r]; // inputs, then smallDft's outputs
        int[] rootIdx = new int[r * r];
        for (int t = 0; t < r; t++) {
            for (int u = 0; u < r; u++) {
                rootIdx[t * r + u] = 2 * (((t * u) % r) * mr);
            }
        }
        long lo = from % inner;
        long rest = from / inner;
        int j = (int) (rest % mr);
        long outer = rest / mr;
        for (long g = from; g < to; g++) {
            butterfly(roots, rootIdx, m, r, ns, inner, inverse, in, out, lo, j, outer, v);
            if (++lo == inner) {
                lo = 0;
                if (++j == mr) {
                    j = 0;
                    outer++;
                }
            }
        }
    }

    /**
     * One butterfly of a radix-r Stockham pass: transform (lo, outer), butterfly j. Loads r points m/r apart,
     * applies the twiddles of sub-transform length ns * r, a direct r-point DFT, and stores with stride ns.
     * The item index of the GPU kernel is g = lo + inner * (j + (m / r) * outer).
     */
    static void butterfly(float[] roots, int[] rootIdx, int m, int r, int ns, int inner, boolean inverse,
                          float[] in, float[] out, long lo, int j, long outer, float[] v) {
        int mr = m / r;
        long base = lo + outer * inner * (long) m;
        int k = j % ns;
        int tstep = m / (ns * r);
        float sign = inverse ? -1.0f : 1.0f;
        for (int t = 0; t < r; t++) {
            int e = (int) (2 * (base + (long) (j + t * mr) * inner));
            v[2 * t] = in[e];
            v[2 * t + 1] = in[e + 1];
        }
        for (int t = 1; t < r; t++) {
            int w = k * t * tstep;
            float wr = roots[2 * w];
            float wi = sign * roots[2 * w + 1];
            float ar = v[2 * t];
            float ai = v[2 * t + 1];
            v[2 * t] = ar * wr - ai * wi;
            v[2 * t + 1] = ar * wi + ai * wr;
        }
        int idxD = (j / ns) * ns * r + k;
        if (r <= 5) {
            smallDft(r, v, inverse);
            for (int u = 0; u < r; u++) {
                int e = (int) (2 * (base + (long) (idxD + u * ns) * inner));
                out[e] = v[2 * r + 2 * u];
                out[e + 1] = v[2 * r + 2 * u + 1];
            }
            return;
        }
        for (int u = 0; u < r; u++) {
            float sr = v[0];
            float si = v[1];
            for (int t = 1; t < r; t++) {
                int w = rootIdx[t * r + u];
                float wr = roots[w];
                float wi = sign * roots[w + 1];
                float ar = v[2 * t];
                float ai = v[2 * t + 1];
                sr = sr + (ar * wr - ai * wi);
                si = si + (ar * wi + ai * wr);
            }
            int e = (int) (2 * (base + (long) (idxD + u * ns) * inner));
            out[e] = sr;
            out[e + 1] = si;
        }
    }

    /**
     * sin(2 pi/3), cos(2 pi/5), cos(4 pi/5), sin(2 pi/5), sin(4 pi/5), rounded to float: G2G_S3 .. G2G_S52 of
     * g2g.cuh, same bits.
     */
    static final float S3 = 0x1.bb67aep-1f;
    static final float C51 = 0x1.3c6ef4p-2f;
    static final float C52 = -0x1.9e377ap-1f;
    static final float S51 = 0x1.e6f0e2p-1f;
    static final float S52 = 0x1.2cf23p-1f;

    /**
     * The R-point DFT (R = 2..5) of the twiddled inputs v[0 .. 2R) (re, im pairs), written to v[2R .. 4R):
     * y_u = sum_t v_t W^(t u), W = e^(-2 pi i / R) (forward) or its conjugate (inverse). Radix 2 and 4 by additions
     * and rotations by -i (no multiplication), radix 3 and 5 by sums and differences of opposite inputs times the
     * constants above. The operations and their order are g2g_small_dft's (include/tsne/g2g.cuh): equal bits.
     */
    static void smallDft(int r, float[] v, boolean inverse) {
        int y = 2 * r;
        switch (r) {
            case 2 -> {
                v[y] = v[0] + v[2];
                v[y + 1] = v[1] + v[3];
                v[y + 2] = v[0] - v[2];
                v[y + 3] = v[1] - v[3];
            }
            case 3 -> {
                float t1r = v[2] + v[4];
                float t1i = v[3] + v[5];
                float t2r = S3 * (v[2] - v[4]);
                float t2i = S3 * (v[3] - v[5]);
                float m1r = v[0] - 0.5f * t1r;
                float m1i = v[1] - 0.5f * t1i;
                v[y] = v[0] + t1r;
                v[y + 1] = v[1] + t1i;
                rot(v, y + 2, m1r, m1i, t2r, t2i, inverse);
                rot(v, y + 4, m1r, m1i, t2r, t2i, !inverse);
            }
            case 4 -> {
                float ar = v[0] + v[4];
                float ai = v[1] + v[5];
                float br = v[0] - v[4];
                float bi = v[1] - v[5];
                float cr = v[2] + v[6];
                float ci = v[3] + v[7];
                float dr = v[2] - v[6];
                float di = v[3] - v[7];
                v[y] = ar + cr;
                v[y + 1] = ai + ci;
                rot(v, y + 2, br, bi, dr, di, inverse);
                v[y + 4] = ar - cr;
                v[y + 5] = ai - ci;
                rot(v, y + 6, br, bi, dr, di, !inverse);
            }
            case 5 -> {
                float t1r = v[2] + v[8];
                float t1i = v[3] + v[9];
                float t2r = v[4] + v[6];
                float t2i = v[5] + v[7];
                float t3r = v[2] - v[8];
                float t3i = v[3] - v[9];
                float t4r = v[4] - v[6];
                float t4i = v[5] - v[7];
                float a1r = (v[0] + C51 * t1r) + C52 * t2r;
                float a1i = (v[1] + C51 * t1i) + C52 * t2i;
                float a2r = (v[0] + C52 * t1r) + C51 * t2r;
                float a2i = (v[1] + C52 * t1i) + C51 * t2i;
                float b1r = S51 * t3r + S52 * t4r;
                float b1i = S51 * t3i + S52 * t4i;
                float b2r = S52 * t3r - S51 * t4r;
                float b2i = S52 * t3i - S51 * t4i;
                v[y] = (v[0] + t1r) + t2r;
                v[y + 1] = (v[1] + t1i) + t2i;
                rot(v, y + 2, a1r, a1i, b1r, b1i, inverse);
                rot(v, y + 4, a2r, a2i, b2r, b2i, inverse);
                rot(v, y + 6, a2r, a2i, b2r, b2i, !inverse);
                rot(v, y + 8, a1r, a1i, b1r, b1i, !inverse);
            }
            default -> throw new IllegalArgumentException("small DFT of radix " + r);
        }
    }

    /** a - i b (forward) or a + i b (inverse) into v[at], v[at + 1] (g2g_add_rot). */
    private static void rot(float[] v, int at, float ar, float ai, float br, float bi, boolean inverse) {
        if (inverse) {
            v[at] = ar - bi;
            v[at + 1] = ai + br;
        } else {
            v[at] = ar + bi;
            v[at + 1] = ai - br;
        }
    }

    /** Element i of the charge spectra times the kernel spectrum (array {@code slots}). */
    static void multiply(float[] y, int slots, int fn, long li) {
        int i = (int) li;
        int kk = 2 * (slots * fn + i % fn);
        float kr = y[kk];
        float ki = y[kk + 1];
        float ar = y[2 * i];
        float ai = y[2 * i + 1];
        y[2 * i] = ar * kr - ai * ki;
        y[2 * i + 1] = ar * ki + ai * kr;
    }

    /**
     * Grid node i: conj(shift) * z of this parity is real for a real charge (each parity class of the length-2m
     * spectrum is closed under negation), so its real part belongs to charge 2s and its imaginary part to charge
     * 2s + 1 of slot s, computed in double from the float z and divided by the charge's power of two (exact). Adds them
     * to acc (the first parity stores them); the last parity writes acc * scale.
     */
    static void accumulate(G2GPlan plan, int sigma, boolean last, double scale, float[] z, int charges, int[] exps,
                           double[] acc, double[] phi, long li, double[] tw) {
        int i = (int) li;
        int n = plan.n;
        int m = plan.m;
        int jx = i % n;
        int jy = plan.dim >= 2 ? (i / n) % n : 0;
        int jz = plan.dim >= 3 ? i / (n * n) : 0;
        int f = jx + m * (jy + m * jz);
        twiddle(plan.shift, sigma, jx, jy, jz, tw);
        for (int c = 0; c < charges; c++) {
            int e = 2 * ((c >> 1) * plan.fftNodes + f);
            double zr = z[e];
            double zi = z[e + 1];
            double term = Math.scalb((c & 1) == 0 ? tw[0] * zr + tw[1] * zi : tw[0] * zi - tw[1] * zr,
                    -exps[c]);
            int o = c * plan.gridNodes + i;
            double s = sigma == 0 ? term : acc[o] + term;
            acc[o] = s;
            if (last) {
                phi[o] = s * scale;
            }
        }
    }
}
