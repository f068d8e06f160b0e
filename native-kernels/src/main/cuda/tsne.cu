/*
 * t-SNE (module "tsne"): exact kNN, perplexity-calibrated affinities, the attractive term, the grid-interpolation
 * repulsive term (S2G, G2G, G2S, Phi2Force), the exact O(n^2) repulsive term and the device-resident iteration.
 * CPU twins live in the sub-packages of io.sparkgpu.tsne (affinity.TsneAffinitiesCpu, optimize.ExactTsne,
 * repulsion.GridRepulsionCpu, G2GCpu and ExactRepulsionCpu, optimize.TsneOptimizer) and io.sparkgpu.common
 * (DetMath, FixedPoint).
 *
 * The sections are in include/tsne/, one header per phase, each starting with its own data layout (SoA/AoS, index
 * types) and launch shape; this file only gathers them into one module (one fatbin), so the kernel names Java loads
 * are those of the sections. Shared code: include/fixed128.cuh (128-bit fixed point), include/detmath.cuh
 * (deterministic exp/log), include/block.cuh (CUB block collectives); sizes the host mirrors:
 * include/layout/tsne.cuh.
 *
 * Determinism: nvcc runs with --fmad=false; every floating-point result a combiner or a later step depends on
 * is produced in a fixed order (or in exact fixed point), so a retried task reproduces it bit for bit.
 */

#include "tsne/knn.cuh"        /* tsne_knn_tile, tsne_knn_tile8 */
#include "tsne/affinities.cuh" /* tsne_aff_cond, tsne_aff_math */
#include "tsne/attractive.cuh" /* tsne_attr_sell_d1..d3 */
#include "tsne/grid.cuh"       /* tsne_s2g_*, tsne_g2s_* (S2G, G2S + Phi2Force, z) */
#include "tsne/g2g.cuh"        /* tsne_g2g_* */
#include "tsne/iteration.cuh"  /* tsne_minmax, tsne_fixed_to_double, tsne_step, tsne_step_dz */
#include "tsne/exact.cuh"      /* tsne_exact_d1..d3 (exact O(n^2) repulsion and z) */
#include "tsne/boxes.cuh"      /* tsne_box_count_*, tsne_box_scan, tsne_box_scatter, tsne_s2g_sorted_* (S2G by boxes) */
