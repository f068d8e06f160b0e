/*
 * t-SNE: exact kNN, perplexity-calibrated affinities, the attractive term, and the grid-interpolation repulsive
 * term (S2G, G2G, G2S, Phi2Force). CPU twins live in io.sparkgpu.tsne (TsneAffinities, TsneForces,
 * GridConvolution). Each section below starts with its own data layout (SoA/AoS, index types) and launch shape.
 *
 * Determinism: nvcc runs with --fmad=false; every floating-point result a combiner or a later step depends on
 * is produced in a fixed order (or in exact fixed point), so a retried task reproduces it bit for bit.
 */

typedef long long i64;
typedef unsigned long long u64;

/* ===================================================================================== section: kNN, affinities */
/*
 * Host side: io.sparkgpu.tsne.TsneAffinitiesGpu; CPU twins: TsneAffinities.knnBlockCpu / conditionalRow,
 * TsneMath.exp / log.
 *
 * tsne_knn_tile: exact kNN of a query block against a reference block.
 *   Layout: q float[nq*d], ref float[nr*d] row-major (AoS); listD float[nq*k], listI int[nq*k] in/out: the
 *   current top-k of each query, ascending by (dist2, index as unsigned), padding (+Inf, -1); the host fills
 *   them with padding before the first reference chunk and passes them again for further chunks (so reference
 *   chunks merge on the device). Global indices: query row r is qOff + r, reference row c is rOff + c;
 *   c == the query's global index is skipped (self).
 *   Launch: grid ceil(nq / KQ) blocks of 256 threads, dynamic shared memory knn_shared_bytes(k)
 *   (TsneAffinitiesGpu.knnSharedBytes). A block owns KQ = 64 queries; it walks the references in tiles of
 *   KR = 64, dimensions in chunks of KD = 32 staged transposed in shared memory (the query tile is loaded once
 *   for all d when qResident, i.e. when it fits); thread (ty, tx) accumulates the 4 x 4 distances of queries
 *   4ty.. and references 4tx.. in registers, in dimension order: diff = __fsub_rn(a, b);
 *   acc = __fmaf_rn(diff, diff, acc) (the twin's Math.fma). Each thread then compares its 16 distances with
 *   the current k-th entry of their queries; only when some pair qualifies (__syncthreads_or) does the tile go
 *   to shared memory, and each warp updates the sorted lists (in shared memory) of its flagged queries among
 *   its 8: candidates better than the current k-th are inserted one at a time by a warp-wide rank count and
 *   shift. Late in the scan few tiles qualify, so the cost is mostly the distance arithmetic.
 * tsne_knn_tile8: the same with KR = 128 (4 x 8 distances per thread, 128 registers); the host's default
 *   (TsneAffinitiesGpu.RPT), about 1.2-1.5x faster on H100. Both give the CPU twin's bits.
 *
 * tsne_aff_cond: per row the bisection of TsneAffinities.conditionalRow with tsne_aff_exp / tsne_aff_log
 *   (TsneMath), every double operation an explicitly rounded intrinsic in the twin's order. One thread per row,
 *   blockDim 64; the block's k distances per row are staged in shared memory as [m][row] (64 * k floats).
 *   Output: p double[rows*k], status int[rows] (0 ok, 1 the search ended off target).
 */

#define KNN_KQ 64
#define KNN_KD 32
#define KNN_THREADS 256
#define KNN_QS (KNN_KQ + 4)
#define FULL_MASK 0xFFFFFFFFu

__device__ __forceinline__ bool tsne_knn_before(float d1, int i1, float d2, int i2) {
    return d1 < d2 || (d1 == d2 && (unsigned) i1 < (unsigned) i2);
}

/* Warp-cooperative insertion of (cd, ci) into the ascending list ld/li of length k (caller checked it beats
 * the last entry). All 32 lanes call it with the same arguments. */
