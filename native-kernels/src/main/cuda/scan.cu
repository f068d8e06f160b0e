/*
 * Scan statistics: the best axis-aligned range (interval, rectangle or box) of a 1-, 2- or 3-D grid by
 * log-likelihood ratio, plus the kernels that draw Monte Carlo replicas under the null hypothesis.
 * CPU twins: io.sparkgpu.scan.ScanCpu (scan), ScanReplicas/ScanRandom (replicas), ScanMath (arithmetic).
 *
 * Data layout
 *   tables   long long[(nx+1)(ny+1)(nz+1)] (existing axes only), x fastest: P[x,y,z] = sum over cells
 *            x'<x, y'<y, z'<z. Two tables: cases (whole counts, or fixed point: fractional counts of the
 *            Poisson models, values of the normal model; SCAN_D_CSCALE = 2^-s, 1 for whole counts) and
 *            baseline (fixed point). Strides sy = nx+1, sz = (nx+1)(ny+1) (0 for missing axes).
 *   prm      long long[SCAN_P_COUNT]: shape, range mapping, index slice and constraints (layout: SCAN_P_*,
 *            include/layout/scan.cuh, with the other sizes the host mirrors).
 *   dprm     double[SCAN_D_COUNT]: the model's constants (layout: SCAN_D_*).
 *   logtab   double[2*91]: the table of DetMath.tableLog (dm_log_table), copied to shared memory per block.
 *   excl     int[6*nExcl]: excluded boxes {ax, bx, ay, by, az, bz} (secondary clusters).
 *   out      per block: best LLR (double) and its global range index (long long; -1 if none).
 *   Indices: global range indices and interval indices are 64-bit; cells, rows and columns 32-bit.
 *
 * Work decomposition (see ScanShape and RangeMapping): the global range index g = i_x + T_x * s, s the
 * strip (fixed y- and z-interval). Work items are chunks of at most K consecutive i_x of one strip; item u
 * is (s = u / Q, chunk u mod Q), Q = ceil(T_x / K), clipped to the slice [lo, hi) of g. Blocks take items in
 * a grid-stride loop (every item costs the same); inside an item thread t takes i_x = start + t + k*blockDim,
 * walking the range-mapping rectangle (row, col) by a fixed step with no division. A strip's x prefix arrays
 * (the alternating sum of the 2^(d-1) table rows of its y/z corners, exact in 64 bits) are built in shared
 * memory (SHARED kernels; 2-D, 3-D and small 1-D grids); large 1-D grids read the table itself from global
 * memory (L2-resident; GLOBAL kernels). Each range then costs two differences and one LLR.
 *
 * Determinism: every floating-point operation is an explicitly rounded intrinsic in the order of the Java
 * twin (and nvcc runs with --fmad=false); the logarithm is the table method of DetMath, not CUDA's log. So
 * LLRs equal the CPU twin's bit for bit. The best range is max LLR, ties to the smaller global index: each
 * thread visits increasing indices and keeps strict improvements, and block and final reductions compare
 * (LLR, index) pairs, a total order (cub::BlockReduce in blocks), so the result does not depend on the launch
 * shape, the slicing or the order of combination.
 *
 * Launch shape: scan_best_*: 1-D grid (from occupancy, at most the number of items), blockDim 256, dynamic
 * shared memory 16*(nx+1) bytes for SHARED kernels. scan_reduce: one block of 256. Replica kernels:
 * grid-stride loops, blockDim 256; scan_prefix_axis: one block (256) per table line.
 */

#include "block.cuh"
#include "common.cuh"
#include "detmath.cuh"
#include "layout/scan.cuh"

enum { M_POISSON = 0, M_BERNOULLI = 1, M_NORMAL = 2, M_EBP = 3 };

/* ------------------------------------------------------------------------------------------------ math */

/* The natural logarithm is dm_log_table (include/detmath.cuh, DetMath.tableLog), with the table in shared memory. */

__device__ __forceinline__ bool qualifies(int dir, bool higher, bool lower) {
    return dir == 0 ? higher : (dir == 1 ? lower : (higher || lower));
}

