/*
 * k-means step kernel: nearest centre per point, then per-cluster sums, weights, counts and cost
 * accumulated in exact fixed point.
 *
 * Data layout
 *   x        double[n*d]  row-major (AoS): point i occupies x[i*d .. i*d+d). Row index int (n < 2^31),
 *                         element offsets are computed in 64 bits.
 *   w        double[n]    point weights (>= 0).
 *   centres  double[k*d]  row-major.
 *   scale    double[2*(d+2)]: for dimension j the pair (s1, s2) = scale[2j], scale[2j+1]; the pair for
 *                         weights at 2d, the pair for cost at 2d+2. A value v is quantized as
 *                         trunc(v*s1*s2 * 2^64) (toward zero) where s1*s2 = 2^(shift-64): |v| is split into
 *                         integer part and fraction*2^64, then negated as a two's-complement 128-bit integer.
 *   acc      unsigned long long[2*k*d + 2*k + 2 + k]:
 *              [0, 2kd)          sums, (lo, hi) pair for (cluster c, dim j) at 2*(c*d+j)
 *              [2kd, 2kd+2k)     weight sums, pair for cluster c at 2kd + 2c
 *              [2kd+2k, +2)      cost (sum of w * distance to nearest centre), one pair
 *              [2kd+2k+2, +k)    point counts per cluster
 *   labels   int[n]   optional (null): nearest centre of each point.
 *   dists    double[n] optional (null): distance to the nearest centre; with minUpdate != 0 the
 *                      stored value becomes min(stored, distance) (k-means|| cost passes).
 *
 * Determinism: distances use explicitly rounded operations in dimension order: per dimension
 * t = __dsub_rn(x, c), acc = __fma_rn(t, t, acc) (cosine: acc = __fma_rn(x, c, acc), then 1 - acc).
 * The fused multiply-add is the IEEE 754 fusedMultiplyAdd (one rounding), the same operation as Java's
 * Math.fma, and nvcc runs with --fmad=false so that it never contracts any other mul+add on its own.
 * So the nearest centre equals the Java twin's bit for bit; ties go to the lower index. Sums are integer additions modulo 2^128, which are associative, so atomics in any order give
 * the same bits on every run, on any GPU, and on the CPU twin.
 *
 * Launch shape: 1-D grid-stride loop, blockDim.x = 256 (any multiple of 32 works), grid chosen from
 * occupancy. Dynamic shared memory: centres (k*d doubles) when centresInShared, followed by the
 * accumulator block (same layout as acc) when accInShared; blocks flush shared accumulators to acc
 * with global atomics at the end.
 */

typedef unsigned long long u64;

/* trunc(v * s1 * s2 * 2^64) as a 128-bit integer: magnitude split exactly into integer and fraction
 * parts (exact for non-negative values), then the sign applied to the 128-bit integer. */
__device__ __forceinline__ void quantize(double v, double s1, double s2, long long &hi, u64 &lo) {
    double t = __dmul_rn(__dmul_rn(fabs(v), s1), s2);
    double f = floor(t);
    hi = (long long) f;
    double r = __dsub_rn(t, f);                       /* exact, in [0, 1) */
    lo = __double2ull_rd(__dmul_rn(r, 18446744073709551616.0)); /* exact scaling, then floor */
    if (v < 0.0) {
        hi = ~hi + (lo == 0ull ? 1ll : 0ll);
        lo = (u64) 0 - lo;
    }
}

__device__ __forceinline__ void atomicAdd128(u64 *p, long long hi, u64 lo) {
    if (lo == 0ull && hi == 0ll) return;
    u64 old = atomicAdd(p, lo);
    u64 carry = (old + lo < old) ? 1ull : 0ull;
    u64 h = (u64) hi + carry;
    if (h != 0ull) atomicAdd(p + 1, h);
}

__device__ __forceinline__ void add128(u64 &accLo, u64 &accHi, long long hi, u64 lo) {
    u64 n = accLo + lo;
    accHi += (u64) hi + (n < accLo ? 1ull : 0ull);
    accLo = n;
}

/* Squared euclidean distance or cosine distance (1 - x.c for unit vectors) of point xr to centre c. */
template <int DMAX>
__device__ __forceinline__ double distance(const double *xr, const double *__restrict__ c, int d, int cosine) {
    double acc = 0.0;
    if (cosine) {
        if (DMAX > 0) {
#pragma unroll
            for (int j = 0; j < DMAX; j++) if (j < d) acc = __fma_rn(xr[j], c[j], acc);
        } else {
            for (int j = 0; j < d; j++) acc = __fma_rn(xr[j], c[j], acc);
        }
        return __dsub_rn(1.0, acc);
    }
    if (DMAX > 0) {
#pragma unroll
        for (int j = 0; j < DMAX; j++) {
            if (j < d) {
                double t = __dsub_rn(xr[j], c[j]);
                acc = __fma_rn(t, t, acc);
            }
        }
    } else {
        for (int j = 0; j < d; j++) {
            double t = __dsub_rn(xr[j], c[j]);
            acc = __fma_rn(t, t, acc);
        }
    }
    return acc;
}