__device__ __forceinline__ void tsne_knn_insert(float *ld, int *li, int k, float cd, int ci, int lane) {
    int pos = 0;
    for (int base = 0; base < k; base += 32) {
        int e = base + lane;
        bool lt = e < k && tsne_knn_before(ld[e], li[e], cd, ci);
        unsigned b = __ballot_sync(FULL_MASK, lt);
        pos += __popc(b);
        if (b != FULL_MASK) break; /* sorted: no entry after this chunk is smaller */
    }
    for (int base = ((k - 1) >> 5) << 5; base >= (pos & ~31); base -= 32) {
        int e = base + lane;
        bool mv = e >= pos && e < k - 1;
        float vd = 0.0f;
        int vi = 0;
        if (mv) { vd = ld[e]; vi = li[e]; }
        __syncwarp();
        if (mv) { ld[e + 1] = vd; li[e + 1] = vi; }
        __syncwarp();
    }
    if (lane == 0) { ld[pos] = cd; li[pos] = ci; }
    __syncwarp();
}

/* RPT references per thread: the reference tile is KR = 16 RPT wide (RPT = 4 or 8). */
template <int RPT>
__device__ __forceinline__ void tsne_knn_body(const float *__restrict__ q, int nq, int qOff,
        const float *__restrict__ ref, int nr, int rOff, int d, int k, int qResident, float *__restrict__ listD,
        int *__restrict__ listI, unsigned char *tsne_knn_smem, int *qflag) {
    constexpr int KNN_KR = 16 * RPT;
    constexpr int KNN_RS = KNN_KR + 4;
    constexpr int KNN_DS = KNN_KR + 1;
    /* qResident: the whole query tile (all d dimensions, rounded up to KD) stays in shared memory */
    const int qDims = qResident ? ((d + KNN_KD - 1) / KNN_KD) * KNN_KD : KNN_KD;
    float *qs = (float *) tsne_knn_smem;          /* [qDims][KQ+4] */
    float *rs = qs + qDims * KNN_QS;              /* [KD][KR+4] */
    float *ds = rs + KNN_KD * KNN_RS;             /* [KQ][KR+1] */
    float *ld = ds + KNN_KQ * KNN_DS;             /* [KQ][k] */
    int *li = (int *) (ld + KNN_KQ * k);          /* [KQ][k] */

    const int tid = threadIdx.x;
    const int tx = tid & 15;
    const int ty = tid >> 4;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int q0 = blockIdx.x * KNN_KQ;
    const int qn = min(KNN_KQ, nq - q0);

    for (int e = tid; e < KNN_KQ * k; e += KNN_THREADS) {
        int qq = e / k;
        if (qq < qn) {
            i64 g = (i64) (q0 + qq) * k + (e - qq * k);
            ld[e] = listD[g];
            li[e] = listI[g];
        } else {
            ld[e] = __int_as_float(0x7F800000);
            li[e] = -1;
        }
    }
    if (tid < KNN_KQ) qflag[tid] = 0;
    if (qResident) {
        for (int d0 = 0; d0 < d; d0 += KNN_KD) {
            const int dl = min(KNN_KD, d - d0);
            for (int e = tid; e < KNN_KQ * KNN_KD; e += KNN_THREADS) {
                int row = e >> 5;
                int dd = e & 31;
                if (row < qn && dd < dl) qs[(d0 + dd) * KNN_QS + row] = q[(i64) (q0 + row) * d + d0 + dd];
            }
        }
    }

    for (int r0 = 0; r0 < nr; r0 += KNN_KR) {
        const int rn = min(KNN_KR, nr - r0);
        float acc[4][RPT];
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < RPT; j++) acc[i][j] = 0.0f;
        for (int d0 = 0; d0 < d; d0 += KNN_KD) {
            const int dl = min(KNN_KD, d - d0);
            __syncthreads();
            {
                const float *rp = ref + (i64) r0 * d + d0;
#pragma unroll
                for (int it = 0; it < KNN_KR * KNN_KD / KNN_THREADS; it++) {
                    const int row = (tid >> 5) + it * (KNN_THREADS / 32);
                    if (lane < dl && row < rn) rs[lane * KNN_RS + row] = rp[row * d + lane];
                }
            }
            if (!qResident) {
                const float *qp = q + (i64) q0 * d + d0;
#pragma unroll
                for (int it = 0; it < KNN_KQ * KNN_KD / KNN_THREADS; it++) {
                    const int row = (tid >> 5) + it * (KNN_THREADS / 32);
                    if (lane < dl && row < qn) qs[lane * KNN_QS + row] = qp[row * d + lane];
                }
            }
            __syncthreads();
            const float *qb = qs + (qResident ? d0 : 0) * KNN_QS + 4 * ty;
            const float *rb = rs + RPT * tx;
#pragma unroll 8
            for (int dd = 0; dd < dl; dd++) {
                float4 a = *(const float4 *) &qb[dd * KNN_QS];
                float av[4] = {a.x, a.y, a.z, a.w};
                float bv[RPT];
#pragma unroll
                for (int h = 0; h < RPT / 4; h++) {
                    float4 b = *(const float4 *) &rb[dd * KNN_RS + 4 * h];
                    bv[4 * h] = b.x;
                    bv[4 * h + 1] = b.y;
                    bv[4 * h + 2] = b.z;
                    bv[4 * h + 3] = b.w;
                }
#pragma unroll
                for (int i = 0; i < 4; i++)
#pragma unroll
                    for (int j = 0; j < RPT; j++) {
                        float diff = __fsub_rn(av[i], bv[j]);
                        acc[i][j] = __fmaf_rn(diff, diff, acc[i][j]);
                    }
            }
        }
        /* Which of this thread's 16 pairs can enter their query's list? Lists change only in the update
         * below, so the thresholds read here are current. */
        int mine = 0;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int qq = 4 * ty + i;
            const float wd = ld[qq * k + k - 1];
            const int wi = li[qq * k + k - 1];
            const int self = qOff + q0 + qq;
            bool any = false;
#pragma unroll
            for (int j = 0; j < RPT; j++) {
                const int c = RPT * tx + j;
                const int gi = rOff + r0 + c;
                any |= qq < qn && c < rn && gi != self && tsne_knn_before(acc[i][j], gi, wd, wi);
            }
            if (any) {
                qflag[qq] = 1;
                mine = 1;
            }
        }
        if (!__syncthreads_or(mine)) continue;
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < RPT; j++) ds[(4 * ty + i) * KNN_DS + RPT * tx + j] = acc[i][j];
        __syncthreads();
        for (int qq = warp * (KNN_KQ / 8); qq < (warp + 1) * (KNN_KQ / 8) && qq < qn; qq++) {
            if (!qflag[qq]) continue;
            float *lqd = ld + qq * k;
            int *lqi = li + qq * k;
            const int self = qOff + q0 + qq;
            float wd = lqd[k - 1];
            int wi = lqi[k - 1];
#pragma unroll
            for (int half = 0; half < KNN_KR / 32; half++) {
                int c = lane + 32 * half;
                int gi = rOff + r0 + c;
                float dc = ds[qq * KNN_DS + c];
                bool cand = c < rn && gi != self && tsne_knn_before(dc, gi, wd, wi);
                unsigned mask = __ballot_sync(FULL_MASK, cand);
                while (mask) {
                    int src = __ffs(mask) - 1;
                    mask &= mask - 1;
                    float cd = __shfl_sync(FULL_MASK, dc, src);
                    int ci = __shfl_sync(FULL_MASK, gi, src);
                    if (tsne_knn_before(cd, ci, wd, wi)) {
                        tsne_knn_insert(lqd, lqi, k, cd, ci, lane);
                        wd = lqd[k - 1];
                        wi = lqi[k - 1];
                    }
                }
            }
            __syncwarp();
            if (lane == 0) qflag[qq] = 0;
        }
    }
    __syncthreads();
    for (int e = tid; e < qn * k; e += KNN_THREADS) {
        i64 g = (i64) q0 * k + e;
        listD[g] = ld[e];
        listI[g] = li[e];
    }
}