/* x * ln(x / y), 0 when x is 0 (x >= 0). */
__device__ __forceinline__ double xlogr(double x, double y, const double *tab) {
    return x > 0.0 ? __dmul_rn(x, dm_log_table(__ddiv_rn(x, y), tab)) : 0.0;
}

/* ScanTables.llr: the LLR of a range with quantized case sum dc and quantized baseline db. */
template <int MODEL>
__device__ __forceinline__ double range_llr(i64 dc, i64 db, i64 bqTot, int dir, const double *dp, const double *tab) {
    if (MODEL == M_POISSON) {
        double c = __dmul_rn((double) dc, dp[SCAN_D_CSCALE]);
        double e = __dmul_rn((double) db, dp[SCAN_D_F]);
        double eo = __dmul_rn((double) (bqTot - db), dp[SCAN_D_F]);
        if (!(e > 0.0) || !(eo > 0.0)) return 0.0;
        if (!qualifies(dir, c > e, c < e)) return 0.0;
        double co = __dsub_rn(dp[SCAN_D_C], c);
        double llr = __dadd_rn(xlogr(c, e, tab), xlogr(co, eo, tab));
        return llr > 0.0 ? llr : 0.0;
    } else if (MODEL == M_BERNOULLI) {
        double c = (double) dc;
        double n = (double) db;
        double no = __dsub_rn(dp[SCAN_D_B], n);
        if (!(n > 0.0) || !(no > 0.0)) return 0.0;
        double co = __dsub_rn(dp[SCAN_D_C], c);
        double pin = __ddiv_rn(c, n);
        double pout = __ddiv_rn(co, no);
        if (!qualifies(dir, pin > pout, pin < pout)) return 0.0;
        double din = __dsub_rn(n, c);
        double dout = __dsub_rn(no, co);
        double f = dp[SCAN_D_F];
        double g = dp[SCAN_D_G];
        double t1 = xlogr(c, __dmul_rn(n, f), tab);
        double t2 = xlogr(din, __dmul_rn(n, g), tab);
        double t3 = xlogr(co, __dmul_rn(no, f), tab);
        double t4 = xlogr(dout, __dmul_rn(no, g), tab);
        double llr = __dadd_rn(__dadd_rn(t1, t2), __dadd_rn(t3, t4));
        return llr > 0.0 ? llr : 0.0;
    } else if (MODEL == M_NORMAL) {
        double s = __dmul_rn((double) dc, dp[SCAN_D_CSCALE]);
        double n = (double) db;
        double N = dp[SCAN_D_B];
        double no = __dsub_rn(N, n);
        if (!(n > 0.0) || !(no > 0.0)) return 0.0;
        double diff = __dsub_rn(__dmul_rn(s, N), __dmul_rn(n, dp[SCAN_D_C]));
        if (!qualifies(dir, diff > 0.0, diff < 0.0)) return 0.0;
        double d = __ddiv_rn(__dmul_rn(diff, diff), __dmul_rn(__dmul_rn(n, no), N));
        double t = __dsub_rn(1.0, __ddiv_rn(d, dp[SCAN_D_V0]));
        if (!(t > 0.0)) return __longlong_as_double(0x7FF0000000000000LL);
        double llr = -__dmul_rn(dp[SCAN_D_HALFN], dm_log_table(t, tab));
        return llr > 0.0 ? llr : 0.0;
    } else { /* M_EBP */
        double c = __dmul_rn((double) dc, dp[SCAN_D_CSCALE]);
        double b = __dmul_rn((double) db, dp[SCAN_D_F]);
        if (!(b > 0.0)) return 0.0;
        if (!qualifies(dir, c > b, c < b)) return 0.0;
        double llr = __dsub_rn(__dadd_rn(xlogr(c, b, tab), b), c);
        return llr > 0.0 ? llr : 0.0;
    }
}

/* ------------------------------------------------------------------------------------------------ helpers */

/* Interval [a, b] of rectangle cell (row, col) of an axis of n cells (RangeMapping.lo/hi). */
__device__ __forceinline__ void rect_interval(int n, int row, int col, int &a, int &b) {
    int odd = n & 1;
    if (col < n - row) {
        a = row;
        b = row + col;
    } else {
        a = n - 1 - row + odd;
        b = col - 1 + odd;
    }
}

