/*
 * t-SNE section: the attractive term (kernels tsne_attr_sell_d1..d3) and the KL divergence's partial sums
 * (tsne_kl_sell_d1..d3, at the end). Included by tsne.cu only (module "tsne").
 * CPU twin: io.sparkgpu.tsne.optimize.ExactTsne.attractive; host side AttractiveForcesGpu, SellRows.
 *
 * Data layout
 *   y         double[n*dim] row-major (AoS), point i at y[i*dim .. i*dim+dim): all n points (global column indices).
 *   P (SELL-32-256): the slice's rows are permuted inside windows of 256 rows by decreasing length
 *             (ties by row) and cut into slices of TSNE_SELL_C = 32 slots; slot s holds row slotRow[s] (-1 = padding)
 *             with slotLen[s] entries. Slice g occupies [sliceOff[g], sliceOff[g+1]) of val/col, entry e of the slot
 *             of lane l at sliceOff[g] + 32*e + l (column-major inside the slice, so a warp's loads coalesce).
 *             meta = int[nSlices+1 | slots | slots | nHubs | nHubs+1] = sliceOff, slotRow, slotLen, hubRow,
 *             hubPtr; col int32 global; val double. Hub rows (more than SellRows.HUB_LEN entries) are padding
 *             slots in the SELL part and stored after it in CSR order: hub h = row hubRow[h], entries
 *             [hubPtr[h], hubPtr[h+1]) of col/val.
 *   dof       degrees of freedom of the kernel (1: standard t-SNE): the term is p_ij (y_i - y_j) / (1 + d2 / dof).
 *   out       double[rows*dim], the slice's rows.
 *
 * Determinism: every double operation is an explicitly rounded intrinsic in the order of the Java twin (nvcc
 * --fmad=false besides) and each row's terms are added in CSR order by one thread.
 *
 * Launch shape: one thread per slot, blockDim.x = TSNE_BLOCK = 256 (__launch_bounds__), grid = nHubs +
 * ceil(slots / 256). The nHubs blocks in front take one hub row each, whole (warps 1..7 compute the terms of 224
 * entries per round into shared memory, double-buffered, while lanes 0..dim-1 of warp 0 add the previous round's
 * terms in CSR order), blocks nHubs.. take the SELL slots.
 */
#pragma once

#include "common.cuh"
#include "fixed128.cuh"
#include "layout/tsne.cuh"
#include "tsne/kernel.cuh"

static_assert(TSNE_SELL_C == 32, "one warp per SELL slice: slot s is lane s & 31 of slice s >> 5");

#define TSNE_ATTR_BATCH 8

/* f += p_ij (y_i - y_j) / (1 + |y_i - y_j|^2 / dof): ExactTsne.attractive's operations for one entry. */
template <int DIM>
__device__ __forceinline__ void tsne_attr_term(const double *yi, const double *yj, double v, double dof, double *f) {
    double diff[DIM];
    double d2 = 0.0;
#pragma unroll
    for (int a = 0; a < DIM; a++) {
        diff[a] = __dsub_rn(yi[a], yj[a]);
        d2 = __dadd_rn(d2, __dmul_rn(diff[a], diff[a]));
    }
    const double pw = __ddiv_rn(v, tsne_kernel_base(d2, dof));
#pragma unroll
    for (int a = 0; a < DIM; a++) f[a] = __dadd_rn(f[a], __dmul_rn(pw, diff[a]));
}

#define TSNE_HUB_CHUNK (TSNE_BLOCK - 32) /* entries per round of a hub block: threads 32..255 */

/* Hub row hubRow[h]: the same terms as tsne_attr_term, computed in parallel; lane a < DIM of warp 0 forms
 * f[a] = (((0 + t_0) + t_1) + ...) in CSR order, exactly the twin's sum. blockDim.x must be TSNE_BLOCK. */
template <int DIM>
__device__ __forceinline__ void tsne_attr_hub(const int *__restrict__ meta, int nSlices, int nHubs, int h,
        const double *__restrict__ val, const int *__restrict__ col, int rowOffset,
        const double *__restrict__ y, double dof, double *__restrict__ out) {
    __shared__ double terms[2][DIM][TSNE_HUB_CHUNK];
    const int slots = nSlices * 32;
    const int *hubRow = meta + nSlices + 1 + 2 * slots;
    const int *hubPtr = hubRow + nHubs;
    const int r = hubRow[h];
    const int e0 = hubPtr[h], e1 = hubPtr[h + 1];
    const int i = rowOffset + r;
    const int t = threadIdx.x;
    double yi[DIM];
#pragma unroll
    for (int a = 0; a < DIM; a++) yi[a] = y[(long long) i * DIM + a];
    double f = 0.0; /* axis t of the row, in lanes t < DIM of warp 0 */
    const int rounds = (e1 - e0 + TSNE_HUB_CHUNK - 1) / TSNE_HUB_CHUNK;
    for (int k = 0; k <= rounds; k++) {
        if (t >= 32 && k < rounds) {
            const int e = e0 + k * TSNE_HUB_CHUNK + (t - 32);
            if (e < e1) {
                const int j = col[e];
                const double v = val[e];
                double diff[DIM];
                double d2 = 0.0;
#pragma unroll
                for (int a = 0; a < DIM; a++) {
                    diff[a] = __dsub_rn(yi[a], y[(long long) j * DIM + a]);
                    d2 = __dadd_rn(d2, __dmul_rn(diff[a], diff[a]));
                }
                const double pw = __ddiv_rn(v, tsne_kernel_base(d2, dof));
#pragma unroll
                for (int a = 0; a < DIM; a++) terms[k & 1][a][t - 32] = __dmul_rn(pw, diff[a]);
            }
        }
        if (t < DIM && k > 0) {
            const int cnt = min(TSNE_HUB_CHUNK, e1 - e0 - (k - 1) * TSNE_HUB_CHUNK);
            const double *tk = terms[(k - 1) & 1][t];
            for (int u = 0; u < cnt; u++) f = __dadd_rn(f, tk[u]);
        }
        __syncthreads();
    }
    if (t < DIM) out[(long long) r * DIM + t] = f;
}

