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

/* The warp offers its 32 lanes' pairs (cd, ci) where cand holds to the sorted list ld/li of length len, one at a
 * time in lane order (each checked again against the current last entry (wd, wi), which it keeps up to date). */
__device__ __forceinline__ void tsne_knn_offer(float *ld, int *li, int len, float cd, int ci, bool cand, float &wd,
                                               int &wi, int lane) {
    unsigned mask = __ballot_sync(FULL_MASK, cand);
    while (mask) {
        int src = __ffs(mask) - 1;
        mask &= mask - 1;
        float bd = __shfl_sync(FULL_MASK, cd, src);
        int bi = __shfl_sync(FULL_MASK, ci, src);
        if (tsne_knn_before(bd, bi, wd, wi)) {
            tsne_knn_insert(ld, li, len, bd, bi, lane);
            wd = ld[len - 1];
            wi = li[len - 1];
        }
    }
}

/* A block's KQ lists of length len from global memory (rows q0.. of listD/listI; rows past qn padded with
 * (+inf, -1)) into shared ld/li, and (store) back. */
__device__ __forceinline__ void tsne_knn_lists_load(float *ld, int *li, const float *listD, const int *listI, int q0,
                                                    int qn, int len) {
    for (int e = threadIdx.x; e < TSNE_KNN_KQ * len; e += TSNE_KNN_THREADS) {
        int qq = e / len;
        if (qq < qn) {
            i64 g = (i64) (q0 + qq) * len + (e - qq * len);
            ld[e] = listD[g];
            li[e] = listI[g];
        } else {
            ld[e] = __int_as_float(0x7F800000);
            li[e] = -1;
        }
    }
}

__device__ __forceinline__ void tsne_knn_lists_store(const float *ld, const int *li, float *listD, int *listI, int q0,
                                                     int qn, int len) {
    for (int e = threadIdx.x; e < qn * len; e += TSNE_KNN_THREADS) {
        i64 g = (i64) q0 * len + e;
        listD[g] = ld[e];
        listI[g] = li[e];
    }
}

/* The references a block scans: one contiguous range (global indices rOff..; the plain kernels) ... */
struct TsneKnnOneRange {
    const float *ref;
    int nr;
    int rOff;
    __device__ __forceinline__ int count() const { return 1; }
    __device__ __forceinline__ void get(int, const float *&p, int &n, int &off, const int *&idx) const {
        p = ref;
        n = nr;
        off = rOff;
        idx = nullptr;
    }
};

/* ... or the cells of a probe list (tsne_knn_cells): cell b holds the rows cellStart[b]..cellStart[b+1] of the
 * cell-ordered points xs, whose global indices are perm[row]. */
struct TsneKnnCellRanges {
    const float *xs;
    int d;
    const int *probe; /* this block's probe list */
    int np;
    const int *cellStart;
    const int *perm;
    __device__ __forceinline__ int count() const { return np; }
    __device__ __forceinline__ void get(int i, const float *&p, int &n, int &off, const int *&idx) const {
        const int b = probe[i];
        const int s = cellStart[b];
        p = xs + (i64) s * d;
        n = cellStart[b + 1] - s;
        off = 0;
        idx = perm + s;
    }
};

/* RPT references per thread: the reference tile is KR = 16 RPT wide (RPT = 4 or 8). The block owns query rows
 * q0..q0+qn-1 of q (global index qIdx[row], or qOff + row when qIdx is null) and scans every range of R. */
