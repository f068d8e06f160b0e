package io.sparkgpu.tsne;

/**
 * Deterministic exp and log for the perplexity search, shared bit for bit by the CPU twin and the CUDA kernel
 * ({@code tsne.cu}, section "kNN, affinities", functions {@code tsne_aff_exp} / {@code tsne_aff_log} repeat every
 * operation below in the same order with explicitly rounded intrinsics). Java's {@code Math.exp} and CUDA's
 * {@code exp} are both accurate but not identical, so the bandwidth search would otherwise diverge between the two.
 *
 * <p>exp: x = k ln2 + r with k = rint(x / ln2) and r = (x - k LN2_HI) - k LN2_LO (LN2_HI has 21 trailing zero
 * bits, so k LN2_HI is exact), |r| &lt;= 0.347; e^r by the degree-13 Taylor polynomial in Horner form with fused
 * multiply-adds (truncation error below 1e-17 relative); then scaled by 2^k through the exponent bits (two steps
 * when the result is subnormal). Accuracy about 1-2 ulp. x &lt; -745.2 gives 0, x &gt; 709 gives +Infinity (early, to keep
 * 2^k normal; the affinities only take exp of x &lt;= 0).
 *
 * <p>log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), f = (m - 1) / (m + 1), ln m = 2 atanh f = 2f (1 + f^2/3 +
 * f^4/5 + ... + f^20/21) (|f| &lt;= 0.172, truncation below 1e-17), ln x = e LN2_HI + (e LN2_LO + ln m).
 */
public final class TsneMath {
    static final double INV_LN2 = Double.longBitsToDouble(0x3FF71547652B82FEL);
    static final double LN2_HI = Double.longBitsToDouble(0x3FE62E42FEE00000L);
    static final double LN2_LO = Double.longBitsToDouble(0x3DEA39EF35793C76L);
    static final double SQRT2 = Double.longBitsToDouble(0x3FF6A09E667F3BCDL);

    /** 1/n! for n = 13 down to 2 (Horner order). */
    static final double[] EXP_C = {
        Double.longBitsToDouble(0x3DE6124613A86D09L), // 1/13!
        Double.longBitsToDouble(0x3E21EED8EFF8D898L), // 1/12!
        Double.longBitsToDouble(0x3E5AE64567F544E4L), // 1/11!
        Double.longBitsToDouble(0x3E927E4FB7789F5CL), // 1/10!
        Double.longBitsToDouble(0x3EC71DE3A556C734L), // 1/9!
        Double.longBitsToDouble(0x3EFA01A01A01A01AL), // 1/8!
        Double.longBitsToDouble(0x3F2A01A01A01A01AL), // 1/7!
        Double.longBitsToDouble(0x3F56C16C16C16C17L), // 1/6!
        Double.longBitsToDouble(0x3F81111111111111L), // 1/5!
        Double.longBitsToDouble(0x3FA5555555555555L), // 1/4!
        Double.longBitsToDouble(0x3FC5555555555555L), // 1/3!
        0.5,                                          // 1/2!
    };

    /** 1/(2j+1) for j = 10 down to 1 (Horner order). */
    static final double[] LOG_C = {
        Double.longBitsToDouble(0x3FA8618618618618L), // 1/21
        Double.longBitsToDouble(0x3FAAF286BCA1AF28L), // 1/19
        Double.longBitsToDouble(0x3FAE1E1E1E1E1E1EL), // 1/17
        Double.longBitsToDouble(0x3FB1111111111111L), // 1/15
        Double.longBitsToDouble(0x3FB3B13B13B13B14L), // 1/13
        Double.longBitsToDouble(0x3FB745D1745D1746L), // 1/11
        Double.longBitsToDouble(0x3FBC71C71C71C71CL), // 1/9
        Double.longBitsToDouble(0x3FC2492492492492L), // 1/7
        Double.longBitsToDouble(0x3FC999999999999AL), // 1/5
        Double.longBitsToDouble(0x3FD5555555555555L), // 1/3
    };

    private TsneMath() {
    }

    /** e^x, deterministic (see the class comment); NaN for NaN. */
    public static double exp(double x) {
        if (!(x >= -745.2)) {
            return x != x ? x : 0.0;
        }
        if (x > 709.0) {
            return Double.POSITIVE_INFINITY;
        }
        double kd = Math.rint(x * INV_LN2);
        int k = (int) kd;
        double r = Math.fma(-kd, LN2_HI, x);
        r = Math.fma(-kd, LN2_LO, r);
        double p = EXP_C[0];
        for (int i = 1; i < EXP_C.length; i++) {
            p = Math.fma(p, r, EXP_C[i]);
        }
        p = Math.fma(p, r, 1.0);
        p = Math.fma(p, r, 1.0);
        if (k >= -1022) {
            return p * Double.longBitsToDouble((long) (k + 1023) << 52);
        }
        // subnormal result: 2^k = 2^(k + 600) * 2^-600, both normal
        return (p * Double.longBitsToDouble((long) (k + 600 + 1023) << 52))
                * Double.longBitsToDouble((long) (-600 + 1023) << 52);
    }

    /** ln x, deterministic (see the class comment); -Infinity for 0, NaN for negative or NaN, +Infinity for +Infinity. */
    public static double log(double x) {
        if (!(x > 0.0) || x == Double.POSITIVE_INFINITY) {
            if (x == 0.0) {
                return Double.NEGATIVE_INFINITY;
            }
            return x == Double.POSITIVE_INFINITY ? x : Double.NaN;
        }
        int e = 0;
        if (x < Double.MIN_NORMAL) {
            x = x * 0x1p54; // exact
            e = -54;
        }
        long bits = Double.doubleToRawLongBits(x);
        e += (int) (bits >>> 52) - 1023;
        double m = Double.longBitsToDouble((bits & 0x000FFFFFFFFFFFFFL) | 0x3FF0000000000000L);
        if (m >= SQRT2) {
            m = m * 0.5; // exact
            e += 1;
        }
        double f = (m - 1.0) / (m + 1.0);
        double s = f * f;
        double q = LOG_C[0];
        for (int i = 1; i < LOG_C.length; i++) {
            q = Math.fma(q, s, LOG_C[i]);
        }
        double f2 = f + f; // exact
        double lm = Math.fma(f2, s * q, f2);
        double de = e;
        return de * LN2_HI + (de * LN2_LO + lm);
    }
}
