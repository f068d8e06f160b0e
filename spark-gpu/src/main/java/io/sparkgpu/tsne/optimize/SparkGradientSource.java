package io.sparkgpu.tsne.optimize;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.tsne.TsneGridOptions;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.TsneTrainer;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.repulsion.ExactRepulsion;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import io.sparkgpu.tsne.repulsion.Repulsion;
import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;

/**
 * The per-iteration fallback of distributed mode (see {@link TsneTrainer#DISTRIBUTED_STAGE}; the default runs all
 * iterations in one barrier stage, {@link TsneBarrier}). Distributed forces: P is a cached RDD of row slices (one per partition, contiguous row ranges); Y stays on the
 * driver, where the optimiser updates it. One evaluation is two Spark jobs:
 * <ol>
 * <li>Y is broadcast (O(n dim) per iteration: every slice's attractive term needs the positions of its rows'
 * neighbours, which may be anywhere, and the G2S step needs its own rows; a broadcast reaches each executor once);
 * the driver plans the grid from the exact min/max of Y; each slice returns its partial S2G charges in exact
 * fixed point, summed exactly ({@link GridRepulsion#addCharges}) in a two-level tree so the driver receives a few
 * grids; the traffic is O(grid) per slice: (dim + 2) charges x 16 bytes per node, e.g. 1280^2 nodes in 2-D give
 * 100 MiB per slice and iteration, so use few, large slices (one per executor) for large embeddings.</li>
 * <li>The driver convolves (G2G) and broadcasts the potentials (O(grid)); each slice returns the attractive and
 * repulsive forces of its rows (O(rows dim)) and its exact partial sum of z_i (and of KL when asked).</li>
 * </ol>
 * Each slice calls exactly what {@link LocalGradientSource} calls for all rows, on its rows; the per-row results
 * are row-local and the sums are exact, so this mode gives the same bits as the single-device one.
 */
final class SparkGradientSource implements GradientSource {
    private final JavaSparkContext jsc;
    private final JavaRDD<SparseRows> slices;
    private final int n;
    private final int dim;
    private final TsneGridOptions gridOptions;
    private final GridConvolution.Method method;
    private final Backend backend;
    private final boolean exact;
    /** Degrees of freedom of the kernel ({@link io.sparkgpu.tsne.repulsion.TsneKernel}). */
    private final double dof;
    private final String residencyKey = "tsne-fit-" + java.util.UUID.randomUUID();
    private String phase = "";

    /**
     * @param slices cached slices covering rows 0..n-1 (any number per partition: a partition sends one grid, so
     *               coalescing the slices into fewer partitions cuts the grid traffic)
     * @param exact  the exact O(n^2) repulsion (one Spark job per evaluation, no grid), else the interpolated one
     */
    SparkGradientSource(JavaSparkContext jsc, JavaRDD<SparseRows> slices, int n, int dim, TsneGridOptions gridOptions,
            GridConvolution.Method method, Backend backend, boolean exact, double dof) {
        this.jsc = jsc;
        this.dof = dof;
        this.exact = exact;
        this.slices = slices;
        this.n = n;
        this.dim = dim;
        this.gridOptions = gridOptions;
        this.method = method;
        this.backend = backend;
    }

    @Override
    public int n() {
        return n;
    }

    @Override
    public int dim() {
        return dim;
    }

    @Override
    public Backend backend() {
        return backend;
    }

    @Override
    public double dof() {
        return dof;
    }

    /** Prefix of the Spark job descriptions of the next evaluation (e.g. "iteration 7/1000"). */
    void setPhase(String phase) {
        this.phase = phase;
    }

    @Override
    public Forces forces(double[] y, boolean withKl, TsneTimings timings) {
        final int dim = this.dim;
        final long nTotal = n;
        final Backend backend = this.backend;
        final String key = residencyKey;
        final double dof = this.dof;
        long t0 = System.nanoTime();
        Broadcast<double[]> by = jsc.broadcast(y);
        try {
            if (exact) { // one job: each slice's attractive term and exact repulsion against all of Y
                LocalGradientSource.bounds(y, n, dim); // a diverged run fails here as on the grid path
                long t1 = System.nanoTime();
                timings.add(TsneTimings.Phase.UPDATE, t1 - t0);
                jsc.setJobDescription("spark-gpu t-SNE " + phase + ": attractive + exact repulsion per slice");
                List<SliceForces> parts = slices.map(s -> SliceForces.of(s, key, by.value(), null, nTotal, null, dim,
                        dof, backend, withKl)).collect();
                return merge(parts, withKl, timings, System.nanoTime() - t1, TsneTimings.Phase.EXACT);
            }
            final InterpGrid grid = LocalGradientSource.plan(y, n, dim, gridOptions, dof);
            long t1 = System.nanoTime();
            timings.add(TsneTimings.Phase.UPDATE, t1 - t0);
            jsc.setJobDescription("spark-gpu t-SNE " + phase + ": S2G partial grids");
            Charges summed = slices.mapPartitions(it -> {
                Charges acc = null;
                BackendUsage usage = new BackendUsage();
                while (it.hasNext()) { // the slices of one partition sum to one grid before it leaves the executor
                    SparseRows s = it.next();
                    long[] q = GridRepulsion.s2g(grid, nTotal, rowsOf(by.value(), s, dim), s.rows, backend, usage);
                    if (acc == null) {
                        acc = new Charges(q, usage);
                    } else {
                        GridRepulsion.addCharges(acc.q, q);
                    }
                }
                return acc == null ? java.util.Collections.<Charges>emptyIterator() : List.of(acc).iterator();
            }).treeReduce(Charges::add, 2);
            long[] charges = summed.q;
            timings.backends().merge(summed.usage);
            long t2 = System.nanoTime();
            double[] potentials = LocalGradientSource.potentials(grid, n, charges, method, backend,
                    timings.backends());
            long t3 = System.nanoTime();
            timings.add(TsneTimings.Phase.S2G, t2 - t1);
            timings.add(TsneTimings.Phase.G2G, t3 - t2);
            Broadcast<double[]> bp = jsc.broadcast(potentials);
            try {
                jsc.setJobDescription("spark-gpu t-SNE " + phase + ": attractive + G2S per slice");
                List<SliceForces> parts = slices.map(s -> SliceForces.of(s, key, by.value(), grid, nTotal, bp.value(),
                        dim, dof, backend, withKl)).collect();
                return merge(parts, withKl, timings, System.nanoTime() - t3, TsneTimings.Phase.G2S);
            } finally {
                bp.destroy();
            }
        } finally {
            by.destroy();
        }
    }

