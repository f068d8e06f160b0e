/*
 * Host/device contract of the sort module (io.sparkgpu.sort.SortGpu): launch shapes, chunk and tile sizes, the
 * digits of a stable pass and the onesweep histogram's passes. Checked against the Java constants by
 * io.sparkgpu.sort.SortKernelLayoutTest (format: see include/layout/kmeans.cuh).
 */
#pragma once

/* Threads per block of the histogram kernels (SortGpu.HIST_THREADS). */
#define HIST_THREADS 512

/* Key values per segment of the pyramid's first level (SortGpu.PYR_SEG_LOG). */
#define PYR_SEG_LOG 12

/* The keys-only output kernels: threads per block and positions a block writes (SortGpu.OUT_THREADS, CHUNK). */
#define OUT_THREADS 256
#define OUT_ITEMS 16
#define CHUNK (OUT_THREADS * OUT_ITEMS)

/* The stable passes: threads per block and elements per tile, one block a tile (SortGpu.SORT_THREADS, TILE). */
#define SORT_THREADS 256
#define SORT_ITEMS 16
#define TILE (SORT_THREADS * SORT_ITEMS)

/* Threads per block of sort_rowscan (SortGpu.SCAN_THREADS). */
#define SCAN_THREADS 256

/* Digits of a stable pass of at most SortGpu.MAX_PASS_BITS bits; the onesweep kernels' histogram array holds
 * OS_MAX_PASSES passes of OS_DIGITS counts (hist[pass * OS_DIGITS + d]), then a tile counter per pass
 * (SortGpu.OS_MAX_PASSES). */
#define OS_DIGITS 256
#define OS_MAX_PASSES 8
