package io.sparkgpu.scan;

import io.sparkgpu.common.DetMath;

/**
 * The arithmetic of a range's log-likelihood ratio, shared bit for bit by the CPU twin and the CUDA kernels
 * ({@code scan.cu} repeats every operation below in the same order with explicitly rounded intrinsics and
 * no contraction). Java's {@code Math.log} and CUDA's {@code log} are both accurate but not identical, so
 * the natural logarithm is our own: {@link DetMath#tableLog} (argument reduction to m in [sqrt(1/2), sqrt(2)) and a
 * 91-entry table of c_j = 1 + j/128, then ln m = ln(m / c_j) + ln c_j with a degree-8 series for ln(1 + r),
 * |r| &lt; 0.0056), whose table is built in Java and uploaded to the GPU, so both sides read the same numbers. Relative
 * error is about 1 ulp, and exactly 0 ulp apart between the two sides, so the GPU and the CPU twin pick the same best
 * range and report the same LLR bits.
 *
 * <p>Each LLR function returns 0 for ranges that do not qualify (wrong direction, no baseline inside or
 * outside) and never a negative value.
 */
public final class ScanMath {
    private ScanMath() {
    }

    private static double log(double x) {
        return DetMath.tableLog(x);
    }

    /**
     * Whether the inside rate compares with the outside rate as {@code direction} asks, given a positive,
     * negative or zero sign of (inside - outside).
     */
    static boolean qualifies(int direction, boolean higher, boolean lower) {
        return direction == 0 ? higher : direction == 1 ? lower : (higher || lower);
    }

    /**
     * Kulldorff's Poisson LLR c ln(c/E) + (C-c) ln((C-c)/E') of a range with c cases, expected E inside and
     * E' outside (the outside baseline rescaled; E + E' = C up to rounding), C cases in total.
     */
    public static double poisson(double c, double e, double eOut, double total, int direction) {
        if (!(e > 0.0) || !(eOut > 0.0)) {
            return 0.0;
        }
        if (!qualifies(direction, c > e, c < e)) {
            return 0.0;
        }
        double cOut = total - c;
        double t1 = c > 0.0 ? c * log(c / e) : 0.0;
        double t2 = cOut > 0.0 ? cOut * log(cOut / eOut) : 0.0;
        double llr = t1 + t2;
        return llr > 0.0 ? llr : 0.0;
    }

    /**
     * Kulldorff's Bernoulli LLR of a range with c cases among n individuals, C cases among N in total, written
     * as n KL(p_in || P) + (N - n) KL(p_out || P) with P = C/N to avoid subtracting the null likelihood:
     * c ln(c/(n f)) + (n-c) ln((n-c)/(n g)) + (C-c) ln((C-c)/(n' f)) + (n'-C+c) ln((n'-C+c)/(n' g)), where
     * f = C/N, g = (N-C)/N and n' = N - n.
     */
    public static double bernoulli(double c, double n, double totalCases, double totalN, double f, double g,
                                   int direction) {
        double nOut = totalN - n;
        if (!(n > 0.0) || !(nOut > 0.0)) {
            return 0.0;
        }
        double cOut = totalCases - c;
        double pIn = c / n;
        double pOut = cOut / nOut;
        if (!qualifies(direction, pIn > pOut, pIn < pOut)) {
            return 0.0;
        }
        double dIn = n - c;
        double dOut = nOut - cOut;
        double t1 = c > 0.0 ? c * log(c / (n * f)) : 0.0;
        double t2 = dIn > 0.0 ? dIn * log(dIn / (n * g)) : 0.0;
        double t3 = cOut > 0.0 ? cOut * log(cOut / (nOut * f)) : 0.0;
        double t4 = dOut > 0.0 ? dOut * log(dOut / (nOut * g)) : 0.0;
        double llr = (t1 + t2) + (t3 + t4);
        return llr > 0.0 ? llr : 0.0;
    }

    /**
     * Kulldorff's normal LLR of a range holding n of the N observations with value sum s (S in total):
     * -(N/2) ln(1 - D/V0), D = (s N - n S)^2 / (n (N-n) N) the between-groups sum of squares that the
     * range explains and V0 the total sum of squared deviations from the mean. {@code halfN} = N / 2.
     * Returns +Infinity when the range explains all the variance.
     */
    public static double normal(double s, double n, double totalN, double totalS, double v0, double halfN,
                                int direction) {
        double nOut = totalN - n;
        if (!(n > 0.0) || !(nOut > 0.0)) {
            return 0.0;
        }
        double diff = s * totalN - n * totalS;
        if (!qualifies(direction, diff > 0.0, diff < 0.0)) {
            return 0.0;
        }
        double d = (diff * diff) / ((n * nOut) * totalN);
        double t = 1.0 - d / v0;
        if (!(t > 0.0)) {
            return Double.POSITIVE_INFINITY;
        }
        double llr = -(halfN * log(t));
        return llr > 0.0 ? llr : 0.0;
    }

    /** The expectation-based Poisson LLR c ln(c/b) + b - c of a range with c cases and expected count b. */
    public static double ebp(double c, double b, int direction) {
        if (!(b > 0.0)) {
            return 0.0;
        }
        if (!qualifies(direction, c > b, c < b)) {
            return 0.0;
        }
        double t1 = c > 0.0 ? c * log(c / b) : 0.0;
        double llr = (t1 + b) - c;
        return llr > 0.0 ? llr : 0.0;
    }
}
