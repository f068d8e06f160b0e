/*
 * t-SNE section: exact kNN (kernels tsne_knn_tile, tsne_knn_tile8). Included by tsne.cu only (module "tsne").
 */
#pragma once

#include "common.cuh"
#include "layout/tsne.cuh"

/*
 * Host side: io.sparkgpu.tsne.affinity.TsneAffinitiesGpu; CPU twin: TsneAffinitiesCpu.knnBlock.
 *
 * tsne_knn_tile: exact kNN of a query block against a reference block.
 *   Layout: q float[nq*d], ref float[nr*d] row-major (AoS); listD float[nq*k], listI int[nq*k] in/out: the
 *   current top-k of each query, ascending by (dist2, index as unsigned), padding (+Inf, -1); the host fills
 *   them with padding before the first reference chunk and passes them again for further chunks (so reference
 *   chunks merge on the device). Global indices: query row r is qOff + r, reference row c is rOff + c;
 *   c == the query's global index is skipped (self).
 *   Launch: grid ceil(nq / KQ) blocks of 256 threads, dynamic shared memory TSNE_KNN_SHARED_BYTES(k, qDims, 4)
 *   (include/layout/tsne.cuh, TsneAffinitiesGpu.knnSharedBytes). A block owns KQ = 64 queries; it walks the
 *   references in tiles of KR = 64, dimensions in chunks of KD = 32 staged transposed in shared memory (the query
 *   tile is loaded once for all d when qResident, i.e. when it fits); thread (ty, tx) accumulates the 4 x 4
 *   distances of queries 4ty.. and references 4tx.. in registers, in dimension order: diff = __fsub_rn(a, b);
 *   acc = __fmaf_rn(diff, diff, acc) (the twin's Math.fma). Each thread then compares its 16 distances with
 *   the current k-th entry of their queries; only when some pair qualifies (__syncthreads_or) does the tile go
 *   to shared memory, and each warp updates the sorted lists (in shared memory) of its flagged queries among
 *   its 8: candidates better than the current k-th are inserted one at a time by a warp-wide rank count and
 *   shift. Late in the scan few tiles qualify, so the cost is mostly the distance arithmetic.
 * tsne_knn_tile8: the same with KR = 128 (4 x 8 distances per thread, 128 registers); the host's default
 *   (TsneAffinitiesGpu.RPT), about 1.2-1.5x faster on H100. Both give the CPU twin's bits.
 */

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
    constexpr int KNN_KR = TSNE_KNN_KR(RPT);
    constexpr int KNN_RS = TSNE_KNN_RS(RPT);
    constexpr int KNN_DS = TSNE_KNN_DS(RPT);
    /* qResident: the whole query tile (all d dimensions, rounded up to KD) stays in shared memory */
    const int qDims = qResident ? ((d + TSNE_KNN_KD - 1) / TSNE_KNN_KD) * TSNE_KNN_KD : TSNE_KNN_KD;
    float *qs = (float *) tsne_knn_smem;          /* [qDims][KQ+4] */
    float *rs = qs + qDims * TSNE_KNN_QS;              /* [KD][KR+4] */
    float *ds = rs + TSNE_KNN_KD * KNN_RS;             /* [KQ][KR+1] */
    float *ld = ds + TSNE_KNN_KQ * KNN_DS;             /* [KQ][k] */
    int *li = (int *) (ld + TSNE_KNN_KQ * k);          /* [KQ][k] */

    const int tid = threadIdx.x;
    const int tx = tid & 15;
    const int ty = tid >> 4;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int q0 = blockIdx.x * TSNE_KNN_KQ;
    const int qn = min(TSNE_KNN_KQ, nq - q0);

    for (int e = tid; e < TSNE_KNN_KQ * k; e += TSNE_KNN_THREADS) {
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
    if (tid < TSNE_KNN_KQ) qflag[tid] = 0;
    if (qResident) {
        for (int d0 = 0; d0 < d; d0 += TSNE_KNN_KD) {
            const int dl = min(TSNE_KNN_KD, d - d0);
            for (int e = tid; e < TSNE_KNN_KQ * TSNE_KNN_KD; e += TSNE_KNN_THREADS) {
                int row = e >> 5;
                int dd = e & 31;
                if (row < qn && dd < dl) qs[(d0 + dd) * TSNE_KNN_QS + row] = q[(i64) (q0 + row) * d + d0 + dd];
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
        for (int d0 = 0; d0 < d; d0 += TSNE_KNN_KD) {
            const int dl = min(TSNE_KNN_KD, d - d0);
            __syncthreads();
            {
                const float *rp = ref + (i64) r0 * d + d0;
#pragma unroll
                for (int it = 0; it < KNN_KR * TSNE_KNN_KD / TSNE_KNN_THREADS; it++) {
                    const int row = (tid >> 5) + it * (TSNE_KNN_THREADS / 32);
                    if (lane < dl && row < rn) rs[lane * KNN_RS + row] = rp[row * d + lane];
                }
            }
            if (!qResident) {
                const float *qp = q + (i64) q0 * d + d0;
#pragma unroll
                for (int it = 0; it < TSNE_KNN_KQ * TSNE_KNN_KD / TSNE_KNN_THREADS; it++) {
                    const int row = (tid >> 5) + it * (TSNE_KNN_THREADS / 32);
                    if (lane < dl && row < qn) qs[lane * TSNE_KNN_QS + row] = qp[row * d + lane];
                }
            }
            __syncthreads();
            const float *qb = qs + (qResident ? d0 : 0) * TSNE_KNN_QS + 4 * ty;
            const float *rb = rs + RPT * tx;
#pragma unroll 8
            for (int dd = 0; dd < dl; dd++) {
                float4 a = *(const float4 *) &qb[dd * TSNE_KNN_QS];
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
        for (int qq = warp * (TSNE_KNN_KQ / 8); qq < (warp + 1) * (TSNE_KNN_KQ / 8) && qq < qn; qq++) {
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
    for (int e = tid; e < qn * k; e += TSNE_KNN_THREADS) {
        i64 g = (i64) q0 * k + e;
        listD[g] = ld[e];
        listI[g] = li[e];
    }
}

extern "C" __global__ void __launch_bounds__(TSNE_KNN_THREADS)
tsne_knn_tile(const float *__restrict__ q, int nq, int qOff, const float *__restrict__ ref, int nr, int rOff,
              int d, int k, int qResident, float *__restrict__ listD, int *__restrict__ listI) {
    extern __shared__ __align__(16) unsigned char tsne_knn_smem[];
    __shared__ int qflag[TSNE_KNN_KQ];
    tsne_knn_body<4>(q, nq, qOff, ref, nr, rOff, d, k, qResident, listD, listI, tsne_knn_smem, qflag);
}

/* The same with 128-reference tiles (4 x 8 distances per thread). */
extern "C" __global__ void __launch_bounds__(TSNE_KNN_THREADS)
tsne_knn_tile8(const float *__restrict__ q, int nq, int qOff, const float *__restrict__ ref, int nr, int rOff,
               int d, int k, int qResident, float *__restrict__ listD, int *__restrict__ listI) {
    extern __shared__ __align__(16) unsigned char tsne_knn_smem[];
    __shared__ int qflag[TSNE_KNN_KQ];
    tsne_knn_body<8>(q, nq, qOff, ref, nr, rOff, d, k, qResident, listD, listI, tsne_knn_smem, qflag);
}
