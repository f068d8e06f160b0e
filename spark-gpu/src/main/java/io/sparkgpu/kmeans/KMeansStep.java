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
final class KMeansStep {
    /** The phase name of a k-means pass (in logs, errors and injected test faults). */
    public static final String PHASE = "k-means pass";

    private KMeansStep() {
    }

    public static long[] run(Backend backend, KMeansData data, double[] centres, int k, boolean cosine,
                             KMeansScales scales, boolean accumulate, int[] labels, double[] dists, boolean minUpdate) {
        return runReporting(backend, data, centres, k, cosine, scales, accumulate, labels, dists, minUpdate).value;
    }

    /** {@link #run}, with where the pass ran ({@link BackendChooser#run}). */
    public static BackendChooser.Ran<long[]> runReporting(Backend backend, KMeansData data, double[] centres, int k,
                                                          boolean cosine, KMeansScales scales, boolean accumulate,
                                                          int[] labels, double[] dists, boolean minUpdate) {
        return BackendChooser.run(backend, KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL, PHASE,
                dev -> KMeansGpu.step(dev, data, centres, k, cosine, scales, accumulate, labels, dists, minUpdate),
                () -> KMeansCpu.step(data, centres, k, cosine, scales, accumulate, labels, dists, minUpdate));
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
        return BackendChooser.run(backend, KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL, PHASE, dev -> {
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
        }).value;
    }

    /**
     * The sink that copies partition chunks to the GPU's resident cache under {@code residencyKey} while the
     * partition is packed ({@link ResidentBlockSink}: x then w, the layout of the passes), or {@code null} when
     * no GPU resolves for {@code backend} (the block is then uploaded after packing, or streamed, as usual).
     */
    static FeatureIngest.ChunkSink residentSink(Backend backend, String residencyKey) {
        if (residencyKey == null || backend == Backend.CPU || io.sparkgpu.cuda.DeviceMemoryBudget.limited()) {
            return null; // under a device-memory budget the block's size decides residency, after packing
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
