/*
 * t-SNE section G2G (kernels tsne_g2g_*). Included by tsne.cu only (module "tsne"). Host side: G2GGpu, G2GPlan.
 *
 * G2G: potentials phi_c(a) = sum_b K(a - b) q_c(b) on the interpolation lattice, K(delta) = (1 + h^2|delta|^2)^-2.
 * CPU twin: io.sparkgpu.tsne.repulsion.G2GCpu (same operations, same order, one rounding each: equal bits).
 *
 * Data layout (all SoA over charges, 32-bit node indices):
 *   q, phi   double[charges][n^dim], node = x + n*(y + n*z) (x fastest); charges = dim + 2.
 *   kt       double[n^dim]: K at the non-negative offset vector delta, laid out like a node.
 *   x, y     complex floats (float2, re/im interleaved) [arrays][m^dim], m = FFT length per axis (5-smooth, >= n);
 *            array s < slots = ceil(charges/2) holds q_{2s} + i q_{2s+1} (two real charges per transform: each
 *            parity's contribution of a real charge is real, so real and imaginary parts separate at the end),
 *            each charge times 2^e_c (G2GPlan.chargeExponents: every charge's largest magnitude in [1, 2), so the
 *            two charges of an array have similar scales), array `slots` the kernel of the current parity.
 *   top      int[charges]: the largest biased exponent field of each charge's values (tsne_g2g_exponents,
 *            zeroed before it); e_c = top == 0 ? 0 : 1023 - top.
 *   roots    float2[m]: e^{-2 pi i t/m} rounded to float; shift double2[m]: e^{-i pi j/m} (both computed in Java).
 * Precision: pack and accumulate compute in double and round once to float (pack) or read the floats exactly
 * (accumulate); the transforms and the multiply run in float (__fadd_rn etc., G2GCpu's float arithmetic), which
 * halves the bytes every pass moves and the shared memory a line needs.
 *   acc      double[charges][n^dim]: running sum over parities (fused 1-D/2-D path: [parities][charges][n^dim],
 *            each parity's terms, summed by tsne_g2g_sum).
 * FFT without zero-padding: per parity sigma (bit a = axis a odd), pack (shifted charges and folded shifted
 * kernel), forward transform of slots+1 arrays (axes 0..dim-1), multiply, inverse transform of `slots` arrays (axes
 * dim-1..0), accumulate conj(shift) z (real part: charge 2s, imaginary part: charge 2s+1); the last parity scales
 * by 1/(2^dim m^dim). Transforms: per axis, one Stockham radix-R pass per factor R of m (twiddles, then the R-point
 * DFT in registers: g2g_small_dft for R <= 5, a direct DFT above). When the plan's radices are all <= 5
 * (m <= 4096, G2GPlan) and the lines fit in shared memory, every pass of an axis runs in one tsne_g2g_axis* kernel
 * on lines held in shared memory, with pack fused into the first forward axis and accumulate into the last inverse
 * axis, and the last forward axis, the multiply and the first inverse axis (the same axis) run in one
 * tsne_g2g_middle* kernel: 2*dim - 1 launches per parity, and in 1-D and 2-D the parities share each launch (each on
 * its own arrays; tsne_g2g_sum then adds their terms in parity order, the sequential sum's bits). Otherwise pack,
 * one global tsne_g2g_pass_R per radix and axis (ping-pong between two buffers), multiply and accumulate are
 * separate kernels. tsne_g2g_exponents runs first either way.
 *
 * Launch shape: every kernel but the fused ones is a flat 1-D grid of 256-thread blocks, one thread per item (node,
 * complex element or butterfly); item counts stay below 2^31 (G2GGpu checks), addresses are 64-bit.
 * tsne_g2g_direct: one thread per output node, blockDim TSNE_G2G_TILE, sources staged through shared memory in
 * tiles of TSNE_G2G_TILE nodes. tsne_g2g_axis*: one block per L lines (G2GGpu.fusedLines) of G2GGpu.fusedThreads
 * threads (about one per 8 elements on the first axis, per 5 on the others, at most TSNE_G2G_FUSED_MAX_THREADS:
 * 50-64 registers a thread, so a block's threads decide how many blocks share an SM), TSNE_G2G_FUSED_BYTES of
 * dynamic shared memory; threads loop over the lines' elements and butterflies. tsne_g2g_middle*: the same for L
 * positions of the last axis (G2GGpu.middleLines), TSNE_G2G_MIDDLE_BYTES. Sizes the host mirrors are in
 * include/layout/tsne.cuh (TSNE_G2G_*, TSNE_BLOCK, TSNE_MAX_CHARGES).
 */
#pragma once

