package io.sparkgpu.tsne.optimize;

import static io.sparkgpu.ml.ParamChecks.require;

import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.affinity.KnnGraph;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.affinity.TsneAffinities;
import io.sparkgpu.tsne.repulsion.ExactRepulsion;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import io.sparkgpu.tsne.repulsion.Repulsion;

/**
 * Embeds new points into a fitted map (openTSNE's {@code transform}; Policar, Strazar, Zupan, "openTSNE",
 * J. Stat. Softw. 2024): the reference embedding stays fixed and only the new points move.
 *
 * <ol>
 *   <li>kNN of each new point among the reference's input features ({@link TsneAffinities#knnBlock}: the new points
 *   get the global indices nRef.., so none is excluded as "self"), the conditional p_{j|i} with the fit's perplexity
 *   ({@link TsneAffinities#conditional}).</li>
 *   <li>Start at the P-weighted mean of the neighbours' positions (CSR order).</li>
 *   <li>Each new point i minimises its own KL(p_{.|i} || q_{.|i}), q_{j|i} = w_ij / Z_i, Z_i = sum over the
 *   reference of w_ij (w the fit's kernel of dof {@link io.sparkgpu.tsne.repulsion.TsneKernel}): gradient
 *   (up to the factor 2) attr_i - rep_i / Z_i with attr_i = sum_j p_{j|i} (y_i - y_j) / t_ij
 *   ({@link AttractiveForces}) and rep_i = sum_j (w_ij / t_ij) (y_i - y_j) over the reference: exact
 *   ({@link ExactRepulsion#againstReference}) when the fit's rule chooses exact for nRef points, else from the grid:
 *   the reference spread onto it (S2G) and convolved (G2G) once, then only G2S at the new points each iteration
 *   ({@link GridRepulsion#g2sRows}; the grid covers the reference with a margin of {@link #GRID_MARGIN} of its extent
 *   per side, and a new point outside it feels the force of its nearest grid position). Steps as the fit's
 *   (gains, momentum; {@link Settings}).</li>
 * </ol>
 * Every new point depends only on the reference and its own features, so any partitioning of the new points gives
 * the same bits, and each phase runs on the fit's backend through the dispatchers (GPU or CPU twin, same bits).
 */
public final class TsneTransform {
    /** The grid's margin around the reference, as a fraction of its extent per side. */
    public static final double GRID_MARGIN = 0.25;

    private TsneTransform() {
    }

    /** The optimisation of the new points (openTSNE's transform defaults: 250 iterations, step 0.1, momentum 0.8). */
    public static final class Settings implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        public int maxIter = 250;
        public double learningRate = 0.1;
        public double momentum = 0.8;
        public double minGain = 0.01;

        /** transformMaxIter: >= 0 (0: the starting positions, the P-weighted means of the neighbours). */
        public static void checkMaxIter(int v) {
            require(v >= 0, "transformMaxIter", ">= 0", v);
        }

        /** transformLearningRate: finite, > 0. */
        public static void checkLearningRate(double v) {
            require(v > 0 && !Double.isInfinite(v), "transformLearningRate", "a finite number > 0", v);
        }