    /**
     * The slices' rows into whole arrays, their exact z (and KL) sums added; the job's wall time {@code job} split
     * between the attractive term, KL and the repulsion phase {@code repPhase} in proportion to the slices' own times.
     */
    private Forces merge(List<SliceForces> parts, boolean withKl, TsneTimings timings, long job,
            TsneTimings.Phase repPhase) {
        double[] attr = new double[n * dim];
        double[] rep = new double[n * dim];
        long[] zAcc = null;
        int zShift = 0;
        long[] kl = withKl ? TsneKl.empty() : null;
        long attrNs = 0;
        long repNs = 0;
        long klNs = 0;
        for (SliceForces sf : parts) {
            System.arraycopy(sf.attr, 0, attr, sf.rowOffset * dim, sf.attr.length);
            System.arraycopy(sf.rep.force, 0, rep, sf.rowOffset * dim, sf.rep.force.length);
            if (zAcc == null) {
                zAcc = sf.rep.zFixed.clone();
                zShift = sf.rep.zShift;
            } else {
                if (sf.rep.zShift != zShift) {
                    throw new IllegalStateException("row slices used different z scales: " + zShift + " and "
                            + sf.rep.zShift);
                }
                io.sparkgpu.common.FixedPoint.addPair(zAcc, 0, sf.rep.zFixed[0], sf.rep.zFixed[1]);
            }
            if (withKl) {
                TsneKl.add(kl, sf.kl);
            }
            timings.backends().merge(sf.usage);
            attrNs += sf.attrNs;
            repNs += sf.g2sNs;
            klNs += sf.klNs;
        }
        long denom = Math.max(1, attrNs + repNs + klNs);
        timings.add(TsneTimings.Phase.ATTRACTIVE, job * attrNs / denom);
        timings.add(TsneTimings.Phase.KL, job * klNs / denom);
        timings.add(repPhase, job - job * attrNs / denom - job * klNs / denom);
        return new Forces(attr, rep, LocalGradientSource.z(zAcc, zShift, n), kl);
    }

    /**
     * Frees the slices' device copies of P on the executors that run this job (the resident caches of other
     * executors evict them when space is needed).
     */
    @Override
    public void close() {
        final String key = residencyKey;
        final double dof = this.dof;
        String old = jsc.getLocalProperty("spark.job.description");
        jsc.setJobDescription("spark-gpu t-SNE: release device copies of P");
        try {
            slices.foreachPartition(it -> AttractiveForces.release(key));
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(SparkGradientSource.class).debug("release of resident P failed", e);
        } finally {
            jsc.setJobDescription(old);
        }
    }

    static double[] rowsOf(double[] y, SparseRows s, int dim) {
        return Arrays.copyOfRange(y, s.rowOffset * dim, (s.rowOffset + s.rows) * dim);
    }

    /** Exact partial S2G charges of some slices and where they were computed. */
    static final class Charges implements Serializable {
        private static final long serialVersionUID = 1L;
        final long[] q;
        final BackendUsage usage;

        Charges(long[] q, BackendUsage usage) {
            this.q = q;
            this.usage = usage;
        }

        /** this += other, exactly. */
        Charges add(Charges other) {
            GridRepulsion.addCharges(q, other.q);
            usage.merge(other.usage);
            return this;
        }
    }

    /** One slice's forces, partial z and KL, its own timings and where its phases ran. */
    static final class SliceForces implements Serializable {
        private static final long serialVersionUID = 1L;
        final BackendUsage usage = new BackendUsage();
        int rowOffset;
        double[] attr;
        Repulsion rep;
        long[] kl;
        long attrNs;
        long g2sNs;
        long klNs;

        static SliceForces of(SparseRows s, String residencyKey, double[] y, InterpGrid grid, long nTotal,
                double[] potentials, int dim, double dof, Backend backend, boolean withKl) {
            SliceForces f = new SliceForces();
            f.rowOffset = s.rowOffset;
            long t0 = System.nanoTime();
            f.attr = AttractiveForces.attractive(s, residencyKey, y, dim, dof, backend, f.usage);
            long t1 = System.nanoTime();
            f.rep = grid == null ? ExactRepulsion.repulsion(y, (int) nTotal, dim, s.rowOffset, s.rows, dof, backend,
                    f.usage)
                    : GridRepulsion.g2s(grid, nTotal, potentials, rowsOf(y, s, dim), s.rows, backend, f.usage);
            long t2 = System.nanoTime();
            if (withKl) {
                f.kl = TsneKl.partial(s, y, dim, dof);
            }
            f.attrNs = t1 - t0;
            f.g2sNs = t2 - t1;
            f.klNs = System.nanoTime() - t2;
            return f;
        }
    }
}
