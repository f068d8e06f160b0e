package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.tsne.TsneGridOptions;
import io.sparkgpu.tsne.optimize.ExactTsne;

/**
 * The point-grid steps of the repulsive term of t-SNE (S2G, G2S + Phi2Force, Z), each on the GPU ({@code tsne}
 * module, section "S2G, G2S, Z"; {@link GridRepulsionGpu}) or on its CPU twin ({@link GridRepulsionCpu}), with the
 * same bits: the dispatcher of phases {@value #S2G_PHASE} and {@value #G2S_PHASE}, and the grid's plan and
 * fixed-point layout. G2G is {@link GridConvolution}; the attractive term is
 * {@link io.sparkgpu.tsne.optimize.AttractiveForces}.
 *
 * <p><b>Repulsive term</b> by polynomial interpolation on a regular grid (Linderman, Rachh, Hoskins, Steinerberger
 * and Kluger, "Fast interpolation-based t-SNE for improved visualization of single-cell RNA-seq data", Nature
 * Methods 16, 2019; Pitsianis, Iliopoulos, Floros and Sun, "Spaceland embedding of sparse stochastic graphs", HPEC
 * 2019). One iteration:
 * <pre>
 *   InterpGrid grid = GridRepulsion.plan(globalMin, globalMax, dim, options);       // identical on every task
 *   long[] q = GridRepulsion.s2g(grid, n, yRows, rows, backend);                  // per slice, exact fixed point
 *   GridRepulsion.addCharges(qTotal, q);                                          // any order of slices
 *   double[] phi = GridConvolution.convolve(grid, GridRepulsion.chargesToDouble(grid, n, qTotal), AUTO, backend);
 *   Repulsion r = GridRepulsion.g2s(grid, n, phi, yRows, rows, backend);          // per slice
 *   GridRepulsion.addZ(zTotal, r);  ...  double z = GridRepulsion.z(zTotal, n);   // Z = sum z_i - n
 *   gradient_i = 4 (exaggeration * attractive_i - r.force_i / z)
 * </pre>
 * S2G spreads each point's charges (1, u_1..u_dim, |u|^2), u = y - c with c the grid centre
 * ({@link #centre}), to the p^dim nodes of its box with Lagrange weights; every contribution is truncated to a
 * 128-bit fixed-point integer (scale 2^shift per charge, {@link #chargeShifts}) and summed exactly, so the grid
 * does not depend on how rows are split into slices nor on thread order. Time O(rows p^dim dim).
 * G2S interpolates the potentials back with the same weights (fixed order), then Phi2Force gives
 * force_i = u_i phi_0 - phi_u (the unnormalised sum_j (y_i - y_j) / (1 + |y_i - y_j|^2)^2) and
 * z_i = (1 + |u_i|^2) phi_0 - 2 u_i . phi_u + phi_|u|^2 (= sum_j 1 / (1 + |y_i - y_j|^2) including j = i), whose
 * slice sum is kept in exact fixed point ({@link #zShift}). Time O(rows p^dim dim).
 *
 * <p><b>Accuracy.</b> The interpolation is the only approximation; its error is set by the box width (GridRepulsionTest,
 * relative error of the whole force vector against {@link ExactTsne}, clustered embeddings): p = 3 with boxes 0.25
 * wide gives about 2e-4, with boxes 1 wide (one per unit of extent) about 1.5e-2 (3e-2 in 3-D); p = 4 with two
 * boxes per unit (0.5 wide) stays below 1e-3 (2.5e-4 to 3e-4) in 1-D, 2-D and 3-D. Z is 10 to 100 times more
 * accurate than the forces. Beyond maxIntervals boxes the boxes widen and the error grows; each z_i is clamped to
 * [0, 2 nTotal] so that even a meaningless grid cannot overflow the fixed-point sum.
 *
 * <p><b>GPU use.</b> Every method takes host arrays and is thread-safe (one stream per call; per-call device buffers
 * pooled by size in {@link io.sparkgpu.cuda.ScratchBuffers}). Host work per call is O(rows dim) plus the grid
 * transfer. {@link #lastGpuKernelMillis} gives the kernel time of the calling thread's last GPU call, for the per-step
 * benchmark split.
 */
public final class GridRepulsion {
    /** Kernel module and a kernel whose loading proves the module runs here. */
    static final String MODULE = "tsne";
    static final String PROBE_KERNEL = "tsne_attr_sell_d2";
    /**
     * Phase names of S2G and G2S + Phi2Force (logs, errors, {@link BackendUsage}, test faults). Each call runs under
     * {@link BackendChooser#run}: with {@code auto}, a GPU failure part-way is recomputed by the CPU twin.
     */
    public static final String S2G_PHASE = "t-SNE S2G";
    public static final String G2S_PHASE = "t-SNE G2S";