template <int RPT, class R>
__device__ __forceinline__ void tsne_knn_body(const float *__restrict__ q, int q0, int qn, int qOff, const R &ranges,
        int d, int k, int qResident, float *__restrict__ listD, int *__restrict__ listI,
        unsigned char *tsne_knn_smem, int *qflag, int *ridx, const int *__restrict__ qIdx) {
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

    tsne_knn_lists_load(ld, li, listD, listI, q0, qn, k);
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

    const int nRanges = ranges.count();
    for (int rg = 0; rg < nRanges; rg++) {
    const float *ref;
    int nr, rOff;
    const int *rIdx;
    ranges.get(rg, ref, nr, rOff, rIdx);
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
                if (rIdx && d0 == 0 && tid < KNN_KR) ridx[tid] = tid < rn ? rIdx[r0 + tid] : -1;
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
            const int self = qIdx ? (qq < qn ? qIdx[q0 + qq] : -1) : qOff + q0 + qq;
            bool any = false;
#pragma unroll
            for (int j = 0; j < RPT; j++) {
                const int c = RPT * tx + j;
                const int gi = rIdx ? ridx[c] : rOff + r0 + c;
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
            const int self = qIdx ? qIdx[q0 + qq] : qOff + q0 + qq;
            float wd = lqd[k - 1];
            int wi = lqi[k - 1];
#pragma unroll
            for (int half = 0; half < KNN_KR / 32; half++) {
                int c = lane + 32 * half;
                int gi = rIdx ? ridx[c] : rOff + r0 + c;
                float dc = ds[qq * KNN_DS + c];
                bool cand = c < rn && gi != self && tsne_knn_before(dc, gi, wd, wi);
                tsne_knn_offer(lqd, lqi, k, dc, gi, cand, wd, wi, lane);
            }
            __syncwarp();
            if (lane == 0) qflag[qq] = 0;
        }
    }
    }
    __syncthreads();
    tsne_knn_lists_store(ld, li, listD, listI, q0, qn, k);
}

extern "C" __global__ void __launch_bounds__(TSNE_KNN_THREADS)
tsne_knn_tile(const float *__restrict__ q, int nq, int qOff, const float *__restrict__ ref, int nr, int rOff,
              int d, int k, int qResident, float *__restrict__ listD, int *__restrict__ listI) {
    extern __shared__ __align__(16) unsigned char tsne_knn_smem[];
    __shared__ int qflag[TSNE_KNN_KQ];
    const int q0 = blockIdx.x * TSNE_KNN_KQ;
    tsne_knn_body<4>(q, q0, min(TSNE_KNN_KQ, nq - q0), qOff, TsneKnnOneRange{ref, nr, rOff}, d, k, qResident, listD,
                     listI, tsne_knn_smem, qflag, nullptr, nullptr);
}

/* The same with 128-reference tiles (4 x 8 distances per thread). */
extern "C" __global__ void __launch_bounds__(TSNE_KNN_THREADS)
tsne_knn_tile8(const float *__restrict__ q, int nq, int qOff, const float *__restrict__ ref, int nr, int rOff,
               int d, int k, int qResident, float *__restrict__ listD, int *__restrict__ listI) {
    extern __shared__ __align__(16) unsigned char tsne_knn_smem[];
    __shared__ int qflag[TSNE_KNN_KQ];
    const int q0 = blockIdx.x * TSNE_KNN_KQ;
    tsne_knn_body<8>(q, q0, min(TSNE_KNN_KQ, nq - q0), qOff, TsneKnnOneRange{ref, nr, rOff}, d, k, qResident, listD,
                     listI, tsne_knn_smem, qflag, nullptr, nullptr);
}

/* tsne_knn_tile8 for gathered queries: query row r has global index qIdx[r] (the self it skips); the re-run of
 * the tensor-core filter's uncertified queries (TsneAffinitiesGpu.knnTensorCores). */
extern "C" __global__ void __launch_bounds__(TSNE_KNN_THREADS)
tsne_knn_tile8_idx(const float *__restrict__ q, int nq, const int *__restrict__ qIdx, const float *__restrict__ ref,
                   int nr, int rOff, int d, int k, int qResident, float *__restrict__ listD, int *__restrict__ listI) {
    extern __shared__ __align__(16) unsigned char tsne_knn_smem[];
    __shared__ int qflag[TSNE_KNN_KQ];
    const int q0 = blockIdx.x * TSNE_KNN_KQ;
    tsne_knn_body<8>(q, q0, min(TSNE_KNN_KQ, nq - q0), 0, TsneKnnOneRange{ref, nr, rOff}, d, k, qResident, listD,
                     listI, tsne_knn_smem, qflag, nullptr, qIdx);
}

