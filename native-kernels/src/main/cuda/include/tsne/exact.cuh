/*
 * t-SNE section: the exact O(n^2) repulsive term (kernels tsne_exact_d1..d3), chosen instead of the interpolation
 * grid for small n (TsneConfig.exactRepulsion) and used for the exact Z of the final KL. Included by tsne.cu only
 * (module "tsne"). CPU twin: io.sparkgpu.tsne.repulsion.ExactRepulsionCpu; host side ExactRepulsionGpu.
 *
 * Data layout
 *   y         double[n*dim] row-major (AoS), point j at y[j*dim .. j*dim+dim): all n points.
 *   force     double[rows*dim]: row r of the slice (point rowOffset + r) at force[r*dim ..], the unnormalised
 *             sum_j w_ij^2 (y_i - y_j), w_ij = 1 / (1 + |y_i - y_j|^2).
 *   zacc      u64[2]: the (lo, hi) fixed-point sum (multipliers m1, m2 of the shift GridRepulsion.zShift(n)) of
 *             z_i = sum_j w_ij over all j, i included (w_ii = 1), added to: Z = total - n, as for the grid.
 *
 * dof: the kernel's degrees of freedom (include/tsne/kernel.cuh); dof != 1 forms t = 1 + d2 / dof, w = t^-dof and
 * the force weight w2 = w / t in place of w and w w.
 *
 * Order of operations (the twin's): lane l (0..31) of the row's warp visits j = l, l + 32, l + 64, ... ascending,
 * forming per j: diff_a = y_i,a - y_j,a; d2 = diff_0^2 (+ diff_1^2 (+ diff_2^2)); w = 1 / (1 + d2); w2 = w w;
 * f_a += w2 diff_a; z += w (from 0). The 32 lane sums are then combined by the butterfly v = v + v[lane ^ off],
 * off = 16, 8, 4, 2, 1, read in lane 0 (IEEE addition is commutative, so lane l and l ^ off hold the same value:
 * the twin halves an array in place). Explicitly rounded intrinsics (nvcc --fmad=false besides).
 *
 * zrow      double[rows] or null: each row's z_i as well (the transform of new points, whose normalisation is per
 *           point). The rows may lie past n (rowOffset + rows > n, y holding them): they then sum over the n points
 *           only, e.g. new points against a fixed reference.
 *
 * Launch shape: one warp per row, blockDim.x = TSNE_BLOCK = 256 (8 rows per block), grid = ceil(rows / 8); lane 0
 * adds its row's z_i to zacc with one 128-bit atomic (integer addition: any order gives the same bits).
 */
#pragma once

#include "common.cuh"
#include "fixed128.cuh"
#include "layout/tsne.cuh"
#include "tsne/kernel.cuh"

template <int DIM>
__device__ __forceinline__ void tsne_exact_body(const double *__restrict__ y, int n, int rowOffset, int rows,
        double m1, double m2, double dof, double *__restrict__ force, u64 *__restrict__ zacc,
        double *__restrict__ zrow) {
    const int warp = (int) (((i64) blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int lane = threadIdx.x & 31;
    if (warp >= rows) return; /* the whole warp: rows are warp-uniform */
    const i64 i = (i64) rowOffset + warp;
    double yi[DIM], f[DIM];
#pragma unroll
    for (int a = 0; a < DIM; a++) {
        yi[a] = y[i * DIM + a];
        f[a] = 0.0;
    }
    double z = 0.0;
    for (int j = lane; j < n; j += 32) {
        double diff[DIM];
        double d2 = 0.0;
#pragma unroll
        for (int a = 0; a < DIM; a++) {
            diff[a] = __dsub_rn(yi[a], y[(i64) j * DIM + a]);
            const double sq = __dmul_rn(diff[a], diff[a]);
            d2 = a == 0 ? sq : __dadd_rn(d2, sq);
        }
        double w, w2;
        if (dof == 1.0) {
            w = __ddiv_rn(1.0, __dadd_rn(1.0, d2));
            w2 = __dmul_rn(w, w);
        } else { /* heavy tails (include/tsne/kernel.cuh): w = t^-dof, force weight w / t */
            const double t = tsne_kernel_base(d2, dof);
            w = tsne_kernel_pow(t, dof);
            w2 = __ddiv_rn(w, t);
        }
#pragma unroll
        for (int a = 0; a < DIM; a++) f[a] = __dadd_rn(f[a], __dmul_rn(w2, diff[a]));
        z = __dadd_rn(z, w);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
#pragma unroll
        for (int a = 0; a < DIM; a++) f[a] = __dadd_rn(f[a], __shfl_xor_sync(FULL_MASK, f[a], off));
        z = __dadd_rn(z, __shfl_xor_sync(FULL_MASK, z, off));
    }
    if (lane == 0) {
#pragma unroll
        for (int a = 0; a < DIM; a++) force[(i64) warp * DIM + a] = f[a];
        u64 lo;
        u64 hi;
        fx_quantize(z, m1, m2, lo, hi);
        fx_atomic_add(zacc, lo, hi);
        if (zrow != nullptr) zrow[warp] = z;
    }
}

#define TSNE_EXACT_KERNEL(DIM)                                                                                         \
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_exact_d##DIM(const double *y, int n, int rowOffset, \
            int rows, double m1, double m2, double dof, double *force, u64 *zacc, double *zrow) {                     \
        tsne_exact_body<DIM>(y, n, rowOffset, rows, m1, m2, dof, force, zacc, zrow);                                   \
    }
TSNE_EXACT_KERNEL(1)
TSNE_EXACT_KERNEL(2)
TSNE_EXACT_KERNEL(3)
