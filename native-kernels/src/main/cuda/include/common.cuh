/*
 * Types shared by every kernel file. Headers under include/ are included by the capability files
 * (kmeans.cu, isotonic.cu, scan.cu, tsne.cu); each .cu is one module (one fatbin) that Java loads by name.
 */
#pragma once

typedef long long i64;
typedef unsigned long long u64;

/* All 32 lanes of a warp (warp-synchronous intrinsics). */
#define FULL_MASK 0xffffffffu
