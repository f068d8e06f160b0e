package io.sparkgpu.sort;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Runs a counting-sort operation on the backend the policy picks. With {@code auto}, a GPU failure is logged once
 * and the work is redone by the CPU twin, whose output is identical, so a GPU problem never changes an answer.
 * Input errors (a key range outside [1, 2^24], a key outside [0, m)) are the same IllegalArgumentException on
 * both backends and are never retried. The policy lives in {@link #onGpuElseCpu} only.
 */
public final class SortStep {
    private static final ThreadLocal<String> LAST = ThreadLocal.withInitial(() -> "cpu");

    private SortStep() {
    }

    /** Which backend ran the last call on this thread ("gpu" or "cpu"). */
    public static String lastBackend() {
        return LAST.get();
    }

    /** histogram[k] = number of keys equal to k, for k in [0, m). */
    public static int[] histogram(Backend backend, int[] keys, int m) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        return onGpuElseCpu(backend, dev -> SortGpu.histogram(dev, keys, m), () -> SortCpu.histogram(keys, m));
    }

    /** The keys in ascending order. */
    public static int[] sortKeys(Backend backend, int[] keys, int m) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        return onGpuElseCpu(backend, dev -> SortGpu.sortKeys(dev, keys, m), () -> SortCpu.sortKeys(keys, m));
    }

    /** The stable sorting permutation: keys[p[0]] <= keys[p[1]] <= ..., ties in increasing index order. */
    public static int[] order(Backend backend, int[] keys, int m) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        return onGpuElseCpu(backend, dev -> SortGpu.order(dev, keys, m), () -> SortCpu.order(keys, m));
    }

    /** {@link #order} as row numbers first + index. */
    public static long[] orderLong(Backend backend, int[] keys, int m, long first) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        SortCpu.checkFirst(first, keys.length);
        return onGpuElseCpu(backend, dev -> SortGpu.orderLong(dev, keys, m, first),
                () -> SortCpu.orderLong(keys, m, first));
    }

    /**
     * The policy of this class in one place: the GPU the backend resolves to, else the CPU twin; with {@code auto} a
     * GPU failure is logged once and the work recomputed on the CPU (same output); records which backend ran.
     */
    private static <T> T onGpuElseCpu(Backend backend, Function<CudaDevice, T> gpu, Supplier<T> cpu) {
        CudaDevice dev = BackendChooser.resolve(backend, SortGpu.MODULE, SortGpu.PROBE_KERNEL);
        if (dev != null) {
            try {
                T r = gpu.apply(dev);
                LAST.set("gpu");
                return r;
            } catch (CudaException | LinkageError e) {
                if (backend == Backend.GPU) {
                    throw e;
                }
                BackendChooser.fallback(SortGpu.MODULE, "GPU sort failed, recomputed on CPU: " + e.getMessage());
            }
        }
        LAST.set("cpu");
        return cpu.get();
    }
}
