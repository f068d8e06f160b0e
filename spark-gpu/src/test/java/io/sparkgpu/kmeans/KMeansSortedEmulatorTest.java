package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.common.FixedPoint;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A Java replica of the sorted accumulation's bookkeeping (kmeans.cu, "Sorted accumulation":
 * sortedAccumulateTile and flushRun): tiles of BLOCK * NP points, ranks from a histogram taken in a random order
 * (the shared atomics' order is arbitrary), the exclusive scan, the scatter, each warp's equal share of the
 * sorted positions, the groups of DW lanes taking alternate positions in batches of U, runs flushed where the
 * label changes. Every quantized value is added with the twin's FixedPoint arithmetic, so the result must equal
 * KMeansCpu.step bit for bit; a point skipped or counted twice by the partitioning changes the counts. Runs
 * without a GPU; the GPU tests (KMeansGpuTest) check the kernels themselves.
 */
class KMeansSortedEmulatorTest {

    /** The accumulator the sorted kernels build from the twin's labels and distances. */
    static long[] emulate(KMeansData p, int k, KMeansScales sc, int[] labels, double[] dists, Random order,
                          int[] runsOut) {
        return emulate(p, k, sc, labels, dists, order, runsOut, false);
    }

    /** With {@code floorShare} the warps' shares are rounded down (a deliberate bug: the tail is dropped). */
    static long[] emulate(KMeansData p, int k, KMeansScales sc, int[] labels, double[] dists, Random order,
                          int[] runsOut, boolean floorShare) {
        final int d = p.d;
        final int dmax = d <= 8 ? 8 : d <= 16 ? 16 : d <= 32 ? 32 : 64;
        final int np = KMeansGpu.pointsPerThread(d); // the FP64 kernels' tile; the screening ones differ only in NP
        final int block = KMeansGpu.BLOCK;
        final int tile = block * np;
        final int nw = block / 32;
        final int dw = Math.min(dmax, 32);
        final int groups = 32 / dw;
        final int passes = dmax > 32 ? 2 : 1;
        final int u = passes == 1 ? 8 : 4;
        final double[] m = sc.multipliers;
        final long[] acc = new long[KMeansAccumulator.length(k, d)];
        final int costAt = KMeansAccumulator.costAt(k, d);
        for (int base = 0; base < p.n; base += tile) {
            final int valid = Math.min(tile, p.n - base);
            // 1. ranks in an arbitrary order
            int[] cnt = new int[k];
            int[] rank = new int[valid];
            Integer[] perm = new Integer[valid];
            for (int t = 0; t < valid; t++) {
                perm[t] = t;
            }
            java.util.Collections.shuffle(Arrays.asList(perm), order);
            for (int t : perm) {
                rank[t] = cnt[labels[base + t]]++;
                FixedPoint.add(acc, costAt, p.w[base + t] * dists[base + t], m[2 * d + 2], m[2 * d + 3]);
            }
            // 2. exclusive scan
            int[] off = new int[k + 1];
            for (int c = 0; c < k; c++) {
                off[c + 1] = off[c] + cnt[c];
            }
            assertEquals(valid, off[k]);
            // 3. scatter
            int[] idx = new int[tile];
            int[] lab = new int[tile];
            Arrays.fill(idx, -1);
            for (int t = 0; t < valid; t++) {
                int at = off[labels[base + t]] + rank[t];
                assertEquals(-1, idx[at], "two points scattered to one position");
                idx[at] = t;
                lab[at] = labels[base + t];
            }
            // 4. shares, groups, batches, runs
            final int per = floorShare ? valid / nw : (valid + nw - 1) / nw;
            for (int wp = 0; wp < nw; wp++) {
                final int from = Math.min(valid, wp * per);
                final int to = Math.min(valid, from + per);
                for (int g = 0; g < groups; g++) {
                    int cur = -1;
                    long run = 0;
                    long[] sums = new long[2 * d];
                    long[] wsum = new long[2];
                    for (int t0 = from + g; t0 < to; t0 += u * groups) {
                        for (int b = 0; b < u; b++) {
                            final int t = t0 + b * groups;
                            if (t >= to) {
                                continue;
                            }
                            if (lab[t] != cur) {
                                if (cur >= 0) {
                                    flush(acc, cur, k, d, sums, wsum, run);
                                    runsOut[0]++;
                                }
                                cur = lab[t];
                                run = 0;
                                sums = new long[2 * d];
                                wsum = new long[2];
                            }
                            final int i = base + idx[t];
                            final double wi = p.w[i];
                            for (int q = 0; q < passes; q++) {
                                for (int jl = 0; jl < dw; jl++) {
                                    final int j = q * 32 + jl;
                                    if (j < d) {
                                        FixedPoint.add(sums, 2 * j, wi * p.x[i * d + j], m[2 * j], m[2 * j + 1]);
                                    }
                                }
                            }
                            FixedPoint.add(wsum, 0, wi, m[2 * d], m[2 * d + 1]);
                            run++;
                        }
                    }
                    if (cur >= 0) {
                        flush(acc, cur, k, d, sums, wsum, run);
                        runsOut[0]++;
                    }
                }
            }
        }
        return acc;
    }

    private static void flush(long[] acc, int c, int k, int d, long[] sums, long[] wsum, long run) {
        for (int j = 0; j < d; j++) {
            FixedPoint.addPair(acc, KMeansAccumulator.sumAt(c, j, d), sums[2 * j], sums[2 * j + 1]);
        }
        FixedPoint.addPair(acc, KMeansAccumulator.weightAt(c, k, d), wsum[0], wsum[1]);
        acc[KMeansAccumulator.countAt(c, k, d)] += run;
    }

    @Test
    void sortedBookkeepingGivesTheTwinsBits() {
        Random r = new Random(606);
        int cases = 0;
        for (int d : new int[] {1, 3, 5, 8, 16, 31, 32, 33, 64}) {
            for (int k : new int[] {1, 2, 3, 64, 1000}) {
                for (int n : new int[] {1, 511, 513, 3000 + d}) {
                    KMeansData p = KMeansGpuTest.data(r, n, d, false);
                    double[] centres = KMeansGpuTest.centresFrom(p, k, r);
                    KMeansScales sc = KMeansCpuTest.scalesFor(p, false);
                    int[] labels = new int[n];
                    double[] dists = new double[n];
                    long[] twin = KMeansCpu.step(p, centres, k, false, sc, true, labels, dists, false);
                    int[] runs = new int[1];
                    long[] sorted = emulate(p, k, sc, labels, dists, new Random(r.nextLong()), runs);
                    assertArrayEquals(twin, sorted, "n=" + n + " d=" + d + " k=" + k);
                    assertTrue(runs[0] <= n, "runs " + runs[0] + " of " + n + " points");
                    cases++;
                }
            }
        }
        assertEquals(9 * 5 * 4, cases);
    }

    /** The replica is sensitive to its partitioning: shares rounded down drop a tile's tail, and that shows. */
    @Test
    void aDroppedTailIsDetected() {
        Random r = new Random(607);
        KMeansData p = KMeansGpuTest.data(r, 2001, 7, false); // last tile: 465 points, not a multiple of 8 warps
        double[] centres = KMeansGpuTest.centresFrom(p, 5, r);
        KMeansScales sc = KMeansCpuTest.scalesFor(p, false);
        int[] labels = new int[p.n];
        double[] dists = new double[p.n];
        long[] twin = KMeansCpu.step(p, centres, 5, false, sc, true, labels, dists, false);
        assertArrayEquals(twin, emulate(p, 5, sc, labels, dists, new Random(1), new int[1], false));
        assertFalse(Arrays.equals(twin, emulate(p, 5, sc, labels, dists, new Random(1), new int[1], true)));
    }

    /** Few runs on clustered tiles: the point of the variant (atomics per run, not per point). */
    @Test
    void runsAreFewWhenTilesHoldFewClusters() {
        Random r = new Random(608);
        int n = 20_000;
        int d = 32;
        KMeansData p = KMeansGpuTest.data(r, n, d, false);
        double[] centres = KMeansGpuTest.centresFrom(p, 64, r);
        KMeansScales sc = KMeansCpuTest.scalesFor(p, false);
        int[] labels = new int[n];
        double[] dists = new double[n];
        long[] twin = KMeansCpu.step(p, centres, 64, false, sc, true, labels, dists, false);
        int[] runs = new int[1];
        assertArrayEquals(twin, emulate(p, 64, sc, labels, dists, new Random(2), runs));
        // per 512-point tile at most 64 non-empty clusters + 8 warp boundaries
        long tiles = (n + 511) / 512;
        assertTrue(runs[0] <= tiles * (64 + 8), "runs " + runs[0]);
        assertTrue(runs[0] < n / 4, "runs " + runs[0] + " of " + n + " points");
    }
}
