package io.sparkgpu.scan;

/**
 * The arithmetic of a range's log-likelihood ratio, shared bit for bit by the CPU twin and the CUDA kernels
 * ({@code scan.cu} repeats every operation below in the same order with explicitly rounded intrinsics and
 * no contraction). Java's {@code Math.log} and CUDA's {@code log} are both accurate but not identical, so
 * the natural logarithm is our own: argument reduction to m in [sqrt(1/2), sqrt(2)) and a 91-entry table of
 * c_j = 1 + j/128, then ln m = ln(m / c_j) + ln c_j with a degree-8 series for ln(1 + r), |r| < 0.0056.
 * The table is built here and uploaded to the GPU, so both sides read the same numbers. Relative error is
 * about 1 ulp, and exactly 0 ulp apart between the two sides, so the GPU and the CPU twin pick the same best
 * range and report the same LLR bits.
 *
 * <p>Each LLR function returns 0 for ranges that do not qualify (wrong direction, no baseline inside or
 * outside) and never a negative value.
 */
public final class ScanMath {
    /** Smallest and largest table index j: (m - 1) * 128 rounded, m in [sqrt(1/2), sqrt(2)). */
    static final int J_MIN = -37;
    static final int J_MAX = 53;
    /** Entries of the table: pairs (1/c_j rounded, -ln(1/c_j rounded)) for j = J_MIN..J_MAX. */
    static final int TABLE_ENTRIES = J_MAX - J_MIN + 1;

    /** ln 2 split so that e * LN2_HI is exact for every binary exponent e. */
    static final double LN2_HI = Double.longBitsToDouble(0x3FE62E42FEE00000L);
    static final double LN2_LO = Double.longBitsToDouble(0x3DEA39EF35793C76L);
    private static final double SQRT2 = Math.sqrt(2.0);
    private static final double TWO54 = 0x1p54;

    private static final double[] TABLE = buildTable();

    private ScanMath() {
    }

    private static double[] buildTable() {
        double[] t = new double[2 * TABLE_ENTRIES];
        for (int j = J_MIN; j <= J_MAX; j++) {
            double c = 1.0 + j / 128.0;
            double inv = 1.0 / c;
            int at = 2 * (j - J_MIN);
            t[at] = inv;
            t[at + 1] = j == 0 ? 0.0 : -StrictMath.log(inv);
        }
        return t;
    }

    /** A copy of the logarithm table (pairs inv_j, ln c_j), as uploaded to the GPU. */
    public static double[] logTable() {
        return TABLE.clone();
    }

    /**
     * Natural logarithm with the table method above: +Infinity for +Infinity, -Infinity for 0, NaN for
     * negative arguments and NaN.
     */
    public static double log(double x) {
        if (!(x > 0.0) || x == Double.POSITIVE_INFINITY) {
            if (x == 0.0) {
                return Double.NEGATIVE_INFINITY;
            }
            return x == Double.POSITIVE_INFINITY ? x : Double.NaN;
        }
        int e = 0;
        if (x < Double.MIN_NORMAL) {
            x = x * TWO54; // exact
            e = -54;
        }
        long bits = Double.doubleToRawLongBits(x);
        e += (int) (bits >>> 52) - 1023;
        double m = Double.longBitsToDouble((bits & 0x000FFFFFFFFFFFFFL) | 0x3FF0000000000000L);
        if (m >= SQRT2) {
            m = m * 0.5; // exact
            e += 1;
        }
        int j = (int) Math.rint((m - 1.0) * 128.0);
        int at = 2 * (j - J_MIN);
        double r = Math.fma(m, TABLE[at], -1.0);
        double q = Math.fma(-0.125, r, 0.14285714285714285);
        q = Math.fma(q, r, -0.16666666666666666);
        q = Math.fma(q, r, 0.2);
        q = Math.fma(q, r, -0.25);
        q = Math.fma(q, r, 0.3333333333333333);
        q = Math.fma(q, r, -0.5);
        double r2 = r * r;
        double lp = Math.fma(r2, q, r); // ln(1 + r)
        double de = e;
        double hi = de * LN2_HI + TABLE[at + 1];
        double lo = de * LN2_LO + lp;
        return hi + lo;
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
