/*
 * k-means step kernel: nearest centre per point, then per-cluster sums, weights, counts and cost
 * accumulated in exact fixed point.
 *
 * Two families with one contract: kmeans_step_* compute every distance in FP64 (cosine, d > 64, and
 * centre sets whose FP32 copy does not fit in shared memory); kmeans_filt_* (euclidean, d <= 64; see
 * "FP32 screening kernels" below) screen all centres in FP32 with a rigorous error bound and compute in
 * FP64 only the winner's distance and, for the points the screening cannot decide, the candidates'.
 * KMeansGpu.plan chooses; both give the CPU twin's bits. The register kernels (d <= 64) of both families come
 * in two accumulation variants with the same arguments and bits: the plain entries add every point's quantized
 * values with 128-bit atomics (accumulatePoint), the *_sorted entries sort each block's tile of points by label
 * and add per-cluster register sums (see "Sorted accumulation"); sparkgpu.kmeans.accumulate=sorted|atomic picks.
 *
 * Data layout
 *   x        double[n*d]  row-major (AoS): point i occupies x[i*d .. i*d+d). Row index int (n < 2^31),
 *                         element offsets are computed in 64 bits.
 *   w        double[n]    point weights (>= 0).
 *   centres  double[k*dp] row-major with row stride dp = round_up(d, 4); entries d..dp-1 of each row
 *                         must be 0.0 (the launcher pads them). Rows are then 32-byte aligned and
 *                         every 4-dimension block is two 16-byte loads with no bounds check.
 *   scale    double[2*(d+2)]: for dimension j the pair (s1, s2) = scale[2j], scale[2j+1]; the pair for
 *                         weights at 2d, the pair for cost at 2d+2. A value v is quantized as
 *                         trunc(v*s1*s2 * 2^64) (toward zero) where s1*s2 = 2^(shift-64): |v| is split into
 *                         integer part and fraction*2^64, then negated as a two's-complement 128-bit integer.
 *   acc      unsigned long long[2*k*d + 2*k + 2 + k]:
 *              [0, 2kd)          sums, (lo, hi) pair for (cluster c, dim j) at 2*(c*d+j)
 *              [2kd, 2kd+2k)     weight sums, pair for cluster c at 2kd + 2c
 *              [2kd+2k, +2)      cost (sum of w * distance to nearest centre), one pair
 *              [2kd+2k+2, +k)    point counts per cluster
 *   labels   int[n]   optional (null): nearest centre of each point.
 *   dists    double[n] optional (null): distance to the nearest centre; with minUpdate != 0 the
 *                      stored value becomes min(stored, distance) (k-means|| cost passes).
 *
 * Determinism: distances use explicitly rounded operations in dimension order: per dimension
 * t = __dsub_rn(x, c), acc = __fma_rn(t, t, acc) (cosine: acc = __fma_rn(x, c, acc), then 1 - acc).
 * The fused multiply-add is the IEEE 754 fusedMultiplyAdd (one rounding), the same operation as Java's
 * Math.fma, and nvcc runs with --fmad=false so that it never contracts any other mul+add on its own.
 * So the nearest centre equals the Java twin's bit for bit; ties go to the lower index (candidates are
 * compared strictly, in increasing centre order, also when two centres are evaluated together). The zero
 * padding adds fma(0, 0, acc) terms after the last dimension, which leave acc unchanged (at most a -0.0
 * dot product becomes +0.0, and 1 - acc is the same for both). Sums are integer additions modulo 2^128,
 * which are associative, so atomics in any order give the same bits on every run, on any GPU, and on
 * the CPU twin.
 *
 * Work per thread: each thread searches two centres at once (two independent FMA chains per point, the
 * per-centre order unchanged); kernels with DMAX <= 32 also take two points at once, i and
 * i + blockDim.x of each grid-stride step of 2*blockDim.x*gridDim.x points, so each centre value loaded
 * from shared memory feeds four chains. DMAX = 64 and the generic kernel take one point per step.
 *
 * Launch shape: 1-D grid-stride loop, blockDim.x = KMEANS_BLOCK = 256 (include/layout/kmeans.cuh; the sorted
 * kernels need exactly that, the others work with any multiple of 32), grid chosen from
 * occupancy (at most ceil(n / (points per thread * blockDim.x)) blocks have work). Dynamic shared
 * memory: centres (k*dp doubles) when centresInShared, followed by the accumulator block (as many words
 * as acc, laid out dimension-major with split low/high words: see accumulatePoint) when accInShared; blocks
 * flush shared accumulators to acc with global atomics at the end. The *_sorted kernels append their sort
 * region (KMeansGpu.sortBytes) after all of that.
 */

#include "block.cuh"
#include "common.cuh"
#include "fixed128.cuh"
#include "layout/kmeans.cuh"

/* One dimension of a distance: squared euclidean (t = x - c, acc += t*t with one rounding) or the cosine
 * dot product (acc += x*c with one rounding). Java: Math.fma(t, t, acc) / Math.fma(x, c, acc). */
template <bool COS>
__device__ __forceinline__ double term(double x, double c, double acc) {
    if (COS) return __fma_rn(x, c, acc);
    const double t = __dsub_rn(x, c);
    return __fma_rn(t, t, acc);
}

template <bool COS>
__device__ __forceinline__ double finish(double acc) {
    return COS ? __dsub_rn(1.0, acc) : acc;
}

/* The running argmin, fed the candidates in increasing centre order: the first candidate (centre 0) is
 * taken whatever its value, later ones only when strictly smaller, so ties keep the lower index and the
 * comparisons are exactly those of the CPU twin's loop. */
__device__ __forceinline__ void consider(double dc, int c, bool first, double &bestD, int &best) {
    if (first || dc < bestD) {
        bestD = dc;
        best = c;
    }
}

/* Asks L2 to fetch the 128-byte lines of row r (len doubles) of a global array; no result, no fault. */
__device__ __forceinline__ void prefetchRowL2(const double *r, int len) {
    for (int j = 0; j < len; j += 16)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(r + j)));
    asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(r + len - 1)));
}

__device__ __forceinline__ double2 load2(const double *p) {
    return *reinterpret_cast<const double2 *>(p);
}

