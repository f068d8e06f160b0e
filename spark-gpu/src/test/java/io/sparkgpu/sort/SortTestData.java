package io.sparkgpu.sort;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/** Key arrays for the sort tests and the references they are checked against. */
final class SortTestData {
    private SortTestData() {
    }

    /** A named key distribution over [0, m). */
    interface Gen {
        int[] keys(int n, int m, long seed);
    }

    record Case(String name, Gen gen) {
    }

    /** Uniform, sorted, reversed, all equal, one key holding half, both extremes, Zipf(1.2). */
    static final List<Case> CASES = List.of(
            new Case("uniform", SortTestData::uniform),
            new Case("sorted", (n, m, s) -> sorted(uniform(n, m, s))),
            new Case("reversed", (n, m, s) -> reversed(sorted(uniform(n, m, s)))),
            new Case("all-equal", (n, m, s) -> filled(n, (int) (Math.floorMod(s * 0x9E3779B97F4A7C15L, m)))),
            new Case("one-hot-50%", SortTestData::oneHot),
            new Case("extremes", SortTestData::extremes),
            new Case("zipf-1.2", (n, m, s) -> zipf(n, m, 1.2, s)));

    /** Key ranges 1, 2, 3 and 2^k, 2^k + 1 up to 2^24. */
    static List<Integer> boundaryRanges() {
        List<Integer> r = new ArrayList<>(List.of(1, 2, 3));
        for (int k = 2; k <= 24; k++) {
            r.add(1 << k);
            if (k < 24) {
                r.add((1 << k) + 1);
            }
        }
        return r;
    }

    static int[] uniform(int n, int m, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] k = new int[n];
        for (int i = 0; i < n; i++) {
            k[i] = r.nextInt(m);
        }
        return k;
    }

    static int[] sorted(int[] k) {
        int[] c = k.clone();
        Arrays.sort(c);
        return c;
    }

    static int[] reversed(int[] k) {
        int[] c = new int[k.length];
        for (int i = 0; i < k.length; i++) {
            c[i] = k[k.length - 1 - i];
        }
        return c;
    }

    static int[] filled(int n, int v) {
        int[] k = new int[n];
        Arrays.fill(k, v);
        return k;
    }

    /** Half of the keys (at random places) equal one key, the rest uniform. */
    static int[] oneHot(int n, int m, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int hot = r.nextInt(m);
        int[] k = new int[n];
        for (int i = 0; i < n; i++) {
            k[i] = r.nextBoolean() ? hot : r.nextInt(m);
        }
        return k;
    }

    /** Only 0 and m - 1, alternating in runs of random length. */
    static int[] extremes(int n, int m, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        int[] k = new int[n];
        int v = 0;
        for (int i = 0; i < n; i++) {
            if (r.nextInt(5) == 0) {
                v = v == 0 ? m - 1 : 0;
            }
            k[i] = v;
        }
        return k;
    }

    /**
     * Zipf(s) over ranks 1..m (rank r with probability proportional to r^-s) by inverse CDF, rank r mapped to key
     * (r - 1) * 0x9E3779B1 mod m when m is a power of two (spreading the frequent keys), else to r - 1.
     */
    static int[] zipf(int n, int m, double s, long seed) {
        double[] cdf = new double[m];
        double acc = 0;
        for (int r = 0; r < m; r++) {
            acc += Math.pow(r + 1, -s);
            cdf[r] = acc;
        }
        SplittableRandom rnd = new SplittableRandom(seed);
        boolean pow2 = Integer.bitCount(m) == 1;
        int[] k = new int[n];
        for (int i = 0; i < n; i++) {
            double u = rnd.nextDouble() * acc;
            int idx = Arrays.binarySearch(cdf, u);
            int r = idx >= 0 ? idx : Math.min(m - 1, -idx - 1);
            k[i] = pow2 ? (int) ((r * 0x9E3779B1L) & (m - 1)) : r;
        }
        return k;
    }

    // ------------------------------------------------------------------------------------------ references

    static int[] refHistogram(int[] keys, int m) {
        int[] h = new int[m];
        for (int k : keys) {
            h[k]++;
        }
        return h;
    }

    static int[] refSort(int[] keys) {
        return sorted(keys);
    }

    /** The stable order by sorting (key, index) pairs packed in longs. */
    static int[] refOrder(int[] keys) {
        long[] p = new long[keys.length];
        for (int i = 0; i < keys.length; i++) {
            p[i] = ((long) keys[i] << 32) | i;
        }
        Arrays.sort(p);
        int[] o = new int[keys.length];
        for (int i = 0; i < o.length; i++) {
            o[i] = (int) p[i];
        }
        return o;
    }

    static long[] plus(int[] order, long first) {
        long[] o = new long[order.length];
        for (int i = 0; i < o.length; i++) {
            o[i] = first + order[i];
        }
        return o;
    }
}
