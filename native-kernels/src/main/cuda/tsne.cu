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
 *             meta = int[nSlices+1 | slots | slots] = sliceOff, slotRow, slotLen; col int32 global; val double.
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
 * needs a multiple of 32 for its block reduction of z), grid = ceil(items / 256).
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

template <int DIM>
__device__ __forceinline__ void tsne_attr_body(const int *__restrict__ meta, int nSlices,
        const double *__restrict__ val, const int *__restrict__ col, int rowOffset,
        const double *__restrict__ y, double *__restrict__ out) {
    const int slots = nSlices * 32;
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
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
    for (int e = 0; e < len; e++) {
        const int at = base + 32 * e;
        const int j = col[at];
        const double v = val[at];
        double diff[DIM];
        double d2 = 0.0;
#pragma unroll
        for (int a = 0; a < DIM; a++) {
            diff[a] = __dsub_rn(yi[a], y[(long long) j * DIM + a]);
            d2 = __dadd_rn(d2, __dmul_rn(diff[a], diff[a]));
        }
        const double pw = __ddiv_rn(v, __dadd_rn(1.0, d2));
#pragma unroll
        for (int a = 0; a < DIM; a++) f[a] = __dadd_rn(f[a], __dmul_rn(pw, diff[a]));
    }
#pragma unroll
    for (int a = 0; a < DIM; a++) out[(long long) r * DIM + a] = f[a];
}

#define TSNE_ATTR_KERNEL(DIM)                                                                                   \
    extern "C" __global__ void __launch_bounds__(256) tsne_attr_sell_d##DIM(const int *meta, int nSlices,     \
            const double *val, const int *col, int rowOffset, const double *y, double *out) {                 \
        tsne_attr_body<DIM>(meta, nSlices, val, col, rowOffset, y, out);                                      \
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

/* end of section: G2G */