    /** Bound on |prod_a w_a| for the Lagrange weights of up to 8 nodes per axis at t in [0, p] (per axis <= 2^5). */
    static final int WEIGHT_BITS_PER_AXIS = 5;

    /** The grid is 1 + MARGIN wider than the extent, so that every point lies strictly inside. */
    static final double MARGIN = 0x1p-8;

    private GridRepulsion() {
    }

    /**
     * The interpolation grid covering [min, max] per axis: boxes per axis = clamp(ceil(extent * intervalsPerUnit),
     * minIntervals, maxIntervals[dim]) with extent the largest max - min over the axes; the same box width on all
     * axes; the grid is centred on the midpoint of [min, max] per axis and is (1 + 2^-8) times the extent wide, so
     * every point lies strictly inside. All points equal (extent 0) gives a grid of width 1. Deterministic: the
     * same inputs give the same grid on every machine (the driver computes it from the exact global min and max).
     */
    public static InterpGrid plan(double[] min, double[] max, int dim, TsneGridOptions options) {
        return plan(min, max, dim, options, TsneKernel.STANDARD);
    }

    /** {@link #plan(double[], double[], int, TsneGridOptions)} with the kernel of {@code dof} ({@link TsneKernel}). */
    public static InterpGrid plan(double[] min, double[] max, int dim, TsneGridOptions options, double dof) {
        checkDim(dim);
        if (min == null || max == null || min.length != dim || max.length != dim) {
            throw new IllegalArgumentException("min and max must have dim = " + dim + " entries");
        }
        if (options == null) {
            throw new IllegalArgumentException("options must not be null");
        }
        double extent = 0;
        for (int a = 0; a < dim; a++) {
            if (!Double.isFinite(min[a]) || !Double.isFinite(max[a]) || min[a] > max[a]) {
                throw new IllegalArgumentException("embedding bounds on axis " + a + " must be finite with min <= max, "
                        + "got [" + min[a] + ", " + max[a] + "] (did the optimisation diverge?)");
            }
            extent = Math.max(extent, max[a] - min[a]);
        }
        if (!Double.isFinite(extent) || extent > 0x1p500) {
            // the optimisation diverged (the extent comes from the iterates): reported like the other divergences
            throw new ArithmeticException("t-SNE diverged: embedding extent " + extent + " is too large for the "
                    + "interpolation grid (lower the learning rate)");
        }
        double ceil = Math.ceil(extent * options.intervalsPerUnit);
        int intervals = (int) Math.max(options.minIntervals, Math.min(options.maxIntervals[dim], ceil));
        double width = extent > 0 ? extent * (1 + MARGIN) : 1.0;
        double boxWidth = width / intervals;
        double[] lo = new double[dim];
        for (int a = 0; a < dim; a++) {
            double mid = min[a] + 0.5 * (max[a] - min[a]);
            lo[a] = mid - 0.5 * (boxWidth * intervals);
        }
        return new InterpGrid(dim, intervals, options.p, lo, boxWidth, dof);
    }

    /** The grid centre c (charges use u = y - c): lo + intervals * boxWidth / 2 per axis. */
    static double[] centre(InterpGrid g) {
        double[] c = new double[3];
        double half = 0.5 * (g.boxWidth * g.intervals);
        for (int a = 0; a < g.dim; a++) {
            c[a] = g.lo[a] + half;
        }
        return c;
    }

    /**
     * Fixed-point shifts of the dim + 2 charges: the bound of any partial sum of charge c at one node is
     * nTotal * 2^(5 dim) * |c|max with |c|max = 1, half the grid width, dim * (half width)^2.
     */
    public static int[] chargeShifts(InterpGrid g, long nTotal) {
        if (nTotal < 1) {
            throw new IllegalArgumentException("nTotal must be >= 1, got " + nTotal);
        }
        double half = 0.5 * (g.boxWidth * g.intervals);
        double base = nTotal * Math.scalb(1.0, WEIGHT_BITS_PER_AXIS * g.dim);
        int[] s = new int[g.charges()];
        s[0] = FixedPoint.shiftFor(base);
        for (int a = 1; a <= g.dim; a++) {
            s[a] = FixedPoint.shiftFor(base * Math.max(half, 1.0));
        }
        s[g.dim + 1] = FixedPoint.shiftFor(base * Math.max(g.dim * half * half, 1.0));
        return s;
    }

    /** Fixed-point shift of the z sums: |z_i| <= 4 nTotal (interpolated), so a slice's sum fits below 4 nTotal^2. */
    public static int zShift(long nTotal) {
        if (nTotal < 1) {
            throw new IllegalArgumentException("nTotal must be >= 1, got " + nTotal);
        }
        return FixedPoint.shiftFor(4.0 * nTotal * (double) nTotal);
    }