/*
 * kNN over cells (TsneKnnCells, the exact kNN pruned by cells and its approximate option). The points are ordered
 * by cell: xs float[n*d] (row r is the point perm[r]), cell c holds rows cellStart[c]..cellStart[c+1]-1. Block b
 * owns the query rows tileStart[b]..+tileCount[b] (<= KQ, all of one cell) and scans the cells
 * probe[probeStart[tileCell[b]]..probeStart[tileCell[b]+1]-1] with tsne_knn_tile8's arithmetic and order; the lists
 * listD/listI are rows of the cell order holding global indices (in/out: a later call with more cells merges).
 */
extern "C" __global__ void __launch_bounds__(TSNE_KNN_THREADS)
tsne_knn_cells(const float *__restrict__ xs, const int *__restrict__ perm, const int *__restrict__ cellStart,
               const int *__restrict__ tileCell, const int *__restrict__ tileStart, const int *__restrict__ tileCount,
               const int *__restrict__ probeStart, const int *__restrict__ probe, int d, int k, int qResident,
               float *__restrict__ listD, int *__restrict__ listI) {
    extern __shared__ __align__(16) unsigned char tsne_knn_smem[];
    __shared__ int qflag[TSNE_KNN_KQ];
    __shared__ int ridx[TSNE_KNN_KR(8)];
    const int c = tileCell[blockIdx.x];
    const int p0 = probeStart[c];
    TsneKnnCellRanges rg{xs, d, probe + p0, probeStart[c + 1] - p0, cellStart, perm};
    tsne_knn_body<8>(xs, tileStart[blockIdx.x], tileCount[blockIdx.x], 0, rg, d, k, qResident, listD, listI,
                     tsne_knn_smem, qflag, ridx, perm);
}

/* KnnCells: row r of the cell order is point perm[r]. tsne_knn_gather: xs[r] = x[perm[r]] (d floats per row);
 * tsne_knn_scatter: the lists of row r (k entries) to point perm[r]'s place (copies, no arithmetic). */
extern "C" __global__ void tsne_knn_gather(const float *__restrict__ x, const int *__restrict__ perm, int n, int d,
                                           float *__restrict__ xs) {
    const i64 count = (i64) n * d;
    for (i64 e = blockIdx.x * (i64) blockDim.x + threadIdx.x; e < count; e += (i64) gridDim.x * blockDim.x) {
        const i64 r = e / d;
        xs[e] = x[(i64) perm[r] * d + (e - r * d)];
    }
}

/* KnnCells' Lloyd step (KnnCells.meansCpu is the twin): cen[c d + t] = (float) (the double sum of x[perm[r] d + t] over
 * the rows r of cell c, start[c] <= r < start[c + 1], in row order, / the cell's count); an empty cell keeps its
 * centre. One thread per (cell, dimension): neighbouring threads read neighbouring floats of a row. */
extern "C" __global__ void tsne_knn_cell_means(const float *__restrict__ x, const int *__restrict__ perm,
                                               const int *__restrict__ start, int nc, int d, float *__restrict__ cen) {
    const i64 count = (i64) nc * d;
    for (i64 e = blockIdx.x * (i64) blockDim.x + threadIdx.x; e < count; e += (i64) gridDim.x * blockDim.x) {
        const int c = (int) (e / d);
        const i64 t = e - (i64) c * d;
        const int from = start[c];
        const int to = start[c + 1];
        if (from == to) continue;
        double sum = 0.0;
        for (int r = from; r < to; r++) sum = __dadd_rn(sum, (double) x[(i64) perm[r] * d + t]);
        cen[e] = __double2float_rn(__ddiv_rn(sum, (double) (to - from)));
    }
}

/* The smallest index e < count with x[e] not finite, into *first (the host sets it to count first; atomicMin, so the
 * same index whatever the order): the input check of the kNN over cells, on the copy it already made. */
