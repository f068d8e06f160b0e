/*
 * t-SNE section helper: the heavy-tailed similarity kernel w(d2) = (1 + d2 / dof)^-dof (Kobak, Linderman,
 * Steinerberger, Kluger, Berens, "Heavy-tailed kernels reveal a finer cluster structure in t-SNE
 * visualisations", ECML PKDD 2019), dof > 0 the degrees of freedom; dof = 1 is standard t-SNE's Cauchy kernel
 * 1 / (1 + d2). Shared by the attractive, exact, G2G and G2S sections. Java twin: io.sparkgpu.tsne.repulsion.TsneKernel.
 *
 * With t = 1 + d2 / dof: the attractive weight is p / t, the repulsive force weight w / t = t^-(dof + 1) and the
 * normalisation term w = t^-dof. dof == 1 keeps the operations the kernels had before the option (t = 1 + d2,
 * w = 1 / t, w / t = w * w, grid kernel 1 / (t * t)), so the standard fit's bits did not change; any other dof uses
 * the deterministic power t^-a = e^(-(a ln t)) of include/detmath.cuh (DetMath on the host).
 */
#pragma once

#include "common.cuh"
#include "detmath.cuh"

/* t = 1 + d2 / dof (TsneKernel.base). */
__device__ __forceinline__ double tsne_kernel_base(double d2, double dof) {
    return __dadd_rn(1.0, dof == 1.0 ? d2 : __ddiv_rn(d2, dof));
}

/* t^-a for t >= 1, a > 0 (TsneKernel.pow). */
__device__ __forceinline__ double tsne_kernel_pow(double t, double a) {
    return dm_exp(-__dmul_rn(a, dm_log(t)));
}
