package io.sparkgpu.tsne.optimize;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneGridOptions;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.repulsion.ExactRepulsion;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import io.sparkgpu.tsne.repulsion.Repulsion;
import java.util.Arrays;

/**
 * Single-device forces: P (one slice of all n rows) and Y in this process; the attractive term, S2G, G2G and G2S (or,
 * when the fit's rule chose it, the exact repulsion: {@link TsneConfig#exactRepulsion}) run on {@code backend} (the
 * GPU kernels or their CPU twins). Per iteration O(nnz(P) dim + n p^dim + G log G) for a grid of G nodes, or
 * O(nnz(P) dim + n^2 dim) exact. The static helpers are shared with {@link SparkGradientSource}, which runs the same calls per row slice,
 * so that both modes give the same bits.
 */
final class LocalGradientSource implements GradientSource {
    private final SparseRows p;
    private final int dim;
    private final TsneGridOptions gridOptions;
    private final GridConvolution.Method method;
    private final Backend backend;
    private final boolean exact;
    /** Degrees of freedom of the kernel ({@link io.sparkgpu.tsne.repulsion.TsneKernel}). */
    private final double dof;

    /** The interpolated repulsion. */
    LocalGradientSource(SparseRows p, int dim, TsneGridOptions gridOptions, GridConvolution.Method method,
            Backend backend) {
        this(p, dim, gridOptions, method, backend, false);
    }

    /** The repulsion of {@code cfg}'s rule for P's n points ({@link TsneConfig#exactRepulsion}). */
    LocalGradientSource(SparseRows p, TsneConfig cfg, Backend backend) {
        this(p, cfg.dimension, cfg.grid, cfg.convolution, backend, cfg.exactRepulsion(p.n), cfg.dof);
    }

    /** {@code exact}: the exact O(n^2) repulsion, else the interpolated one. */
    LocalGradientSource(SparseRows p, int dim, TsneGridOptions gridOptions, GridConvolution.Method method,
            Backend backend, boolean exact) {
        this(p, dim, gridOptions, method, backend, exact, io.sparkgpu.tsne.repulsion.TsneKernel.STANDARD);
    }

    /** {@code exact}: the exact O(n^2) repulsion, else the interpolated one; kernel of {@code dof}. */
    LocalGradientSource(SparseRows p, int dim, TsneGridOptions gridOptions, GridConvolution.Method method,
            Backend backend, boolean exact, double dof) {
        ExactTsne.requireWhole(p);
        this.dof = TsneConfig.checkDof(dof);
        this.exact = exact;
        this.p = p;
        this.dim = dim;
        this.gridOptions = gridOptions;
        this.method = method;
        this.backend = backend;
    }

    @Override
    public int n() {
        return p.n;
    }

    @Override
    public int dim() {
        return dim;
    }

    @Override
    public Forces forces(double[] y, boolean withKl, TsneTimings timings) {
        int n = p.n;
        BackendUsage usage = timings.backends();
        long t0 = System.nanoTime();
        double[] attr = AttractiveForces.attractive(p, null, y, dim, dof, backend, usage);
        long t1 = System.nanoTime();
        timings.add(TsneTimings.Phase.ATTRACTIVE, t1 - t0);
        if (exact) {
            bounds(y, n, dim); // a diverged run fails here as on the grid path
            Repulsion rep = ExactRepulsion.repulsion(y, n, dim, 0, n, dof, backend, usage);
            long t2 = System.nanoTime();
            timings.add(TsneTimings.Phase.EXACT, t2 - t1);
            return new Forces(attr, rep.force, z(rep.zFixed, rep.zShift, n), withKl ? kl(y, timings) : null);
        }
        InterpGrid grid = plan(y, n, dim, gridOptions, dof);
        long[] charges = GridRepulsion.s2g(grid, n, y, n, backend, usage);
        long t2 = System.nanoTime();
        double[] potentials = potentials(grid, n, charges, method, backend, usage);
        long t3 = System.nanoTime();
        Repulsion rep = GridRepulsion.g2s(grid, n, potentials, y, n, backend, usage);
        long t4 = System.nanoTime();
        timings.add(TsneTimings.Phase.S2G, t2 - t1);
        timings.add(TsneTimings.Phase.G2G, t3 - t2);
        timings.add(TsneTimings.Phase.G2S, t4 - t3);
        return new Forces(attr, rep.force, z(rep.zFixed, rep.zShift, n), withKl ? kl(y, timings) : null);
    }

    private long[] kl(double[] y, TsneTimings timings) {
        long t0 = System.nanoTime();
        long[] kl = TsneKl.partial(p, y, dim, dof);
        timings.add(TsneTimings.Phase.KL, System.nanoTime() - t0);
        return kl;
    }

    @Override
    public Backend backend() {
        return backend;
    }

    @Override
    public double dof() {
        return dof;
    }

    /** Frees P's device copy (kept resident across iterations by the attractive kernel). */
    @Override
    public void close() {
        AttractiveForces.release(p);
    }

    /** The grid for positions y: exact per-axis min and max (comparisons only), then {@link GridRepulsion#plan}. */
    static InterpGrid plan(double[] y, int n, int dim, TsneGridOptions options, double dof) {
        double[][] b = bounds(y, n, dim);
        return GridRepulsion.plan(b[0], b[1], dim, options, dof);
    }

    /**
     * Per-axis {min, max} of positions y (comparisons only); an {@link ArithmeticException} naming the first
     * non-finite coordinate when the optimisation diverged (both repulsion methods check this first).
     */
    static double[][] bounds(double[] y, int n, int dim) {
        double[] min = new double[dim];
        double[] max = new double[dim];
        Arrays.fill(min, Double.POSITIVE_INFINITY);
        Arrays.fill(max, Double.NEGATIVE_INFINITY);
        for (int i = 0; i < n; i++) {
            for (int a = 0; a < dim; a++) {
                double v = y[i * dim + a];
                if (!(Math.abs(v) <= Double.MAX_VALUE)) {
                    throw new ArithmeticException("t-SNE diverged: coordinate " + a + " of point " + i + " is " + v
                            + "; lower the learning rate");
                }
                min[a] = Math.min(min[a], v);
                max[a] = Math.max(max[a], v);
            }
        }
        return new double[][] {min, max};
    }

    /** G2G on the exactly summed charges, recording where it ran in {@code usage} (null: not recorded). */
    static double[] potentials(InterpGrid grid, long n, long[] charges, GridConvolution.Method method,
            Backend backend, BackendUsage usage) {
        return GridConvolution.convolve(grid, GridRepulsion.chargesToDouble(grid, n, charges), method, backend, usage);
    }

    /** Z = sum_i z_i - n from the exact sum of the z_i (the self terms w_ii = 1 removed). */
    static double z(long[] zFixed, int zShift, long n) {
        return FixedPoint.toDouble(zFixed, 0, zShift) - n;
    }
}