extern "C" __global__ void __launch_bounds__(KNN_THREADS)
tsne_knn_tile(const float *__restrict__ q, int nq, int qOff, const float *__restrict__ ref, int nr, int rOff,
              int d, int k, int qResident, float *__restrict__ listD, int *__restrict__ listI) {
    extern __shared__ __align__(16) unsigned char tsne_knn_smem[];
    __shared__ int qflag[KNN_KQ];
    tsne_knn_body<4>(q, nq, qOff, ref, nr, rOff, d, k, qResident, listD, listI, tsne_knn_smem, qflag);
}

/* The same with 128-reference tiles (4 x 8 distances per thread). */
extern "C" __global__ void __launch_bounds__(KNN_THREADS)
tsne_knn_tile8(const float *__restrict__ q, int nq, int qOff, const float *__restrict__ ref, int nr, int rOff,
               int d, int k, int qResident, float *__restrict__ listD, int *__restrict__ listI) {
    extern __shared__ __align__(16) unsigned char tsne_knn_smem[];
    __shared__ int qflag[KNN_KQ];
    tsne_knn_body<8>(q, nq, qOff, ref, nr, rOff, d, k, qResident, listD, listI, tsne_knn_smem, qflag);
}

/* TsneMath.exp: x = k ln2 + r, degree-13 Taylor polynomial of e^r, scale by 2^k through the exponent bits. */
__device__ __forceinline__ double tsne_aff_exp(double x) {
    if (!(x >= -745.2)) return x != x ? x : 0.0;
    if (x > 709.0) return __longlong_as_double(0x7FF0000000000000LL);
    double kd = rint(__dmul_rn(x, __longlong_as_double(0x3FF71547652B82FELL)));
    int k = (int) kd;
    double r = __fma_rn(-kd, __longlong_as_double(0x3FE62E42FEE00000LL), x);
    r = __fma_rn(-kd, __longlong_as_double(0x3DEA39EF35793C76LL), r);
    double p = __longlong_as_double(0x3DE6124613A86D09LL);
    p = __fma_rn(p, r, __longlong_as_double(0x3E21EED8EFF8D898LL));
    p = __fma_rn(p, r, __longlong_as_double(0x3E5AE64567F544E4LL));
    p = __fma_rn(p, r, __longlong_as_double(0x3E927E4FB7789F5CLL));
    p = __fma_rn(p, r, __longlong_as_double(0x3EC71DE3A556C734LL));
    p = __fma_rn(p, r, __longlong_as_double(0x3EFA01A01A01A01ALL));
    p = __fma_rn(p, r, __longlong_as_double(0x3F2A01A01A01A01ALL));
    p = __fma_rn(p, r, __longlong_as_double(0x3F56C16C16C16C17LL));
    p = __fma_rn(p, r, __longlong_as_double(0x3F81111111111111LL));
    p = __fma_rn(p, r, __longlong_as_double(0x3FA5555555555555LL));
    p = __fma_rn(p, r, __longlong_as_double(0x3FC5555555555555LL));
    p = __fma_rn(p, r, 0.5);
    p = __fma_rn(p, r, 1.0);
    p = __fma_rn(p, r, 1.0);
    if (k >= -1022) return __dmul_rn(p, __longlong_as_double((i64) (k + 1023) << 52));
    return __dmul_rn(__dmul_rn(p, __longlong_as_double((i64) (k + 600 + 1023) << 52)),
                     __longlong_as_double((i64) (-600 + 1023) << 52));
}

