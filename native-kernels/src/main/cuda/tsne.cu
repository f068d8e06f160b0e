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
/*
 * Attractive term, S2G, G2S + Phi2Force and the z sums (CPU twin: io.sparkgpu.tsne.TsneForces).
 *
 * Data layout
 *   y         double[rows*dim] row-major (AoS), point i at y[i*dim .. i*dim+dim); for the attractive term it
 *             holds all n points (global column indices), for S2G/G2S only the slice's rows.
 *   P (attractive, SELL-32-256): the slice's rows are permuted inside windows of 256 rows by decreasing length
 *             (ties by row) and cut into slices of 32 slots; slot s holds row slotRow[s] (-1 = padding) with
 *             slotLen[s] entries. Slice g occupies [sliceOff[g], sliceOff[g+1]) of val/col, entry e of the slot
 *             of lane l at sliceOff[g] + 32*e + l (column-major inside the slice, so a warp's loads coalesce).
 *             meta = int[nSlices+1 | slots | slots | nHubs | nHubs+1] = sliceOff, slotRow, slotLen, hubRow,
 *             hubPtr; col int32 global; val double. Hub rows (more than SellRows.HUB_LEN entries) are padding
 *             slots in the SELL part and stored after it in CSR order: hub h = row hubRow[h], entries
 *             [hubPtr[h], hubPtr[h+1]) of col/val.
 *   grid      nodes per axis npd = intervals*p; node = ix + npd*(iy + npd*iz); charges (1, u_1..u_dim, |u|^2)
 *             with u = y - centre; S2G output acc = u64[2*charges*nodes], the (lo, hi) pair of charge c at
 *             node m at 2*(c*nodes + m); G2S input phi = double[charges*nodes] at c*nodes + m.
 *   prm       double[]: lo[0..2], centre[3..5], h [6], zMax [7], then the (s1, s2) multiplier pairs
 *             [8 + 2c, 9 + 2c] of each charge (S2G) or of z (G2S, at 8, 9).
 *
 * Determinism: every double operation is an explicitly rounded intrinsic in the order of the Java twin
 * (nvcc --fmad=false besides), the weights of a point's p^dim nodes are formed in the same order (x fastest),
 * and every sum that crosses threads is an integer sum modulo 2^128 of values truncated to fixed point
 * (io.sparkgpu.common.FixedPoint), which is associative: atomics in any order give the twin's bits.
 *
 * Launch shape: one thread per slot (attractive) or per point (S2G, G2S), blockDim.x = 256 (__launch_bounds__(256); G2S
 * needs a multiple of 32 for its block reduction of z), grid = ceil(items / 256). The attractive kernel has nHubs
 * extra blocks in front: block h < nHubs takes hub row h whole (warps 1..7 compute the terms of 224 entries per
 * round into shared memory, double-buffered, while lanes 0..dim-1 of warp 0 add the previous round's terms in CSR
 * order), blocks nHubs.. take the SELL slots.
 */

/* trunc(v * s1 * s2 * 2^64) as a two's-complement 128-bit integer (FixedPoint.add). */
__device__ __forceinline__ void tsne_s2g_quantize(double v, double s1, double s2, i64 &hi, u64 &lo) {
    double t = __dmul_rn(__dmul_rn(fabs(v), s1), s2);
    double f = floor(t);
    hi = (i64) f;
    double r = __dsub_rn(t, f);
    lo = __double2ull_rd(__dmul_rn(r, 18446744073709551616.0));
    if (v < 0.0) {
        hi = ~hi + (lo == 0ull ? 1ll : 0ll);
        lo = (u64) 0 - lo;
    }
}

__device__ __forceinline__ void tsne_s2g_atomic128(u64 *p, i64 hi, u64 lo) {
    if (lo == 0ull && hi == 0ll) return;
    u64 old = atomicAdd(p, lo);
    u64 h = (u64) hi + ((old + lo < old) ? 1ull : 0ull);
    if (h != 0ull) atomicAdd(p + 1, h);
}

/* ----------------------------------------------------------------------------------------- attractive */

#define TSNE_ATTR_BATCH 8

/* f += p_ij (y_i - y_j) / (1 + |y_i - y_j|^2): ExactTsne.attractive's operations for one entry. */
template <int DIM>
__device__ __forceinline__ void tsne_attr_term(const double *yi, const double *yj, double v, double *f) {
    double diff[DIM];
    double d2 = 0.0;
#pragma unroll
    for (int a = 0; a < DIM; a++) {
        diff[a] = __dsub_rn(yi[a], yj[a]);
        d2 = __dadd_rn(d2, __dmul_rn(diff[a], diff[a]));
    }
    const double pw = __ddiv_rn(v, __dadd_rn(1.0, d2));
#pragma unroll
    for (int a = 0; a < DIM; a++) f[a] = __dadd_rn(f[a], __dmul_rn(pw, diff[a]));
}

#define TSNE_HUB_CHUNK 224 /* entries per round of a hub block: threads 32..255 */

/* Hub row hubRow[h]: the same terms as tsne_attr_term, computed in parallel; lane a < DIM of warp 0 forms
 * f[a] = (((0 + t_0) + t_1) + ...) in CSR order, exactly the twin's sum. blockDim.x must be 256. */
