/*
 * Host/device contract of the isotonic module (io.sparkgpu.isotonic.IsotonicGpu, IsoPoolGpu): block sizes the
 * kernels depend on, tile sizes and array layouts. Checked against the Java constants by
 * io.sparkgpu.isotonic.IsotonicKernelLayoutTest (format: see include/layout/kmeans.cuh).
 */
#pragma once

/* Words per point or block record (sLo, sHi, wLo, wHi): two 128-bit fixed-point sums (IsoPoints.acc, L2Blocks). */
#define ISO_RECORD_WORDS 4

/* iso_mls_prefix and iso_mls_blocks run as ONE block of this many threads (IsotonicGpu.SCAN_THREADS). */
#define ISO_MLS_THREADS 1024
/* iso_mls_argmin: dynamic shared memory for blockDim.x = threads, one record of z per thread (IsotonicGpu.MLS_BLOCK
 * launch). */
#define ISO_MLS_ARGMIN_SHARED_BYTES(threads) (8 * ISO_RECORD_WORDS * (threads))

/* Sort and pool (IsoPoolGpu): threads per block of every iso_sp_* kernel (THREADS; iso_sp_scan's cub::BlockScan
 * needs it exact), ints per block of iso_sp_scan (SCAN_TILE) and sorted rows per thread of iso_sp_pool (RUN). The
 * radix sort itself is the sort engine's (sort.cu, sort_p64_*; io.sparkgpu.sort.PairRadixSort). */
#define ISO_SP_THREADS 256
#define ISO_SP_SCAN_ITEMS 8
#define ISO_SP_SCAN_TILE (ISO_SP_THREADS * ISO_SP_SCAN_ITEMS)
#define ISO_SP_RUN 8

/* Radix sort of 64-bit keys: 8 passes of 8-bit digits (PairRadixSort.PASSES, DIGITS); digits int[ISO_SP_PASSES *
 * ISO_SP_DIGITS], computed by iso_sp_keys, holds the digit counts of every pass and decides which passes run. */
#define ISO_SP_DIGIT_BITS 8
#define ISO_SP_DIGITS (1 << ISO_SP_DIGIT_BITS)
#define ISO_SP_PASSES (64 / ISO_SP_DIGIT_BITS)

/* counters int[ISO_SP_COUNTERS]: invalid rows, rows of weight 0, distinct features, points whose summed weight
 * quantized to 0 (IsoPoolGpu.COUNTERS and C_*). */
#define ISO_SP_C_INVALID 0
#define ISO_SP_C_ZERO_WEIGHT 1
#define ISO_SP_C_DISTINCT 2
#define ISO_SP_C_WEIGHT_TOO_SMALL 3
#define ISO_SP_COUNTERS 4
