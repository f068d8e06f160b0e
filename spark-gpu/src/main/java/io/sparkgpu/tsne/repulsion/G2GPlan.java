package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.tsne.TsneConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The shape-dependent part of the G2G convolution, shared by the CPU twin ({@link G2GCpu}) and the GPU path
 * ({@link G2GGpu}) so both use the same tables and the same pass sequence.
 *
 * <p><b>FFT size.</b> The lattice has n = nodesPerDim nodes per axis. The aperiodic convolution is embedded in
 * a circulant of length 2m per axis, m the smallest 5-smooth integer (2^a 3^b 5^c) with m >= n, so 2m >= 2n - 1
 * and no wrap-around reaches an output node. The length-2m transform is never formed: its even and odd
 * frequencies are two length-m transforms (the second of the input shifted by half a sample, c_j = e^{-i pi j/m}),
 * so d dimensions need 2^d parity combinations of m^d-point transforms and no zero-padded (2m)^d array
 * (SG-t-SNE-Pi: Pitsianis, Iliopoulos, Floros, Sun, JOSS 4(39), 2019; thesis summary sections 2.5-2.6, 10.4).
 *
 * <p><b>Passes.</b> Each radix of m is one Stockham auto-sort pass (no bit reversal) per axis: the twiddles (R - 1
 * complex multiplies per R points), then the R-point DFT. Radices 2..5 have their own DFTs
 * ({@link G2GCpu#smallDft}: radix 2 and 4 by additions and rotations by -i, 3 and 5 by sums and differences of
 * opposite inputs, 4 to 8 real operations per point); larger radices a direct DFT, about R - 1 complex
 * multiply-adds per point. For m <= {@link #FUSED_MAX_M} the GPU runs all passes of an axis in shared memory in
 * one kernel ({@code tsne_g2g_axis}), where arithmetic, not memory traffic, is the cost: m is split into radices
 * 2..5 (all 5s and 3s, the power of two as 4s and at most one 2). Larger m (1-D grids only) keep the fewest
 * radices <= {@link #MAX_RADIX} (ties: smallest radix sum), one global-memory pass each. The CPU twin runs the
 * same radices, so both sides keep the same bits. Twiddles and half-sample shifts are computed once here
 * (Math.cos / Math.sin) and are the only trigonometric values either side uses.
 *
 * <p><b>Precision.</b> The transforms and the spectra's product run in float (the twiddles rounded to float), which
 * halves the bytes each pass moves and the shared memory a line needs; packing (half-sample shift, kernel folding)
 * and accumulating (the shift undone, the parities summed) compute in double, rounding once to float on the way in.
 * Each charge enters scaled by a power of two ({@link #chargeExponents}) so that the two real charges sharing a
 * complex transform have similar sizes. The potentials then agree with the direct sum to about 1e-7 of each
 * charge's own scale (tests allow 2e-6), far below the interpolation's error (issue 7's aim: 1e-3 in the force).
 */
final class G2GPlan {
    /** Largest radix of one pass (a direct R-point DFT in registers on the GPU). */
    static final int MAX_RADIX = 16;
    /** Largest FFT length split into radices 2..5 for the fused shared-memory axis kernel. */
    static final int FUSED_MAX_M = 4096;
    private static final Map<Long, G2GPlan> CACHE = new ConcurrentHashMap<>();

    final int dim;
    /** Lattice nodes per axis. */
    final int n;
    /** FFT length per axis, 5-smooth, >= n. */
    final int m;
    /** m^dim. */
    final int fftNodes;
    /** n^dim. */
    final int gridNodes;
    /** 2^dim parity combinations. */
    final int parities;
    final int[] radices;
    /**
     * roots[2t], roots[2t+1] = cos, -sin of 2 pi t / m, t in [0, m), each rounded to float: the transforms run in
     * float (see the class comment).
     */
    final float[] roots;
    /** shift[2j], shift[2j+1] = cos, -sin of pi j / m, j in [0, m). */
    final double[] shift;

    private G2GPlan(int dim, int n) {
        this.dim = dim;
        this.n = n;
        this.m = fftSize(n);
        this.fftNodes = pow(m, dim);
        this.gridNodes = pow(n, dim);
        this.parities = 1 << dim;
        this.radices = factor(m);
        this.roots = new float[2 * m];
        this.shift = new double[2 * m];
        for (int t = 0; t < m; t++) {
            double a = 2 * Math.PI * t / m;
            roots[2 * t] = (float) Math.cos(a);
            roots[2 * t + 1] = (float) -Math.sin(a);
            double b = Math.PI * t / m;
            shift[2 * t] = Math.cos(b);
            shift[2 * t + 1] = -Math.sin(b);
        }
    }

    static G2GPlan of(int dim, int n) {
        return CACHE.computeIfAbsent(((long) dim << 32) | n, k -> new G2GPlan(dim, n));
    }

    static G2GPlan of(InterpGrid grid) {
        grid.nodes(); // size check
        return of(grid.dim, grid.nodesPerDim());
    }

    static int pow(int b, int e) {
        long r = 1;
        for (int i = 0; i < e; i++) {
            r *= b;
        }
        if (r > TsneConfig.MAX_GRID_NODES) { // TsneConfig.checkGridSize keeps validated settings below it
            throw new IllegalArgumentException("G2G grid too large: " + b + "^" + e + " nodes");
        }
        return (int) r;
    }

    /** Smallest 2^a 3^b 5^c >= n. */
    static int fftSize(int n) {
        for (int s = Math.max(1, n); ; s++) {
            int r = s;
            for (int f : new int[] {2, 3, 5}) {
                while (r % f == 0) {
                    r /= f;
                }
            }
            if (r == 1) {
                return s;
            }
        }
    }

    /**
     * The pass radices of m, largest first: for m <= FUSED_MAX_M the 5s, the 4s, the 3s and at most one 2 of m;
     * above it the fewest factors <= MAX_RADIX (ties: smallest sum).
     */
    static int[] factor(int m) {
        if (m == 1) {
            return new int[0];
        }
        if (m <= FUSED_MAX_M) {
            List<Integer> rs = new ArrayList<>();
            int x = m;
            for (int r : new int[] {5, 4, 3, 2}) {
                while (x % r == 0) {
                    rs.add(r);
                    x /= r;
                }
            }
            if (x != 1) {
                throw new IllegalArgumentException("FFT length " + m + " is not 5-smooth");
            }
            return rs.stream().mapToInt(Integer::intValue).toArray();
        }
        List<Integer> best = factorRec(m, new HashMap<>());
        if (best == null) {
            throw new IllegalArgumentException("FFT length " + m + " is not 5-smooth");
        }
        return best.stream().mapToInt(Integer::intValue).toArray();
    }

    private static List<Integer> factorRec(int x, Map<Integer, List<Integer>> memo) {
        if (x == 1) {
            return new ArrayList<>();
        }
        if (memo.containsKey(x)) {
            return memo.get(x);
        }
        List<Integer> best = null;
        for (int r = Math.min(MAX_RADIX, x); r >= 2; r--) {
            if (x % r != 0) {
                continue;
            }
            List<Integer> rest = factorRec(x / r, memo);
            if (rest == null || (!rest.isEmpty() && rest.get(0) > r)) {
                continue; // keep radices non-increasing: each multiset is considered once
            }
            List<Integer> cand = new ArrayList<>();
            cand.add(r);
            cand.addAll(rest);
            if (best == null || cand.size() < best.size()
                    || (cand.size() == best.size() && sum(cand) < sum(best))) {
                best = cand;
            }
        }
        memo.put(x, best);
        return best;
    }

    private static int sum(List<Integer> l) {
        int s = 0;
        for (int v : l) {
            s += v;
        }
        return s;
    }

    /**
     * K(delta) for delta in [0, n)^dim, laid out like the grid (x fastest): 1 / (t * t), t = 1 + h^2 |delta|^2,
     * each operation rounded once (the GPU computes the same with __dmul_rn / __dadd_rn / __ddiv_rn).
     */
    static double[] kernelTable(int dim, int n, double h2, double dof) {
        double[] kt = new double[pow(n, dim)];
        int ny = dim >= 2 ? n : 1;
        int nz = dim >= 3 ? n : 1;
        int i = 0;
        for (int z = 0; z < nz; z++) {
            for (int y = 0; y < ny; y++) {
                for (int x = 0; x < n; x++) {
                    kt[i++] = kernelValue(h2, (long) x * x + (long) y * y + (long) z * z, dof);
                }
            }
        }
        return kt;
    }

    /** The force kernel (1 + h2 d2 / dof)^-(dof + 1) (g2g_kval; dof == 1: 1 / (t t) as before the option). */
    static double kernelValue(double h2, long d2, double dof) {
        if (dof == 1.0) {
            double t = 1.0 + h2 * (double) d2;
            return 1.0 / (t * t);
        }
        return TsneKernel.pow(TsneKernel.base(h2 * (double) d2, dof), dof + 1.0);
    }

    /**
     * The power of two (its exponent) each charge is multiplied by before the float transforms and divided by after
     * them: -E_c for E_c = max over the charge's values of Math.getExponent(q), so its largest magnitude enters the
     * transforms in [1, 2); 0 for a charge of zeros and subnormals only (E_c = -1023). Two real charges share one
     * complex transform, and a float transform's round-off is relative to the larger of the two, so charges of very
     * different sizes (t-SNE's w, w u and w |u|^2) would lose their smaller partner's digits. Powers of two are exact,
     * so this changes only the round-off of the transforms, never what is computed; the maximum of the exponents does
     * not depend on the order it is taken in (tsne_g2g_exponents takes it with atomicMax on the GPU).
     */
    static int[] chargeExponents(double[] q, int charges, int nodes) {
        int[] e = new int[charges];
        for (int c = 0; c < charges; c++) {
            int top = Double.MIN_EXPONENT - 1;
            for (int i = c * nodes; i < (c + 1) * nodes; i++) {
                top = Math.max(top, Math.getExponent(q[i]));
            }
            e[c] = top == Double.MIN_EXPONENT - 1 ? 0 : -top;
        }
        return e;
    }

    /** Complex arrays that carry the real charges, two per array (q_{2s} + i q_{2s+1}). */
    static int slots(int charges) {
        return (charges + 1) / 2;
    }

    /**
     * Work units of the FFT method on this plan: per parity, (2 * slots + 1) transforms of m^dim points (slots
     * forward and inverse, the kernel forward), each costing the sum of its pass radices per point per axis.
     */
    double fftWork(int charges) {
        long rs = 0;
        for (int r : radices) {
            rs += r;
        }
        return (double) parities * (2.0 * slots(charges) + 1) * fftNodes * Math.max(1, dim * rs);
    }

    /** Whether the GPU may run each axis's passes in one shared-memory kernel (radices 2..5, <= 15 passes). */
    boolean fusable() {
        if (m > FUSED_MAX_M || radices.length > 15) {
            return false;
        }
        for (int r : radices) {
            if (r > 5) {
                return false;
            }
        }
        return true;
    }

    /** The radices for tsne_g2g_axis: 4 bits per pass, first pass in the lowest bits. */
    long radixCode() {
        long code = 0;
        for (int i = 0; i < radices.length; i++) {
            code |= (long) radices[i] << (4 * i);
        }
        return code;
    }

    /**
     * Launches of the FFT method on the GPU per call: per parity, fused, one kernel per axis and direction but one for
     * the last forward and first inverse axis (pack, multiply and accumulate inside); otherwise pack, one pass per
     * radix and axis, multiply, the same, accumulate.
     */
    int fftLaunches() {
        return parities * (fusable() ? 2 * dim - 1 : 3 + 2 * dim * radices.length);
    }
}