template <int DIM>
__device__ __forceinline__ void tsne_attr_hub(const int *__restrict__ meta, int nSlices, int nHubs, int h,
        const double *__restrict__ val, const int *__restrict__ col, int rowOffset,
        const double *__restrict__ y, double *__restrict__ out) {
    __shared__ double terms[2][DIM][TSNE_HUB_CHUNK];
    const int slots = nSlices * 32;
    const int *hubRow = meta + nSlices + 1 + 2 * slots;
    const int *hubPtr = hubRow + nHubs;
    const int r = hubRow[h];
    const int e0 = hubPtr[h], e1 = hubPtr[h + 1];
    const int i = rowOffset + r;
    const int t = threadIdx.x;
    double yi[DIM];
#pragma unroll
    for (int a = 0; a < DIM; a++) yi[a] = y[(long long) i * DIM + a];
    double f = 0.0; /* axis t of the row, in lanes t < DIM of warp 0 */
    const int rounds = (e1 - e0 + TSNE_HUB_CHUNK - 1) / TSNE_HUB_CHUNK;
    for (int k = 0; k <= rounds; k++) {
        if (t >= 32 && k < rounds) {
            const int e = e0 + k * TSNE_HUB_CHUNK + (t - 32);
            if (e < e1) {
                const int j = col[e];
                const double v = val[e];
                double diff[DIM];
                double d2 = 0.0;
#pragma unroll
                for (int a = 0; a < DIM; a++) {
                    diff[a] = __dsub_rn(yi[a], y[(long long) j * DIM + a]);
                    d2 = __dadd_rn(d2, __dmul_rn(diff[a], diff[a]));
                }
                const double pw = __ddiv_rn(v, __dadd_rn(1.0, d2));
#pragma unroll
                for (int a = 0; a < DIM; a++) terms[k & 1][a][t - 32] = __dmul_rn(pw, diff[a]);
            }
        }
        if (t < DIM && k > 0) {
            const int cnt = min(TSNE_HUB_CHUNK, e1 - e0 - (k - 1) * TSNE_HUB_CHUNK);
            const double *tk = terms[(k - 1) & 1][t];
            for (int u = 0; u < cnt; u++) f = __dadd_rn(f, tk[u]);
        }
        __syncthreads();
    }
    if (t < DIM) out[(long long) r * DIM + t] = f;
}

template <int DIM>
__device__ __forceinline__ void tsne_attr_body(const int *__restrict__ meta, int nSlices, int nHubs,
        const double *__restrict__ val, const int *__restrict__ col, int rowOffset,
        const double *__restrict__ y, double *__restrict__ out) {
    if ((int) blockIdx.x < nHubs) {
        tsne_attr_hub<DIM>(meta, nSlices, nHubs, blockIdx.x, val, col, rowOffset, y, out);
        return;
    }
    const int slots = nSlices * 32;
    const int s = (blockIdx.x - nHubs) * blockDim.x + threadIdx.x;
    if (s >= slots) return;
    const int r = meta[nSlices + 1 + s];
    if (r < 0) return;
    const int len = meta[nSlices + 1 + slots + s];
    const int base = meta[s >> 5] + (s & 31);
    const int i = rowOffset + r;
    double yi[DIM], f[DIM];
#pragma unroll
    for (int a = 0; a < DIM; a++) {
        yi[a] = y[(long long) i * DIM + a];
        f[a] = 0.0;
    }
    /* Entries in batches of TSNE_ATTR_BATCH: the batch's column, value and y_j loads are all issued before its
     * arithmetic, so a long (hub) row waits for one memory latency per batch instead of one per entry; the
     * arithmetic still runs entry by entry in CSR order, so the bits are those of the twin. */
    int e = 0;
    for (; e + TSNE_ATTR_BATCH <= len; e += TSNE_ATTR_BATCH) {
        int jb[TSNE_ATTR_BATCH];
        double vb[TSNE_ATTR_BATCH], yb[TSNE_ATTR_BATCH][DIM];
#pragma unroll
        for (int u = 0; u < TSNE_ATTR_BATCH; u++) {
            jb[u] = col[base + 32 * (e + u)];
            vb[u] = val[base + 32 * (e + u)];
        }
#pragma unroll
        for (int u = 0; u < TSNE_ATTR_BATCH; u++) {
#pragma unroll
            for (int a = 0; a < DIM; a++) yb[u][a] = y[(long long) jb[u] * DIM + a];
        }
#pragma unroll
        for (int u = 0; u < TSNE_ATTR_BATCH; u++) tsne_attr_term<DIM>(yi, yb[u], vb[u], f);
    }
    for (; e < len; e++) {
        const int at = base + 32 * e;
        const int j = col[at];
        double yj[DIM];
#pragma unroll
        for (int a = 0; a < DIM; a++) yj[a] = y[(long long) j * DIM + a];
        tsne_attr_term<DIM>(yi, yj, val[at], f);
    }
#pragma unroll
    for (int a = 0; a < DIM; a++) out[(long long) r * DIM + a] = f[a];
}

#define TSNE_ATTR_KERNEL(DIM)                                                                                   \
    extern "C" __global__ void __launch_bounds__(256) tsne_attr_sell_d##DIM(const int *meta, int nSlices,     \
            int nHubs, const double *val, const int *col, int rowOffset, const double *y, double *out) {      \
        tsne_attr_body<DIM>(meta, nSlices, nHubs, val, col, rowOffset, y, out);                               \
    }
TSNE_ATTR_KERNEL(1)
TSNE_ATTR_KERNEL(2)
TSNE_ATTR_KERNEL(3)

/* --------------------------------------------------------------------------------- stencil (S2G, G2S) */

/* PC > 0: p known at compile time (loops unrolled, weights in registers); PC = 0: p = pRun (1..8). */
template <int PC>
__device__ __forceinline__ void tsne_s2g_denoms(int pRun, double *denom) {
    const int p = PC > 0 ? PC : pRun;
#pragma unroll
    for (int k = 0; k < (PC > 0 ? PC : 8); k++) {
        if (k >= p) break;
        double v = 1.0;
#pragma unroll
        for (int m = 0; m < (PC > 0 ? PC : 8); m++) {
            if (m >= p) break;
            if (m != k) v = __dmul_rn(v, (double) (k - m));
        }
        denom[k] = v;
    }
}

/* Lagrange weights of the p nodes of a point's box on one axis and the box's first node (TsneForces.Stencil). */
template <int PC>
__device__ __forceinline__ int tsne_s2g_axis(double yv, double lo, double h, int npd, int pRun, const double *denom,
        double *w) {
    const int p = PC > 0 ? PC : pRun;
    const double s = __ddiv_rn(__dsub_rn(yv, lo), h);
    const double f = floor(s);
    const int cell = f < 0.0 ? 0 : (f > (double) (npd - 1) ? npd - 1 : (int) f);
    const int b = (cell / p) * p;
    double t = __dsub_rn(s, (double) b);
    t = t < 0.0 ? 0.0 : (t > (double) p ? (double) p : t);
#pragma unroll
    for (int k = 0; k < (PC > 0 ? PC : 8); k++) {
        if (k >= p) break;
        double num = 1.0;
#pragma unroll
        for (int m = 0; m < (PC > 0 ? PC : 8); m++) {
            if (m >= p) break;
            if (m != k) num = __dmul_rn(num, __dsub_rn(t, (double) m + 0.5));
        }
        w[k] = __ddiv_rn(num, denom[k]);
    }
    return b;
}