#include "common.cuh"
#include "layout/tsne.cuh"
#include "tsne/kernel.cuh"

static_assert(TSNE_G2G_FUSED_MAX_RADIX == 5, "g2g_passes's switch runs radices 2..5");

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

/* The power of two e_c of charge c (G2GPlan.chargeExponents): -Math.getExponent of its largest magnitude. */
__device__ __forceinline__ int g2g_charge_exp(const int *__restrict__ top, int c) {
    const int b = top[c];
    return b == 0 ? 0 : 1023 - b;
}

/* top[c] = max over the charge's values of their biased exponent field (Math.getExponent + 1023; 0 for zeros and
 * subnormals). Charge c = blockIdx.x / blocksPerCharge; any order gives the same maximum. top must be zeroed first. */
extern "C" __global__ void tsne_g2g_exponents(const double *__restrict__ q, int *__restrict__ top, int gridNodes,
                                              int blocksPerCharge) {
    const int c = blockIdx.x / blocksPerCharge;
    const int blk = blockIdx.x - c * blocksPerCharge;
    int b = 0;
    for (int i = blk * blockDim.x + threadIdx.x; i < gridNodes; i += blocksPerCharge * blockDim.x)
        b = max(b, (int) ((__double_as_longlong(q[(long long) c * gridNodes + i]) >> 52) & 0x7ff));
    b = __reduce_max_sync(0xffffffffu, b);
    if ((threadIdx.x & 31) == 0 && b > 0) atomicMax(&top[c], b);
}

/* Element i of packed array sl (tsne_g2g_pack): sl < slots: (q_{2sl} 2^e_{2sl} + i q_{2sl+1} 2^e_{2sl+1}) * twiddle,
 * zero outside the lattice; sl = slots: the parity-folded kernel times the twiddle. In double, rounded to float. */
__device__ __forceinline__ float2 g2g_pack_value_at(const double *__restrict__ q, const double *__restrict__ kt,
                                                    const double2 *__restrict__ shift, int dim, int n, int m,
                                                    int gridNodes, int charges, const int *__restrict__ top,
                                                    int sigma, int sl, int jx, int jy, int jz) {
    double2 tw = g2g_twiddle(shift, sigma, jx, jy, jz);
    const int slots = (charges + 1) / 2;
    if (sl < slots) {
        bool inside = jx < n && jy < n && jz < n;
        int g = inside ? jx + n * (jy + n * jz) : 0;
        double re = inside ? scalbn(q[(long long) (2 * sl) * gridNodes + g], g2g_charge_exp(top, 2 * sl)) : 0.0;
        double im = inside && 2 * sl + 1 < charges
                            ? scalbn(q[(long long) (2 * sl + 1) * gridNodes + g], g2g_charge_exp(top, 2 * sl + 1))
                            : 0.0;
        return make_float2(__double2float_rn(__dsub_rn(__dmul_rn(re, tw.x), __dmul_rn(im, tw.y))),
                           __double2float_rn(__dadd_rn(__dmul_rn(re, tw.y), __dmul_rn(im, tw.x))));
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
    return make_float2(__double2float_rn(__dmul_rn(k, tw.x)), __double2float_rn(__dmul_rn(k, tw.y)));
}

__device__ __forceinline__ float2 g2g_pack_value(const double *__restrict__ q, const double *__restrict__ kt,
                                                 const double2 *__restrict__ shift, int dim, int n, int m,
                                                 int gridNodes, int charges, const int *__restrict__ top, int sigma,
                                                 int sl, int i) {
    return g2g_pack_value_at(q, kt, shift, dim, n, m, gridNodes, charges, top, sigma, sl, i % m,
                             dim >= 2 ? (i / m) % m : 0, dim >= 3 ? i / (m * m) : 0);
}

extern "C" __global__ void tsne_g2g_pack(const double *__restrict__ q, const double *__restrict__ kt,
                                         const double2 *__restrict__ shift, float2 *__restrict__ x, int dim, int n,
                                         int m, int fn, int gridNodes, int charges, const int *__restrict__ top,
                                         int sigma) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= fn) return;
    int slots = (charges + 1) / 2;
    for (int sl = 0; sl <= slots; sl++)
        x[(long long) sl * fn + i] =
            g2g_pack_value(q, kt, shift, dim, n, m, gridNodes, charges, top, sigma, sl, i);
}

/* The butterfly's arithmetic, shared by the global passes (g2g_butterfly) and the fused axis passes
 * (g2g_fused_pass) so both give G2GCpu.butterfly's bits: inputs t >= 1 times their twiddle roots[k t tstep]
 * (conjugated when inverse), then the R-point DFT. */