template <int DIM>
__device__ __forceinline__ void tsne_attr_body(const int *__restrict__ meta, int nSlices, int nHubs,
        const double *__restrict__ val, const int *__restrict__ col, int rowOffset,
        const double *__restrict__ y, double dof, double *__restrict__ out) {
    if ((int) blockIdx.x < nHubs) {
        tsne_attr_hub<DIM>(meta, nSlices, nHubs, blockIdx.x, val, col, rowOffset, y, dof, out);
        return;
    }
    const int slots = nSlices * 32;
    const int s = (blockIdx.x - nHubs) * blockDim.x + threadIdx.x;
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
    /* Entries in batches of TSNE_ATTR_BATCH: the batch's column, value and y_j loads are all issued before its
     * arithmetic, so a long (hub) row waits for one memory latency per batch instead of one per entry; the
     * arithmetic still runs entry by entry in CSR order, so the bits are those of the twin. */
    int e = 0;
    for (; e + TSNE_ATTR_BATCH <= len; e += TSNE_ATTR_BATCH) {
        int jb[TSNE_ATTR_BATCH];
        double vb[TSNE_ATTR_BATCH], yb[TSNE_ATTR_BATCH][DIM];
#pragma unroll
        for (int u = 0; u < TSNE_ATTR_BATCH; u++) {
            jb[u] = col[base + 32 * (e + u)];
            vb[u] = val[base + 32 * (e + u)];
        }
#pragma unroll
        for (int u = 0; u < TSNE_ATTR_BATCH; u++) {
#pragma unroll
            for (int a = 0; a < DIM; a++) yb[u][a] = y[(long long) jb[u] * DIM + a];
        }
#pragma unroll
        for (int u = 0; u < TSNE_ATTR_BATCH; u++) tsne_attr_term<DIM>(yi, yb[u], vb[u], dof, f);
    }
    for (; e < len; e++) {
        const int at = base + 32 * e;
        const int j = col[at];
        double yj[DIM];
#pragma unroll
        for (int a = 0; a < DIM; a++) yj[a] = y[(long long) j * DIM + a];
        tsne_attr_term<DIM>(yi, yj, val[at], dof, f);
    }
#pragma unroll
    for (int a = 0; a < DIM; a++) out[(long long) r * DIM + a] = f[a];
}

#define TSNE_ATTR_KERNEL(DIM)                                                                                   \
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_attr_sell_d##DIM(const int *meta, int nSlices, \
            int nHubs, const double *val, const int *col, int rowOffset, const double *y, double dof,         \
            double *out) {                                                                                    \
        tsne_attr_body<DIM>(meta, nSlices, nHubs, val, col, rowOffset, y, dof, out);                          \
    }
TSNE_ATTR_KERNEL(1)
TSNE_ATTR_KERNEL(2)
TSNE_ATTR_KERNEL(3)

/*
 * The SELL entries from P's CSR on the device (SellRows.of's copies; host side AttractiveForcesGpu.deviceP): col and
 * val zeroed beforehand, so the padding is 0 as on the host. Thread t < slots copies slot t's row to sliceOff[t/32] +
 * t%32 + 32 e; thread slots + h copies hub h's row to hubPtr[h]... A null col or val is not filled. Launch: one
 * thread per slot and hub, blocks of TSNE_BLOCK.
 */
extern "C" __global__ void tsne_sell_fill(const int *__restrict__ meta, int nSlices, int nHubs,
        const int *__restrict__ rowPtr, const int *__restrict__ pcol, const double *__restrict__ pval,
        int *__restrict__ col, double *__restrict__ val) {
    const int slots = nSlices * 32;
    const long long t = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    int r, at, stride;
    if (t < slots) {
        r = meta[nSlices + 1 + t];
        if (r < 0) return;
        at = meta[t >> 5] + (int) (t & 31);
        stride = 32;
    } else if (t < (long long) slots + nHubs) {
        const int h = (int) (t - slots);
        r = meta[nSlices + 1 + 2 * slots + h];
        at = meta[nSlices + 1 + 2 * slots + nHubs + h];
        stride = 1;
    } else {
        return;
    }
    const int from = rowPtr[r];
    const int len = rowPtr[r + 1] - from;
    for (int e = 0; e < len; e++) {
        if (col != nullptr) col[at + (long long) stride * e] = pcol[from + e];
        if (val != nullptr) val[at + (long long) stride * e] = pval[from + e];
    }
}

