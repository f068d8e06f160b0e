package io.sparkgpu.kmeans;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;

/**
 * The internal surface of the k-means engine for the benchmarks and jobs of spark-jobs (KMeansBenchmark,
 * IngestBenchmark, EndToEndBenchmark, GpuInfo) and for the tests of other packages: one pass at a time on a chosen
 * twin, the accumulator's exact merge and update, and the trainer's partition packing, below the Spark trainer and
 * the estimator ({@link GpuKMeans}). <b>Not a user API</b>: it may change with the engine at any time; users call
 * {@link GpuKMeans}. Every method delegates to the engine class a fit runs (the dispatcher {@code KMeansStep}, the
 * twins {@code KMeansCpu} and {@code KMeansGpu}, {@code KMeansAccumulator}, {@code KMeansTrainer}), so the
 * benchmarks time exactly the code a fit runs. The data it takes and returns ({@link KMeansData},
 * {@link KMeansScales}, accumulators as {@code long[]}) is public.
 *
 * <p>Without Spark on the class path (the GPU bundle) every method but {@link #pack} works.
 */
public final class KMeansEngine {
    /** The CUDA module of the k-means kernels (for reports). */
    public static final String MODULE = KMeansGpu.MODULE;
    /**
     * The key, in a fit's timings ({@code GpuKMeansSummary.timings()}), of the seconds the longest packing task
     * spent copying its block to the GPU.
     */
    public static final String UPLOAD_MAX = KMeansTrainer.UPLOAD_MAX;

    private KMeansEngine() {
    }

    // ------------------------------------------------------------------ one pass

    /** Loads the k-means kernels on {@code dev} (throws what loading throws). */
    public static void load(CudaDevice dev) {
        dev.function(KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL);
    }

    /**
     * One assignment pass on the backend the policy picks, with where it ran (the dispatcher of a fit's passes).
     * Arguments as {@link #cpuStep}.
     */
    public static BackendChooser.Ran<long[]> step(Backend backend, KMeansData data, double[] centres, int k,
            boolean cosine, KMeansScales scales, boolean accumulate, int[] labels, double[] dists, boolean minUpdate) {
        return KMeansStep.runReporting(backend, data, centres, k, cosine, scales, accumulate, labels, dists,
                minUpdate);
    }

    /**
     * One assignment pass by the CPU twin.
     *
     * @param centres    k*d row-major
     * @param accumulate add sums, weights, counts and cost to a fresh accumulator (returned), else return null
     * @param labels     optional output of nearest-centre indices (length >= n)
     * @param dists      optional output of nearest distances; with {@code minUpdate} keeps min(old, new)
     */
    public static long[] cpuStep(KMeansData data, double[] centres, int k, boolean cosine, KMeansScales scales,
            boolean accumulate, int[] labels, double[] dists, boolean minUpdate) {
        return KMeansCpu.step(data, centres, k, cosine, scales, accumulate, labels, dists, minUpdate);
    }

    /** One assignment pass on {@code dev}, without fallback (the CPU twin's contract and bits). */
    public static long[] gpuStep(CudaDevice dev, KMeansData data, double[] centres, int k, boolean cosine,
            KMeansScales scales, boolean accumulate, int[] labels, double[] dists, boolean minUpdate) {
        return KMeansGpu.step(dev, data, centres, k, cosine, scales, accumulate, labels, dists, minUpdate);
    }

    // ------------------------------------------------------------------ the kernel alone

    /**
     * Milliseconds of each of {@code reps} timed launches of the accumulating pass kernel on rows resident on
     * {@code dev} under {@code data.residencyKey} (uploaded first when they are not).
     */
    public static double[] kernelMillis(CudaDevice dev, KMeansData data, double[] centres, int k, boolean cosine,
            KMeansScales scales, int reps) {
        return KMeansGpu.kernelMillis(dev, data, centres, k, cosine, scales, reps);
    }

    /** {@link #kernelMillis}, or with {@code searchOnly} the nearest-centre search alone (no accumulation). */
    public static double[] kernelMillis(CudaDevice dev, KMeansData data, double[] centres, int k, boolean cosine,
            KMeansScales scales, int reps, boolean searchOnly) {
        return KMeansGpu.kernelMillis(dev, data, centres, k, cosine, scales, reps, searchOnly);
    }

    /** Name of the kernel the calling thread's last GPU pass or timing ran. */
    public static String lastKernel() {
        return KMeansGpu.lastKernel();
    }

    /** Points of the calling thread's last GPU launch that the FP32 screening could not settle (rechecked in FP64). */
    public static long lastRecheckCount() {
        return KMeansGpu.lastRecheckCount();
    }

    /** Points that launch processed (the denominator of {@link #lastRecheckCount}). */
    public static long lastPointCount() {
        return KMeansGpu.lastPointCount();
    }

    // ------------------------------------------------------------------ the accumulator

    /** Adds accumulator {@code b} into {@code a} (same k, d) exactly; returns {@code a}. */
    public static long[] merge(long[] a, long[] b, int k, int d) {
        return KMeansAccumulator.merge(a, b, k, d);
    }

    /** The centres one Lloyd step moves to from a combined accumulator (the trainer's update). */
    public static double[] centres(long[] acc, double[] old, int k, int d, boolean cosine, KMeansScales scales) {
        return KMeansAccumulator.centres(acc, old, k, d, cosine, scales);
    }

    /** Index of the cost (a fixed-point pair at scale {@link KMeansScales#costShift}) in an accumulator. */
    public static int costAt(int k, int d) {
        return KMeansAccumulator.costAt(k, d);
    }

    // ------------------------------------------------------------------ packing (needs Spark)

    /** The trainer's partition packing: each partition of {@code df} as one {@link KMeansData} block. */
    public static JavaRDD<KMeansData> pack(Dataset<?> df, String featuresCol, String weightCol, boolean cosine,
            String fitId) {
        return KMeansTrainer.pack(df, featuresCol, weightCol, cosine, fitId);
    }

    /**
     * {@link #pack}; with a {@code residentOn} backend other than CPU (and a {@code fitId}) each task also copies its
     * block to that backend's GPU while it packs, as a GPU fit does.
     */
    public static JavaRDD<KMeansData> pack(Dataset<?> df, String featuresCol, String weightCol, boolean cosine,
            String fitId, Backend residentOn) {
        return KMeansTrainer.pack(df, featuresCol, weightCol, cosine, fitId, residentOn);
    }
}
