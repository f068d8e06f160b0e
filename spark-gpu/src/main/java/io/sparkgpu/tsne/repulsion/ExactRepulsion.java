package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendUsage;

/**
 * The exact O(n^2) repulsive term of t-SNE, rep_i = sum_j w_ij^2 (y_i - y_j) and z_i = sum_j w_ij with
 * w_ij = 1 / (1 + |y_i - y_j|^2), on the GPU ({@code tsne} module, section "exact"; {@link ExactRepulsionGpu}) or on
 * its CPU twin ({@link ExactRepulsionCpu}) with the same bits: the dispatcher of phase {@value #PHASE}. It replaces
 * the interpolation pieces ({@link GridRepulsion}, {@link GridConvolution}) when the fit's rule chooses it
 * ({@code TsneConfig.exactRepulsion}: small n), and gives the exact Z of the final KL ({@link #z}).
 *
 * <p>The result has the shape and fixed-point scale of {@link GridRepulsion#g2s}'s ({@link Repulsion}: forces of a row
 * slice, the exact 128-bit sum of its z_i at {@link GridRepulsion#zShift}, the self pair included so that
 * Z = sum z_i - n as for the grid), so row slices combine the same way in every mode. Each row's sums are formed in a
 * fixed order (32 strided lanes, then a fixed tree), so the result does not depend on the slicing nor on threads.
 * Time O(rows n dim).
 */
public final class ExactRepulsion {
    /** Phase name (logs, errors, {@link BackendUsage}, test faults). */
    public static final String PHASE = "t-SNE exact repulsion";

    private ExactRepulsion() {
    }

    /**
     * Forces and z sum of rows [rowOffset, rowOffset + rows) of the n points y (n x dim, all of them), on
     * {@code backend}, recording where it ran in {@code usage} (null: not recorded).
     */
    public static Repulsion repulsion(double[] y, int n, int dim, int rowOffset, int rows, Backend backend,
            BackendUsage usage) {
        return repulsion(y, n, dim, rowOffset, rows, TsneKernel.STANDARD, backend, usage);
    }

    /**
     * {@link #repulsion(double[], int, int, int, int, Backend, BackendUsage)} for the heavy-tailed kernel of
     * {@code dof} ({@link TsneKernel}): forces sum_j (w_ij / t_ij) (y_i - y_j), z_i = sum_j w_ij.
     */
    public static Repulsion repulsion(double[] y, int n, int dim, int rowOffset, int rows, double dof,
            Backend backend, BackendUsage usage) {
        GridRepulsion.checkDim(dim);
        io.sparkgpu.tsne.TsneConfig.checkDof(dof);
        if (y == null || y.length < (long) n * dim || n < 1) {
            throw new IllegalArgumentException("y must hold n * dim = " + ((long) n * dim) + " coordinates, n >= 1, got "
                    + (y == null ? "null" : y.length));
        }
        if (rowOffset < 0 || rows < 0 || rowOffset + (long) rows > n) {
            throw new IllegalArgumentException("rows [" + rowOffset + ", " + (rowOffset + (long) rows) + ") must lie in "
                    + "[0, " + n + ")");
        }
        GridRepulsion.checkFinite(y, n * dim, "y");
        int zShift = GridRepulsion.zShift(n);
        if (rows == 0) {
            return ExactRepulsionCpu.repulsion(y, n, dim, rowOffset, rows, zShift, dof);
        }
        BackendChooser.Ran<Repulsion> r = BackendChooser.run(backend, GridRepulsion.MODULE, GridRepulsion.PROBE_KERNEL,
                PHASE, dev -> ExactRepulsionGpu.repulsion(dev, y, n, dim, rowOffset, rows, zShift, dof, false),
                () -> ExactRepulsionCpu.repulsion(y, n, dim, rowOffset, rows, zShift, dof));
        BackendUsage.recordIfAny(usage, PHASE, r);
        return r.value;
    }

    /**
     * The repulsion of {@code rows} new points from a fixed reference, exact: y holds the nRef reference points then
     * the new ones ((nRef + rows) x dim); new point r gets force sum_j (w / t) (y_r - y_j) and z_r = sum_j w over the
     * reference j only ({@link Repulsion#zRows}). Time O(rows nRef dim).
     */
    public static Repulsion againstReference(double[] y, int nRef, int dim, int rows, double dof, Backend backend,
            BackendUsage usage) {
        GridRepulsion.checkDim(dim);
        io.sparkgpu.tsne.TsneConfig.checkDof(dof);
        if (y == null || nRef < 1 || rows < 0 || y.length != ((long) nRef + rows) * dim) {
            throw new IllegalArgumentException("y must hold (nRef + rows) * dim = " + (((long) nRef + rows) * dim)
                    + " coordinates, nRef >= 1, got " + (y == null ? "null" : y.length));
        }
        GridRepulsion.checkFinite(y, y.length, "y");
        int zShift = GridRepulsion.zShift(nRef);
        if (rows == 0) {
            return ExactRepulsionCpu.repulsion(y, nRef, dim, nRef, 0, zShift, dof, true);
        }
        BackendChooser.Ran<Repulsion> r = BackendChooser.run(backend, GridRepulsion.MODULE, GridRepulsion.PROBE_KERNEL,
                PHASE, dev -> ExactRepulsionGpu.repulsion(dev, y, nRef, dim, nRef, rows, zShift, dof, true),
                () -> ExactRepulsionCpu.repulsion(y, nRef, dim, nRef, rows, zShift, dof, true));
        BackendUsage.recordIfAny(usage, PHASE, r);
        return r.value;
    }

    /** Z = sum_{i != j} w_ij of the n points y, exact (every pair), on {@code backend}. */
    public static double z(double[] y, int n, int dim, Backend backend, BackendUsage usage) {
        return z(y, n, dim, TsneKernel.STANDARD, backend, usage);
    }

    /** Z = sum_{i != j} w_ij for the kernel of {@code dof}, exact (every pair), on {@code backend}. */
    public static double z(double[] y, int n, int dim, double dof, Backend backend, BackendUsage usage) {
        return GridRepulsion.z(repulsion(y, n, dim, 0, n, dof, backend, usage).zFixed, n);
    }
}
