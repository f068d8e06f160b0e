package io.sparkgpu.scan;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;
import java.util.concurrent.ExecutorService;

/**
 * Runs a scan slice or a batch of replicas on the backend the policy picks. With {@code auto}, a GPU failure
 * is logged once and the work is redone by the CPU twin, whose results are bitwise identical, so a GPU problem
 * never changes an answer.
 */
public final class ScanStep {
    private static final ThreadLocal<String> LAST = ThreadLocal.withInitial(() -> "cpu");
    private static final ThreadLocal<double[]> LAST_GPU_SECONDS = ThreadLocal.withInitial(() -> new double[1]);

    private ScanStep() {
    }

    /** Which backend ran the last call on this thread ("gpu" or "cpu"). */
    public static String lastBackend() {
        return LAST.get();
    }

    /**
     * Wall seconds of the last call on this thread spent in its GPU work (session with the table upload, launches,
     * download), as {@code KMeansStep.runBlocks} measures; 0 when it ran on the CPU.
     */
    public static double lastGpuSeconds() {
        return LAST_GPU_SECONDS.get()[0];
    }

    private static void ran(String backend, double gpuSeconds) {
        LAST.set(backend);
        LAST_GPU_SECONDS.get()[0] = gpuSeconds;
    }

    /** The best range among [lo, hi) of the observed data; on the CPU in this thread. */
    public static ScanBest best(Backend backend, ScanTables t, ScanSpec spec, long lo, long hi) {
        return best(backend, t, spec, lo, hi, null, 1);
    }

    /**
     * The best range among [lo, hi) of the observed data; on the CPU split into {@code parts} index shares run on
     * {@code pool} (null: this thread).
     */
    public static ScanBest best(Backend backend, ScanTables t, ScanSpec spec, long lo, long hi, ExecutorService pool,
                                int parts) {
        CudaDevice dev = BackendChooser.resolve(backend, ScanGpu.MODULE, ScanGpu.PROBE_KERNEL);
        if (dev != null) {
            long t0 = System.nanoTime();
            try (ScanGpu.Session s = new ScanGpu.Session(dev, t)) {
                ScanBest b = s.best(spec, lo, hi);
                ran("gpu", (System.nanoTime() - t0) / 1e9);
                return b;
            } catch (CudaException | LinkageError e) {
                if (backend == Backend.GPU) {
                    throw e;
                }
                BackendChooser.fallback(ScanGpu.MODULE, "GPU scan failed, recomputed on CPU: " + e.getMessage());
            }
        }
        ran("cpu", 0);
        return ScanCpu.scanParallel(t, t.casesPrefix, spec, lo, hi, parts, pool);
    }

    /**
     * Maximum LLR of replicas r0 .. r1-1; on the CPU the replicas run on {@code pool} (null: this thread).
     */
    public static double[] replicaMaxima(Backend backend, ScanTables t, ScanSpec spec, long seed, int r0, int r1,
                                         ExecutorService pool) {
        ScanReplicas.checkSupported(t);
        CudaDevice dev = BackendChooser.resolve(backend, ScanGpu.MODULE, ScanGpu.PROBE_KERNEL);
        if (dev != null) {
            long t0 = System.nanoTime();
            try (ScanGpu.Session s = new ScanGpu.Session(dev, t)) {
                double[] m = s.replicaMaxima(spec, seed, r0, r1);
                ran("gpu", (System.nanoTime() - t0) / 1e9);
                return m;
            } catch (CudaException | LinkageError e) {
                if (backend == Backend.GPU) {
                    throw e;
                }
                BackendChooser.fallback(ScanGpu.MODULE, "GPU replicas failed, recomputed on CPU: " + e.getMessage());
            }
        }
        ran("cpu", 0);
        return ScanCpu.replicaMaxima(t, spec, seed, r0, r1, pool);
    }
}
