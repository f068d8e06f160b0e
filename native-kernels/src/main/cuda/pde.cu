/*
 * FitzHugh-Nagumo reaction-diffusion on 1-D axons (module "pde"), the GPU side of io.sparkgpu.pde.FhnCpu.
 *
 *   v_t = D v_xx + v (a - v) (v - 1) - w + I p(x) s(t),   w_t = eps (v - gamma w)
 *
 * Every kernel computes what FhnCpu computes with the same + - * / in the same order; the module is built with
 * --fmad=false (native-kernels/pom.xml), so no multiply-add is contracted and the bits equal the twin's. exp is never
 * evaluated here: the stimulus profile p, the signal s(t_k) and the initial state come from the host.
 *
 * Per-simulation parameters: prm[0..S) = a, [S..2S) = eps, [2S..3S) = gamma, [3S..4S) = I, [4S..5S) = D.
 * Boundary codes: 0 Dirichlet, 1 Neumann (ghost node, second order), 2 periodic (FhnSetup.BC_*).
 *
 * Kernels:
 *   pde_explicit_step  one FTCS step, one thread per cell, axon-major (cell i of axon s at s n + i, coalesced);
 *                      probe crossings by the probe cells' threads, max v by a warp-segmented max + atomicMax on
 *                      an order-preserving integer key (max is exact, so the order does not matter).
 *   pde_explicit_steps up to TB_KMAX FTCS steps per launch by temporal blocking: a block loads its tile of 256 cells
 *                      of one axon plus K halo cells each side into shared memory, steps K times there (the valid
 *                      part shrinks by one cell per step and side, except at a true end of the axon, whose boundary
 *                      rule needs no outside cell) and writes its tile back: one global read and write per K steps
 *                      instead of per step. Each cell's update is pde_explicit_step's expression, so the bits equal
 *                      the twin's; probes and the max are observed by the tile's owning threads at every step.
 *   pde_explicit_resident  whole short axons (n <= 1024) resident in shared memory for all the steps of a launch
 *                      (one global load and store per launch instead of per step).
 *   pde_explicit_lanes_C   the parameter sweep's kernel for axons of up to 32 LANES_CMAX cells: whole axons in
 *                      registers, C cells per lane, neighbours by warp shuffles, no shared memory or barrier.
 *   pde_cn_thomas      Crank-Nicolson + Newton, one thread per axon over a chunk of steps, interleaved layout
 *                      (cell i of axon s at i S + s: consecutive threads read consecutive words). Coefficients are
 *                      formed on the fly in the Thomas forward sweep; the Newton test (max |delta| <= tol) is the
 *                      thread's own, so no host round trip per step or iteration. Periodic: Sherman-Morrison.
 *   pde_cn_rhs / pde_cn_system / pde_cn_update / pde_cn_check / pde_cn_finish
 *                      Crank-Nicolson + Newton with cyclic reduction, system-major, one thread per cell; a per-system
 *                      done flag set on the device by pde_cn_check makes the remaining enqueued iterations no-ops.
 *   pde_cr_forward / pde_cr_backward   one level of cyclic reduction for every system (long systems).
 *   pde_cr_block       one block per system: the remaining levels (all of them for systems that fit), in shared
 *                      memory when the whole system fits, else in place in global memory.
 *   pde_thomas_batch   batched Thomas on the interleaved layout (c <- c', d <- solution): the benchmark's, and the
 *                      solver of both half steps of the 2-D ADI scheme.
 *   pde_thomas_batch_shared  the same with c', d' in shared memory (5 doubles of traffic per unknown, not 9): a
 *                      benchmark variant for systems of up to a few hundred unknowns.
 *   pde_tridiag_partition_R4 / _R8 / _R16
 *                      the partitioned batched solver (Thomas/PCR hybrid) on pde_thomas_batch's layout, a, b, c only
 *                      read, d <- solution (5 doubles of traffic per unknown): a thread per chunk of R rows in
 *                      registers, a block of SB systems x K = ceil(n / R) chunks, the chunks' interface unknowns by
 *                      PCR in shared memory; n <= 4096 (K within the block's 1024 / 512 / 256 threads at SB = 1).
 *                      Twin: FhnCpu.partitionInterleaved, whatever SB.
 *   pde_tridiag_partition_R16_C2 / _C4 / _C8
 *                      the same with each system's chunks spread over the 2, 4 or 8 blocks of a thread-block
 *                      cluster (sm_90), the PCR's reads of other blocks' chunks through distributed shared memory:
 *                      SB systems per cluster, so long systems keep wide row accesses. Same bits.
 *   pde_tridiag_partition_R8_S / _R16_S
 *                      the same with persistent blocks, each taking groups of SB systems in turn: a group's rows
 *                      copied into shared memory (cp.async, sm_80) while the block solves the group before, so one
 *                      block an SM overlaps its loads with its arithmetic. Same bits.
 *   ..._T              every partitioned kernel also on a tiled layout (tiles of T = 2^ts interleaved systems, T
 *                      1..32 (argument ts), each tile contiguous: row i of system j at (j / T) T n + T i + j % T).
 *                      Same bits.
 *   pde_adi_rhs_rows / pde_adi_rhs_cols / pde_adi_w
 *                      the 2-D Peaceman-Rachford ADI step (io.sparkgpu.pde.Fhn2d): right-hand sides of the row solve
 *                      (written transposed, so the row systems are interleaved) and of the column solve (read from
 *                      the transposed v*, written row-major), then the implicit w update; one thread per node.
 *   pde_copy           a plain copy (the benchmark's bandwidth reference).
 */
#include "common.cuh"
#include "layout/pde.cuh"

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define BC_DIRICHLET 0
#define BC_NEUMANN 1
#define BC_PERIODIC 2

__device__ __forceinline__ double fhn_f(double v, double a) {
    return (v * (a - v)) * (v - 1.0);
}

__device__ __forceinline__ double fhn_fp(double v, double a) {
    return ((2.0 * (1.0 + a)) - 3.0 * v) * v - a;
}

/* An integer whose signed order is the order of the (non-NaN) doubles; its own inverse. */
__device__ __forceinline__ i64 order_key(double x) {
    i64 b = __double_as_longlong(x);
    return b >= 0 ? b : (b ^ 0x7fffffffffffffffLL);
}

/* Upward crossings of the threshold by the probe cells (FhnCpu.Observer.step). */
__device__ __forceinline__ void observe(int i, int s, int pn, int pf, double oldv, double newv, double th, double tk,
                                       double dt, double* tNear, double* tFar, int* pulses) {
    if (i == pn && isnan(tNear[s]) && oldv < th && newv >= th) {
        tNear[s] = tk + dt * ((th - oldv) / (newv - oldv));
    }
    if (i == pf && oldv < th && newv >= th) {
        if (isnan(tFar[s])) {
            tFar[s] = tk + dt * ((th - oldv) / (newv - oldv));
        }
        pulses[s] = pulses[s] + 1;
    }
}

/* One step of a probe cell from old to nw, in the registers of the probe's owner: an upward crossing of th sets the
 * near probe's first time and the far probe's first time and pulse count (FhnCpu.Observer.step's arithmetic). */
__device__ __forceinline__ void probe_step(bool near, bool far, double old, double nw, double th, i64 k, double dt,
                                           double& tn, double& tf, int& pu) {
    if ((near || far) && old < th && nw >= th) {
        double tc = (double) k * dt + dt * ((th - old) / (nw - old));
        if (near && isnan(tn)) {
            tn = tc;
        }
        if (far) {
            if (isnan(tf)) {
                tf = tc;
            }
            pu++;
        }
    }
}

/* The max of a key per segment over a warp whose lanes may belong to several axons (contiguous), then one atomic
 * per axon and warp. seg < 0: an idle lane. Every lane must call it. */
__device__ __forceinline__ void segmented_key_max(i64 seg, i64 key, i64* maxKey) {
    int lane = threadIdx.x & 31;
    for (int off = 1; off < 32; off <<= 1) {
        i64 ok = __shfl_down_sync(FULL_MASK, key, off);
        i64 os = __shfl_down_sync(FULL_MASK, seg, off);
        if (lane + off < 32 && os == seg && ok > key) {
            key = ok;
        }
    }
    i64 prev = __shfl_up_sync(FULL_MASK, seg, 1);
    if (seg >= 0 && (lane == 0 || prev != seg)) {
        atomicMax((long long*) &maxKey[seg], (long long) key);
    }
}

/* segmented_key_max of v; NaN is ignored (as the twin's "if (x > max)"). */
__device__ __forceinline__ void segmented_max(i64 seg, double x, i64* maxKey) {
    segmented_key_max(seg, (seg >= 0 && !isnan(x)) ? order_key(x) : order_key(-INFINITY), maxKey);
}

/* One FTCS update of v (FhnCpu.explicitStep's expression): the one-step and the temporally blocked kernels share it. */
__device__ __forceinline__ double ftcs_v(double vi, double wi, double vl, double vr, double a, double D, double amp,
                                         double prof, double dt, double idx2) {
    double lap = ((vl + vr) - (vi + vi)) * idx2;
    return vi + dt * ((((D * lap) + fhn_f(vi, a)) - wi) + amp * prof);
}

