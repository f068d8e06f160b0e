package io.sparkgpu.tsne.optimize;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.TsneKernel;

/**
 * Attractive term of t-SNE, on the GPU ({@code tsne} module, section "attractive") or on its CPU twin
 * ({@link ExactTsne#attractive}), with the same bits: the dispatcher of phase {@value #ATTRACTIVE_PHASE}.
 *
 * <p>(van der Maaten, "Accelerating t-SNE using tree-based algorithms", JMLR 15, 2014):
 * F_i = sum_j P_ij (y_i - y_j) / (1 + |y_i - y_j|^2) over the stored entries of row i, summed in CSR column order
 * with the operation order of {@link ExactTsne#attractive}, so the result equals it bit for bit. Time O(nnz dim).
 * On the GPU the slice is stored once as sliced ELLPACK (SELL-32-256, rows sorted by length inside windows of 256)
 * and stays resident in the device's {@link io.sparkgpu.cuda.DeviceResidentCache} across iterations; only y goes up
 * per call. The slice is recognised by identity: do not modify a {@link SparseRows} after its first use here.
 * The repulsive term is {@link GridRepulsion} (S2G, G2S) and {@link io.sparkgpu.tsne.repulsion.GridConvolution}
 * (G2G).
 *
 * <p><b>GPU use.</b> Every method takes host arrays and is thread-safe (one stream per call; resident P shared
 * read-only; per-call device buffers pooled by size in {@link io.sparkgpu.cuda.ScratchBuffers}). {@link #release}
 * frees a slice's resident P; {@link #lastGpuKernelMillis} gives the kernel time of the calling thread's last GPU
 * call, for the per-step benchmark split.
 */
public final class AttractiveForces {
    /** Kernel module and a kernel whose loading proves the module runs here. */
    static final String MODULE = "tsne";
    static final String PROBE_KERNEL = "tsne_attr_sell_d2";
    /**
     * Phase name of the attractive term (logs, errors, {@link BackendUsage}, test faults). Each call runs under
     * {@link BackendChooser#run}: with {@code auto}, a GPU failure part-way is recomputed by the CPU twin.
     */
    public static final String ATTRACTIVE_PHASE = "t-SNE attractive";

    private AttractiveForces() {
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
    public static double[] attractive(SparseRows p, String residencyKey, double[] y, int dim, Backend backend,
            BackendUsage usage) {
        return attractive(p, residencyKey, y, dim, TsneKernel.STANDARD, backend, usage);
    }

    /**
     * {@link #attractive(SparseRows, String, double[], int, Backend, BackendUsage)} for the heavy-tailed kernel of
     * {@code dof} ({@link TsneKernel}): F_i = sum_j P_ij (y_i - y_j) / (1 + |y_i - y_j|^2 / dof).
     */
    public static double[] attractive(SparseRows p, String residencyKey, double[] y, int dim, double dof,
            Backend backend, BackendUsage usage) {
        GridRepulsion.checkDim(dim);
        io.sparkgpu.tsne.TsneConfig.checkDof(dof);
        if (y == null || y.length != (long) p.n * dim) {
            throw new IllegalArgumentException("y must hold n * dim = " + ((long) p.n * dim) + " coordinates, got "
                    + (y == null ? "null" : y.length));
        }
        GridRepulsion.checkFinite(y, y.length, "y");
        if (p.rows == 0) {
            return attractiveCpu(p, y, dim, dof);
        }
        BackendChooser.Ran<double[]> r = BackendChooser.run(backend, MODULE, PROBE_KERNEL, ATTRACTIVE_PHASE,
                dev -> AttractiveForcesGpu.attractive(dev, p, residencyKey, y, dim, dof),
                () -> attractiveCpu(p, y, dim, dof));
        BackendUsage.recordIfAny(usage, ATTRACTIVE_PHASE, r);
        return r.value;
    }

    /**
     * Frees the device copies of P made by {@link #attractive} for this slice (they are otherwise kept until the
     * resident cache evicts them), e.g. when a fit ends.
     */
    public static void release(SparseRows p) {
        String key = AttractiveForcesGpu.residencyKey(p);
        if (key != null) {
            io.sparkgpu.cuda.DeviceResidentCache.forEach(c -> c.evictPrefix(key));
        }
    }

    /** Frees the device copies of every P slice made under {@code residencyKey} (on every device of this JVM). */
    public static void release(String residencyKey) {
        io.sparkgpu.cuda.DeviceResidentCache.forEach(c -> c.evictPrefix("tsne-P:" + residencyKey + ":"));
    }

    /**
     * Device time in ms of the kernel of the calling thread's last GPU call of {@link #attractive}
     * (CUDA events around the kernel: transfers excluded; NaN before any GPU call), for benchmarks.
     */
    public static double lastGpuKernelMillis() {
        return AttractiveForcesGpu.LAST_KERNEL_MS.get()[0];
    }

    /**
     * CPU twin of the attractive kernel: the attractive term has no approximation, so the twin is the exact
     * reference itself, {@link ExactTsne#attractive}, whose operation order (per row in CSR order: differences,
     * d2 += diff^2, pw = p / (1 + d2), f += pw diff) the kernel repeats with explicitly rounded operations.
     */
    static double[] attractiveCpu(SparseRows p, double[] y, int dim) {
        return attractiveCpu(p, y, dim, TsneKernel.STANDARD);
    }

    /** The twin for the kernel of {@code dof}. */
    static double[] attractiveCpu(SparseRows p, double[] y, int dim, double dof) {
        return ExactTsne.attractive(p, y, dim, dof);
    }
}
