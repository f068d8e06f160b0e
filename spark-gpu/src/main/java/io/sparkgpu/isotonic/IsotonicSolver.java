package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;

/**
 * Solves one partition's pooled points on the backend the policy picks. With {@code auto}, a GPU failure is
 * logged once and the partition is solved again by the CPU twin, which gives the same bits, so a GPU problem
 * never changes an answer. The L1 loss always runs on the CPU (median PAVA needs the rows of every block).
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
}