/* RangeMapping.decode for interval index i of an axis of n cells. */
__device__ __forceinline__ void decode_interval(int n, i64 i, int &a, int &b) {
    int w = (n & 1) ? n : n + 1;
    int row = (int) (i / w);
    int col = (int) (i - (i64) row * w);
    rect_interval(n, row, col, a, b);
}

__device__ __forceinline__ bool better(double l, i64 i, double L, i64 I) {
    if (l != L) return l > L;
    return i >= 0 && (I < 0 || i < I);
}

/* A candidate (LLR, global range index) and the better of two: with LLRs in {-Inf} and [0, +Inf] (never NaN, never
 * -0.0) this is the maximum of a total order, so any reduction tree gives the same pair. */
struct ScanBest {
    double llr;
    i64 idx;
};

struct ScanBetter {
    __device__ __forceinline__ ScanBest operator()(const ScanBest &a, const ScanBest &b) const {
        return better(b.llr, b.idx, a.llr, a.idx) ? b : a;
    }
};

/* Block-wide (LLR, index) maximum (blockDim.x == SCAN_BLOCK); the result is valid in thread 0. */
__device__ __forceinline__ void block_best(double &best, i64 &bestI) {
    typedef BlockReduceT<ScanBest, SCAN_BLOCK> Reduce;
    __shared__ typename Reduce::TempStorage reduceTemp;
    const ScanBest mine = {best, bestI};
    const ScanBest r = Reduce(reduceTemp).Reduce(mine, ScanBetter());
    best = r.llr;
    bestI = r.idx;
}

/* ------------------------------------------------------------------------------------------------ scan */

