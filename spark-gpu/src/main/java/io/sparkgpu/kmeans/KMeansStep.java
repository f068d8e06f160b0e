package io.sparkgpu.kmeans;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;

/**
 * Runs one k-means pass on the backend the policy picks. With {@code auto}, a GPU failure during the pass
 * is logged once and the pass is recomputed by the CPU twin, whose result is bitwise identical, so a GPU
 * problem never changes an answer.
 */
public final class KMeansStep {
    private KMeansStep() {
    }

    /** Which backend actually ran the last pass on this thread ("gpu" or "cpu"). */
    private static final ThreadLocal<String> LAST = ThreadLocal.withInitial(() -> "cpu");

    public static String lastBackend() {
        return LAST.get();
    }

    public static long[] run(Backend backend, KMeansData data, double[] centres, int k, boolean cosine,
                             KMeansScales scales, boolean accumulate, int[] labels, double[] dists, boolean minUpdate) {
        CudaDevice dev = BackendChooser.resolve(backend, KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL);
        if (dev != null) {
            try {
                long[] r = KMeansGpu.step(dev, data, centres, k, cosine, scales, accumulate, labels, dists, minUpdate);
                LAST.set("gpu");
                return r;
            } catch (CudaException | LinkageError e) {
                if (backend == Backend.GPU) {
                    throw e;
                }
                BackendChooser.fallback(KMeansGpu.MODULE, "GPU pass failed, recomputed on CPU: " + e.getMessage());
            }
        }
        LAST.set("cpu");
        return KMeansCpu.step(data, centres, k, cosine, scales, accumulate, labels, dists, minUpdate);
    }
}
