package io.sparkgpu.sort;

import java.util.Arrays;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * CPU twin of the {@code sort} module ({@code sort.cu}, launched by {@link SortGpu}): counting sort of int keys
 * in a declared range [0, m), 1 <= m <= 2^24. Three operations, each giving exactly the GPU's output:
 * <ul>
 *   <li>{@link #histogram}: the number of keys equal to each k in [0, m);</li>
 *   <li>{@link #sortKeys}: the keys in ascending order (each key k repeated histogram[k] times);</li>
 *   <li>{@link #order} / {@link #orderLong}: the stable sorting permutation: {@code keys[p[0]] <= keys[p[1]] <=
 *       ...}, equal keys in increasing index order, so {@code rows[p[j]]} lists rows by key. It is unique, so any
 *       correct stable algorithm gives the same array; this one is a parallel counting sort (one pass over the
 *       keys for m <= 2^16, two LSD passes of at most 12 bits above).</li>
 * </ul>
 * Inputs of at least {@link #PARALLEL_MIN} keys are split into contiguous parts run on the common fork-join pool
 * ({@code threads} parts at most). Keys outside [0, m) are errors naming the lowest offending index and its value
 * (the GPU reports the same one).
 */
final class SortCpu {
    /** Largest key range m. */
    public static final int MAX_RANGE = 1 << 24;
    /** Inputs shorter than this run on the calling thread. */
    static final int PARALLEL_MIN = 1 << 16;
    /** Largest number of ints held by per-part private histograms at once (256 MiB). */
    static final long PRIVATE_BUDGET = 1L << 26;
    /** The stable order takes one counting pass when the keys have at most this many bits, else two. */
    static final int SINGLE_PASS_BITS = 16;

    private SortCpu() {
    }

    // ------------------------------------------------------------------------------------------ checks

    /** Checks the declared key range: 1 <= m <= 2^24. */
    public static void checkRange(int m) {
        if (m < 1) {
            throw new IllegalArgumentException("key range m must be at least 1 (keys lie in [0, m)), got m = " + m);
        }
        if (m > MAX_RANGE) {
            throw new IllegalArgumentException("key range m must be at most 2^24 = " + MAX_RANGE + ", got m = " + m);
        }
    }

    static void checkKeysArray(int[] keys) {
        if (keys == null) {
            throw new IllegalArgumentException("keys must not be null");
        }
    }

    /** The error for keys[i], which is outside [0, m): the same message on every backend. */
    static IllegalArgumentException badKey(int[] keys, int i, int m) {
        int v = keys[i];
        String what = v < 0 ? "is negative" : "is not below the key range m = " + m;
        return new IllegalArgumentException("keys[" + i + "] = " + v + " " + what + " (every key must lie in [0, "
                + m + "))");
    }

    /** Checks m and every key; the error names the lowest index whose key is outside [0, m). */
    public static void checkKeys(int[] keys, int m) {
        checkKeys(keys, m, defaultThreads());
    }

    public static void checkKeys(int[] keys, int m, int threads) {
        checkKeysArray(keys);
        checkRange(m);
        int n = keys.length;
        int p = parts(n, threads);
        int[] bad = new int[p];
        forEachPart(p, q -> {
            bad[q] = -1;
            for (int i = lo(n, q, p), e = lo(n, q + 1, p); i < e; i++) {
                if (Integer.compareUnsigned(keys[i], m) >= 0) {
                    bad[q] = i;
                    return;
                }
            }
        });
        throwFirstBad(keys, m, bad);
    }

    private static void throwFirstBad(int[] keys, int m, int[] badPerPart) {
        for (int b : badPerPart) {
            if (b >= 0) {
                throw badKey(keys, b, m);
            }
        }
    }

    // ------------------------------------------------------------------------------------------ parallel parts

    static int defaultThreads() {
        return Runtime.getRuntime().availableProcessors();
    }

    /** Contiguous parts for n elements and {@code threads} threads (1 below {@link #PARALLEL_MIN}). */
    static int parts(int n, int threads) {
        if (n < PARALLEL_MIN || threads <= 1) {
            return 1;
        }
        return Math.max(1, Math.min(threads, n / (PARALLEL_MIN / 4)));
    }

    /** Start of part q of p over [0, n). */
    static int lo(int n, int q, int p) {
        return (int) ((long) n * q / p);
    }

    static void forEachPart(int parts, IntConsumer body) {
        if (parts == 1) {
            body.accept(0);
        } else {
            IntStream.range(0, parts).parallel().forEach(body);
        }
    }

    static int checkThreads(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be at least 1, got " + threads);
        }
        return threads;
    }

    /** Bits of the largest key: keys in [0, m) have at most this many significant bits (0 for m = 1). */
    static int keyBits(int m) {
        return 32 - Integer.numberOfLeadingZeros(m - 1);
    }

    // ------------------------------------------------------------------------------------------ histogram

    /** histogram[k] = number of keys equal to k, for k in [0, m). */
    public static int[] histogram(int[] keys, int m) {
        return histogram(keys, m, defaultThreads());
    }

    public static int[] histogram(int[] keys, int m, int threads) {
        checkKeysArray(keys);
        checkRange(m);
        return counts(keys, m, checkThreads(threads));
    }

    /** The histogram, checking the keys while counting (one pass). */
    static int[] counts(int[] keys, int m, int threads) {
        int n = keys.length;
        int p = (int) Math.min(parts(n, threads), Math.max(1, PRIVATE_BUDGET / m));
        int[][] hs = new int[p][];
        int[] bad = new int[p];
        forEachPart(p, q -> {
            int[] h = new int[m];
            bad[q] = -1;
            for (int i = lo(n, q, p), e = lo(n, q + 1, p); i < e; i++) {
                int k = keys[i];
                if (Integer.compareUnsigned(k, m) >= 0) {
                    bad[q] = i;
                    break;
                }
                h[k]++;
            }
            hs[q] = h;
        });
        throwFirstBad(keys, m, bad);
        int[] h = hs[0];
        if (p > 1) {
            int mp = m < PARALLEL_MIN ? 1 : p;
            forEachPart(mp, r -> {
                for (int k = lo(m, r, mp), e = lo(m, r + 1, mp); k < e; k++) {
                    int s = h[k];
                    for (int q = 1; q < p; q++) {
                        s += hs[q][k];
                    }
                    h[k] = s;
                }
            });
        }
        return h;
    }

    // ------------------------------------------------------------------------------------------ keys only

    /** The keys in ascending order. */
    public static int[] sortKeys(int[] keys, int m) {
        return sortKeys(keys, m, defaultThreads());
    }

    public static int[] sortKeys(int[] keys, int m, int threads) {
        checkKeysArray(keys);
        checkRange(m);
        checkThreads(threads);
        int[] h = counts(keys, m, threads);
        return expand(h, keys.length, threads);
    }

    /** Writes every key k histogram[k] times, in key order (n = the histogram's total). */
    static int[] expand(int[] h, int n, int threads) {
        int m = h.length;
        int[] start = new int[m + 1];
        for (int k = 0; k < m; k++) {
            start[k + 1] = start[k] + h[k];
        }
        int[] out = new int[n];
        int p = parts(n, threads);
        forEachPart(p, q -> {
            int pos = lo(n, q, p);
            int end = lo(n, q + 1, p);
            if (pos >= end) {
                return;
            }
            int k = runAt(start, pos);
            while (pos < end) {
                int e = Math.min(end, start[k + 1]);
                Arrays.fill(out, pos, e, k);
                pos = e;
                k++;
            }
        });
        return out;
    }

    /** The key whose run holds position pos: the largest k < m with start[k] <= pos (its run is not empty). */
    static int runAt(int[] start, int pos) {
        int a = 0;
        int b = start.length - 2; // m - 1
        while (a < b) {
            int mid = (a + b + 1) >>> 1;
            if (start[mid] <= pos) {
                a = mid;
            } else {
                b = mid - 1;
            }
        }
        return a;
    }

    // ------------------------------------------------------------------------------------------ stable order

    /** The stable sorting permutation: keys[p[0]] <= keys[p[1]] <= ..., ties in increasing index order. */
    public static int[] order(int[] keys, int m) {
        return order(keys, m, defaultThreads());
    }

    public static int[] order(int[] keys, int m, int threads) {
        checkKeysArray(keys);
        checkRange(m);
        int[] out = new int[keys.length];
        stable(keys, m, checkThreads(threads), out, null, 0);
        return out;
    }

    /** {@link #order} as row numbers {@code first + index} (e.g. global row ids of a partition starting at first). */
    public static long[] orderLong(int[] keys, int m, long first) {
        return orderLong(keys, m, first, defaultThreads());
    }

    public static long[] orderLong(int[] keys, int m, long first, int threads) {
        checkKeysArray(keys);
        checkRange(m);
        checkFirst(first, keys.length);
        long[] out = new long[keys.length];
        stable(keys, m, checkThreads(threads), null, out, first);
        return out;
    }

    static void checkFirst(long first, int n) {
        if (first < 0 || first > Long.MAX_VALUE - n) {
            throw new IllegalArgumentException("first index must be >= 0 and first + n must fit in a long, got first = "
                    + first + " for n = " + n);
        }
    }

    private static void stable(int[] keys, int m, int threads, int[] out, long[] outLong, long first) {
        int n = keys.length;
        int bits = keyBits(m);
        if (bits <= SINGLE_PASS_BITS) {
            pass(keys, null, n, m, 0, Math.max(1, bits), null, out, outLong, first, threads);
            return;
        }
        int low = (bits + 1) / 2;
        int[] k1 = new int[n];
        int[] i1 = new int[n];
        pass(keys, null, n, m, 0, low, k1, i1, null, 0, threads);
        pass(k1, i1, n, -1, low, bits - low, null, out, outLong, first, threads);
    }

    /**
     * One stable counting pass on the digit (key >>> shift) & (2^bits - 1): element i (index idxIn[i], or i when
     * idxIn is null) goes to position start(digit) + earlier elements with that digit. m > 0: also checks that
     * every key is in [0, m) (the error names the lowest bad index). Outputs: keyOut (nullable), and the index to
     * idxOut or first + index to idxOutLong.
     */
    static void pass(int[] keyIn, int[] idxIn, int n, int m, int shift, int bits, int[] keyOut, int[] idxOut,
                     long[] idxOutLong, long first, int threads) {
        int r = 1 << bits;
        int mask = r - 1;
        int p = (int) Math.min(parts(n, threads), Math.max(1, PRIVATE_BUDGET / r));
        int[][] next = new int[p][r];
        int[] bad = new int[p];
        forEachPart(p, q -> {
            int[] c = next[q];
            bad[q] = -1;
            for (int i = lo(n, q, p), e = lo(n, q + 1, p); i < e; i++) {
                int k = keyIn[i];
                if (m > 0 && Integer.compareUnsigned(k, m) >= 0) {
                    bad[q] = i;
                    break;
                }
                c[(k >>> shift) & mask]++;
            }
        });
        throwFirstBad(keyIn, m, bad);
        int run = 0;
        for (int d = 0; d < r; d++) {
            for (int q = 0; q < p; q++) {
                int c = next[q][d];
                next[q][d] = run;
                run += c;
            }
        }
        forEachPart(p, q -> {
            int[] at = next[q];
            for (int i = lo(n, q, p), e = lo(n, q + 1, p); i < e; i++) {
                int k = keyIn[i];
                int pos = at[(k >>> shift) & mask]++;
                if (keyOut != null) {
                    keyOut[pos] = k;
                }
                int idx = idxIn == null ? i : idxIn[i];
                if (idxOut != null) {
                    idxOut[pos] = idx;
                } else {
                    idxOutLong[pos] = first + idx;
                }
            }
        });
    }

    // ------------------------------------------------------------------------------------------ wide keys

    /** Bits of each LSD digit of the wide stable order on the CPU (the GPU uses at most 8; the order is unique). */
    static final int WIDE_DIGIT_BITS = 11;

    /** Checks the key width of {@link #orderWide}: 1 <= bits <= 64. */
    public static void checkWideBits(int bits) {
        if (bits < 1 || bits > 64) {
            throw new IllegalArgumentException("key bits must be in [1, 64], got " + bits);
        }
    }

    /** Checks bits and every key: each must be below 2^bits as an unsigned number; the error names the lowest index. */
    public static void checkWideKeys(long[] keys, int bits) {
        if (keys == null) {
            throw new IllegalArgumentException("keys must not be null");
        }
        checkWideBits(bits);
        if (bits == 64) {
            return;
        }
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] >>> bits != 0) {
                throw new IllegalArgumentException("keys[" + i + "] = " + Long.toUnsignedString(keys[i])
                        + " is not below 2^" + bits + " (every key must be an unsigned number of at most " + bits
                        + " bits)");
            }
        }
    }

    /**
     * The stable sorting permutation of unsigned keys of at most {@code bits} bits (the general path, for key ranges
     * above {@link #MAX_RANGE}): {@code Long.compareUnsigned(keys[p[j]], keys[p[j + 1]]) <= 0}, ties in increasing
     * index order. Same structure as the GPU's ({@link SortGpu#orderWide}): LSD counting passes over the low 32-bit
     * words, then, when bits > 32, the high words gathered in that order and sorted by further passes.
     */
    public static int[] orderWide(long[] keys, int bits) {
        return orderWide(keys, bits, defaultThreads());
    }

    public static int[] orderWide(long[] keys, int bits, int threads) {
        checkWideKeys(keys, bits);
        checkThreads(threads);
        int n = keys.length;
        int[] out = new int[n];
        if (n == 0) {
            return out;
        }
        int[] lo = new int[n];
        for (int i = 0; i < n; i++) {
            lo[i] = (int) keys[i];
        }
        if (bits <= 32) {
            digitPasses(lo, null, n, bits, out, threads);
            return out;
        }
        int[] byLow = new int[n];
        digitPasses(lo, null, n, 32, byLow, threads);
        int[] hi = lo; // the low words are no longer needed
        for (int j = 0; j < n; j++) {
            hi[j] = (int) (keys[byLow[j]] >>> 32);
        }
        digitPasses(hi, byLow, n, bits - 32, out, threads);
        return out;
    }

    /** Digit widths of LSD passes over {@code bits} bits, lowest first: as even as possible, at most {@code max}. */
    static int[] splitBits(int bits, int max) {
        int passes = (Math.max(1, bits) + max - 1) / max;
        int[] out = new int[passes];
        for (int p = 0; p < passes; p++) {
            out[p] = Math.max(1, bits) / passes + (p < Math.max(1, bits) % passes ? 1 : 0);
        }
        return out;
    }

    /** Stable LSD passes over the low {@code bits} bits of keyIn (element i has index idxIn[i], or i); order to out. */
    private static void digitPasses(int[] keyIn, int[] idxIn, int n, int bits, int[] out, int threads) {
        int[] widths = splitBits(bits, WIDE_DIGIT_BITS);
        int[] k = keyIn;
        int[] idx = idxIn;
        int[][] spare = new int[2][];
        int shift = 0;
        for (int p = 0; p < widths.length; p++) {
            if (p == widths.length - 1) {
                pass(k, idx, n, -1, shift, widths[p], null, out, null, 0, threads);
            } else {
                if (spare[0] == null) {
                    spare[0] = new int[n];
                    spare[1] = new int[n];
                }
                int[] k2 = spare[0];
                int[] i2 = spare[1];
                pass(k, idx, n, -1, shift, widths[p], k2, i2, null, 0, threads);
                // the inputs become the next spares, unless they are the caller's arrays
                spare[0] = k == keyIn ? null : k;
                spare[1] = idx == idxIn ? null : idx;
                if (spare[0] == null || spare[1] == null) {
                    spare[0] = null;
                    spare[1] = null;
                }
                k = k2;
                idx = i2;
            }
            shift += widths[p];
        }
    }

    // ------------------------------------------------------------------------------------------ key windows

    /**
     * Splits [0, m) into consecutive key windows for a device that holds at most {@code capacity} elements at once:
     * each window either holds at most {@code capacity} keys in all, or is one key (which may hold more).
     * Returns the window starts followed by m: window w is [result[w], result[w + 1]).
     */
    static int[] windows(int[] hist, long capacity) {
        int m = hist.length;
        int[] starts = new int[Math.min(m, 1024) + 1];
        int w = 0;
        long inWindow = 0;
        starts[w++] = 0;
        for (int k = 0; k < m; k++) {
            long c = hist[k];
            if (k > starts[w - 1] && inWindow + c > capacity) {
                if (w == starts.length) {
                    starts = Arrays.copyOf(starts, 2 * starts.length);
                }
                starts[w++] = k;
                inWindow = 0;
            }
            inWindow += c;
        }
        int[] out = Arrays.copyOf(starts, w + 1);
        out[w] = m;
        return out;
    }

    /**
     * Indices of the keys grouped by window (windows from {@link #windows}), in increasing index order within a
     * window: a stable partition. {@code windowStart[w]} receives the first position of window w (w + 1 entries).
     */
    static int[] partitionByWindow(int[] keys, int[] bounds, int[] windowStart, int threads) {
        int n = keys.length;
        int w = bounds.length - 1;
        int m = bounds[w];
        int[] windowOf = new int[m];
        for (int q = 0; q < w; q++) {
            Arrays.fill(windowOf, bounds[q], bounds[q + 1], q);
        }
        int p = (int) Math.min(parts(n, threads), Math.max(1, PRIVATE_BUDGET / w));
        int[][] next = new int[p][w];
        forEachPart(p, q -> {
            int[] c = next[q];
            for (int i = lo(n, q, p), e = lo(n, q + 1, p); i < e; i++) {
                c[windowOf[keys[i]]]++;
            }
        });
        int run = 0;
        for (int d = 0; d < w; d++) {
            windowStart[d] = run;
            for (int q = 0; q < p; q++) {
                int c = next[q][d];
                next[q][d] = run;
                run += c;
            }
        }
        windowStart[w] = run;
        int[] out = new int[n];
        forEachPart(p, q -> {
            int[] at = next[q];
            for (int i = lo(n, q, p), e = lo(n, q + 1, p); i < e; i++) {
                out[at[windowOf[keys[i]]]++] = i;
            }
        });
        return out;
    }
}