/* Visits the p^DIM nodes of the stencil in the twin's order (x fastest) with their weights:
 * w0 (1-D), w0*w1 (2-D), (w0*w1)*w2 (3-D), each product rounded once. */
#define TSNE_S2G_FOR_EACH_NODE(DIM, PC, p, npd, b, w, BODY)                                                      \
    _Pragma("unroll") for (int k2 = 0; k2 < (DIM > 2 ? (PC > 0 ? PC : 8) : 1); k2++) {                          \
        if (DIM > 2 && k2 >= p) break;                                                                          \
        _Pragma("unroll") for (int k1 = 0; k1 < (DIM > 1 ? (PC > 0 ? PC : 8) : 1); k1++) {                      \
            if (DIM > 1 && k1 >= p) break;                                                                      \
            _Pragma("unroll") for (int k0 = 0; k0 < (PC > 0 ? PC : 8); k0++) {                                  \
                if (k0 >= p) break;                                                                             \
                const double wt = DIM == 1 ? w[0][k0]                                                           \
                        : (DIM == 2 ? __dmul_rn(w[0][k0], w[1][k1])                                             \
                                    : __dmul_rn(__dmul_rn(w[0][k0], w[1][k1]), w[2][k2]));                      \
                const int node = b[0] + k0 + npd * ((b[1] + k1) + npd * (b[2] + k2));                           \
                BODY                                                                                            \
            }                                                                                                   \
        }                                                                                                       \
    }

/* A point's coordinates yv, its stencil's first node per axis b and the weights w (TsneForces.Stencil.locate). */
template <int DIM, int PC>
__device__ __forceinline__ void tsne_s2g_locate(const double *__restrict__ y, int i, int p, int npd,
        const double *__restrict__ prm, double *yv, double w[][8], int *b) {
    double denom[8];
    tsne_s2g_denoms<PC>(p, denom);
#pragma unroll
    for (int a = 0; a < DIM; a++) {
        yv[a] = y[(long long) i * DIM + a];
        b[a] = tsne_s2g_axis<PC>(yv[a], prm[a], prm[6], npd, p, denom, w[a]);
    }
}

/* ------------------------------------------------------------------------------------------------ S2G */

template <int DIM, int PC>
__device__ __forceinline__ void tsne_s2g_body(const double *__restrict__ y, int rows, int pRun, int npd, int nodes,
        const double *__restrict__ prm, u64 *__restrict__ acc) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const int p = PC > 0 ? PC : pRun;
    double w[3][8], q[DIM + 2], yv[DIM];
    int b[3] = {0, 0, 0};
    tsne_s2g_locate<DIM, PC>(y, i, p, npd, prm, yv, w, b);
    double sq = 0.0;
#pragma unroll
    for (int a = 0; a < DIM; a++) {
        const double u = __dsub_rn(yv[a], prm[3 + a]);
        q[1 + a] = u;
        sq = __dadd_rn(sq, __dmul_rn(u, u));
    }
    q[DIM + 1] = sq;
    TSNE_S2G_FOR_EACH_NODE(DIM, PC, p, npd, b, w, {
        i64 hi;
        u64 lo;
        tsne_s2g_quantize(wt, prm[8], prm[9], hi, lo);
        tsne_s2g_atomic128(acc + 2 * (long long) node, hi, lo);
        _Pragma("unroll") for (int c = 1; c < DIM + 2; c++) {
            tsne_s2g_quantize(__dmul_rn(wt, q[c]), prm[8 + 2 * c], prm[9 + 2 * c], hi, lo);
            tsne_s2g_atomic128(acc + 2 * ((long long) c * nodes + node), hi, lo);
        }
    })
}

/* ---------------------------------------------------------------------------------- G2S and Phi2Force */