    /** Upper clamp of an interpolated z_i: 2 nTotal (the exact value is at most nTotal). */
    static double zMax(long nTotal) {
        return 2.0 * nTotal;
    }

    /**
     * Device time in ms of the kernel of the calling thread's last GPU call of {@link #s2g} or {@link #g2s}
     * (CUDA events around the kernel: transfers excluded; NaN before any GPU call), for benchmarks.
     */
    public static double lastGpuKernelMillis() {
        return GridRepulsionGpu.LAST_KERNEL_MS.get()[0];
    }
    /** Exact fixed-point charges [charge][node] (two longs per value) of the rows yRows (rows x dim). */
    public static long[] s2g(InterpGrid grid, long nTotal, double[] yRows, int rows, Backend backend) {
        return s2g(grid, nTotal, yRows, rows, backend, null);
    }

    /** {@link #s2g(InterpGrid, long, double[], int, Backend)}, recording where it ran (null: not recorded). */
    public static long[] s2g(InterpGrid grid, long nTotal, double[] yRows, int rows, Backend backend,
            BackendUsage usage) {
        checkRows(grid, yRows, rows);
        chargeShifts(grid, nTotal);
        if (rows == 0) {
            return GridRepulsionCpu.s2g(grid, nTotal, yRows, rows);
        }
        BackendChooser.Ran<long[]> r = BackendChooser.run(backend, MODULE, PROBE_KERNEL, S2G_PHASE,
                dev -> GridRepulsionGpu.s2g(dev, grid, nTotal, yRows, rows),
                () -> GridRepulsionCpu.s2g(grid, nTotal, yRows, rows));
        BackendUsage.recordIfAny(usage, S2G_PHASE, r);
        return r.value;
    }

    /** Length of an s2g result: 2 longs per charge per node. */
    public static int chargesLength(InterpGrid grid) {
        long len = 2L * grid.charges() * grid.nodes();
        if (len > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("interpolation grid too large for one array: " + len + " longs");
        }
        return (int) len;
    }

    /** acc += part, exactly (both from {@link #s2g} on the same grid and nTotal). */
    public static void addCharges(long[] acc, long[] part) {
        if (acc == null || part == null || acc.length != part.length || (acc.length & 1) != 0) {
            throw new IllegalArgumentException("charge grids must have the same even length, got "
                    + (acc == null ? "null" : acc.length) + " and " + (part == null ? "null" : part.length));
        }
        for (int t = 0; t < acc.length; t += 2) {
            FixedPoint.addPair(acc, t, part[t], part[t + 1]);
        }
    }

    /** Fixed-point charges to doubles [charge][node], each correctly rounded. */
    public static double[] chargesToDouble(InterpGrid grid, long nTotal, long[] fixed) {
        int nodes = grid.nodes();
        if (fixed == null || fixed.length != chargesLength(grid)) {
            throw new IllegalArgumentException("fixed charges must have " + chargesLength(grid) + " longs, got "
                    + (fixed == null ? "null" : fixed.length));
        }
        int[] shifts = chargeShifts(grid, nTotal);
        double[] out = new double[grid.charges() * nodes];
        for (int ch = 0; ch < grid.charges(); ch++) {
            for (int node = 0; node < nodes; node++) {
                int t = ch * nodes + node;
                out[t] = toDouble(fixed[2 * t], fixed[2 * t + 1], shifts[ch]);
            }
        }
        return out;
    }

    /**
     * (hi * 2^64 + lo) / 2^shift correctly rounded to the nearest double (normal results), without BigInteger: the
     * magnitude is cut to its top 63 bits with the dropped bits ORed into the last one (a sticky bit below the
     * rounding position), which long-to-double then rounds exactly as the full value.
     */
    public static double toDouble(long lo, long hi, int shift) {
        if ((hi == 0 && lo >= 0) || (hi == -1 && lo < 0)) {
            return Math.scalb((double) lo, -shift);
        }
        boolean neg = hi < 0;
        if (neg) { // two's-complement negation of the pair
            hi = ~hi + (lo == 0 ? 1 : 0);
            lo = -lo;
        }
        // magnitude >= 2^63, hi >= 0 (|value| < 2^124 by construction)
        int bits = 128 - Long.numberOfLeadingZeros(hi);
        int drop = bits - 63; // 1..61
        long top = (hi << (64 - drop)) | (lo >>> drop);
        long sticky = (lo << (64 - drop)) != 0 ? 1 : 0;
        double m = (double) (top | sticky);
        double v = Math.scalb(m, drop - shift);
        return neg ? -v : v;
    }

