package io.sparkgpu.cuda;

import java.util.Locale;

/**
 * The device-memory budget of one GPU call, {@value #KEY} (issue 18, item 7): the most device memory one call of a
 * capability's GPU twin may hold for its working set. Unset (the default) means no budget beyond the device itself,
 * which is how every capability ran before the setting existed.
 *
 * <p>Where the algorithm decomposes exactly, a working set over the budget is processed in chunks whose results are
 * merged exactly (same bits as one chunk); the chunks come from the one pure planner {@link #chunks} (sizes in, chunk
 * boundaries out), which the CPU tests exercise without a GPU. Where it does not (every point must be resident), the
 * capability estimates its working set before the work and {@link #check}s it: over the budget, the GPU twin throws a
 * {@link CudaException} naming {@value #KEY}, the estimate and the budget, so the backend policy
 * ({@link BackendChooser#run}) recomputes on the CPU twin under {@code auto} (one WARN line per reason, same bits) and
 * fails with that message under {@code gpu}.
 */
public final class DeviceMemoryBudget {
    /** The setting: a size in bytes with an optional 1024-based unit (e.g. {@code 512m}, {@code 4g}). */
    public static final String KEY = "spark.sparkgpu.gpu.memoryBudget";
    /** The budget when {@value #KEY} is unset: none. */
    public static final long UNLIMITED = Long.MAX_VALUE;

    private DeviceMemoryBudget() {
    }

    /**
     * The setting's one rule: blank means no budget ({@link #UNLIMITED}); otherwise a whole number of bytes, {@code >
     * 0}, with an optional unit {@code b, k, m, g, t} (or {@code kb, mb, gb, tb}; powers of 1024, any case).
     *
     * @return the budget in bytes
     */
    public static long checkMemoryBudget(String value) {
        if (value == null || value.isBlank()) {
            return UNLIMITED;
        }
        String v = value.trim().toLowerCase(Locale.ROOT);
        int end = v.length();
        while (end > 0 && Character.isLetter(v.charAt(end - 1))) {
            end--;
        }
        String unit = v.substring(end).trim();
        String number = v.substring(0, end).trim();
        int shift;
        switch (unit) {
            case "": case "b": shift = 0; break;
            case "k": case "kb": shift = 10; break;
            case "m": case "mb": shift = 20; break;
            case "g": case "gb": shift = 30; break;
            case "t": case "tb": shift = 40; break;
            default: shift = -1;
        }
        long n = -1;
        if (shift >= 0 && !number.isEmpty() && number.chars().allMatch(Character::isDigit) && number.length() <= 18) {
            n = Long.parseLong(number);
        }
        if (n <= 0 || n > (Long.MAX_VALUE >> shift) - 1) {
            throw new IllegalArgumentException(KEY + " must be a size in bytes > 0 with an optional unit b|k|m|g|t "
                    + "(e.g. 512m), or unset for no budget, got '" + value + "'");
        }
        return n << shift;
    }

    /** The configured budget of this JVM (driver or executor), {@link #UNLIMITED} when unset. */
    public static long bytes() {
        return checkMemoryBudget(SparkGpuConf.get(KEY, ""));
    }

    /** True when a budget is set. */
    public static boolean limited() {
        return bytes() != UNLIMITED;
    }

    /**
     * The chunk plan, a pure function: {@code items} items of {@code bytesPerItem} device bytes each (all the memory
     * that grows with the items of one chunk) next to {@code fixedBytes} that every chunk needs (tables, centres,
     * accumulators), under {@code budget}. Chunks are as large as the budget allows, in order, all of the same size
     * but the last: the returned boundaries are {@code 0 = b[0] < b[1] < ... < b[c] = items} (just {@code {0}} when
     * there are no items). One chunk when everything fits.
     *
     * @throws CudaException when even one item does not fit next to the fixed part (see {@link #check})
     */
    public static long[] chunks(String what, long items, long fixedBytes, long bytesPerItem, long budget) {
        if (items < 0 || fixedBytes < 0 || bytesPerItem <= 0 || budget <= 0) {
            throw new IllegalArgumentException("chunk plan of " + what + ": items " + items + ", fixed bytes "
                    + fixedBytes + ", bytes per item " + bytesPerItem + ", budget " + budget);
        }
        if (items == 0) {
            return new long[] {0};
        }
        long per = itemsPerChunk(what, items, fixedBytes, bytesPerItem, budget);
        int c = (int) ((items + per - 1) / per);
        long[] b = new long[c + 1];
        for (int i = 1; i < c; i++) {
            b[i] = i * per;
        }
        b[c] = items;
        return b;
    }