template <int MODEL, bool SHARED>
__device__ __forceinline__ void scan_best_body(const i64 *__restrict__ prm, const double *__restrict__ dprm,
                                               const i64 *__restrict__ cases, const i64 *__restrict__ base,
                                               const double *__restrict__ logtab, const int *__restrict__ excl,
                                               double *__restrict__ outLlr, i64 *__restrict__ outIdx) {
    extern __shared__ i64 strip[]; /* SHARED: sc[0..nx], then sb[0..nx] (SCAN_STRIP_BYTES) */
    __shared__ double tab[2 * DM_LOG_TABLE_ENTRIES];
    __shared__ double dp[SCAN_D_COUNT];
    __shared__ int ex[6 * SCAN_MAX_EXCL];
    __shared__ int stripEx[2 * SCAN_MAX_EXCL];
    __shared__ int stripExCount;

    const int dims = (int) prm[SCAN_P_DIMS];
    const int nx = (int) prm[SCAN_P_NX];
    const int ny = (int) prm[SCAN_P_NY];
    const int nz = (int) prm[SCAN_P_NZ];
    const i64 tx = prm[SCAN_P_TX];
    const i64 ty = prm[SCAN_P_TY];
    const int w = (int) prm[SCAN_P_WX];
    const int sy = (int) prm[SCAN_P_SY];
    const int sz = (int) prm[SCAN_P_SZ];
    const i64 lo = prm[SCAN_P_LO];
    const i64 hi = prm[SCAN_P_HI];
    const i64 kchunk = prm[SCAN_P_K];
    const i64 q = prm[SCAN_P_Q];
    const i64 u0 = prm[SCAN_P_U0];
    const i64 u1 = prm[SCAN_P_U1];
    const i64 minC = prm[SCAN_P_MINC];
    const i64 maxC = prm[SCAN_P_MAXC];
    const i64 maxBq = prm[SCAN_P_MAXBQ];
    const i64 bqTot = prm[SCAN_P_BQTOT];
    const int dir = (int) prm[SCAN_P_DIR];
    const int nExcl = (int) prm[SCAN_P_NEXCL];

    for (int i = threadIdx.x; i < 2 * DM_LOG_TABLE_ENTRIES; i += blockDim.x) tab[i] = logtab[i];
    for (int i = threadIdx.x; i < SCAN_D_COUNT; i += blockDim.x) dp[i] = dprm[i];
    for (int i = threadIdx.x; i < 6 * nExcl; i += blockDim.x) ex[i] = excl[i];

    const int dRow = blockDim.x / w;
    const int dCol = blockDim.x - dRow * w;
    const i64 *sc = SHARED ? strip : cases;
    const i64 *sb = SHARED ? strip + (nx + 1) : base;

    double best = __longlong_as_double(0xFFF0000000000000LL);
    i64 bestI = -1;

    for (i64 u = u0 + blockIdx.x; u < u1; u += gridDim.x) {
        const i64 s = u / q;
        const i64 gs = s * tx;
        i64 iStart = (u - s * q) * kchunk;
        i64 iEnd = min(iStart + kchunk, tx);
        iStart = max(iStart, lo - gs);
        iEnd = min(iEnd, hi - gs);
        if (iStart >= iEnd) continue;
        int ay = 0, by = 0, az = 0, bz = 0;
        if (dims > 1) {
            decode_interval(ny, s % ty, ay, by);
            if (dims > 2) decode_interval(nz, s / ty, az, bz);
        }
        const i64 sizeYZ = (i64) (by - ay + 1) * (bz - az + 1);
        const i64 lenMin = (minC + sizeYZ - 1) / sizeYZ;
        const i64 lenMax = min(maxC / sizeYZ, (i64) nx);
        if (lenMin > nx || lenMax < 1 || lenMin > lenMax) continue;

        __syncthreads(); /* the previous item is done with the shared strip */
        if (SHARED) {
            for (int x = threadIdx.x; x <= nx; x += blockDim.x) {
                i64 c, b;
                if (dims == 1) {
                    c = cases[x];
                    b = base[x];
                } else if (dims == 2) {
                    int h = x + sy * (by + 1);
                    int l = x + sy * ay;
                    c = cases[h] - cases[l];
                    b = base[h] - base[l];
                } else {
                    int p11 = x + sy * (by + 1) + sz * (bz + 1);
                    int p01 = x + sy * ay + sz * (bz + 1);
                    int p10 = x + sy * (by + 1) + sz * az;
                    int p00 = x + sy * ay + sz * az;
                    c = (cases[p11] - cases[p01]) - (cases[p10] - cases[p00]);
                    b = (base[p11] - base[p01]) - (base[p10] - base[p00]);
                }
                strip[x] = c;
                strip[nx + 1 + x] = b;
            }
        }
        if (threadIdx.x == 0) {
            int k = 0;
            for (int e = 0; e < 6 * nExcl; e += 6) {
                if (ex[e + 2] <= by && ay <= ex[e + 3] && ex[e + 4] <= bz && az <= ex[e + 5]) {
                    stripEx[k++] = ex[e];
                    stripEx[k++] = ex[e + 1];
                }
            }
            stripExCount = k;
        }
        __syncthreads();
        const int nEx = stripExCount;

        i64 i = iStart + threadIdx.x;
        if (i >= iEnd) continue;
        int row = (int) (i / w);
        int col = (int) (i - (i64) row * w);
        for (; i < iEnd; i += blockDim.x) {
            int a, b;
            rect_interval(nx, row, col, a, b);
            const int len = b - a + 1;
            if (len >= lenMin && len <= lenMax) {
                const i64 dc = sc[b + 1] - sc[a];
                const i64 db = sb[b + 1] - sb[a];
                bool ok = db <= maxBq;
                for (int e = 0; ok && e < nEx; e += 2) {
                    if (a <= stripEx[e + 1] && stripEx[e] <= b) ok = false;
                }
                if (ok) {
                    double llr = range_llr<MODEL>(dc, db, bqTot, dir, dp, tab);
                    if (llr > best) {
                        best = llr;
                        bestI = gs + i;
                    }
                }
            }
            row += dRow;
            col += dCol;
            if (col >= w) {
                col -= w;
                row++;
            }
        }
    }
    __syncthreads();
    block_best(best, bestI);
    if (threadIdx.x == 0) {
        outLlr[blockIdx.x] = best;
        outIdx[blockIdx.x] = bestI;
    }
}