template <int DIM, int PC>
__device__ __forceinline__ void tsne_g2s_body(const double *__restrict__ y, int rows, int pRun, int npd, int nodes,
        const double *__restrict__ prm, const double *__restrict__ phi, double *__restrict__ force,
        u64 *__restrict__ zacc) {
    __shared__ u64 redLo[32], redHi[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    i64 zhi = 0;
    u64 zlo = 0;
    if (i < rows) {
        const int p = PC > 0 ? PC : pRun;
        double w[3][8], s[DIM + 2], yv[DIM];
        int b[3] = {0, 0, 0};
        tsne_s2g_locate<DIM, PC>(y, i, p, npd, prm, yv, w, b);
#pragma unroll
        for (int c = 0; c < DIM + 2; c++) s[c] = 0.0;
        TSNE_S2G_FOR_EACH_NODE(DIM, PC, p, npd, b, w, {
            _Pragma("unroll") for (int c = 0; c < DIM + 2; c++)
                s[c] = __dadd_rn(s[c], __dmul_rn(wt, phi[(long long) c * nodes + node]));
        })
        double sq = 0.0, dot = 0.0;
#pragma unroll
        for (int a = 0; a < DIM; a++) {
            const double u = __dsub_rn(yv[a], prm[3 + a]);
            sq = __dadd_rn(sq, __dmul_rn(u, u));
            dot = __dadd_rn(dot, __dmul_rn(u, s[1 + a]));
            force[(long long) i * DIM + a] = __dsub_rn(__dmul_rn(u, s[0]), s[1 + a]);
        }
        double zi = __dadd_rn(__dsub_rn(__dmul_rn(__dadd_rn(1.0, sq), s[0]), __dmul_rn(2.0, dot)), s[DIM + 1]);
        const double zMax = prm[7];
        zi = zi > zMax ? zMax : (zi < 0.0 ? 0.0 : zi);
        tsne_s2g_quantize(zi, prm[8], prm[9], zhi, zlo);
    }
    /* exact block sum of the 128-bit z_i (integer adds: any order gives the same bits), one atomic per block */
    u64 lo = zlo, hi = (u64) zhi;
    for (int off = 16; off > 0; off >>= 1) {
        const u64 olo = __shfl_down_sync(0xffffffffu, lo, off);
        const u64 ohi = __shfl_down_sync(0xffffffffu, hi, off);
        const u64 nlo = lo + olo;
        hi = hi + ohi + (nlo < lo ? 1ull : 0ull);
        lo = nlo;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        redLo[warp] = lo;
        redHi[warp] = hi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        u64 tlo = 0, thi = 0;
        for (int k = 0; k < (int) (blockDim.x >> 5); k++) {
            const u64 nlo = tlo + redLo[k];
            thi = thi + redHi[k] + (nlo < tlo ? 1ull : 0ull);
            tlo = nlo;
        }
        tsne_s2g_atomic128(zacc, (i64) thi, tlo);
    }
}

/* S2G and G2S kernels per dimension, generic in p (SUFFIX d1..d3) or unrolled for p = 3, 4 (d2_p3 etc.) */
#define TSNE_GRID_KERNELS(SUFFIX, DIM, PC)                                                                     \
    extern "C" __global__ void __launch_bounds__(256) tsne_s2g_##SUFFIX(const double *y, int rows, int p,    \
            int npd, int nodes, const double *prm, u64 *acc) {                                              \
        tsne_s2g_body<DIM, PC>(y, rows, p, npd, nodes, prm, acc);                                           \
    }                                                                                                       \
    extern "C" __global__ void __launch_bounds__(256) tsne_g2s_##SUFFIX(const double *y, int rows, int p,    \
            int npd, int nodes, const double *prm, const double *phi, double *force, u64 *zacc) {           \
        tsne_g2s_body<DIM, PC>(y, rows, p, npd, nodes, prm, phi, force, zacc);                              \
    }
TSNE_GRID_KERNELS(d1, 1, 0)
TSNE_GRID_KERNELS(d2, 2, 0)
TSNE_GRID_KERNELS(d3, 3, 0)
TSNE_GRID_KERNELS(d1_p3, 1, 3)
TSNE_GRID_KERNELS(d2_p3, 2, 3)
TSNE_GRID_KERNELS(d3_p3, 3, 3)
TSNE_GRID_KERNELS(d1_p4, 1, 4)
TSNE_GRID_KERNELS(d2_p4, 2, 4)
TSNE_GRID_KERNELS(d3_p4, 3, 4)

/* end of section: attractive, S2G, G2S, Z */


/* =========================================================================================== section: G2G */

/*
 * G2G: potentials phi_c(a) = sum_b K(a - b) q_c(b) on the interpolation lattice, K(delta) = (1 + h^2|delta|^2)^-2.
 * CPU twin: io.sparkgpu.tsne.G2GCpu (same operations, same order, one rounding each: equal bits).
 *
 * Data layout (all SoA over charges, 32-bit node indices):
 *   q, phi   double[charges][n^dim], node = x + n*(y + n*z) (x fastest); charges = dim + 2.
 *   kt       double[n^dim]: K at the non-negative offset vector delta, laid out like a node.
 *   x, y     complex (double2, re/im interleaved) [arrays][m^dim], m = FFT length per axis (5-smooth, >= n);
 *            array s < slots = ceil(charges/2) holds q_{2s} + i q_{2s+1} (two real charges per transform: each
 *            parity's contribution of a real charge is real, so real and imaginary parts separate at the end),
 *            array `slots` the kernel of the current parity.
 *   roots    double2[m]: e^{-2 pi i t/m}; shift double2[m]: e^{-i pi j/m} (both computed in Java, uploaded).
 *   acc      double[charges][n^dim]: running sum over parities.
 * FFT without zero-padding: per parity sigma (bit a = axis a odd), pack (shifted charges and folded shifted
 * kernel), forward transform of slots+1 arrays, multiply, inverse transform of `slots` arrays,
 * accumulate conj(shift) z (real part: charge 2s, imaginary part: charge 2s+1); the last parity scales by
 * 1/(2^dim m^dim). Transforms: per axis, one Stockham radix-R pass per factor R of m (direct R-point DFT in
 * registers). When the plan's radices are all <= 5 (m <= 4096, G2GPlan) and a line fits in shared memory, every
 * pass of an axis runs in one tsne_g2g_axis* kernel on lines held in shared memory, with pack fused into the
 * first forward axis, multiply into the first inverse axis and accumulate into the last inverse axis (2*dim
 * launches per parity); otherwise pack, one global tsne_g2g_pass_R per radix and axis (ping-pong between two
 * buffers), multiply and accumulate are separate kernels.
 *
 * Launch shape: every kernel is a flat 1-D grid of 256-thread blocks, one thread per item (node, complex
 * element or butterfly); item counts stay below 2^31 (G2GGpu checks), addresses are 64-bit. tsne_g2g_direct: one
 * thread per output node, blockDim G2G_TILE, sources staged through shared memory in tiles of G2G_TILE nodes.
 * tsne_g2g_axis*: one block of 256 threads per L lines (G2GGpu.fusedLines), 2*L*m double2 of dynamic shared
 * memory, threads loop over the lines' elements and butterflies.
 */
#define G2G_TILE 128
#define G2G_MAXC 5

__device__ __forceinline__ double g2g_kval(double h2, long long d2) {
    double t = __dadd_rn(1.0, __dmul_rn(h2, __ll2double_rn(d2)));
    return __ddiv_rn(1.0, __dmul_rn(t, t));
}

extern "C" __global__ void tsne_g2g_kernel_table(double *__restrict__ kt, int dim, int n, double h2, int nodes) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nodes) return;
    long long x = i % n;
    long long y = dim >= 2 ? (i / n) % n : 0;
    long long z = dim >= 3 ? i / (n * n) : 0;
    kt[i] = g2g_kval(h2, x * x + y * y + z * z);
}

