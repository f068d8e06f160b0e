package io.sparkgpu.common;

import java.util.concurrent.ForkJoinPool;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;

/**
 * The first failing index of a check over a large input (host-side validation of features, graphs, column
 * indices), found by checking blocks of indices in parallel; the answer is the smallest failing index, whatever the
 * order in which the blocks run, so an error message names the same element as a sequential scan would.
 */
public final class ParallelScan {
    private ParallelScan() {
    }

    /** The first index in [from, to) that fails the check, or -1 (one block; the caller's own loop). */
    @FunctionalInterface
    public interface RangeCheck {
        int first(int from, int to);
    }

    /**
     * The smallest failing index in [0, count), or -1. Blocks are long (at least 2^16 indices, about four per
     * worker): a fresh JVM runs a short block interpreted, before its loop is compiled.
     */
    public static int firstIndex(int count, RangeCheck check) {
        final int block = Math.max(1 << 16, count / (4 * ForkJoinPool.getCommonPoolParallelism()) + 1);
        int found = IntStream.range(0, (int) ((count + (long) block - 1) / block)).parallel().map(b -> {
            int i = check.first(b * block, (int) Math.min(count, (b + 1L) * block));
            return i < 0 ? Integer.MAX_VALUE : i;
        }).min().orElse(Integer.MAX_VALUE);
        return found == Integer.MAX_VALUE ? -1 : found;
    }

    /** {@link #firstIndex(int, RangeCheck)} with a test per index. */
    public static int firstIndex(int count, IntPredicate bad) {
        return firstIndex(count, (from, to) -> {
            for (int i = from; i < to; i++) {
                if (bad.test(i)) {
                    return i;
                }
            }
            return -1;
        });
    }
}
