/*
 * Deterministic exp and natural logarithms: the same bits on the GPU and in Java. CUDA's exp/log and Java's
 * Math.exp/Math.log are accurate but not identical, so every kernel whose result a CPU twin must reproduce uses these
 * instead. Java twin: io.sparkgpu.common.DetMath, which repeats every operation below in the same order (nvcc runs
 * with --fmad=false, and every operation here is an explicitly rounded intrinsic).
 *
 * Two logarithms, both about 1 ulp, share the special cases and the argument reduction x = 2^e m,
 * m in [sqrt(1/2), sqrt(2)), and differ in ln m:
 *   dm_log        (DetMath.log, t-SNE perplexity search): f = (m - 1)/(m + 1), ln m = 2 atanh f by its series to f^21;
 *   dm_log_table  (DetMath.tableLog, scan statistics LLRs): ln m = ln(m / c_j) + ln c_j with c_j = 1 + j/128 from a
 *                 91-entry table built in Java and uploaded (pairs inv_j = 1/c_j rounded, -ln inv_j), and a degree-8
 *                 series for ln(1 + r).
 * They are different functions (they disagree in the last bit for a few per mille of random arguments and for most
 * arguments near 1), and each capability's results are defined by its own, so both stay.
 */
#pragma once

#include "common.cuh"

/* ln 2 = LN2_HI + LN2_LO, LN2_HI with 21 trailing zero bits (e * LN2_HI is exact for every exponent e). */
#define DM_LN2_HI 0.6931471803691238      /* 0x3FE62E42FEE00000 */
#define DM_LN2_LO 1.9082149292705877e-10  /* 0x3DEA39EF35793C76 */
/* Table of dm_log_table: c_j = 1 + j/128 for j = DM_LOG_TABLE_JMIN .. DM_LOG_TABLE_JMIN + DM_LOG_TABLE_ENTRIES - 1. */
#define DM_LOG_TABLE_JMIN (-37)
#define DM_LOG_TABLE_ENTRIES 91

/* e^x (DetMath.exp): x = k ln2 + r, k = rint(x / ln2), degree-13 Taylor polynomial of e^r with fused multiply-adds,
 * scaled by 2^k through the exponent bits (two steps when the result is subnormal). 0 below -745.2, +Inf above 709. */
__device__ __forceinline__ double dm_exp(double x) {
    if (!(x >= -745.2)) return x != x ? x : 0.0;
    if (x > 709.0) return __longlong_as_double(0x7FF0000000000000LL);
    const double kd = rint(__dmul_rn(x, __longlong_as_double(0x3FF71547652B82FELL)));
    const int k = (int) kd;
    double r = __fma_rn(-kd, __longlong_as_double(0x3FE62E42FEE00000LL), x);
    r = __fma_rn(-kd, __longlong_as_double(0x3DEA39EF35793C76LL), r);
    double p = __longlong_as_double(0x3DE6124613A86D09LL);           /* 1/13! */
    p = __fma_rn(p, r, __longlong_as_double(0x3E21EED8EFF8D898LL));  /* 1/12! */
    p = __fma_rn(p, r, __longlong_as_double(0x3E5AE64567F544E4LL));  /* 1/11! */
    p = __fma_rn(p, r, __longlong_as_double(0x3E927E4FB7789F5CLL));  /* 1/10! */
    p = __fma_rn(p, r, __longlong_as_double(0x3EC71DE3A556C734LL));  /* 1/9! */
    p = __fma_rn(p, r, __longlong_as_double(0x3EFA01A01A01A01ALL));  /* 1/8! */
    p = __fma_rn(p, r, __longlong_as_double(0x3F2A01A01A01A01ALL));  /* 1/7! */
    p = __fma_rn(p, r, __longlong_as_double(0x3F56C16C16C16C17LL));  /* 1/6! */
    p = __fma_rn(p, r, __longlong_as_double(0x3F81111111111111LL));  /* 1/5! */
    p = __fma_rn(p, r, __longlong_as_double(0x3FA5555555555555LL));  /* 1/4! */
    p = __fma_rn(p, r, __longlong_as_double(0x3FC5555555555555LL));  /* 1/3! */
    p = __fma_rn(p, r, 0.5);
    p = __fma_rn(p, r, 1.0);
    p = __fma_rn(p, r, 1.0);
    if (k >= -1022) return __dmul_rn(p, __longlong_as_double((i64) (k + 1023) << 52));
    /* subnormal result: 2^k = 2^(k + 600) * 2^-600, both normal */
    return __dmul_rn(__dmul_rn(p, __longlong_as_double((i64) (k + 600 + 1023) << 52)),
                     __longlong_as_double((i64) (-600 + 1023) << 52));
}

/* Shared part of both logarithms: for x not a positive finite number, true with the result in *special (-Inf for
 * 0, +Inf for +Inf, NaN for negative or NaN arguments); otherwise false with x = 2^e m, m in [sqrt(1/2), sqrt(2))
 * (subnormal x scaled by 2^54 first, exactly). */