extern "C" __global__ void pde_explicit_step(int S, int n, const double* __restrict__ v, const double* __restrict__ w,
                                             double* __restrict__ vn, double* __restrict__ wn,
                                             const double* __restrict__ prm, const double* __restrict__ prof,
                                             double sg, double dt, double idx2, int bc, int pn, int pf, double th,
                                             double tk, double* tNear, double* tFar, int* pulses, i64* maxKey) {
    i64 g = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    i64 total = (i64) S * n;
    i64 seg = -1;
    double vnew = 0.0;
    if (g < total) {
        int s = (int) (g / n);
        int i = (int) (g - (i64) s * n);
        i64 base = g - i;
        seg = s;
        double vi = v[g];
        double wi = w[g];
        double a = prm[s];
        double eps = prm[S + s];
        double gam = prm[2 * S + s];
        double cur = prm[3 * S + s];
        double D = prm[4 * S + s];
        wn[g] = wi + dt * (eps * (vi - gam * wi));
        bool hold = false;
        double vl = 0.0;
        double vr = 0.0;
        if (bc == BC_PERIODIC) {
            vl = v[base + (i == 0 ? n - 1 : i - 1)];
            vr = v[base + (i == n - 1 ? 0 : i + 1)];
        } else if (bc == BC_NEUMANN) {
            vl = v[base + (i == 0 ? 1 : i - 1)];
            vr = v[base + (i == n - 1 ? n - 2 : i + 1)];
        } else if (i == 0 || i == n - 1) {
            hold = true;
        } else {
            vl = v[g - 1];
            vr = v[g + 1];
        }
        if (hold) {
            vnew = vi;
        } else {
            vnew = ftcs_v(vi, wi, vl, vr, a, D, cur * sg, prof[i], dt, idx2);
        }
        vn[g] = vnew;
        observe(i, s, pn, pf, vi, vnew, th, tk, dt, tNear, tFar, pulses);
    }
    segmented_max(seg, vnew, maxKey);
}

#define TB_THREADS 256
#define TB_KMAX 32
#define TB_W (TB_THREADS + 2 * TB_KMAX)

