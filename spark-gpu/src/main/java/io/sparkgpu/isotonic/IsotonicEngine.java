package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.CudaDevice;

/**
 * The internal surface of the isotonic engine for the benchmarks and jobs of spark-jobs (IsotonicBenchmark, GpuInfo
 * and their tests) and for other packages (the spline's isotonic smoothing): the solvers one by one on a chosen
 * twin, and a whole fit of arrays without Spark, below the Spark trainer and the estimator
 * ({@link GpuIsotonicRegression}). <b>Not a user API</b>: it may change with the engine at any time; users call
 * {@link GpuIsotonicRegression}. Every method delegates to the engine class a fit runs (the CPU twin
 * {@code IsotonicCpu}, the GPU wrappers {@code IsotonicGpu} and {@code IsoPoolGpu}, the driver path
 * {@code IsotonicLocal}), so the benchmarks time exactly the code a fit runs. The data it takes and returns is public:
 * {@link IsoPoints} (pooled points, {@link IsoPoints#pool}), {@link IsoScales}, {@link IsoColumns},
 * {@link L2Blocks} (least-squares blocks, merged by {@link L2Blocks#merge}) and {@link IsotonicResult}.
 */
public final class IsotonicEngine {
    /** The CUDA module of the isotonic kernels (for reports). */
    public static final String MODULE = IsotonicGpu.MODULE;
    /** The GPU solvers' default chunk: points per chunk of the first PAVA round (one GPU thread each). */
    public static final int DEFAULT_CHUNK = IsotonicGpu.DEFAULT_CHUNK;

    private IsotonicEngine() {
    }

    /** Loads the isotonic kernels on {@code dev} (throws what loading throws). */
    public static void load(CudaDevice dev) {
        dev.function(IsotonicGpu.MODULE, IsotonicGpu.PROBE_KERNEL);
    }

    /** Serial PAVA of all pooled points: the CPU twin. */
    public static L2Blocks pava(IsoPoints p) {
        return IsotonicCpu.pava(p);
    }

    /**
     * PAVA-merge of {@code p} on {@code dev}, without fallback (the CPU twin's blocks and bits).
     *
     * @param kernelMillis if not null, element 0 receives the device time of the kernels alone
     */
    public static L2Blocks gpuPavaMerge(CudaDevice dev, IsoPoints p, int chunk, double[] kernelMillis) {
        return IsotonicGpu.pavaMerge(dev, p, chunk, kernelMillis);
    }

    /** Parallel MLS of {@code p} on {@code dev}, without fallback; kernelMillis as {@link #gpuPavaMerge}. */
    public static L2Blocks gpuMls(CudaDevice dev, IsoPoints p, double[] kernelMillis) {
        return IsotonicGpu.mls(dev, p, kernelMillis);
    }

    /**
     * Sort, pool and PAVA-merge of {@code len} raw rows on {@code dev}, without fallback: the blocks and bits of
     * {@code pava(IsoPoints.pool(x, y, w, len, negate, sc, false, cols))}.
     *
     * @param kernelMillis if not null, element 0 receives the device time from the first kernel to the last
     */
    public static L2Blocks gpuSolve(CudaDevice dev, double[] x, double[] y, double[] w, int len, boolean negate,
            IsoScales sc, IsoColumns cols, int chunk, double[] kernelMillis) {
        return IsoPoolGpu.solve(dev, x, y, w, len, negate, sc, cols, chunk, kernelMillis).l2();
    }

    /**
     * The model of least-squares blocks in feature order, as a fit builds it: for an antitonic fit
     * ({@code isotonic} false) the blocks are those of -y; clipped to [yMin, yMax] (NaN: no bound).
     */
    public static IsotonicResult result(L2Blocks blocks, IsoScales sc, boolean isotonic, double yMin, double yMax,
            long numRows, long zeroWeightRows, String backend) {
        return IsotonicResult.from(FinalBlocks.of(blocks, sc, !isotonic), isotonic, yMin, yMax, numRows,
                zeroWeightRows, backend);
    }

    /**
     * A whole fit of rows held in arrays, on the driver without Spark: {@code cfg} validated here, its direction
     * (auto: the sign of Spearman's correlation), loss, bounds and backend (with the solver's fallback) applied.
     */
    public static IsotonicResult fit(double[] x, double[] y, double[] w, IsotonicConfig cfg) {
        return IsotonicLocal.fit(x, y, w, cfg);
    }

    /** A whole fit by the CPU twin on the driver with default settings (unweighted when {@code w} is null). */
    public static IsotonicResult fitCpu(double[] x, double[] y, double[] w, boolean isotonic) {
        return IsotonicLocal.fitCpu(x, y, w, isotonic);
    }
}
