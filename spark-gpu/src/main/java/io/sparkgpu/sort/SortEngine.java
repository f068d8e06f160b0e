package io.sparkgpu.sort;

import io.sparkgpu.cuda.CudaDevice;

/**
 * The internal surface of the sort engine for the benchmarks and jobs of spark-jobs (SortBenchmark, SortCommand and
 * their tests): the keys-only sort, the stable orders and the histogram of dense int keys on a chosen twin, below
 * the DataFrame sort ({@link GpuSort}). <b>Not a user API</b>: it may change with the engine at any time; users call
 * {@link GpuSort}. Every method delegates to the engine class a sort runs (the CPU twin {@code SortCpu}, the GPU
 * wrapper {@code SortGpu}), so the benchmarks time exactly the code a sort runs. Loads without Spark.
 */
public final class SortEngine {
    /** The CUDA module of the sort kernels (for reports). */
    public static final String MODULE = SortGpu.MODULE;
    /** The largest key range m (keys in [0, m)) the engine sorts. */
    public static final int MAX_RANGE = SortCpu.MAX_RANGE;
    /** The keys-only kernel name of the radix passes ({@link #gpuKernelMillis}). */
    public static final String RADIX_KEYS = SortGpu.RADIX_KEYS;
    /** Key ranges above this sort keys-only by radix passes on the GPU when the keys are spread (automatic). */
    public static final int KEYS_RADIX_ABOVE = SortGpu.KEYS_RADIX_ABOVE;

    /** The keys-only GPU kernel the automatic choice takes for these keys: sort_keys_runs, _descent or radix. */
    public static String gpuKeysKernel(int[] keys, int m) {
        return SortGpu.outputKernel(m, keys.length, keys);
    }
    /** The key column types a DataFrame sort accepts, in words (for help texts). */
    public static final String KEY_TYPES = SortKeys.SUPPORTED;

    /** What {@link #gpuKernelMillis} times. */
    public enum KernelOp {
        /** Histogram, pyramid and sorted keys. */
        KEYS(SortGpu.Op.KEYS),
        /** Stable order with int indices. */
        ORDER(SortGpu.Op.ORDER),
        /** Stable order with long indices. */
        ORDER_LONG(SortGpu.Op.ORDER_LONG);

        private final SortGpu.Op op;

        KernelOp(SortGpu.Op op) {
            this.op = op;
        }
    }

    private SortEngine() {
    }

    /** Loads the sort kernels on {@code dev} (throws what loading throws). */
    public static void load(CudaDevice dev) {
        dev.function(SortGpu.MODULE, SortGpu.PROBE_KERNEL);
    }

    /** Bits of each LSD pass of the GPU's stable order for key range {@code m}, lowest digit first. */
    public static int[] passBits(int m) {
        return SortGpu.passBits(m);
    }

    /** Counts of each key in [0, m): the CPU twin. */
    public static int[] histogram(int[] keys, int m) {
        return SortCpu.histogram(keys, m);
    }

    /** The keys in ascending order: the CPU twin on {@code threads} threads. */
    public static int[] sortKeys(int[] keys, int m, int threads) {
        return SortCpu.sortKeys(keys, m, threads);
    }

    /** The stable ascending order (int indices): the CPU twin on {@code threads} threads. */
    public static int[] order(int[] keys, int m, int threads) {
        return SortCpu.order(keys, m, threads);
    }

    /** The stable ascending order as long indices plus {@code first}: the CPU twin on {@code threads} threads. */
    public static long[] orderLong(int[] keys, int m, long first, int threads) {
        return SortCpu.orderLong(keys, m, first, threads);
    }

    /** {@link #sortKeys} on {@code dev}, without fallback (the CPU twin's bits). */
    public static int[] gpuSortKeys(CudaDevice dev, int[] keys, int m) {
        return SortGpu.sortKeys(dev, keys, m);
    }

    /** {@link #order} on {@code dev}, without fallback (the CPU twin's bits). */
    public static int[] gpuOrder(CudaDevice dev, int[] keys, int m) {
        return SortGpu.order(dev, keys, m);
    }

    /** {@link #orderLong} on {@code dev}, without fallback (the CPU twin's bits). */
    public static long[] gpuOrderLong(CudaDevice dev, int[] keys, int m, long first) {
        return SortGpu.orderLong(dev, keys, m, first);
    }

    /**
     * Milliseconds (CUDA events) of {@code reps} runs of the kernels of {@code op} on keys already on the device,
     * with no allocation, transfer or host work inside the measured interval; {@code kernel} names the keys-only
     * output kernel (sort_keys_runs, sort_keys_descent, {@link #RADIX_KEYS}) or the stable order's kernels (onesweep,
     * classic); null: the default choice.
     */
    public static double[] gpuKernelMillis(CudaDevice dev, int[] keys, int m, KernelOp op, String kernel, int reps) {
        return SortGpu.kernelMillis(dev, keys, m, op.op, kernel, reps);
    }

    /**
     * Milliseconds (CUDA events) of {@code reps} runs of the GPU's stable order of full-range 32-bit keys (the
     * general radix path: four 8-bit passes) on keys already on the device, with the stable kernels {@code kernel}
     * (onesweep or classic; null: the default).
     */
    public static double[] gpuWideKernelMillis(CudaDevice dev, int[] keys, String kernel, int reps) {
        return SortGpu.wideKernelMillis(dev, keys, kernel, reps);
    }
}