template <int R>
__device__ __forceinline__ void g2g_twiddle_inputs(float2 (&v)[R], const float2 *__restrict__ roots, int k,
                                                   int tstep, float sign) {
#pragma unroll
    for (int t = 1; t < R; t++) {
        float2 w = __ldg(&roots[k * t * tstep]);
        float wi = __fmul_rn(sign, w.y);
        float ar = v[t].x, ai = v[t].y;
        v[t].x = __fsub_rn(__fmul_rn(ar, w.x), __fmul_rn(ai, wi));
        v[t].y = __fadd_rn(__fmul_rn(ar, wi), __fmul_rn(ai, w.x));
    }
}

/* Constants of the radix-3 and radix-5 DFTs, the floats of G2GCpu.S3, C51, C52, S51, S52 (hex: the same bits):
 * sin(2 pi/3), cos(2 pi/5), cos(4 pi/5), sin(2 pi/5), sin(4 pi/5), each rounded to float. */
#define G2G_S3 0x1.bb67aep-1f
#define G2G_C51 0x1.3c6ef4p-2f
#define G2G_C52 (-0x1.9e377ap-1f)
#define G2G_S51 0x1.e6f0e2p-1f
#define G2G_S52 0x1.2cf23p-1f

__device__ __forceinline__ float2 g2g_add(float2 a, float2 b) {
    return make_float2(__fadd_rn(a.x, b.x), __fadd_rn(a.y, b.y));
}
__device__ __forceinline__ float2 g2g_sub(float2 a, float2 b) {
    return make_float2(__fsub_rn(a.x, b.x), __fsub_rn(a.y, b.y));
}
/* a - i b for the forward transform, a + i b for the inverse: a rotation needs no multiplication */
__device__ __forceinline__ float2 g2g_add_rot(float2 a, float2 b, int inverse) {
    return inverse ? make_float2(__fsub_rn(a.x, b.y), __fadd_rn(a.y, b.x))
                   : make_float2(__fadd_rn(a.x, b.y), __fsub_rn(a.y, b.x));
}
__device__ __forceinline__ float2 g2g_scale(float c, float2 a) {
    return make_float2(__fmul_rn(c, a.x), __fmul_rn(c, a.y));
}

/* y_u = sum_t v_t W^(t u), W = e^(-2 pi i / R) (forward) or its conjugate (inverse), R = 2..5, in the fixed order
 * of G2GCpu.smallDft: radix 2 and 4 by additions and rotations by -i, radix 3 and 5 by the sums and differences of
 * opposite inputs times the real constants above. */
template <int R>
__device__ __forceinline__ void g2g_small_dft(const float2 (&v)[R], float2 (&y)[R], int inverse) {
    if (R == 2) {
        y[0] = g2g_add(v[0], v[1]);
        y[1] = g2g_sub(v[0], v[1]);
    } else if (R == 3) {
        const float2 t1 = g2g_add(v[1], v[2]);
        const float2 t2 = g2g_scale(G2G_S3, g2g_sub(v[1], v[2]));
        const float2 m1 = g2g_sub(v[0], g2g_scale(0.5f, t1));
        y[0] = g2g_add(v[0], t1);
        y[1] = g2g_add_rot(m1, t2, inverse);
        y[2] = g2g_add_rot(m1, t2, !inverse);
    } else if (R == 4) {
        const float2 a = g2g_add(v[0], v[2]);
        const float2 b = g2g_sub(v[0], v[2]);
        const float2 c = g2g_add(v[1], v[3]);
        const float2 d = g2g_sub(v[1], v[3]);
        y[0] = g2g_add(a, c);
        y[1] = g2g_add_rot(b, d, inverse);
        y[2] = g2g_sub(a, c);
        y[3] = g2g_add_rot(b, d, !inverse);
    } else if (R == 5) {
        const float2 t1 = g2g_add(v[1], v[4]);
        const float2 t2 = g2g_add(v[2], v[3]);
        const float2 t3 = g2g_sub(v[1], v[4]);
        const float2 t4 = g2g_sub(v[2], v[3]);
        const float2 a1 = g2g_add(g2g_add(v[0], g2g_scale(G2G_C51, t1)), g2g_scale(G2G_C52, t2));
        const float2 a2 = g2g_add(g2g_add(v[0], g2g_scale(G2G_C52, t1)), g2g_scale(G2G_C51, t2));
        const float2 b1 = g2g_add(g2g_scale(G2G_S51, t3), g2g_scale(G2G_S52, t4));
        const float2 b2 = g2g_sub(g2g_scale(G2G_S52, t3), g2g_scale(G2G_S51, t4));
        y[0] = g2g_add(g2g_add(v[0], t1), t2);
        y[1] = g2g_add_rot(a1, b1, inverse);
        y[2] = g2g_add_rot(a2, b2, inverse);
        y[3] = g2g_add_rot(a2, b2, !inverse);
        y[4] = g2g_add_rot(a1, b1, !inverse);
    }
}