extern "C" __global__ void tsne_knn_first_nonfinite(const float *__restrict__ x, i64 count,
                                                    unsigned long long *__restrict__ first) {
    for (i64 e = blockIdx.x * (i64) blockDim.x + threadIdx.x; e < count; e += (i64) gridDim.x * blockDim.x) {
        if (!isfinite(x[e])) atomicMin(first, (unsigned long long) e);
    }
}

extern "C" __global__ void tsne_knn_scatter(const float *__restrict__ listD, const int *__restrict__ listI,
                                            const int *__restrict__ perm, int n, int k, float *__restrict__ dist2,
                                            int *__restrict__ index) {
    const i64 count = (i64) n * k;
    for (i64 e = blockIdx.x * (i64) blockDim.x + threadIdx.x; e < count; e += (i64) gridDim.x * blockDim.x) {
        const i64 r = e / k;
        const i64 to = (i64) perm[r] * k + (e - r * k);
        dist2[to] = listD[e];
        index[to] = listI[e];
    }
}

/* The k-th (last) distance of every list row (TsneKnnCells: the cells' radii of the pruning). */
extern "C" __global__ void tsne_knn_kth(const float *__restrict__ listD, int n, int k, float *__restrict__ kth) {
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < n; r += gridDim.x * blockDim.x)
        kth[r] = listD[(i64) r * k + k - 1];
}

/*
 * Tensor-core kNN (sm_80+): a TF32 FILTER keeps C > k candidates per query, an exact re-rank gives the neighbours
 * with the bits of tsne_knn_tile8 (the same distance arithmetic), and a certificate per query says whether the
 * filter provably kept every true neighbour; the host re-runs uncertified queries with tsne_knn_tile8_idx.
 * Host side: TsneAffinitiesGpu.knnTensorCores; the bound's constants: TsneKnnBound (Java, with its derivation).
 *
 * tsne_knn_prep: y = x - mu (float, __fsub_rn), zhi = tf32(y) (round to nearest, cvt.rna), zlo = tf32(y - zhi)
 *   (3xTF32 split), rows padded with 0 to dp (a multiple of 8); nrm = (float) sum y^2 (summed in double),
 *   mnrm = nrm * cm (float). One thread per row.
 * tsne_knn_tc: the filter. Block of 256 threads owns KQ = 64 queries and walks the references in tiles of 128;
 *   8 warps each compute a 32 x 32 sub-tile of y_q . y_r with nvcuda::wmma m16n16k8 TF32 as 3xTF32 (hi.lo + lo.hi +
 *   hi.hi; one TF32 product would leave an error of 2^-10 ||y_q|| ||y_r||, too coarse to certify clustered data
 *   whose centres lie far apart), dimensions in chunks of 32 staged in shared memory (the query tile resident
 *   when it fits), each chunk summed in fresh fragments then added in float; the tile goes to shared memory; then each warp
 *   scores its 8 queries x 128 references: key = (nrm_q + mnrm_r) - 2 dot (float; a non-finite key becomes -inf,
 *   i.e. always kept and never certifying) and inserts keys better than its C-th into the query's list sorted by
 *   (key, index) (tsne_knn_insert with length C). key - c * nrm_q is a lower bound of the squared distance.
 *   Shared memory: TsneAffinitiesGpu.tcSharedBytes.
 * tsne_knn_cand_exact: the exact squared distance (twin arithmetic) of every candidate whose index is in this
 *   reference chunk [rOff, rOff + nr); one thread per (query, slot).
 * tsne_knn_final: one warp per query: the rank of every candidate by (exact dist2, index as unsigned, slot), the
 *   first k into listD/listI (padding (+inf, -1) as tsne_knn_tile8), and flag = 0 when certified:
 *   the list was never full (every reference is a candidate), or dist2_k < g * (key_C - c3 * nrm_q) - abs (double).
 */
#include <mma.h>

/* sizes: include/layout/tsne.cuh (TSNE_TC_*) */

