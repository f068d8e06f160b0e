package io.sparkgpu.tsne;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendUsage;

/**
 * Attractive term and the point-grid steps of the repulsive term of t-SNE (S2G, G2S + Phi2Force, Z), each on
 * the GPU ({@code tsne} module, section "attractive, S2G, G2S, Z") or on its CPU twin, with the same bits.
 *
 * <p><b>Attractive term</b> (van der Maaten, "Accelerating t-SNE using tree-based algorithms", JMLR 15, 2014):
 * F_i = sum_j P_ij (y_i - y_j) / (1 + |y_i - y_j|^2) over the stored entries of row i, summed in CSR column order
 * with the operation order of {@link ExactTsne#attractive}, so the result equals it bit for bit. Time O(nnz dim).
 * On the GPU the slice is stored once as sliced ELLPACK (SELL-32-256, rows sorted by length inside windows of 256)
 * and stays resident in the device's {@link io.sparkgpu.cuda.DeviceResidentCache} across iterations; only y goes up
 * per call. The slice is recognised by identity: do not modify a {@link SparseRows} after its first use here.
 *
 * <p><b>Repulsive term</b> by polynomial interpolation on a regular grid (Linderman, Rachh, Hoskins, Steinerberger
 * and Kluger, "Fast interpolation-based t-SNE for improved visualization of single-cell RNA-seq data", Nature
 * Methods 16, 2019; Pitsianis, Iliopoulos, Floros and Sun, "Spaceland embedding of sparse stochastic graphs", HPEC
 * 2019). One iteration:
 * <pre>
 *   InterpGrid grid = TsneForces.plan(globalMin, globalMax, dim, options);       // identical on every task
 *   long[] q = TsneForces.s2g(grid, n, yRows, rows, backend);                  // per slice, exact fixed point
 *   TsneForces.addCharges(qTotal, q);                                          // any order of slices
 *   double[] phi = GridConvolution.convolve(grid, TsneForces.chargesToDouble(grid, n, qTotal), AUTO, backend);
 *   Repulsion r = TsneForces.g2s(grid, n, phi, yRows, rows, backend);          // per slice
 *   TsneForces.addZ(zTotal, r);  ...  double z = TsneForces.z(zTotal, n);      // Z = sum z_i - n
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
 * <p><b>Accuracy.</b> The interpolation is the only approximation; its error is set by the box width (TsneForcesTest,
 * relative error of the whole force vector against {@link ExactTsne}, clustered embeddings): p = 3 with boxes 0.25
 * wide gives about 2e-4, with boxes 1 wide (one per unit of extent) about 1.5e-2 (3e-2 in 3-D); p = 4 with two
 * boxes per unit (0.5 wide) stays below 1e-3 (2.5e-4 to 3e-4) in 1-D, 2-D and 3-D. Z is 10 to 100 times more
 * accurate than the forces. Beyond maxIntervals boxes the boxes widen and the error grows; each z_i is clamped to
 * [0, 2 nTotal] so that even a meaningless grid cannot overflow the fixed-point sum.
 *
 * <p><b>GPU use.</b> Every method takes host arrays and is thread-safe (one stream per call; resident P shared
 * read-only; per-call device buffers pooled by size in {@link io.sparkgpu.cuda.ScratchBuffers}). Host work per call
 * is O(rows dim) plus the grid transfer. {@link #release} frees a slice's resident P; {@link #lastGpuKernelMillis}
 * gives the kernel time of the calling thread's last GPU call, for the per-step benchmark split.
 */
public final class TsneForces {
    /** Kernel module and a kernel whose loading proves the module runs here. */
    static final String MODULE = "tsne";
    static final String PROBE_KERNEL = "tsne_attr_sell_d2";
    /**
     * Phase names of the attractive term, S2G and G2S + Phi2Force (logs, errors, {@link BackendUsage}, test faults).
     * Each call runs under {@link BackendChooser#run}: with {@code auto}, a GPU failure part-way is recomputed by the
     * CPU twin.
     */
    public static final String ATTRACTIVE_PHASE = "t-SNE attractive";
    public static final String S2G_PHASE = "t-SNE S2G";
    public static final String G2S_PHASE = "t-SNE G2S";
    /** Bound on |prod_a w_a| for the Lagrange weights of up to 8 nodes per axis at t in [0, p] (per axis <= 2^5). */
    static final int WEIGHT_BITS_PER_AXIS = 5;
    /** The grid is 1 + MARGIN wider than the extent, so that every point lies strictly inside. */
    static final double MARGIN = 0x1p-8;