/* Butterfly g of one radix-R Stockham pass (G2GCpu.butterfly): g = lo + inner * (j + (m/R) * outer). in/out are
 * global arrays (tsne_g2g_pass_R) or shared-memory lines (tsne_g2g_axis, inner = 1): the same operations. */
template <int R>
__device__ __forceinline__ void g2g_butterfly(const float2 *__restrict__ in, float2 *__restrict__ out,
                                              const float2 *__restrict__ roots, int m, int ns, int inner, int g,
                                              int inverse) {
    const int mr = m / R;
    int lo = g % inner;
    int rest = g / inner;
    int j = rest % mr;
    int outer = rest / mr;
    long long base = lo + (long long) outer * inner * m;
    int k = j % ns;
    int tstep = m / (ns * R);
    float sign = inverse ? -1.0f : 1.0f;
    float2 v[R];
#pragma unroll
    for (int t = 0; t < R; t++) v[t] = in[base + (long long) (j + t * mr) * inner];
    g2g_twiddle_inputs<R>(v, roots, k, tstep, sign);
    int idxD = (j / ns) * ns * R + k;
    if (R <= 5) {
        float2 y[R];
        g2g_small_dft<R>(v, y, inverse);
#pragma unroll
        for (int u = 0; u < R; u++) out[base + (long long) (idxD + u * ns) * inner] = y[u];
    } else {
        /* larger radix: one output at a time, roots from L1 (warp-uniform addresses), few registers */
#pragma unroll 1
        for (int u = 0; u < R; u++) {
            float sr = v[0].x, si = v[0].y;
            int e = 0;
#pragma unroll
            for (int t = 1; t < R; t++) {
                e += u;
                if (e >= R) e -= R; /* e = (t * u) % R */
                float2 w = __ldg(&roots[e * mr]);
                float wi = __fmul_rn(sign, w.y);
                float ar = v[t].x, ai = v[t].y;
                sr = __fadd_rn(sr, __fsub_rn(__fmul_rn(ar, w.x), __fmul_rn(ai, wi)));
                si = __fadd_rn(si, __fadd_rn(__fmul_rn(ar, wi), __fmul_rn(ai, w.x)));
            }
            out[base + (long long) (idxD + u * ns) * inner] = make_float2(sr, si);
        }
    }
}

/* One radix-R Stockham pass over global memory: one thread per butterfly. items < 2^31 (G2GGpu checks): 32-bit
 * index arithmetic, 64-bit addresses. */
#define G2G_PASS(R)                                                                                                \
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_g2g_pass_##R(                                   \
        const float2 *__restrict__ in, float2 *__restrict__ out, const float2 *__restrict__ roots, int m,          \
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

__device__ __forceinline__ float2 g2g_cmul(float2 a, float2 kv) {
    return make_float2(__fsub_rn(__fmul_rn(a.x, kv.x), __fmul_rn(a.y, kv.y)),
                       __fadd_rn(__fmul_rn(a.x, kv.y), __fmul_rn(a.y, kv.x)));
}

extern "C" __global__ void tsne_g2g_multiply(float2 *__restrict__ y, int slots, int fn) {
    long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long) slots * fn) return;
    y[i] = g2g_cmul(y[i], y[(long long) slots * fn + i % fn]);
}

/* Charge c's share of the inverse-transformed value v at grid node o - c*gridNodes: conj(twiddle) v in double, its
 * real part for even c and imaginary part for odd c, divided by the charge's power of two, added to acc (parity 0
 * starts it); the last parity scales into phi. */
__device__ __forceinline__ double g2g_term(float2 v, double2 tw, int c, const int *__restrict__ top) {
    const double vr = (double) v.x, vi = (double) v.y;
    return scalbn((c & 1) == 0 ? __dadd_rn(__dmul_rn(tw.x, vr), __dmul_rn(tw.y, vi))
                               : __dsub_rn(__dmul_rn(tw.x, vi), __dmul_rn(tw.y, vr)),
                  -g2g_charge_exp(top, c));
}

__device__ __forceinline__ void g2g_accumulate_one(float2 v, double2 tw, int c, const int *__restrict__ top,
                                                   long long o, double *__restrict__ acc, double *__restrict__ phi,
                                                   int sigma, int last, double scale) {
    double term = g2g_term(v, tw, c, top);
    double s = sigma == 0 ? term : __dadd_rn(acc[o], term);
    acc[o] = s;
    if (last) phi[o] = __dmul_rn(s, scale);
}