/* Nearest centre of NP points held in registers (x[p][j], zero for j >= d), DMAX in {8,16,32,64}.
 * Centre rows are dp = round_up(d, 4) doubles apart and zero-padded, so each block of 4 dimensions is
 * two 16-byte loads per centre and needs no per-dimension bounds check: a padded dimension has x = c = 0
 * and adds fma(0, 0, acc) (euclidean: t = 0 - 0 = 0), which leaves acc unchanged (at most a cosine -0.0
 * becomes +0.0, and 1 - acc is the same for both). Two centres are searched at once: each centre value
 * loaded feeds NP points and each point value two centres, giving 2*NP independent FMA chains; every
 * chain keeps the per-centre operation order (dimensions 0..d-1), so the distances are unchanged. */
template <int DMAX, int NP, bool COS>
__device__ __forceinline__ void searchRegs(const double (&x)[NP][DMAX], const double *C, int k, int d, int dp,
                                           int (&best)[NP], double (&bestD)[NP]) {
    const double *ca = C;
    int c = 0;
    for (; c + 1 < k; c += 2, ca += 2 * dp) {
        const double *cb = ca + dp;
        double acc0[NP], acc1[NP];
#pragma unroll
        for (int p = 0; p < NP; p++) acc0[p] = acc1[p] = 0.0;
#pragma unroll
        for (int b = 0; b < DMAX; b += 4) {
            if (b < d) { /* uniform: d is the same for every thread */
                const double2 a01 = load2(ca + b), a23 = load2(ca + b + 2);
                const double2 b01 = load2(cb + b), b23 = load2(cb + b + 2);
                const double av[4] = {a01.x, a01.y, a23.x, a23.y};
                const double bv[4] = {b01.x, b01.y, b23.x, b23.y};
#pragma unroll
                for (int u = 0; u < 4; u++) {
#pragma unroll
                    for (int p = 0; p < NP; p++) {
                        acc0[p] = term<COS>(x[p][b + u], av[u], acc0[p]);
                        acc1[p] = term<COS>(x[p][b + u], bv[u], acc1[p]);
                    }
                }
            }
        }
#pragma unroll
        for (int p = 0; p < NP; p++) {
            consider(finish<COS>(acc0[p]), c, c == 0, bestD[p], best[p]);
            consider(finish<COS>(acc1[p]), c + 1, false, bestD[p], best[p]);
        }
    }
    if (c < k) { /* odd k: the last centre alone */
        double acc0[NP];
#pragma unroll
        for (int p = 0; p < NP; p++) acc0[p] = 0.0;
#pragma unroll
        for (int b = 0; b < DMAX; b += 4) {
            if (b < d) {
                const double2 a01 = load2(ca + b), a23 = load2(ca + b + 2);
                const double av[4] = {a01.x, a01.y, a23.x, a23.y};
#pragma unroll
                for (int u = 0; u < 4; u++) {
#pragma unroll
                    for (int p = 0; p < NP; p++) acc0[p] = term<COS>(x[p][b + u], av[u], acc0[p]);
                }
            }
        }
#pragma unroll
        for (int p = 0; p < NP; p++) consider(finish<COS>(acc0[p]), c, c == 0, bestD[p], best[p]);
    }
}

/* Nearest centre of one point read from memory (any d; the generic kernel), two centres at a time. */
template <bool COS>
__device__ __forceinline__ void searchMem(const double *__restrict__ xi, const double *C, int k, int d, int dp,
                                          int &best, double &bestD) {
    const double *ca = C;
    int c = 0;
    for (; c + 1 < k; c += 2, ca += 2 * dp) {
        const double *cb = ca + dp;
        double acc0 = 0.0, acc1 = 0.0;
        int j = 0;
        for (; j + 4 <= d; j += 4) {
            const double2 a01 = load2(ca + j), a23 = load2(ca + j + 2);
            const double2 b01 = load2(cb + j), b23 = load2(cb + j + 2);
            const double x0 = xi[j], x1 = xi[j + 1], x2 = xi[j + 2], x3 = xi[j + 3];
            acc0 = term<COS>(x0, a01.x, acc0);
            acc1 = term<COS>(x0, b01.x, acc1);
            acc0 = term<COS>(x1, a01.y, acc0);
            acc1 = term<COS>(x1, b01.y, acc1);
            acc0 = term<COS>(x2, a23.x, acc0);
            acc1 = term<COS>(x2, b23.x, acc1);
            acc0 = term<COS>(x3, a23.y, acc0);
            acc1 = term<COS>(x3, b23.y, acc1);
        }
        for (; j < d; j++) {
            const double xj = xi[j];
            acc0 = term<COS>(xj, ca[j], acc0);
            acc1 = term<COS>(xj, cb[j], acc1);
        }
        consider(finish<COS>(acc0), c, c == 0, bestD, best);
        consider(finish<COS>(acc1), c + 1, false, bestD, best);
    }
    if (c < k) {
        double acc0 = 0.0;
        for (int j = 0; j < d; j++) acc0 = term<COS>(xi[j], ca[j], acc0);
        consider(finish<COS>(acc0), c, c == 0, bestD, best);
    }
}

/* Adds point (values v[j] = x_ij, j < d) with weight wi and distance bestD to cluster best.
 * Two layouts of the accumulator A, P = k*d + k + 1 pairs then k counts at A[2P + c] in both:
 *  - global (soa false): the layout of acc, pair p at A[2p] (low), A[2p+1] (high), p(c, j) = c*d + j;
 *  - shared (soa true): low words A[p], high words A[P + p], p(c, j) = j*k + c (dimension-major). Lanes of a warp
 *    adding the same dimension to different clusters then hit consecutive 8-byte words, i.e. different banks;
 *    with the global layout the cluster rows are 2*d words apart (a multiple of the 32 banks for d = 16, 32,
 *    64), so every lane of a warp hit the same bank and the shared atomics were serialised 32-fold.
 * Weights are pair kd + c in both layouts; the integer sums are the same whatever the layout and order. */