    private TsneForces() {
    }

    /**
     * F_i = sum_j P_ij (y_i - y_j) / (1 + |y_i - y_j|^2) for the slice's rows; y holds all n points (n x dim). On the
     * GPU, P stays resident under the identity of {@code p}: keep the same object across iterations (and do not
     * modify it); see {@link #attractive(SparseRows, String, double[], int, Backend)} when slices are deserialised
     * anew each iteration (Spark tasks).
     */
    public static double[] attractive(SparseRows p, double[] y, int dim, Backend backend) {
        return attractive(p, null, y, dim, backend);
    }

    /**
     * As {@link #attractive(SparseRows, double[], int, Backend)}, with P resident on the GPU under
     * {@code residencyKey} (with the slice's row range and nnz) instead of the object's identity, so that equal
     * slices deserialised by later tasks find it. The key must name the content of P uniquely (e.g. fit uid and
     * partition); {@link #release(String)} frees it. A null key means identity.
     */
    public static double[] attractive(SparseRows p, String residencyKey, double[] y, int dim, Backend backend) {
        return attractive(p, residencyKey, y, dim, backend, null);
    }

    /** {@link #attractive(SparseRows, String, double[], int, Backend)}, recording where it ran (null: not recorded). */
    static double[] attractive(SparseRows p, String residencyKey, double[] y, int dim, Backend backend,
            BackendUsage usage) {
        checkDim(dim);
        if (y == null || y.length != (long) p.n * dim) {
            throw new IllegalArgumentException("y must hold n * dim = " + ((long) p.n * dim) + " coordinates, got "
                    + (y == null ? "null" : y.length));
        }
        checkFinite(y, y.length, "y");
        if (p.rows == 0) {
            return attractiveCpu(p, y, dim);
        }
        BackendChooser.Ran<double[]> r = BackendChooser.run(backend, MODULE, PROBE_KERNEL, ATTRACTIVE_PHASE,
                dev -> TsneForcesGpu.attractive(dev, p, residencyKey, y, dim), () -> attractiveCpu(p, y, dim));
        TsneAffinities.record(usage, ATTRACTIVE_PHASE, r);
        return r.value;
    }

    /**
     * Frees the device copies of P made by {@link #attractive} for this slice (they are otherwise kept until the
     * resident cache evicts them), e.g. when a fit ends.
     */
    public static void release(SparseRows p) {
        String key = TsneForcesGpu.residencyKey(p);
        if (key != null) {
            io.sparkgpu.cuda.DeviceResidentCache.forEach(c -> c.evictPrefix(key));
        }
    }

    /** Frees the device copies of every P slice made under {@code residencyKey} (on every device of this JVM). */
    public static void release(String residencyKey) {
        io.sparkgpu.cuda.DeviceResidentCache.forEach(c -> c.evictPrefix("tsne-P:" + residencyKey + ":"));
    }

    /**
     * Device time in ms of the kernel of the calling thread's last GPU call of {@link #attractive}, {@link #s2g} or
     * {@link #g2s} (CUDA events around the kernel: transfers excluded; NaN before any GPU call), for benchmarks.
     */
    public static double lastGpuKernelMillis() {
        return TsneForcesGpu.LAST_KERNEL_MS.get()[0];
    }

    /**
     * CPU twin of the attractive kernel: the attractive term has no approximation, so the twin is the exact
     * reference itself, {@link ExactTsne#attractive}, whose operation order (per row in CSR order: differences,
     * d2 += diff^2, pw = p / (1 + d2), f += pw diff) the kernel repeats with explicitly rounded operations.
     */
    static double[] attractiveCpu(SparseRows p, double[] y, int dim) {
        return ExactTsne.attractive(p, y, dim);
    }