extern "C" __global__ void tsne_g2g_direct(const double *__restrict__ q, const double *__restrict__ kt,
                                           double *__restrict__ phi, int dim, int n, int nodes, int charges) {
    __shared__ double sq[G2G_MAXC * G2G_TILE];
    __shared__ int sx[G2G_TILE], sy[G2G_TILE], sz[G2G_TILE];
    int a = blockIdx.x * blockDim.x + threadIdx.x;
    int ax = a % n;
    int ay = dim >= 2 ? (a / n) % n : 0;
    int az = dim >= 3 ? a / (n * n) : 0;
    double acc[G2G_MAXC];
#pragma unroll
    for (int c = 0; c < G2G_MAXC; c++) acc[c] = 0.0;
    for (int t0 = 0; t0 < nodes; t0 += G2G_TILE) {
        int b = t0 + threadIdx.x;
        if (b < nodes) {
            sx[threadIdx.x] = b % n;
            sy[threadIdx.x] = dim >= 2 ? (b / n) % n : 0;
            sz[threadIdx.x] = dim >= 3 ? b / (n * n) : 0;
            for (int c = 0; c < charges; c++) sq[c * G2G_TILE + threadIdx.x] = q[(long long) c * nodes + b];
        }
        __syncthreads();
        int cnt = min(G2G_TILE, nodes - t0);
        if (a < nodes) {
            for (int u = 0; u < cnt; u++) {
                double k = __ldg(&kt[abs(ax - sx[u]) + n * (abs(ay - sy[u]) + n * abs(az - sz[u]))]);
#pragma unroll
                for (int c = 0; c < G2G_MAXC; c++)
                    if (c < charges) acc[c] = __dadd_rn(acc[c], __dmul_rn(k, sq[c * G2G_TILE + u]));
            }
        }
        __syncthreads();
    }
    if (a < nodes) {
#pragma unroll
        for (int c = 0; c < G2G_MAXC; c++)
            if (c < charges) phi[(long long) c * nodes + a] = acc[c];
    }
}

/* Product of shift[j_a] over the odd axes of sigma (G2GCpu.twiddle). */
__device__ __forceinline__ double2 g2g_twiddle(const double2 *__restrict__ shift, int sigma, int jx, int jy, int jz) {
    double re = 1.0, im = 0.0;
    bool first = true;
    int j[3] = {jx, jy, jz};
#pragma unroll
    for (int ax = 0; ax < 3; ax++) {
        if (((sigma >> ax) & 1) == 0) continue;
        double2 c = __ldg(&shift[j[ax]]);
        if (first) {
            re = c.x; im = c.y; first = false;
        } else {
            double r2 = __dsub_rn(__dmul_rn(re, c.x), __dmul_rn(im, c.y));
            double i2 = __dadd_rn(__dmul_rn(re, c.y), __dmul_rn(im, c.x));
            re = r2; im = i2;
        }
    }
    return make_double2(re, im);
}

/* Element i of packed array sl (tsne_g2g_pack): sl < slots: (q_{2sl} + i q_{2sl+1}) * twiddle, zero outside the
 * lattice; sl = slots: the parity-folded kernel times the twiddle. */
__device__ __forceinline__ double2 g2g_pack_value(const double *__restrict__ q, const double *__restrict__ kt,
                                                  const double2 *__restrict__ shift, int dim, int n, int m,
                                                  int gridNodes, int charges, int sigma, int sl, int i) {
    int jx = i % m;
    int jy = dim >= 2 ? (i / m) % m : 0;
    int jz = dim >= 3 ? i / (m * m) : 0;
    double2 tw = g2g_twiddle(shift, sigma, jx, jy, jz);
    const int slots = (charges + 1) / 2;
    if (sl < slots) {
        bool inside = jx < n && jy < n && jz < n;
        int g = inside ? jx + n * (jy + n * jz) : 0;
        double re = inside ? q[(long long) (2 * sl) * gridNodes + g] : 0.0;
        double im = inside && 2 * sl + 1 < charges ? q[(long long) (2 * sl + 1) * gridNodes + g] : 0.0;
        return make_double2(__dsub_rn(__dmul_rn(re, tw.x), __dmul_rn(im, tw.y)),
                            __dadd_rn(__dmul_rn(re, tw.y), __dmul_rn(im, tw.x)));
    }
    double k = 0.0;
    int parities = 1 << dim;
    for (int s = 0; s < parities; s++) {
        int idx = 0, mul = 1;
        bool negative = false, valid = true;
        for (int ax = 0; ax < dim; ax++) {
            int d;
            int jj = ax == 0 ? jx : ax == 1 ? jy : jz;
            if (((s >> ax) & 1) == 0) {
                d = jj;
            } else {
                d = m - jj;
                negative ^= ((sigma >> ax) & 1) == 1;
            }
            if (d > n - 1) valid = false;
            idx += d * mul;
            mul *= n;
        }
        if (valid) k = negative ? __dsub_rn(k, kt[idx]) : __dadd_rn(k, kt[idx]);
    }
    return make_double2(__dmul_rn(k, tw.x), __dmul_rn(k, tw.y));
}

extern "C" __global__ void tsne_g2g_pack(const double *__restrict__ q, const double *__restrict__ kt,
                                         const double2 *__restrict__ shift, double2 *__restrict__ x, int dim, int n,
                                         int m, int fn, int gridNodes, int charges, int sigma) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= fn) return;
    int slots = (charges + 1) / 2;
    for (int sl = 0; sl <= slots; sl++)
        x[(long long) sl * fn + i] = g2g_pack_value(q, kt, shift, dim, n, m, gridNodes, charges, sigma, sl, i);
}

/* Butterfly g of one radix-R Stockham pass (G2GCpu.butterfly): g = lo + inner * (j + (m/R) * outer). in/out are
 * global arrays (tsne_g2g_pass_R) or shared-memory lines (tsne_g2g_axis, inner = 1): the same operations. */
