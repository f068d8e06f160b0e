package io.sparkgpu.isotonic;

import io.sparkgpu.common.Int128;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;

/**
 * CPU twins of the isotonic kernels (native-kernels/src/main/cuda/isotonic.cu), function for function, on the
 * same array-of-structures layout ({@code acc[4i..4i+3] = sLo, sHi, wLo, wHi}) and with the same exact
 * comparisons, so every path returns the same blocks and bits:
 * <ul>
 *   <li>{@link #pava}: serial pool-adjacent-violators (Ayer, Brunk, Ewing, Reid, Silverman, "An empirical
 *       distribution function for sampling with incomplete information", Ann. Math. Statist. 26, 1955), O(n).</li>
 *   <li>{@link #pavaMerge}: the GPU algorithm: chunks solved independently by PAVA, then adjacent chunk solutions
 *       merged pairwise in log2(chunks) rounds by the decomposition theorem (PAVA of concatenated PAVA solutions is
 *       the PAVA solution of the concatenation). O(n) work per round in the worst case, O(n log n) in all.</li>
 *   <li>{@link #mls}: minimum lower sets (Brunk 1955; Best and Chakravarti, "Active set algorithms for isotonic
 *       regression", Math. Programming 47, 1990) in its parallel form: for every i the largest j minimising the
 *       mean of points i..j, then blocks from a max-scan of those j. O(n^2).</li>
 * </ul>
 */
final class IsotonicCpu {
    /** Relative tolerance below which the approximate MLS comparison defers to the exact one (see {@link #mlsArgmin}). */
    static final double MLS_TOL = 1e-14;

    private IsotonicCpu() {
    }

    // ------------------------------------------------------------------ kernel twins

    /**
     * PAVA of points {@code [from, to)} in place: the blocks are written as a stack at {@code [from, from+count)}
     * (sums in acc, first point index in start). Twin of the kernel {@code iso_chunk_pava}.
     *
     * @return the number of blocks
     */
    static int chunkPava(long[] acc, int[] start, int from, int to) {
        int top = from - 1;
        for (int i = from; i < to; i++) {
            long s0 = acc[4 * i];
            long s1 = acc[4 * i + 1];
            long w0 = acc[4 * i + 2];
            long w1 = acc[4 * i + 3];
            int st = i;
            while (top >= from) {
                int t = 4 * top;
                if (Int128.compareRatio(acc[t], acc[t + 1], acc[t + 2], acc[t + 3], s0, s1, w0, w1) < 0) {
                    break;
                }
                long lo = s0 + acc[t];
                s1 += acc[t + 1] + (Long.compareUnsigned(lo, s0) < 0 ? 1 : 0);
                s0 = lo;
                lo = w0 + acc[t + 2];
                w1 += acc[t + 3] + (Long.compareUnsigned(lo, w0) < 0 ? 1 : 0);
                w0 = lo;
                st = start[top];
                top--;
            }
            top++;
            acc[4 * top] = s0;
            acc[4 * top + 1] = s1;
            acc[4 * top + 2] = w0;
            acc[4 * top + 3] = w1;
            start[top] = st;
        }
        return top - from + 1;
    }

    /**
     * Merges the solution A ({@code cntA} blocks at aBegin) with the solution B of the adjacent range that follows
     * ({@code cntB} blocks at bBegin): pools A's last and B's first blocks while they violate, popping further
     * blocks of A or taking further blocks of B, and writes the pooled block over A's last surviving slot. Twin of
     * {@code iso_merge_pairs}.
     *
     * @return {@code (lenA << 32) | skipB}: A keeps its first lenA blocks (the pooled one last), B loses its first
     *         skipB blocks
     */
    static long mergePair(long[] acc, int[] start, int aBegin, int cntA, int bBegin, int cntB) {
        if (cntA == 0 || cntB == 0 || Int128.compareRatioAt(acc, aBegin + cntA - 1, acc, bBegin) < 0) {
            return ((long) cntA << 32);
        }
        int a = cntA - 1;
        int b = 1;
        int ta = 4 * (aBegin + a);
        int hb = 4 * bBegin;
        long s0 = acc[ta] + acc[hb];
        long s1 = acc[ta + 1] + acc[hb + 1] + (Long.compareUnsigned(acc[ta] + acc[hb], acc[ta]) < 0 ? 1 : 0);
        long w0 = acc[ta + 2] + acc[hb + 2];
        long w1 = acc[ta + 3] + acc[hb + 3] + (Long.compareUnsigned(acc[ta + 2] + acc[hb + 2], acc[ta + 2]) < 0 ? 1 : 0);
        int st = start[aBegin + a];
        while (true) {
            if (a > 0) {
                int p = 4 * (aBegin + a - 1);
                if (Int128.compareRatio(acc[p], acc[p + 1], acc[p + 2], acc[p + 3], s0, s1, w0, w1) >= 0) {
                    long lo = s0 + acc[p];
                    s1 += acc[p + 1] + (Long.compareUnsigned(lo, s0) < 0 ? 1 : 0);
                    s0 = lo;
                    lo = w0 + acc[p + 2];
                    w1 += acc[p + 3] + (Long.compareUnsigned(lo, w0) < 0 ? 1 : 0);
                    w0 = lo;
                    a--;
                    st = start[aBegin + a];
                    continue;
                }
            }
            if (b < cntB) {
                int q = 4 * (bBegin + b);
                if (Int128.compareRatio(s0, s1, w0, w1, acc[q], acc[q + 1], acc[q + 2], acc[q + 3]) >= 0) {
                    long lo = s0 + acc[q];
                    s1 += acc[q + 1] + (Long.compareUnsigned(lo, s0) < 0 ? 1 : 0);
                    s0 = lo;
                    lo = w0 + acc[q + 2];
                    w1 += acc[q + 3] + (Long.compareUnsigned(lo, w0) < 0 ? 1 : 0);
                    w0 = lo;
                    b++;
                    continue;
                }
            }
            break;
        }
        int t = 4 * (aBegin + a);
        acc[t] = s0;
        acc[t + 1] = s1;
        acc[t + 2] = w0;
        acc[t + 3] = w1;
        start[aBegin + a] = st;
        return ((long) (a + 1) << 32) | b;
    }

