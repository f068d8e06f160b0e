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
 *   iso_mls_prefix   ONE block of 1024 threads: exact prefix sums z (each thread sums a chunk, cub::BlockScan of
 *                    the chunk sums, each thread then writes its chunk's prefixes).
 *   iso_mls_argmin   one thread per i (block 256, dynamic shared memory 32*blockDim bytes): the largest j >= i
 *                    minimising the mean of points i..j, with shared-memory tiles of z; O(n - i) per thread.
 *   iso_mls_blocks   ONE block of 1024 threads: reach = prefix max of jstar (the max-scan by block key), block
 *                    starts where reach < i, block sums as prefix differences; count[0] = number of blocks (both
 *                    scans chunked as in iso_mls_prefix, by cub::BlockScan).
 *   (1024 = ISO_MLS_THREADS, include/layout/isotonic.cuh, as all sizes here that the host mirrors.)
 */

#include "block.cuh"
#include "common.cuh"
#include "fixed128.cuh"
#include "layout/isotonic.cuh"

/* 128-bit arithmetic: include/fixed128.cuh (fx_add, fx_sub, fx_compare_ratio = Int128.compareRatio,
 * fx_to_double_approx = IsotonicCpu.approx, fx_quantize = FixedPoint.add, fx_atomic_add). */

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
        if (fx_compare_ratio(s0, s1, w0, w1, p0, p1, p2, p3) < 0) {
            top++;
            u64 *t = acc + 4 * top;
            t[0] = s0; t[1] = s1; t[2] = w0; t[3] = w1;
            start[top] = st;
            s0 = p0; s1 = p1; w0 = p2; w1 = p3; st = (int) i;
            continue;
        }
        fx_add(s0, s1, p0, p1);
        fx_add(w0, w1, p2, p3);
        while (top >= from) {
            const u64 *t = acc + 4 * top;
            u64 t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3];
            if (fx_compare_ratio(t0, t1, t2, t3, s0, s1, w0, w1) < 0) break;
            fx_add(s0, s1, t0, t1);
            fx_add(w0, w1, t2, t3);
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
        if (fx_compare_ratio(ta[0], ta[1], ta[2], ta[3], hb[0], hb[1], hb[2], hb[3]) >= 0) {
            int a = cntA - 1, b = 1;
            u64 s0 = ta[0], s1 = ta[1], w0 = ta[2], w1 = ta[3];
            fx_add(s0, s1, hb[0], hb[1]);
            fx_add(w0, w1, hb[2], hb[3]);
            int st = start[aBegin + a];
            while (true) {
                if (a > 0) {
                    const u64 *p = acc + 4 * (aBegin + a - 1);
                    if (fx_compare_ratio(p[0], p[1], p[2], p[3], s0, s1, w0, w1) >= 0) {
                        fx_add(s0, s1, p[0], p[1]);
                        fx_add(w0, w1, p[2], p[3]);
                        a--;
                        st = start[aBegin + a];
                        continue;
                    }
                }
                if (b < cntB) {
                    const u64 *p = acc + 4 * (bBegin + b);
                    if (fx_compare_ratio(s0, s1, w0, w1, p[0], p[1], p[2], p[3]) >= 0) {
                        fx_add(s0, s1, p[0], p[1]);
                        fx_add(w0, w1, p[2], p[3]);
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

/* A record (s, w) of two 128-bit sums and its exact sum, for cub::BlockScan. */
struct IsoRecord {
    u64 s0, s1, w0, w1;
};

struct IsoRecordSum {
    __device__ __forceinline__ IsoRecord operator()(const IsoRecord &a, const IsoRecord &b) const {
        IsoRecord r = a;
        fx_add(r.s0, r.s1, b.s0, b.s1);
        fx_add(r.w0, r.w1, b.w0, b.w1);
        return r;
    }
};

extern "C" __global__ void __launch_bounds__(ISO_MLS_THREADS) iso_mls_prefix(const u64 *__restrict__ acc, int n,
                                                                             u64 *__restrict__ z) {
    typedef BlockScanT<IsoRecord, ISO_MLS_THREADS> Scan;
    __shared__ typename Scan::TempStorage scanTemp;
    const int t = threadIdx.x;
    const long long c = ((long long) n + ISO_MLS_THREADS - 1) / ISO_MLS_THREADS;
    const long long from = min((long long) n, t * c), to = min((long long) n, from + c);
    IsoRecord part = {0ull, 0ull, 0ull, 0ull};
    for (long long j = from; j < to; j++) {
        fx_add(part.s0, part.s1, acc[4 * j], acc[4 * j + 1]);
        fx_add(part.w0, part.w1, acc[4 * j + 2], acc[4 * j + 3]);
    }
    const IsoRecord zero = {0ull, 0ull, 0ull, 0ull};
    Scan(scanTemp).ExclusiveScan(part, part, zero, IsoRecordSum()); /* sums of the chunks before this one */
    if (t == 0) {
        z[0] = 0; z[1] = 0; z[2] = 0; z[3] = 0;
    }
    u64 a0 = part.s0, a1 = part.s1, a2 = part.w0, a3 = part.w1;
    for (long long j = from; j < to; j++) {
        fx_add(a0, a1, acc[4 * j], acc[4 * j + 1]);
        fx_add(a2, a3, acc[4 * j + 2], acc[4 * j + 3]);
        u64 *o = z + 4 * (j + 1);
        o[0] = a0; o[1] = a1; o[2] = a2; o[3] = a3;
    }
}

#define MLS_TOL 1e-14

extern "C" __global__ void iso_mls_argmin(const u64 *__restrict__ z, int n, int *__restrict__ jstar) {
    extern __shared__ __align__(16) u64 tile[]; /* blockDim.x records z[j+1] (ISO_MLS_ARGMIN_SHARED_BYTES) */
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
            fx_sub(tile[4 * t], tile[4 * t + 1], zi0, zi1, s0, s1);
            fx_sub(tile[4 * t + 2], tile[4 * t + 3], zi2, zi3, w0, w1);
            double q = __ddiv_rn(fx_to_double_approx(s0, s1), fx_to_double_approx(w0, w1));
            bool take;
            if (best < 0) {
                take = true;
            } else {
                double diff = __dsub_rn(q, bq);
                double tol = __dmul_rn(MLS_TOL, __dadd_rn(fabs(q), fabs(bq)));
                if (diff < -tol) take = true;
                else if (diff > tol) take = false;
                else take = fx_compare_ratio(s0, s1, w0, w1, bs0, bs1, bw0, bw1) <= 0;
            }
            if (take) {
                best = j0 + t; bq = q;
                bs0 = s0; bs1 = s1; bw0 = w0; bw1 = w1;
            }
        }
    }
    if (active) jstar[i] = best;
}

extern "C" __global__ void __launch_bounds__(ISO_MLS_THREADS) iso_mls_blocks(const u64 *__restrict__ z,
        const int *__restrict__ jstar, int n, u64 *__restrict__ accOut, int *__restrict__ startOut,
        int *__restrict__ count) {
    typedef BlockScanT<int, ISO_MLS_THREADS> Scan;
    __shared__ typename Scan::TempStorage scanTemp;
    const int t = threadIdx.x;
    const long long c = ((long long) n + ISO_MLS_THREADS - 1) / ISO_MLS_THREADS;
    const int from = (int) min((long long) n, t * c), to = (int) min((long long) n, from + c);
    int mx = -1;
    for (int i = from; i < to; i++) mx = max(mx, jstar[i]);
    int reachBefore; /* max of jstar over the chunks before this one, -1 for the first */
    Scan(scanTemp).ExclusiveScan(mx, reachBefore, -1, IntMax());
    int reach = reachBefore, starts = 0;
    for (int i = from; i < to; i++) {
        if (reach < i) starts++;
        reach = max(reach, jstar[i]);
    }
    __syncthreads(); /* scanTemp is reused */
    int b, total; /* block starts in the chunks before this one, in all chunks */
    Scan(scanTemp).ExclusiveSum(starts, b, total);
    if (t == 0) count[0] = total;
    reach = reachBefore;
    for (int i = from; i < to; i++) {
        if (reach < i) startOut[b++] = i;
        reach = max(reach, jstar[i]);
    }
    __syncthreads();
    const int m = total;
    for (int k = t; k < m; k += ISO_MLS_THREADS) {
        const long long s = startOut[k];
        const long long e = k + 1 < m ? startOut[k + 1] : n;
        u64 *o = accOut + 4 * (long long) k;
        fx_sub(z[4 * e], z[4 * e + 1], z[4 * s], z[4 * s + 1], o[0], o[1]);
        fx_sub(z[4 * e + 2], z[4 * e + 3], z[4 * s + 2], z[4 * s + 3], o[2], o[3]);
    }
}

/* ------------------------------------------------------------------------------------------ sort and pool */
/*
 * Raw rows -> pooled points on the device (the GPU twin of IsoPoints.pool with keepRows = false): validation
 * flags, 64-bit order-preserving keys, the sort engine's stable LSD radix sort of (key, row) pairs (sort.cu,
 * sort_p64_*, launched by io.sparkgpu.sort.PairRadixSort between iso_sp_keys and iso_sp_heads), group heads by key
 * change and their prefix scan (distinct-feature index of each sorted row), then the exact fixed-point sums per
 * distinct feature.
 *
 * Data layout (structure of arrays; row and point indices are int, len < 2^31)
 *   x, y, w   double[len]   the partition's rows (w may be NULL: weight 1).
 *   keys      u64[len]      key of row i: sortKey(x) (IsoPoints.sortKey; -0.0 maps like 0.0); rows of weight 0 and
 *                           invalid rows get SP_DROP = ~0, above every finite key, so they sort last and the first
 *                           kept = len - zero sorted rows are exactly the rows of positive weight.
 *   idx       int[len]      row index travelling with its key.
 *   digits    int[8*256]    global count of digit d of pass p at [256p + d] (ISO_SP_PASSES * ISO_SP_DIGITS; passes
 *                           where one digit has every key are skipped by the host, as IsoPoints.radixSort does).
 *   g         int[kept]     head flag of sorted row r (key differs from row r-1), then its exclusive scan.
 *   ux        double[n]     distinct features (x + 0.0), n = distinct.
 *   acc       u64[4n]       (sLo, sHi, wLo, wHi) as in the PAVA-merge section; zeroed by the host first.
 *   counters  int[4]        ISO_SP_C_*: [0] invalid rows (NaN/Inf, negative weight), [1] rows of weight 0,
 *                           [2] distinct, [3] points whose summed weight quantized to 0 ("weight too small").
 *
 * Kernels and launch shapes (1-D)
 *   iso_sp_keys      grid-stride, block 256: keys, idx, digit counts (shared-memory histograms), counters[0..1].
 *   iso_sp_scan      one block of 256 threads per ISO_SP_SCAN_TILE = 2048 ints (8 consecutive per thread):
 *                    in-place exclusive scan (cub::BlockScan), block total to sums[block]; iso_sp_scan_add adds
 *                    the scanned block totals back (the host recurses). Used for the heads.
 *   iso_sp_heads     one thread per sorted kept row (block 256).
 *   iso_sp_pool      one thread per run of ISO_SP_RUN sorted rows (block 256): sums kept in registers while the group
 *                    does not change, flushed by 128-bit atomic adds (integer sums: order independent).
 *   iso_sp_check_w   one thread per kept row (block 256), active for the first counters[2] = n (the distinct
 *                    count written by iso_sp_pool, not known to the host at launch).
 *   iso_sp_bounds    one thread per block of the PAVA-merge result (block 256): first and last feature.
 */

/* Sizes the host mirrors are in include/layout/isotonic.cuh (ISO_SP_*). */
#define SP_DROP 0xffffffffffffffffull


/* warp-aggregated counter increment */
__device__ __forceinline__ void sp_count(bool pred, int *counter) {
    const unsigned b = __ballot_sync(FULL_MASK, pred);
    if ((threadIdx.x & 31) == 0 && b != 0u) atomicAdd(counter, __popc(b));
}

extern "C" __global__ void iso_sp_keys(const double *__restrict__ x, const double *__restrict__ y,
                                       const double *__restrict__ w, int len, u64 *__restrict__ keys,
                                       int *__restrict__ idx, int *__restrict__ digits, int *__restrict__ counters) {
    __shared__ int h[ISO_SP_PASSES * ISO_SP_DIGITS];
    for (int k = threadIdx.x; k < ISO_SP_PASSES * ISO_SP_DIGITS; k += blockDim.x) h[k] = 0;
    __syncthreads();
    const long long stride = (long long) gridDim.x * blockDim.x;
    const long long end = ((long long) len + 31) / 32 * 32; /* whole warps stay in the loop for the ballots */
    for (long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x; i < end; i += stride) {
        bool bad = false, zero = false;
        if (i < len) {
            const double xi = x[i], yi = y[i], wi = w == NULL ? 1.0 : w[i];
            bad = !isfinite(xi) || !isfinite(yi) || !isfinite(wi) || wi < 0.0;
            zero = !bad && wi == 0.0;
            u64 key = SP_DROP;
            if (!bad && !zero) {
                const long long bits = __double_as_longlong(__dadd_rn(xi, 0.0));
                key = (u64) bits ^ ((u64) (bits >> 63) | 0x8000000000000000ull);
            }
            keys[i] = key;
            idx[i] = (int) i;
#pragma unroll
            for (int p = 0; p < ISO_SP_PASSES; p++)
                atomicAdd(&h[ISO_SP_DIGITS * p + (int) ((key >> (ISO_SP_DIGIT_BITS * p)) & (ISO_SP_DIGITS - 1))], 1);
        }
        sp_count(bad, counters + ISO_SP_C_INVALID);
        sp_count(zero, counters + ISO_SP_C_ZERO_WEIGHT);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < ISO_SP_PASSES * ISO_SP_DIGITS; k += blockDim.x) {
        if (h[k] != 0) atomicAdd(&digits[k], h[k]);
    }
}

extern "C" __global__ void __launch_bounds__(ISO_SP_THREADS) iso_sp_scan(int *__restrict__ data, int n,
                                                                          int *__restrict__ sums) {
    typedef BlockScanT<int, ISO_SP_THREADS> Scan;
    __shared__ typename Scan::TempStorage scanTemp;
    /* thread t holds the ISO_SP_SCAN_ITEMS consecutive ints from base (a blocked arrangement, as cub expects) */
    const long long base = (long long) blockIdx.x * ISO_SP_SCAN_TILE + (long long) threadIdx.x * ISO_SP_SCAN_ITEMS;
    int v[ISO_SP_SCAN_ITEMS];
#pragma unroll
    for (int k = 0; k < ISO_SP_SCAN_ITEMS; k++) v[k] = base + k < n ? data[base + k] : 0;
    int total;
    Scan(scanTemp).ExclusiveSum(v, v, total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
#pragma unroll
    for (int k = 0; k < ISO_SP_SCAN_ITEMS; k++)
        if (base + k < n) data[base + k] = v[k];
}

extern "C" __global__ void iso_sp_scan_add(int *__restrict__ data, int n, const int *__restrict__ offsets) {
    const long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += offsets[i / ISO_SP_SCAN_TILE];
}

extern "C" __global__ void iso_sp_heads(const u64 *__restrict__ keys, int kept, int *__restrict__ g) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < kept) g[r] = (r == 0 || keys[r] != keys[r - 1]) ? 1 : 0;
}

extern "C" __global__ void iso_sp_pool(const u64 *__restrict__ keys, const int *__restrict__ idx,
                                       const int *__restrict__ g, const double *__restrict__ x,
                                       const double *__restrict__ y, const double *__restrict__ w, int kept,
                                       int negate, double ls1, double ls2, double ws1, double ws2,
                                       double *__restrict__ ux, u64 *__restrict__ acc, int *__restrict__ counters) {
    const long long from = ((long long) blockIdx.x * blockDim.x + threadIdx.x) * ISO_SP_RUN;
    if (from >= kept) return;
    const long long to = min((long long) kept, from + ISO_SP_RUN);
    int cur = -1;
    u64 s0 = 0, s1 = 0, w0 = 0, w1 = 0;
    for (long long r = from; r < to; r++) {
        const bool head = r == 0 || keys[r] != keys[r - 1];
        const int u = g[r] + (head ? 0 : -1);
        const int i = idx[r];
        if (u != cur) {
            if (cur >= 0) {
                fx_atomic_add(acc + 4 * (long long) cur, s0, s1);
                fx_atomic_add(acc + 4 * (long long) cur + 2, w0, w1);
            }
            cur = u;
            s0 = s1 = w0 = w1 = 0;
        }
        if (head) ux[u] = __dadd_rn(x[i], 0.0);
        const double wi = w == NULL ? 1.0 : w[i];
        const double yi = negate ? -y[i] : y[i];
        u64 lo, hi;
        fx_quantize(__dmul_rn(wi, yi), ls1, ls2, lo, hi);
        fx_add(s0, s1, lo, hi);
        fx_quantize(wi, ws1, ws2, lo, hi);
        fx_add(w0, w1, lo, hi);
        if (r == kept - 1) counters[ISO_SP_C_DISTINCT] = u + 1;
    }
    fx_atomic_add(acc + 4 * (long long) cur, s0, s1);
    fx_atomic_add(acc + 4 * (long long) cur + 2, w0, w1);
}

extern "C" __global__ void iso_sp_check_w(const u64 *__restrict__ acc, int *__restrict__ counters) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < counters[ISO_SP_C_DISTINCT] && acc[4 * (long long) p + 2] == 0ull && acc[4 * (long long) p + 3] == 0ull)
        atomicAdd(counters + ISO_SP_C_WEIGHT_TOO_SMALL, 1);
}

extern "C" __global__ void iso_sp_bounds(const double *__restrict__ ux, const int *__restrict__ start, int m, int n,
                                         double *__restrict__ xs, double *__restrict__ xe) {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= m) return;
    xs[b] = ux[start[b]];
    xe[b] = ux[(b + 1 < m ? start[b + 1] : n) - 1];
}