template <int DMAX, typename V>
__device__ __forceinline__ void accumulatePoint(const V &v, double wi, double bestD, int best, int d, long long kd, int k,
                                                const double *__restrict__ scale, u64 *A, bool soa, u64 &costLo,
                                                u64 &costHi) {
    u64 lo, hi;
    const long long P = kd + k + 1;
    if (DMAX > 0) {
#pragma unroll
        for (int j = 0; j < (DMAX > 0 ? DMAX : 1); j++) {
            if (j < d) {
                fx_quantize(__dmul_rn(wi, v[j]), scale[2 * j], scale[2 * j + 1], lo, hi);
                const long long p = soa ? (long long) j * k + best : (long long) best * d + j;
                if (soa) fx_atomic_add_split(A + p, A + P + p, lo, hi);
                else fx_atomic_add(A + 2 * p, lo, hi);
            }
        }
    } else {
        for (int j = 0; j < d; j++) {
            fx_quantize(__dmul_rn(wi, v[j]), scale[2 * j], scale[2 * j + 1], lo, hi);
            const long long p = soa ? (long long) j * k + best : (long long) best * d + j;
            if (soa) fx_atomic_add_split(A + p, A + P + p, lo, hi);
            else fx_atomic_add(A + 2 * p, lo, hi);
        }
    }
    fx_quantize(wi, scale[2 * d], scale[2 * d + 1], lo, hi);
    const long long pw = kd + best;
    if (soa) fx_atomic_add_split(A + pw, A + P + pw, lo, hi);
    else fx_atomic_add(A + 2 * pw, lo, hi);
    atomicAdd(A + 2 * P + best, 1ull);
    fx_quantize(__dmul_rn(wi, bestD), scale[2 * d + 2], scale[2 * d + 3], lo, hi);
    fx_add(costLo, costHi, lo, hi);
}

/* End of a block: the thread's cost pair into A, then (shared layout) the block's sums into acc. */
__device__ __forceinline__ void flushAccumulator(u64 *A, bool soa, u64 *acc, long long kd, int k, int d, u64 costLo,
                                                 u64 costHi) {
    const long long P = kd + k + 1;
    const long long pc = kd + k;
    if (soa) fx_atomic_add_split(A + pc, A + P + pc, costLo, costHi);
    else fx_atomic_add(A + 2 * pc, costLo, costHi);
    if (!soa) return;
    __syncthreads();
    for (long long t = threadIdx.x; t < P; t += blockDim.x) {
        const long long g = t < kd ? (t % k) * d + t / k : t;
        fx_atomic_add(acc + 2 * g, A[t], A[P + t]);
    }
    for (long long t = threadIdx.x; t < k; t += blockDim.x) {
        u64 v = A[2 * P + t];
        if (v) atomicAdd(acc + 2 * P + t, v);
    }
}

/* ======================================================================================================
 * Sorted accumulation (kernels *_sorted; register kernels only, DMAX in {8,16,32,64})
 *
 * The atomic variant adds every point's d + 1 quantized values with 128-bit shared atomics (about 2d + 3
 * 64-bit atomics per point, serialised when lanes of a warp share a cluster). The sorted variant adds the
 * same quantized values, with the same fx_quantize() of the same operands (w_i * x_ij rounded once, then the
 * dimension's scale pair), only in another order: integer sums modulo 2^128 do not depend on the order, so
 * the accumulator holds the same bits as the atomic variant's and the CPU twin's.
 *
 * Per grid-stride step a block owns the contiguous tile [base, base + TILE) of TILE = blockDim.x * NP points
 * (the loop's condition is on base, uniform in the block, so __syncthreads is legal inside it):
 *  1. each thread, for each of its valid points, takes rank = atomicAdd(&cnt[best], 1) (one 32-bit shared
 *     atomic per point) and adds its cost to its own register pair as before;
 *  2. an exclusive scan of cnt[0..k) gives off[0..k], off[k] = valid points of the tile (each thread sums a
 *     contiguous chunk of cnt, cub::BlockScan scans the chunk sums, each thread writes its chunk's offsets);
 *  3. each point's tile index and label are scattered to idx/lab[off[best] + rank] (a counting sort; the order
 *     inside a cluster is whatever the atomics gave, which does not matter for integer sums); cnt is then
 *     zeroed for the next tile (the barrier at the end of the tile orders it before the next histogram);
 *  4. warp w takes an equal share [w*per, (w+1)*per) of the sorted positions (balanced whatever the cluster
 *     sizes); its lanes are G = 32 / DW groups of DW = min(DMAX, 32) lanes, the groups take alternate
 *     positions; lane j of a group handles dimension j (and j + 32 in a second pass when DMAX = 64): it loads
 *     x[i*d + j] and w[i] of U = 8 (DMAX = 64: 4) positions at once (coalesced across the lanes; the rows were
 *     just read by the search, so mostly from L1/L2), then quantizes exactly as the atomic variant does and
 *     sums in registers with fx_add; lane 0 of each group also sums the quantized weights and counts the
 *     points. Positions are sorted by cluster, so a group meets each cluster in one run; where the label
 *     changes (and at the end of the share) the run is flushed (flushRun): each lane adds its pair with one
 *     fx_atomic_add to (c, j) of the accumulator (shared, dimension-major, when accInShared; else global), lane
 *     0 of the group the weight pair and the count.
 * Atomics per tile: (d + 1) 128-bit adds and one count per run, runs <= G * (non-empty clusters + warps),
 * instead of (d + 1) 128-bit adds and one count per point.
 * Labels, dists and minUpdate are written exactly as in the atomic variant (before the sort).
 *
 * Shared memory, after everything the atomic variant uses: cnt int[k], off int[k + 1], idx int[tile], lab int[tile]
 * (KMEANS_SORT_INTS, KMeansGpu.sortBytes; the host reserves it), plus the scan's static cub temporary storage.
 * ====================================================================================================== */

/* off[c] = cnt[0] + ... + cnt[c-1] for c <= k: thread t sums the chunk [t*ch, t*ch + ch) of cnt, an exclusive
 * block scan of the chunk sums gives each chunk's first offset. Integer sums: exact. Called by the whole block
 * (blockDim.x == KMEANS_BLOCK); contains barriers. */
__device__ __forceinline__ void blockExclusiveScan(const int *cnt, int *off, int k) {
    typedef BlockScanT<int, KMEANS_BLOCK> Scan;
    __shared__ typename Scan::TempStorage scanTemp;
    const int ch = (k + KMEANS_BLOCK - 1) / KMEANS_BLOCK;
    const int lo = min(k, (int) threadIdx.x * ch);
    const int hi = min(k, lo + ch);
    int s = 0;
    for (int c = lo; c < hi; c++) s += cnt[c];
    int e;
    Scan(scanTemp).ExclusiveSum(s, e);
    for (int c = lo; c < hi; c++) {
        off[c] = e;
        e += cnt[c];
    }
    if (threadIdx.x == KMEANS_BLOCK - 1) off[k] = e;
}

