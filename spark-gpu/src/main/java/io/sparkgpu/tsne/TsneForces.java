package io.sparkgpu.tsne;

import io.sparkgpu.cuda.Backend;

/**
 * Attractive term and the point-grid steps of the repulsive term (S2G, G2S + Phi2Force, Z). CONTRACT STUB: bodies
 * are filled in by the forces work; signatures are shared with the optimiser and must stay.
 *
 * <p>Repulsion in one iteration: grid = plan(global min, global max); each row slice gives s2g(...) (exact
 * fixed-point partial charges, summed over slices with {@link #addCharges}); potentials =
 * GridConvolution.convolve(grid, chargesToDouble(...)); each slice gives g2s(...) = unnormalised repulsive forces
 * sum_j (y_i - y_j) / (1 + |y_i - y_j|^2)^2 and its exact part of sum_i z_i; Z = total z - n.
 */
public final class TsneForces {
    private TsneForces() {
    }

    /** F_i = sum_j P_ij (y_i - y_j) / (1 + |y_i - y_j|^2) for the slice's rows; y holds all n points (n x dim). */
    public static double[] attractive(SparseRows p, double[] y, int dim, Backend backend) {
        throw new UnsupportedOperationException("TsneForces.attractive: not implemented yet");
    }

    /** The interpolation grid covering [min, max] per axis (grid size adapts to the extent). */
    public static InterpGrid plan(double[] min, double[] max, int dim, TsneGridOptions options) {
        throw new UnsupportedOperationException("TsneForces.plan: not implemented yet");
    }

    /** Exact fixed-point charges [charge][node] (two longs per value) of the rows yRows (rows x dim). */
    public static long[] s2g(InterpGrid grid, long nTotal, double[] yRows, int rows, Backend backend) {
        throw new UnsupportedOperationException("TsneForces.s2g: not implemented yet");
    }

    /** acc += part, exactly (both from {@link #s2g} on the same grid and nTotal). */
    public static void addCharges(long[] acc, long[] part) {
        throw new UnsupportedOperationException("TsneForces.addCharges: not implemented yet");
    }

    /** Fixed-point charges to doubles [charge][node], each correctly rounded. */
    public static double[] chargesToDouble(InterpGrid grid, long nTotal, long[] fixed) {
        throw new UnsupportedOperationException("TsneForces.chargesToDouble: not implemented yet");
    }

    /** G2S and Phi2Force for the rows yRows: unnormalised repulsive forces and the exact partial sum of z_i. */
    public static Repulsion g2s(InterpGrid grid, long nTotal, double[] potentials, double[] yRows, int rows,
            Backend backend) {
        throw new UnsupportedOperationException("TsneForces.g2s: not implemented yet");
    }
}