__device__ __forceinline__ float tsne_tf32_rna(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

/* Stages dimensions d0..d0+dl of rows row0..row0+rows (high and low parts; rows past valid as zeros) into
 * hi/lo [rows][ld] in shared memory, by the whole block. */
__device__ __forceinline__ void tsne_tc_stage(float *hi, float *lo, int ld, const float *__restrict__ zhi,
                                              const float *__restrict__ zlo, int row0, int rows, int valid, int dp,
                                              int d0, int dl) {
    for (int e = threadIdx.x; e < rows * TSNE_KNN_KD; e += TSNE_KNN_THREADS) {
        int row = e >> 5;
        int dd = e & 31;
        if (dd < dl) {
            hi[row * ld + dd] = row < valid ? zhi[(i64) (row0 + row) * dp + d0 + dd] : 0.0f;
            lo[row * ld + dd] = row < valid ? zlo[(i64) (row0 + row) * dp + d0 + dd] : 0.0f;
        }
    }
}

extern "C" __global__ void tsne_knn_prep(const float *__restrict__ x, int rows, int d, const float *__restrict__ mu,
                                         int dp, float cm, float *__restrict__ zhi, float *__restrict__ zlo,
                                         float *__restrict__ nrm, float *__restrict__ mnrm) {
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
        double s = 0.0;
        for (int t = 0; t < d; t++) {
            float y = __fsub_rn(x[(i64) r * d + t], mu[t]);
            s = __dadd_rn(s, __dmul_rn((double) y, (double) y));
            float hi = tsne_tf32_rna(y);
            zhi[(i64) r * dp + t] = hi;
            zlo[(i64) r * dp + t] = tsne_tf32_rna(__fsub_rn(y, hi)); /* y - hi is exact */
        }
        for (int t = d; t < dp; t++) {
            zhi[(i64) r * dp + t] = 0.0f;
            zlo[(i64) r * dp + t] = 0.0f;
        }
        float n = __double2float_rn(s);
        nrm[r] = n;
        mnrm[r] = __fmul_rn(n, cm);
    }
}

extern "C" __global__ void tsne_knn_fill(float *__restrict__ key, int *__restrict__ idx, i64 count) {
    for (i64 e = blockIdx.x * (i64) blockDim.x + threadIdx.x; e < count; e += (i64) gridDim.x * blockDim.x) {
        key[e] = __int_as_float(0x7F800000);
        idx[e] = -1;
    }
}

