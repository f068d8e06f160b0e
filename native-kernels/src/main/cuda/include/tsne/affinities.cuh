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

/*
 * Symmetrisation P = (P_cond + P_cond^T) / (2n) on the device (kernels tsne_sym_*). CPU twin:
 * JointProbabilities.symmetrize; host side: TsneAffinitiesGpu.symmetrize.
 *
 * Input: the kNN graph of all n rows, index int[n*k] (distinct neighbours per row, never the row itself) and
 * pcond double[n*k]. Row i of P is the union, by ascending column, of its own entries (index[i*k+m], pcond[i*k+m])
 * and its incoming entries (j, pcond[j*k+m]) for every j with index[j*k+m] == i; a column present in both holds
 * own + incoming (__dadd_rn), and every value is divided by 2n (__ddiv_rn): the twin's two correctly rounded
 * operations, so the same bits. No floating-point value is ever accumulated, so order only matters for where an
 * entry lands, and that is fixed by the column (columns of a row are distinct):
 *   tsne_sym_count   in-degree of every row (integer atomics: exact).            [host: exclusive scan -> inPtr]
 *   tsne_sym_fill    incoming entries into inCol/inVal at inPtr[i] + an atomic cursor (order within a row
 *                    arbitrary, fixed by the next kernel).
 *   tsne_sym_sort    one block per row: sorts the row's incoming entries by column (bitonic, ascending-only
 *                    network, shared memory up to TSNE_SYM_CAP entries, else in place in global memory), sorts the
 *                    own slots by column into ownOrd (slot numbers m), and counts the union: k + in - common.
 *                                                                                 [host: exclusive scan -> rowPtr]
 *   tsne_sym_write   one block per row: a column c lands at rowPtr[i] + #(own < c) + #(incoming < c)
 *                    - #(common < c) (binary searches, and a prefix count of the own columns that also come in).
 * Launch: count/fill grid-stride, 256 threads; sort/write one block of TSNE_SYM_THREADS per row.
 */
/* TSNE_SYM_THREADS, TSNE_SYM_CAP: include/layout/tsne.cuh */

extern "C" __global__ void tsne_sym_count(const int *__restrict__ index, i64 nk, int *__restrict__ cnt) {
    for (i64 e = blockIdx.x * (i64) blockDim.x + threadIdx.x; e < nk; e += (i64) gridDim.x * blockDim.x)
        atomicAdd(&cnt[index[e]], 1);
}

extern "C" __global__ void tsne_sym_fill(const int *__restrict__ index, const double *__restrict__ pcond, i64 nk,
                                         int k, int *__restrict__ cursor, int *__restrict__ inCol,
                                         double *__restrict__ inVal) {
    for (i64 e = blockIdx.x * (i64) blockDim.x + threadIdx.x; e < nk; e += (i64) gridDim.x * blockDim.x) {
        int at = atomicAdd(&cursor[index[e]], 1);
        inCol[at] = (int) (e / k);
        inVal[at] = pcond[e];
    }
}

/* Ascending bitonic sort of key[0..len) (distinct keys) carrying val, by the whole block; positions >= len are
 * virtual +infinity: every compare-exchange puts the smaller key at the lower position, so pairs reaching past
 * len are skipped. */
template <typename V>
__device__ void tsne_sym_bitonic(int *key, V *val, int len) {
    int p = 1;
    while (p < len) p <<= 1;
    for (int size = 2; size <= p; size <<= 1) {
        const int half = size >> 1;
        for (int t = threadIdx.x; t < (p >> 1); t += blockDim.x) {
            int i = (t / half) * size + (t % half);
            int j = (t / half) * size + size - 1 - (t % half);
            if (j < len && key[i] > key[j]) {
                int kk = key[i]; key[i] = key[j]; key[j] = kk;
                V vv = val[i]; val[i] = val[j]; val[j] = vv;
            }
        }
        __syncthreads();
        for (int stride = half >> 1; stride > 0; stride >>= 1) {
            for (int t = threadIdx.x; t < (p >> 1); t += blockDim.x) {
                int i = (t / stride) * 2 * stride + (t % stride);
                int j = i + stride;
                if (j < len && key[i] > key[j]) {
                    int kk = key[i]; key[i] = key[j]; key[j] = kk;
                    V vv = val[i]; val[i] = val[j]; val[j] = vv;
                }
            }
            __syncthreads();
        }
    }
}