/* MINB: resident blocks per SM the register budget is cut for: 4 = 64 registers; Bernoulli, with four logs
 * per range, spills below about 104 and gets 2. */
#define SCAN_KERNEL(NAME, MODEL, SHARED, MINB)                                                               \
    extern "C" __global__ void __launch_bounds__(SCAN_BLOCK, MINB) NAME(                                     \
        const i64 *__restrict__ prm, const double *__restrict__ dprm, const i64 *__restrict__ cases,        \
        const i64 *__restrict__ base, const double *__restrict__ logtab, const int *__restrict__ excl,      \
        double *__restrict__ outLlr, i64 *__restrict__ outIdx) {                                             \
        scan_best_body<MODEL, SHARED>(prm, dprm, cases, base, logtab, excl, outLlr, outIdx);                 \
    }

SCAN_KERNEL(scan_best_poisson_s, M_POISSON, true, 4)
SCAN_KERNEL(scan_best_poisson_g, M_POISSON, false, 4)
SCAN_KERNEL(scan_best_bernoulli_s, M_BERNOULLI, true, 2)
SCAN_KERNEL(scan_best_bernoulli_g, M_BERNOULLI, false, 2)
SCAN_KERNEL(scan_best_normal_s, M_NORMAL, true, 4)
SCAN_KERNEL(scan_best_normal_g, M_NORMAL, false, 4)
SCAN_KERNEL(scan_best_ebp_s, M_EBP, true, 4)
SCAN_KERNEL(scan_best_ebp_g, M_EBP, false, 4)

/* Reduces n per-block results into slot `slot` of (resLlr, resIdx). One block. */
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK) scan_reduce(const double *__restrict__ llr,
                                                                     const i64 *__restrict__ idx, int n,
                                                                     double *__restrict__ resLlr,
                                                                     i64 *__restrict__ resIdx, int slot) {
    double best = __longlong_as_double(0xFFF0000000000000LL);
    i64 bestI = -1;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        if (better(llr[i], idx[i], best, bestI)) {
            best = llr[i];
            bestI = idx[i];
        }
    }
    block_best(best, bestI);
    if (threadIdx.x == 0) {
        resLlr[slot] = best;
        resIdx[slot] = bestI;
    }
}

/* ------------------------------------------------------------------------------------------------ replicas */

__device__ __forceinline__ u64 mix64(u64 z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

#define GOLDEN 0x9E3779B97F4A7C15ULL
#define STREAM 0xD1B54A32D192ED03ULL

__device__ __forceinline__ u64 rng_word(u64 key, u64 counter) {
    return mix64(key + (counter + 1ULL) * GOLDEN);
}

/* ScanRandom.uniformBelow: Lemire's multiply-shift with rejection, 64 attempts per item. */
__device__ __forceinline__ u64 uniform_below(u64 key, u64 item, u64 bound) {
    u64 hi = 0;
    for (int attempt = 0; attempt < 64; attempt++) {
        u64 r = rng_word(key, item * 64ULL + (u64) attempt);
        hi = __umul64hi(r, bound);
        u64 lo = r * bound;
        if (lo >= bound) return hi;
        u64 threshold = (0ULL - bound) % bound;
        if (lo >= threshold) return hi;
    }
    return hi;
}

/* ScanRandom.permute: keyed 6-round Feistel network on [0, 2^(2h)), cycle-walked into [0, n). */
__device__ __forceinline__ u64 feistel(u64 key, u64 x, int h) {
    u64 mask = (1ULL << h) - 1ULL;
    u64 left = x >> h;
    u64 right = x & mask;
    for (int round = 0; round < 6; round++) {
        u64 f = mix64(key + right * GOLDEN + (u64) (round + 1) * STREAM) & mask;
        u64 t = left ^ f;
        left = right;
        right = t;
    }
    return (left << h) | right;
}

__device__ __forceinline__ u64 permute(u64 key, u64 x, u64 n, int h) {
    u64 y = feistel(key, x, h);
    while (y >= n) y = feistel(key, y, h);
    return y;
}

/* First cell whose running baseline sum exceeds u. */
__device__ __forceinline__ int cell_of(const i64 *__restrict__ cum, int cells, i64 u) {
    int lo = 0, hi = cells - 1;
    while (lo < hi) {
        int mid = (int) (((unsigned) lo + (unsigned) hi) >> 1);
        if (cum[mid] > u) hi = mid; else lo = mid + 1;
    }
    return lo;
}

__device__ __forceinline__ int table_index(int c, int nx, int ny, int sy, int sz) {
    int x = c % nx;
    int rest = c / nx;
    int y = rest % ny;
    int z = rest / ny;
    return (x + 1) + sy * (y + 1) + sz * (z + 1);
}

/* Poisson / EBP replicas: each of ncases cases falls into a cell with probability proportional to its baseline;
 * case k adds unit (+1 when k < extra) table units at the cell's position in the (zeroed) table
 * (ScanReplicas.unitOf: 1 for whole counts, a share of the fixed-point total for fractional ones). */
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK) scan_alloc_multinomial(
    const i64 *__restrict__ cum, int cells, i64 total, i64 ncases, i64 unit, i64 extra, u64 key, int nx, int ny,
    int sy, int sz, u64 *__restrict__ table) {
    for (i64 k = blockIdx.x * (i64) blockDim.x + threadIdx.x; k < ncases; k += (i64) gridDim.x * blockDim.x) {
        i64 u = (i64) uniform_below(key, (u64) k, (u64) total);
        int c = cell_of(cum, cells, u);
        atomicAdd(&table[table_index(c, nx, ny, sy, sz)], (u64) (k < extra ? unit + 1 : unit));
    }
}

