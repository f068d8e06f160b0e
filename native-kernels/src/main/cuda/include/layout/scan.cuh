/*
 * Host/device contract of the scan module (io.sparkgpu.scan.ScanGpu): block size, the layouts of the parameter arrays
 * and of the shared strip. Checked against the Java constants by io.sparkgpu.scan.ScanKernelLayoutTest (format: see
 * include/layout/kmeans.cuh). The log table's size is in include/detmath.cuh (DetMath).
 */
#pragma once

/* Threads per block of every scan kernel (ScanGpu.BLOCK; cub::BlockReduce / BlockScan need it exact). */
#define SCAN_BLOCK 256

/* Excluded boxes per scan, 6 ints each {ax, bx, ay, by, az, bz} (ScanSpec.MAX_EXCLUDED). */
#define SCAN_MAX_EXCL 64

/* Dynamic shared memory of the SHARED scan kernels (*_s): the strip's case and baseline prefix arrays, nx + 1 longs
 * each (ScanGpu.stripBytes). */
#define SCAN_STRIP_BYTES(nx) (16 * ((nx) + 1))

/* prm long long[SCAN_P_COUNT] (ScanGpu.P_*): shape, range mapping, index slice and constraints. */
#define SCAN_P_DIMS 0
#define SCAN_P_NX 1
#define SCAN_P_NY 2
#define SCAN_P_NZ 3
#define SCAN_P_TX 4
#define SCAN_P_TY 5
#define SCAN_P_WX 6
#define SCAN_P_SY 7
#define SCAN_P_SZ 8
#define SCAN_P_LO 9
#define SCAN_P_HI 10
#define SCAN_P_K 11
#define SCAN_P_Q 12
#define SCAN_P_U0 13
#define SCAN_P_U1 14
#define SCAN_P_MINC 15
#define SCAN_P_MAXC 16
#define SCAN_P_MAXBQ 17
#define SCAN_P_BQTOT 18
#define SCAN_P_DIR 19
#define SCAN_P_NEXCL 20
#define SCAN_P_COUNT 21

/* dprm double[SCAN_D_COUNT] (ScanGpu.D_*): the model's constants (ScanTables: total cases, total baseline, f, g, v0,
 * N/2, the cases' fixed-point scale). */
#define SCAN_D_C 0
#define SCAN_D_B 1
#define SCAN_D_F 2
#define SCAN_D_G 3
#define SCAN_D_V0 4
#define SCAN_D_HALFN 5
#define SCAN_D_CSCALE 6
#define SCAN_D_COUNT 7