/* TsneMath.log: m in [sqrt(1/2), sqrt(2)), f = (m-1)/(m+1), ln m = 2 atanh f by its series to f^21. */
__device__ __forceinline__ double tsne_aff_log(double x) {
    if (!(x > 0.0) || x == __longlong_as_double(0x7FF0000000000000LL)) {
        if (x == 0.0) return __longlong_as_double(0xFFF0000000000000LL);
        return x > 0.0 ? x : __longlong_as_double(0x7FF8000000000000LL);
    }
    int e = 0;
    if (x < 2.2250738585072014e-308) {
        x = __dmul_rn(x, 18014398509481984.0); /* 2^54 */
        e = -54;
    }
    i64 bits = __double_as_longlong(x);
    e += (int) ((u64) bits >> 52) - 1023;
    double m = __longlong_as_double((bits & 0x000FFFFFFFFFFFFFLL) | 0x3FF0000000000000LL);
    if (m >= __longlong_as_double(0x3FF6A09E667F3BCDLL)) {
        m = __dmul_rn(m, 0.5);
        e += 1;
    }
    double f = __ddiv_rn(__dsub_rn(m, 1.0), __dadd_rn(m, 1.0));
    double s = __dmul_rn(f, f);
    double q = __longlong_as_double(0x3FA8618618618618LL);
    q = __fma_rn(q, s, __longlong_as_double(0x3FAAF286BCA1AF28LL));
    q = __fma_rn(q, s, __longlong_as_double(0x3FAE1E1E1E1E1E1ELL));
    q = __fma_rn(q, s, __longlong_as_double(0x3FB1111111111111LL));
    q = __fma_rn(q, s, __longlong_as_double(0x3FB3B13B13B13B14LL));
    q = __fma_rn(q, s, __longlong_as_double(0x3FB745D1745D1746LL));
    q = __fma_rn(q, s, __longlong_as_double(0x3FBC71C71C71C71CLL));
    q = __fma_rn(q, s, __longlong_as_double(0x3FC2492492492492LL));
    q = __fma_rn(q, s, __longlong_as_double(0x3FC999999999999ALL));
    q = __fma_rn(q, s, __longlong_as_double(0x3FD5555555555555LL));
    double f2 = __dadd_rn(f, f);
    double lm = __fma_rn(f2, __dmul_rn(s, q), f2);
    double de = (double) e;
    return __dadd_rn(__dmul_rn(de, __longlong_as_double(0x3FE62E42FEE00000LL)),
                     __dadd_rn(__dmul_rn(de, __longlong_as_double(0x3DEA39EF35793C76LL)), lm));
}

