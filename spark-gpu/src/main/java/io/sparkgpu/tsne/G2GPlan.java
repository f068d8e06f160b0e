package io.sparkgpu.tsne;

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
 * <p><b>Passes.</b> m is split into the fewest radices <= {@link #MAX_RADIX} (ties: smallest radix sum); each
 * radix is one Stockham auto-sort pass (no bit reversal) per axis. Twiddles and half-sample shifts are computed
 * once here (Math.cos / Math.sin) and are the only trigonometric values either side uses.
 */
final class G2GPlan {
    /** Largest radix of one pass (a direct R-point DFT in registers on the GPU). */
    static final int MAX_RADIX = 16;
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
    /** roots[2t], roots[2t+1] = cos, -sin of 2 pi t / m, t in [0, m). */
    final double[] roots;
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
        this.roots = new double[2 * m];
        this.shift = new double[2 * m];
        for (int t = 0; t < m; t++) {
            double a = 2 * Math.PI * t / m;
            roots[2 * t] = Math.cos(a);
            roots[2 * t + 1] = -Math.sin(a);
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
        if (r > Integer.MAX_VALUE / 16) {
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

    /** The fewest factors <= MAX_RADIX whose product is m (ties: smallest sum), largest first. */
    static int[] factor(int m) {
        if (m == 1) {
            return new int[0];
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
    static double[] kernelTable(int dim, int n, double h2) {
        double[] kt = new double[pow(n, dim)];
        int ny = dim >= 2 ? n : 1;
        int nz = dim >= 3 ? n : 1;
        int i = 0;
        for (int z = 0; z < nz; z++) {
            for (int y = 0; y < ny; y++) {
                for (int x = 0; x < n; x++) {
                    kt[i++] = kernelValue(h2, (long) x * x + (long) y * y + (long) z * z);
                }
            }
        }
        return kt;
    }

    static double kernelValue(double h2, long d2) {
        double t = 1.0 + h2 * (double) d2;
        return 1.0 / (t * t);
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

    /** Launches of the FFT method on the GPU: per parity pack, passes, multiply, passes, accumulate. */
    int fftLaunches() {
        return parities * (3 + 2 * dim * radices.length);
    }
}
