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
