package io.sparkgpu.sort;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import java.util.function.Supplier;

/**
 * Runs a counting-sort operation on the backend the policy picks. With {@code auto}, a GPU failure is logged once
 * and the work is redone by the CPU twin, whose output is identical, so a GPU problem never changes an answer.
 * Input errors (a key range outside [1, 2^24], a key outside [0, m)) are the same IllegalArgumentException on
 * both backends and are never retried. The policy is the project's one ({@link BackendChooser#run}); each call
 * returns where it ran.
 */
final class SortStep {
    /** Phase names of the backend policy (logs, errors, injected test faults). */
    public static final String HISTOGRAM = "sort histogram";
    public static final String SORT_KEYS = "sort keys";
    public static final String ORDER = "sort order";
    public static final String ORDER_WIDE = "sort order wide";

    private SortStep() {
    }

    /** histogram[k] = number of keys equal to k, for k in [0, m). */
    public static BackendChooser.Ran<int[]> histogram(Backend backend, int[] keys, int m) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        return run(backend, HISTOGRAM, dev -> SortGpu.histogram(dev, keys, m), () -> SortCpu.histogram(keys, m));
    }

    /** The keys in ascending order. */
    public static BackendChooser.Ran<int[]> sortKeys(Backend backend, int[] keys, int m) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        return run(backend, SORT_KEYS, dev -> SortGpu.sortKeys(dev, keys, m), () -> SortCpu.sortKeys(keys, m));
    }

    /** The stable sorting permutation: keys[p[0]] <= keys[p[1]] <= ..., ties in increasing index order. */
    public static BackendChooser.Ran<int[]> order(Backend backend, int[] keys, int m) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        return run(backend, ORDER, dev -> SortGpu.order(dev, keys, m), () -> SortCpu.order(keys, m));
    }

    /** {@link #order} as row numbers first + index. */
    public static BackendChooser.Ran<long[]> orderLong(Backend backend, int[] keys, int m, long first) {
        SortCpu.checkKeysArray(keys);
        SortCpu.checkRange(m);
        SortCpu.checkFirst(first, keys.length);
        return run(backend, ORDER, dev -> SortGpu.orderLong(dev, keys, m, first), () -> SortCpu.orderLong(keys, m, first));
    }

    /** The stable order of unsigned keys of at most {@code bits} bits (the general path: radix passes). */
    public static BackendChooser.Ran<int[]> orderWide(Backend backend, long[] keys, int bits) {
        SortCpu.checkWideKeys(keys, bits);
        return run(backend, ORDER_WIDE, dev -> SortGpu.orderWide(dev, keys, bits), () -> SortCpu.orderWide(keys, bits));
    }

    /** The project's one backend policy ({@link BackendChooser#run}) for this module. */
    private static <T> BackendChooser.Ran<T> run(Backend backend, String phase, BackendChooser.OnGpu<T> gpu,
                                                 Supplier<T> cpu) {
        return BackendChooser.run(backend, SortGpu.MODULE, SortGpu.PROBE_KERNEL, phase, gpu, cpu::get);
    }
}
