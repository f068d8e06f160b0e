/*
 * t-SNE section: S2G by boxes, without atomics (kernels tsne_box_count_d*, tsne_box_scan, tsne_box_scatter,
 * tsne_s2g_sorted_*). Included by tsne.cu only, after grid.cuh. Host side: GridRepulsionGpu.launchS2GByBoxes;
 * the CPU twin is the same as the plain S2G's (GridRepulsionCpu.s2g): only the order of the exact fixed-point sums
 * changes, which changes no bit.
 *
 * Why: the interpolation grid is cut into boxes (intervals per axis), and a point's p^dim stencil nodes belong to
 * its box alone (node = box * p + k per axis). The plain S2G (grid.cuh) adds every point's (dim + 2) p^dim charges
 * to global memory with 128-bit atomics, 64 per point in 2-D with p = 4: at 10^6 clustered points the atomics on
 * the crowded nodes are the whole cost. Here the points are counting-sorted by box (count, scan, scatter), then one
 * thread per point in box order: each warp sums the charges of its runs of equal boxes with segmented shuffles and
 * adds one stencil per run with atomics. (One warp per box, without atomics, was tried first: 16x slower on clustered
 * data, where one box holds tens of thousands of points and its warp works alone.)
 *
 * Data layout
 *   boxOf   int[rows]      the box of each point (box = bx + I*(by + I*bz), I = intervals = npd / p)
 *   counts  int[boxes]     points per box (zeroed by the host before tsne_box_count)
 *   offsets int[boxes + 1] exclusive prefix sums of counts, offsets[boxes] = rows
 *   cursor  int[boxes]     a copy of offsets[0 .. boxes) that tsne_box_scatter advances
 *   order   int[rows]      the point indices grouped by box (order within a box is whatever the atomics gave:
 *                          the sums are exact in any order)
 *   y, prm, acc            as for tsne_s2g_* (grid.cuh); acc is added to.
 *
 * Launch shapes: count and scatter one thread per point (TSNE_BLOCK), scan one block of TSNE_BOX_SCAN_THREADS,
 * S2G one thread per point in box order (TSNE_BLOCK).
 */
#pragma once

#include "block.cuh"
#include "common.cuh"
#include "fixed128.cuh"
#include "layout/tsne.cuh"

/* The box of point i, from the same cell arithmetic as tsne_s2g_axis (box coordinate = cell / p). */
template <int DIM>
__device__ __forceinline__ int tsne_box_of(const double *__restrict__ y, int i, int p, int npd,
        const double *__restrict__ prm) {
    const int perAxis = npd / p;
    int box = 0;
    int mult = 1;
#pragma unroll
    for (int a = 0; a < DIM; a++) {
        const double s = __ddiv_rn(__dsub_rn(y[(long long) i * DIM + a], prm[TSNE_PRM_LO + a]), prm[TSNE_PRM_H]);
        const double f = floor(s);
        const int cell = f < 0.0 ? 0 : (f > (double) (npd - 1) ? npd - 1 : (int) f);
        box += (cell / p) * mult;
        mult *= perAxis;
    }
    return box;
}

#define TSNE_BOX_COUNT_KERNEL(SUFFIX, DIM)                                                                             \
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_box_count_##SUFFIX(const double *y, int rows, int p, \
            int npd, const double *prm, int *boxOf, int *counts) {                                                     \
        const int i = blockIdx.x * blockDim.x + threadIdx.x;                                                           \
        if (i >= rows) return;                                                                                         \
        const int box = tsne_box_of<DIM>(y, i, p, npd, prm);                                                           \
        boxOf[i] = box;                                                                                                \
        atomicAdd(counts + box, 1);                                                                                    \
    }
TSNE_BOX_COUNT_KERNEL(d1, 1)
TSNE_BOX_COUNT_KERNEL(d2, 2)
TSNE_BOX_COUNT_KERNEL(d3, 3)

/* Exclusive prefix sums of counts into offsets and cursor, by one block walking the boxes in tiles. */
extern "C" __global__ void __launch_bounds__(TSNE_BOX_SCAN_THREADS) tsne_box_scan(const int *counts, int boxes,
        int *offsets, int *cursor) {
    typedef cub::BlockScan<int, TSNE_BOX_SCAN_THREADS> Scan;
    __shared__ typename Scan::TempStorage tmp;
    __shared__ int carry;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (int base = 0; base < boxes; base += TSNE_BOX_SCAN_THREADS * TSNE_BOX_SCAN_ITEMS) {
        int v[TSNE_BOX_SCAN_ITEMS];
        int ex[TSNE_BOX_SCAN_ITEMS];
        const int first = base + threadIdx.x * TSNE_BOX_SCAN_ITEMS;
#pragma unroll
        for (int k = 0; k < TSNE_BOX_SCAN_ITEMS; k++) v[k] = first + k < boxes ? counts[first + k] : 0;
        int total;
        Scan(tmp).ExclusiveSum(v, ex, total);
        const int c = carry;
#pragma unroll
        for (int k = 0; k < TSNE_BOX_SCAN_ITEMS; k++) {
            if (first + k < boxes) {
                offsets[first + k] = c + ex[k];
                cursor[first + k] = c + ex[k];
            }
        }
        __syncthreads(); /* every thread has read carry (and tmp may be reused) */
        if (threadIdx.x == 0) carry = c + total;
        __syncthreads();
    }
    if (threadIdx.x == 0) offsets[boxes] = carry;
}

extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_box_scatter(const int *boxOf, int rows, int *cursor,
        int *order) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    order[atomicAdd(cursor + boxOf[i], 1)] = i;
}

/* Segmented sums over a warp whose lanes hold keys in runs (equal keys adjacent): after it, the first lane of each
 * run holds the run's total (mod 2^128: any tree gives the same bits). same[s] says whether lane + 2^s is in this
 * lane's run (tsne_warp_runs). */
__device__ __forceinline__ void tsne_warp_fx_segsum(u64 &lo, u64 &hi, const bool *same) {
#pragma unroll
    for (int s = 0; s < 5; s++) {
        const u64 olo = __shfl_down_sync(0xffffffffu, lo, 1 << s);
        const u64 ohi = __shfl_down_sync(0xffffffffu, hi, 1 << s);
        if (same[s]) fx_add(lo, hi, olo, ohi);
    }
}

/* same[s] for tsne_warp_fx_segsum; returns whether this lane starts its run. */
__device__ __forceinline__ bool tsne_warp_runs(int key, int lane, bool *same) {
#pragma unroll
    for (int s = 0; s < 5; s++) {
        const int o = __shfl_down_sync(0xffffffffu, key, 1 << s);
        same[s] = lane + (1 << s) < 32 && o == key;
    }
    const int prev = __shfl_up_sync(0xffffffffu, key, 1);
    return lane == 0 || prev != key;
}

/* One thread per point in box order (point order[j]): the warp's points fall in runs of equal boxes, whose charges
 * are summed per node by segmented shuffles; the first lane of each run adds the sums to acc with 128-bit atomics
 * (other warps may hold points of the same box). A crowded box is spread over many warps, and a warp adds one
 * stencil per box it holds instead of one per point. The charge values are tsne_s2g_body's, operation for
 * operation. */
template <int DIM, int PC>
__device__ __forceinline__ void tsne_s2g_sorted_body(const double *__restrict__ y, const int *__restrict__ order,
        const int *__restrict__ boxOf, int rows, int pRun, int npd, int nodes, const double *__restrict__ prm,
        u64 *__restrict__ acc) {
    const long long j = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    if (j - lane >= rows) return; /* whole warps stay (blockDim.x is a multiple of 32) */
    const bool has = j < rows;
    const int p = PC > 0 ? PC : pRun;
    const int pt = has ? order[j] : 0;
    const int key = has ? boxOf[pt] : -1 - lane;
    bool same[5];
    const bool head = tsne_warp_runs(key, lane, same);
    double w[3][TSNE_MAX_P], q[DIM + 2], yv[DIM];
    int b[3] = {0, 0, 0};
    if (has) {
        tsne_s2g_locate<DIM, PC>(y, pt, p, npd, prm, yv, w, b);
        tsne_s2g_charges<DIM>(yv, prm, q);
    } else {
#pragma unroll
        for (int a = 0; a < 3; a++) {
#pragma unroll
            for (int k = 0; k < TSNE_MAX_P; k++) w[a][k] = 0.0;
        }
#pragma unroll
        for (int c = 0; c < DIM + 2; c++) q[c] = 0.0;
    }
    TSNE_S2G_FOR_EACH_NODE(DIM, PC, p, npd, b, w, {
        _Pragma("unroll") for (int c = 0; c < DIM + 2; c++) {
            u64 lo = 0ull;                                         /* no commas: a macro argument */
            u64 hi = 0ull;
            if (has) fx_quantize(c == 0 ? wt : __dmul_rn(wt, q[c]), prm[TSNE_PRM_MULT + 2 * c],
                                 prm[TSNE_PRM_MULT + 1 + 2 * c], lo, hi);
            tsne_warp_fx_segsum(lo, hi, same);
            if (head && has) fx_atomic_add(acc + 2 * ((long long) c * nodes + node), lo, hi);
        }
    })
}

#define TSNE_S2G_SORTED_KERNEL(SUFFIX, DIM, PC)                                                                        \
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_s2g_sorted_##SUFFIX(const double *y,                 \
            const int *order, const int *boxOf, int rows, int p, int npd, int nodes, const double *prm, u64 *acc) {    \
        tsne_s2g_sorted_body<DIM, PC>(y, order, boxOf, rows, p, npd, nodes, prm, acc);                                 \
    }
TSNE_S2G_SORTED_KERNEL(d1, 1, 0)
TSNE_S2G_SORTED_KERNEL(d2, 2, 0)
TSNE_S2G_SORTED_KERNEL(d3, 3, 0)
TSNE_S2G_SORTED_KERNEL(d1_p3, 1, 3)
TSNE_S2G_SORTED_KERNEL(d2_p3, 2, 3)
TSNE_S2G_SORTED_KERNEL(d3_p3, 3, 3)
TSNE_S2G_SORTED_KERNEL(d1_p4, 1, 4)
TSNE_S2G_SORTED_KERNEL(d2_p4, 2, 4)
TSNE_S2G_SORTED_KERNEL(d3_p4, 3, 4)