/* First position in the ascending a[0..len) whose value is >= c. */
__device__ __forceinline__ int tsne_sym_lower(const int *a, int len, int c) {
    int lo = 0, hi = len;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (a[mid] < c) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Dynamic shared memory: 4 * 2k bytes (own columns and slots). */
extern "C" __global__ void __launch_bounds__(TSNE_SYM_THREADS)
tsne_sym_sort(const int *__restrict__ index, int k, const int *__restrict__ inPtr, int *__restrict__ inCol,
              double *__restrict__ inVal, int *__restrict__ ownOrd, int *__restrict__ outCnt) {
    __shared__ int sKey[TSNE_SYM_CAP];
    __shared__ double sVal[TSNE_SYM_CAP];
    __shared__ int common;
    extern __shared__ __align__(16) int tsne_sym_smem[];
    int *oCol = tsne_sym_smem;
    int *oSlot = oCol + k;
    const int i = blockIdx.x;
    const i64 b = inPtr[i];
    const int len = inPtr[i + 1] - inPtr[i];
    if (threadIdx.x == 0) common = 0;
    for (int m = threadIdx.x; m < k; m += blockDim.x) {
        oCol[m] = index[(i64) i * k + m];
        oSlot[m] = m;
    }
    if (len <= TSNE_SYM_CAP) {
        for (int e = threadIdx.x; e < len; e += blockDim.x) {
            sKey[e] = inCol[b + e];
            sVal[e] = inVal[b + e];
        }
    }
    __syncthreads();
    tsne_sym_bitonic<int>(oCol, oSlot, k);
    const int *sorted;
    if (len <= TSNE_SYM_CAP) {
        tsne_sym_bitonic<double>(sKey, sVal, len);
        for (int e = threadIdx.x; e < len; e += blockDim.x) {
            inCol[b + e] = sKey[e];
            inVal[b + e] = sVal[e];
        }
        sorted = sKey;
    } else {
        tsne_sym_bitonic<double>(inCol + b, inVal + b, len);
        sorted = inCol + b;
    }
    __syncthreads();
    int mine = 0;
    for (int m = threadIdx.x; m < k; m += blockDim.x) {
        ownOrd[(i64) i * k + m] = oSlot[m];
        int at = tsne_sym_lower(sorted, len, oCol[m]);
        if (at < len && sorted[at] == oCol[m]) mine++;
    }
    if (mine) atomicAdd(&common, mine);
    __syncthreads();
    if (threadIdx.x == 0) outCnt[i] = k + len - common;
}

/* Dynamic shared memory: 4 * (2k + 1) bytes: the own columns in ascending order, then com[0..k]: com[p] = how many of
 * the first p own columns also come in (common). A column c lands at #(own < c) + #(incoming < c) - #(common < c):
 * for the own entry at sorted place p that is p + at - com[p] (at = #(incoming < c)); for an incoming entry absent
 * from the own ones, at sorted place q, q + at - com[at] (at = #(own < c)). */
extern "C" __global__ void __launch_bounds__(TSNE_SYM_THREADS)
tsne_sym_write(const int *__restrict__ index, const double *__restrict__ pcond, int k, const int *__restrict__ inPtr,
               const int *__restrict__ inCol, const double *__restrict__ inVal, const int *__restrict__ ownOrd,
               const i64 *__restrict__ rowPtr, double scale, int *__restrict__ col, double *__restrict__ val) {
    extern __shared__ __align__(16) int tsne_sym_smem[];
    int *oCol = tsne_sym_smem;
    int *com = oCol + k;
    const int i = blockIdx.x;
    const i64 b = inPtr[i];
    const int len = inPtr[i + 1] - inPtr[i];
    const i64 out = rowPtr[i];
    for (int p = threadIdx.x; p < k; p += blockDim.x) oCol[p] = index[(i64) i * k + ownOrd[(i64) i * k + p]];
    __syncthreads();
    for (int p = threadIdx.x; p < k; p += blockDim.x) {
        const int c = oCol[p];
        const int at = tsne_sym_lower(inCol + b, len, c);
        com[p + 1] = (at < len && inCol[b + at] == c) ? 1 : 0;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        com[0] = 0;
        for (int p = 1; p <= k; p++) com[p] += com[p - 1];
    }
    __syncthreads();
    for (int p = threadIdx.x; p < k; p += blockDim.x) {
        const int m = ownOrd[(i64) i * k + p];
        const int c = oCol[p];
        double v = pcond[(i64) i * k + m];
        const int at = tsne_sym_lower(inCol + b, len, c);
        if (at < len && inCol[b + at] == c) v = __dadd_rn(v, inVal[b + at]);
        col[out + p + at - com[p]] = c;
        val[out + p + at - com[p]] = __ddiv_rn(v, scale);
    }
    for (int q = threadIdx.x; q < len; q += blockDim.x) {
        const int c = inCol[b + q];
        const int at = tsne_sym_lower(oCol, k, c);
        if (at < k && oCol[at] == c) continue;
        col[out + q + at - com[at]] = c;
        val[out + q + at - com[at]] = __ddiv_rn(inVal[b + q], scale);
    }
}