/* End of a run of points of cluster c (one group's consecutive sorted positions): each lane's dimension pair, the
 * group's weight pair (lane 0 of the group) and its point count into A, in either accumulator layout. */
template <int PASSES>
__device__ __forceinline__ void flushRun(u64 *A, bool soa, int c, int d, int k, long long kd, int jl,
                                         const u64 (&lo)[PASSES], const u64 (&hi)[PASSES], u64 wLo, u64 wHi,
                                         unsigned int run) {
    const long long P = kd + k + 1;
#pragma unroll
    for (int q = 0; q < PASSES; q++) {
        const int j = q * 32 + jl;
        if (j < d) {
            if (soa) {
                const long long p = (long long) j * k + c;
                fx_atomic_add_split(A + p, A + P + p, lo[q], hi[q]);
            } else {
                fx_atomic_add(A + 2 * ((long long) c * d + j), lo[q], hi[q]);
            }
        }
    }
    if (jl == 0) {
        const long long pw = kd + c;
        if (soa) fx_atomic_add_split(A + pw, A + P + pw, wLo, wHi);
        else fx_atomic_add(A + 2 * pw, wLo, wHi);
        atomicAdd(A + 2 * P + c, (u64) run);
    }
}

/* Steps 1-4 above for one tile; best/valid of this thread's NP points (tile index threadIdx.x + p*blockDim.x).
 * Must be called by every thread of the block. */
