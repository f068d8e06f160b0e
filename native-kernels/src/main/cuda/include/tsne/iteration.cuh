/*
 * t-SNE section: the device-resident iteration (kernels tsne_minmax, tsne_fixed_to_double, tsne_step: the optimizer
 * step; tsne_step_dz, the step with Z read on the device). Included by tsne.cu only (module "tsne").
 *
 * The per-iteration glue of single-device t-SNE, so that positions, update, gains, forces and grids stay on the GPU
 * between iterations (io.sparkgpu.tsne.optimize.TsneDeviceState). CPU twins: LocalGradientSource.plan (min/max),
 * GridRepulsion.toDouble (fixed point -> double), TsneOptimizer.step (update); equal bits.
 *
 * Data layout
 *   y, upd, gains, attr, rep   double[n*dim] row-major (AoS): coordinate t = i*dim + a, 32-bit index t.
 *   keys      u64[2*dim]: order-preserving keys of the per-axis minimum [0, dim) and maximum [dim, 2*dim) of y,
 *             key(v) = bits ^ (sign ? ~0 : 2^63): -0.0 < 0.0 as in Math.min/max, a NaN lands beyond +-inf so a
 *             diverged coordinate shows up as a non-finite bound. The caller sets min keys to ~0, max keys to 0.
 *   acc       u64[2*charges*nodes]: the (lo, hi) fixed-point pairs of S2G (grid.cuh); q double[charges*nodes].
 *
 * Launch shape: tsne_minmax: blockDim 256 (a multiple of 32: warp shuffles), grid-stride over points, one atomic
 * per warp and axis (min/max are order independent). tsne_fixed_to_double, tsne_step: one thread per value,
 * blockDim 256, grid = ceil(values / 256).
 */

#pragma once

#include "common.cuh"
#include "fixed128.cuh"
#include "layout/tsne.cuh"

__device__ __forceinline__ u64 tsne_order_key(double v) {
    const u64 b = (u64) __double_as_longlong(v);
    return b ^ ((b >> 63) != 0ull ? ~0ull : 0x8000000000000000ull);
}

extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_minmax(const double *__restrict__ y, int n, int dim,
        u64 *keys) {
    u64 lo[3] = {~0ull, ~0ull, ~0ull};
    u64 hi[3] = {0ull, 0ull, 0ull};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        for (int a = 0; a < dim; a++) {
            const u64 k = tsne_order_key(y[(i64) i * dim + a]);
            lo[a] = k < lo[a] ? k : lo[a];
            hi[a] = k > hi[a] ? k : hi[a];
        }
    }
    for (int a = 0; a < dim; a++) {
        for (int off = 16; off > 0; off >>= 1) {
            const u64 ol = __shfl_xor_sync(FULL_MASK, lo[a], off);
            const u64 oh = __shfl_xor_sync(FULL_MASK, hi[a], off);
            lo[a] = ol < lo[a] ? ol : lo[a];
            hi[a] = oh > hi[a] ? oh : hi[a];
        }
        if ((threadIdx.x & 31) == 0) {
            atomicMin(keys + a, lo[a]);
            atomicMax(keys + dim + a, hi[a]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_fixed_to_double(const u64 *__restrict__ acc, int nodes,
        int charges, int s0, int s1, int s2, int s3, int s4, double *__restrict__ out) {
    const i64 t = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (i64) nodes * charges) return;
    const int c = (int) (t / nodes);
    const int shift = c == 0 ? s0 : c == 1 ? s1 : c == 2 ? s2 : c == 3 ? s3 : s4;
    out[t] = fx_to_double_scaled(acc[2 * t], acc[2 * t + 1], shift); /* GridRepulsion.toDouble */
}

/* Math.signum: -1, +1, or the argument itself for +-0 and NaN. */
__device__ __forceinline__ double tsne_signum(double x) {
    return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x);
}

/* TsneOptimizer.step: g = alpha attr - rep / z, delta-bar-delta gains, momentum, y += update. */
__device__ __forceinline__ void tsne_step_at(int t, double *__restrict__ y, double *__restrict__ upd,
        double *__restrict__ gains, const double *__restrict__ attr, const double *__restrict__ rep, double alpha,
        double mu, double eta, double minGain, double z) {
    const double g = __dsub_rn(__dmul_rn(alpha, attr[t]), __ddiv_rn(rep[t], z));
    double u = upd[t];
    double gain = tsne_signum(g) != tsne_signum(u) ? __dadd_rn(gains[t], 0.2) : __dmul_rn(gains[t], 0.8);
    gain = gain != gain ? gain : (gain >= minGain ? gain : minGain); /* Math.max(gain, minGain) */
    gains[t] = gain;
    u = __dsub_rn(__dmul_rn(mu, u), __dmul_rn(__dmul_rn(eta, gain), g));
    upd[t] = u;
    y[t] = __dadd_rn(y[t], u);
}

extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_step(double *__restrict__ y, double *__restrict__ upd,
        double *__restrict__ gains, const double *__restrict__ attr, const double *__restrict__ rep, int len,
        double alpha, double mu, double eta, double minGain, double z) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= len) return;
    tsne_step_at(t, y, upd, gains, attr, rep, alpha, mu, eta, minGain, z);
}

/* tsne_step with Z taken on the device from G2S's exact sum zacc = {lo, hi} (LocalGradientSource.z: the 128-bit
 * value at zShift rounded to the nearest double, minus n), so the host need not wait for it; thread 0 also
 * stores Z's bits in zOut for the host's later check (TsneOptimizer.checkZ). */
extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_step_dz(double *__restrict__ y, double *__restrict__ upd,
        double *__restrict__ gains, const double *__restrict__ attr, const double *__restrict__ rep, int len,
        double alpha, double mu, double eta, double minGain, const u64 *__restrict__ zacc, int zShift, double n,
        double *__restrict__ zOut) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const double z = __dsub_rn(fx_to_double_scaled(zacc[0], zacc[1], zShift), n);
    if (t == 0) *zOut = z;
    if (t >= len) return;
    tsne_step_at(t, y, upd, gains, attr, rep, alpha, mu, eta, minGain, z);
}
