/*
 * Host/device contract of the tsne module (io.sparkgpu.tsne.affinity: TsneAffinitiesGpu; .optimize:
 * AttractiveForcesGpu, SellRows, TsneDeviceState; .repulsion: GridRepulsionGpu, G2GGpu, G2GPlan): block sizes the
 * kernels depend on, shared-memory layouts, the parameter array and the SELL slice height. Checked against the Java
 * constants by io.sparkgpu.tsne.TsneKernelLayoutTest (format: see include/layout/kmeans.cuh).
 */
#pragma once

/* ---- kNN (tsne_knn_tile: RPT = 4 references per thread, tsne_knn_tile8: RPT = 8; TsneAffinitiesGpu) */

/* Threads per block (KNN_THREADS), queries per block (KQ), dimensions per staged chunk (KD), references per tile
 * (KR = 16 RPT). */
#define TSNE_KNN_THREADS 256
#define TSNE_KNN_KQ 64
#define TSNE_KNN_KD 32
#define TSNE_KNN_KR(rpt) (16 * (rpt))
/* Row pitches (floats) of the transposed query tile, reference tile and distance tile in shared memory. */
#define TSNE_KNN_QS (TSNE_KNN_KQ + 4)
#define TSNE_KNN_RS(rpt) (TSNE_KNN_KR(rpt) + 4)
#define TSNE_KNN_DS(rpt) (TSNE_KNN_KR(rpt) + 1)
/* Dynamic shared memory with qDims dimensions of the query tile resident (KD, or d rounded up to KD) and k
 * neighbours (TsneAffinitiesGpu.knnSharedBytes): qs float[qDims][QS], rs float[KD][RS], ds float[KQ][DS], then the
 * KQ lists ld float[KQ][k] and li int[KQ][k]. */
#define TSNE_KNN_SHARED_BYTES(k, qDims, rpt)                                                                     \
    (4 * ((qDims) * TSNE_KNN_QS + TSNE_KNN_KD * TSNE_KNN_RS(rpt) + TSNE_KNN_KQ * TSNE_KNN_DS(rpt))              \
     + 8 * TSNE_KNN_KQ * (k))

/* ---- tensor-core kNN filter (tsne_knn_tc; TsneAffinitiesGpu.TC_*, tcSharedBytes): references per tile (KR), row
 * pitches (floats) of the reference staging tile (32 dimensions + 4) and of the dot tile (KR + 4). Dynamic shared
 * memory with qDims query dimensions resident (KD, or d rounded up to 8) and C candidates: query tiles
 * qs/ql float[KQ][qDims + 4] (high, low TF32 parts), then the larger of the reference tiles rs/rl float[KR][RLD]
 * and the dot tile float[KQ][DLD] (they share memory), then the lists float[KQ][C] and int[KQ][C]. */
#define TSNE_TC_KR 128
#define TSNE_TC_RLD 36
#define TSNE_TC_DLD 132
#define TSNE_TC_TILE_FLOATS (2 * TSNE_TC_KR * TSNE_TC_RLD > TSNE_KNN_KQ * TSNE_TC_DLD ? 2 * TSNE_TC_KR * TSNE_TC_RLD \
                                                                                     : TSNE_KNN_KQ * TSNE_TC_DLD)
#define TSNE_TC_SHARED_BYTES(c, qDims) (4 * (2 * TSNE_KNN_KQ * ((qDims) + 4) + TSNE_TC_TILE_FLOATS) + 8 * TSNE_KNN_KQ * (c))

/* ---- symmetrisation (tsne_sym_sort, tsne_sym_write: one block per row; TsneAffinitiesGpu.SYM_THREADS): a row's
 * incoming entries are sorted in shared memory up to SYM_CAP of them, in place in global memory beyond. */
#define TSNE_SYM_THREADS 128
#define TSNE_SYM_CAP 2048