    /** G2S and Phi2Force for the rows yRows: unnormalised repulsive forces and the exact partial sum of z_i. */
    public static Repulsion g2s(InterpGrid grid, long nTotal, double[] potentials, double[] yRows, int rows,
            Backend backend) {
        return g2s(grid, nTotal, potentials, yRows, rows, backend, null);
    }

    /** {@link #g2s(InterpGrid, long, double[], double[], int, Backend)}, recording where it ran (null: not recorded). */
    public static Repulsion g2s(InterpGrid grid, long nTotal, double[] potentials, double[] yRows, int rows,
            Backend backend, BackendUsage usage) {
        return g2s(grid, nTotal, potentials, yRows, rows, false, backend, usage);
    }

    /**
     * {@link #g2s(InterpGrid, long, double[], double[], int, Backend, BackendUsage)} with each row's z_i as well
     * ({@link Repulsion#zRows}): the transform of new points against a fixed reference, whose normalisation is per
     * point. The potentials are those of the reference's charges ({@code nTotal} reference points).
     */
    public static Repulsion g2sRows(InterpGrid grid, long nTotal, double[] potentials, double[] yRows, int rows,
            Backend backend, BackendUsage usage) {
        return g2s(grid, nTotal, potentials, yRows, rows, true, backend, usage);
    }

    private static Repulsion g2s(InterpGrid grid, long nTotal, double[] potentials, double[] yRows, int rows,
            boolean perRow, Backend backend, BackendUsage usage) {
        checkRows(grid, yRows, rows);
        if (potentials == null || potentials.length != (long) grid.charges() * grid.nodes()) {
            throw new IllegalArgumentException("potentials must have charges * nodes = "
                    + ((long) grid.charges() * grid.nodes()) + " values, got "
                    + (potentials == null ? "null" : potentials.length));
        }
        int zs = zShift(nTotal);
        if (rows == 0) {
            return GridRepulsionCpu.g2s(grid, nTotal, zs, potentials, yRows, rows, perRow);
        }
        BackendChooser.Ran<Repulsion> r = BackendChooser.run(backend, MODULE, PROBE_KERNEL, G2S_PHASE,
                dev -> GridRepulsionGpu.g2s(dev, grid, nTotal, zs, potentials, yRows, rows, perRow),
                () -> GridRepulsionCpu.g2s(grid, nTotal, zs, potentials, yRows, rows, perRow));
        BackendUsage.recordIfAny(usage, G2S_PHASE, r);
        return r.value;
    }

    /** zAcc (two longs: lo, hi) += r's exact partial sum of z_i. */
    public static void addZ(long[] zAcc, Repulsion r) {
        if (zAcc == null || zAcc.length != 2) {
            throw new IllegalArgumentException("zAcc must hold two longs (lo, hi)");
        }
        FixedPoint.addPair(zAcc, 0, r.zFixed[0], r.zFixed[1]);
    }

    /** Z = sum_{i != j} 1 / (1 + |y_i - y_j|^2) from the exact total of z_i over all slices (shift {@link #zShift}). */
    public static double z(long[] zTotal, long nTotal) {
        return toDouble(zTotal[0], zTotal[1], zShift(nTotal)) - nTotal;
    }

    /** (s1, s2) pairs of {@link FixedPoint#multipliers} for each shift, flattened. */
    static double[] multipliers(int[] shifts) {
        double[] m = new double[2 * shifts.length];
        for (int t = 0; t < shifts.length; t++) {
            double[] st = FixedPoint.multipliers(shifts[t]);
            m[2 * t] = st[0];
            m[2 * t + 1] = st[1];
        }
        return m;
    }

    public static void checkDim(int dim) {
        if (dim < 1 || dim > 3) {
            throw new IllegalArgumentException("embedding dimension must be 1, 2 or 3, got " + dim);
        }
    }

    private static void checkRows(InterpGrid grid, double[] yRows, int rows) {
        if (grid == null) {
            throw new IllegalArgumentException("grid must not be null");
        }
        if (rows < 0 || yRows == null || yRows.length < (long) rows * grid.dim) {
            throw new IllegalArgumentException("yRows must hold rows * dim = " + ((long) rows * grid.dim)
                    + " coordinates, got " + (yRows == null ? "null" : yRows.length));
        }
        checkFinite(yRows, rows * grid.dim, "yRows");
    }

    public static void checkFinite(double[] v, int len, String what) {
        for (int t = 0; t < len; t++) {
            if (!Double.isFinite(v[t])) {
                throw new IllegalArgumentException(what + "[" + t + "] is not finite: " + v[t]);
            }
        }
    }
}