template <int R>
__device__ __forceinline__ void g2g_butterfly(const double2 *__restrict__ in, double2 *__restrict__ out,
                                              const double2 *__restrict__ roots, int m, int ns, int inner, int g,
                                              int inverse) {
    const int mr = m / R;
    int lo = g % inner;
    int rest = g / inner;
    int j = rest % mr;
    int outer = rest / mr;
    long long base = lo + (long long) outer * inner * m;
    int k = j % ns;
    int tstep = m / (ns * R);
    double sign = inverse ? -1.0 : 1.0;
    double2 v[R];
#pragma unroll
    for (int t = 0; t < R; t++) v[t] = in[base + (long long) (j + t * mr) * inner];
#pragma unroll
    for (int t = 1; t < R; t++) {
        double2 w = __ldg(&roots[k * t * tstep]);
        double wi = __dmul_rn(sign, w.y);
        double ar = v[t].x, ai = v[t].y;
        v[t].x = __dsub_rn(__dmul_rn(ar, w.x), __dmul_rn(ai, wi));
        v[t].y = __dadd_rn(__dmul_rn(ar, wi), __dmul_rn(ai, w.x));
    }
    int idxD = (j / ns) * ns * R + k;
    if (R <= 5) {
        /* small radix: roots of unity in registers, (t * u) % R a compile-time index */
        double2 rr[R];
#pragma unroll
        for (int q = 0; q < R; q++) {
            double2 w = __ldg(&roots[q * mr]);
            rr[q] = make_double2(w.x, __dmul_rn(sign, w.y));
        }
#pragma unroll
        for (int u = 0; u < R; u++) {
            double sr = v[0].x, si = v[0].y;
#pragma unroll
            for (int t = 1; t < R; t++) {
                double2 w = rr[(t * u) % R];
                double ar = v[t].x, ai = v[t].y;
                sr = __dadd_rn(sr, __dsub_rn(__dmul_rn(ar, w.x), __dmul_rn(ai, w.y)));
                si = __dadd_rn(si, __dadd_rn(__dmul_rn(ar, w.y), __dmul_rn(ai, w.x)));
            }
            out[base + (long long) (idxD + u * ns) * inner] = make_double2(sr, si);
        }
    } else {
        /* larger radix: one output at a time, roots from L1 (warp-uniform addresses), few registers */
#pragma unroll 1
        for (int u = 0; u < R; u++) {
            double sr = v[0].x, si = v[0].y;
            int e = 0;
#pragma unroll
            for (int t = 1; t < R; t++) {
                e += u;
                if (e >= R) e -= R; /* e = (t * u) % R */
                double2 w = __ldg(&roots[e * mr]);
                double wi = __dmul_rn(sign, w.y);
                double ar = v[t].x, ai = v[t].y;
                sr = __dadd_rn(sr, __dsub_rn(__dmul_rn(ar, w.x), __dmul_rn(ai, wi)));
                si = __dadd_rn(si, __dadd_rn(__dmul_rn(ar, wi), __dmul_rn(ai, w.x)));
            }
            out[base + (long long) (idxD + u * ns) * inner] = make_double2(sr, si);
        }
    }
}

/* One radix-R Stockham pass over global memory: one thread per butterfly. items < 2^31 (G2GGpu checks): 32-bit
 * index arithmetic, 64-bit addresses. */
#define G2G_PASS(R)                                                                                                \
    extern "C" __global__ void __launch_bounds__(256) tsne_g2g_pass_##R(                                          \
        const double2 *__restrict__ in, double2 *__restrict__ out, const double2 *__restrict__ roots, int m,       \
        int ns, int inner, long long items, int inverse) {                                                         \
        const int g = blockIdx.x * blockDim.x + threadIdx.x;                                                       \
        if (g < items) g2g_butterfly<R>(in, out, roots, m, ns, inner, g, inverse);                                 \
    }
G2G_PASS(2)
G2G_PASS(3)
G2G_PASS(4)
G2G_PASS(5)
G2G_PASS(6)
G2G_PASS(8)
G2G_PASS(9)
G2G_PASS(10)
G2G_PASS(12)
G2G_PASS(15)
G2G_PASS(16)

__device__ __forceinline__ double2 g2g_cmul(double2 a, double2 kv) {
    return make_double2(__dsub_rn(__dmul_rn(a.x, kv.x), __dmul_rn(a.y, kv.y)),
                        __dadd_rn(__dmul_rn(a.x, kv.y), __dmul_rn(a.y, kv.x)));
}

extern "C" __global__ void tsne_g2g_multiply(double2 *__restrict__ y, int slots, int fn) {
    long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long) slots * fn) return;
    y[i] = g2g_cmul(y[i], y[(long long) slots * fn + i % fn]);
}

/* Charge c's share of the inverse-transformed value v at grid node o - c*gridNodes: conj(twiddle) v, its real part
 * for even c and imaginary part for odd c, added to acc (parity 0 starts it); the last parity scales into phi. */
__device__ __forceinline__ void g2g_accumulate_one(double2 v, double2 tw, int c, long long o, double *__restrict__ acc,
                                                   double *__restrict__ phi, int sigma, int last, double scale) {
    double term = (c & 1) == 0 ? __dadd_rn(__dmul_rn(tw.x, v.x), __dmul_rn(tw.y, v.y))
                               : __dsub_rn(__dmul_rn(tw.x, v.y), __dmul_rn(tw.y, v.x));
    double s = sigma == 0 ? term : __dadd_rn(acc[o], term);
    acc[o] = s;
    if (last) phi[o] = __dmul_rn(s, scale);
}

extern "C" __global__ void tsne_g2g_accumulate(const double2 *__restrict__ z, const double2 *__restrict__ shift,
                                               double *__restrict__ acc, double *__restrict__ phi, int dim, int n,
                                               int m, int fn, int gridNodes, int charges, int sigma, int last,
                                               double scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= gridNodes) return;
    int jx = i % n;
    int jy = dim >= 2 ? (i / n) % n : 0;
    int jz = dim >= 3 ? i / (n * n) : 0;
    int f = jx + m * (jy + m * jz);
    double2 tw = g2g_twiddle(shift, sigma, jx, jy, jz);
    for (int c = 0; c < charges; c++)
        g2g_accumulate_one(z[(long long) (c >> 1) * fn + f], tw, c, (long long) c * gridNodes + i, acc, phi, sigma,
                           last, scale);
}