/* The parities run side by side (G2GGpu, fused path, dim <= 2): parity sigma's terms are stored at
 * acc[sigma * total + o] and summed here in parity order, ((t_0 + t_1) + t_2) + t_3, as g2g_accumulate_one adds
 * them one parity after the other: the same bits. total = charges * gridNodes. */
extern "C" __global__ void tsne_g2g_sum(const double *__restrict__ acc, double *__restrict__ phi, long long total,
                                        int parities, double scale) {
    const long long o = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= total) return;
    double s = acc[o];
    for (int p = 1; p < parities; p++) s = __dadd_rn(s, acc[p * total + o]);
    phi[o] = __dmul_rn(s, scale);
}

extern "C" __global__ void tsne_g2g_accumulate(const float2 *__restrict__ z, const double2 *__restrict__ shift,
                                               double *__restrict__ acc, double *__restrict__ phi, int dim, int n,
                                               int m, int fn, int gridNodes, int charges,
                                               const int *__restrict__ top, int sigma, int last, double scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= gridNodes) return;
    int jx = i % n;
    int jy = dim >= 2 ? (i / n) % n : 0;
    int jz = dim >= 3 ? i / (n * n) : 0;
    int f = jx + m * (jy + m * jz);
    double2 tw = g2g_twiddle(shift, sigma, jx, jy, jz);
    for (int c = 0; c < charges; c++)
        g2g_accumulate_one(z[(long long) (c >> 1) * fn + f], tw, c, top, (long long) c * gridNodes + i, acc, phi,
                           sigma, last, scale);
}

/*
 * All passes of one axis in shared memory (radices 2..5 only; G2GGpu falls back to tsne_g2g_pass_R otherwise):
 * block b takes lines [b*L, b*L + L) of the axis (line = lo + inner * outer: the m points lo + inner*(x + m*outer);
 * outer counts the arrays too), loads them into shared memory, runs every pass of the plan on the lines (ping-pong
 * between two buffers, a barrier after each pass) and writes them back in place. The butterflies' arithmetic is
 * g2g_butterfly's (inner = 1, line l at l*m), so the bits are the global passes'; global memory is read and written
 * once per axis instead of once per pass. radixCode: 4 bits per pass, first pass lowest. A block has about one
 * thread per 8 (first axis) or 5 elements (G2GGpu.fusedThreads: never fewer than elements / TSNE_G2G_FUSED_EPT),
 * and each thread issues the loads of all its elements before storing any, so many loads are in flight. Dynamic
 * shared memory: two buffers of L*m float2, each rounded up to 8, then a table of the L lines
 * (TSNE_G2G_FUSED_BYTES: each line's first element, array and coordinates, so that no element divides by inner, fn
 * or m; the passes divide by g2g_div's multiplications). Loads: for inner = 1 the L lines are contiguous (x
 * fastest); otherwise adjacent lines are adjacent lo, so a warp's loads take L consecutive elements per x.
 *
 * The middle kernels (tsne_g2g_middle*) run the last forward axis, the multiply and the first inverse axis (the
 * same axis, dim - 1: the inverse transform runs its axes in reverse order, G2GCpu.transform) in one block: L
 * positions of that axis, first the kernel array's lines (forward, kept in shared memory), then each charge array's
 * lines (forward, times the kernel's spectrum, inverse, stored), so the spectra never go to global memory. Three
 * buffers of L*m float2 (TSNE_G2G_MIDDLE_BYTES) and the same table, for the lines of array 0.
 *
 * Fused neighbours (the same operations as the separate kernels, so the same bits): PRO = 1 (first forward axis)
 * loads g2g_pack_value instead of data; EPI = 1 (last inverse axis) adds each value into acc/phi
 * (tsne_g2g_accumulate) instead of storing it; the middle kernels multiply as tsne_g2g_multiply. Element
 * e = lo + inner*(x + m*outer) is array e / fn, position e % fn.
 */

/* Division of small non-negative ints by a divisor fixed for a loop: q = n / d as umulhi(n, ceil(2^32 / d)),
 * exact whenever n * d < 2^32 (the fused kernels' indices and divisors are at most 8192). */
struct G2GDiv {
    unsigned d, mul;
};
__device__ __forceinline__ G2GDiv g2g_div(int d) {
    G2GDiv v;
    v.d = (unsigned) d;
    v.mul = d <= 1 ? 0u : 0xFFFFFFFFu / (unsigned) d + 1u;
    return v;
}
__device__ __forceinline__ int g2g_quot(int n, G2GDiv v) {
    return v.d <= 1 ? n : (int) __umulhi((unsigned) n, v.mul);
}