    // ------------------------------------------------------------------ PAVA

    /** Serial PAVA of all points. */
    public static L2Blocks pava(IsoPoints p) {
        long[] acc = p.acc.clone();
        int[] start = new int[p.n];
        int m = chunkPava(acc, start, 0, p.n);
        return L2Blocks.fromStarts(p, start, acc, m);
    }

    /**
     * The chunked PAVA-merge algorithm of the GPU kernel on {@code threads} CPU threads: chunks of {@code chunk}
     * points solved in parallel, then log2(chunks) rounds of pairwise merges, each followed by moving B's
     * surviving blocks next to A's.
     */
    public static L2Blocks pavaMerge(IsoPoints p, int chunk, int threads) {
        IsotonicConfig.checkChunk(chunk); // the setting's one rule
        final int n = p.n;
        long[] acc = p.acc.clone();
        int[] start = new int[n];
        final int chunks = (int) ((n + (long) chunk - 1) / chunk);
        final int[] cnt0 = new int[Math.max(chunks, 1)];
        final long[] a0 = acc;
        final int[] s0 = start;
        parallel(threads, chunks, c -> cnt0[c] = chunkPava(a0, s0, c * chunk, (int) Math.min(n, (long) (c + 1) * chunk)));
        long[] accNext = chunks > 1 ? new long[4 * n] : null;
        int[] startNext = chunks > 1 ? new int[n] : null;
        int[] cnt = cnt0;
        long region = chunk;
        int groups = chunks;
        while (groups > 1) {
            final int g = groups;
            final int pairs = (groups + 1) / 2;
            final int[] in = cnt;
            final int[] out = new int[pairs];
            final int[] info = new int[3 * pairs];
            final long r = region;
            final long[] a = acc;
            final int[] st = start;
            parallel(threads, pairs, q -> {
                int aBegin = (int) (2 * q * r);
                int cntA = in[2 * q];
                int bBegin = (int) Math.min(n, (2 * q + 1) * r);
                int cntB = 2 * q + 1 < g ? in[2 * q + 1] : 0;
                long res = mergePair(a, st, aBegin, cntA, bBegin, cntB);
                int lenA = (int) (res >>> 32);
                int skip = (int) res;
                info[3 * q] = lenA;
                info[3 * q + 1] = skip;
                info[3 * q + 2] = cntB - skip;
                out[q] = lenA + cntB - skip;
            });
            final long[] an = accNext;
            final int[] sn = startNext;
            final int slices = (n + COMPACT_SLICE - 1) / COMPACT_SLICE;
            parallel(threads, slices, k -> compact(a, st, an, sn, n, r, info, k * COMPACT_SLICE,
                    Math.min(n, (k + 1) * COMPACT_SLICE)));
            accNext = acc;
            startNext = start;
            acc = an;
            start = sn;
            cnt = out;
            region *= 2;
            groups = pairs;
        }
        int m = chunks == 0 ? 0 : cnt[0];
        return L2Blocks.fromStarts(p, start, acc, m);
    }

    static final int COMPACT_SLICE = 1 << 16;

    /**
     * Positions [from, to) of one merge round's copy into the other buffer: A's first lenA records stay where
     * they are, B's records skipB .. skipB+lenB-1 move right behind them. Twin of {@code iso_compact}.
     */
    static void compact(long[] accIn, int[] startIn, long[] accOut, int[] startOut, int n, long region, int[] info,
                        int from, int to) {
        final long span = 2 * region;
        for (int i = from; i < to; i++) {
            int q = (int) (i / span);
            long base = q * span;
            long off = i - base;
            long dst = -1;
            if (off < region) {
                if (off < info[3 * q]) {
                    dst = i;
                }
            } else {
                long ob = off - region;
                int skip = info[3 * q + 1];
                if (ob >= skip && ob < skip + info[3 * q + 2]) {
                    dst = base + info[3 * q] + (ob - skip);
                }
            }
            if (dst >= 0) {
                System.arraycopy(accIn, 4 * i, accOut, (int) (4 * dst), 4);
                startOut[(int) dst] = startIn[i];
            }
        }
    }