extern "C" __global__ void __launch_bounds__(TB_THREADS)
pde_explicit_steps(int S, int n, int tiles, int K, const double* __restrict__ v, const double* __restrict__ w,
                   double* __restrict__ vn, double* __restrict__ wn, const double* __restrict__ prm,
                   const double* __restrict__ prof, const double* __restrict__ sgs, double dt, double idx2, int bc,
                   int pn, int pf, double th, i64 k0, double* tNear, double* tFar, int* pulses, i64* maxKey) {
    __shared__ double sv[2][TB_W];
    __shared__ double sw[2][TB_W];
    __shared__ i64 warpMax[TB_THREADS / 32];
    int s = blockIdx.x / tiles;
    int t = blockIdx.x - s * tiles;
    int start = t * TB_THREADS;
    int end = min(start + TB_THREADS, n);
    bool per = bc == BC_PERIODIC;
    int lo = per ? start - K : max(0, start - K);
    int hi = per ? end + K : min(n, end + K);
    int W = hi - lo;
    i64 base = (i64) s * n;
    double a = prm[s];
    double eps = prm[S + s];
    double gam = prm[2 * S + s];
    double cur = prm[3 * S + s];
    double D = prm[4 * S + s];
    for (int p = threadIdx.x; p < W; p += blockDim.x) {
        int i = lo + p;
        if (per) {
            i = ((i % n) + n) % n;
        }
        sv[0][p] = v[base + i];
        sw[0][p] = w[base + i];
    }
    __syncthreads();
    i64 key = order_key(-INFINITY);
    int c = 0;
    for (int m = 0; m < K; m++) {
        double amp = cur * sgs[m];
        double tk = (double) (k0 + m) * dt;
        for (int p = threadIdx.x; p < W; p += blockDim.x) {
            int i = lo + p;
            int ig = per ? ((i % n) + n) % n : i;
            double vi = sv[c][p];
            double wi = sw[c][p];
            double wnew = wi + dt * (eps * (vi - gam * wi));
            double vl = 0.0;
            double vr = 0.0;
            bool hold = false;
            bool ok = true;
            if (per) {
                ok = p > 0 && p < W - 1;
                if (ok) {
                    vl = sv[c][p - 1];
                    vr = sv[c][p + 1];
                }
            } else if (bc == BC_NEUMANN) {
                if (i == 0) {
                    vl = sv[c][p + 1];
                } else if (p == 0) {
                    ok = false;
                } else {
                    vl = sv[c][p - 1];
                }
                if (i == n - 1) {
                    vr = sv[c][p - 1];
                } else if (p == W - 1) {
                    ok = false;
                } else {
                    vr = sv[c][p + 1];
                }
            } else if (i == 0 || i == n - 1) {
                hold = true;
            } else {
                ok = p > 0 && p < W - 1;
                if (ok) {
                    vl = sv[c][p - 1];
                    vr = sv[c][p + 1];
                }
            }
            double vnew = vi; /* held, or outside the valid part (never written back) */
            if (!hold && ok) {
                vnew = ftcs_v(vi, wi, vl, vr, a, D, amp, prof[ig], dt, idx2);
            }
            sv[1 - c][p] = vnew;
            sw[1 - c][p] = wnew;
            if (i >= start && i < end) {
                observe(i, s, pn, pf, vi, vnew, th, tk, dt, tNear, tFar, pulses);
                if (!isnan(vnew)) {
                    i64 kk = order_key(vnew);
                    key = kk > key ? kk : key;
                }
            }
        }
        __syncthreads();
        c = 1 - c;
    }
    for (int p = threadIdx.x; p < W; p += blockDim.x) {
        int i = lo + p;
        if (i >= start && i < end) {
            vn[base + i] = sv[c][p];
            wn[base + i] = sw[c][p];
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        i64 o = __shfl_down_sync(FULL_MASK, key, off);
        key = o > key ? o : key;
    }
    if ((threadIdx.x & 31) == 0) {
        warpMax[threadIdx.x >> 5] = key;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        i64 mk = warpMax[0];
        for (int q = 1; q < (int) (blockDim.x >> 5); q++) {
            mk = warpMax[q] > mk ? warpMax[q] : mk;
        }
        atomicMax((long long*) &maxKey[s], (long long) mk);
    }
}

/* Up to K FTCS steps of whole short axons resident in shared memory (the sweep's kernel): A axons of n cells per
 * block, thread t is cell t % n of axon t / n, v double-buffered in shared memory (2 A n doubles), w in the thread's
 * register; one global load and store of the state per launch, whatever K (the host passes every step of the run,
 * or chunks of many). Each update is pde_explicit_step's expression, so the bits equal the twin's. Probe crossings
 * are kept in the probe threads' registers and stored at the end, the max is a per-thread key reduced once per launch
 * (segmented warp max + one atomic per axon and warp), frames (when every > 0) are written straight from shared
 * memory. blockDim.x: A n rounded up to a multiple of 32 (idle lanes take part in the warp reduction only). */
extern "C" __global__ void __launch_bounds__(1024)
pde_explicit_resident(int S, int n, int A, int K, double* __restrict__ v, double* __restrict__ w,
                      const double* __restrict__ prm, const double* __restrict__ prof, const double* __restrict__ sgs,
                      double dt, double idx2, int bc, int pn, int pf, double th, i64 k0, double* tNear, double* tFar,
                      int* pulses, i64* maxKey, double* frames, int every) {
    extern __shared__ double rs[];
    int la = threadIdx.x / n;
    int i = threadIdx.x - la * n;
    int s = blockIdx.x * A + la;
    bool live = la < A && s < S;
    double* buf0 = rs;
    double* buf1 = rs + A * n;
    int p = la * n;
    i64 g = (i64) s * n + i;
    double a = 0.0, eps = 0.0, gam = 0.0, cur = 0.0, D = 0.0, pr = 0.0, wi = 0.0;
    double tn = 0.0, tf = 0.0;
    int pu = 0;
    if (live) {
        a = prm[s];
        eps = prm[S + s];
        gam = prm[2 * S + s];
        cur = prm[3 * S + s];
        D = prm[4 * S + s];
        pr = prof[i];
        buf0[p + i] = v[g];
        wi = w[g];
        if (i == pn) {
            tn = tNear[s];
        }
        if (i == pf) {
            tf = tFar[s];
            pu = pulses[s];
        }
    }
    __syncthreads();
    i64 key = order_key(-INFINITY);
    double* cu = buf0;
    double* nx = buf1;
    for (int m = 0; m < K; m++) {
        if (live) {
            double vi = cu[p + i];
            double wnew = wi + dt * (eps * (vi - gam * wi));
            double vnew = vi;
            if (bc == BC_PERIODIC) {
                double vl = cu[p + (i == 0 ? n - 1 : i - 1)];
                double vr = cu[p + (i == n - 1 ? 0 : i + 1)];
                vnew = ftcs_v(vi, wi, vl, vr, a, D, cur * sgs[m], pr, dt, idx2);
            } else if (bc == BC_NEUMANN) {
                double vl = cu[p + (i == 0 ? 1 : i - 1)];
                double vr = cu[p + (i == n - 1 ? n - 2 : i + 1)];
                vnew = ftcs_v(vi, wi, vl, vr, a, D, cur * sgs[m], pr, dt, idx2);
            } else if (i != 0 && i != n - 1) {
                vnew = ftcs_v(vi, wi, cu[p + i - 1], cu[p + i + 1], a, D, cur * sgs[m], pr, dt, idx2);
            }
            nx[p + i] = vnew;
            wi = wnew;
            i64 k = k0 + m;
            probe_step(i == pn, i == pf, vi, vnew, th, k, dt, tn, tf, pu);
            if (!isnan(vnew)) {
                i64 kk = order_key(vnew);
                key = kk > key ? kk : key;
            }
            if (every > 0 && (k + 1) % every == 0) {
                frames[(((k + 1) / every) * S + s) * n + i] = vnew;
            }
        }
        __syncthreads();
        double* t = cu;
        cu = nx;
        nx = t;
    }
    if (live) {
        v[g] = cu[p + i];
        w[g] = wi;
        if (i == pn) {
            tNear[s] = tn;
        }
        if (i == pf) {
            tFar[s] = tf;
            pulses[s] = pu;
        }
    }
    segmented_key_max(live ? (i64) s : -1, key, maxKey);
}

/* Whole short axons resident in registers (the sweep's kernel for n <= 32 LANES_CMAX cells): an axon is a segment
 * of L lanes (L a power of two dividing 32), lane l of the segment holds cells l C .. l C + C - 1 in registers (v, w
 * and the profile), cells n .. L C - 1 are padding (v = -inf, held, never observed or stored). A step needs the
 * neighbouring lanes' edge values only: two shuffles within the segment, no shared memory and no barrier, and C
 * independent cell updates per lane to hide the fp64 latency. Boundaries: Dirichlet holds cells 0 and n - 1;
 * Neumann's ghost v_{-1} = v_1 is the left value of cell 0 taken from its right, and v_n = v_{n-2} likewise; periodic
 * brings v_{n-1} and v_0 across the segment by two more shuffles. Padding cells start at -inf and turn NaN: they
 * feed only cell n - 1's right value, which every boundary holds or replaces. Each update is ftcs_v with
 * pde_explicit_step's operands, so the bits equal the twin's. Observables as pde_explicit_resident: probe crossings
 * in the owning lane's registers, the max per lane as a double taken in the order of the keys (NaN never, -0 < +0),
 * reduced per segment and one atomic per axon. init != null: the launch starts from init (n values,
 * every axon) with w = 0 instead of reading v and w; v == null: the final state is not stored. */
#define LANES_CMAX 16

template <int C>
__device__ __forceinline__ void explicit_lanes(int S, int n, int L, int K, double* __restrict__ vg,
                                               double* __restrict__ wg, const double* __restrict__ init,
                                               const double* __restrict__ prm, const double* __restrict__ prof,
                                               const double* __restrict__ sgs, double dt, double idx2, int bc, int pn,
                                               int pf, double th, i64 k0, double* tNear, double* tFar, int* pulses,
                                               i64* maxKey, double* frames, int every) {
    int gt = blockIdx.x * blockDim.x + threadIdx.x;
    int s = gt / L;
    int sl = threadIdx.x & (L - 1);
    bool live = s < S;
    int first = sl * C;
    double v[C], w[C], pr[C];
    double a = 0.0, eps = 0.0, gam = 0.0, cur = 0.0, D = 0.0;
    i64 g = (i64) s * n + first;
    if (live) {
        a = prm[s];
        eps = prm[S + s];
        gam = prm[2 * S + s];
        cur = prm[3 * S + s];
        D = prm[4 * S + s];
    }
#pragma unroll
    for (int j = 0; j < C; j++) {
        int i = first + j;
        bool real = live && i < n;
        v[j] = real ? (init != nullptr ? init[i] : vg[g + j]) : -INFINITY;
        w[j] = real && init == nullptr ? wg[g + j] : 0.0;
        pr[j] = real ? prof[i] : 0.0;
    }
    bool dir = bc == BC_DIRICHLET;
    bool per = bc == BC_PERIODIC;
    bool firstLane = sl == 0;
    bool holdFirst = firstLane && dir;     /* Dirichlet holds cell 0 (lane 0, register 0) */
    int ownerLast = (n - 1) / C;           /* the segment lane holding cell n - 1 */
    int jLast = sl == ownerLast ? (n - 1) - first : -1;
    int jHold = dir ? jLast : -1;          /* Dirichlet holds cell n - 1 */
    int jEdge = dir ? -1 : jLast;          /* Neumann and periodic replace the right value of cell n - 1 */
    int jn = live && pn >= first && pn < first + C ? pn - first : -1;
    int jf = live && pf >= first && pf < first + C ? pf - first : -1;
    double tn = 0.0, tf = 0.0;
    int pu = 0;
    if (jn >= 0) {
        tn = tNear[s];
    }
    if (jf >= 0) {
        tf = tFar[s];
        pu = pulses[s];
    }
    double mx = -INFINITY;
    int toFrame = every > 0 ? every - (int) (k0 % every) : 0;
    double sg = K > 0 ? __ldg(&sgs[0]) : 0.0;
#pragma unroll 2
    for (int m = 0; m < K; m++) {
        double sgNext = m + 1 < K ? __ldg(&sgs[m + 1]) : 0.0;
        double amp = cur * sg;
        double lft = __shfl_up_sync(FULL_MASK, v[C - 1], 1, L);
        double rgt = __shfl_down_sync(FULL_MASK, v[0], 1, L);
        double pRight = 0.0;
        if (per) {
            double last = 0.0;
#pragma unroll
            for (int j = 0; j < C; j++) {
                last = j == jLast ? v[j] : last;
            }
            double pLeft = __shfl_sync(FULL_MASK, last, ownerLast, L);
            pRight = __shfl_sync(FULL_MASK, v[0], 0, L);
            if (firstLane) {
                lft = pLeft;
            }
        } else if (bc == BC_NEUMANN && firstLane) {
            lft = C > 1 ? v[C > 1 ? 1 : 0] : rgt;
        }
        double vn[C];
#pragma unroll
        for (int j = 0; j < C; j++) {
            double vi = v[j];
            double wi = w[j];
            double vl = j == 0 ? lft : v[j > 0 ? j - 1 : 0];
            double vr = j == C - 1 ? rgt : v[j < C - 1 ? j + 1 : 0];
            if (j == jEdge) {
                vr = per ? pRight : vl;
            }
            w[j] = wi + dt * (eps * (vi - gam * wi));
            double x = ftcs_v(vi, wi, vl, vr, a, D, amp, pr[j], dt, idx2);
            if ((j == 0 && holdFirst) || j == jHold) {
                x = vi;
            }
            vn[j] = x; /* padding cells (-inf, then NaN) feed only cell n - 1's right value, which is held or replaced */
        }
        i64 k = k0 + m;
        if (jn >= 0 || jf >= 0) {
#pragma unroll
            for (int j = 0; j < C; j++) {
                probe_step(j == jn, j == jf, v[j], vn[j], th, k, dt, tn, tf, pu);
            }
        }
#pragma unroll
        for (int j = 0; j < C; j++) {
            /* the max in the order of the keys (-0 < +0), NaN (and the padding) never taken */
            if (vn[j] >= mx && (vn[j] > mx || __double_as_longlong(vn[j]) == 0)) {
                mx = vn[j];
            }
            v[j] = vn[j];
        }
        if (every > 0 && --toFrame == 0) {
            toFrame = every;
            i64 base = (((k + 1) / every) * S + s) * (i64) n + first;
#pragma unroll
            for (int j = 0; j < C; j++) {
                if (live && first + j < n) {
                    frames[base + j] = v[j];
                }
            }
        }
        sg = sgNext;
    }
    if (live && vg != nullptr) {
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (first + j < n) {
                vg[g + j] = v[j];
                wg[g + j] = w[j];
            }
        }
    }
    if (jn >= 0) {
        tNear[s] = tn;
    }
    if (jf >= 0) {
        tFar[s] = tf;
        pulses[s] = pu;
    }
    i64 key = order_key(mx);
    for (int off = L >> 1; off > 0; off >>= 1) {
        i64 o = __shfl_xor_sync(FULL_MASK, key, off, L);
        key = o > key ? o : key;
    }
    if (live && firstLane) {
        atomicMax((long long*) &maxKey[s], (long long) key);
    }
}

#define PDE_LANES_KERNEL(C)                                                                                           \
    extern "C" __global__ void __launch_bounds__(128, C <= 8 ? 4 : 2)                                                 \
    pde_explicit_lanes_##C(int S, int n, int L, int K, double* __restrict__ v, double* __restrict__ w,                \
                           const double* __restrict__ init, const double* __restrict__ prm,                          \
                           const double* __restrict__ prof, const double* __restrict__ sgs, double dt, double idx2,  \
                           int bc, int pn, int pf, double th, i64 k0, double* tNear, double* tFar, int* pulses,      \
                           i64* maxKey, double* frames, int every) {                                                  \
        explicit_lanes<C>(S, n, L, K, v, w, init, prm, prof, sgs, dt, idx2, bc, pn, pf, th, k0, tNear, tFar, pulses,  \
                          maxKey, frames, every);                                                                     \
    }
