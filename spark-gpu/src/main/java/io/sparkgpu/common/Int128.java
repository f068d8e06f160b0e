package io.sparkgpu.common;

/**
 * Exact arithmetic on the 128-bit two's-complement integers of {@link FixedPoint} (a pair lo, hi with value
 * hi * 2^64 + unsigned(lo)), mirrored instruction for instruction by the device functions of the CUDA kernels
 * that use them (isotonic.cu), so that both decide every comparison identically.
 *
 * <p>The central operation is {@link #compareRatio}: the order of two fractions s1/w1 and s2/w2 with positive
 * denominators, decided exactly by comparing the 256-bit products s1*w2 and s2*w1. Values are expected below
 * 2^126 in magnitude (FixedPoint keeps sums below 2^124), so the products fit in 256 bits.
 */
public final class Int128 {
    private Int128() {
    }

    /** High 64 bits of the unsigned 128-bit product of a and b. */
    public static long umulHi(long a, long b) {
        return Math.multiplyHigh(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
    }

    /** -1, 0 or 1: the sign of hi * 2^64 + lo. */
    public static int signum(long lo, long hi) {
        return hi < 0 ? -1 : (hi == 0 && lo == 0 ? 0 : 1);
    }

    /**
     * Compares the unsigned 256-bit products (a1:a0) * (b1:b0) and (c1:c0) * (d1:d0); operands are unsigned
     * 128-bit values whose products stay below 2^256.
     */
    static int compareProducts(long a0, long a1, long b0, long b1, long c0, long c1, long d0, long d1) {
        // first product, limbs p0..p3
        long p0 = a0 * b0;
        long h00 = umulHi(a0, b0);
        long l01 = a0 * b1;
        long h01 = umulHi(a0, b1);
        long l10 = a1 * b0;
        long h10 = umulHi(a1, b0);
        long l11 = a1 * b1;
        long h11 = umulHi(a1, b1);
        long p1 = h00 + l01;
        long k = Long.compareUnsigned(p1, h00) < 0 ? 1 : 0;
        long t = p1 + l10;
        k += Long.compareUnsigned(t, p1) < 0 ? 1 : 0;
        p1 = t;
        long p2 = h01 + h10;
        long k2 = Long.compareUnsigned(p2, h01) < 0 ? 1 : 0;
        t = p2 + l11;
        k2 += Long.compareUnsigned(t, p2) < 0 ? 1 : 0;
        p2 = t;
        t = p2 + k;
        k2 += Long.compareUnsigned(t, p2) < 0 ? 1 : 0;
        p2 = t;
        long p3 = h11 + k2;

        long q0 = c0 * d0;
        long g00 = umulHi(c0, d0);
        long m01 = c0 * d1;
        long g01 = umulHi(c0, d1);
        long m10 = c1 * d0;
        long g10 = umulHi(c1, d0);
        long m11 = c1 * d1;
        long g11 = umulHi(c1, d1);
        long q1 = g00 + m01;
        long j = Long.compareUnsigned(q1, g00) < 0 ? 1 : 0;
        t = q1 + m10;
        j += Long.compareUnsigned(t, q1) < 0 ? 1 : 0;
        q1 = t;
        long q2 = g01 + g10;
        long j2 = Long.compareUnsigned(q2, g01) < 0 ? 1 : 0;
        t = q2 + m11;
        j2 += Long.compareUnsigned(t, q2) < 0 ? 1 : 0;
        q2 = t;
        t = q2 + j;
        j2 += Long.compareUnsigned(t, q2) < 0 ? 1 : 0;
        q2 = t;
        long q3 = g11 + j2;

        if (p3 != q3) {
            return Long.compareUnsigned(p3, q3);
        }
        if (p2 != q2) {
            return Long.compareUnsigned(p2, q2);
        }
        if (p1 != q1) {
            return Long.compareUnsigned(p1, q1);
        }
        return Long.compareUnsigned(p0, q0);
    }

    /**
     * The sign of s1/w1 - s2/w2, exactly, for signed numerators s and positive denominators w (all 128-bit).
     * Decided from the signs and then from the unsigned products |s1|*w2 and |s2|*w1.
     */
    public static int compareRatio(long s1Lo, long s1Hi, long w1Lo, long w1Hi, long s2Lo, long s2Hi, long w2Lo, long w2Hi) {
        int g1 = signum(s1Lo, s1Hi);
        int g2 = signum(s2Lo, s2Hi);
        if (g1 != g2) {
            return g1 < g2 ? -1 : 1;
        }
        if (g1 == 0) {
            return 0;
        }
        long a0 = s1Lo;
        long a1 = s1Hi;
        long c0 = s2Lo;
        long c1 = s2Hi;
        if (g1 < 0) { // both negative: compare magnitudes, reversed
            a1 = ~a1 + (a0 == 0 ? 1 : 0);
            a0 = -a0;
            c1 = ~c1 + (c0 == 0 ? 1 : 0);
            c0 = -c0;
        }
        int c = compareProducts(a0, a1, w2Lo, w2Hi, c0, c1, w1Lo, w1Hi);
        return g1 > 0 ? c : -c;
    }

    /** compareRatio of the (s, w) pairs stored at acc[4i..4i+3] and acc[4j..4j+3] (layout sLo, sHi, wLo, wHi). */
    public static int compareRatioAt(long[] acc, int i, long[] acc2, int j) {
        int a = 4 * i;
        int b = 4 * j;
        return compareRatio(acc[a], acc[a + 1], acc[a + 2], acc[a + 3], acc2[b], acc2[b + 1], acc2[b + 2], acc2[b + 3]);
    }

    /** Unsigned 64-bit integer to the nearest double (ties to even). */
    public static double unsignedToDouble(long x) {
        if (x >= 0) {
            return (double) x;
        }
        // halve with the lost bit kept as a sticky bit below the rounding position, then double exactly
        return (double) ((x >>> 1) | (x & 1)) * 2.0;
    }

    /** The signed 128-bit integer hi * 2^64 + lo rounded to the nearest double (ties to even). */
    public static double toDouble(long lo, long hi) {
        boolean neg = hi < 0;
        if (neg) {
            hi = ~hi + (lo == 0 ? 1 : 0);
            lo = -lo;
        }
        double m;
        if (hi == 0) {
            m = unsignedToDouble(lo);
        } else {
            int lz = Long.numberOfLeadingZeros(hi);
            long top = lz == 0 ? hi : (hi << lz) | (lo >>> (64 - lz));
            long rest = lz == 0 ? lo : lo << lz;
            if (rest != 0) {
                top |= 1; // sticky bit: far below the rounding position, it only decides exact halfway cases
            }
            m = Math.scalb(unsignedToDouble(top), 64 - lz);
        }
        return neg ? -m : m;
    }

    /** Adds the pair at src[4j+off..] to dst[4i+off..] (one 128-bit value: lo at off, hi at off+1). */
    public static void addAt(long[] dst, int i, long[] src, int j, int off) {
        int a = 4 * i + off;
        int b = 4 * j + off;
        long lo = dst[a] + src[b];
        long carry = Long.compareUnsigned(lo, dst[a]) < 0 ? 1 : 0;
        dst[a] = lo;
        dst[a + 1] += src[b + 1] + carry;
    }

    /**
     * The pair scaled by 2^-shift as the nearest double ({@link #toDouble}, then an exact power-of-two scaling for
     * normal results): messages, tests, and the weighted CDF's exact weight sums (SplineCdf).
     */
    public static double scaled(long lo, long hi, int shift) {
        return Math.scalb(toDouble(lo, hi), -shift);
    }
}