extern "C" __global__ void __launch_bounds__(TSNE_KNN_THREADS)
tsne_knn_tc(const float *__restrict__ zq, const float *__restrict__ zqlo, const float *__restrict__ nq_, int nq,
            int qOff, const float *__restrict__ zr, const float *__restrict__ zrlo, const float *__restrict__ mr,
            int nr, int rOff, int dp, int C,
            int qResident, float *__restrict__ candK, int *__restrict__ candI) {
    using namespace nvcuda;
    extern __shared__ __align__(128) unsigned char tsne_tc_smem[];
    __shared__ float sn[TSNE_KNN_KQ];
    __shared__ float sm[TSNE_TC_KR];
    const int qld = (qResident ? dp : TSNE_KNN_KD) + 4;
    float *qs = (float *) tsne_tc_smem;                 /* [KQ][qld] high parts */
    float *ql = qs + TSNE_KNN_KQ * qld;                 /* [KQ][qld] low parts */
    float *rs = ql + TSNE_KNN_KQ * qld;                 /* [KR][RLD] high, [KR][RLD] low; aliased by ds [KQ][DLD] */
    float *rl = rs + TSNE_TC_KR * TSNE_TC_RLD;
    float *ds = rs;
    float *lk = rs + TSNE_TC_TILE_FLOATS;               /* [KQ][C] */
    int *li = (int *) (lk + TSNE_KNN_KQ * C);           /* [KQ][C] */

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int wr = warp & 1;  /* rows 32 wr .. */
    const int wc = warp >> 1; /* cols 32 wc .. */
    const int q0 = blockIdx.x * TSNE_KNN_KQ;
    const int qn = min(TSNE_KNN_KQ, nq - q0);

    tsne_knn_lists_load(lk, li, candK, candI, q0, qn, C);
    if (tid < TSNE_KNN_KQ) sn[tid] = tid < qn ? nq_[q0 + tid] : 0.0f;
    if (qResident) {
        for (int e = tid; e < TSNE_KNN_KQ * dp; e += TSNE_KNN_THREADS) {
            int row = e / dp;
            int dd = e - row * dp;
            qs[row * qld + dd] = row < qn ? zq[(i64) (q0 + row) * dp + dd] : 0.0f;
            ql[row * qld + dd] = row < qn ? zqlo[(i64) (q0 + row) * dp + dd] : 0.0f;
        }
    }

    for (int r0 = 0; r0 < nr; r0 += TSNE_TC_KR) {
        const int rn = min(TSNE_TC_KR, nr - r0);
        wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2], part[2][2];
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.0f);
        for (int d0 = 0; d0 < dp; d0 += TSNE_KNN_KD) {
            const int dl = min(TSNE_KNN_KD, dp - d0); /* a multiple of 8 */
            __syncthreads();
            tsne_tc_stage(rs, rl, TSNE_TC_RLD, zr, zrlo, r0, TSNE_TC_KR, rn, dp, d0, dl);
            if (!qResident) tsne_tc_stage(qs, ql, qld, zq, zqlo, q0, TSNE_KNN_KQ, qn, dp, d0, dl);
            if (d0 == 0 && tid < TSNE_TC_KR) sm[tid] = tid < rn ? mr[r0 + tid] : 0.0f;
            __syncthreads();
            const int qc = qResident ? d0 : 0;
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 2; j++) wmma::fill_fragment(part[i][j], 0.0f);
            for (int kk = 0; kk < dl; kk += 8) {
                wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a[2], al[2];
                wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b[2], bl[2];
#pragma unroll
                for (int i = 0; i < 2; i++) {
                    wmma::load_matrix_sync(a[i], qs + (32 * wr + 16 * i) * qld + qc + kk, qld);
                    wmma::load_matrix_sync(al[i], ql + (32 * wr + 16 * i) * qld + qc + kk, qld);
                }
#pragma unroll
                for (int j = 0; j < 2; j++) {
                    wmma::load_matrix_sync(b[j], rs + (32 * wc + 16 * j) * TSNE_TC_RLD + kk, TSNE_TC_RLD);
                    wmma::load_matrix_sync(bl[j], rl + (32 * wc + 16 * j) * TSNE_TC_RLD + kk, TSNE_TC_RLD);
                }
#pragma unroll
                for (int i = 0; i < 2; i++)
#pragma unroll
                    for (int j = 0; j < 2; j++) { /* 3xTF32: hi.lo + lo.hi + hi.hi (lo.lo dropped) */
                        wmma::mma_sync(part[i][j], a[i], bl[j], part[i][j]);
                        wmma::mma_sync(part[i][j], al[i], b[j], part[i][j]);
                        wmma::mma_sync(part[i][j], a[i], b[j], part[i][j]);
                    }
            }
            /* each 32-dimension chunk is summed by the tensor cores on its own, then added in float (the same
             * element mapping for fragments of one type), which keeps the accumulation error per chunk */
#pragma unroll
            for (int i = 0; i < 2; i++)
#pragma unroll
                for (int j = 0; j < 2; j++)