/* One radix-R pass over the block's `total` shared elements, from `in` to `out` (see above). */
template <int R>
__device__ __forceinline__ void g2g_fused_pass(const float2 *__restrict__ in, float2 *__restrict__ out,
                                               const float2 *__restrict__ roots,
                                               int m, int ns, int total, int inverse) {
    const int mr = m / R;
    const int items = total / R;
    const int tstep = m / (ns * R);
    const float sign = inverse ? -1.0f : 1.0f;
    const G2GDiv byMr = g2g_div(mr), byNs = g2g_div(ns);
    for (int g = threadIdx.x; g < items; g += blockDim.x) {
        const int line = g2g_quot(g, byMr);
        const int j = g - line * mr;
        const int jq = g2g_quot(j, byNs);
        const int k = j - jq * ns;
        const int base = line * m;
        float2 v[R];
#pragma unroll
        for (int t = 0; t < R; t++) v[t] = in[base + j + t * mr];
        g2g_twiddle_inputs<R>(v, roots, k, tstep, sign);
        const int d = base + jq * ns * R + k;
        float2 y[R];
        g2g_small_dft<R>(v, y, inverse);
#pragma unroll
        for (int u = 0; u < R; u++) out[d + u * ns] = y[u];
    }
    __syncthreads();
}

/* Element idx of a fused block: line l, position x (contiguous lines: x fastest; strided: l fastest). */
__device__ __forceinline__ void g2g_line_pos(int idx, int inner, int m, int L, G2GDiv byM, G2GDiv byL, int &l,
                                             int &x) {
    if (inner == 1) {
        l = g2g_quot(idx, byM);
        x = idx - l * m;
    } else {
        x = g2g_quot(idx, byL);
        l = idx - x * L;
    }
}

/* Lattice coordinates of position x of line l: the line's own ones (lineInfo rows 1..3) with the axis's set to x. */
__device__ __forceinline__ void g2g_coords(int axis, int x, int l, int L, const int *lineInfo, int &jx, int &jy,
                                           int &jz) {
    jx = axis == 0 ? x : lineInfo[L + l];
    jy = axis == 1 ? x : lineInfo[2 * L + l];
    jz = axis == 2 ? x : lineInfo[3 * L + l];
}

/* The block's table of lines [line0, line0 + L) of `lines` (see above); -1 marks a line past the last. */
__device__ __forceinline__ void g2g_line_table(long long *lineBase, int *lineInfo, int line0, int lines, int L,
                                               int inner, int m, int fn, int dim) {
    for (int l = threadIdx.x; l < L; l += blockDim.x) {
        const int line = line0 + l;
        long long e0 = -1;
        if (line < lines) {
            e0 = (long long) (line % inner) + (long long) (line / inner) * inner * m;
            const int f0 = (int) (e0 % fn);
            lineInfo[l] = (int) (e0 / fn);
            lineInfo[L + l] = f0 % m;
            lineInfo[2 * L + l] = dim >= 2 ? (f0 / m) % m : 0;
            lineInfo[3 * L + l] = dim >= 3 ? f0 / (m * m) : 0;
        }
        lineBase[l] = e0;
    }
    __syncthreads();
}

/* What the fused kernels share: the lattice, the charges and the parity. */
struct G2GFused {
    const float2 *roots;
    const double *q;
    const double *kt;
    const double2 *shift;
    double *acc;
    double *phi;
    const int *top;
    int m, inner, L, total, dim, n, fn, gridNodes, charges, sigma, last, axis, passes, together;
    long long radixCode;
    double scale;
    G2GDiv byM, byL;
    const long long *lineBase;
    const int *lineInfo;
};

/* Loads the block's lines, `arrays` arrays further on (element lineBase + arrays*fn + x*inner), into dst:
 * PRO = 1 packs them (g2g_pack_value), else copies. Every load is issued before any is stored. */
template <int PRO>
__device__ __forceinline__ void g2g_load_lines(float2 *__restrict__ dst, const float2 *__restrict__ data, int arrays,
                                               const G2GFused &f) {
    float2 v[TSNE_G2G_FUSED_EPT];
    int slot[TSNE_G2G_FUSED_EPT];
    const long long off = (long long) arrays * f.fn;
#pragma unroll
    for (int r = 0; r < TSNE_G2G_FUSED_EPT; r++) {
        const int idx = threadIdx.x + r * blockDim.x;
        slot[r] = -1;
        if (idx < f.total) {
            int l, x;
            g2g_line_pos(idx, f.inner, f.m, f.L, f.byM, f.byL, l, x);
            const long long e0 = f.lineBase[l];
            if (e0 >= 0) {
                if (PRO == 1) {
                    int jx, jy, jz;
                    g2g_coords(f.axis, x, l, f.L, f.lineInfo, jx, jy, jz);
                    v[r] = g2g_pack_value_at(f.q, f.kt, f.shift, f.dim, f.n, f.m, f.gridNodes, f.charges, f.top,
                                             f.sigma, f.lineInfo[l] + arrays, jx, jy, jz);
                } else {
                    v[r] = data[e0 + off + (long long) x * f.inner];
                }
                slot[r] = l * f.m + x;
            }
        }
    }
#pragma unroll
    for (int r = 0; r < TSNE_G2G_FUSED_EPT; r++)
        if (slot[r] >= 0) dst[slot[r]] = v[r];
    __syncthreads();
}