PDE_LANES_KERNEL(1)
PDE_LANES_KERNEL(2)
PDE_LANES_KERNEL(3)
PDE_LANES_KERNEL(4)
PDE_LANES_KERNEL(5)
PDE_LANES_KERNEL(6)
PDE_LANES_KERNEL(7)
PDE_LANES_KERNEL(8)
PDE_LANES_KERNEL(9)
PDE_LANES_KERNEL(10)
PDE_LANES_KERNEL(11)
PDE_LANES_KERNEL(12)
PDE_LANES_KERNEL(13)
PDE_LANES_KERNEL(14)
PDE_LANES_KERNEL(15)
PDE_LANES_KERNEL(16)

/* ------------------------------------------------------------------------------------ Crank-Nicolson */

struct CnCoef {
    double hd, alpha, beta, dd;
};

__device__ __forceinline__ CnCoef cn_coef(double dt, double eps, double gam, double D, double idx2) {
    CnCoef c;
    c.hd = 0.5 * dt;
    double he = c.hd * eps;
    double h = he * gam;
    c.alpha = (1.0 - h) / (1.0 + h);
    c.beta = he / (1.0 + h);
    c.dd = D * idx2;
    return c;
}

/* The Newton row i at u (FhnCpu.cnSystem): ul, ui, ur are u_{i-1}, u_i, u_{i+1} after the boundary's wrap/ghost. */
__device__ __forceinline__ void cn_row(int i, int n, int bc, double ul, double ui, double ur, double r, double a,
                                       double D, double idx2, const CnCoef& c, double& sa, double& sb, double& sc,
                                       double& sd) {
    if (bc == BC_DIRICHLET && (i == 0 || i == n - 1)) {
        sa = 0.0;
        sb = 1.0;
        sc = 0.0;
        sd = 0.0;
        return;
    }
    double lap = ((ul + ur) - (ui + ui)) * idx2;
    double g = (ui - c.hd * (((D * lap) + fhn_f(ui, a)) - c.beta * ui)) - r;
    sb = 1.0 - c.hd * (((-2.0 * c.dd) + fhn_fp(ui, a)) - c.beta);
    sd = -g;
    double off = -(c.hd * c.dd);
    double off2 = -(c.hd * (2.0 * c.dd));
    if (bc == BC_NEUMANN && i == 0) {
        sa = 0.0;
        sc = off2;
    } else if (bc == BC_NEUMANN && i == n - 1) {
        sa = off2;
        sc = 0.0;
    } else {
        sa = off;
        sc = off;
    }
    if (bc != BC_PERIODIC) {
        if (i == 0) {
            sa = 0.0;
        }
        if (i == n - 1) {
            sc = 0.0;
        }
    }
}

__device__ __forceinline__ int left_of(int i, int n, int bc) {
    return i == 0 ? (bc == BC_PERIODIC ? n - 1 : 1) : i - 1;
}

__device__ __forceinline__ int right_of(int i, int n, int bc) {
    return i == n - 1 ? (bc == BC_PERIODIC ? 0 : n - 2) : i + 1;
}

/* R_i (FhnCpu.cnRhs). */
__device__ __forceinline__ double cn_rhs(double vl, double vi, double vr, double wi, double a, double cur, double D,
                                         double p, double sg0, double sg1, double idx2, const CnCoef& c) {
    double src = (cur * sg0) * p + (cur * sg1) * p;
    double lap = ((vl + vr) - (vi + vi)) * idx2;
    return vi + c.hd * (((((D * lap + fhn_f(vi, a)) - wi) - c.alpha * wi) - c.beta * vi) + src);
}

extern "C" __global__ void pde_cn_thomas(int S, int n, double* __restrict__ v, double* __restrict__ w,
                                         double* __restrict__ u, double* __restrict__ R, double* __restrict__ cp,
                                         double* __restrict__ xp, double* __restrict__ zp,
                                         const double* __restrict__ prm, const double* __restrict__ prof,
                                         const double* __restrict__ sig, i64 k0, int count, double dt, double idx2,
                                         int bc, double tol, int maxNewton, int pn, int pf, double th,
                                         double* tNear, double* tFar, int* pulses, double* vmax, i64* newton,
                                         i64* unconv, double* frames, int every) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= S) {
        return;
    }
    const i64 St = S;
#define E(i) ((i64) (i) * St + s)
    double a = prm[s];
    double eps = prm[S + s];
    double gam = prm[2 * S + s];
    double cur = prm[3 * S + s];
    double D = prm[4 * S + s];
    CnCoef c = cn_coef(dt, eps, gam, D, idx2);
    double mx = vmax[s];
    i64 its = newton[s];
    i64 unc = unconv[s];
    for (int q = 0; q < count; q++) {
        i64 k = k0 + q;
        double sg0 = sig[q];
        double sg1 = sig[q + 1];
        for (int i = 0; i < n; i++) {
            double vi = v[E(i)];
            R[E(i)] = cn_rhs(v[E(left_of(i, n, bc))], vi, v[E(right_of(i, n, bc))], w[E(i)], a, cur, D, prof[i], sg0,
                             sg1, idx2, c);
            u[E(i)] = vi;
        }
        bool converged = false;
        for (int it = 0; it < maxNewton; it++) {
            double err = 0.0;
            if (bc != BC_PERIODIC) {
                double cprev = 0.0;
                double xprev = 0.0;
                for (int i = 0; i < n; i++) {
                    double sa, sb, sc, sd;
                    cn_row(i, n, bc, u[E(left_of(i, n, bc))], u[E(i)], u[E(right_of(i, n, bc))], R[E(i)], a, D,
                           idx2, c, sa, sb, sc, sd);
                    double m;
                    double ci;
                    double xi;
                    if (i == 0) {
                        m = sb;
                        ci = sc / m;
                        xi = sd / m;
                    } else {
                        m = sb - sa * cprev;
                        ci = sc / m;
                        xi = (sd - sa * xprev) / m;
                    }
                    cp[E(i)] = ci;
                    xp[E(i)] = xi;
                    cprev = ci;
                    xprev = xi;
                }
                double xn = xprev;
                for (int i = n - 1; i >= 0; i--) {
                    double xi = i == n - 1 ? xn : xp[E(i)] - cp[E(i)] * xn;
                    xn = xi;
                    u[E(i)] = u[E(i)] + xi;
                    double e = fabs(xi);
                    if (e > err) {
                        err = e;
                    }
                }
            } else {
                double top = 0.0;
                double bottom = 0.0;
                double g = 0.0;
                double cprev = 0.0;
                double xprev = 0.0;
                double zprev = 0.0;
                for (int i = 0; i < n; i++) {
                    double sa, sb, sc, sd;
                    cn_row(i, n, bc, u[E(left_of(i, n, bc))], u[E(i)], u[E(right_of(i, n, bc))], R[E(i)], a, D,
                           idx2, c, sa, sb, sc, sd);
                    double m;
                    double ci;
                    double xi;
                    double zi;
                    if (i == 0) {
                        top = sa;
                        g = -sb;
                        m = sb - g;
                        ci = sc / m;
                        xi = sd / m;
                        zi = g / m;
                    } else {
                        double bi = sb;
                        double z0 = 0.0;
                        if (i == n - 1) {
                            bottom = sc;
                            bi = sb - (bottom * top) / g;
                            z0 = bottom;
                        }
                        m = bi - sa * cprev;
                        ci = sc / m;
                        xi = (sd - sa * xprev) / m;
                        zi = (z0 - sa * zprev) / m;
                    }
                    cp[E(i)] = ci;
                    xp[E(i)] = xi;
                    zp[E(i)] = zi;
                    cprev = ci;
                    xprev = xi;
                    zprev = zi;
                }
                double xn = xprev;
                double zn = zprev;
                for (int i = n - 2; i >= 0; i--) {
                    double ci = cp[E(i)];
                    xn = xp[E(i)] - ci * xn;
                    zn = zp[E(i)] - ci * zn;
                    xp[E(i)] = xn;
                    zp[E(i)] = zn;
                }
                double q2 = top / g;
                double fact = (xp[E(0)] + q2 * xp[E(n - 1)]) / ((1.0 + zp[E(0)]) + q2 * zp[E(n - 1)]);
                for (int i = 0; i < n; i++) {
                    double xi = xp[E(i)] - fact * zp[E(i)];
                    u[E(i)] = u[E(i)] + xi;
                    double e = fabs(xi);
                    if (e > err) {
                        err = e;
                    }
                }
            }
            its++;
            if (err <= tol) {
                converged = true;
                break;
            }
        }
        if (!converged) {
            unc++;
        }
        double oldNear = v[E(pn)];
        double oldFar = v[E(pf)];
        for (int i = 0; i < n; i++) {
            double ui = u[E(i)];
            w[E(i)] = c.alpha * w[E(i)] + c.beta * (v[E(i)] + ui);
            v[E(i)] = ui;
            if (ui > mx) {
                mx = ui;
            }
        }
        double tk = (double) k * dt;
        observe(pn, s, pn, -1, oldNear, v[E(pn)], th, tk, dt, tNear, tFar, pulses);
        observe(pf, s, -1, pf, oldFar, v[E(pf)], th, tk, dt, tNear, tFar, pulses);
        if (every > 0 && (k + 1) % every == 0) {
            i64 f = (k + 1) / every;
            for (int i = 0; i < n; i++) {
                frames[(f * n + i) * St + s] = v[E(i)];
            }
        }
    }
    vmax[s] = mx;
    newton[s] = its;
    unconv[s] = unc;
#undef E
}

