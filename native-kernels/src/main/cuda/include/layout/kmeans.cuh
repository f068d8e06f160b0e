/*
 * Host/device contract of the kmeans module: launch shape, shared-memory layouts and array lengths that the Java host
 * (io.sparkgpu.kmeans.KMeansGpu, KMeansAccumulator) computes too. The kernels use these macros; the host mirrors
 * them and io.sparkgpu.kmeans.KMeansKernelLayoutTest evaluates this file and compares every definition with the
 * Java side. Format (for that test): one "#define NAME value" or "#define NAME(args) expression" per line, integer
 * expressions only (+ - * / % & | ~ << >> comparisons, ?:, other macros of this file).
 */
#pragma once

/* Threads per block of every kmeans kernel (KMeansGpu.BLOCK; the sorted kernels' cub::BlockScan needs it exact). */
#define KMEANS_BLOCK 256

/* Largest d of the register kernels (d <= 8, 16, 32, 64), the FP32 screening kernels and the sorted variants
 * (KMeansGpu.FILTER_MAX_D, SORTED_MAX_D); larger d runs kmeans_step_dany. */
#define KMEANS_REG_MAX_D 64

/* Row stride of the centres: d rounded up to a multiple of 4, zero-padded (KMeansGpu.paddedDim). */
#define KMEANS_PADDED_DIM(d) (((d) + 3) & ~3)

/* Points per thread and grid-stride step of the FP64 register kernel for dimension bound dmax
 * (KMeansGpu.pointsPerThread; kmeans_step_dany takes 1) and of the FP32 screening kernels
 * (KMeansGpu.filterPointsPerThread). */
#define KMEANS_STEP_NP(dmax) ((dmax) <= 32 ? 2 : 1)
#define KMEANS_FILT_NP(dmax) ((dmax) <= 16 ? 4 : ((dmax) <= 32 ? 2 : 1))

/* Words of the accumulator: sums 2kd, weight sums 2k, cost 2, counts k (KMeansAccumulator.length). */
#define KMEANS_ACC_LEN(k, d) (2 * (k) * (d) + 2 * (k) + 2 + (k))

/* Screening kernels: k rounded up to even (the extra centre is a dummy), the FP32 centres -2c' (k2 rows of the padded
 * dimension) and their norms (k2 rounded up to 4 floats): floats at the start of shared memory
 * (KMeansGpu.filterFloatBytes / 4). */
#define KMEANS_FILT_K2(k) (((k) + 1) & ~1)
#define KMEANS_FILT_NORMS(k) ((KMEANS_FILT_K2(k) + 3) & ~3)
#define KMEANS_FILT_FLOATS(k, d) (KMEANS_FILT_K2(k) * KMEANS_PADDED_DIM(d) + KMEANS_FILT_NORMS(k))

/* Sorted kernels: ints of the sort region at the end of shared memory, tile = KMEANS_BLOCK * points per thread:
 * cnt[k], off[k + 1], the tile's sorted indices idx[tile] and labels lab[tile] (KMeansGpu.sortBytes / 4). */
#define KMEANS_SORT_INTS(k, tile) ((k) + ((k) + 1) + 2 * (tile))
