package io.sparkgpu.common;

/**
 * Deterministic exp and natural logarithms, shared bit for bit by the CPU twins and the CUDA kernels: the Java twin
 * of {@code native-kernels/src/main/cuda/include/detmath.cuh}, which repeats every operation below in the same order
 * with explicitly rounded intrinsics (and nvcc runs with --fmad=false). Java's {@code Math.exp/log} and CUDA's
 * {@code exp/log} are both accurate but not identical, so results that a GPU and its CPU twin must agree on (the
 * t-SNE bandwidth search, the scan statistics' LLRs) use these instead.
 *
 * <p><b>exp</b> ({@code dm_exp}; t-SNE affinities): x = k ln2 + r with k = rint(x / ln2) and r = (x - k LN2_HI) -
 * k LN2_LO (LN2_HI has 21 trailing zero bits, so k LN2_HI is exact), |r| &lt;= 0.347; e^r by the degree-13 Taylor
 * polynomial in Horner form with fused multiply-adds (truncation error below 1e-17 relative); then scaled by 2^k
 * through the exponent bits (two steps when the result is subnormal). Accuracy about 1-2 ulp. x &lt; -745.2 gives 0,
 * x &gt; 709 gives +Infinity (early, to keep 2^k normal; the affinities only take exp of x &lt;= 0).
 *
 * <p><b>Two logarithms.</b> Both reduce x = 2^e m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^54 first)
 * and return -Infinity for 0, +Infinity for +Infinity and NaN for negative or NaN arguments; they differ in ln m:
 * <ul>
 *   <li>{@link #log} ({@code dm_log}; t-SNE perplexity search): f = (m - 1) / (m + 1), ln m = 2 atanh f =
 *       2f (1 + f^2/3 + f^4/5 + ... + f^20/21) (|f| &lt;= 0.172, truncation below 1e-17),
 *       ln x = e LN2_HI + (e LN2_LO + ln m).</li>
 *   <li>{@link #tableLog} ({@code dm_log_table}; scan statistics): a 91-entry table of c_j = 1 + j/128 (pairs
 *       inv_j = 1/c_j rounded, -ln inv_j, built here and uploaded to the GPU, {@link #logTable}), j = rint((m - 1)
 *       128), r = m inv_j - 1 in one rounding, ln(1 + r) by a degree-8 series (|r| &lt; 0.0056),
 *       ln x = (e LN2_HI - ln inv_j) + (e LN2_LO + ln(1 + r)).</li>
 * </ul>
 * They are different functions, not two codings of one: they disagree in the last bit for a few arguments in a
 * thousand of random magnitude and for about four in ten near 1 (the table log is the less accurate, about 1 ulp
 * against StrictMath for both). Each capability's published results are defined by its own, so replacing one by the
 * other would change the t-SNE affinities or the scan LLRs; both stay, sharing the reduction and special cases.
 */
public final class DetMath {
    /** ln 2 split so that e * LN2_HI is exact for every binary exponent e; LN2_HI + LN2_LO = ln 2. */
    public static final double LN2_HI = Double.longBitsToDouble(0x3FE62E42FEE00000L);
    public static final double LN2_LO = Double.longBitsToDouble(0x3DEA39EF35793C76L);
    static final double INV_LN2 = Double.longBitsToDouble(0x3FF71547652B82FEL);
    static final double SQRT2 = Double.longBitsToDouble(0x3FF6A09E667F3BCDL);

    /** Smallest and largest table index j of {@link #tableLog}: (m - 1) * 128 rounded, m in [sqrt(1/2), sqrt(2)). */
    public static final int LOG_TABLE_J_MIN = -37;
    public static final int LOG_TABLE_J_MAX = 53;
    /** Entries (pairs of doubles) of the {@link #tableLog} table. */
    public static final int LOG_TABLE_ENTRIES = LOG_TABLE_J_MAX - LOG_TABLE_J_MIN + 1;

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

    private static final double[] TABLE = buildTable();

    private DetMath() {
    }

    private static double[] buildTable() {
        double[] t = new double[2 * LOG_TABLE_ENTRIES];
        for (int j = LOG_TABLE_J_MIN; j <= LOG_TABLE_J_MAX; j++) {
            double c = 1.0 + j / 128.0;
            double inv = 1.0 / c;
            int at = 2 * (j - LOG_TABLE_J_MIN);
            t[at] = inv;
            t[at + 1] = j == 0 ? 0.0 : -StrictMath.log(inv);
        }
        return t;
    }

    /** A copy of the table of {@link #tableLog} (pairs inv_j, -ln inv_j), as uploaded to the GPU. */
    public static double[] logTable() {
        return TABLE.clone();
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

    /** ln x by the atanh series (see the class comment; the t-SNE logarithm). */
    public static double log(double x) {
        return ln(x, null);
    }

    /** ln x by the table method (see the class comment; the scan statistics' logarithm). */
    public static double tableLog(double x) {
        return ln(x, TABLE);
    }

    /** Both logarithms: the shared special cases and reduction, then ln m by the series (tab null) or the table. */
    private static double ln(double x, double[] tab) {
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
        double de = e;
        if (tab == null) {
            double f = (m - 1.0) / (m + 1.0);
            double s = f * f;
            double q = LOG_C[0];
            for (int i = 1; i < LOG_C.length; i++) {
                q = Math.fma(q, s, LOG_C[i]);
            }
            double f2 = f + f; // exact
            double lm = Math.fma(f2, s * q, f2);
            return de * LN2_HI + (de * LN2_LO + lm);
        }
        int j = (int) Math.rint((m - 1.0) * 128.0);
        int at = 2 * (j - LOG_TABLE_J_MIN);
        double r = Math.fma(m, tab[at], -1.0);
        double q = Math.fma(-0.125, r, 0.14285714285714285);
        q = Math.fma(q, r, -0.16666666666666666);
        q = Math.fma(q, r, 0.2);
        q = Math.fma(q, r, -0.25);
        q = Math.fma(q, r, 0.3333333333333333);
        q = Math.fma(q, r, -0.5);
        double r2 = r * r;
        double lp = Math.fma(r2, q, r); // ln(1 + r)
        double hi = de * LN2_HI + tab[at + 1];
        double lo = de * LN2_LO + lp;
        return hi + lo;
    }
}
