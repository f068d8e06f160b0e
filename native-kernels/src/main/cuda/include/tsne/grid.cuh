/*
 * t-SNE section: the grid-interpolation repulsive term on the points' side: S2G (points to grid charges) and G2S +
 * Phi2Force (grid potentials to forces and the z sum), kernels tsne_s2g_* and tsne_g2s_*. Included by tsne.cu only.
 * CPU twin: io.sparkgpu.tsne.repulsion.GridRepulsionCpu (Stencil, s2g, g2s); host side GridRepulsionGpu.
 *
 * Data layout
 *   y         double[rows*dim] row-major (AoS), point i at y[i*dim .. i*dim+dim): the slice's rows.
 *   grid      nodes per axis npd = intervals*p; node = ix + npd*(iy + npd*iz); charges (1, u_1..u_dim, |u|^2)
 *             with u = y - centre; S2G output acc = u64[2*charges*nodes], the (lo, hi) pair of charge c at
 *             node m at 2*(c*nodes + m); G2S input phi = double[charges*nodes] at c*nodes + m.
 *   prm       double[] (TSNE_PRM_*, include/layout/tsne.cuh): lo[0..2], centre[3..5], h [6], zMax [7], then the
 *             (s1, s2) multiplier pairs [8 + 2c, 9 + 2c] of each charge (S2G) or of z (G2S, at 8, 9).
 *   zacc      u64[2]: the (lo, hi) fixed-point sum of z (G2S, added to).
 *
 * Determinism: every double operation is an explicitly rounded intrinsic in the order of the Java twin
 * (nvcc --fmad=false besides), the weights of a point's p^dim nodes are formed in the same order (x fastest),
 * and every sum that crosses threads is an integer sum modulo 2^128 of values truncated to fixed point
 * (include/fixed128.cuh, io.sparkgpu.common.FixedPoint), which is associative: atomics in any order and the block
 * sum's tree (fx_block_sum) give the twin's bits.
 *
 * Launch shape: one thread per point, blockDim.x = TSNE_BLOCK = 256 (__launch_bounds__; G2S's block sum of z needs
 * a multiple of 32), grid = ceil(rows / 256).
 */
#pragma once

#include "common.cuh"
#include "fixed128.cuh"
#include "layout/tsne.cuh"

/* --------------------------------------------------------------------------------- stencil (S2G, G2S) */

/* PC > 0: p known at compile time (loops unrolled, weights in registers); PC = 0: p = pRun (1..TSNE_MAX_P). */
template <int PC>
__device__ __forceinline__ void tsne_s2g_denoms(int pRun, double *denom) {
    const int p = PC > 0 ? PC : pRun;
#pragma unroll
    for (int k = 0; k < (PC > 0 ? PC : TSNE_MAX_P); k++) {
        if (k >= p) break;
        double v = 1.0;
#pragma unroll
        for (int m = 0; m < (PC > 0 ? PC : TSNE_MAX_P); m++) {
            if (m >= p) break;
            if (m != k) v = __dmul_rn(v, (double) (k - m));
        }
        denom[k] = v;
    }
}

/* Lagrange weights of the p nodes of a point's box on one axis and the box's first node (GridRepulsionCpu.Stencil). */
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
    for (int k = 0; k < (PC > 0 ? PC : TSNE_MAX_P); k++) {
        if (k >= p) break;
        double num = 1.0;
#pragma unroll
        for (int m = 0; m < (PC > 0 ? PC : TSNE_MAX_P); m++) {
            if (m >= p) break;
            if (m != k) num = __dmul_rn(num, __dsub_rn(t, (double) m + 0.5));
        }
        w[k] = __ddiv_rn(num, denom[k]);
    }
    return b;
}

/* Visits the p^DIM nodes of the stencil in the twin's order (x fastest) with their weights:
 * w0 (1-D), w0*w1 (2-D), (w0*w1)*w2 (3-D), each product rounded once. */
#define TSNE_S2G_FOR_EACH_NODE(DIM, PC, p, npd, b, w, BODY)                                                            \
    _Pragma("unroll") for (int k2 = 0; k2 < (DIM > 2 ? (PC > 0 ? PC : TSNE_MAX_P) : 1); k2++) {                        \
        if (DIM > 2 && k2 >= p) break;                                                                                 \
        _Pragma("unroll") for (int k1 = 0; k1 < (DIM > 1 ? (PC > 0 ? PC : TSNE_MAX_P) : 1); k1++) {                    \
            if (DIM > 1 && k1 >= p) break;                                                                             \
            _Pragma("unroll") for (int k0 = 0; k0 < (PC > 0 ? PC : TSNE_MAX_P); k0++) {                                \
                if (k0 >= p) break;                                                                                    \
                const double wt = DIM == 1 ? w[0][k0]                                                                  \
                        : (DIM == 2 ? __dmul_rn(w[0][k0], w[1][k1])                                                    \
                                    : __dmul_rn(__dmul_rn(w[0][k0], w[1][k1]), w[2][k2]));                             \
                const int node = b[0] + k0 + npd * ((b[1] + k1) + npd * (b[2] + k2));                                  \
                BODY                                                                                                   \
            }                                                                                                          \
        }                                                                                                              \
    }

/* A point's coordinates yv, its stencil's first node per axis b and the weights w (GridRepulsionCpu.Stencil.locate). */
template <int DIM, int PC>
__device__ __forceinline__ void tsne_s2g_locate(const double *__restrict__ y, int i, int p, int npd,
        const double *__restrict__ prm, double *yv, double w[][TSNE_MAX_P], int *b) {
    double denom[TSNE_MAX_P];
    tsne_s2g_denoms<PC>(p, denom);
#pragma unroll
    for (int a = 0; a < DIM; a++) {
        yv[a] = y[(long long) i * DIM + a];
        b[a] = tsne_s2g_axis<PC>(yv[a], prm[TSNE_PRM_LO + a], prm[TSNE_PRM_H], npd, p, denom, w[a]);
    }
}