/*
 * The KL divergence's exact partial sums on the device (kernels tsne_kl_sell_d1..d3; twin: TsneKl.partial, host side
 * AttractiveForcesGpu.launchKl): per row of P, in CSR order and in double, A = sum p_ij ln(p_ij (1 + d2)) (dof = 1)
 * or sum p_ij (ln p_ij + dof ln(1 + d2 / dof)), and S = sum p_ij, over the entries with p_ij > 0 (ln: dm_log, the
 * twin's DetMath.log); both quantised to 128-bit fixed point with multipliers (m1, m2) and summed exactly over the
 * rows into acc u64[4] = {A lo, A hi, S lo, S hi} (block sums, one atomic per block and sum). Same SELL layout and
 * launch as tsne_attr_sell_d*, except that the hub rows are taken by the threads after the SELL slots, one per row.
 * Launch: ceil((slots + nHubs) / 256) blocks of TSNE_BLOCK threads.
 */
template <int DIM>
__device__ __forceinline__ void tsne_kl_entry(const double *yi, const double *__restrict__ y, int j, double v,
        double dof, double &a, double &s) {
    if (!(v > 0.0)) return;
    double d2 = 0.0;
#pragma unroll
    for (int t = 0; t < DIM; t++) {
        const double diff = __dsub_rn(yi[t], y[(long long) j * DIM + t]);
        d2 = __dadd_rn(d2, __dmul_rn(diff, diff));
    }
    const double term = dof == 1.0 ? __dmul_rn(v, dm_log(__dmul_rn(v, __dadd_rn(1.0, d2))))
            : __dmul_rn(v, __dadd_rn(dm_log(v), __dmul_rn(dof, dm_log(tsne_kernel_base(d2, dof)))));
    a = __dadd_rn(a, term);
    s = __dadd_rn(s, v);
}

template <int DIM>
__device__ __forceinline__ void tsne_kl_body(const int *__restrict__ meta, int nSlices, int nHubs,
        const double *__restrict__ val, const int *__restrict__ col, int rowOffset, const double *__restrict__ y,
        double dof, double m1, double m2, u64 *__restrict__ acc) {
    const int slots = nSlices * 32;
    const long long t = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    double a = 0.0, s = 0.0;
    bool row = false;
    if (t < slots) {
        const int r = meta[nSlices + 1 + t];
        if (r >= 0) {
            row = true;
            const int len = meta[nSlices + 1 + slots + t];
            const int base = meta[t >> 5] + (int) (t & 31);
            double yi[DIM];
#pragma unroll
            for (int k = 0; k < DIM; k++) yi[k] = y[(long long) (rowOffset + r) * DIM + k];
            for (int e = 0; e < len; e++) tsne_kl_entry<DIM>(yi, y, col[base + 32 * e], val[base + 32 * e], dof, a, s);
        }
    } else if (t < (long long) slots + nHubs) {
        const int h = (int) (t - slots);
        const int *hubRow = meta + nSlices + 1 + 2 * slots;
        const int *hubPtr = hubRow + nHubs;
        const int r = hubRow[h];
        row = true;
        double yi[DIM];
#pragma unroll
        for (int k = 0; k < DIM; k++) yi[k] = y[(long long) (rowOffset + r) * DIM + k];
        for (int e = hubPtr[h]; e < hubPtr[h + 1]; e++) tsne_kl_entry<DIM>(yi, y, col[e], val[e], dof, a, s);
    }
    Fx128 fa = {0ull, 0ull}, fs = {0ull, 0ull};
    if (row) {
        fx_quantize(a, m1, m2, fa.lo, fa.hi);
        fx_quantize(s, m1, m2, fs.lo, fs.hi);
    }
    const Fx128 ta = fx_block_sum(fa);
    __syncthreads(); /* fx_block_sum's shared words are reused */
    const Fx128 ts = fx_block_sum(fs);
    if (threadIdx.x == 0) {
        fx_atomic_add(acc, ta.lo, ta.hi);
        fx_atomic_add(acc + 2, ts.lo, ts.hi);
    }
}

#define TSNE_KL_KERNEL(DIM)                                                                                      \
    extern "C" __global__ void __launch_bounds__(TSNE_BLOCK) tsne_kl_sell_d##DIM(const int *meta, int nSlices,  \
            int nHubs, const double *val, const int *col, int rowOffset, const double *y, double dof, double m1, \
            double m2, u64 *acc) {                                                                             \
        tsne_kl_body<DIM>(meta, nSlices, nHubs, val, col, rowOffset, y, dof, m1, m2, acc);                     \
    }
TSNE_KL_KERNEL(1)
TSNE_KL_KERNEL(2)
TSNE_KL_KERNEL(3)
