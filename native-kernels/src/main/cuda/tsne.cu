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
 * accumulate conj(shift) z (real part: charge 2s, imaginary part: charge 2s+1); the last parity scales by 1/(2^dim m^dim). Transforms: per axis, one Stockham
 * radix-R pass per factor R of m (direct R-point DFT in registers), ping-pong between two buffers.
 *
 * Launch shape: every kernel is a flat 1-D grid of 256-thread blocks, one thread per item (node, complex
 * element or butterfly); item counts stay below 2^31 (G2GGpu checks), addresses are 64-bit. tsne_g2g_direct: one thread per
 * output node, blockDim G2G_TILE, sources staged through shared memory in tiles of G2G_TILE nodes.
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

extern "C" __global__ void tsne_g2g_pack(const double *__restrict__ q, const double *__restrict__ kt,
                                         const double2 *__restrict__ shift, double2 *__restrict__ x, int dim, int n,
                                         int m, int fn, int gridNodes, int charges, int sigma) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= fn) return;
    int jx = i % m;
    int jy = dim >= 2 ? (i / m) % m : 0;
    int jz = dim >= 3 ? i / (m * m) : 0;
    double2 tw = g2g_twiddle(shift, sigma, jx, jy, jz);
    bool inside = jx < n && jy < n && jz < n;
    int g = inside ? jx + n * (jy + n * jz) : 0;
    int slots = (charges + 1) / 2;
    for (int sl = 0; sl < slots; sl++) {
        double re = inside ? q[(long long) (2 * sl) * gridNodes + g] : 0.0;
        double im = inside && 2 * sl + 1 < charges ? q[(long long) (2 * sl + 1) * gridNodes + g] : 0.0;
        x[(long long) sl * fn + i] = make_double2(__dsub_rn(__dmul_rn(re, tw.x), __dmul_rn(im, tw.y)),
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
    x[(long long) slots * fn + i] = make_double2(__dmul_rn(k, tw.x), __dmul_rn(k, tw.y));
}

/* One radix-R Stockham pass (G2GCpu.pass): item g = lo + inner * (j + (m/R) * outer). */
template <int R>
__device__ __forceinline__ void g2g_pass(const double2 *__restrict__ in, double2 *__restrict__ out,
                                         const double2 *__restrict__ roots, int m, int ns, int inner,
                                         long long items, int inverse) {
    /* items < 2^31 (G2GGpu checks): 32-bit index arithmetic, 64-bit addresses */
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= items) return;
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

#define G2G_PASS(R)                                                                                                \
    extern "C" __global__ void __launch_bounds__(256) tsne_g2g_pass_##R(                                          \
        const double2 *__restrict__ in, double2 *__restrict__ out, const double2 *__restrict__ roots, int m,       \
        int ns, int inner, long long items, int inverse) {                                                         \
        g2g_pass<R>(in, out, roots, m, ns, inner, items, inverse);                                                 \
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

extern "C" __global__ void tsne_g2g_multiply(double2 *__restrict__ y, int slots, int fn) {
    long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long) slots * fn) return;
    double2 kv = y[(long long) slots * fn + i % fn];
    double2 a = y[i];
    y[i] = make_double2(__dsub_rn(__dmul_rn(a.x, kv.x), __dmul_rn(a.y, kv.y)),
                        __dadd_rn(__dmul_rn(a.x, kv.y), __dmul_rn(a.y, kv.x)));
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
    for (int c = 0; c < charges; c++) {
        double2 v = z[(long long) (c >> 1) * fn + f];
        double term = (c & 1) == 0 ? __dadd_rn(__dmul_rn(tw.x, v.x), __dmul_rn(tw.y, v.y))
                                   : __dsub_rn(__dmul_rn(tw.x, v.y), __dmul_rn(tw.y, v.x));
        long long o = (long long) c * gridNodes + i;
        double s = sigma == 0 ? term : __dadd_rn(acc[o], term);
        acc[o] = s;
        if (last) phi[o] = __dmul_rn(s, scale);
    }
}

/* end of section: G2G */
