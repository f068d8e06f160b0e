package io.sparkgpu.tsne.optimize;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.tsne.TsneTimings;






/**
 * Where the optimiser gets the two force terms of the t-SNE gradient for the current positions: the exact O(n^2)
 * reference ({@link ExactGradientSource}), the interpolation pieces in one process ({@link LocalGradientSource}) or
 * the same pieces spread over Spark executors ({@link SparkGradientSource}). All return the unnormalised terms so
 * the optimiser forms grad = 4 (exaggeration * attr - rep / Z) the same way for every source.
 */
interface GradientSource extends AutoCloseable {
    /** Number of points. */
    int n();

    /** Embedding dimension. */
    int dim();

    /**
     * The force terms at positions y (n x dim, row-major).
     *
     * @param withKl also return the exact partial sums of the KL divergence
     */
    Forces forces(double[] y, boolean withKl, TsneTimings timings);

    /** The backend its phases run on (also that of the exact Z of the final KL, {@link TsneOptimizer}). */
    default Backend backend() {
        return Backend.CPU;
    }

    /** Degrees of freedom of the kernel its forces use ({@link io.sparkgpu.tsne.repulsion.TsneKernel}). */
    default double dof() {
        return io.sparkgpu.tsne.repulsion.TsneKernel.STANDARD;
    }

    @Override
    default void close() {
    }

    /** One evaluation: attr_i = sum_j p_ij w_ij (y_i - y_j), rep_i = sum_j w_ij^2 (y_i - y_j), Z, KL partials. */
    final class Forces {
        final double[] attr;
        final double[] rep;
        final double z;
        /** {@link TsneKl} accumulator (exact), or null when not requested. */
        final long[] kl;

        Forces(double[] attr, double[] rep, double z, long[] kl) {
            this.attr = attr;
            this.rep = rep;
            this.z = z;
            this.kl = kl;
        }
    }
}