        void validate() {
            checkMaxIter(maxIter);
            checkLearningRate(learningRate);
            TsneConfig.checkFinalMomentum(momentum);
            TsneConfig.checkMinGain(minGain);
        }
    }

    /**
     * Positions (nq x dim) of the new points xNew (nq x d floats) in the map yRef (nRef x dim) fitted on xRef
     * (nRef x d floats), with {@code cfg}'s dimension, perplexity, dof, repulsion rule, grid and backend, k neighbours.
     */
    public static double[] embed(double[] yRef, float[] xRef, int nRef, int d, float[] xNew, int nq, int k,
            TsneConfig cfg, Settings s, BackendUsage usage) {
        final int dim = cfg.dimension;
        s.validate();
        TsneConfig.checkDof(cfg.dof);
        if (yRef.length != (long) nRef * dim || xRef.length != (long) nRef * d || xNew.length != (long) nq * d) {
            throw new IllegalArgumentException("transform: " + nRef + " reference points of " + d + " features and "
                    + dim + " coordinates, " + nq + " new points; got arrays of " + xRef.length + ", " + yRef.length
                    + " and " + xNew.length + " values");
        }
        if (nq == 0) {
            return new double[0];
        }
        TsneConfig.checkNeighbourCount(k, nRef + 1L); // k <= nRef
        TsneConfig.checkKAbovePerplexity(k, cfg.perplexity);
        KnnGraph g = TsneAffinities.knnBlock(xNew, nRef, nq, xRef, 0, nRef, d, k, nRef + nq, cfg.backend, usage);
        for (int r = 0; r < nq; r++) {
            if (g.dist2[r * k + k - 1] == 0f) {
                throw new IllegalArgumentException("transform: new point " + r + " has at least k=" + k + " reference "
                        + "points at distance 0, so its perplexity cannot be calibrated");
            }
        }
        double[] pcond = TsneAffinities.conditional(g, cfg.perplexity, cfg.backend, usage);
        int[] rowPtr = new int[nq + 1];
        for (int r = 0; r <= nq; r++) {
            rowPtr[r] = r * k;
        }
        SparseRows p = new SparseRows(nRef + nq, nRef, nq, rowPtr, g.index, pcond);
        double[] y = new double[(nRef + nq) * dim]; // the reference, then the new points
        System.arraycopy(yRef, 0, y, 0, yRef.length);
        int base = nRef * dim;
        for (int r = 0; r < nq; r++) {
            for (int e = r * k; e < (r + 1) * k; e++) {
                int j = g.index[e];
                for (int a = 0; a < dim; a++) {
                    y[base + r * dim + a] += pcond[e] * yRef[j * dim + a];
                }
            }
        }
        boolean exact = cfg.exactRepulsion(nRef);
        InterpGrid grid = null;
        double[] potentials = null;
        double[] lo = new double[dim];
        double[] hi = new double[dim];
        if (!exact) {
            double[][] b = LocalGradientSource.bounds(yRef, nRef, dim);
            double extent = 0;
            for (int a = 0; a < dim; a++) {
                extent = Math.max(extent, b[1][a] - b[0][a]);
            }
            for (int a = 0; a < dim; a++) {
                lo[a] = b[0][a] - GRID_MARGIN * extent;
                hi[a] = b[1][a] + GRID_MARGIN * extent;
            }
            grid = GridRepulsion.plan(lo, hi, dim, cfg.grid, cfg.dof);
            long[] charges = GridRepulsion.s2g(grid, nRef, yRef, nRef, cfg.backend, usage);
            potentials = LocalGradientSource.potentials(grid, nRef, charges, cfg.convolution, cfg.backend, usage);
        }
        double[] update = new double[nq * dim];
        double[] gains = new double[nq * dim];
        java.util.Arrays.fill(gains, 1.0);
        double[] yq = new double[nq * dim];
        try {
            for (int it = 0; it < s.maxIter; it++) {
                double[] attr = AttractiveForces.attractive(p, null, y, dim, cfg.dof, cfg.backend, usage);
                Repulsion rep;
                if (exact) {
                    rep = ExactRepulsion.againstReference(y, nRef, dim, nq, cfg.dof, cfg.backend, usage);
                } else {
                    for (int t = 0; t < yq.length; t++) { // the grid's box: the nearest position inside it
                        int a = t % dim;
                        yq[t] = Math.min(hi[a], Math.max(lo[a], y[base + t]));
                    }
                    rep = GridRepulsion.g2sRows(grid, nRef, potentials, yq, nq, cfg.backend, usage);
                }
                step(y, base, attr, rep, dim, update, gains, s, it);
            }
        } finally {
            AttractiveForces.release(p);
        }
        return java.util.Arrays.copyOfRange(y, base, y.length);
    }

    /** One update of the new points: g = attr - rep / Z_i, gains and momentum as {@link TsneOptimizer#step}. */
    private static void step(double[] y, int base, double[] attr, Repulsion rep, int dim, double[] update,
            double[] gains, Settings s, int it) {
        for (int t = 0; t < update.length; t++) {
            double zi = rep.zRows[t / dim];
            if (!(zi > 0) || Double.isInfinite(zi)) {
                throw new ArithmeticException("t-SNE transform: normalisation Z=" + zi + " of new point " + t / dim
                        + " at iteration " + (it + 1));
            }
            double g = attr[t] - rep.force[t] / zi;
            double gain = Math.signum(g) != Math.signum(update[t]) ? gains[t] + 0.2 : gains[t] * 0.8;
            gain = Math.max(gain, s.minGain);
            gains[t] = gain;
            update[t] = s.momentum * update[t] - s.learningRate * gain * g;
            double v = y[base + t] + update[t];
            if (!Double.isFinite(v)) {
                throw new ArithmeticException("t-SNE transform diverged: coordinate " + t % dim + " of new point "
                        + t / dim + " is " + v + "; lower transformLearningRate");
            }
            y[base + t] = v;
        }
    }
}