#pragma unroll
                    for (int e = 0; e < acc[i][j].num_elements; e++)
                        acc[i][j].x[e] = __fadd_rn(acc[i][j].x[e], part[i][j].x[e]);
        }
        __syncthreads(); /* every warp is done with rs before ds (same memory) is written */
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < 2; j++)
                wmma::store_matrix_sync(ds + (32 * wr + 16 * i) * TSNE_TC_DLD + 32 * wc + 16 * j, acc[i][j],
                                        TSNE_TC_DLD, wmma::mem_row_major);
        __syncthreads();
        for (int qq = warp * (TSNE_KNN_KQ / 8); qq < (warp + 1) * (TSNE_KNN_KQ / 8) && qq < qn; qq++) {
            float *lqk = lk + qq * C;
            int *lqi = li + qq * C;
            const int self = qOff + q0 + qq;
            const float ni = sn[qq];
            float wk = lqk[C - 1];
            int wi = lqi[C - 1];
#pragma unroll
            for (int part = 0; part < TSNE_TC_KR / 32; part++) {
                const int c = lane + 32 * part;
                const int gi = rOff + r0 + c;
                float key = __fsub_rn(__fadd_rn(ni, sm[c]), __fmul_rn(2.0f, ds[qq * TSNE_TC_DLD + c]));
                if (!isfinite(key)) key = __int_as_float(0xFF800000);
                bool cand = c < rn && gi != self && tsne_knn_before(key, gi, wk, wi);
                tsne_knn_offer(lqk, lqi, C, key, gi, cand, wk, wi, lane);
            }
        }
    }
    __syncthreads();
    tsne_knn_lists_store(lk, li, candK, candI, q0, qn, C);
}

extern "C" __global__ void tsne_knn_cand_exact(const float *__restrict__ xq, int nq, const float *__restrict__ xr,
                                               int nr, int rOff, int d, int C, const int *__restrict__ candI,
                                               float *__restrict__ candD) {
    for (i64 e = blockIdx.x * (i64) blockDim.x + threadIdx.x; e < (i64) nq * C; e += (i64) gridDim.x * blockDim.x) {
        const int gi = candI[e];
        if (gi < rOff || gi >= rOff + nr) continue; /* padding (-1) or another reference chunk */
        const float *a = xq + (e / C) * d;
        const float *b = xr + (i64) (gi - rOff) * d;
        float acc = 0.0f;
        for (int t = 0; t < d; t++) {
            float diff = __fsub_rn(a[t], b[t]);
            acc = __fmaf_rn(diff, diff, acc);
        }
        candD[e] = acc;
    }
}

extern "C" __global__ void tsne_knn_final(const float *__restrict__ candK, const int *__restrict__ candI,
                                          const float *__restrict__ candD, const float *__restrict__ nq_, int nq,
                                          int C, int k, double c3, double g, double absSlack,
                                          float *__restrict__ listD, int *__restrict__ listI, int *__restrict__ flag) {
    const int lane = threadIdx.x & 31;
    const int q = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (q >= nq) return;
    const i64 base = (i64) q * C;
    float kth = 0.0f;
    for (int s = lane; s < C; s += 32) {
        const int si = candI[base + s];
        const float sd = si == -1 ? __int_as_float(0x7F800000) : candD[base + s];
        int rank = 0;
        for (int o = 0; o < C; o++) {
            const int oi = candI[base + o];
            const float od = oi == -1 ? __int_as_float(0x7F800000) : candD[base + o];
            rank += od < sd || (od == sd && ((unsigned) oi < (unsigned) si || (oi == si && o < s)));
        }
        if (rank < k) {
            listD[(i64) q * k + rank] = sd;
            listI[(i64) q * k + rank] = si;
        }
        if (rank == k - 1) kth = sd;
    }
    /* the lane holding rank k - 1 set kth; the others hold 0 (distances are >= 0): the maximum is the k-th */
    for (int off = 16; off > 0; off >>= 1) kth = fmaxf(kth, __shfl_xor_sync(FULL_MASK, kth, off));
    if (lane == 0) {
        int bad;
        if (candI[base + C - 1] == -1) {
            bad = 0; /* never full: every reference of every chunk is a candidate */
        } else {
            const double key = (double) candK[base + C - 1];
            const double rhs = __dsub_rn(__dmul_rn(g, __dsub_rn(key, __dmul_rn(c3, (double) nq_[q]))), absSlack);
            bad = (double) kth < rhs ? 0 : 1;
        }
        flag[q] = bad;
    }
}