/* Every pass of the plan on the lines in a (ping-pong with b); returns the buffer that holds the result. */
__device__ __forceinline__ float2 *g2g_passes(float2 *a, float2 *b, int inverse, const G2GFused &f) {
    int ns = 1;
    for (int p = 0; p < f.passes; p++) {
        const int R = (int) ((f.radixCode >> (TSNE_G2G_RADIX_BITS * p)) & ((1 << TSNE_G2G_RADIX_BITS) - 1));
        switch (R) {
            case 2: g2g_fused_pass<2>(a, b, f.roots, f.m, ns, f.total, inverse); break;
            case 3: g2g_fused_pass<3>(a, b, f.roots, f.m, ns, f.total, inverse); break;
            case 4: g2g_fused_pass<4>(a, b, f.roots, f.m, ns, f.total, inverse); break;
            default: g2g_fused_pass<5>(a, b, f.roots, f.m, ns, f.total, inverse); break;
        }
        float2 *t = a;
        a = b;
        b = t;
        ns *= R;
    }
    return a;
}

/* Stores the block's lines from src, `arrays` arrays further on: EPI = 1 adds their charges' terms into acc/phi
 * (tsne_g2g_accumulate; with the parities side by side, each parity's terms to its own acc), else writes them. */
template <int EPI>
__device__ __forceinline__ void g2g_store_lines(const float2 *__restrict__ src, float2 *__restrict__ data, int arrays,
                                                const G2GFused &f) {
#pragma unroll
    for (int r = 0; r < TSNE_G2G_FUSED_EPT; r++) {
        const int idx = threadIdx.x + r * blockDim.x;
        if (idx >= f.total) continue;
        int l, x;
        g2g_line_pos(idx, f.inner, f.m, f.L, f.byM, f.byL, l, x);
        const long long e0 = f.lineBase[l];
        if (e0 < 0) continue;
        const float2 w = src[l * f.m + x];
        if (EPI == 1) {
            const int sl = f.lineInfo[l] + arrays;
            int jx, jy, jz;
            g2g_coords(f.axis, x, l, f.L, f.lineInfo, jx, jy, jz);
            if (jx < f.n && jy < f.n && jz < f.n) {
                const double2 tw = g2g_twiddle(f.shift, f.sigma, jx, jy, jz);
                const long long g = jx + f.n * (jy + f.n * jz);
                for (int c = 2 * sl; c < 2 * sl + 2 && c < f.charges; c++) {
                    const long long o = (long long) c * f.gridNodes + g;
                    if (f.together)
                        f.acc[(long long) f.sigma * f.charges * f.gridNodes + o] = g2g_term(w, tw, c, f.top);
                    else
                        g2g_accumulate_one(w, tw, c, f.top, o, f.acc, f.phi, f.sigma, f.last, f.scale);
                }
            }
        } else {
            data[e0 + (long long) arrays * f.fn + (long long) x * f.inner] = w;
        }
    }
}

/* The block's parity, its first line and the shared description (blocksPerParity > 0: every parity in one launch,
 * parity blockIdx.x / blocksPerParity on its own arrays, data + sigma (slots + 1) fn, and its own terms). */
