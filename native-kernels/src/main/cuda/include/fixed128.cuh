/*
 * 128-bit two's-complement integers: the exact fixed-point sums of io.sparkgpu.common.FixedPoint and the exact
 * comparisons of io.sparkgpu.common.Int128, mirrored operation for operation so that every kernel and its CPU twin
 * produce the same bits.
 *
 * A value is a pair of 64-bit words (lo, hi) with value hi * 2^64 + lo (lo unsigned). The low word comes first
 * everywhere: in memory (acc[at] = lo, acc[at + 1] = hi, as FixedPoint stores it) and in every argument list here,
 * as in Int128 (signum(lo, hi), compareRatio(s1Lo, s1Hi, ...), toDouble(lo, hi)). (FixedPoint.addPair alone takes
 * (hi, lo).) Both words are u64; the sign is bit 63 of hi. Sums are modulo 2^128, hence associative and
 * commutative: atomics in any order, any reduction tree and any chunking give the same bits.
 */
#pragma once

#include "common.cuh"

/* (lo, hi) = -(lo, hi) */
__device__ __forceinline__ void fx_neg(u64 &lo, u64 &hi) {
    hi = ~hi + (lo == 0ull ? 1ull : 0ull);
    lo = 0ull - lo;
}

/* trunc(v * s1 * s2 * 2^64) (toward zero) with s1 * s2 = 2^(shift - 64) (FixedPoint.multipliers): |v| scaled,
 * split exactly into its integer part (hi) and its fraction times 2^64 (lo), then v's sign applied to the 128-bit
 * integer. FixedPoint.add, operation for operation, without the final addition. The high word is negated as a signed
 * integer (no overflow: 0 <= f < 2^60 under FixedPoint's bound); with it unsigned, nvcc turned the sign branch into
 * selects in the unrolled S2G loops (tsne_s2g_d2: 97 -> 124 registers on sm_80), same bits either way. */
__device__ __forceinline__ void fx_quantize(double v, double s1, double s2, u64 &lo, u64 &hi) {
    const double t = __dmul_rn(__dmul_rn(fabs(v), s1), s2);
    const double f = floor(t);
    i64 h = (i64) f;
    const double r = __dsub_rn(t, f);                                /* exact, in [0, 1) */
    u64 l = __double2ull_rd(__dmul_rn(r, 18446744073709551616.0));   /* exact scaling by 2^64, then floor */
    if (v < 0.0) {
        h = ~h + (l == 0ull ? 1ll : 0ll);
        l = 0ull - l;
    }
    lo = l;
    hi = (u64) h;
}

/* (lo, hi) += (blo, bhi) mod 2^128 (FixedPoint.addPair, Int128.addAt). */
__device__ __forceinline__ void fx_add(u64 &lo, u64 &hi, u64 blo, u64 bhi) {
    const u64 n = lo + blo;
    hi = hi + bhi + (n < lo ? 1ull : 0ull);
    lo = n;
}

/* (lo, hi) = (alo, ahi) - (blo, bhi) mod 2^128. */
__device__ __forceinline__ void fx_sub(u64 alo, u64 ahi, u64 blo, u64 bhi, u64 &lo, u64 &hi) {
    lo = alo - blo;
    hi = ahi - bhi - (alo < blo ? 1ull : 0ull);
}

/* -1, 0 or 1 (Int128.signum). */
__device__ __forceinline__ int fx_sign(u64 lo, u64 hi) {
    return ((i64) hi < 0) ? -1 : ((hi == 0ull && lo == 0ull) ? 0 : 1);
}

/* Atomic (plo[0], phi[0]) += (lo, hi) mod 2^128, the words anywhere (split layouts): the carry comes from the value
 * the low-word atomic saw, so concurrent adds compose exactly; a zero high part costs no second atomic. */
__device__ __forceinline__ void fx_atomic_add_split(u64 *plo, u64 *phi, u64 lo, u64 hi) {
    if (lo == 0ull && hi == 0ull) return;
    const u64 old = atomicAdd(plo, lo);
    const u64 h = hi + ((old + lo < old) ? 1ull : 0ull);
    if (h != 0ull) atomicAdd(phi, h);
}

/* Atomic (p[0], p[1]) += (lo, hi): a pair stored as FixedPoint stores it. */
__device__ __forceinline__ void fx_atomic_add(u64 *p, u64 lo, u64 hi) {
    fx_atomic_add_split(p, p + 1, lo, hi);
}

/* Unsigned 128 x 128 -> 256-bit product (a1:a0) * (b1:b0), limbs p0..p3 (Int128.compareProducts). */
__device__ __forceinline__ void fx_mul256(u64 a0, u64 a1, u64 b0, u64 b1, u64 &p0, u64 &p1, u64 &p2, u64 &p3) {
    p0 = a0 * b0;
    const u64 h00 = __umul64hi(a0, b0);
    const u64 l01 = a0 * b1, h01 = __umul64hi(a0, b1);
    const u64 l10 = a1 * b0, h10 = __umul64hi(a1, b0);
    const u64 l11 = a1 * b1, h11 = __umul64hi(a1, b1);
    const u64 t = h00 + l01;
    u64 k = (t < h00) ? 1ull : 0ull;
    const u64 t2 = t + l10;
    k += (t2 < t) ? 1ull : 0ull;
    p1 = t2;
    const u64 q = h01 + h10;
    u64 k2 = (q < h01) ? 1ull : 0ull;
    const u64 q2 = q + l11;
    k2 += (q2 < q) ? 1ull : 0ull;
    const u64 q3 = q2 + k;
    k2 += (q3 < q2) ? 1ull : 0ull;
    p2 = q3;
    p3 = h11 + k2;
}