/* ------------------------------------------------------------------------------------ cyclic reduction */

__device__ __forceinline__ void cr_forward_row(double* a, double* b, double* c, double* d, i64 off, int n, int i,
                                               int s) {
    i64 il = off + i - s;
    i64 ir = off + i + s;
    i64 ii = off + i;
    double k1 = a[ii] / b[il];
    if (i + s < n) {
        double k2 = c[ii] / b[ir];
        double na = -(a[il] * k1);
        double nb = (b[ii] - c[il] * k1) - a[ir] * k2;
        double nc = -(c[ir] * k2);
        double nd = (d[ii] - d[il] * k1) - d[ir] * k2;
        a[ii] = na;
        b[ii] = nb;
        c[ii] = nc;
        d[ii] = nd;
    } else {
        double na = -(a[il] * k1);
        double nb = b[ii] - c[il] * k1;
        double nd = d[ii] - d[il] * k1;
        a[ii] = na;
        b[ii] = nb;
        c[ii] = 0.0;
        d[ii] = nd;
    }
}

__device__ __forceinline__ void cr_backward_row(const double* a, const double* b, const double* c, const double* d,
                                                double* x, i64 off, int n, int i, int s) {
    double xl = i - s >= 0 ? x[off + i - s] : 0.0;
    double xr = i + s < n ? x[off + i + s] : 0.0;
    i64 ii = off + i;
    x[ii] = ((d[ii] - a[ii] * xl) - c[ii] * xr) / b[ii];
}

/* Rows of level stride s in a system of n: forward i = 2s-1 + 2s j, backward i = s-1 + 2s j (j < rows_from).
 * Loops run over the row number j, never over i with a stride of 2 s blockDim.x: that stride and 2 s threadIdx.x
 * pass 2^31 once s >= 2^20 (systems of 2^21 unknowns and more), and the wrapped, negative i passed the i < n test
 * (CUDA_ERROR_ILLEGAL_ADDRESS at 10^7 unknowns). In 64 bits, and i = first + 2 s j < n fits an int. The host's
 * model of these ranges is FhnGpu.CrPlan (FhnLaunchModelTest checks it at 10^7). */
__device__ __forceinline__ int rows_from(int first, int s, int n) {
    return first < n ? (int) (((i64) n - first + 2 * (i64) s - 1) / (2 * (i64) s)) : 0;
}

__device__ __forceinline__ int cr_row(int first, int s, int j) {
    return (int) (first + 2 * (i64) s * j);
}

extern "C" __global__ void pde_cr_forward(int S, int n, int s, double* a, double* b, double* c, double* d,
                                          const int* done) {
    int cnt = rows_from(2 * s - 1, s, n);
    i64 t = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    if (cnt == 0 || t >= (i64) S * cnt) {
        return;
    }
    int sys = (int) (t / cnt);
    int j = (int) (t - (i64) sys * cnt);
    if (done != nullptr && done[sys]) {
        return;
    }
    cr_forward_row(a, b, c, d, (i64) sys * n, n, cr_row(2 * s - 1, s, j), s);
}

extern "C" __global__ void pde_cr_backward(int S, int n, int s, const double* a, const double* b, const double* c,
                                           const double* d, double* x, const int* done) {
    int cnt = rows_from(s - 1, s, n);
    i64 t = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    if (cnt == 0 || t >= (i64) S * cnt) {
        return;
    }
    int sys = (int) (t / cnt);
    int j = (int) (t - (i64) sys * cnt);
    if (done != nullptr && done[sys]) {
        return;
    }
    cr_backward_row(a, b, c, d, x, (i64) sys * n, n, cr_row(s - 1, s, j), s);
}

/* Levels lfrom..k-2 forward, the middle row, levels k-2..lfrom backward, for system blockIdx.x; shared: the whole
 * system (lfrom == 0) is staged in dynamic shared memory (5 n doubles). */
extern "C" __global__ void pde_cr_block(int S, int n, int k, int lfrom, double* a, double* b, double* c, double* d,
                                        double* x, const int* done, int shared) {
    extern __shared__ double sm[];
    int sys = blockIdx.x;
    if (sys >= S || (done != nullptr && done[sys])) {
        return;
    }
    i64 off = (i64) sys * n;
    double* A = a;
    double* B = b;
    double* C = c;
    double* Dd = d;
    double* X = x;
    if (shared) {
        A = sm;
        B = sm + n;
        C = sm + 2 * n;
        Dd = sm + 3 * n;
        X = sm + 4 * n;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            A[i] = a[off + i];
            B[i] = b[off + i];
            C[i] = c[off + i];
            Dd[i] = d[off + i];
        }
        off = 0;
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        A[off] = 0.0;
        C[off + n - 1] = 0.0;
    }
    __syncthreads();
    for (int l = lfrom; l <= k - 2; l++) {
        int s = 1 << l;
        int rows = rows_from(2 * s - 1, s, n);
        for (int j = threadIdx.x; j < rows; j += blockDim.x) {
            cr_forward_row(A, B, C, Dd, off, n, cr_row(2 * s - 1, s, j), s);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        int top = (1 << (k - 1)) - 1;
        X[off + top] = Dd[off + top] / B[off + top];
    }
    __syncthreads();
    for (int l = k - 2; l >= lfrom; l--) {
        int s = 1 << l;
        int rows = rows_from(s - 1, s, n);
        for (int j = threadIdx.x; j < rows; j += blockDim.x) {
            cr_backward_row(A, B, C, Dd, X, off, n, cr_row(s - 1, s, j), s);
        }
        __syncthreads();
    }
    if (shared) {
        i64 go = (i64) sys * n;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            x[go + i] = X[i];
        }
    }
}

/* Clears a[0] and c[n-1] of every system before the level launches (pde_cr_block does it itself). */
extern "C" __global__ void pde_cr_ends(int S, int n, double* a, double* c, const int* done) {
    int sys = blockIdx.x * blockDim.x + threadIdx.x;
    if (sys >= S || (done != nullptr && done[sys])) {
        return;
    }
    a[(i64) sys * n] = 0.0;
    c[(i64) sys * n + n - 1] = 0.0;
}

/* ---------------------------------------------------------------- Crank-Nicolson with cyclic reduction */

extern "C" __global__ void pde_cn_rhs(int S, int n, const double* __restrict__ v, const double* __restrict__ w,
                                      double* __restrict__ u, double* __restrict__ R, const double* __restrict__ prm,
                                      const double* __restrict__ prof, double sg0, double sg1, double dt, double idx2,
                                      int bc, int* done, i64* errKey) {
    i64 g = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= (i64) S * n) {
        return;
    }
    int s = (int) (g / n);
    int i = (int) (g - (i64) s * n);
    i64 base = g - i;
    CnCoef c = cn_coef(dt, prm[S + s], prm[2 * S + s], prm[4 * S + s], idx2);
    double vi = v[g];
    R[g] = cn_rhs(v[base + left_of(i, n, bc)], vi, v[base + right_of(i, n, bc)], w[g], prm[s], prm[3 * S + s],
                  prm[4 * S + s], prof[i], sg0, sg1, idx2, c);
    u[g] = vi;
    if (i == 0) {
        done[s] = 0;
        errKey[s] = 0;
    }
}

extern "C" __global__ void pde_cn_system(int S, int n, const double* __restrict__ u, const double* __restrict__ R,
                                         double* __restrict__ sa, double* __restrict__ sb, double* __restrict__ sc,
                                         double* __restrict__ sd, const double* __restrict__ prm, double dt,
                                         double idx2, int bc, const int* done) {
    i64 g = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= (i64) S * n) {
        return;
    }
    int s = (int) (g / n);
    if (done[s]) {
        return;
    }
    int i = (int) (g - (i64) s * n);
    i64 base = g - i;
    CnCoef c = cn_coef(dt, prm[S + s], prm[2 * S + s], prm[4 * S + s], idx2);
    double a, b, cc, d;
    cn_row(i, n, bc, u[base + left_of(i, n, bc)], u[g], u[base + right_of(i, n, bc)], R[g], prm[s], prm[4 * S + s],
           idx2, c, a, b, cc, d);
    sa[g] = a;
    sb[g] = b;
    sc[g] = cc;
    sd[g] = d;
}

extern "C" __global__ void pde_cn_update(int S, int n, double* __restrict__ u, const double* __restrict__ x,
                                         i64* errKey, const int* done) {
    i64 g = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    i64 seg = -1;
    i64 key = 0;
    if (g < (i64) S * n) {
        int s = (int) (g / n);
        if (!done[s]) {
            double xi = x[g];
            u[g] = u[g] + xi;
            key = __double_as_longlong(fabs(xi));
            seg = s;
        }
    }
    segmented_key_max(seg, key, errKey);  // |delta| >= 0: its bits order like the values
}

extern "C" __global__ void pde_cn_check(int S, i64* errKey, int* done, i64* newton, double tol) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= S || done[s]) {
        return;
    }
    newton[s] = newton[s] + 1;
    if (__longlong_as_double(errKey[s]) <= tol) {
        done[s] = 1;
    }
    errKey[s] = 0;
}

