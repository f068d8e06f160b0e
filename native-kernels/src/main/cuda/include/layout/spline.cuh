/*
 * Host/device contract of the spline module (io.sparkgpu.spline.SplineGpu, SplineConfig): codes of the spline kind
 * and of the extrapolation mode, launch sizes, the search guide in shared memory and the rational inverse's
 * iteration cap. Checked against the Java constants by io.sparkgpu.spline.SplineKernelLayoutTest.
 */
#pragma once

/* SplineConfig.Kind.code */
#define SPLINE_KIND_SCHUMAKER 0
#define SPLINE_KIND_RATIONAL 1

/* SplineConfig.Extrapolate.code */
#define SPLINE_EXTRAP_CLIP 0
#define SPLINE_EXTRAP_LINEAR 1
#define SPLINE_EXTRAP_NAN 2
#define SPLINE_EXTRAP_ERROR 3

/* Threads per block of every spline kernel (SplineGpu.THREADS). */
#define SPLINE_THREADS 256
/* Entries of the search guide each evaluation block keeps in shared memory (SplineGpu.GUIDE): every stride-th knot
 * (or knot value), stride = ceil(T / SPLINE_GUIDE); static shared memory of 8 * SPLINE_GUIDE bytes. 32 KB: the
 * kernels' registers (56 and 64 per thread on sm_90) allow 4 blocks of 256 per SM anyway, and 4 x 32 KB fits the
 * shared memory of an SM on sm_80 (164 KB) and sm_90 (228 KB), so occupancy is unchanged while each search does one
 * global bisection step fewer than with 2048 entries (random queries over 10^6 knots are bound by the L2 sectors
 * those steps fetch). */
#define SPLINE_GUIDE 4096

/* Iterations of the rational piece's safeguarded Newton inverse (SplineCpu.NEWTON_MAX_ITER). */
#define SPLINE_NEWTON_MAX_ITER 100

/* Largest magnitude of an interval slope or a given slope (SplineCpu.MAX_SLOPE). */
#define SPLINE_MAX_SLOPE 1e300

/* The "no bad index" value of the bad slot (SplineGpu.NO_BAD). */
#define SPLINE_NO_BAD 0x7fffffff