/* Bernoulli replicas: case k is individual permute(k) of the N individuals. */
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK) scan_alloc_bernoulli(
    const i64 *__restrict__ cum, int cells, i64 total, i64 ncases, u64 key, int h, int nx, int ny, int sy,
    int sz, u64 *__restrict__ table) {
    for (i64 k = blockIdx.x * (i64) blockDim.x + threadIdx.x; k < ncases; k += (i64) gridDim.x * blockDim.x) {
        i64 u = (i64) permute(key, (u64) k, (u64) total, h);
        int c = cell_of(cum, cells, u);
        atomicAdd(&table[table_index(c, nx, ny, sy, sz)], 1ULL);
    }
}

/* Normal replicas: non-empty cell j takes the value of non-empty cell permute(j). */
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK) scan_place_values(
    const int *__restrict__ valueCells, const i64 *__restrict__ values, int count, u64 key, int h, int nx, int ny,
    int sy, int sz, i64 *__restrict__ table) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < count; j += gridDim.x * blockDim.x) {
        int from = (int) permute(key, (u64) j, (u64) count, h);
        table[table_index(valueCells[j], nx, ny, sy, sz)] = values[from];
    }
}

/* Running sums along one axis of the table (lines of `extent` entries `stride` apart); one block per line,
 * each thread a contiguous chunk, chunk offsets from a block-wide exclusive scan (cub::BlockScan; integer sums). */
extern "C" __global__ void __launch_bounds__(SCAN_BLOCK) scan_prefix_axis(i64 *__restrict__ table, i64 length,
                                                                         int stride, int extent) {
    typedef BlockScanT<i64, SCAN_BLOCK> Scan;
    __shared__ typename Scan::TempStorage scanTemp;
    const i64 lines = length / extent;
    const int chunk = (extent + SCAN_BLOCK - 1) / SCAN_BLOCK;
    for (i64 line = blockIdx.x; line < lines; line += gridDim.x) {
        const i64 start = (line / stride) * ((i64) stride * extent) + (line % stride);
        const int from = threadIdx.x * chunk;
        const int to = min(from + chunk, extent);
        i64 local = 0;
        for (int t = from; t < to; t++) local += table[start + (i64) t * stride];
        i64 run; /* sum of the chunks before this one */
        Scan(scanTemp).ExclusiveSum(local, run);
        for (int t = from; t < to; t++) {
            i64 idx = start + (i64) t * stride;
            run += table[idx];
            table[idx] = run;
        }
        __syncthreads();
    }
}
