/*
 * Isotonic regression (weighted least squares) on pooled, sorted points: PAVA-merge and parallel minimum
 * lower sets (MLS). Java twins: io.sparkgpu.isotonic.IsotonicCpu (same functions, same exact comparisons).
 *
 * Data layout
 *   acc    u64[4*n]  array of structures, one 32-byte record per point or block, in feature order:
 *                    (sLo, sHi, wLo, wHi) = 128-bit two's-complement fixed-point sums of w*y and of w
 *                    (io.sparkgpu.common.FixedPoint; weights > 0, magnitudes < 2^124). Index type int (n < 2^31).
 *   start  int[n]    first point index of each block (blocks live where acc's records are).
 *   z      u64[4*(n+1)]  MLS prefix sums: record j holds the sums of points [0, j).
 *
 * Exactness: a block's value is s/w; two blocks are compared by the exact sign of s1*w2 - s2*w1 (256-bit
 * products, compare_ratio). All sums are integer additions. So every kernel here, and every CPU twin, produces
 * the unique solution with the same bits; no floating-point result depends on thread scheduling.
 *
 * Kernels and launch shapes (1-D)
 *   iso_chunk_pava   one thread per chunk of `chunk` points (block 128): serial PAVA in place, the chunk's
 *                    blocks become a stack at the chunk's start; cnt[c] = number of blocks.
 *   iso_merge_pairs  one thread per pair of adjacent groups (block 128): group g of this round occupies
 *                    [g*region, g*region + cnt[g]); pools A's tail with B's head until monotone (decomposition
 *                    theorem), writes the pooled block over A's last surviving record, and records
 *                    (lenA, skipB, lenB) in info[3q..3q+2] and the pair's new count in cntOut[q].
 *   iso_compact      one thread per position (grid-stride, block 256): copies A's surviving records and B's
 *                    suffix into the other buffer so that group q of the next round (region*2) is contiguous.
 *   iso_mls_prefix   ONE block of 1024 threads: exact prefix sums z (chunked serial scan + shared-memory scan).
 *   iso_mls_argmin   one thread per i (block 256, dynamic shared memory 32*blockDim bytes): the largest j >= i
 *                    minimising the mean of points i..j, with shared-memory tiles of z; O(n - i) per thread.
 *   iso_mls_blocks   ONE block of 1024 threads: reach = prefix max of jstar (the max-scan by block key), block
 *                    starts where reach < i, block sums as prefix differences; count[0] = number of blocks.
 */

typedef unsigned long long u64;

/* ------------------------------------------------------------------------------------------ 128-bit helpers */

__device__ __forceinline__ void add128(u64 &lo, u64 &hi, u64 blo, u64 bhi) {
    u64 n = lo + blo;
    hi = hi + bhi + (n < lo ? 1ull : 0ull);
    lo = n;
}

__device__ __forceinline__ void sub128(u64 alo, u64 ahi, u64 blo, u64 bhi, u64 &lo, u64 &hi) {
    lo = alo - blo;
    hi = ahi - bhi - (alo < blo ? 1ull : 0ull);
}

__device__ __forceinline__ int sign128(u64 lo, u64 hi) {
    return ((long long) hi < 0) ? -1 : ((hi == 0ull && lo == 0ull) ? 0 : 1);
}

/* unsigned 128x128 -> 256-bit product, limbs p0..p3 (as IsotonicCpu/Int128.compareProducts) */
__device__ __forceinline__ void mul256(u64 a0, u64 a1, u64 b0, u64 b1, u64 &p0, u64 &p1, u64 &p2, u64 &p3) {
    p0 = a0 * b0;
    u64 h00 = __umul64hi(a0, b0);
    u64 l01 = a0 * b1, h01 = __umul64hi(a0, b1);
    u64 l10 = a1 * b0, h10 = __umul64hi(a1, b0);
    u64 l11 = a1 * b1, h11 = __umul64hi(a1, b1);
    u64 t = h00 + l01;
    u64 k = (t < h00) ? 1ull : 0ull;
    u64 t2 = t + l10;
    k += (t2 < t) ? 1ull : 0ull;
    p1 = t2;
    u64 q = h01 + h10;
    u64 k2 = (q < h01) ? 1ull : 0ull;
    u64 q2 = q + l11;
    k2 += (q2 < q) ? 1ull : 0ull;
    u64 q3 = q2 + k;
    k2 += (q3 < q2) ? 1ull : 0ull;
    p2 = q3;
    p3 = h11 + k2;
}

