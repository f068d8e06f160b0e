package io.sparkgpu.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A Java replica of sort.cu's index bookkeeping, statement for statement where it matters (pyramid layout and the
 * two-launch build, the chunk locate with per-level node starts, the descent from the lowest common ancestor with
 * the next-key tries, the runs walk with its block scan and max-scan, the stable pass's per-(digit, tile) counts,
 * row scans, warp-striped ranks, the tail sentinel and the per-digit deltas), run with the launch shapes SortGpu
 * uses, must reproduce Arrays.sort and the stable order. It checks the arithmetic of the kernels without a GPU;
 * SortGpuTest checks the kernels themselves on one.
 */
class SortKernelEmulatorTest {
    static final int CHUNK = SortGpu.CHUNK;
    static final int OUT_THREADS = SortGpu.OUT_THREADS;
    static final int OUT_ITEMS = CHUNK / OUT_THREADS;
    static final int RUNS_KEYS_PER_THREAD = 4;
    static final int NEXT_KEY_TRIES = 4;
    static final int TILE = SortGpu.TILE;
    static final int WARPS = SortGpu.SORT_THREADS / 32;
    static final int ITEMS = TILE / SortGpu.SORT_THREADS;

    // ------------------------------------------------------------------------------------------ pyramid

    static int off(int L, int l) {
        return (2 << L) - ((2 << L) >> l);
    }

    /** The pyramid as SortGpu.Pyramid.build launches sort_pyramid (level 0 = hist, zero padded). */
    static int[] pyramid(int[] hist, int L) {
        int[] pyr = new int[(int) SortGpu.pyramidEntries(L)];
        System.arraycopy(hist, 0, pyr, 0, hist.length);
        if (L == 0) {
            return pyr;
        }
        if (L <= SortGpu.PYR_SEG_LOG) {
            pyramidLaunch(pyr, L, 0, L, 1);
        } else {
            pyramidLaunch(pyr, L, 0, SortGpu.PYR_SEG_LOG, 1 << (L - SortGpu.PYR_SEG_LOG));
            pyramidLaunch(pyr, L, SortGpu.PYR_SEG_LOG, L - SortGpu.PYR_SEG_LOG, 1);
        }
        return pyr;
    }

    static void pyramidLaunch(int[] pyr, int L, int src, int levels, int grid) {
        for (int b = 0; b < grid; b++) {
            int[] seg = new int[2 << SortGpu.PYR_SEG_LOG];
            int size0 = 1 << levels;
            int in = off(L, src) + b * size0;
            System.arraycopy(pyr, in, seg, 0, size0);
            int inOff = 0;
            int size = size0;
            for (int lv = 1; lv <= levels; lv++) {
                int half = size >> 1;
                int out = off(L, src + lv) + b * half;
                for (int j = 0; j < half; j++) {
                    int v = seg[inOff + 2 * j] + seg[inOff + 2 * j + 1];
                    seg[inOff + size + j] = v;
                    pyr[out + j] = v;
                }
                inOff += size;
                size = half;
            }
        }
    }

    static int node(int[] pyr, int L, int l, int j) {
        return pyr[off(L, l) + j];
    }

    /** descend(): r[0] is p on entry, the offset in the run on exit. */
    static int descend(int[] pyr, int L, int l, int j, int[] r) {
        while (l > 0) {
            --l;
            j <<= 1;
            int c = node(pyr, L, l, j);
            if (r[0] >= c) {
                r[0] -= c;
                ++j;
            }
        }
        return j;
    }

    // ------------------------------------------------------------------------------------------ keys output

