/*
 * t-SNE section G2G (kernels tsne_g2g_*). Included by tsne.cu only (module "tsne"). Host side: G2GGpu, G2GPlan.
 *
 * G2G: potentials phi_c(a) = sum_b K(a - b) q_c(b) on the interpolation lattice, K(delta) = (1 + h^2|delta|^2)^-2.
 * CPU twin: io.sparkgpu.tsne.repulsion.G2GCpu (same operations, same order, one rounding each: equal bits).
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
 * thread per output node, blockDim TSNE_G2G_TILE, sources staged through shared memory in tiles of TSNE_G2G_TILE
 * nodes. tsne_g2g_axis*: one block of 256 threads per L lines (G2GGpu.fusedLines), 2*L*m double2 of dynamic shared
 * memory (TSNE_G2G_FUSED_BYTES), threads loop over the lines' elements and butterflies. Sizes the host mirrors are
 * in include/layout/tsne.cuh (TSNE_G2G_*, TSNE_BLOCK, TSNE_MAX_CHARGES).
 */
#pragma once

#include "common.cuh"
#include "layout/tsne.cuh"
#include "tsne/kernel.cuh"

static_assert(TSNE_G2G_FUSED_MAX_RADIX == 5, "g2g_axis_body's switch runs radices 2..5");

/* The repulsive force kernel (1 + h2 d2 / dof)^-(dof + 1) at lattice offset d2 (G2GPlan.kernelValue; dof == 1: the
 * Cauchy kernel squared, 1 / (t t)). */
__device__ __forceinline__ double g2g_kval(double h2, long long d2, double dof) {
    if (dof == 1.0) {
        double t = __dadd_rn(1.0, __dmul_rn(h2, __ll2double_rn(d2)));
        return __ddiv_rn(1.0, __dmul_rn(t, t));
    }
    const double t = tsne_kernel_base(__dmul_rn(h2, __ll2double_rn(d2)), dof);
    return tsne_kernel_pow(t, __dadd_rn(dof, 1.0));
}

extern "C" __global__ void tsne_g2g_kernel_table(double *__restrict__ kt, int dim, int n, double h2, int nodes,
                                                 double dof) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nodes) return;
    long long x = i % n;
    long long y = dim >= 2 ? (i / n) % n : 0;
    long long z = dim >= 3 ? i / (n * n) : 0;
    kt[i] = g2g_kval(h2, x * x + y * y + z * z, dof);
}

extern "C" __global__ void tsne_g2g_direct(const double *__restrict__ q, const double *__restrict__ kt,
                                           double *__restrict__ phi, int dim, int n, int nodes, int charges) {
    __shared__ double sq[TSNE_MAX_CHARGES * TSNE_G2G_TILE];
    __shared__ int sx[TSNE_G2G_TILE], sy[TSNE_G2G_TILE], sz[TSNE_G2G_TILE];
    int a = blockIdx.x * blockDim.x + threadIdx.x;
    int ax = a % n;
    int ay = dim >= 2 ? (a / n) % n : 0;
    int az = dim >= 3 ? a / (n * n) : 0;
    double acc[TSNE_MAX_CHARGES];
#pragma unroll
    for (int c = 0; c < TSNE_MAX_CHARGES; c++) acc[c] = 0.0;
    for (int t0 = 0; t0 < nodes; t0 += TSNE_G2G_TILE) {
        int b = t0 + threadIdx.x;
        if (b < nodes) {
            sx[threadIdx.x] = b % n;
            sy[threadIdx.x] = dim >= 2 ? (b / n) % n : 0;
            sz[threadIdx.x] = dim >= 3 ? b / (n * n) : 0;
            for (int c = 0; c < charges; c++) sq[c * TSNE_G2G_TILE + threadIdx.x] = q[(long long) c * nodes + b];
        }
        __syncthreads();
        int cnt = min(TSNE_G2G_TILE, nodes - t0);
        if (a < nodes) {
            for (int u = 0; u < cnt; u++) {
                double k = __ldg(&kt[abs(ax - sx[u]) + n * (abs(ay - sy[u]) + n * abs(az - sz[u]))]);
#pragma unroll
                for (int c = 0; c < TSNE_MAX_CHARGES; c++)
                    if (c < charges) acc[c] = __dadd_rn(acc[c], __dmul_rn(k, sq[c * TSNE_G2G_TILE + u]));
            }
        }
        __syncthreads();
    }
    if (a < nodes) {
#pragma unroll
        for (int c = 0; c < TSNE_MAX_CHARGES; c++)
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
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_g2g_pass_##R(                                   \
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
        const int R = (int) ((radixCode >> (TSNE_G2G_RADIX_BITS * p)) & ((1 << TSNE_G2G_RADIX_BITS) - 1));
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
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) NAME(double2 *__restrict__ data,                      \
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