/* sign of s1/w1 - s2/w2 for positive w (Int128.compareRatio) */
__device__ __forceinline__ int compare_ratio(u64 s1lo, u64 s1hi, u64 w1lo, u64 w1hi,
                                             u64 s2lo, u64 s2hi, u64 w2lo, u64 w2hi) {
    int g1 = sign128(s1lo, s1hi);
    int g2 = sign128(s2lo, s2hi);
    if (g1 != g2) return g1 < g2 ? -1 : 1;
    if (g1 == 0) return 0;
    if (g1 < 0) {
        s1hi = ~s1hi + (s1lo == 0ull ? 1ull : 0ull);
        s1lo = 0ull - s1lo;
        s2hi = ~s2hi + (s2lo == 0ull ? 1ull : 0ull);
        s2lo = 0ull - s2lo;
    }
    u64 p0, p1, p2, p3, q0, q1, q2, q3;
    mul256(s1lo, s1hi, w2lo, w2hi, p0, p1, p2, p3);
    mul256(s2lo, s2hi, w1lo, w1hi, q0, q1, q2, q3);
    int c;
    if (p3 != q3) c = p3 < q3 ? -1 : 1;
    else if (p2 != q2) c = p2 < q2 ? -1 : 1;
    else if (p1 != q1) c = p1 < q1 ? -1 : 1;
    else c = (p0 == q0) ? 0 : (p0 < q0 ? -1 : 1);
    return g1 > 0 ? c : -c;
}

/* |v| as hi*2^64 + lo in three roundings (IsotonicCpu.approx) */
__device__ __forceinline__ double approx128(u64 lo, u64 hi) {
    bool neg = (long long) hi < 0;
    if (neg) {
        hi = ~hi + (lo == 0ull ? 1ull : 0ull);
        lo = 0ull - lo;
    }
    double d = __dadd_rn(__dmul_rn(__ll2double_rn((long long) hi), 18446744073709551616.0), __ull2double_rn(lo));
    return neg ? -d : d;
}

/* ------------------------------------------------------------------------------------------ PAVA-merge */

extern "C" __global__ void iso_chunk_pava(u64 *__restrict__ acc, int *__restrict__ start, int n, int chunk,
                                          int chunks, int *__restrict__ cnt) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= chunks) return;
    const long long from = (long long) c * chunk;
    const long long to = min((long long) n, from + chunk);
    long long top = from - 1; /* records [from, top] hold the blocks below the current one */
    u64 s0 = 0, s1 = 0, w0 = 0, w1 = 0;
    int st = (int) from;
    bool have = false;
    for (long long i = from; i < to; i++) {
        const u64 *pi = acc + 4 * i; /* not yet overwritten: the stack stays below i */
        u64 p0 = pi[0], p1 = pi[1], p2 = pi[2], p3 = pi[3];
        if (!have) {
            s0 = p0; s1 = p1; w0 = p2; w1 = p3; st = (int) i; have = true;
            continue;
        }
        if (compare_ratio(s0, s1, w0, w1, p0, p1, p2, p3) < 0) {
            top++;
            u64 *t = acc + 4 * top;
            t[0] = s0; t[1] = s1; t[2] = w0; t[3] = w1;
            start[top] = st;
            s0 = p0; s1 = p1; w0 = p2; w1 = p3; st = (int) i;
            continue;
        }
        add128(s0, s1, p0, p1);
        add128(w0, w1, p2, p3);
        while (top >= from) {
            const u64 *t = acc + 4 * top;
            u64 t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3];
            if (compare_ratio(t0, t1, t2, t3, s0, s1, w0, w1) < 0) break;
            add128(s0, s1, t0, t1);
            add128(w0, w1, t2, t3);
            st = start[top];
            top--;
        }
    }
    if (have) {
        top++;
        u64 *t = acc + 4 * top;
        t[0] = s0; t[1] = s1; t[2] = w0; t[3] = w1;
        start[top] = st;
    }
    cnt[c] = (int) (top - from + 1);
}

