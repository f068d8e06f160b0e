package io.sparkgpu.sort;

import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import java.util.Arrays;

/**
 * The sort engine's stable LSD radix sort of (64-bit unsigned key, int index) pairs, 8 bits per pass, for callers
 * that hold such pairs (isotonic's sort and pool: the order-preserving keys of the features and their rows; the
 * Spearman ranks). The CPU twin ({@link #sort}) and the device-resident GPU passes ({@link #sortResident}, kernels
 * {@code sort_p64_*} of {@code sort.cu}) run the same passes; a stable sort has one result, so both give the same
 * pairs. A pass whose digit is the same for every key changes nothing and is skipped ({@link #passes}).
 *
 * <p>LSD radix sort: Knuth, TAOCP vol. 3, 5.2.5; the GPU form (per-tile digit histograms, their exclusive scan in
 * digit-major order and a stable scatter) follows Merrill and Grimshaw, "High performance and scalable radix
 * sorting", Parallel Processing Letters 21, 2011. The sort of unsigned keys of a DataFrame column (which returns
 * only the order) is {@code SortCpu.orderWide}/{@code SortGpu.orderWide}.
 */
public final class PairRadixSort {
    /** Bits of a digit, digit values, and passes over a 64-bit key. */
    public static final int DIGIT_BITS = 8;
    public static final int DIGITS = 1 << DIGIT_BITS;
    public static final int PASSES = 64 / DIGIT_BITS;
    /** Pairs per tile of the GPU passes (SORT_THREADS x SORT_ITEMS of sort.cu) and threads per block. */
    public static final int TILE = SortGpu.TILE;
    public static final int THREADS = SortGpu.SORT_THREADS;

    private PairRadixSort() {
    }

    /**
     * Sorts keys[0, n) as unsigned numbers, stably, moving idx[0, n) with them (in place); passes where all keys
     * share the digit are skipped.
     */
    public static void sort(long[] keys, int[] idx, int n) {
        if (n < 2) {
            return;
        }
        long[] k2 = new long[n];
        int[] i2 = new int[n];
        int[] count = new int[DIGITS + 1];
        long[] srcK = keys;
        int[] srcI = idx;
        long[] dstK = k2;
        int[] dstI = i2;
        for (int shift = 0; shift < 64; shift += DIGIT_BITS) {
            Arrays.fill(count, 0);
            for (int r = 0; r < n; r++) {
                count[(int) ((srcK[r] >>> shift) & (DIGITS - 1)) + 1]++;
            }
            boolean trivial = false;
            for (int b = 1; b <= DIGITS; b++) {
                if (count[b] == n) {
                    trivial = true;
                    break;
                }
            }
            if (trivial) {
                continue;
            }
            for (int b = 0; b < DIGITS; b++) {
                count[b + 1] += count[b];
            }
            for (int r = 0; r < n; r++) {
                int d = (int) ((srcK[r] >>> shift) & (DIGITS - 1));
                int to = count[d]++;
                dstK[to] = srcK[r];
                dstI[to] = srcI[r];
            }
            long[] tk = srcK;
            srcK = dstK;
            dstK = tk;
            int[] ti = srcI;
            srcI = dstI;
            dstI = ti;
        }
        if (srcK != keys) {
            System.arraycopy(srcK, 0, keys, 0, n);
            System.arraycopy(srcI, 0, idx, 0, n);
        }
    }

    /**
     * The shifts of the passes to run for {@code len} keys: pass k (bits 8k..8k+7) is skipped when one digit value
     * holds all the keys, as {@link #sort} does.
     *
     * @param digits counts of digit d in pass k at [DIGITS k + d] (a histogram of every digit of every key)
     */
    public static int[] passes(int[] digits, int len) {
        int[] out = new int[PASSES];
        int m = 0;
        for (int k = 0; k < PASSES; k++) {
            boolean trivial = false;
            for (int d = 0; d < DIGITS; d++) {
                if (digits[DIGITS * k + d] == len) {
                    trivial = true;
                    break;
                }
            }
            if (!trivial) {
                out[m++] = DIGIT_BITS * k;
            }
        }
        return Arrays.copyOf(out, m);
    }

    /** Tiles of the GPU passes over {@code len} pairs. */
    public static int tiles(int len) {
        return (int) ((len + (long) TILE - 1) / TILE);
    }

    /** Bytes of the per-tile digit counts a GPU sort of {@code len} pairs needs. */
    public static long countsBytes(int len) {
        return 4L * DIGITS * Math.max(1, tiles(len));
    }

    /** Bytes of the digit totals a GPU sort needs. */
    public static long rowTotalsBytes() {
        return 4L * DIGITS;
    }

    /**
     * Runs the passes at {@code shifts} on the pairs (keys[0], idx[0]) of {@code len} elements resident on the
     * device, ping-ponging with (keys[1], idx[1]); enqueued on {@code s}, no synchronisation. Returns which buffer
     * pair (0 or 1) holds the sorted pairs. Launches the {@code sort} module's kernels (a {@code CudaException} if
     * they cannot be loaded or launched).
     *
     * @param counts    at least {@link #countsBytes}(len) bytes
     * @param rowTotals at least {@link #rowTotalsBytes()} bytes
     */
    public static int sortResident(GpuStream s, DeviceBuffer[] keys, DeviceBuffer[] idx, int len, int[] shifts,
                                   DeviceBuffer counts, DeviceBuffer rowTotals) {
        int tiles = tiles(len);
        int cur = 0;
        if (len < 2) {
            return cur;
        }
        for (int shift : shifts) {
            KernelLauncher.launch(s, SortGpu.MODULE, "sort_p64_count", tiles, THREADS, 0, keys[cur], len, shift,
                    tiles, counts);
            KernelLauncher.launch(s, SortGpu.MODULE, "sort_rowscan", DIGITS, SortGpu.SCAN_THREADS, 0, counts, tiles,
                    rowTotals);
            KernelLauncher.launch(s, SortGpu.MODULE, "sort_p64_scatter", tiles, THREADS, 0, keys[cur], idx[cur],
                    keys[1 - cur], idx[1 - cur], len, shift, tiles, counts, rowTotals);
            cur = 1 - cur;
        }
        return cur;
    }
}