__device__ __forceinline__ int g2g_fused_setup(G2GFused &f, float2 *__restrict__ &data, float2 *lineTable,
        const float2 *roots, int m, int inner, int lines, int L, long long radixCode, int passes,
        const double *q, const double *kt, const double2 *shift, double *acc, double *phi, int dim, int n, int fn,
        int gridNodes, int charges, const int *top, int sigma, int last, double scale, int axis,
        int blocksPerParity) {
    int blk = blockIdx.x;
    if (blocksPerParity > 0) {
        sigma = blk / blocksPerParity;
        blk -= sigma * blocksPerParity;
        data += (long long) sigma * ((charges + 1) / 2 + 1) * fn;
    }
    long long *lineBase = (long long *) lineTable;
    int *lineInfo = (int *) (lineBase + L); /* [4][L]: array, jx, jy, jz */
    g2g_line_table(lineBase, lineInfo, blk * L, lines, L, inner, m, fn, dim);
    f.roots = roots; f.q = q; f.kt = kt; f.shift = shift; f.acc = acc; f.phi = phi; f.top = top;
    f.m = m; f.inner = inner; f.L = L; f.total = L * m; f.dim = dim; f.n = n; f.fn = fn; f.gridNodes = gridNodes;
    f.charges = charges; f.sigma = sigma; f.last = last; f.axis = axis; f.passes = passes;
    f.together = blocksPerParity > 0; f.radixCode = radixCode; f.scale = scale;
    f.byM = g2g_div(m); f.byL = g2g_div(L); f.lineBase = lineBase; f.lineInfo = lineInfo;
    return blk;
}

/* An axis kernel's work: its lines in, every pass, out (two buffers of `padded` elements at `buf`). */
template <int PRO, int EPI>
__device__ __forceinline__ void g2g_axis_body(float2 *__restrict__ data, float2 *buf, int padded, int inverse,
                                              const G2GFused &f) {
    float2 *a = buf;
    float2 *b = buf + padded;
    g2g_load_lines<PRO>(a, data, 0, f);
    g2g_store_lines<EPI>(g2g_passes(a, b, inverse, f), data, 0, f);
}

/* A middle kernel's work (last forward axis, multiply, first inverse axis; see above), three buffers at `buf`; the
 * block's lines are positions of the axis in array 0, walked over the arrays; `inverse` is not used. */
template <int PRO, int EPI>
__device__ __forceinline__ void g2g_middle_body(float2 *__restrict__ data, float2 *buf, int padded, int,
                                                const G2GFused &f) {
    float2 *x = buf;
    float2 *y = buf + padded;
    float2 *z = buf + 2 * padded;
    const int slots = (f.charges + 1) / 2;
    g2g_load_lines<PRO>(x, data, slots, f);
    const float2 *k = g2g_passes(x, y, 0, f); /* the kernel's spectrum stays in x or y */
    float2 *p = k == x ? y : x;
    for (int s = 0; s < slots; s++) {
        g2g_load_lines<PRO>(p, data, s, f);
        float2 *r = g2g_passes(p, z, 0, f);
        for (int i = threadIdx.x; i < f.total; i += blockDim.x) r[i] = g2g_cmul(r[i], k[i]);
        __syncthreads();
        r = g2g_passes(r, r == p ? z : p, 1, f);
        g2g_store_lines<EPI>(r, data, s, f);
        __syncthreads(); /* the next array's loads reuse the buffers */
    }
}

/* One macro for both kinds (BODY g2g_axis_body with 2 buffers, g2g_middle_body with 3), so they share the
 * parameter list G2GGpu launches with; the lines' table follows the buffers. */
#define G2G_FUSED(NAME, BODY, BUFFERS, PRO, EPI)                                                                   \
    extern "C" __global__ void __launch_bounds__(TSNE_G2G_FUSED_MAX_THREADS) NAME(float2 *__restrict__ data,       \
            const float2 *__restrict__ roots, int m, int inner, int lines, int L, long long radixCode, int passes,  \
            int inverse, const double *__restrict__ q, const double *__restrict__ kt,                              \
            const double2 *__restrict__ shift, double *__restrict__ acc, double *__restrict__ phi, int dim, int n, \
            int fn, int gridNodes, int charges, const int *__restrict__ top, int sigma, int last, double scale,    \
            int axis, int blocksPerParity) {                                                                       \
        extern __shared__ float2 g2g_lines[];                                                                      \
        const int padded = (L * m + 7) / 8 * 8;                                                                    \
        G2GFused f;                                                                                                \
        g2g_fused_setup(f, data, g2g_lines + (BUFFERS) * padded, roots, m, inner, lines, L, radixCode, passes, q,  \
                        kt, shift, acc, phi, dim, n, fn, gridNodes, charges, top, sigma, last, scale, axis,        \
                        blocksPerParity);                                                                          \
        BODY<PRO, EPI>(data, g2g_lines, padded, inverse, f);                                                       \
    }
G2G_FUSED(tsne_g2g_axis, g2g_axis_body, 2, 0, 0)
G2G_FUSED(tsne_g2g_axis_pack, g2g_axis_body, 2, 1, 0)
G2G_FUSED(tsne_g2g_axis_acc, g2g_axis_body, 2, 0, 1)
G2G_FUSED(tsne_g2g_middle, g2g_middle_body, 3, 0, 0)
G2G_FUSED(tsne_g2g_middle_pack_acc, g2g_middle_body, 3, 1, 1)
