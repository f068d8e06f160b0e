/*
 * Block-wide collectives: CUB's block primitives (header-only, shipped with every CUDA toolkit; device code only, no
 * runtime API) for the block scans and the (LLR, index) reduction, so the kernels carry no hand-written block scans.
 * (The one hand-written block reduction left is fx_block_sum in fixed128.cuh; see there why.) Only exact operations
 * are combined: integer sums (also 128-bit) and max (also of a total order) are associative and commutative, so the
 * order of combination gives the same bits as any other.
 *
 * CUB fixes the block size at compile time: each kernel instantiates these with its capability's block-size
 * constant from include/layout/<capability>.cuh, which the Java launcher uses too (checked by the layout tests in
 * spark-gpu: *KernelLayoutTest). Temporary storage is a __shared__ variable of the kernel (static shared memory);
 * a TempStorage is reused only after a __syncthreads().
 *
 * Only APIs present in both CUB 2.x (CUDA 12) and CUB 3.x (CUDA 13) are used, with our own operator functors.
 */
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "common.cuh"

/* Block scan by warp scans (shuffles, then a scan of the warp totals): the smallest temporary storage. */
template <typename T, int THREADS>
using BlockScanT = cub::BlockScan<T, THREADS, cub::BLOCK_SCAN_WARP_SCANS>;

template <typename T, int THREADS>
using BlockReduceT = cub::BlockReduce<T, THREADS>;

struct IntMax {
    __device__ __forceinline__ int operator()(int a, int b) const { return max(a, b); }
};