extern "C" __global__ void pde_cn_finish(int S, int n, double* __restrict__ v, double* __restrict__ w,
                                         const double* __restrict__ u, const double* __restrict__ prm, double dt,
                                         double idx2, const int* done, i64* unconv, int pn, int pf, double th,
                                         double tk, double* tNear, double* tFar, int* pulses, i64* maxKey) {
    i64 g = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    i64 seg = -1;
    double ui = 0.0;
    if (g < (i64) S * n) {
        int s = (int) (g / n);
        int i = (int) (g - (i64) s * n);
        seg = s;
        CnCoef c = cn_coef(dt, prm[S + s], prm[2 * S + s], prm[4 * S + s], idx2);
        double vi = v[g];
        ui = u[g];
        w[g] = c.alpha * w[g] + c.beta * (vi + ui);
        v[g] = ui;
        if (i == 0 && !done[s]) {
            unconv[s] = unconv[s] + 1;
        }
        observe(i, s, pn, pf, vi, ui, th, tk, dt, tNear, tFar, pulses);
    }
    segmented_max(seg, ui, maxKey);
}

/* ------------------------------------------------------------------------------------ benchmark pieces */

/* Where a batched Thomas keeps its intermediate c', d' (row i of the thread's system): in place in c and d (the
 * global variant) or in shared memory. */
struct ThomasInPlace {
    double* c;
    double* d;
    i64 S;
    int s;
    __device__ double& cp(int i) { return c[(i64) i * S + s]; }
    __device__ double& dp(int i) { return d[(i64) i * S + s]; }
};

struct ThomasShared {
    double* cs;
    double* ds;
    int T;
    int t;
    __device__ double& cp(int i) { return cs[i * T + t]; }
    __device__ double& dp(int i) { return ds[i * T + t]; }
};

/* Thomas for system s of the interleaved batch (row i at i S + s), the intermediate in q, the solution into d. */
template <class Q>
__device__ __forceinline__ void thomas_interleaved(int S, int n, int s, const double* __restrict__ a,
                                                   const double* __restrict__ b, const double* c, double* d, Q q) {
    const i64 St = S;
    double m = b[s];
    double cprev = c[s] / m;
    double dprev = d[s] / m;
    q.cp(0) = cprev;
    q.dp(0) = dprev;
#pragma unroll 8
    for (int i = 1; i < n; i++) {
        i64 e = (i64) i * St + s;
        double ai = a[e];
        m = b[e] - ai * cprev;
        cprev = c[e] / m;
        dprev = (d[e] - ai * dprev) / m;
        q.cp(i) = cprev;
        q.dp(i) = dprev;
    }
    double xn = dprev;
    d[(i64) (n - 1) * St + s] = xn;
    for (int i = n - 2; i >= 0; i--) {
        xn = q.dp(i) - q.cp(i) * xn;
        d[(i64) i * St + s] = xn;
    }
}

extern "C" __global__ void pde_thomas_batch(int S, int n, const double* __restrict__ a, const double* __restrict__ b,
                                            double* __restrict__ c, double* __restrict__ d) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < S) {
        thomas_interleaved(S, n, s, a, b, c, d, ThomasInPlace {c, d, (i64) S, s});
    }
}

/* pde_thomas_batch with the intermediate c', d' kept in shared memory (2 n doubles per thread, element i of thread t
 * at i blockDim.x + t): a, b, c, d are read once and x written once (5 doubles per unknown against the global
 * variant's 9), c is left as it was. The forward loop is unrolled so that several rows' loads are in flight per
 * thread, which the few threads per SM (shared memory bounds them) need. Same arithmetic, same bits. */
extern "C" __global__ void pde_thomas_batch_shared(int S, int n, const double* __restrict__ a,
                                                   const double* __restrict__ b, const double* __restrict__ c,
                                                   double* __restrict__ d) {
    extern __shared__ double tsm[];
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < S) {
        thomas_interleaved(S, n, s, a, b, c, d, ThomasShared {tsm, tsm + n * blockDim.x, (int) blockDim.x,
                                                              (int) threadIdx.x});
    }
}

/* ------------------------------------------------------------------------------------ partitioned batched solver */

/*
 * pde_tridiag_partition_R<R>: the batched tridiagonal solve of pde_thomas_batch (same interleaved layout, row i of
 * system j at i S + j; a, b, c read, d replaced by the solution) with a, b, c left untouched and every row read
 * once and written once (5 doubles of traffic per unknown), the elimination spread over the threads of a system.
 * A Thomas/PCR hybrid ("partition method"), FhnCpu.partitionInterleaved's arithmetic operation for operation:
 *
 *  - System j is cut into K = ceil(n / R) chunks of R consecutive rows; chunk k (rows kR .. kR + R - 1) belongs to
 *    one thread, which keeps its R rows in registers. Rows past n are identity rows (a = c = 0, b = 1, d = 0,
 *    never loaded nor stored), a[0] and c[n - 1] count as 0 (as in Thomas, which never reads them).
 *  - Block: SB systems (1..32) x K chunks, 1-D, thread t = k SB + s: the lanes of a warp are SB consecutive
 *    systems at 32 / SB consecutive chunks (SB a power of two), so each row access of a warp is 32 / SB segments of
 *    8 SB bytes (one 256-byte access for SB = 32; at SB = 1 or 2 the rest of each 32-byte sector is read by the
 *    neighbouring blocks). The host picks SB (PdeEngine.partitionPlan). A thread's arithmetic touches only its own
 *    system (its PCR neighbours k +- s are threads t +- s SB), in the same order for any SB: the bits do not depend
 *    on SB.
 *  - Local elimination (the "modified Thomas" of Laszlo, Giles and Appleyard 2016): a down sweep then an up sweep
 *    write every row of the chunk as alpha_r x_first + x_r + gamma_r x_last = delta_r (first and last: rows 0 and
 *    R - 1 of the chunk), row 0 as alpha x_(last of chunk k-1) + x_first + gamma x_last = delta and row R - 1 as
 *    alpha x_first + x_last + gamma x_(first of chunk k+1) = delta: one reciprocal per row, no pivoting.
 *  - The chunks' last unknowns form a tridiagonal system of K rows with unit diagonal (the row R - 1 of chunk k
 *    with the first unknowns of chunks k and k+1 eliminated by their rows 0; chunk k+1's row 0 through shared
 *    memory), solved by parallel cyclic reduction in shared memory: ceil(log2 K) steps, one row per thread, double
 *    buffered (one barrier per step); a neighbour outside [0, K) is the zero row (0, 0, 0).
 *  - Then x_first from row 0 (with the last unknown of chunk k-1, from shared memory), the interior rows from their
 *    alpha, gamma, delta in registers, and the chunk's rows written back (coalesced).
 *
 * Variants: CL > 1 (cluster kernels): the CL blocks of a cluster hold chunks rank Kc .. (rank + 1) Kc - 1 of the
 * same SB systems (Kc = blockDim / SB; slots past K read and write nothing), every barrier a cluster barrier and a
 * neighbour's row read from whichever block's shared memory holds it (PartitionShared::at); TL = 1: the tiled
 * layout, tiles of 2^ts systems (partition_at). Neither changes an operation or its order.
 *
 * Like Thomas it needs a non-singular elimination without pivoting: diagonal dominance (|b| > |a| + |c| on every
 * row) suffices; the reduced systems of a diagonally dominant system are diagonally dominant. R >= 3 (the sweeps
 * need a first, an interior and a last row). Dynamic shared memory: 48 SB K bytes (two buffers of 3 doubles per
 * thread). Every + - * / is written out in the twin's order (the module has no FMA contraction).
 */
template <int CL>
struct PartitionShared {
    double *own;   /* this block's shared memory */
    int T, SB, Kc; /* threads, systems and chunks a block */
    /* the word at offset off (field f of buffer p: (3 p + f) T) of chunk kk of system s, whichever block holds it */
    __device__ __forceinline__ double at(int off, int kk, int s) const {
        if (CL == 1) {
            return own[off + kk * SB + s];
        }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        const int rank = kk / Kc;
        const double *base = cg::this_cluster().map_shared_rank(own, rank);
        return base[off + (kk - rank * Kc) * SB + s];
#else
        return 0.0;
#endif
    }
    __device__ __forceinline__ void sync() const {
        if (CL == 1) {
            __syncthreads();
        } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
            cg::this_cluster().sync();
#endif
        }
    }
};

/* Element g of system j: the interleaved layout (g S + j) or, TL = 1, the tiled one (tiles of T = 2^ts systems, each
 * interleaved within: (j / T) T n + T g + j % T), whose tile is one contiguous run of 8 T n bytes. */
template <int TL>
__device__ __forceinline__ i64 partition_at(i64 g, i64 j, i64 S, i64 n, int ts) {
    return TL ? (((j >> ts) * n + g) << ts) + (j & ((1 << ts) - 1)) : g * S + j;
}

/* Row g of a chunk from arrays indexed at at() (global or a staged copy; evaluated only for a row that exists): rows
 * past n are identity rows, a[0] and c[n - 1] count as 0. */
template <typename At>
__device__ __forceinline__ void partition_row(bool live, int g, int n, const double* a, const double* b,
                                              const double* c, const double* d, At at, double& A, double& B,
                                              double& C, double& D) {
    A = 0.0;
    B = 1.0;
    C = 0.0;
    D = 0.0;
    if (live && g < n) {
        const i64 e = at();
        if (g > 0) {
            A = a[e];
        }
        B = b[e];
        if (g < n - 1) {
            C = c[e];
        }
        D = d[e];
    }
}

