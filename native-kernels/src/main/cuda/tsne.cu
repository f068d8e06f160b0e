/*
 * t-SNE: exact kNN, perplexity-calibrated affinities, the attractive term, and the grid-interpolation repulsive
 * term (S2G, G2G, G2S, Phi2Force). CPU twins live in io.sparkgpu.tsne (TsneAffinities, TsneForces,
 * GridConvolution). Each section below starts with its own data layout (SoA/AoS, index types) and launch shape.
 *
 * Determinism: nvcc runs with --fmad=false; every floating-point result a combiner or a later step depends on
 * is produced in a fixed order (or in exact fixed point), so a retried task reproduces it bit for bit.
 */

typedef long long i64;
typedef unsigned long long u64;

/* ===================================================================================== section: kNN, affinities */

/* end of section: kNN, affinities */


/* ========================================================================== section: attractive, S2G, G2S, Z */

/* end of section: attractive, S2G, G2S, Z */


/* =========================================================================================== section: G2G */

/* end of section: G2G */