__device__ __forceinline__ bool dm_log_reduce(double x, double &m, int &e, double &special) {
    if (!(x > 0.0) || x == __longlong_as_double(0x7FF0000000000000LL)) {
        if (x == 0.0) special = __longlong_as_double(0xFFF0000000000000LL);
        else special = x > 0.0 ? x : __longlong_as_double(0x7FF8000000000000LL);
        return true;
    }
    e = 0;
    if (x < 2.2250738585072014e-308) { /* Double.MIN_NORMAL */
        x = __dmul_rn(x, 18014398509481984.0); /* 2^54, exact */
        e = -54;
    }
    const i64 bits = __double_as_longlong(x);
    e += (int) ((u64) bits >> 52) - 1023;
    m = __longlong_as_double((bits & 0x000FFFFFFFFFFFFFLL) | 0x3FF0000000000000LL);
    if (m >= __longlong_as_double(0x3FF6A09E667F3BCDLL)) { /* sqrt(2) rounded */
        m = __dmul_rn(m, 0.5); /* exact */
        e += 1;
    }
    return false;
}

/* ln x (DetMath.log): ln m = 2 atanh f, f = (m - 1)/(m + 1), |f| <= 0.172, series 2f (1 + f^2/3 + ... + f^20/21);
 * ln x = e LN2_HI + (e LN2_LO + ln m). */
__device__ __forceinline__ double dm_log(double x) {
    double m, special;
    int e;
    if (dm_log_reduce(x, m, e, special)) return special;
    const double f = __ddiv_rn(__dsub_rn(m, 1.0), __dadd_rn(m, 1.0));
    const double s = __dmul_rn(f, f);
    double q = __longlong_as_double(0x3FA8618618618618LL);          /* 1/21 */
    q = __fma_rn(q, s, __longlong_as_double(0x3FAAF286BCA1AF28LL)); /* 1/19 */
    q = __fma_rn(q, s, __longlong_as_double(0x3FAE1E1E1E1E1E1ELL)); /* 1/17 */
    q = __fma_rn(q, s, __longlong_as_double(0x3FB1111111111111LL)); /* 1/15 */
    q = __fma_rn(q, s, __longlong_as_double(0x3FB3B13B13B13B14LL)); /* 1/13 */
    q = __fma_rn(q, s, __longlong_as_double(0x3FB745D1745D1746LL)); /* 1/11 */
    q = __fma_rn(q, s, __longlong_as_double(0x3FBC71C71C71C71CLL)); /* 1/9 */
    q = __fma_rn(q, s, __longlong_as_double(0x3FC2492492492492LL)); /* 1/7 */
    q = __fma_rn(q, s, __longlong_as_double(0x3FC999999999999ALL)); /* 1/5 */
    q = __fma_rn(q, s, __longlong_as_double(0x3FD5555555555555LL)); /* 1/3 */
    const double f2 = __dadd_rn(f, f); /* exact */
    const double lm = __fma_rn(f2, __dmul_rn(s, q), f2);
    const double de = (double) e;
    return __dadd_rn(__dmul_rn(de, DM_LN2_HI), __dadd_rn(__dmul_rn(de, DM_LN2_LO), lm));
}

/* ln x (DetMath.tableLog) with the table tab (DetMath.logTable(), 2 * DM_LOG_TABLE_ENTRIES doubles: pairs
 * inv_j = 1/c_j rounded, -ln inv_j; in any memory space): j = rint((m - 1) * 128), r = m inv_j - 1 in one rounding,
 * ln(1 + r) = r + r^2 q(r) with q a degree-6 polynomial, ln x = (e LN2_HI - ln inv_j) + (e LN2_LO + ln(1 + r)). */
__device__ __forceinline__ double dm_log_table(double x, const double *tab) {
    double m, special;
    int e;
    if (dm_log_reduce(x, m, e, special)) return special;
    const int j = __double2int_rn(__dmul_rn(__dsub_rn(m, 1.0), 128.0));
    const int at = 2 * (j - DM_LOG_TABLE_JMIN);
    const double r = __fma_rn(m, tab[at], -1.0);
    double q = __fma_rn(-0.125, r, 0.14285714285714285);
    q = __fma_rn(q, r, -0.16666666666666666);
    q = __fma_rn(q, r, 0.2);
    q = __fma_rn(q, r, -0.25);
    q = __fma_rn(q, r, 0.3333333333333333);
    q = __fma_rn(q, r, -0.5);
    const double r2 = __dmul_rn(r, r);
    const double lp = __fma_rn(r2, q, r);
    const double de = (double) e;
    const double hi = __dadd_rn(__dmul_rn(de, DM_LN2_HI), tab[at + 1]);
    const double lo = __dadd_rn(__dmul_rn(de, DM_LN2_LO), lp);
    return __dadd_rn(hi, lo);
}