/* The R rows of chunk k (rows k R ..) into registers, row g's index in the arrays from at(g). */
template <int R, typename At>
__device__ __forceinline__ void partition_chunk(bool live, int k, int n, const double* a, const double* b,
                                                const double* c, const double* d, At at, double (&A)[R],
                                                double (&B)[R], double (&C)[R], double (&D)[R]) {
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int g = k * R + r;
        partition_row(live, g, n, a, b, c, d, [&] { return at(g); }, A[r], B[r], C[r], D[r]);
    }
}

/*
 * The partition method on a chunk in registers (see above): local sweeps, the interface PCR in shared memory
 * (sh: this block's or the cluster's; psm the block's own PCR buffers, 6 T doubles), the chunk's first and last
 * unknowns into xf, xl and its interior rows left as alpha (A), gamma (C), delta (D). Every thread of the block (or
 * cluster) calls it.
 */
template <int R, int CL>
__device__ __forceinline__ void partition_solve(double (&A)[R], double (&B)[R], double (&C)[R], double (&D)[R],
                                                double* psm, int T, int t, int k, int K, int sl,
                                                const PartitionShared<CL>& sh, double& xf, double& xl) {
    // down sweep: rows 0 and 1 normalised, row r >= 2 rewritten on x_first, x_r, x_(r+1)
#pragma unroll
    for (int r = 0; r < 2; r++) {
        const double q = 1.0 / B[r];
        D[r] = D[r] * q;
        A[r] = A[r] * q;
        C[r] = C[r] * q;
    }
#pragma unroll
    for (int r = 2; r < R; r++) {
        const double q = 1.0 / (B[r] - A[r] * C[r - 1]);
        D[r] = (D[r] - A[r] * D[r - 1]) * q;
        A[r] = -((A[r] * A[r - 1]) * q);
        C[r] = C[r] * q;
    }
    // up sweep: interior rows on x_first and x_last, row 0 on x_(last of chunk k-1) and x_last
#pragma unroll
    for (int r = R - 3; r >= 1; r--) {
        D[r] = D[r] - C[r] * D[r + 1];
        A[r] = A[r] - C[r] * A[r + 1];
        C[r] = -(C[r] * C[r + 1]);
    }
    {
        const double q = 1.0 / (1.0 - C[0] * A[1]);
        D[0] = (D[0] - C[0] * D[1]) * q;
        A[0] = A[0] * q;
        C[0] = -((C[0] * C[1]) * q);
    }
    // shared memory: buffer p, field f (0 a, 1 c, 2 d) of thread t at psm[(3 p + f) T + t]
    double* const b0 = psm;
    b0[t] = A[0];
    b0[T + t] = C[0];
    b0[2 * T + t] = D[0];
    sh.sync();
    double na = 0.0;
    double nc = 0.0;
    double nd = 0.0;
    if (k + 1 < K) {
        na = sh.at(0, k + 1, sl);
        nc = sh.at(T, k + 1, sl);
        nd = sh.at(2 * T, k + 1, sl);
    }
    // row R - 1 with x_first (own row 0) and x_(first of chunk k+1) (its row 0) eliminated
    double ea;
    double ec;
    double ed;
    {
        const double q = 1.0 / ((1.0 - A[R - 1] * C[0]) - C[R - 1] * na);
        ea = -((A[R - 1] * A[0]) * q);
        ec = -((C[R - 1] * nc) * q);
        ed = ((D[R - 1] - A[R - 1] * D[0]) - C[R - 1] * nd) * q;
    }
    // parallel cyclic reduction of the K last unknowns (unit diagonal throughout)
    int p = 1;
    for (int s = 1; s < K; s <<= 1) {
        double* const bp = psm + 3 * p * T;
        bp[t] = ea;
        bp[T + t] = ec;
        bp[2 * T + t] = ed;
        sh.sync();
        double am = 0.0;
        double cm = 0.0;
        double dm = 0.0;
        double ap = 0.0;
        double cp = 0.0;
        double dp = 0.0;
        const int o = 3 * p * T;
        if (k - s >= 0) {
            am = sh.at(o, k - s, sl);
            cm = sh.at(o + T, k - s, sl);
            dm = sh.at(o + 2 * T, k - s, sl);
        }
        if (k + s < K) {
            ap = sh.at(o, k + s, sl);
            cp = sh.at(o + T, k + s, sl);
            dp = sh.at(o + 2 * T, k + s, sl);
        }
        const double q = 1.0 / ((1.0 - ea * cm) - ec * ap);
        const double ta = -((ea * am) * q);
        const double tc = -((ec * cp) * q);
        ed = ((ed - ea * dm) - ec * dp) * q;
        ea = ta;
        ec = tc;
        p ^= 1;
    }
    xl = ed;
    double* const bl = psm + 3 * p * T + 2 * T;
    bl[t] = xl;
    sh.sync();
    const double xprev = k > 0 ? sh.at(3 * p * T + 2 * T, k - 1, sl) : 0.0;
    xf = (D[0] - A[0] * xprev) - C[0] * xl;
}

/* The chunk's solution rows (rows k R .. k R + R - 1 below n of a live system) handed to put(r, x). */
template <int R, typename Put>
__device__ __forceinline__ void partition_store(bool live, int k, int n, const double (&A)[R], const double (&C)[R],
                                                const double (&D)[R], double xf, double xl, Put put) {
    if (live) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (k * R + r < n) {
                put(r, r == 0 ? xf : (r == R - 1 ? xl : (D[r] - A[r] * xf) - C[r] * xl));
            }
        }
    }
}

template <int R, int CL, int TL>
__device__ __forceinline__ void tridiag_partition(int S, int n, int SB, int ts, const double* __restrict__ a,
                                                  const double* __restrict__ b, const double* __restrict__ c,
                                                  double* __restrict__ d) {
    extern __shared__ double psm[];
    const int T = blockDim.x;
    const int t = threadIdx.x;
    const int Kc = T / SB;                /* chunks a block holds */
    const int rank = CL == 1 ? 0 : (int) (blockIdx.x % CL);
    const int K = (n + R - 1) / R; /* chunks a system has (a cluster may hold more: those past K read and write
                                      * nothing, and none reads theirs) */
    const int kl = t / SB;
    const int sl = t - kl * SB;
    const int k = rank * Kc + kl;
    const i64 j = (i64) (blockIdx.x / CL) * SB + sl;
    const bool live = j < S;
    const PartitionShared<CL> sh{psm, T, SB, Kc};
    const i64 St = S;
    double A[R];
    double B[R];
    double C[R];
    double D[R];
    partition_chunk<R>(live, k, n, a, b, c, d, [&](int g) { return partition_at<TL>(g, j, St, n, ts); }, A, B, C, D);
    double xf;
    double xl;
    partition_solve<R, CL>(A, B, C, D, psm, T, t, k, K, sl, sh, xf, xl);
    partition_store<R>(live, k, n, A, C, D, xf, xl,
                       [&](int r, double x) { d[partition_at<TL>(k * R + r, j, St, n, ts)] = x; });
    if (CL > 1) {
        sh.sync(); /* no block of the cluster exits while another may still read its shared memory */
    }
}

/*
 * The staged variant (R = 8 or 16, SB = 2^sbs systems of K chunks a block, T = SB K threads): persistent blocks take
 * groups of SB systems (systems q SB .. q SB + SB - 1 for q = blockIdx, blockIdx + gridDim, ...), each group's rows
 * copied into shared memory by cp.async in the order they lie in memory (a tile of SB systems is one contiguous run
 * of 8 SB n bytes a array), then into each thread's registers; the copy of the next group is issued before the
 * current group's sweeps and PCR, so the loads of one group overlap the arithmetic of the other even with one block
 * an SM. The solutions go the same way back: each thread's rows into a shared output buffer, then out in memory
 * order (a thread's own rows, R apart, would write every 32-byte sector in pieces). The staged row g of system s sits
 * at (g + g / R) SB + s (a pad row a chunk: the R rows a thread reads and the rows of its 15 neighbours fall in
 * distinct banks). Same arithmetic in the same order: the bits of pde_tridiag_partition_R<R>. Dynamic shared memory:
 * 48 T + 40 SB (n + K) bytes (PCR buffers, the four staged arrays, the output).
 */
__device__ __forceinline__ void cp_async8(double* dst, const double* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned sa = (unsigned) __cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(sa), "l"(src) : "memory");
#else
    *dst = *src;
#endif
}

__device__ __forceinline__ void cp_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

/* Every row of group q's live systems in memory order: f(e, pos) with e the row's index in the arrays and pos its
 * staged place. */
template <int R, int TL, typename F>
__device__ __forceinline__ void partition_group_rows(i64 q, int S, int n, int sbs, int ts, int T, int t, F f) {
    const int SB = 1 << sbs;
    const int rows = n << sbs;
    for (int idx = t; idx < rows; idx += T) {
        const int g = idx >> sbs;
        const int s = idx & (SB - 1);
        const i64 j = (q << sbs) + s;
        if (j < S) {
            f(partition_at<TL>(g, j, S, n, ts), ((g + g / R) << sbs) + s);
        }
    }
}

