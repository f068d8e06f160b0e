package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.tsne.TsneConfig;
import java.io.Serializable;

/**
 * The regular interpolation grid of the repulsive term (FIt-SNE / SG-t-SNE-Pi style). The embedding's bounding
 * box [lo, lo + intervals * boxWidth)^dim is cut into {@code intervals} equal boxes per axis; each box holds
 * {@code p} interpolation nodes per axis at offsets (m + 0.5) * h, h = boxWidth / p, so all nodes form one
 * lattice of spacing h with {@code nodesPerDim = intervals * p} nodes per axis.
 *
 * <p>Grid arrays (charges, potentials) are laid out [charge][node], node index x fastest:
 * node = ix + nodesPerDim * (iy + nodesPerDim * iz); there are {@code dim + 2} charges
 * (1, y_1..y_dim, |y|^2), see {@link #charges()}.
 */
public final class InterpGrid implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Embedding dimension: 1, 2 or 3. */
    public final int dim;
    /** Boxes per axis. */
    public final int intervals;
    /** Interpolation nodes per box per axis. */
    public final int p;
    /** Lower corner of the grid, one value per axis. */
    public final double[] lo;
    /** Edge length of one box (the same on every axis). */
    public final double boxWidth;
    /**
     * Degrees of freedom of the similarity kernel ({@link TsneKernel}; 1: standard t-SNE): G2G convolves with the
     * force kernel (1 + d2 / dof)^-(dof + 1) and G2S forms z_i = sum_j K (1 + d2 / dof).
     */
    public final double dof;

    public InterpGrid(int dim, int intervals, int p, double[] lo, double boxWidth) {
        this(dim, intervals, p, lo, boxWidth, TsneKernel.STANDARD);
    }

    /** A grid whose repulsion uses the heavy-tailed kernel of {@code dof}. */
    public InterpGrid(int dim, int intervals, int p, double[] lo, double boxWidth, double dof) {
        if (dim < 1 || dim > 3) {
            throw new IllegalArgumentException("embedding dimension must be 1, 2 or 3, got " + dim);
        }
        TsneConfig.checkGridNodesPerInterval(p); // the kernels hold at most TSNE_MAX_P weights per axis
        if (intervals < 1 || lo.length != dim || !(boxWidth > 0) || Double.isInfinite(boxWidth)) {
            throw new IllegalArgumentException("bad interpolation grid: intervals=" + intervals + " p=" + p
                    + " lo.length=" + lo.length + " boxWidth=" + boxWidth);
        }
        this.dim = dim;
        this.intervals = intervals;
        this.p = p;
        this.lo = lo.clone();
        this.boxWidth = boxWidth;
        this.dof = TsneConfig.checkDof(dof);
    }

    /** Nodes per axis. */
    public int nodesPerDim() {
        return intervals * p;
    }

    /** Total number of nodes, nodesPerDim^dim. */
    public int nodes() {
        long m = 1;
        for (int a = 0; a < dim; a++) {
            m *= nodesPerDim();
        }
        if (m > TsneConfig.MAX_GRID_NODES) { // TsneConfig.checkGridSize keeps validated settings below it
            throw new IllegalArgumentException("interpolation grid too large: " + m + " nodes");
        }
        return (int) m;
    }

    /** Node spacing h = boxWidth / p. */
    public double spacing() {
        return boxWidth / p;
    }

    /** Number of charges per node: dim + 2. */
    public int charges() {
        return dim + 2;
    }
}
