/*
 * t-SNE section: S2G by boxes, without atomics (kernels tsne_box_count_d*, tsne_box_scan, tsne_box_scatter,
 * tsne_s2g_box_*). Included by tsne.cu only, after grid.cuh. Host side: GridRepulsionGpu.launchS2GByBoxes;
 * the CPU twin is the same as the plain S2G's (GridRepulsionCpu.s2g): only the order of the exact fixed-point sums
 * changes, which changes no bit.
 *
 * Why: the interpolation grid is cut into boxes (intervals per axis), and a point's p^dim stencil nodes belong to
 * its box alone (node = box * p + k per axis). The plain S2G (grid.cuh) adds every point's (dim + 2) p^dim charges
 * to global memory with 128-bit atomics, 36 per point in 2-D with p = 3: at 10^6 points the atomic traffic is the
 * whole cost. Here the points are counting-sorted by box (count, scan, scatter), then one warp per box sums its
 * points' charges with shuffles and lane 0 adds each node's sum to acc with plain loads and stores (the box owns its
 * nodes, so no other thread touches them in the launch).
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
 * S2G one warp per box (TSNE_BLOCK threads = 8 boxes per block).
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

/* (lo, hi) summed over the warp (mod 2^128: any tree gives the same bits); lane 0 gets the total. */
__device__ __forceinline__ void tsne_warp_fx_sum(u64 &lo, u64 &hi) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const u64 olo = __shfl_down_sync(0xffffffffu, lo, off);
        const u64 ohi = __shfl_down_sync(0xffffffffu, hi, off);
        fx_add(lo, hi, olo, ohi);
    }
}

/* One warp per box: its points in chunks of 32 (one per lane), every charge of every node of the box summed over the
 * chunk by shuffles, lane 0 adding the sum to acc. The charge values are tsne_s2g_body's, operation for operation. */
template <int DIM, int PC>
__device__ __forceinline__ void tsne_s2g_box_body(const double *__restrict__ y, const int *__restrict__ order,
        const int *__restrict__ offsets, int boxes, int pRun, int npd, int nodes, const double *__restrict__ prm,
        u64 *__restrict__ acc) {
    const int box = (int) (((long long) blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int lane = threadIdx.x & 31;
    if (box >= boxes) return; /* whole warps: blockDim.x is a multiple of 32 */
    const int start = offsets[box];
    const int end = offsets[box + 1];
    const int p = PC > 0 ? PC : pRun;
    for (int chunk = start; chunk < end; chunk += 32) {
        const int j = chunk + lane;
        const bool has = j < end;
        double w[3][TSNE_MAX_P], q[DIM + 2], yv[DIM];
        int b[3] = {0, 0, 0};
        if (has) {
            tsne_s2g_locate<DIM, PC>(y, order[j], p, npd, prm, yv, w, b);
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
        /* lane 0 always holds a point of the box, so its b (the box's first node per axis) addresses the writes */
        TSNE_S2G_FOR_EACH_NODE(DIM, PC, p, npd, b, w, {
            _Pragma("unroll") for (int c = 0; c < DIM + 2; c++) {
                u64 lo = 0ull;                                     /* no commas: a macro argument */
                u64 hi = 0ull;
                if (has) fx_quantize(c == 0 ? wt : __dmul_rn(wt, q[c]), prm[TSNE_PRM_MULT + 2 * c],
                                     prm[TSNE_PRM_MULT + 1 + 2 * c], lo, hi);
                tsne_warp_fx_sum(lo, hi);
                if (lane == 0) {
                    u64 *at = acc + 2 * ((long long) c * nodes + node);
                    u64 alo = at[0];
                    u64 ahi = at[1];
                    fx_add(alo, ahi, lo, hi);
                    at[0] = alo;
                    at[1] = ahi;
                }
            }
        })
    }
}

#define TSNE_S2G_BOX_KERNEL(SUFFIX, DIM, PC)                                                                           \
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_s2g_box_##SUFFIX(const double *y, const int *order,  \
            const int *offsets, int boxes, int p, int npd, int nodes, const double *prm, u64 *acc) {                   \
        tsne_s2g_box_body<DIM, PC>(y, order, offsets, boxes, p, npd, nodes, prm, acc);                                 \
    }
TSNE_S2G_BOX_KERNEL(d1, 1, 0)
TSNE_S2G_BOX_KERNEL(d2, 2, 0)
TSNE_S2G_BOX_KERNEL(d3, 3, 0)
TSNE_S2G_BOX_KERNEL(d1_p3, 1, 3)
TSNE_S2G_BOX_KERNEL(d2_p3, 2, 3)
TSNE_S2G_BOX_KERNEL(d3_p3, 3, 3)
TSNE_S2G_BOX_KERNEL(d1_p4, 1, 4)
TSNE_S2G_BOX_KERNEL(d2_p4, 2, 4)
TSNE_S2G_BOX_KERNEL(d3_p4, 3, 4)