/* Element-wise exp / log for the twin tests. */
extern "C" __global__ void tsne_aff_math(const double *__restrict__ x, int n, double *__restrict__ ex,
                                         double *__restrict__ lg) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        ex[i] = tsne_aff_exp(x[i]);
        lg[i] = tsne_aff_log(x[i]);
    }
}

#define AFF_THREADS 64

extern "C" __global__ void __launch_bounds__(AFF_THREADS)
tsne_aff_cond(const float *__restrict__ dist2, int rows, int k, double target, double tol, double failTol,
              int maxSteps, double *__restrict__ out, int *__restrict__ status) {
    extern __shared__ __align__(16) unsigned char tsne_aff_smem[];
    float *sd = (float *) tsne_aff_smem; /* [k][AFF_THREADS] */
    const int r0 = blockIdx.x * AFF_THREADS;
    const int rn = min(AFF_THREADS, rows - r0);
    for (int e = threadIdx.x; e < rn * k; e += AFF_THREADS) {
        int rr = e / k;
        int m = e - rr * k;
        sd[m * AFF_THREADS + rr] = dist2[(i64) r0 * k + e];
    }
    __syncthreads();
    const int t = threadIdx.x;
    if (t >= rn) return;
    const double d0 = (double) sd[t];
    double mean = 0.0;
    for (int m = 0; m < k; m++) mean = __dadd_rn(mean, __dsub_rn((double) sd[m * AFF_THREADS + t], d0));
    mean = __ddiv_rn(mean, (double) k);
    double beta = __ddiv_rn(1.0, mean);
    double lo = 0.0;
    double hi = __longlong_as_double(0x7FF0000000000000LL);
    double z = 0.0;
    int st = 0;
    for (int step = 0; ; step++) {
        z = 0.0;
        double s = 0.0;
        const double nb = -beta;
        for (int m = 0; m < k; m++) {
            double dd = __dsub_rn((double) sd[m * AFF_THREADS + t], d0);
            double p = tsne_aff_exp(__dmul_rn(nb, dd));
            z = __dadd_rn(z, p);
            s = __dadd_rn(s, __dmul_rn(p, dd));
        }
        double h = __dadd_rn(tsne_aff_log(z), __ddiv_rn(__dmul_rn(beta, s), z));
        double diff = __dsub_rn(h, target);
        if (fabs(diff) <= tol || step >= maxSteps) {
            if (!(fabs(diff) <= failTol)) st = 1;
            break;
        }
        double next;
        if (diff > 0.0) {
            lo = beta;
            next = hi == __longlong_as_double(0x7FF0000000000000LL) ? __dmul_rn(beta, 2.0)
                                                                     : __dmul_rn(__dadd_rn(beta, hi), 0.5);
        } else {
            hi = beta;
            next = __dmul_rn(__dadd_rn(beta, lo), 0.5);
        }
        if (next == beta) {
            if (!(fabs(diff) <= failTol)) st = 1;
            break;
        }
        beta = next;
    }
    const double nb = -beta;
    const i64 base = (i64) (r0 + t) * k;
    for (int m = 0; m < k; m++) {
        double dd = __dsub_rn((double) sd[m * AFF_THREADS + t], d0);
        out[base + m] = __ddiv_rn(tsne_aff_exp(__dmul_rn(nb, dd)), z);
    }
    status[r0 + t] = st;
}

/* end of section: kNN, affinities */


/* ========================================================================== section: attractive, S2G, G2S, Z */

/* end of section: attractive, S2G, G2S, Z */


/* =========================================================================================== section: G2G */

/* end of section: G2G */