    // ------------------------------------------------------------------ MLS

    /** Exact prefix sums: z[4j..4j+3] = sums of points [0, j), for j = 0..n. Twin of {@code iso_mls_prefix}. */
    static long[] prefix(long[] acc, int n) {
        long[] z = new long[4 * (n + 1)];
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < 4; k += 2) {
                long lo = z[4 * j + k] + acc[4 * j + k];
                z[4 * (j + 1) + k] = lo;
                z[4 * (j + 1) + k + 1] = z[4 * j + k + 1] + acc[4 * j + k + 1]
                        + (Long.compareUnsigned(lo, z[4 * j + k]) < 0 ? 1 : 0);
            }
        }
        return z;
    }

    /** The signed 128-bit value as a double, fast: |v| as hi*2^64 + lo with three roundings (relative error < 4 * 2^-53). */
    static double approx(long lo, long hi) {
        boolean neg = hi < 0;
        if (neg) {
            hi = ~hi + (lo == 0 ? 1 : 0);
            lo = -lo;
        }
        double d = (double) hi * 0x1p64 + Int128.unsignedToDouble(lo);
        return neg ? -d : d;
    }

    /**
     * The largest j >= i minimising the mean of points i..j, from prefix sums z. Means are first compared as
     * doubles (each within 8 * 2^-53 relative of the exact quotient of integers); only when two are within
     * {@link #MLS_TOL} relative is the exact comparison used, so the answer is exact. Twin of {@code iso_mls_argmin}.
     */
    static int mlsArgmin(long[] z, int n, int i) {
        final int zi = 4 * i;
        long bs0 = 0;
        long bs1 = 0;
        long bw0 = 0;
        long bw1 = 0;
        double bq = 0;
        int best = -1;
        for (int j = i; j < n; j++) {
            int zj = 4 * (j + 1);
            long s0 = z[zj] - z[zi];
            long s1 = z[zj + 1] - z[zi + 1] - (Long.compareUnsigned(z[zj], z[zi]) < 0 ? 1 : 0);
            long w0 = z[zj + 2] - z[zi + 2];
            long w1 = z[zj + 3] - z[zi + 3] - (Long.compareUnsigned(z[zj + 2], z[zi + 2]) < 0 ? 1 : 0);
            double q = approx(s0, s1) / approx(w0, w1);
            boolean take;
            if (best < 0) {
                take = true;
            } else {
                double diff = q - bq;
                double tol = MLS_TOL * (Math.abs(q) + Math.abs(bq));
                if (diff < -tol) {
                    take = true;
                } else if (diff > tol) {
                    take = false;
                } else {
                    take = Int128.compareRatio(s0, s1, w0, w1, bs0, bs1, bw0, bw1) <= 0;
                }
            }
            if (take) {
                best = j;
                bq = q;
                bs0 = s0;
                bs1 = s1;
                bw0 = w0;
                bw1 = w1;
            }
        }
        return best;
    }

    /**
     * Blocks from the minimisers: reach(i) = max over k <= i of jstar(k); a block starts at i when no earlier
     * minimal lower set reaches i. Block sums are prefix-sum differences. Twin of {@code iso_mls_blocks}.
     */
    static L2Blocks mlsBlocks(IsoPoints p, long[] z, int[] jstar) {
        int n = p.n;
        int[] start = new int[n];
        int m = 0;
        int reach = -1;
        for (int i = 0; i < n; i++) {
            if (reach < i) {
                start[m++] = i;
            }
            reach = Math.max(reach, jstar[i]);
        }
        long[] acc = new long[4 * m];
        for (int b = 0; b < m; b++) {
            int s = start[b];
            int e = b + 1 < m ? start[b + 1] : n;
            for (int k = 0; k < 4; k += 2) {
                long lo = z[4 * e + k] - z[4 * s + k];
                acc[4 * b + k] = lo;
                acc[4 * b + k + 1] = z[4 * e + k + 1] - z[4 * s + k + 1]
                        - (Long.compareUnsigned(z[4 * e + k], z[4 * s + k]) < 0 ? 1 : 0);
            }
        }
        return L2Blocks.fromStarts(p, start, acc, m);
    }

    /** Parallel minimum lower sets on {@code threads} threads, O(n^2). */
    public static L2Blocks mls(IsoPoints p, int threads) {
        final long[] z = prefix(p.acc, p.n);
        final int[] jstar = new int[p.n];
        parallel(threads, p.n, i -> jstar[i] = mlsArgmin(z, p.n, i));
        return mlsBlocks(p, z, jstar);
    }

    // ------------------------------------------------------------------ helpers

    static void parallel(int threads, int count, IntConsumer body) {
        if (threads <= 1 || count <= 1) {
            for (int i = 0; i < count; i++) {
                body.accept(i);
            }
            return;
        }
        ForkJoinPool pool = new ForkJoinPool(threads);
        try {
            pool.submit(() -> IntStream.range(0, count).parallel().forEach(body)).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            throw new IllegalStateException(c);
        } finally {
            pool.shutdown();
        }
    }
}
