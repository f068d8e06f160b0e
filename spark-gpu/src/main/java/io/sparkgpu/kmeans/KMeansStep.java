package io.sparkgpu.kmeans;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.spark.FeatureIngest;
import io.sparkgpu.spark.ResidentBlockSink;

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
        return onGpuElseCpu(backend,
                dev -> KMeansGpu.step(dev, data, centres, k, cosine, scales, accumulate, labels, dists, minUpdate),
                () -> KMeansCpu.step(data, centres, k, cosine, scales, accumulate, labels, dists, minUpdate));
    }

    /** Work on the resolved device. */
    @FunctionalInterface
    private interface OnGpu<T> {
        T run(CudaDevice dev);
    }

    /**
     * The policy of this class in one place: the GPU the backend resolves to, else the CPU twin; with {@code auto}
     * a GPU failure is logged once and the work recomputed on the CPU (same bits); records which backend ran.
     */
    private static <T> T onGpuElseCpu(Backend backend, OnGpu<T> gpu, java.util.function.Supplier<T> cpu) {
        CudaDevice dev = BackendChooser.resolve(backend, KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL);
        if (dev != null) {
            try {
                T r = gpu.run(dev);
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
        return cpu.get();
    }

    /**
     * One accumulating pass over several non-empty blocks of the same dimension: on a GPU one launch per block
     * into one device accumulator and one download (blocks resident from packing are not copied again);
     * otherwise, or after a GPU failure under {@code auto}, the CPU twin per block. Sums are exact, so the
     * result equals the sum of per-block passes on either backend.
     */
    static KMeansLloyd.Partial runBlocks(Backend backend, java.util.List<KMeansData> blocks, double[] centres, int k,
                                         boolean cosine, KMeansScales scales) {
        final int d = scales.d;
        if (blocks.isEmpty()) {
            return new KMeansLloyd.Partial(new long[KMeansAccumulator.length(k, d)]);
        }
        return onGpuElseCpu(backend, dev -> {
            long t0 = System.nanoTime();
            KMeansLloyd.Partial p = new KMeansLloyd.Partial(KMeansGpu.stepBlocks(dev, blocks, centres, k, cosine, scales));
            p.gpu = blocks.size();
            p.gpuSeconds = (System.nanoTime() - t0) / 1e9;
            return p;
        }, () -> {
            KMeansLloyd.Partial sum = new KMeansLloyd.Partial(new long[KMeansAccumulator.length(k, d)]);
            for (KMeansData b : blocks) {
                KMeansAccumulator.merge(sum.acc, KMeansCpu.step(b, centres, k, cosine, scales, true, null, null, false),
                        k, d);
                sum.cpu++;
            }
            return sum;
        });
    }

    /**
     * The sink that copies partition chunks to the GPU's resident cache under {@code residencyKey} while the
     * partition is packed ({@link ResidentBlockSink}: x then w, the layout of the passes), or {@code null} when
     * no GPU resolves for {@code backend} (the block is then uploaded after packing, or streamed, as usual).
     */
    static FeatureIngest.ChunkSink residentSink(Backend backend, String residencyKey) {
        if (residencyKey == null || backend == Backend.CPU) {
            return null;
        }
        try {
            CudaDevice dev = BackendChooser.resolve(backend, KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL);
            return dev == null ? null : new ResidentBlockSink(dev, residencyKey);
        } catch (CudaException | LinkageError e) {
            BackendChooser.fallback(KMeansGpu.MODULE, "upload while packing failed (the passes upload again): "
                    + e.getMessage());
            return null;
        }
    }

    /**
     * Copies a packed block to the GPU's resident cache ahead of its passes, in the task that packed it, so
     * that many tasks upload in parallel; nothing to copy when the block is already resident (made so while
     * packing by {@link #residentSink}). Returns the seconds spent; 0 when no GPU resolves, the block does not
     * fit the resident budget, or the copy fails (the passes then upload or fall back as usual).
     */
    static double preload(Backend backend, KMeansData data) {
        if (data.n == 0 || data.residencyKey == null || backend == Backend.CPU) {
            return 0;
        }
        try {
            CudaDevice dev = BackendChooser.resolve(backend, KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL);
            if (dev == null) {
                return 0;
            }
            long t0 = System.nanoTime();
            KMeansGpu.preload(dev, data);
            return (System.nanoTime() - t0) / 1e9;
        } catch (CudaException | LinkageError e) {
            BackendChooser.fallback(KMeansGpu.MODULE, "upload while packing failed (the passes upload again): "
                    + e.getMessage());
            return 0;
        }
    }
}
