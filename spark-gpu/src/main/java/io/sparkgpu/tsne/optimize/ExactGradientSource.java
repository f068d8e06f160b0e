package io.sparkgpu.tsne.optimize;

import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.affinity.SparseRows;






/** The exact O(n^2 dim) forces of {@link ExactTsne}, for tiny n (tests, references). */
final class ExactGradientSource implements GradientSource {
    private final SparseRows p;
    private final int dim;
    private final double dof;

    ExactGradientSource(SparseRows p, int dim) {
        this(p, dim, io.sparkgpu.tsne.repulsion.TsneKernel.STANDARD);
    }

    /** With the kernel of {@code dof}. */
    ExactGradientSource(SparseRows p, int dim, double dof) {
        ExactTsne.requireWhole(p);
        this.p = p;
        this.dim = dim;
        this.dof = dof;
    }

    @Override
    public double dof() {
        return dof;
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
        long t0 = System.nanoTime();
        double[] attr = ExactTsne.attractive(p, y, dim, dof);
        long t1 = System.nanoTime();
        double[] rep = ExactTsne.repulsive(y, p.n, dim, dof);
        double z = ExactTsne.z(y, p.n, dim, dof);
        long t2 = System.nanoTime();
        timings.add(TsneTimings.Phase.ATTRACTIVE, t1 - t0);
        timings.add(TsneTimings.Phase.G2S, t2 - t1);
        long[] kl = null;
        if (withKl) {
            kl = TsneKl.partial(p, y, dim, dof);
            timings.add(TsneTimings.Phase.KL, System.nanoTime() - t2);
        }
        return new Forces(attr, rep, z, kl);
    }
}