extern "C" __global__ void iso_merge_pairs(u64 *__restrict__ acc, int *__restrict__ start, int n, long long region,
                                           int groups, const int *__restrict__ cntIn, int *__restrict__ cntOut,
                                           int *__restrict__ info) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    int pairs = (groups + 1) / 2;
    if (q >= pairs) return;
    const long long aBegin = 2ll * q * region;
    const int cntA = cntIn[2 * q];
    const bool hasB = 2 * q + 1 < groups;
    const long long bBegin = min((long long) n, (2ll * q + 1) * region);
    const int cntB = hasB ? cntIn[2 * q + 1] : 0;
    int lenA = cntA, skip = 0;
    if (cntA > 0 && cntB > 0) {
        u64 *ta = acc + 4 * (aBegin + cntA - 1);
        const u64 *hb = acc + 4 * bBegin;
        if (compare_ratio(ta[0], ta[1], ta[2], ta[3], hb[0], hb[1], hb[2], hb[3]) >= 0) {
            int a = cntA - 1, b = 1;
            u64 s0 = ta[0], s1 = ta[1], w0 = ta[2], w1 = ta[3];
            add128(s0, s1, hb[0], hb[1]);
            add128(w0, w1, hb[2], hb[3]);
            int st = start[aBegin + a];
            while (true) {
                if (a > 0) {
                    const u64 *p = acc + 4 * (aBegin + a - 1);
                    if (compare_ratio(p[0], p[1], p[2], p[3], s0, s1, w0, w1) >= 0) {
                        add128(s0, s1, p[0], p[1]);
                        add128(w0, w1, p[2], p[3]);
                        a--;
                        st = start[aBegin + a];
                        continue;
                    }
                }
                if (b < cntB) {
                    const u64 *p = acc + 4 * (bBegin + b);
                    if (compare_ratio(s0, s1, w0, w1, p[0], p[1], p[2], p[3]) >= 0) {
                        add128(s0, s1, p[0], p[1]);
                        add128(w0, w1, p[2], p[3]);
                        b++;
                        continue;
                    }
                }
                break;
            }
            u64 *t = acc + 4 * (aBegin + a);
            t[0] = s0; t[1] = s1; t[2] = w0; t[3] = w1;
            start[aBegin + a] = st;
            lenA = a + 1;
            skip = b;
        }
    }
    info[3 * q] = lenA;
    info[3 * q + 1] = skip;
    info[3 * q + 2] = cntB - skip;
    cntOut[q] = lenA + cntB - skip;
}

extern "C" __global__ void iso_compact(const u64 *__restrict__ accIn, const int *__restrict__ startIn,
                                       u64 *__restrict__ accOut, int *__restrict__ startOut, int n, long long region,
                                       const int *__restrict__ info) {
    const long long pairSpan = 2 * region;
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x) {
        long long q = i / pairSpan;
        long long base = q * pairSpan;
        long long off = i - base;
        long long dst = -1;
        if (off < region) {
            if (off < info[3 * q]) dst = i;
        } else {
            long long ob = off - region;
            int skip = info[3 * q + 1];
            if (ob >= skip && ob < skip + info[3 * q + 2]) dst = base + info[3 * q] + (ob - skip);
        }
        if (dst >= 0) {
            const u64 *s = accIn + 4 * i;
            u64 *d = accOut + 4 * dst;
            d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; d[3] = s[3];
            startOut[dst] = startIn[i];
        }
    }
}

/* ------------------------------------------------------------------------------------------ MLS */

#define SCAN_THREADS 1024

extern "C" __global__ void iso_mls_prefix(const u64 *__restrict__ acc, int n, u64 *__restrict__ z) {
    __shared__ u64 part[4 * SCAN_THREADS];
    const int t = threadIdx.x;
    const long long c = ((long long) n + SCAN_THREADS - 1) / SCAN_THREADS;
    const long long from = min((long long) n, t * c), to = min((long long) n, from + c);
    u64 a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (long long j = from; j < to; j++) {
        add128(a0, a1, acc[4 * j], acc[4 * j + 1]);
        add128(a2, a3, acc[4 * j + 2], acc[4 * j + 3]);
    }
    part[4 * t] = a0; part[4 * t + 1] = a1; part[4 * t + 2] = a2; part[4 * t + 3] = a3;
    __syncthreads();
    if (t == 0) {
        u64 r0 = 0, r1 = 0, r2 = 0, r3 = 0;
        for (int k = 0; k < SCAN_THREADS; k++) { /* exclusive scan of the chunk sums */
            u64 b0 = part[4 * k], b1 = part[4 * k + 1], b2 = part[4 * k + 2], b3 = part[4 * k + 3];
            part[4 * k] = r0; part[4 * k + 1] = r1; part[4 * k + 2] = r2; part[4 * k + 3] = r3;
            add128(r0, r1, b0, b1);
            add128(r2, r3, b2, b3);
        }
        z[0] = 0; z[1] = 0; z[2] = 0; z[3] = 0;
    }
    __syncthreads();
    a0 = part[4 * t]; a1 = part[4 * t + 1]; a2 = part[4 * t + 2]; a3 = part[4 * t + 3];
    for (long long j = from; j < to; j++) {
        add128(a0, a1, acc[4 * j], acc[4 * j + 1]);
        add128(a2, a3, acc[4 * j + 2], acc[4 * j + 3]);
        u64 *o = z + 4 * (j + 1);
        o[0] = a0; o[1] = a1; o[2] = a2; o[3] = a3;
    }
}

