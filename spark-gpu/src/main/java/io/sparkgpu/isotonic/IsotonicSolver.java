package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;

/**
 * Solves one partition on the backend the policy picks. With {@code auto}, a GPU failure is logged once and the
 * partition is solved again by the CPU twin, which gives the same bits, so a GPU problem never changes an answer.
 * The L1 loss always runs on the CPU (median PAVA needs the rows of every block). For the L2 loss with PAVA on
 * the GPU, {@link #solveRows} sorts and pools the raw rows on the device too ({@link IsoPoolGpu}).
 */
public final class IsotonicSolver {
    private static final ThreadLocal<String> LAST = ThreadLocal.withInitial(() -> "cpu");

    private IsotonicSolver() {
    }

    /** Which backend solved the last partition on this thread ("gpu" or "cpu"). */
    public static String lastBackend() {
        return LAST.get();
    }

    /** Least-squares solution of {@code p} with PAVA(-merge) or MLS. */
    public static L2Blocks solveL2(IsoPoints p, IsotonicConfig.Algorithm algorithm, Backend backend, int chunk) {
        if (algorithm == IsotonicConfig.Algorithm.MLS) {
            IsotonicGpu.checkMlsSize(p.n);
        }
        CudaDevice dev = p.n == 0 ? null : BackendChooser.resolve(backend, IsotonicGpu.MODULE, IsotonicGpu.PROBE_KERNEL);
        if (dev != null) {
            try {
                L2Blocks b = algorithm == IsotonicConfig.Algorithm.MLS ? IsotonicGpu.mls(dev, p, null)
                        : IsotonicGpu.pavaMerge(dev, p, chunk, null);
                LAST.set("gpu");
                return b;
            } catch (CudaException | LinkageError e) {
                if (backend == Backend.GPU) {
                    throw e;
                }
                BackendChooser.fallback(IsotonicGpu.MODULE, "GPU solve failed, recomputed on CPU: " + e.getMessage());
            }
        }
        LAST.set("cpu");
        return algorithm == IsotonicConfig.Algorithm.MLS ? IsotonicCpu.mls(p, 1) : IsotonicCpu.pava(p);
    }

    /** One partition's solution (L2Blocks or L1Blocks) with its row counts and the backend that solved it. */
    public static final class Solved {
        public final Object blocks;
        public final long rows;
        public final long zeroWeightRows;
        public final boolean gpu;

        Solved(Object blocks, long rows, long zeroWeightRows, boolean gpu) {
            this.blocks = blocks;
            this.rows = rows;
            this.zeroWeightRows = zeroWeightRows;
            this.gpu = gpu;
        }

        /** The least-squares blocks (L2 loss). */
        public L2Blocks l2() {
            return (L2Blocks) blocks;
        }
    }

    /**
     * Pools and solves {@code len} raw rows of one partition ({@link IsoPoints#pool} arguments). L2 with PAVA on a
     * resolved GPU: sort, pool and PAVA-merge on the device ({@link IsoPoolGpu#solve}); otherwise (L1, MLS, CPU, or
     * a GPU failure under {@code auto}) the host pools and {@link #solveL2} or {@link L1Blocks#pava} solves. Every
     * route gives the same blocks and bits.
     *
     * @throws IllegalArgumentException as {@link IsoPoints#pool}
     */
    public static Solved solveRows(double[] x, double[] y, double[] w, int len, boolean negate, IsoScales sc,
                                   IsoColumns cols, IsotonicConfig cfg) {
        boolean l2Pava = cfg.loss == IsotonicConfig.Loss.L2 && cfg.algorithm == IsotonicConfig.Algorithm.PAVA;
        CudaDevice dev = l2Pava && len > 0
                ? BackendChooser.resolve(cfg.backend, IsotonicGpu.MODULE, IsotonicGpu.PROBE_KERNEL) : null;
        if (dev != null) {
            try {
                Solved r = IsoPoolGpu.solve(dev, x, y, w, len, negate, sc, cols, cfg.chunk, null);
                LAST.set(r.gpu ? "gpu" : "cpu");
                return r;
            } catch (CudaException | LinkageError e) {
                if (cfg.backend == Backend.GPU) {
                    throw e;
                }
                BackendChooser.fallback(IsotonicGpu.MODULE, "GPU sort+pool+solve failed, recomputed on CPU: "
                        + e.getMessage());
            }
        }
        boolean l1 = cfg.loss == IsotonicConfig.Loss.L1;
        IsoPoints p = IsoPoints.pool(x, y, w, len, negate, sc, l1, cols);
        if (l1) {
            LAST.set("cpu");
            return new Solved(L1Blocks.pava(p), p.rows, p.zeroWeightRows, false);
        }
        L2Blocks b = dev != null ? solveL2(p, cfg.algorithm, Backend.CPU, cfg.chunk)
                : solveL2(p, cfg.algorithm, cfg.backend, cfg.chunk);
        return new Solved(b, p.rows, p.zeroWeightRows, p.n > 0 && "gpu".equals(LAST.get()));
    }
}