/* ------------------------------------------------------------------------------------------------ S2G */

/* A point's charges beyond the first (whose value is 1): q[1 + a] = u_a = y_a - centre_a and q[DIM + 1] = |u|^2, in
 * GridRepulsionCpu's order of operations; shared by the per-point and the per-box S2G. */
template <int DIM>
__device__ __forceinline__ void tsne_s2g_charges(const double *yv, const double *__restrict__ prm, double *q) {
    double sq = 0.0;
#pragma unroll
    for (int a = 0; a < DIM; a++) {
        const double u = __dsub_rn(yv[a], prm[TSNE_PRM_CENTRE + a]);
        q[1 + a] = u;
        sq = __dadd_rn(sq, __dmul_rn(u, u));
    }
    q[DIM + 1] = sq;
}

template <int DIM, int PC>
__device__ __forceinline__ void tsne_s2g_body(const double *__restrict__ y, int rows, int pRun, int npd, int nodes,
        const double *__restrict__ prm, u64 *__restrict__ acc) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows) return;
    const int p = PC > 0 ? PC : pRun;
    double w[3][TSNE_MAX_P], q[DIM + 2], yv[DIM];
    int b[3] = {0, 0, 0};
    tsne_s2g_locate<DIM, PC>(y, i, p, npd, prm, yv, w, b);
    tsne_s2g_charges<DIM>(yv, prm, q);
    TSNE_S2G_FOR_EACH_NODE(DIM, PC, p, npd, b, w, {
        u64 lo;                                                    /* no commas: a macro argument */
        u64 hi;
        fx_quantize(wt, prm[TSNE_PRM_MULT], prm[TSNE_PRM_MULT + 1], lo, hi);
        fx_atomic_add(acc + 2 * (long long) node, lo, hi);
        _Pragma("unroll") for (int c = 1; c < DIM + 2; c++) {
            fx_quantize(__dmul_rn(wt, q[c]), prm[TSNE_PRM_MULT + 2 * c], prm[TSNE_PRM_MULT + 1 + 2 * c], lo, hi);
            fx_atomic_add(acc + 2 * ((long long) c * nodes + node), lo, hi);
        }
    })
}

/* ---------------------------------------------------------------------------------- G2S and Phi2Force */

template <int DIM, int PC>
__device__ __forceinline__ void tsne_g2s_body(const double *__restrict__ y, int rows, int pRun, int npd, int nodes,
        const double *__restrict__ prm, const double *__restrict__ phi, double *__restrict__ force,
        u64 *__restrict__ zacc, double dof, double *__restrict__ zrow) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    Fx128 z = {0ull, 0ull};
    if (i < rows) {
        const int p = PC > 0 ? PC : pRun;
        double w[3][TSNE_MAX_P], s[DIM + 2], yv[DIM];
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
            const double u = __dsub_rn(yv[a], prm[TSNE_PRM_CENTRE + a]);
            sq = __dadd_rn(sq, __dmul_rn(u, u));
            dot = __dadd_rn(dot, __dmul_rn(u, s[1 + a]));
            force[(long long) i * DIM + a] = __dsub_rn(__dmul_rn(u, s[0]), s[1 + a]);
        }
        /* z_i = sum_j K(d2) (1 + d2 / dof) with d2 = sq - 2 u.y_j + |y_j|^2 (K the force kernel of G2G) */
        double zi = dof == 1.0
                ? __dadd_rn(__dsub_rn(__dmul_rn(__dadd_rn(1.0, sq), s[0]), __dmul_rn(2.0, dot)), s[DIM + 1])
                : __dadd_rn(s[0], __ddiv_rn(__dadd_rn(__dsub_rn(__dmul_rn(sq, s[0]), __dmul_rn(2.0, dot)), s[DIM + 1]),
                        dof));
        const double zMax = prm[TSNE_PRM_ZMAX];
        zi = zi > zMax ? zMax : (zi < 0.0 ? 0.0 : zi);
        if (zrow != nullptr) zrow[i] = zi; /* per point (the transform of new points) */
        fx_quantize(zi, prm[TSNE_PRM_MULT], prm[TSNE_PRM_MULT + 1], z.lo, z.hi);
    }
    /* exact block sum of the 128-bit z_i (integer adds: any order gives the same bits), one atomic per block */
    const Fx128 t = fx_block_sum(z);
    if (threadIdx.x == 0) fx_atomic_add(zacc, t.lo, t.hi);
}

/* S2G and G2S kernels per dimension, generic in p (SUFFIX d1..d3) or unrolled for p = 3, 4 (d2_p3 etc.) */
#define TSNE_GRID_KERNELS(SUFFIX, DIM, PC)                                                                             \
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_s2g_##SUFFIX(const double *y, int rows,              \
            int p, int npd, int nodes, const double *prm, u64 *acc) {                                                  \
        tsne_s2g_body<DIM, PC>(y, rows, p, npd, nodes, prm, acc);                                                      \
    }                                                                                                                  \
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_g2s_##SUFFIX(const double *y, int rows,              \
            int p, int npd, int nodes, const double *prm, const double *phi, double *force, u64 *zacc, double dof,     \
            double *zrow) {                                                                                            \
        tsne_g2s_body<DIM, PC>(y, rows, p, npd, nodes, prm, phi, force, zacc, dof, zrow);                              \
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
