package io.sparkgpu.common;

import java.math.BigInteger;

/**
 * Exact 128-bit two's-complement fixed-point accumulation of doubles, shared bit for bit by the CUDA
 * kernels and their Java twins.
 *
 * <p>A value v is quantized with a power-of-two scale 2^shift as q = trunc(v * 2^shift) (toward zero), stored as a pair
 * (lo, hi) with q = hi * 2^64 + lo (lo unsigned). Sums of such integers are exact and associative, so
 * partition results can be combined in any order and by any number of threads or atomics and still give
 * the same bits. The scale is chosen from a bound on the total (see {@link #shiftFor}) so that sums cannot
 * overflow; values whose bits lie below 2^-shift are truncated, which is far below the rounding error of
 * an ordinary double sum of the same data.
 */
public final class FixedPoint {
    /** Sums are kept below 2^TOTAL_BITS in magnitude. */
    public static final int TOTAL_BITS = 124;
    private static final double TWO_64 = 0x1p64;
    private static final double TWO_63 = 0x1p63;

    private FixedPoint() {
    }

    /**
     * The largest shift such that any sum bounded by {@code bound} in magnitude fits in 2^TOTAL_BITS,
     * i.e. bound * 2^shift < 2^TOTAL_BITS; {@code bound} <= 0 (all values zero) gives shift 0.
     */
    public static int shiftFor(double bound) {
        if (!(bound > 0) || Double.isInfinite(bound)) {
            if (Double.isInfinite(bound) || Double.isNaN(bound)) {
                throw new ArithmeticException("fixed-point bound is not finite: " + bound);
            }
            return 0;
        }
        return TOTAL_BITS - 1 - Math.getExponent(bound);
    }

    /**
     * The two multipliers (s1, s2) with s1 * s2 = 2^(shift - 64), each a representable power of two, so
     * that (v * s1) * s2 is the same correctly rounded operation sequence in Java and CUDA.
     */
    public static double[] multipliers(int shift) {
        int e = shift - 64;
        int e1 = Math.max(-1000, Math.min(1000, e));
        int e2 = e - e1;
        if (e2 < -1000 || e2 > 1000) {
            throw new ArithmeticException("fixed-point shift out of range: " + shift);
        }
        return new double[] {Math.scalb(1.0, e1), Math.scalb(1.0, e2)};
    }

    /**
     * Adds trunc(v * s1 * s2 * 2^64) (rounded toward zero) to the pair acc[at] (lo), acc[at+1] (hi). The
     * magnitude is split into integer and fraction parts, which is exact for non-negative values; the sign
     * is then applied to the 128-bit integer.
     */
    public static void add(long[] acc, int at, double v, double s1, double s2) {
        double t = (Math.abs(v) * s1) * s2;
        double f = Math.floor(t);
        long hi = (long) f;
        double y = (t - f) * TWO_64; // exact for t >= 0: t - floor(t) in [0, 1), power-of-two scaling
        long lo = y >= TWO_63 ? ((long) (y - TWO_63)) ^ Long.MIN_VALUE : (long) y;
        if (v < 0) {
            hi = ~hi + (lo == 0 ? 1 : 0);
            lo = -lo;
        }
        addPair(acc, at, lo, hi);
    }

    /**
     * Adds the 128-bit integer hi*2^64 + lo (lo unsigned) to the pair at {@code at}. Low word first, like the
     * stored pair and the kernels' {@code fx_add} (include/fixed128.cuh).
     */
    public static void addPair(long[] acc, int at, long lo, long hi) {
        long old = acc[at];
        long sum = old + lo;
        long carry = Long.compareUnsigned(sum, old) < 0 ? 1L : 0L;
        acc[at] = sum;
        acc[at + 1] += hi + carry;
    }

    /** The exact 128-bit integer stored at {@code at}. */
    public static BigInteger toBigInteger(long[] acc, int at) {
        BigInteger lo = new BigInteger(Long.toUnsignedString(acc[at]));
        return BigInteger.valueOf(acc[at + 1]).shiftLeft(64).add(lo);
    }

    /** The stored value divided by 2^shift, correctly rounded to the nearest double (for normal results). */
    public static double toDouble(long[] acc, int at, int shift) {
        long hi = acc[at + 1];
        long lo = acc[at];
        if ((hi == 0 && lo >= 0) || (hi == -1 && lo < 0)) {
            return Math.scalb((double) lo, -shift); // fits in a signed 64-bit integer; long->double rounds to nearest
        }
        return Math.scalb(toBigInteger(acc, at).doubleValue(), -shift); // doubleValue rounds to nearest
    }
}