template <int DMAX, int NP>
__device__ __forceinline__ void sortedAccumulateTile(const double *__restrict__ x, const double *__restrict__ w,
                                                     long long base, int d, int k, long long kd,
                                                     const double *__restrict__ scale, u64 *A, bool soa,
                                                     int *cnt, int *off, int *idx, int *lab,
                                                     const int (&best)[NP], const bool (&valid)[NP]) {
    int rank[NP];
#pragma unroll
    for (int p = 0; p < NP; p++) rank[p] = valid[p] ? atomicAdd(cnt + best[p], 1) : 0;
    __syncthreads();
    blockExclusiveScan(cnt, off, k);
    __syncthreads();
#pragma unroll
    for (int p = 0; p < NP; p++)
        if (valid[p]) {
            const int t = off[best[p]] + rank[p];
            idx[t] = threadIdx.x + p * blockDim.x;
            lab[t] = best[p];
        }
    __syncthreads();

    for (int c = threadIdx.x; c < k; c += blockDim.x) cnt[c] = 0; /* for the next tile; read only before the barrier above */

    constexpr int DW = DMAX < 32 ? DMAX : 32; /* lanes per group */
    constexpr int G = 32 / DW;                /* groups per warp */
    constexpr int PASSES = DMAX > 32 ? 2 : 1;
    constexpr int U = PASSES == 1 ? 8 : 4;    /* points per group whose loads are issued together */
    const int lane = threadIdx.x & 31, g = lane / DW, jl = lane % DW;
    const int nw = blockDim.x >> 5;
    double s1[PASSES], s2[PASSES];
#pragma unroll
    for (int q = 0; q < PASSES; q++) {
        const int j = q * 32 + jl;
        s1[q] = j < d ? scale[2 * j] : 0.0;
        s2[q] = j < d ? scale[2 * j + 1] : 0.0;
    }
    const double ws1 = scale[2 * d], ws2 = scale[2 * d + 1];
    /* warp w takes the sorted positions [from, to): an equal share of the tile whatever the cluster sizes */
    const int total = off[k];
    const int per = (total + nw - 1) / nw;
    const int from = min(total, (int) (threadIdx.x >> 5) * per), to = min(total, from + per);
    int cur = -1;
    unsigned int run = 0;
    u64 lo[PASSES], hi[PASSES], wLo = 0ull, wHi = 0ull;
#pragma unroll
    for (int q = 0; q < PASSES; q++) lo[q] = hi[q] = 0ull;
    for (int t0 = from + g; t0 < to; t0 += U * G) {
        double xv[PASSES][U], wv[U];
        int cv[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int t = t0 + u * G;
            cv[u] = -1;
            wv[u] = 0.0;
#pragma unroll
            for (int q = 0; q < PASSES; q++) xv[q][u] = 0.0;
            if (t < to) {
                const long long ii = base + idx[t];
                cv[u] = lab[t];
                wv[u] = w[ii];
#pragma unroll
                for (int q = 0; q < PASSES; q++)
                    if (q * 32 + jl < d) xv[q][u] = x[ii * d + q * 32 + jl];
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (cv[u] < 0) continue; /* past the end of the share (uniform in the group) */
            if (cv[u] != cur) {      /* uniform in the group: its lanes take the same points */
                if (cur >= 0) flushRun<PASSES>(A, soa, cur, d, k, kd, jl, lo, hi, wLo, wHi, run);
                cur = cv[u];
                run = 0;
                wLo = wHi = 0ull;
#pragma unroll
                for (int q = 0; q < PASSES; q++) lo[q] = hi[q] = 0ull;
            }
            u64 ql, qh;
#pragma unroll
            for (int q = 0; q < PASSES; q++) {
                if (q * 32 + jl < d) {
                    fx_quantize(__dmul_rn(wv[u], xv[q][u]), s1[q], s2[q], ql, qh);
                    fx_add(lo[q], hi[q], ql, qh);
                }
            }
            if (jl == 0) {
                fx_quantize(wv[u], ws1, ws2, ql, qh);
                fx_add(wLo, wHi, ql, qh);
            }
            run++;
        }
    }
    if (cur >= 0) flushRun<PASSES>(A, soa, cur, d, k, kd, jl, lo, hi, wLo, wHi, run);
    __syncthreads(); /* idx, lab, off and cnt are reused by the next tile */
}

template <int DMAX, bool SORT = false>
__device__ void kmeans_step(const double *__restrict__ x, const double *__restrict__ w, int n, int d,
                            const double *__restrict__ centres, int k, int cosine,
                            const double *__restrict__ scale, u64 *__restrict__ acc,
                            int accumulate, int centresInShared, int accInShared,
                            int *__restrict__ labels, double *__restrict__ dists, int minUpdate) {
    /* points per thread: two for d <= 32 (each centre value then feeds 4 FMA chains); one point of 64
     * doubles already fills half the register file */
    constexpr int NP = DMAX > 0 ? KMEANS_STEP_NP(DMAX) : 1;
    constexpr int DR = DMAX > 0 ? DMAX : 1;
    extern __shared__ __align__(16) unsigned char smem[];
    const int dp = KMEANS_PADDED_DIM(d);
    const long long kd = (long long) k * d;
    const long long kdp = (long long) k * dp;
    const long long accLen = KMEANS_ACC_LEN((long long) k, d);

    const double *sc = (const double *) smem;
    unsigned char *next = smem;
    if (centresInShared) {
        double *s = (double *) smem;
        for (long long t = threadIdx.x; t < kdp; t += blockDim.x) s[t] = centres[t];
        next = smem + kdp * sizeof(double);
    }
    u64 *A = acc;
    const bool soa = accumulate && accInShared; /* shared accumulator: dimension-major, split words */
    if (soa) {
        A = (u64 *) next;
        for (long long t = threadIdx.x; t < accLen; t += blockDim.x) A[t] = 0ull;
        next += accLen * sizeof(u64);
    }
    /* sorted accumulation: cnt[k], off[k+1], idx[tile], lab[tile] after everything else (KMEANS_SORT_INTS) */
    int *sCnt = (int *) next;
    int *sOff = sCnt + k;
    int *sIdx = sOff + k + 1;
    int *sLab = sIdx + KMEANS_BLOCK * NP;
    if (SORT && accumulate)
        for (int t = threadIdx.x; t < k; t += blockDim.x) sCnt[t] = 0;
    __syncthreads();

    u64 costLo = 0ull, costHi = 0ull;
    const long long stride = (long long) gridDim.x * blockDim.x * NP;
    /* sorted variant: the loop condition is on the block's tile base, uniform in the block (it has barriers) */
    for (long long i = (long long) blockIdx.x * blockDim.x * NP + threadIdx.x; SORT ? i - threadIdx.x < n : i < n;
         i += stride) {
        const long long base = i - threadIdx.x; /* the block's tile */
        /* this thread's points: i and, when NP == 2, i + blockDim.x (which may be past the end: it is then
         * searched as a zero vector, and nothing of it is stored or accumulated) */
        long long ip[NP];
        bool valid[NP];
#pragma unroll
        for (int p = 0; p < NP; p++) {
            ip[p] = i + (long long) p * blockDim.x;
            valid[p] = ip[p] < n;
        }
        /* Register kernels: all warps of a block start each step together by loading their points, then
         * spend the step searching, so those loads come in one burst that waits for DRAM; fetching the next
         * step's rows into L2 now spreads that traffic over this step's search. */
#pragma unroll
        for (int p = 0; p < NP; p++) {
            const long long nx = ip[p] + stride;
            if (DMAX > 0 && nx < n) {
                prefetchRowL2(x + nx * d, d);
                if (accumulate) prefetchRowL2(w + nx, 1);
            }
        }
        int best[NP];
        double bestD[NP];
#pragma unroll
        for (int p = 0; p < NP; p++) { best[p] = 0; bestD[p] = 0.0; }
        double xr[NP][DR];
        if (DMAX > 0) {
#pragma unroll
            for (int p = 0; p < NP; p++) {
                const double *xi = x + (valid[p] ? ip[p] : 0) * d;
#pragma unroll
                for (int j = 0; j < DR; j++) xr[p][j] = (valid[p] && j < d) ? xi[j] : 0.0;
            }
            /* uniform branches: the address space of the centres is then known to the compiler */
            if (centresInShared) {
                if (cosine) searchRegs<DR, NP, true>(xr, sc, k, d, dp, best, bestD);
                else searchRegs<DR, NP, false>(xr, sc, k, d, dp, best, bestD);
            } else {
                if (cosine) searchRegs<DR, NP, true>(xr, centres, k, d, dp, best, bestD);
                else searchRegs<DR, NP, false>(xr, centres, k, d, dp, best, bestD);
            }
        } else {
            const double *xi = x + i * d;
            if (centresInShared) {
                if (cosine) searchMem<true>(xi, sc, k, d, dp, best[0], bestD[0]);
                else searchMem<false>(xi, sc, k, d, dp, best[0], bestD[0]);
            } else {
                if (cosine) searchMem<true>(xi, centres, k, d, dp, best[0], bestD[0]);
                else searchMem<false>(xi, centres, k, d, dp, best[0], bestD[0]);
            }
        }
#pragma unroll
        for (int p = 0; p < NP; p++) {
            if (!valid[p]) continue;
            const long long ii = ip[p];
            if (labels) labels[ii] = best[p];
            if (dists) dists[ii] = (minUpdate && dists[ii] <= bestD[p]) ? dists[ii] : bestD[p];
            if (accumulate && !SORT) {
                if (DMAX > 0) accumulatePoint<DMAX>(xr[p], w[ii], bestD[p], best[p], d, kd, k, scale, A, soa, costLo, costHi);
                else accumulatePoint<DMAX>(x + ii * d, w[ii], bestD[p], best[p], d, kd, k, scale, A, soa, costLo, costHi);
            } else if (accumulate) {
                u64 ql, qh;
                fx_quantize(__dmul_rn(w[ii], bestD[p]), scale[2 * d + 2], scale[2 * d + 3], ql, qh);
                fx_add(costLo, costHi, ql, qh);
            }
        }
        if (SORT && DMAX > 0 && accumulate)
            sortedAccumulateTile<DR, NP>(x, w, base, d, k, kd, scale, A, soa, sCnt, sOff, sIdx, sLab, best, valid);
    }
    if (!accumulate) return;
    /* the cost pair is kept per thread and added once, avoiding one hot address per point */
    flushAccumulator(A, soa, acc, kd, k, d, costLo, costHi);
}

#define KMEANS_ENTRY(NAME, DMAX)                                                                       \
    extern "C" __global__ void NAME(const double *x, const double *w, int n, int d, const double *centres, \
                                    int k, int cosine, const double *scale, u64 *acc, int accumulate,   \
                                    int centresInShared, int accInShared, int *labels, double *dists,  \
                                    int minUpdate) {                                                    \
        kmeans_step<DMAX>(x, w, n, d, centres, k, cosine, scale, acc, accumulate, centresInShared,     \
                          accInShared, labels, dists, minUpdate);                                       \
    }

KMEANS_ENTRY(kmeans_step_d8, 8)
KMEANS_ENTRY(kmeans_step_d16, 16)
KMEANS_ENTRY(kmeans_step_d32, 32)
KMEANS_ENTRY(kmeans_step_d64, 64)
KMEANS_ENTRY(kmeans_step_dany, 0)

#define KMEANS_SORTED_ENTRY(NAME, DMAX)                                                                \
    extern "C" __global__ void NAME(const double *x, const double *w, int n, int d, const double *centres, \
                                    int k, int cosine, const double *scale, u64 *acc, int accumulate,   \
                                    int centresInShared, int accInShared, int *labels, double *dists,  \
                                    int minUpdate) {                                                    \
        kmeans_step<DMAX, true>(x, w, n, d, centres, k, cosine, scale, acc, accumulate, centresInShared, \
                                accInShared, labels, dists, minUpdate);                                 \
    }

KMEANS_SORTED_ENTRY(kmeans_step_d8_sorted, 8)
KMEANS_SORTED_ENTRY(kmeans_step_d16_sorted, 16)
KMEANS_SORTED_ENTRY(kmeans_step_d32_sorted, 32)
KMEANS_SORTED_ENTRY(kmeans_step_d64_sorted, 64)

/* ======================================================================================================
 * FP32 screening kernels (euclidean, d <= 64): kmeans_filt_d8 / d16 / d32 / d64
 *
 * Same contract and bit-identical results as kmeans_step_* (labels, dists, accumulator); the FP64 work
 * per point drops from k*d to d (the winner's distance) except for the points whose FP32 screening
 * cannot prove the FP64 argmin ("rechecks", counted in *recheck).
 *
 * Host-side inputs (KMeansGpu.FilterSetup): an origin m (double[d], the mean of the centres), a power
 * of two s, and for every centre c (k2 = k rounded up to even; the extra centre is a dummy):
 *   c'_c  = (float)((c - m) * s)            (FP64 subtract and exact power-of-two scaling, one rounding)
 *   fc    = -2 * c'_c as float[k2*dp]       (exact; rows zero-padded to dp like the FP64 centres)
 *   fnc_c = (float) ||c'_c||^2              (dummy: +inf, so it never wins and never is a candidate)
 *   C    >= max_c ||c'_c||  and the bound coefficients c2, c1, c0 and the limit Rlim (below).
 * Per point:  x'_j = (float)((x_j - m_j) * s) in the same way, e_c = fnc_c + sum_j x'_j * fc_cj as an
 * FP32 fma chain (one FMA per dimension per centre), X = sqrt_ru(sum_ru x'_j^2) >= ||x'|| (every
 * operation rounded up, so X is an upper bound), R = X + C (rounded up) and
 *   B = c2*R^2 + c1*R + c0   (Horner, every operation rounded up).
 *
 * Claim: with T_c = s^2 D_c - ||x'||^2 (D_c the FP64 distance of the twin; exact reals; the shift
 * ||x'||^2 is the same for every centre, so the order of the T_c is that of the D_c),
 * |e_c - T_c| <= B for every real centre c, provided R <= Rlim. Derivation (u = 2^-24, v = 2^-53,
 * gamma_n = n*u/(1-n*u), a = s(x - m), g = s(c - m) exact reals, so s^2*||x - c||^2 = ||a - g||^2):
 *  (i)  input rounding: x'_j = fl32(fl64(x_j - m_j)*s) has |x'_j - a_j| <= rho|a_j| + 2^-149 with
 *       rho = (1+u)(1+v)-1 (the FP64 product by s is exact unless it underflows, which adds <= 2^-1075;
 *       the FP32 rounding adds <= 2^-150 when it underflows), hence |x'_j - a_j| <= ex|x'_j| + eta with
 *       ex = rho/(1-rho) <= 2^-23 and eta = 2^-148; the same for c'. With r = ||x' - c'|| and
 *       delta = ||x' - a|| + ||c' - g|| <= ex*R + h, h = 2*sqrt(d)*eta, the triangle inequality gives
 *       | ||a - g||^2 - r^2 | <= 2*r*delta + delta^2 <= 2.01*ex*R^2 + 2.01*h*R + h^2 (r <= R).
 *  (ii) the FP32 chain e_c = fnc_c + sum x'_j*fc_cj (d roundings, all products exact inside the fma)
 *       is within gamma_d*(|fnc_c| + 2*sum|x'_j c'_j|) + d*2^-150 of fnc_c - 2 x'.c', and
 *       |fnc_c| + 2 sum|x'_j c'_j| <= 1.01*(C^2 + 2XC) <= 1.01 R^2; the rounding of fnc_c itself
 *       adds <= 1.01*u*C^2 + 2^-150. Since ||x'||^2 + ||c'||^2 - 2x'.c' = r^2 exactly, e_c is within
 *       (1.01*gamma_d + 1.01*u)*R^2 + (d+1)*2^-150 of r^2 - ||x'||^2.
 *  (iii) the twin's D_c (t = fl(x - c), fma chain of d terms t^2: d+2 relative roundings per term, or
 *       2^-1075 absolute per step when a result is subnormal) satisfies
 *       |D_c - S| <= gamma64_{d+2}*S + d*2^-1075, S = ||x - c||^2, and s^2*S <= (R*(1+ex) + h)^2
 *       <= 2.01*R^2 + 2*h^2; so |s^2 D_c - s^2 S| <= 2.01*gamma64_{d+2}*R^2 + 2*gamma64*h^2 + s^2*d*2^-1075.
 *       This needs no FP64 overflow: R <= Rlim = min(2^62, s*2^499) keeps s^2*S <= 2^1000, and also
 *       keeps every FP32 partial sum of (ii) below 2^126, so no FP32 value is infinite or NaN.
 *  Sum: c2 = F*(1.01u + 1.01*gamma_d + 2.01*ex + 2.01*gamma64_{d+2}), c1 = F*2.01*h,
 *       c0 = F*(h^2 + (d+1)*2^-150 + 2*gamma64*h^2 + s^2*d*2^-1075), with a safety factor F = 4 (the
 *       derived bound is nearly attained at d = 1: measured up to ~0.85 of it); the host computes them in
 *       double and rounds them up to float (KMeansGpu.Filter).
 * Decision: let e1 = min_c e_c (index i1, the first one reaching it) and e2 = the second smallest value
 * (over the other centres). If rd(e2 - B) > ru(e1 + B), every c != i1 has T_c >= e_c - B > e1 + B >= T_i1,
 * so i1 is the strict FP64 argmin: no tie question. Otherwise (a "recheck") U = ru(e1 + B) >= T_i1 >=
 * min T, and every centre whose D equals the FP64 minimum has e_c - B <= T_c = min T <= U, so the
 * candidates {c : !(rd(e_c - B) > U)} contain all of them; evaluating the candidates' FP64 distances in
 * increasing centre order with the twin's rule (first taken, later ones only when strictly smaller)
 * gives the twin's answer. When R <= Rlim fails (or anything is NaN) U is NaN, every centre is a
 * candidate, and that is the twin's full search. The winner's FP64 distance is always computed in the
 * twin's order, so dists, cost and everything accumulated are the same bits.
 *
 * Shared memory: fc (k2*dp floats), fnc (k2 rounded up to 4 floats), then the FP64 centres (k*dp) when
 * centresInShared, then the accumulator when accInShared. Points per thread NP = 4 (d <= 16), 2 (d <= 32),
 * 1 (d <= 64); each thread searches two centres at once, so every float4 of a centre feeds 2*NP chains.
 * The FP64 values of x are read again from global memory (L1/L2) for the winner's distance and the
 * accumulation instead of being held in registers.
 * ====================================================================================================== */

/* The twin's FP64 squared distance of the point at xi to the centre at ci (dimension order). */
__device__ __forceinline__ double dist64(const double *__restrict__ xi, const double *ci, int d) {
    double acc = 0.0;
    for (int j = 0; j < d; j++) {
        const double t = __dsub_rn(xi[j], ci[j]);
        acc = __fma_rn(t, t, acc);
    }
    return acc;
}

__device__ __forceinline__ float4 load4f(const float *p) {
    return *reinterpret_cast<const float4 *>(p);
}

/* Recheck of one point: FP64 distances of every candidate centre, in increasing order, twin's rule. */
template <int DMAX>
__device__ __forceinline__ void recheckPoint(const float (&xr)[DMAX], const double *__restrict__ xi, const double *C64,
                                          const float *FC, const float *FNC, int k, int d, int dp, float B, float U,
                                          int &best, double &bestD) {
    bool first = true;
    best = 0;
    bestD = 0.0;
    for (int c = 0; c < k; c++) {
        const float *fc = FC + (long long) c * dp;
        float e = FNC[c];
#pragma unroll
        for (int j = 0; j < DMAX; j++)
            if (j < d) e = __fmaf_rn(xr[j], fc[j], e);
        if (!(__fsub_rd(e, B) > U)) {
            const double dc = dist64(xi, C64 + (long long) c * dp, d);
            consider(dc, c, first, bestD, best);
            first = false;
        }
    }
}

template <int DMAX, bool SORT = false>
__device__ void kmeans_filt(const double *__restrict__ x, const double *__restrict__ w, int n, int d,
                            const double *__restrict__ centres, int k, const float *__restrict__ fcG,
                            const float *__restrict__ fncG, const double *__restrict__ origin, double s, float Cn,
                            float c2, float c1, float c0, float Rlim, const double *__restrict__ scale,
                            u64 *__restrict__ acc, int accumulate, int centresInShared, int accInShared,
                            int *__restrict__ labels, double *__restrict__ dists, int minUpdate,
                            u64 *__restrict__ recheck) {
    constexpr int NP = KMEANS_FILT_NP(DMAX);
    extern __shared__ __align__(16) unsigned char smem[];
    const int dp = KMEANS_PADDED_DIM(d);
    const int k2 = KMEANS_FILT_K2(k);
    const long long kd = (long long) k * d;
    const long long kdp = (long long) k * dp;
    const long long accLen = KMEANS_ACC_LEN((long long) k, d);
    const long long nfc = (long long) k2 * dp;
    const int nfnc = KMEANS_FILT_NORMS(k);

    float *FC = (float *) smem;
    float *FNC = FC + nfc;
    for (long long t = threadIdx.x; t < nfc; t += blockDim.x) FC[t] = fcG[t];
    for (int t = threadIdx.x; t < k2; t += blockDim.x) FNC[t] = fncG[t];
    unsigned char *next = (unsigned char *) (FNC + nfnc);
    const double *C64 = centres;
    if (centresInShared) {
        double *sc = (double *) next;
        for (long long t = threadIdx.x; t < kdp; t += blockDim.x) sc[t] = centres[t];
        C64 = sc;
        next += kdp * sizeof(double);
    }
    u64 *A = acc;
    const bool soa = accumulate && accInShared; /* shared accumulator: dimension-major, split words */
    if (soa) {
        A = (u64 *) next;
        for (long long t = threadIdx.x; t < accLen; t += blockDim.x) A[t] = 0ull;
        next += accLen * sizeof(u64);
    }
    int *sCnt = (int *) next; /* sorted accumulation, as in kmeans_step */
    int *sOff = sCnt + k;
    int *sIdx = sOff + k + 1;
    int *sLab = sIdx + KMEANS_BLOCK * NP;
    if (SORT && accumulate)
        for (int t = threadIdx.x; t < k; t += blockDim.x) sCnt[t] = 0;
    __syncthreads();

    u64 costLo = 0ull, costHi = 0ull;
    unsigned int rechecks = 0;
    const long long stride = (long long) gridDim.x * blockDim.x * NP;
    for (long long i = (long long) blockIdx.x * blockDim.x * NP + threadIdx.x; SORT ? i - threadIdx.x < n : i < n;
         i += stride) {
        const long long base = i - threadIdx.x;
        long long ip[NP];
        bool valid[NP];
#pragma unroll
        for (int p = 0; p < NP; p++) {
            ip[p] = i + (long long) p * blockDim.x;
            valid[p] = ip[p] < n;
        }
#pragma unroll
        for (int p = 0; p < NP; p++) {
            const long long nx = ip[p] + stride;
            if (nx < n) {
                prefetchRowL2(x + nx * d, d);
                if (accumulate) prefetchRowL2(w + nx, 1);
            }
        }
        /* x' = (float)((x - m) * s); invalid points become zero vectors (searched, never used) */
        float xr[NP][DMAX];
        float B[NP];
        bool ok[NP];
#pragma unroll
        for (int p = 0; p < NP; p++) {
            const double *xi = x + (valid[p] ? ip[p] : 0) * d;
            float nx = 0.0f;
#pragma unroll
            for (int j = 0; j < DMAX; j++) {
                float v = 0.0f;
                if (valid[p] && j < d) v = __double2float_rn(__dmul_rn(__dsub_rn(xi[j], origin[j]), s));
                xr[p][j] = v;
                nx = __fmaf_ru(v, v, nx);
            }
            const float R = __fadd_ru(__fsqrt_ru(nx), Cn);
            ok[p] = R <= Rlim; /* false for NaN */
            B[p] = __fmaf_ru(__fmaf_ru(c2, R, c1), R, c0);
        }
        float e1[NP], e2[NP];
        int i1[NP];
#pragma unroll
        for (int p = 0; p < NP; p++) {
            e1[p] = __int_as_float(0x7f800000);
            e2[p] = e1[p];
            i1[p] = 0;
        }
        const float *ca = FC;
        for (int c = 0; c < k2; c += 2, ca += 2 * dp) {
            const float *cb = ca + dp;
            float a0[NP], a1[NP];
            const float na = FNC[c], nb = FNC[c + 1];
#pragma unroll
            for (int p = 0; p < NP; p++) { a0[p] = na; a1[p] = nb; }
#pragma unroll
            for (int b = 0; b < DMAX; b += 4) {
                if (b < d) {
                    const float4 av = load4f(ca + b), bv = load4f(cb + b);
                    const float aa[4] = {av.x, av.y, av.z, av.w};
                    const float bb[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
                    for (int u = 0; u < 4; u++) {
#pragma unroll
                        for (int p = 0; p < NP; p++) {
                            a0[p] = __fmaf_rn(xr[p][b + u], aa[u], a0[p]);
                            a1[p] = __fmaf_rn(xr[p][b + u], bb[u], a1[p]);
                        }
                    }
                }
            }
#pragma unroll
            for (int p = 0; p < NP; p++) {
                if (a0[p] < e1[p]) { e2[p] = e1[p]; e1[p] = a0[p]; i1[p] = c; }
                else e2[p] = fminf(e2[p], a0[p]);
                if (a1[p] < e1[p]) { e2[p] = e1[p]; e1[p] = a1[p]; i1[p] = c + 1; }
                else e2[p] = fminf(e2[p], a1[p]);
            }
        }
        int bestP[NP];
#pragma unroll
        for (int p = 0; p < NP; p++) {
            bestP[p] = 0;
            if (!valid[p]) continue;
            const long long ii = ip[p];
            const double *xi = x + ii * d;
            int best;
            double bestD;
            /* NaN anywhere makes the comparison false: a recheck */
            if (ok[p] && __fsub_rd(e2[p], B[p]) > __fadd_ru(e1[p], B[p])) {
                best = i1[p];
                bestD = dist64(xi, C64 + (long long) best * dp, d);
            } else {
                rechecks++;
                const float U = ok[p] ? __fadd_ru(e1[p], B[p]) : __int_as_float(0x7fffffff);
                recheckPoint<DMAX>(xr[p], xi, C64, FC, FNC, k, d, dp, B[p], U, best, bestD);
            }
            if (labels) labels[ii] = best;
            if (dists) dists[ii] = (minUpdate && dists[ii] <= bestD) ? dists[ii] : bestD;
            bestP[p] = best;
            if (accumulate && !SORT) {
                accumulatePoint<0>(xi, w[ii], bestD, best, d, kd, k, scale, A, soa, costLo, costHi);
            } else if (accumulate) {
                u64 ql, qh;
                fx_quantize(__dmul_rn(w[ii], bestD), scale[2 * d + 2], scale[2 * d + 3], ql, qh);
                fx_add(costLo, costHi, ql, qh);
            }
        }
        if (SORT && accumulate)
            sortedAccumulateTile<DMAX, NP>(x, w, base, d, k, kd, scale, A, soa, sCnt, sOff, sIdx, sLab, bestP, valid);
    }
    if (recheck && rechecks) atomicAdd(recheck, (u64) rechecks);
    if (!accumulate) return;
    flushAccumulator(A, soa, acc, kd, k, d, costLo, costHi);
}

#define KMEANS_FILT_ENTRY(NAME, DMAX)                                                                       \
    extern "C" __global__ void __launch_bounds__(KMEANS_BLOCK) NAME(                                                 \
        const double *x, const double *w, int n, int d, const double *centres, int k, const float *fc,      \
        const float *fnc, const double *origin, double s, float Cn, float c2, float c1, float c0, float Rlim, \
        const double *scale, u64 *acc, int accumulate, int centresInShared, int accInShared, int *labels,    \
        double *dists, int minUpdate, u64 *recheck) {                                                       \
        kmeans_filt<DMAX>(x, w, n, d, centres, k, fc, fnc, origin, s, Cn, c2, c1, c0, Rlim, scale, acc,     \
                          accumulate, centresInShared, accInShared, labels, dists, minUpdate, recheck);     \
    }

KMEANS_FILT_ENTRY(kmeans_filt_d8, 8)
KMEANS_FILT_ENTRY(kmeans_filt_d16, 16)
KMEANS_FILT_ENTRY(kmeans_filt_d32, 32)
KMEANS_FILT_ENTRY(kmeans_filt_d64, 64)

#define KMEANS_FILT_SORTED_ENTRY(NAME, DMAX)                                                                \
    extern "C" __global__ void __launch_bounds__(KMEANS_BLOCK) NAME(                                                 \
        const double *x, const double *w, int n, int d, const double *centres, int k, const float *fc,      \
        const float *fnc, const double *origin, double s, float Cn, float c2, float c1, float c0, float Rlim, \
        const double *scale, u64 *acc, int accumulate, int centresInShared, int accInShared, int *labels,    \
        double *dists, int minUpdate, u64 *recheck) {                                                       \
        kmeans_filt<DMAX, true>(x, w, n, d, centres, k, fc, fnc, origin, s, Cn, c2, c1, c0, Rlim, scale, acc, \
                                accumulate, centresInShared, accInShared, labels, dists, minUpdate, recheck);   \
    }

KMEANS_FILT_SORTED_ENTRY(kmeans_filt_d8_sorted, 8)
KMEANS_FILT_SORTED_ENTRY(kmeans_filt_d16_sorted, 16)
KMEANS_FILT_SORTED_ENTRY(kmeans_filt_d32_sorted, 32)
KMEANS_FILT_SORTED_ENTRY(kmeans_filt_d64_sorted, 64)