template <int DMAX>
__device__ void kmeans_step(const double *__restrict__ x, const double *__restrict__ w, int n, int d,
                            const double *__restrict__ centres, int k, int cosine,
                            const double *__restrict__ scale, u64 *__restrict__ acc,
                            int accumulate, int centresInShared, int accInShared,
                            int *__restrict__ labels, double *__restrict__ dists, int minUpdate) {
    extern __shared__ __align__(16) unsigned char smem[];
    const long long kd = (long long) k * d;
    const long long accLen = 2 * kd + 2 * (long long) k + 2 + k;

    const double *C = centres;
    unsigned char *next = smem;
    if (centresInShared) {
        double *sc = (double *) smem;
        for (long long t = threadIdx.x; t < kd; t += blockDim.x) sc[t] = centres[t];
        C = sc;
        next = smem + kd * sizeof(double);
    }
    u64 *A = acc;
    if (accumulate && accInShared) {
        A = (u64 *) next;
        for (long long t = threadIdx.x; t < accLen; t += blockDim.x) A[t] = 0ull;
    }
    __syncthreads();

    u64 costLo = 0ull, costHi = 0ull;
    const double cs1 = scale[2 * d + 2], cs2 = scale[2 * d + 3];
    const double ws1 = scale[2 * d], ws2 = scale[2 * d + 1];

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const double *xi = x + (long long) i * d;
        double regs[DMAX > 0 ? DMAX : 1];
        const double *xr = xi;
        if (DMAX > 0) {
#pragma unroll
            for (int j = 0; j < (DMAX > 0 ? DMAX : 1); j++) if (j < d) regs[j] = xi[j];
            xr = regs;
        }
        int best = 0;
        double bestD = distance<DMAX>(xr, C, d, cosine);  /* xr: registers when DMAX > 0 */
        for (int c = 1; c < k; c++) {
            double dc = distance<DMAX>(xr, C + (long long) c * d, d, cosine);
            if (dc < bestD) { bestD = dc; best = c; }
        }
        if (labels) labels[i] = best;
        if (dists) dists[i] = (minUpdate && dists[i] <= bestD) ? dists[i] : bestD;
        if (accumulate) {
            const double wi = w[i];
            long long hi; u64 lo;
            u64 *row = A + 2 * ((long long) best * d);
            if (DMAX > 0) {
#pragma unroll
                for (int j = 0; j < (DMAX > 0 ? DMAX : 1); j++) {
                    if (j < d) {
                        quantize(__dmul_rn(wi, regs[j]), scale[2 * j], scale[2 * j + 1], hi, lo);
                        atomicAdd128(row + 2 * j, hi, lo);
                    }
                }
            } else {
                for (int j = 0; j < d; j++) {
                    quantize(__dmul_rn(wi, xi[j]), scale[2 * j], scale[2 * j + 1], hi, lo);
                    atomicAdd128(row + 2 * j, hi, lo);
                }
            }
            quantize(wi, ws1, ws2, hi, lo);
            atomicAdd128(A + 2 * kd + 2 * best, hi, lo);
            atomicAdd(A + 2 * kd + 2 * k + 2 + best, 1ull);
            quantize(__dmul_rn(wi, bestD), cs1, cs2, hi, lo);
            add128(costLo, costHi, hi, lo);
        }
    }
    if (!accumulate) return;
    /* the cost pair is kept per thread and added once, avoiding one hot address per point */
    atomicAdd128(A + 2 * kd + 2 * k, (long long) costHi, costLo);
    if (accInShared) {
        __syncthreads();
        const long long pairs = kd + k + 1;
        for (long long t = threadIdx.x; t < pairs; t += blockDim.x)
            atomicAdd128(acc + 2 * t, (long long) A[2 * t + 1], A[2 * t]);
        for (long long t = threadIdx.x; t < k; t += blockDim.x) {
            u64 v = A[2 * pairs + t];
            if (v) atomicAdd(acc + 2 * pairs + t, v);
        }
    }
}

#define KMEANS_ENTRY(NAME, DMAX)                                                                       \
    extern "C" __global__ void NAME(const double *x, const double *w, int n, int d, const double *centres, \
                                    int k, int cosine, const double *scale, u64 *acc, int accumulate,   \
                                    int centresInShared, int accInShared, int *labels, double *dists,  \
                                    int minUpdate) {                                                    \
        kmeans_step<DMAX>(x, w, n, d, centres, k, cosine, scale, acc, accumulate, centresInShared,     \
                          accInShared, labels, dists, minUpdate);                                       \
    }

KMEANS_ENTRY(kmeans_step_d8, 8)
KMEANS_ENTRY(kmeans_step_d16, 16)
KMEANS_ENTRY(kmeans_step_d32, 32)
KMEANS_ENTRY(kmeans_step_d64, 64)
KMEANS_ENTRY(kmeans_step_dany, 0)
