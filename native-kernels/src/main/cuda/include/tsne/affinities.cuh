/*
 * t-SNE section: perplexity-calibrated affinities (kernels tsne_aff_cond, tsne_aff_math). Included by tsne.cu only.
 *
 * Host side: io.sparkgpu.tsne.affinity.TsneAffinitiesGpu; CPU twins: TsneAffinitiesCpu.conditionalRow, DetMath.exp /
 * log (include/detmath.cuh).
 *
 * tsne_aff_cond: per row the bisection of TsneAffinitiesCpu.conditionalRow with dm_exp / dm_log
 *   (DetMath), every double operation an explicitly rounded intrinsic in the twin's order. One thread per row,
 *   blockDim 64; the block's k distances per row are staged in shared memory as [m][row] (64 * k floats).
 *   Output: p double[rows*k], status int[rows] (0 ok, 1 the search ended off target).
 */
#pragma once

#include "common.cuh"
#include "detmath.cuh"
#include "layout/tsne.cuh"

/* Element-wise dm_exp / dm_log for the twin tests (DetMath). */
extern "C" __global__ void tsne_aff_math(const double *__restrict__ x, int n, double *__restrict__ ex,
                                         double *__restrict__ lg) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        ex[i] = dm_exp(x[i]);
        lg[i] = dm_log(x[i]);
    }
}

extern "C" __global__ void __launch_bounds__(TSNE_AFF_THREADS)
tsne_aff_cond(const float *__restrict__ dist2, int rows, int k, double target, double tol, double failTol,
              int maxSteps, double *__restrict__ out, int *__restrict__ status) {
    extern __shared__ __align__(16) unsigned char tsne_aff_smem[];
    float *sd = (float *) tsne_aff_smem; /* [k][TSNE_AFF_THREADS] (TSNE_AFF_SHARED_BYTES) */
    const int r0 = blockIdx.x * TSNE_AFF_THREADS;
    const int rn = min(TSNE_AFF_THREADS, rows - r0);
    for (int e = threadIdx.x; e < rn * k; e += TSNE_AFF_THREADS) {
        int rr = e / k;
        int m = e - rr * k;
        sd[m * TSNE_AFF_THREADS + rr] = dist2[(i64) r0 * k + e];
    }
    __syncthreads();
    const int t = threadIdx.x;
    if (t >= rn) return;
    const double d0 = (double) sd[t];
    double mean = 0.0;
    for (int m = 0; m < k; m++) mean = __dadd_rn(mean, __dsub_rn((double) sd[m * TSNE_AFF_THREADS + t], d0));
    mean = __ddiv_rn(mean, (double) k);
    double beta = __ddiv_rn(1.0, mean);
    double lo = 0.0;
    double hi = __longlong_as_double(0x7FF0000000000000LL);
    double z = 0.0;
    int st = 0;
    for (int step = 0; ; step++) {
        z = 0.0;
        double s = 0.0;
        const double nb = -beta;
        for (int m = 0; m < k; m++) {
            double dd = __dsub_rn((double) sd[m * TSNE_AFF_THREADS + t], d0);
            double p = dm_exp(__dmul_rn(nb, dd));
            z = __dadd_rn(z, p);
            s = __dadd_rn(s, __dmul_rn(p, dd));
        }
        double h = __dadd_rn(dm_log(z), __ddiv_rn(__dmul_rn(beta, s), z));
        double diff = __dsub_rn(h, target);
        if (fabs(diff) <= tol || step >= maxSteps) {
            if (!(fabs(diff) <= failTol)) st = 1;
            break;
        }
        double next;
        if (diff > 0.0) {
            lo = beta;
            next = hi == __longlong_as_double(0x7FF0000000000000LL) ? __dmul_rn(beta, 2.0)
                                                                     : __dmul_rn(__dadd_rn(beta, hi), 0.5);
        } else {
            hi = beta;
            next = __dmul_rn(__dadd_rn(beta, lo), 0.5);
        }
        if (next == beta) {
            if (!(fabs(diff) <= failTol)) st = 1;
            break;
        }
        beta = next;
    }
    const double nb = -beta;
    const i64 base = (i64) (r0 + t) * k;
    for (int m = 0; m < k; m++) {
        double dd = __dsub_rn((double) sd[m * TSNE_AFF_THREADS + t], d0);
        out[base + m] = __ddiv_rn(dm_exp(__dmul_rn(nb, dd)), z);
    }
    status[r0 + t] = st;
}