    /** keys_chunk over every block of a launch for positions [p0, p0 + count). */
    static void output(int[] pyr, int L, int p0, int count, boolean runs, int[] out, int outAt) {
        int grid = (count + CHUNK - 1) / CHUNK;
        for (int blk = 0; blk < grid; blk++) {
            int a = p0 + blk * CHUNK;
            int e = Math.min(p0 + count, a + CHUNK);
            int len = e - a;
            int[] pathBase = new int[32];
            int p = a;
            int start = 0;
            int j = 0;
            pathBase[L] = 0;
            for (int l = L; l > 0;) {
                --l;
                j <<= 1;
                int c = node(pyr, L, l, j);
                if (p >= c) {
                    p -= c;
                    start += c;
                    ++j;
                }
                pathBase[l] = start;
            }
            int ka = j;
            int kb = descend(pyr, L, L, 0, new int[] {e - 1});
            int[] vals = new int[CHUNK];
            if (ka == kb) {
                Arrays.fill(vals, ka);
            } else if (!runs) {
                int lam = 32 - Integer.numberOfLeadingZeros(ka ^ kb);
                int top = ka >> lam;
                int topStart = pathBase[lam];
                for (int tid = 0; tid < OUT_THREADS; tid++) {
                    int q = a + tid * OUT_ITEMS;
                    if (q >= e) {
                        continue;
                    }
                    int[] r = {q - topStart};
                    int k = descend(pyr, L, lam, top, r);
                    int c = node(pyr, L, 0, k);
                    for (int i = 0; i < OUT_ITEMS && q + i < e; i++) {
                        if (r[0] >= c) {
                            boolean found = false;
                            for (int t = 0; t < NEXT_KEY_TRIES && k + 1 + t <= kb; t++) {
                                int c2 = node(pyr, L, 0, k + 1 + t);
                                if (c2 != 0) {
                                    k = k + 1 + t;
                                    c = c2;
                                    r[0] = 0;
                                    found = true;
                                    break;
                                }
                            }
                            if (!found) {
                                r[0] = q + i - topStart;
                                k = descend(pyr, L, lam, top, r);
                                c = node(pyr, L, 0, k);
                            }
                        }
                        vals[tid * OUT_ITEMS + i] = k;
                        r[0]++;
                    }
                }
            } else {
                Arrays.fill(vals, -1);
                vals[0] = ka;
                int run = pathBase[0] + node(pyr, L, 0, ka);
                int window = OUT_THREADS * RUNS_KEYS_PER_THREAD;
                for (int w0 = ka + 1; w0 <= kb; w0 += window) {
                    int[] c = new int[window];
                    int[] s = new int[OUT_THREADS];
                    for (int tid = 0; tid < OUT_THREADS; tid++) {
                        int k0 = w0 + tid * RUNS_KEYS_PER_THREAD;
                        for (int q = 0; q < RUNS_KEYS_PER_THREAD; q++) {
                            c[tid * RUNS_KEYS_PER_THREAD + q] = k0 + q <= kb ? node(pyr, L, 0, k0 + q) : 0;
                            s[tid] += c[tid * RUNS_KEYS_PER_THREAD + q];
                        }
                    }
                    int excl = 0;
                    for (int tid = 0; tid < OUT_THREADS; tid++) {
                        int k0 = w0 + tid * RUNS_KEYS_PER_THREAD;
                        int pos = run + excl;
                        for (int q = 0; q < RUNS_KEYS_PER_THREAD; q++) {
                            int cq = c[tid * RUNS_KEYS_PER_THREAD + q];
                            if (cq != 0 && pos < e) {
                                vals[pos - a] = k0 + q;
                            }
                            pos += cq;
                        }
                        excl += s[tid];
                    }
                    run += excl;
                }
                int before = -1;
                int[] threadMax = new int[OUT_THREADS];
                for (int tid = 0; tid < OUT_THREADS; tid++) {
                    int mx = -1;
                    for (int i = 0; i < OUT_ITEMS; i++) {
                        mx = Math.max(mx, vals[tid * OUT_ITEMS + i]);
                    }
                    threadMax[tid] = mx;
                }
                for (int tid = 0; tid < OUT_THREADS; tid++) {
                    int cur = before;
                    for (int i = 0; i < OUT_ITEMS; i++) {
                        cur = Math.max(cur, vals[tid * OUT_ITEMS + i]);
                        vals[tid * OUT_ITEMS + i] = cur;
                    }
                    before = Math.max(before, threadMax[tid]);
                }
            }
            System.arraycopy(vals, 0, out, outAt + (a - p0), len);
        }
    }