template <int R, int TL>
__device__ __forceinline__ void tridiag_partition_staged(int S, int n, int sbs, int ts, const double* __restrict__ a,
                                                         const double* __restrict__ b, const double* __restrict__ c,
                                                         double* __restrict__ d) {
    extern __shared__ double psm[];
    const int T = blockDim.x;
    const int t = threadIdx.x;
    const int SB = 1 << sbs;
    const int K = (n + R - 1) / R;
    const int k = t >> sbs;
    const int sl = t & (SB - 1);
    const int P = (n + K) << sbs; /* staged doubles an array: PDE_STAGED_ROWS */
    double* const stage = psm + PDE_PCR_DOUBLES * T;
    double* const xs = stage + 4 * P; /* the output buffer */
    const PartitionShared<1> sh{psm, T, SB, K};
    const i64 St = S;
    const i64 groups = (St + SB - 1) >> sbs;
    const auto fetch = [&](i64 e, int pos) {
        cp_async8(stage + pos, a + e);
        cp_async8(stage + P + pos, b + e);
        cp_async8(stage + 2 * P + pos, c + e);
        cp_async8(stage + 3 * P + pos, d + e);
    };
    if (blockIdx.x < groups) {
        partition_group_rows<R, TL>(blockIdx.x, S, n, sbs, ts, T, t, fetch);
    }
    for (i64 q = blockIdx.x; q < groups; q += gridDim.x) {
        cp_async_wait_all();
        __syncthreads();
        const i64 j = (q << sbs) + sl;
        const bool live = j < S;
        double A[R];
        double B[R];
        double C[R];
        double D[R];
        partition_chunk<R>(live, k, n, stage, stage + P, stage + 2 * P, stage + 3 * P,
                           [&](int g) { return (i64) (((g + k) << sbs) + sl); }, A, B, C, D);
        __syncthreads();
        if (q + gridDim.x < groups) {
            partition_group_rows<R, TL>(q + gridDim.x, S, n, sbs, ts, T, t, fetch);
        }
        double xf;
        double xl;
        partition_solve<R, 1>(A, B, C, D, psm, T, t, k, K, sl, sh, xf, xl);
        partition_store<R>(live, k, n, A, C, D, xf, xl,
                           [&](int r, double x) { xs[((k * R + r + k) << sbs) + sl] = x; });
        __syncthreads();
        partition_group_rows<R, TL>(q, S, n, sbs, ts, T, t, [&](i64 e, int pos) { d[e] = xs[pos]; });
    }
}

/* Register budgets: R = 4 at up to 1024 threads a block (64 registers), R = 8 at 512 (128), R = 16 at 256 (255)
 * (include/layout/pde.cuh; PdeEngine.partitionMaxThreads mirrors them). ptxas, sm_90: 58, 92 and 170 registers
 * (tiled: 58, 84, 148; the cluster kernels 180, tiled 150), no spills. */
#define PDE_PARTITION_ONE(R, MAXT, SUFFIX, TL)                                                                        \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                                \
    pde_tridiag_partition_R##R##SUFFIX(int S, int n, int SB, int ts, const double* __restrict__ a,                    \
                                       const double* __restrict__ b, const double* __restrict__ c,                    \
                                       double* __restrict__ d) {                                                      \
        tridiag_partition<R, 1, TL>(S, n, SB, ts, a, b, c, d);                                                        \
    }
#define PDE_PARTITION_KERNEL(R, MAXT)                                                                                 \
    PDE_PARTITION_ONE(R, MAXT, , 0)                                                                                   \
    PDE_PARTITION_ONE(R, MAXT, _T, 1)
PDE_PARTITION_KERNEL(4, PDE_PARTITION_MAXT_R4)
PDE_PARTITION_KERNEL(8, PDE_PARTITION_MAXT_R8)
PDE_PARTITION_KERNEL(16, PDE_PARTITION_MAXT_R16)

/* The staged kernels (R = 8 or 16 at the plain kernels' thread budgets, SB = 2^sbs, persistent grid; see
 * tridiag_partition_staged). */
#define PDE_PARTITION_STAGED_ONE(R, MAXT, SUFFIX, TL)                                                                 \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                                \
    pde_tridiag_partition_R##R##_S##SUFFIX(int S, int n, int sbs, int ts, const double* __restrict__ a,               \
                                           const double* __restrict__ b, const double* __restrict__ c,                \
                                           double* __restrict__ d) {                                                  \
        tridiag_partition_staged<R, TL>(S, n, sbs, ts, a, b, c, d);                                                   \
    }
#define PDE_PARTITION_STAGED_KERNEL(R, MAXT)                                                                          \
    PDE_PARTITION_STAGED_ONE(R, MAXT, , 0)                                                                            \
    PDE_PARTITION_STAGED_ONE(R, MAXT, _T, 1)
PDE_PARTITION_STAGED_KERNEL(8, PDE_PARTITION_MAXT_R8)
PDE_PARTITION_STAGED_KERNEL(16, PDE_PARTITION_MAXT_R16)

/* The cluster variants (sm_90 and later): C blocks of one cluster share each system's chunks, block rank q of the
 * cluster holding chunks q Kc .. (q + 1) Kc - 1 (Kc = blockDim / SB), the PCR's and the neighbour exchanges' reads
 * of another block's chunks through distributed shared memory, every barrier a cluster barrier. Same arithmetic in
 * the same order: the bits of pde_tridiag_partition_R16 for any C. Built for sm_80 / compute_80 as a trap (the host
 * launches them only on a device of compute capability 9.x, whose sm_90 code has them). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define PDE_PARTITION_CLUSTER_ONE(R, C, MAXT, SUFFIX, TL)                                                             \
    extern "C" __global__ void __cluster_dims__(C, 1, 1) __launch_bounds__(MAXT)                                      \
    pde_tridiag_partition_R##R##_C##C##SUFFIX(int S, int n, int SB, int ts, const double* __restrict__ a,             \
                                              const double* __restrict__ b, const double* __restrict__ c,             \
                                              double* __restrict__ d) {                                               \
        tridiag_partition<R, C, TL>(S, n, SB, ts, a, b, c, d);                                                        \
    }
#else
#define PDE_PARTITION_CLUSTER_ONE(R, C, MAXT, SUFFIX, TL)                                                             \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                                \
    pde_tridiag_partition_R##R##_C##C##SUFFIX(int S, int n, int SB, int ts, const double* __restrict__ a,             \
                                              const double* __restrict__ b, const double* __restrict__ c,             \
                                              double* __restrict__ d) {                                               \
        __trap();                                                                                                     \
    }
#endif
#define PDE_PARTITION_CLUSTER_KERNEL(R, C, MAXT)                                                                      \
    PDE_PARTITION_CLUSTER_ONE(R, C, MAXT, , 0)                                                                        \
    PDE_PARTITION_CLUSTER_ONE(R, C, MAXT, _T, 1)
PDE_PARTITION_CLUSTER_KERNEL(16, 2, PDE_PARTITION_MAXT_R16)
PDE_PARTITION_CLUSTER_KERNEL(16, 4, PDE_PARTITION_MAXT_R16)
PDE_PARTITION_CLUSTER_KERNEL(16, 8, PDE_PARTITION_MAXT_R16)

/* ------------------------------------------------------------------------------------ 2-D ADI (Fhn2d) */

extern "C" __global__ void pde_adi_rhs_rows(int nx, int ny, const double* __restrict__ v,
                                            const double* __restrict__ w, double a, double ry, double dt2,
                                            double* __restrict__ dT) {
    i64 k = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= (i64) nx * ny) {
        return;
    }
    int j = (int) (k / nx);
    int i = (int) (k - (i64) j * nx);
    int jd = j == 0 ? 1 : j - 1;
    int ju = j == ny - 1 ? ny - 2 : j + 1;
    double vi = v[k];
    double lap = (v[(i64) jd * nx + i] + v[(i64) ju * nx + i]) - (vi + vi);
    dT[(i64) i * ny + j] = (vi + ry * lap) + dt2 * (fhn_f(vi, a) - w[k]);
}

extern "C" __global__ void pde_adi_rhs_cols(int nx, int ny, const double* __restrict__ vsT,
                                            const double* __restrict__ w, double a, double rx, double dt2,
                                            double* __restrict__ d) {
    i64 k = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= (i64) nx * ny) {
        return;
    }
    int j = (int) (k / nx);
    int i = (int) (k - (i64) j * nx);
    int il = i == 0 ? 1 : i - 1;
    int ir = i == nx - 1 ? nx - 2 : i + 1;
    double vi = vsT[(i64) i * ny + j];
    double lap = (vsT[(i64) il * ny + j] + vsT[(i64) ir * ny + j]) - (vi + vi);
    d[k] = (vi + rx * lap) + dt2 * (fhn_f(vi, a) - w[k]);
}

extern "C" __global__ void pde_adi_w(i64 count, const double* __restrict__ v, double* __restrict__ w, double dtEps,
                                     double wDen) {
    i64 k = (i64) blockIdx.x * blockDim.x + threadIdx.x;
    if (k < count) {
        w[k] = (w[k] + dtEps * v[k]) / wDen;
    }
}

extern "C" __global__ void pde_copy(i64 count, const double* __restrict__ src, double* __restrict__ dst) {
    for (i64 g = (i64) blockIdx.x * blockDim.x + threadIdx.x; g < count; g += (i64) gridDim.x * blockDim.x) {
        dst[g] = src[g];
    }
}