/*
 * All passes of one axis in shared memory (radices 2..5 only; G2GGpu falls back to tsne_g2g_pass_R otherwise):
 * block b takes lines [b*L, b*L + L) of the axis (line = lo + inner * outer: the m points lo + inner*(x + m*outer);
 * outer counts the arrays too), loads them into shared memory, runs every pass of the plan with g2g_butterfly on
 * the lines (inner = 1, line l at l*m, ping-pong between two buffers, a barrier between passes) and writes them
 * back in place. The butterflies are those of the global passes, so the bits are too; global memory is read and
 * written once per axis instead of once per pass. radixCode: 4 bits per pass, first pass lowest. Dynamic shared
 * memory: 2*L*m double2. Loads: for inner = 1 the L lines are contiguous (x fastest); otherwise adjacent lines
 * are adjacent lo, so a warp's loads take L consecutive elements per x (L >= 2 fills a 32-byte sector).
 *
 * Fused neighbours (the same operations as the separate kernels, so the same bits): PRO = 1 (first forward axis)
 * loads g2g_pack_value instead of data; PRO = 2 (first inverse axis) loads data times the kernel array slot
 * (tsne_g2g_multiply); EPI = 1 (last inverse axis) adds each value into acc/phi (tsne_g2g_accumulate) instead of
 * storing it. Element e = lo + inner*(x + m*outer) is array e / fn, position e % fn.
 */
/* Shared-memory slot idx of a block's L lines: its line l and position x, and the global element
 * e = lo + inner*(x + m*outer) of line line0 + l (line = lo + inner*outer); -1 past the last line. For inner = 1
 * the lines are contiguous (x fastest), otherwise adjacent slots are adjacent lines (coalesced strided axes). */
__device__ __forceinline__ long long g2g_line_element(int idx, int m, int L, int inner, int line0, int lines, int &l,
                                                      int &x) {
    l = inner == 1 ? idx / m : idx % L;
    x = inner == 1 ? idx % m : idx / L;
    const int line = line0 + l;
    if (line >= lines) return -1;
    return (long long) (line % inner) + (long long) (line / inner) * inner * m + (long long) x * inner;
}

template <int PRO, int EPI>
__device__ __forceinline__ void g2g_axis_body(double2 *__restrict__ data, const double2 *__restrict__ roots, int m,
        int inner, int lines, int L, long long radixCode, int passes, int inverse, const double *__restrict__ q,
        const double *__restrict__ kt, const double2 *__restrict__ shift, double *__restrict__ acc,
        double *__restrict__ phi, int dim, int n, int fn, int gridNodes, int charges, int sigma, int last,
        double scale) {
    extern __shared__ double2 g2g_lines[];
    double2 *a = g2g_lines;
    double2 *b = g2g_lines + L * m;
    const int line0 = blockIdx.x * L;
    const int total = L * m;
    const int slots = (charges + 1) / 2;
    for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
        int l, x;
        const long long e = g2g_line_element(idx, m, L, inner, line0, lines, l, x);
        if (e >= 0) {
            double2 v;
            if (PRO == 1) {
                v = g2g_pack_value(q, kt, shift, dim, n, m, gridNodes, charges, sigma, (int) (e / fn),
                                   (int) (e % fn));
            } else if (PRO == 2) {
                v = g2g_cmul(data[e], data[(long long) slots * fn + e % fn]);
            } else {
                v = data[e];
            }
            a[l * m + x] = v;
        }
    }
    __syncthreads();
    int ns = 1;
    for (int p = 0; p < passes; p++) {
        const int R = (int) ((radixCode >> (4 * p)) & 15);
        const int items = total / R;
        for (int g = threadIdx.x; g < items; g += blockDim.x) {
            switch (R) {
                case 2: g2g_butterfly<2>(a, b, roots, m, ns, 1, g, inverse); break;
                case 3: g2g_butterfly<3>(a, b, roots, m, ns, 1, g, inverse); break;
                case 4: g2g_butterfly<4>(a, b, roots, m, ns, 1, g, inverse); break;
                default: g2g_butterfly<5>(a, b, roots, m, ns, 1, g, inverse); break;
            }
        }
        __syncthreads();
        double2 *t = a;
        a = b;
        b = t;
        ns *= R;
    }
    for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
        int l, x;
        const long long e = g2g_line_element(idx, m, L, inner, line0, lines, l, x);
        if (e >= 0) {
            if (EPI == 1) {
                const int sl = (int) (e / fn);
                const int f = (int) (e % fn);
                const int jx = f % m;
                const int jy = dim >= 2 ? (f / m) % m : 0;
                const int jz = dim >= 3 ? f / (m * m) : 0;
                if (jx < n && jy < n && jz < n) {
                    const double2 tw = g2g_twiddle(shift, sigma, jx, jy, jz);
                    const long long g = jx + n * (jy + n * jz);
                    for (int c = 2 * sl; c < 2 * sl + 2 && c < charges; c++)
                        g2g_accumulate_one(a[l * m + x], tw, c, (long long) c * gridNodes + g, acc, phi, sigma,
                                           last, scale);
                }
            } else {
                data[e] = a[l * m + x];
            }
        }
    }
}

#define G2G_AXIS(NAME, PRO, EPI)                                                                                   \
    extern "C" __global__ void __launch_bounds__(256) NAME(double2 *__restrict__ data,                             \
            const double2 *__restrict__ roots, int m, int inner, int lines, int L, long long radixCode, int passes, \
            int inverse, const double *__restrict__ q, const double *__restrict__ kt,                              \
            const double2 *__restrict__ shift, double *__restrict__ acc, double *__restrict__ phi, int dim, int n, \
            int fn, int gridNodes, int charges, int sigma, int last, double scale) {                               \
        g2g_axis_body<PRO, EPI>(data, roots, m, inner, lines, L, radixCode, passes, inverse, q, kt, shift, acc,    \
                                phi, dim, n, fn, gridNodes, charges, sigma, last, scale);                          \
    }