    /** sortKeys as SortGpu runs it: histogram, pyramid, output in transfer chunks of {@code chunk} positions. */
    static int[] sortKeys(int[] keys, int m, boolean runs, int chunk) {
        int L = SortGpu.levels(m);
        int[] pyr = pyramid(SortTestData.refHistogram(keys, m), L);
        assertEquals(keys.length, pyr[pyr.length - 1], "root holds n");
        int n = keys.length;
        int[] out = new int[n];
        for (int p = 0; p < n; p += chunk) {
            int c = Math.min(chunk, n - p);
            int[] stage = new int[c];
            output(pyr, L, p, c, runs, stage, 0);
            System.arraycopy(stage, 0, out, p, c);
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------ stable passes

    /** write_tile: the tile's elements in rank order written at delta[digit] + rank. */
    static void writeTile(int[] sKey, int[] sIdx, long[] delta, int shift, int mask, int len, int[] keysOut,
                          long[] idxOut, long offset) {
        for (int r = 0; r < len; r++) {
            int k = sKey[r];
            int pos = (int) (delta[(k >>> shift) & mask] + r);
            if (keysOut != null) {
                keysOut[pos] = k;
            }
            idxOut[pos] = offset + sIdx[r];
        }
    }

    /** One pass: sort_count, sort_rowscan and sort_scatter over every tile. idxOut gets offset + index. */
    static void pass(int[] keysIn, int[] idxIn, int n, int shift, int bits, int[] keysOut, long[] idxOut, long offset) {
        int tiles = SortGpu.tiles(n);
        int digits = 1 << bits;
        int mask = digits - 1;
        long[] counts = new long[digits * tiles];
        for (int t = 0; t < tiles; t++) {
            int base = t * TILE;
            int len = Math.min(TILE, n - base);
            for (int e = 0; e < len; e++) {
                counts[((keysIn[base + e] >>> shift) & mask) * tiles + t]++;
            }
        }
        long[] rowTotals = new long[digits];
        for (int d = 0; d < digits; d++) {
            long carry = 0;
            for (int t = 0; t < tiles; t++) {
                long v = counts[d * tiles + t];
                counts[d * tiles + t] = carry;
                carry += v;
            }
            rowTotals[d] = carry;
        }
        long[] digitStart = new long[digits];
        for (int d = 1; d < digits; d++) {
            digitStart[d] = digitStart[d - 1] + rowTotals[d - 1];
        }
        int radixDigits = 1 << SortGpu.radixOf(bits);
        for (int t = 0; t < tiles; t++) {
            int base = t * TILE;
            int len = Math.min(TILE, n - base);
            int[] key = new int[TILE];
            int[] digit = new int[TILE];
            int[] elem = new int[TILE];
            int at = 0; // warp-striped order: warp, item, lane
            for (int w = 0; w < WARPS; w++) {
                for (int i = 0; i < ITEMS; i++) {
                    for (int lane = 0; lane < 32; lane++) {
                        int e = w * ITEMS * 32 + i * 32 + lane;
                        key[at] = e < len ? keysIn[base + e] : 0xffffffff;
                        digit[at] = (key[at] >>> shift) & mask;
                        assertEquals(true, digit[at] < radixDigits, "digit fits the rank kernel");
                        elem[at] = e;
                        at++;
                    }
                }
            }
            int[] firstRank = new int[radixDigits];
            int[] tileCount = new int[radixDigits];
            for (int x = 0; x < TILE; x++) {
                tileCount[digit[x]]++;
            }
            for (int d = 1; d < radixDigits; d++) {
                firstRank[d] = firstRank[d - 1] + tileCount[d - 1];
            }
            int[] seen = new int[radixDigits];
            int[] sKey = new int[TILE];
            int[] sIdx = new int[TILE];
            for (int x = 0; x < TILE; x++) {
                int rank = firstRank[digit[x]] + seen[digit[x]]++;
                sKey[rank] = key[x];
                if (elem[x] < len) {
                    sIdx[rank] = idxIn != null ? idxIn[base + elem[x]] : base + elem[x];
                } else {
                    assertEquals(true, rank >= len, "tail elements rank after the tile's elements");
                }
            }
            long[] delta = new long[digits];
            for (int d = 0; d < digits; d++) {
                delta[d] = digitStart[d] + counts[d * tiles + t] - firstRank[d];
            }
            writeTile(sKey, sIdx, delta, shift, mask, len, keysOut, idxOut, offset);
        }
    }

    /** One pass of a pass chain: keys and indices in (indices null in pass 0), out; idxOut gets offset + index. */
    interface Pass {
        void run(int[] keysIn, int[] idxIn, int shift, int bits, int pass, int[] keysOut, long[] idxOut, long offset);
    }

    /** The passes over {@code bits}, buffers swapped between passes as Stable.run does; the last pass's indices. */
    static long[] chain(int[] keys, int[] bits, long first, Pass pass) {
        int n = keys.length;
        int[] kIn = keys.clone();
        int[] iIn = null;
        long[] result = new long[n];
        int shift = 0;
        for (int p = 0; p < bits.length; p++) {
            boolean last = p == bits.length - 1;
            int[] kOut = last ? null : new int[n];
            long[] iOut = new long[n];
            pass.run(kIn, iIn, shift, bits[p], p, kOut, iOut, last ? first : 0);
            shift += bits[p];
            if (last) {
                result = iOut;
            } else {
                kIn = kOut;
                iIn = new int[n];
                for (int i = 0; i < n; i++) {
                    iIn[i] = (int) iOut[i];
                }
            }
        }
        return result;
    }

    /** The stable order with SortGpu's pass plan and the classic kernels. */
    static long[] order(int[] keys, int m, long first) {
        int n = keys.length;
        return chain(keys, SortGpu.passBits(m), first,
                (kIn, iIn, shift, b, p, kOut, iOut, off) -> pass(kIn, iIn, n, shift, b, kOut, iOut, off));
    }

    // ------------------------------------------------------------------------------------------ onesweep passes

    /**
     * sort_os_hist: the digit counts of passes [from, from + count) of keys in one read, hist row from + q for pass
     * q, its bits the q-th nibble of SortGpu.packBits and its shift the sum of the bits before.
     */
    static void osHist(int[] keys, int[] bits, int from, int count, long[] hist) {
        int packed = SortGpu.packBits(bits, from, count);
        int[] shifts = new int[4];
        int[] masks = new int[4];
        int sh = 0;
        for (int q = 0; q < 4; q++) {
            int b = q < count ? (packed >>> (4 * q)) & 15 : 0;
            shifts[q] = sh;
            masks[q] = (1 << b) - 1;
            sh += b;
        }
        for (int k : keys) {
            for (int q = 0; q < count; q++) {
                hist[(from + q) * 256 + ((k >>> shifts[q]) & masks[q])]++;
            }
        }
    }

    /**
     * sort_os_pass for pass {@code pass}: tiles in order of their tile counter; each publishes its digit counts
     * (flag 2 pass + 1) and walks back over earlier tiles' words to an inclusive prefix (flag 2 pass + 2). A tile's
     * own inclusive word is written at once or, chosen by {@code r}, only after later tiles ran, so that later
     * tiles walk over aggregates, as they do on a GPU where tiles finish out of order. Status words of earlier
     * passes are left in place, as the kernel leaves them.
     */
    static void osPass(int[] keysIn, int[] idxIn, int n, int shift, int bits, int pass, long[] hist, long[] status,
                       int[] keysOut, long[] idxOut, long offset, SplittableRandom r) {
        int tiles = SortGpu.tiles(n);
        int digits = 1 << bits;
        int mask = digits - 1;
        long agg = (long) (2 * pass + 1) << 32;
        long incl = (long) (2 * pass + 2) << 32;
        long[] digitStart = new long[digits];
        for (int d = 1; d < digits; d++) {
            digitStart[d] = digitStart[d - 1] + hist[pass * 256 + d - 1];
        }
        List<long[]> deferred = new ArrayList<>(); // {index into status, word}
        for (int t = 0; t < tiles; t++) {
            int base = t * TILE;
            int len = Math.min(TILE, n - base);
            int[] key = new int[TILE];
            int[] elem = new int[TILE];
            int at = 0;
            for (int w = 0; w < WARPS; w++) {
                for (int i = 0; i < ITEMS; i++) {
                    for (int lane = 0; lane < 32; lane++) {
                        int e = w * ITEMS * 32 + i * 32 + lane;
                        key[at] = e < len ? keysIn[base + e] : 0xffffffff;
                        elem[at] = e;
                        at++;
                    }
                }
            }
            int[] tileCount = new int[256];
            for (int x = 0; x < TILE; x++) {
                tileCount[(key[x] >>> shift) & mask]++;
            }
            int[] sFirst = new int[256];
            for (int d = 1; d < digits; d++) {
                sFirst[d] = sFirst[d - 1] + tileCount[d - 1];
            }
            long[] delta = new long[digits];
            for (int d = 0; d < digits; d++) {
                long count = (d + 1 < digits ? sFirst[d + 1] : len) - sFirst[d];
                long before = 0;
                int self = t * 256 + d;
                if (t == 0) {
                    status[self] = incl | count;
                } else {
                    status[self] = agg | count;
                    for (int j = t - 1;;) {
                        long v = status[j * 256 + d];
                        long f = v & 0xffffffff00000000L;
                        if (f == incl) {
                            before += v & 0xffffffffL;
                            break;
                        }
                        assertEquals(agg, f, "tile " + j + " has published its count before tile " + t + " reads it");
                        before += v & 0xffffffffL;
                        j--;
                    }
                    if (r.nextInt(3) == 0) {
                        deferred.add(new long[] {self, incl | (before + count)});
                    } else {
                        status[self] = incl | (before + count);
                    }
                }
                delta[d] = digitStart[d] + before - sFirst[d];
            }
            if (r.nextInt(4) == 0) { // some deferred tiles finish now
                for (long[] x : deferred) {
                    status[(int) x[0]] = x[1];
                }
                deferred.clear();
            }
            int[] seen = new int[256];
            int[] sKey = new int[TILE];
            int[] sIdx = new int[TILE];
            for (int x = 0; x < TILE; x++) {
                int d = (key[x] >>> shift) & mask;
                int rank = sFirst[d] + seen[d]++;
                sKey[rank] = key[x];
                if (elem[x] < len) {
                    sIdx[rank] = idxIn != null ? idxIn[base + elem[x]] : base + elem[x];
                }
            }
            writeTile(sKey, sIdx, delta, shift, mask, len, keysOut, idxOut, offset);
        }
    }

    /** The stable order as Stable.runOnesweep launches it (one histogram read, then a pass kernel a pass). */
    static long[] orderOnesweep(int[] keys, int m, long first, long seed) {
        int n = keys.length;
        int[] bits = SortGpu.passBits(m);
        SplittableRandom r = new SplittableRandom(seed);
        long[] hist = new long[SortGpu.OS_MAX_PASSES * 256];
        long[] status = new long[SortGpu.tiles(n) * 256];
        osHist(keys, bits, 0, bits.length, hist);
        return chain(keys, bits, first,
                (kIn, iIn, shift, b, p, kOut, iOut, off) -> osPass(kIn, iIn, n, shift, b, p, hist, status, kOut, iOut,
                        off, r));
    }

    // ------------------------------------------------------------------------------------------ tests

    @Test
    void pyramidLevelsArePairwiseSumsInTheDocumentedLayout() {
        for (int L : new int[] {0, 1, 2, 5, 12, 13, 16}) {
            int m = 1 << L;
            int[] hist = SortTestData.uniform(m, 50, L);
            int[] pyr = pyramid(hist, L);
            for (int l = 1; l <= L; l++) {
                for (int j = 0; j < (m >> l); j++) {
                    assertEquals(node(pyr, L, l - 1, 2 * j) + node(pyr, L, l - 1, 2 * j + 1), node(pyr, L, l, j),
                            "L=" + L + " level " + l + " node " + j);
                }
            }
            assertEquals(Arrays.stream(hist).sum(), pyr[pyr.length - 1]);
        }
    }

    @Test
    void bothOutputKernelsReproduceArraysSort() {
        long seed = 10;
        for (int m : SortTestData.boundaryRanges()) {
            if (m > (1 << 20) && m != (1 << 24)) {
                continue;
            }
            for (SortTestData.Case c : SortTestData.CASES) {
                if (c.name().equals("zipf-1.2") && m > (1 << 16)) {
                    continue;
                }
                for (int n : new int[] {1, 3, 4095, 4096, 4097, 20_011}) {
                    int[] keys = c.gen().keys(n, m, seed++);
                    int[] want = SortTestData.refSort(keys);
                    for (boolean runs : new boolean[] {false, true}) {
                        for (int chunk : new int[] {n, 5000}) {
                            assertArrayEquals(want, sortKeys(keys, m, runs, chunk), c.name() + " n=" + n + " m=" + m
                                    + (runs ? " runs" : " descent") + " chunk " + chunk);
                        }
                    }
                }
            }
        }
    }

    @Test
    void stablePassesReproduceTheStableOrder() {
        long seed = 2000;
        for (int m : SortTestData.boundaryRanges()) {
            if (m > (1 << 20) && m != (1 << 24)) {
                continue;
            }
            for (SortTestData.Case c : SortTestData.CASES) {
                if (c.name().equals("zipf-1.2") && m > (1 << 16)) {
                    continue;
                }
                for (int n : new int[] {1, 31, 4095, 4097, 12_289}) {
                    int[] keys = c.gen().keys(n, m, seed++);
                    long[] want = SortTestData.plus(SortTestData.refOrder(keys), 1L << 33);
                    assertArrayEquals(want, order(keys, m, 1L << 33), c.name() + " n=" + n + " m=" + m);
                }
            }
        }
    }

    @Test
    void onesweepPassesReproduceTheStableOrder() {
        long seed = 3000;
        for (int m : new int[] {257, 1000, 1 << 16, (1 << 16) + 1, 1 << 20, 1 << 24}) {
            assertEquals(true, SortGpu.onesweep(SortGpu.passBits(m)), "m=" + m + " runs onesweep");
            for (SortTestData.Case c : SortTestData.CASES) {
                if (c.name().equals("zipf-1.2") && m > (1 << 16)) {
                    continue;
                }
                for (int n : new int[] {1, 4095, 4097, 40_961}) {
                    int[] keys = c.gen().keys(n, m, seed++);
                    long[] want = SortTestData.plus(SortTestData.refOrder(keys), 5);
                    assertArrayEquals(want, orderOnesweep(keys, m, 5, seed), c.name() + " n=" + n + " m=" + m);
                }
            }
        }
        assertEquals(false, SortGpu.onesweep(SortGpu.passBits(256)), "one pass keeps the classic kernels");
        assertEquals(0x887, SortGpu.packBits(new int[] {5, 7, 8, 8}, 1, 3));
        String saved = SortGpu.stableKernel;
        try {
            SortGpu.stableKernel = "classic";
            assertEquals(false, SortGpu.onesweep(SortGpu.passBits(1 << 24)));
            SortGpu.stableKernel = "fast";
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> SortGpu.onesweep(SortGpu.passBits(1 << 24)));
            assertEquals("sparkgpu.sort.stableKernel must be onesweep or classic, got 'fast'", e.getMessage());
        } finally {
            SortGpu.stableKernel = saved;
        }
    }

    @Test
    void theAutomaticOutputKernelFollowsKeyDensity() {
        String saved = SortGpu.keysKernel;
        try {
            SortGpu.keysKernel = "auto";
            assertEquals("sort_keys_runs", SortGpu.outputKernel(1 << 16, 10_000_000));
            assertEquals("sort_keys_runs", SortGpu.outputKernel(1 << 20, 1_048_576));
            assertEquals("sort_keys_descent", SortGpu.outputKernel(1 << 20, 1000));
            assertEquals("radix", SortGpu.outputKernel((1 << 20) + 1, 1000));
            assertEquals("radix", SortGpu.outputKernel(1 << 24, 1_048_576));
            assertEquals("sort_keys_runs", SortGpu.pyramidKernel(1 << 24, 1_048_576));
            assertEquals("sort_keys_descent", SortGpu.pyramidKernel(1 << 24, 1000));
            for (SortTestData.Case c : SortTestData.CASES) {
                int[] keys = c.gen().keys(200_000, 1 << 24, 77);
                boolean spread = c.name().equals("uniform") || c.name().equals("sorted") || c.name().equals("reversed");
                assertEquals(spread, SortGpu.spread(keys), c.name());
                assertEquals(spread ? "radix" : SortGpu.pyramidKernel(1 << 24, keys.length),
                        SortGpu.outputKernel(1 << 24, keys.length, keys),
                        c.name());
            }
            SortGpu.keysKernel = "Descent";
            assertEquals("sort_keys_descent", SortGpu.outputKernel(16, 10_000_000));
            assertEquals("sort_keys_descent", SortGpu.outputKernel(1 << 24, 10_000_000));
            SortGpu.keysKernel = "radix";
            assertEquals("radix", SortGpu.outputKernel(257, 10));
            assertEquals("sort_keys_runs", SortGpu.outputKernel(256, 10_000), "one pass: the pyramid");
            SortGpu.keysKernel = "fast";
            IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> SortGpu.outputKernel(16, 10));
            assertEquals("sparkgpu.sort.keysKernel must be auto, runs, descent or radix, got 'fast'", e.getMessage());
        } finally {
            SortGpu.keysKernel = saved;
        }
        assertEquals(8, SortGpu.sharedCopies(256, 227 * 1024));
        assertEquals(1, SortGpu.sharedCopies(1 << 15, 227 * 1024));
        assertEquals(0, SortGpu.sharedCopies((1 << 15) + 1, 227 * 1024));
        assertEquals(0, SortGpu.sharedCopies(1 << 14, 48 * 1024));
    }
}