/* ---- affinities (tsne_aff_cond): one thread per row, the block's k distances per row staged as float[k][threads]
 * (TsneAffinitiesGpu.AFF_THREADS, affSharedBytes). */
#define TSNE_AFF_THREADS 64
#define TSNE_AFF_SHARED_BYTES(k) (4 * TSNE_AFF_THREADS * (k))

/* ---- forces, G2G and the device-resident iteration */

/* Threads per block of the attractive, S2G, G2S, G2G and iteration kernels (TsneForcesGpu.BLOCK, G2GGpu.BLOCK,
 * TsneDeviceState.BLOCK): a hub block of tsne_attr_sell_d* needs exactly this. */
#define TSNE_BLOCK 256

/* S2G by boxes (include/tsne/boxes.cuh, GridRepulsionGpu.BOX_SCAN_THREADS/ITEMS): the one block of tsne_box_scan and
 * the counts each of its threads scans per tile. */
#define TSNE_BOX_SCAN_THREADS 1024
#define TSNE_BOX_SCAN_ITEMS 4

/* SELL-C-sigma slice height C of the attractive kernel (SellRows.C): one warp per slice. */
#define TSNE_SELL_C 32

/* Charges per grid node (1, u_1..u_dim, |u|^2) for dim <= 3: at most 5 (InterpGrid.charges, tsne_fixed_to_double's
 * five shifts, the G2G kernels' register arrays). */
#define TSNE_MAX_CHARGES 5

/* Interpolation nodes per box and axis, p in 1..TSNE_MAX_P (TsneGridOptions.MAX_P): the S2G/G2S weight arrays. */
#define TSNE_MAX_P 8

/* prm double[] of S2G and G2S (TsneForcesGpu.params, PRM_*): lo[0..2], centre[3..5], h, zMax, then the (s1, s2)
 * fixed-point multiplier pairs of each charge (S2G) or of z (G2S). */
#define TSNE_PRM_LO 0
#define TSNE_PRM_CENTRE 3
#define TSNE_PRM_H 6
#define TSNE_PRM_ZMAX 7
#define TSNE_PRM_MULT 8

/* G2G: tsne_g2g_direct runs one thread per output node with blocks of TSNE_G2G_TILE threads, staging TSNE_G2G_TILE
 * source nodes at a time (G2GGpu.DIRECT_TILE); the fused axis kernels hold two buffers of lines * m complex floats
 * (each rounded up to 8) and 24 bytes per line in dynamic shared memory (G2GGpu.fusedBytes), run blocks of at most
 * TSNE_G2G_FUSED_MAX_THREADS threads with at most TSNE_G2G_FUSED_EPT elements each (G2GGpu.fusedThreads) and
 * radices up to TSNE_G2G_FUSED_MAX_RADIX (G2GPlan.factor for
 * m <= FUSED_MAX_M); the plan's radix code has TSNE_G2G_RADIX_BITS bits per pass (G2GPlan.radixCode); global passes
 * exist for the 5-smooth radices up to TSNE_G2G_MAX_RADIX (G2GPlan.MAX_RADIX). */
#define TSNE_G2G_TILE 128
#define TSNE_G2G_FUSED_BYTES(m, lines) (2 * 8 * ((((m) * (lines)) + 7) / 8 * 8) + 24 * (lines))
/* the middle kernels (last forward axis, multiply, first inverse axis) hold three such buffers (G2GGpu.middleBytes) */
#define TSNE_G2G_MIDDLE_BYTES(m, lines) (3 * 8 * ((((m) * (lines)) + 7) / 8 * 8) + 24 * (lines))
#define TSNE_G2G_FUSED_EPT 8
#define TSNE_G2G_FUSED_MAX_THREADS 1024
#define TSNE_G2G_FUSED_MAX_RADIX 5
#define TSNE_G2G_RADIX_BITS 4
#define TSNE_G2G_MAX_RADIX 16