G2G_AXIS(tsne_g2g_axis, 0, 0)
G2G_AXIS(tsne_g2g_axis_pack, 1, 0)
G2G_AXIS(tsne_g2g_axis_mul, 2, 0)
G2G_AXIS(tsne_g2g_axis_acc, 0, 1)
G2G_AXIS(tsne_g2g_axis_mul_acc, 2, 1)

/* end of section: G2G */


/* ============================================================================ section: device-resident iteration */
/*
 * The per-iteration glue of single-device t-SNE, so that positions, update, gains, forces and grids stay on the GPU
 * between iterations (io.sparkgpu.tsne.TsneDeviceState). CPU twins: LocalGradientSource.plan (min/max),
 * TsneForces.toDouble (fixed point -> double), TsneOptimizer.step (update); equal bits.
 *
 * Data layout
 *   y, upd, gains, attr, rep   double[n*dim] row-major (AoS): coordinate t = i*dim + a, 32-bit index t.
 *   keys      u64[2*dim]: order-preserving keys of the per-axis minimum [0, dim) and maximum [dim, 2*dim) of y,
 *             key(v) = bits ^ (sign ? ~0 : 2^63): -0.0 < 0.0 as in Math.min/max, a NaN lands beyond +-inf so a
 *             diverged coordinate shows up as a non-finite bound. The caller sets min keys to ~0, max keys to 0.
 *   acc       u64[2*charges*nodes]: the (lo, hi) fixed-point pairs of S2G (section above); q double[charges*nodes].
 *
 * Launch shape: tsne_minmax: blockDim 256 (a multiple of 32: warp shuffles), grid-stride over points, one atomic
 * per warp and axis (min/max are order independent). tsne_fixed_to_double, tsne_step: one thread per value,
 * blockDim 256, grid = ceil(values / 256).
 */

__device__ __forceinline__ u64 tsne_order_key(double v) {
    const u64 b = (u64) __double_as_longlong(v);
    return b ^ ((b >> 63) != 0ull ? ~0ull : 0x8000000000000000ull);
}

extern "C" __global__ void __launch_bounds__(256) tsne_minmax(const double *__restrict__ y, int n, int dim,
        u64 *keys) {
    u64 lo[3] = {~0ull, ~0ull, ~0ull};
    u64 hi[3] = {0ull, 0ull, 0ull};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        for (int a = 0; a < dim; a++) {
            const u64 k = tsne_order_key(y[(i64) i * dim + a]);
            lo[a] = k < lo[a] ? k : lo[a];
            hi[a] = k > hi[a] ? k : hi[a];
        }
    }
    for (int a = 0; a < dim; a++) {
        for (int off = 16; off > 0; off >>= 1) {
            const u64 ol = __shfl_xor_sync(0xffffffffu, lo[a], off);
            const u64 oh = __shfl_xor_sync(0xffffffffu, hi[a], off);
            lo[a] = ol < lo[a] ? ol : lo[a];
            hi[a] = oh > hi[a] ? oh : hi[a];
        }
        if ((threadIdx.x & 31) == 0) {
            atomicMin(keys + a, lo[a]);
            atomicMax(keys + dim + a, hi[a]);
        }
    }
}

/* (hi * 2^64 + lo) / 2^shift correctly rounded (TsneForces.toDouble: top 63 bits with a sticky bit). */
__device__ __forceinline__ double tsne_fixed_value(u64 lo, i64 hi, int shift) {
    if ((hi == 0ll && (i64) lo >= 0ll) || (hi == -1ll && (i64) lo < 0ll)) {
        return scalbn(__ll2double_rn((i64) lo), -shift);
    }
    const bool neg = hi < 0ll;
    if (neg) {
        hi = ~hi + (lo == 0ull ? 1ll : 0ll);
        lo = 0ull - lo;
    }
    const int bits = 128 - __clzll(hi);
    const int drop = bits - 63;
    const u64 top = ((u64) hi << (64 - drop)) | (lo >> drop);
    const u64 sticky = (lo << (64 - drop)) != 0ull ? 1ull : 0ull;
    const double v = scalbn(__ll2double_rn((i64) (top | sticky)), drop - shift);
    return neg ? -v : v;
}

extern "C" __global__ void __launch_bounds__(256) tsne_fixed_to_double(const u64 *__restrict__ acc, int nodes,
        int charges, int s0, int s1, int s2, int s3, int s4, double *__restrict__ out) {
    const i64 t = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (i64) nodes * charges) return;
    const int c = (int) (t / nodes);
    const int shift = c == 0 ? s0 : c == 1 ? s1 : c == 2 ? s2 : c == 3 ? s3 : s4;
    out[t] = tsne_fixed_value(acc[2 * t], (i64) acc[2 * t + 1], shift);
}

/* Math.signum: -1, +1, or the argument itself for +-0 and NaN. */
__device__ __forceinline__ double tsne_signum(double x) {
    return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x);
}

/* TsneOptimizer.step: g = alpha attr - rep / z, delta-bar-delta gains, momentum, y += update. */
extern "C" __global__ void __launch_bounds__(256) tsne_step(double *__restrict__ y, double *__restrict__ upd,
        double *__restrict__ gains, const double *__restrict__ attr, const double *__restrict__ rep, int len,
        double alpha, double mu, double eta, double minGain, double z) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= len) return;
    const double g = __dsub_rn(__dmul_rn(alpha, attr[t]), __ddiv_rn(rep[t], z));
    double u = upd[t];
    double gain = tsne_signum(g) != tsne_signum(u) ? __dadd_rn(gains[t], 0.2) : __dmul_rn(gains[t], 0.8);
    gain = gain != gain ? gain : (gain >= minGain ? gain : minGain); /* Math.max(gain, minGain) */
    gains[t] = gain;
    u = __dsub_rn(__dmul_rn(mu, u), __dmul_rn(__dmul_rn(eta, gain), g));
    upd[t] = u;
    y[t] = __dadd_rn(y[t], u);
}

/* end of section: device-resident iteration */