/* The exact sign of s1/w1 - s2/w2 for positive w (Int128.compareRatio): from the signs, then from the unsigned
 * 256-bit products |s1|*w2 and |s2|*w1 (values below 2^126 in magnitude). */
__device__ __forceinline__ int fx_compare_ratio(u64 s1lo, u64 s1hi, u64 w1lo, u64 w1hi,
                                                u64 s2lo, u64 s2hi, u64 w2lo, u64 w2hi) {
    const int g1 = fx_sign(s1lo, s1hi);
    const int g2 = fx_sign(s2lo, s2hi);
    if (g1 != g2) return g1 < g2 ? -1 : 1;
    if (g1 == 0) return 0;
    if (g1 < 0) { /* both negative: compare magnitudes, reversed */
        fx_neg(s1lo, s1hi);
        fx_neg(s2lo, s2hi);
    }
    u64 p0, p1, p2, p3, q0, q1, q2, q3;
    fx_mul256(s1lo, s1hi, w2lo, w2hi, p0, p1, p2, p3);
    fx_mul256(s2lo, s2hi, w1lo, w1hi, q0, q1, q2, q3);
    int c;
    if (p3 != q3) c = p3 < q3 ? -1 : 1;
    else if (p2 != q2) c = p2 < q2 ? -1 : 1;
    else if (p1 != q1) c = p1 < q1 ? -1 : 1;
    else c = (p0 == q0) ? 0 : (p0 < q0 ? -1 : 1);
    return g1 > 0 ? c : -c;
}

/* The value as a double in three roundings: hi * 2^64 + lo of the magnitude, then the sign
 * (io.sparkgpu.isotonic.IsotonicCpu.approx; not correctly rounded, the same on both sides). */
__device__ __forceinline__ double fx_to_double_approx(u64 lo, u64 hi) {
    const bool neg = (i64) hi < 0;
    if (neg) fx_neg(lo, hi);
    const double d = __dadd_rn(__dmul_rn(__ll2double_rn((i64) hi), 18446744073709551616.0), __ull2double_rn(lo));
    return neg ? -d : d;
}

/* The value divided by 2^shift, correctly rounded (io.sparkgpu.tsne.repulsion.GridRepulsion.toDouble): values that
 * fit in a signed 64-bit integer convert directly, larger ones through their top 63 bits with a sticky bit. */
__device__ __forceinline__ double fx_to_double_scaled(u64 lo, u64 hi, int shift) {
    if ((hi == 0ull && (i64) lo >= 0ll) || (hi == ~0ull && (i64) lo < 0ll)) {
        return scalbn(__ll2double_rn((i64) lo), -shift);
    }
    const bool neg = (i64) hi < 0;
    if (neg) fx_neg(lo, hi);
    const int bits = 128 - __clzll((i64) hi);
    const int drop = bits - 63;
    const u64 top = (hi << (64 - drop)) | (lo >> drop);
    const u64 sticky = (lo << (64 - drop)) != 0ull ? 1ull : 0ull;
    const double v = scalbn(__ll2double_rn((i64) (top | sticky)), drop - shift);
    return neg ? -v : v;
}

/* A 128-bit value as one object (block collectives). */
struct Fx128 {
    u64 lo, hi;
};

/* Exact sum of one 128-bit value per thread over the block (blockDim.x a multiple of 32), valid in thread 0: a
 * shuffle tree per warp, then thread 0 adds the warp sums. Contains a barrier. Written out here rather than
 * cub::BlockReduce<Fx128, ...> (or cub::WarpReduce) because those raised tsne_g2s_d2 from 80 to 102 registers on
 * sm_80 (3 to 2 resident blocks); the sum is the same integer either way. */
__device__ __forceinline__ Fx128 fx_block_sum(Fx128 v) {
    __shared__ u64 warpLo[32], warpHi[32];
    for (int off = 16; off > 0; off >>= 1) {
        const u64 olo = __shfl_down_sync(FULL_MASK, v.lo, off);
        const u64 ohi = __shfl_down_sync(FULL_MASK, v.hi, off);
        fx_add(v.lo, v.hi, olo, ohi);
    }
    if ((threadIdx.x & 31) == 0) {
        warpLo[threadIdx.x >> 5] = v.lo;
        warpHi[threadIdx.x >> 5] = v.hi;
    }
    __syncthreads();
    Fx128 t = {0ull, 0ull};
    if (threadIdx.x == 0) {
        for (int k = 0; k < (int) (blockDim.x >> 5); k++) fx_add(t.lo, t.hi, warpLo[k], warpHi[k]);
    }
    return t;
}