#define MLS_TOL 1e-14

extern "C" __global__ void iso_mls_argmin(const u64 *__restrict__ z, int n, int *__restrict__ jstar) {
    extern __shared__ __align__(16) u64 tile[]; /* 4 * blockDim.x records z[j+1] */
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool active = i < n;
    u64 zi0 = 0, zi1 = 0, zi2 = 0, zi3 = 0;
    if (active) { zi0 = z[4 * i]; zi1 = z[4 * i + 1]; zi2 = z[4 * i + 2]; zi3 = z[4 * i + 3]; }
    u64 bs0 = 0, bs1 = 0, bw0 = 0, bw1 = 0;
    double bq = 0.0;
    int best = -1;
    for (int j0 = blockIdx.x * blockDim.x; j0 < n; j0 += blockDim.x) {
        __syncthreads();
        const int tl = min((int) blockDim.x, n - j0);
        if (threadIdx.x < tl) {
            const u64 *s = z + 4 * ((long long) j0 + threadIdx.x + 1);
            tile[4 * threadIdx.x] = s[0]; tile[4 * threadIdx.x + 1] = s[1];
            tile[4 * threadIdx.x + 2] = s[2]; tile[4 * threadIdx.x + 3] = s[3];
        }
        __syncthreads();
        if (!active) continue;
        for (int t = max(0, i - j0); t < tl; t++) {
            u64 s0, s1, w0, w1;
            sub128(tile[4 * t], tile[4 * t + 1], zi0, zi1, s0, s1);
            sub128(tile[4 * t + 2], tile[4 * t + 3], zi2, zi3, w0, w1);
            double q = __ddiv_rn(approx128(s0, s1), approx128(w0, w1));
            bool take;
            if (best < 0) {
                take = true;
            } else {
                double diff = __dsub_rn(q, bq);
                double tol = __dmul_rn(MLS_TOL, __dadd_rn(fabs(q), fabs(bq)));
                if (diff < -tol) take = true;
                else if (diff > tol) take = false;
                else take = compare_ratio(s0, s1, w0, w1, bs0, bs1, bw0, bw1) <= 0;
            }
            if (take) {
                best = j0 + t; bq = q;
                bs0 = s0; bs1 = s1; bw0 = w0; bw1 = w1;
            }
        }
    }
    if (active) jstar[i] = best;
}

extern "C" __global__ void iso_mls_blocks(const u64 *__restrict__ z, const int *__restrict__ jstar, int n,
                                          u64 *__restrict__ accOut, int *__restrict__ startOut, int *__restrict__ count) {
    __shared__ int reachBefore[SCAN_THREADS];
    __shared__ int startsBefore[SCAN_THREADS];
    __shared__ int total;
    const int t = threadIdx.x;
    const long long c = ((long long) n + SCAN_THREADS - 1) / SCAN_THREADS;
    const int from = (int) min((long long) n, t * c), to = (int) min((long long) n, from + c);
    int mx = -1;
    for (int i = from; i < to; i++) mx = max(mx, jstar[i]);
    reachBefore[t] = mx;
    __syncthreads();
    if (t == 0) {
        int r = -1;
        for (int k = 0; k < SCAN_THREADS; k++) { int v = reachBefore[k]; reachBefore[k] = r; r = max(r, v); }
    }
    __syncthreads();
    int reach = reachBefore[t], starts = 0;
    for (int i = from; i < to; i++) {
        if (reach < i) starts++;
        reach = max(reach, jstar[i]);
    }
    startsBefore[t] = starts;
    __syncthreads();
    if (t == 0) {
        int s = 0;
        for (int k = 0; k < SCAN_THREADS; k++) { int v = startsBefore[k]; startsBefore[k] = s; s += v; }
        total = s;
        count[0] = s;
    }
    __syncthreads();
    reach = reachBefore[t];
    int b = startsBefore[t];
    for (int i = from; i < to; i++) {
        if (reach < i) startOut[b++] = i;
        reach = max(reach, jstar[i]);
    }
    __syncthreads();
    const int m = total;
    for (int k = t; k < m; k += SCAN_THREADS) {
        const long long s = startOut[k];
        const long long e = k + 1 < m ? startOut[k + 1] : n;
        u64 *o = accOut + 4 * (long long) k;
        sub128(z[4 * e], z[4 * e + 1], z[4 * s], z[4 * s + 1], o[0], o[1]);
        sub128(z[4 * e + 2], z[4 * e + 3], z[4 * s + 2], z[4 * s + 3], o[2], o[3]);
    }
}