    /**
     * The interpolation grid covering [min, max] per axis: boxes per axis = clamp(ceil(extent * intervalsPerUnit),
     * minIntervals, maxIntervals[dim]) with extent the largest max - min over the axes; the same box width on all
     * axes; the grid is centred on the midpoint of [min, max] per axis and is (1 + 2^-8) times the extent wide, so
     * every point lies strictly inside. All points equal (extent 0) gives a grid of width 1. Deterministic: the
     * same inputs give the same grid on every machine (the driver computes it from the exact global min and max).
     */
    public static InterpGrid plan(double[] min, double[] max, int dim, TsneGridOptions options) {
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
            throw new IllegalArgumentException("embedding extent " + extent + " is too large for the interpolation grid");
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
        return new InterpGrid(dim, intervals, options.p, lo, boxWidth);
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
    static int[] chargeShifts(InterpGrid g, long nTotal) {
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

    /** Exact fixed-point charges [charge][node] (two longs per value) of the rows yRows (rows x dim). */
    public static long[] s2g(InterpGrid grid, long nTotal, double[] yRows, int rows, Backend backend) {
        return s2g(grid, nTotal, yRows, rows, backend, null);
    }

    /** {@link #s2g(InterpGrid, long, double[], int, Backend)}, recording where it ran (null: not recorded). */
    static long[] s2g(InterpGrid grid, long nTotal, double[] yRows, int rows, Backend backend, BackendUsage usage) {
        checkRows(grid, yRows, rows);
        chargeShifts(grid, nTotal);
        if (rows == 0) {
            return s2gCpu(grid, nTotal, yRows, rows);
        }
        BackendChooser.Ran<long[]> r = BackendChooser.run(backend, MODULE, PROBE_KERNEL, S2G_PHASE,
                dev -> TsneForcesGpu.s2g(dev, grid, nTotal, yRows, rows), () -> s2gCpu(grid, nTotal, yRows, rows));
        TsneAffinities.record(usage, S2G_PHASE, r);
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

    /** CPU twin of tsne_s2g_d{1,2,3}. */
    static long[] s2gCpu(InterpGrid g, long nTotal, double[] y, int rows) {
        final int dim = g.dim;
        final int nodes = g.nodes();
        final int charges = g.charges();
        long[] acc = new long[chargesLength(g)];
        double[] mult = multipliers(chargeShifts(g, nTotal));
        double[] c = centre(g);
        Stencil st = new Stencil(g);
        double[] q = new double[5];
        for (int i = 0; i < rows; i++) {
            st.locate(y, i * dim);
            double sq = 0;
            for (int a = 0; a < dim; a++) {
                double u = y[i * dim + a] - c[a];
                q[1 + a] = u;
                sq += u * u;
            }
            q[dim + 1] = sq;
            for (int k = 0; k < st.count; k++) {
                double w = st.weight[k];
                int node = st.node[k];
                FixedPoint.add(acc, 2 * node, w, mult[0], mult[1]);
                for (int ch = 1; ch < charges; ch++) {
                    FixedPoint.add(acc, 2 * (ch * nodes + node), w * q[ch], mult[2 * ch], mult[2 * ch + 1]);
                }
            }
        }
        return acc;
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
    static double toDouble(long lo, long hi, int shift) {
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
    static Repulsion g2s(InterpGrid grid, long nTotal, double[] potentials, double[] yRows, int rows,
            Backend backend, BackendUsage usage) {
        checkRows(grid, yRows, rows);
        if (potentials == null || potentials.length != (long) grid.charges() * grid.nodes()) {
            throw new IllegalArgumentException("potentials must have charges * nodes = "
                    + ((long) grid.charges() * grid.nodes()) + " values, got "
                    + (potentials == null ? "null" : potentials.length));
        }
        int zs = zShift(nTotal);
        if (rows == 0) {
            return g2sCpu(grid, nTotal, zs, potentials, yRows, rows);
        }
        BackendChooser.Ran<Repulsion> r = BackendChooser.run(backend, MODULE, PROBE_KERNEL, G2S_PHASE,
                dev -> TsneForcesGpu.g2s(dev, grid, nTotal, zs, potentials, yRows, rows),
                () -> g2sCpu(grid, nTotal, zs, potentials, yRows, rows));
        TsneAffinities.record(usage, G2S_PHASE, r);
        return r.value;
    }

    /** CPU twin of tsne_g2s_d{1,2,3}. */
    static Repulsion g2sCpu(InterpGrid g, long nTotal, int zShift, double[] phi, double[] y, int rows) {
        final int dim = g.dim;
        final int nodes = g.nodes();
        final int charges = g.charges();
        double[] force = new double[rows * dim];
        long[] z = new long[2];
        double[] zm = FixedPoint.multipliers(zShift);
        double zMax = zMax(nTotal);
        double[] c = centre(g);
        Stencil st = new Stencil(g);
        double[] s = new double[5];
        double[] u = new double[3];
        for (int i = 0; i < rows; i++) {
            st.locate(y, i * dim);
            java.util.Arrays.fill(s, 0.0);
            for (int k = 0; k < st.count; k++) {
                double w = st.weight[k];
                int node = st.node[k];
                for (int ch = 0; ch < charges; ch++) {
                    s[ch] += w * phi[ch * nodes + node];
                }
            }
            double sq = 0;
            double dot = 0;
            for (int a = 0; a < dim; a++) {
                u[a] = y[i * dim + a] - c[a];
                sq += u[a] * u[a];
                dot += u[a] * s[1 + a];
                force[i * dim + a] = u[a] * s[0] - s[1 + a];
            }
            double zi = ((1.0 + sq) * s[0] - 2.0 * dot) + s[dim + 1];
            zi = zi > zMax ? zMax : zi < 0 ? 0 : zi; // true z_i lies in [1, n]: bounds interpolation garbage
            FixedPoint.add(z, 0, zi, zm[0], zm[1]);
        }
        return new Repulsion(force, z, zShift);
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

    static void checkDim(int dim) {
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

    static void checkFinite(double[] v, int len, String what) {
        for (int t = 0; t < len; t++) {
            if (!Double.isFinite(v[t])) {
                throw new IllegalArgumentException(what + "[" + t + "] is not finite: " + v[t]);
            }
        }
    }

    /**
     * The p^dim nodes of a point's box and their Lagrange weights, in the fixed order (x fastest) shared with the
     * kernels. Per axis: s = (y - lo) / h, cell = clamp(floor(s), 0, nodesPerDim - 1), box b = cell / p,
     * t = s - b p, and w_k = prod_{m != k} (t - (m + 1/2)) / prod_{m != k} (k - m) (nodes at t = k + 1/2).
     */
    static final class Stencil {
        final int dim;
        final int p;
        final int npd;
        final double h;
        final double[] lo;
        final double[] denom;
        final double[][] w = new double[3][8];
        final int[] base = new int[3];
        final int count;
        final double[] weight;
        final int[] node;

        Stencil(InterpGrid g) {
            dim = g.dim;
            p = g.p;
            npd = g.nodesPerDim();
            h = g.spacing();
            lo = g.lo.clone();
            denom = denominators(p);
            int cnt = 1;
            for (int a = 0; a < dim; a++) {
                cnt *= p;
            }
            count = cnt;
            weight = new double[cnt];
            node = new int[cnt];
        }

        static double[] denominators(int p) {
            double[] d = new double[p];
            for (int k = 0; k < p; k++) {
                double v = 1;
                for (int m = 0; m < p; m++) {
                    if (m != k) {
                        v *= k - m;
                    }
                }
                d[k] = v;
            }
            return d;
        }

        void locate(double[] y, int at) {
            for (int a = 0; a < dim; a++) {
                double s = (y[at + a] - lo[a]) / h;
                double f = Math.floor(s);
                int cell = f < 0 ? 0 : f > npd - 1 ? npd - 1 : (int) f;
                int b = cell / p;
                base[a] = b * p;
                double t = s - (double) (b * p);
                t = t < 0 ? 0 : t > p ? p : t; // only points outside the grid (caller error) are clamped
                for (int k = 0; k < p; k++) {
                    double num = 1;
                    for (int m = 0; m < p; m++) {
                        if (m != k) {
                            num *= t - (m + 0.5);
                        }
                    }
                    w[a][k] = num / denom[k];
                }
            }
            int t = 0;
            if (dim == 1) {
                for (int k0 = 0; k0 < p; k0++, t++) {
                    weight[t] = w[0][k0];
                    node[t] = base[0] + k0;
                }
            } else if (dim == 2) {
                for (int k1 = 0; k1 < p; k1++) {
                    for (int k0 = 0; k0 < p; k0++, t++) {
                        weight[t] = w[0][k0] * w[1][k1];
                        node[t] = base[0] + k0 + npd * (base[1] + k1);
                    }
                }
            } else {
                for (int k2 = 0; k2 < p; k2++) {
                    for (int k1 = 0; k1 < p; k1++) {
                        for (int k0 = 0; k0 < p; k0++, t++) {
                            weight[t] = (w[0][k0] * w[1][k1]) * w[2][k2];
                            node[t] = base[0] + k0 + npd * ((base[1] + k1) + npd * (base[2] + k2));
                        }
                    }
                }
            }
        }
    }
}
