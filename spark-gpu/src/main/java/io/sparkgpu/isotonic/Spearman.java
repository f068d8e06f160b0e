package io.sparkgpu.isotonic;

import java.math.BigInteger;

/**
 * The sign of Spearman's rank correlation, which {@code increasing=auto} uses to pick the direction as
 * scikit-learn's {@code check_increasing} does (increasing when rho >= 0). Ranks are 1-based with ties given
 * their average rank; the sign of rho is the sign of sum(rx*ry) - n((n+1)/2)^2, computed exactly with doubled
 * (integer) ranks. A constant feature or label (rho undefined) counts as increasing.
 */
final class Spearman {
    private Spearman() {
    }

    /** Doubled average ranks (2 * rank, an integer) of v[0..n). */
    static long[] doubledRanks(double[] v, int n) {
        long[] keys = new long[n];
        int[] idx = new int[n];
        for (int i = 0; i < n; i++) {
            keys[i] = IsoPoints.sortKey(v[i]);
            idx[i] = i;
        }
        io.sparkgpu.sort.PairRadixSort.sort(keys, idx, n);
        long[] r = new long[n];
        int a = 0;
        while (a < n) {
            int b = a;
            while (b + 1 < n && keys[b + 1] == keys[a]) {
                b++;
            }
            long twice = (long) (a + 1) + (b + 1); // average of 1-based positions a+1..b+1, doubled
            for (int k = a; k <= b; k++) {
                r[idx[k]] = twice;
            }
            a = b + 1;
        }
        return r;
    }

    /** True when Spearman's rho of (x, y) is >= 0 or undefined. */
    public static boolean increasing(double[] x, double[] y, int n) {
        long[] rx = doubledRanks(x, n);
        long[] ry = doubledRanks(y, n);
        BigInteger sum = BigInteger.ZERO;
        long chunk = 0;
        for (int i = 0; i < n; i++) {
            long p = rx[i] * ry[i]; // < (2n)^2 = 4n^2, fits while n < 1.5e9
            if (chunk > Long.MAX_VALUE - p) {
                sum = sum.add(BigInteger.valueOf(chunk));
                chunk = 0;
            }
            chunk += p;
        }
        sum = sum.add(BigInteger.valueOf(chunk));
        return signOfNumerator(sum, n) >= 0;
    }

    /** Sign of 4*(sum(rx*ry) - n((n+1)/2)^2) given the sum of doubled-rank products. */
    public static int signOfNumerator(BigInteger sumDoubledProducts, long n) {
        BigInteger np1 = BigInteger.valueOf(n + 1);
        return sumDoubledProducts.subtract(BigInteger.valueOf(n).multiply(np1).multiply(np1)).signum();
    }
}