    /**
     * The items of every chunk but the last under {@link #chunks}' plan ({@code items} when they all fit).
     *
     * @throws CudaException when not even one item fits next to the fixed part, or the plan would need more than
     *                       {@link #MAX_CHUNKS} chunks (a budget that small for the data is treated as over it)
     */
    public static long itemsPerChunk(String what, long items, long fixedBytes, long bytesPerItem, long budget) {
        check(what + " (one chunk of 1 item)", add(fixedBytes, bytesPerItem), budget);
        long per = Math.max(1, Math.min(Math.max(1, items), (budget - fixedBytes) / bytesPerItem));
        if ((items + per - 1) / per > MAX_CHUNKS) {
            long minPer = (items + MAX_CHUNKS - 1) / MAX_CHUNKS;
            check(what + " (" + MAX_CHUNKS + " chunks at most)", add(fixedBytes, times(minPer, bytesPerItem)), budget);
        }
        return per;
    }

    /** The most chunks one call is split into. */
    public static final int MAX_CHUNKS = 1 << 20;

    /** {@link #itemsPerChunk} as an int, for arrays indexed by int. */
    public static int intItemsPerChunk(String what, long items, long fixedBytes, long bytesPerItem, long budget) {
        return (int) Math.min(Integer.MAX_VALUE - 8, itemsPerChunk(what, items, fixedBytes, bytesPerItem, budget));
    }

    /**
     * The check of a working set that cannot be split: {@code estimateBytes} over {@code budget} throws a
     * {@link CudaException} naming {@code what}, the estimate, the budget and {@value #KEY} (the backend policy then
     * falls back to the CPU twin under {@code auto} and reports it under {@code gpu}).
     */
    public static void check(String what, long estimateBytes, long budget) {
        if (estimateBytes > budget) {
            throw new CudaException(what + " needs an estimated " + describe(estimateBytes) + " of device memory, over "
                    + "the budget " + KEY + "=" + describe(budget) + "; raise the budget, or run it on the CPU twin "
                    + "(backend=auto does so by itself)");
        }
    }

    /** Whether {@code items} items of {@code bytesPerItem} next to {@code fixedBytes} fit {@code budget} whole. */
    public static boolean fits(long fixedBytes, long bytesPerItem, long items, long budget) {
        return add(fixedBytes, times(bytesPerItem, items)) <= budget;
    }

    /** {@link #check} against the configured budget. */
    public static void check(String what, long estimateBytes) {
        check(what, estimateBytes, bytes());
    }

    /** a + b, saturating at {@link Long#MAX_VALUE} (estimates of absurd sizes must not wrap to small ones). */
    public static long add(long a, long b) {
        long s = a + b;
        return s < 0 ? Long.MAX_VALUE : s;
    }

    /** a * b for non-negative a, b, saturating at {@link Long#MAX_VALUE}. */
    public static long times(long a, long b) {
        return a != 0 && b > Long.MAX_VALUE / a ? Long.MAX_VALUE : a * b;
    }

    /** Bytes in words: exact bytes plus a rounded binary unit. */
    public static String describe(long bytes) {
        if (bytes == UNLIMITED) {
            return "unlimited";
        }
        if (bytes < 1024) {
            return bytes + " bytes";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return bytes + " bytes (" + String.format(Locale.ROOT, "%.1f", v) + " " + units[u] + ")";
    }
}
