/*
 * Counting sort of integer keys in [0, m), m <= 2^24, with a histopyramid.
 * CPU twin: io.sparkgpu.sort.SortCpu (same outputs, bit for bit); launcher: io.sparkgpu.sort.SortGpu.
 *
 * Keys-only sort (sort_hist_*, sort_pyramid, sort_keys_*)
 *   1. Histogram: h[k] = number of keys equal to k, into level 0 of the pyramid (uint32, zeroed by the host,
 *      padded with zeros up to M = 2^L >= m). Out-of-range keys are not counted; the smallest index of one is
 *      recorded (atomicMin) so the host can name it. Per warp, the most frequent key of its first load is
 *      counted with ballots in a register (a key holding half the input costs no atomics); the other keys
 *      are grouped per warp instruction (a ballot loop over the bits when m <= 256, __match_any_sync above)
 *      and the lowest lane of each group adds the group's size. sort_hist_shared keeps `copies` privatised
 *      histograms per block in shared memory (warp w uses copy w % copies) and flushes the non-zero bins
 *      with global atomics; sort_hist_global (m too large for shared memory) adds into the global level 0
 *      through a per-block cache of popular keys in shared memory (CACHE_SLOTS hashed slots, first key to find a
 *      slot empty keeps it, flushed once per block), so skewed keys do not contend for their bins in L2.
 *   2. Pyramid: level l+1 holds the pairwise sums of level l (level L is the single total n). Layout: level l
 *      starts at off(l) = 2M - (2M >> l) and has M >> l entries; 2M - 1 entries in all. sort_pyramid builds
 *      `levels` levels above level `src`, block b taking 2^levels entries of level src through shared memory:
 *      the host launches it once for L <= 12, else twice (levels 1..12 by M/4096 blocks, then the top by one).
 *   3. Output: position p belongs to the key found by descending from the root: at each level go left if p
 *      is below the left child's count, else subtract that count and go right. A block writes a chunk of
 *      CHUNK = 4096 consecutive positions [a, e). Two threads locate a and e-1 from the root (keys ka, kb and,
 *      for a, the first position of every node on its path). ka == kb: the chunk is one run and is filled.
 *      Otherwise every position of the chunk lies under the lowest common ancestor of ka and kb (level
 *      lam = bit length of ka ^ kb), so the work below starts there:
 *        sort_keys_descent  each thread takes 16 consecutive positions, descends from the ancestor for the
 *                           first and whenever its run ends (after trying the next 4 keys), O(lam) per run;
 *        sort_keys_runs     the block walks the counts of keys ka+1..kb, 1024 at a time, with a block scan;
 *                           each key whose run starts inside the chunk marks its first position, and an
 *                           inclusive max-scan over the chunk gives every position its key (O(1) per
 *                           position plus O(kb - ka) per chunk: best when runs are not much shorter than 1).
 *      Values are staged in shared memory (padded against bank conflicts) and stored as coalesced int4.
 *
 * Stable key-value sort (sort_count_*, sort_rowscan, sort_scatter_*): the permutation that sorts the keys,
 * ties in index order, as LSD passes of a stable counting sort on digits of <= 8 bits: one pass when
 * m <= 256, three when m = 2^24 (SortGpu.passBits). Per pass, with tiles of TILE = 4096 elements:
 *   sort_count_rN   counts[d * tiles + t] = keys of tile t with digit d (per-warp shared histograms,
 *                   grouped adds); pass 0 also records the smallest index of a key outside [0, m).
 *   sort_rowscan    one block per digit row: exclusive scan of the row over the tiles, the row total to
 *                   rowTotals[d]. The position of digit d's first element of tile t is then
 *                   start[d] + counts[d * tiles + t] with start = exclusive scan of rowTotals (done by
 *                   every scatter block, 256 values): the exclusive scan over (digit, tile) in digit-major order.
 *   sort_scatter_rN tile loaded warp-striped (element w*512 + i*32 + lane of warp w, item i); CUB's
 *                   BlockRadixRankMatch ranks the digits stably in that order (per-warp digit counters and
 *                   match groups, then a block scan), giving each element its place in the tile sorted by
 *                   digit and each digit its first place; the elements are exchanged through shared memory
 *                   into that order and written out so that consecutive threads write consecutive positions
 *                   of a digit run. The last pass writes the index (plus an offset) as int or long long.
 *   A pass reads keysIn and idxIn (null in pass 0: index = position) and writes keysOut (null in the last
 *   pass) and idxOut. Ranks, counts and offsets depend only on the data, never on scheduling: the output is
 *   the same on every run (and equals the CPU twin's unique stable order).
 *
 * Onesweep form (sort_os_hist, sort_os_pass_*; the default for two or more passes, SortGpu.stableKernel): one read
 *   of the keys counts the digits of every pass, then one kernel a pass ranks a tile as sort_scatter does and finds
 *   its offsets by a decoupled look-back over the earlier tiles instead of the count and row-scan launches; the
 *   tile's indices are copied to shared memory asynchronously while its keys are ranked. Same bits. Without
 *   indices (idxIn and idxOut null, keysOut set in every pass) the passes sort the keys alone: the keys-only sort's
 *   radix path for large key ranges (SortGpu.outputKernel).
 *
 * Wide keys (sort_gather, at the end): 64-bit keys sort as the stable passes over their low words, then over their
 * high words gathered into that order.
 *
 * Invalid keys: every kernel stays inside its buffers whatever the keys are (histograms skip them, digits
 * are masked), so the host may check the recorded index after the launches and throw.
 *
 * Sizes: n < 2^31 (positions, indices and counts are 32-bit; the launcher chunks larger work), m <= 2^24.
 * Key arrays passed to sort_hist_* and sort_count_* must be 16-byte aligned (int4 loads).
 *
 * Launch shapes (SortGpu) and resources (nvcc 13, sm_90; sm_80 within a few registers):
 *   sort_hist_shared   grid-stride, grid from occupancy, block 512, dynamic shared copies * m * 4 bytes
 *                      (m <= 2^15; copies = min(8, 64 KiB / 4m) so small ranges get 8 copies); 32 registers.
 *   sort_hist_global   same grid and block, no shared memory; 29 registers.
 *   sort_pyramid       block 512, 32 KiB static shared; grid M / 4096 (then 1), or 1 when M <= 4096; 22 registers.
 *   sort_keys_*        one block of 256 per CHUNK positions; ~17-18 KiB static shared; 31-32 registers
 *                      (sort_keys_runs: 4 bytes spilled on sm_90).
 *   sort_count_rN      one block of 256 per tile; 8 KiB (r8) / 512 B (r4) static shared; 30 registers.
 *   sort_rowscan       one block of 256 per digit row; 37 registers.
 *   sort_scatter_rN    one block of 256 per tile; 43 KiB (r8) / 34 KiB (r4) static shared; __launch_bounds__(256, 3):
 *                      at most 80 registers (8 bytes spilled on sm_90), so 3 blocks per SM. Without the minimum
 *                      the kernel took 127 registers and ran 2 blocks per SM: at 10^8 keys the stable order went
 *                      from 16.9 to 25.1 G keys/s (2^20) and 25.1 to 35.0 (2^16) with the third block (H200).
 */

#include <cub/cub.cuh>

#include "layout/sort.cuh"

#define FULL_MASK 0xffffffffu
#define NO_BAD 0x7fffffff
#define INVALID_LABEL 0xffffffffu

#define HOT_MIN_GROUP 4

#define PYR_THREADS 512
#define PYR_SEG (1 << PYR_SEG_LOG)

#define CHUNK_PADDED (CHUNK + CHUNK / 32)
#define RUNS_KEYS_PER_THREAD 4
#define NEXT_KEY_TRIES 4

#define SORT_WARPS (SORT_THREADS / 32)

#define SCAN_ITEMS 8

/* ------------------------------------------------------------------------------------------- helpers */

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }

__device__ __forceinline__ unsigned lanemask_lt() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

/*
 * Lanes of the (full) warp holding the same label. Labels of valid keys are < 2^bits; INVALID_LABEL marks a lane
 * without a key. Few bits: one ballot per bit (match.any is slow to match few bits), bit `bits` telling invalid
 * lanes apart; otherwise match.any.
 */
__device__ __forceinline__ unsigned warp_peers(unsigned label, int bits) {
    if (bits <= 8) {
        const unsigned l = label == INVALID_LABEL ? (1u << bits) : label;
        unsigned peers = FULL_MASK;
        for (int b = 0; b <= bits; b++) {
            const unsigned set = __ballot_sync(FULL_MASK, (l >> b) & 1u);
            peers &= ((l >> b) & 1u) ? set : ~set;
        }
        return peers;
    }
    return __match_any_sync(FULL_MASK, label);
}

__device__ __forceinline__ int warp_min(int v) {
    return __reduce_min_sync(FULL_MASK, v);
}

__device__ __forceinline__ void record_bad(int *bad, int firstBad) {
    const int v = warp_min(firstBad);
    if (lane_id() == 0 && v != NO_BAD) atomicMin(bad, v);
}

/* First entry of level l in a pyramid of 2^L leaves. */
__device__ __forceinline__ int offset_of_level(int L, int l) { return (2 << L) - ((2 << L) >> l); }

/* ----------------------------------------------------------------------------------------- histogram */

/*
 * One warp-wide step of the histogram: each lane offers one key (inRange: the lane has an element, at index
 * `index`). The warp's hot key is counted in a register (the same value in every lane), other keys by groups.
 */
/*
 * The block's cache of popular keys for the global histogram: CACHE_SLOTS slots in shared memory, a key's slot
 * fixed by a hash, taken by the first key that finds it empty (popular keys come early and often); a group whose
 * slot holds another key adds to the global histogram instead. Flushed with one global atomic per slot at the end,
 * so a skewed input (Zipf over 2^16 .. 2^24 keys) stops contending for its popular bins in L2. Counts are exact
 * whatever the order, so the histogram is the same.
 */
#define CACHE_SLOTS 4096

struct KeyCache {
    int *keys;          /* CACHE_SLOTS keys, -1: empty */
    unsigned *counts;   /* CACHE_SLOTS counts */
};

__device__ __forceinline__ unsigned cache_slot(unsigned key) { return (key * 0x9E3779B1u) >> 20; /* 12 bits */ }

template <bool CACHED>
__device__ __forceinline__ void hist_add(unsigned key, unsigned count, unsigned *__restrict__ h, KeyCache cache) {
    if (CACHED) {
        const unsigned slot = cache_slot(key);
        int held = cache.keys[slot];
        if (held < 0) held = atomicCAS(&cache.keys[slot], -1, (int) key);
        if (held < 0 || held == (int) key) {
            atomicAdd(&cache.counts[slot], count);
            return;
        }
    }
    atomicAdd(&h[key], count);
}

template <bool CACHED>
__device__ __forceinline__ void hist_step(int key, bool inRange, int index, int m, int bits, unsigned hot,
                                          unsigned &hotCount, unsigned *__restrict__ h, int &firstBad, KeyCache cache) {
    const bool valid = inRange && (unsigned) key < (unsigned) m;
    if (inRange && !valid) firstBad = min(firstBad, index);
    const bool isHot = valid && (unsigned) key == hot;
    hotCount += __popc(__ballot_sync(FULL_MASK, isHot));
    const unsigned label = valid && !isHot ? (unsigned) key : INVALID_LABEL;
    const unsigned peers = warp_peers(label, bits);
    if (label != INVALID_LABEL && (peers & lanemask_lt()) == 0) {
        hist_add<CACHED>((unsigned) key, (unsigned) __popc(peers), h, cache);
    }
}

/* The warp's hot key: the largest group among its lanes' first keys if at least HOT_MIN_GROUP lanes share it. */
__device__ __forceinline__ unsigned pick_hot(int key, bool inRange, int m, int bits) {
    const bool valid = inRange && (unsigned) key < (unsigned) m;
    const unsigned label = valid ? (unsigned) key : INVALID_LABEL;
    const unsigned peers = warp_peers(label, bits);
    const unsigned size = valid ? (unsigned) __popc(peers) : 0u;
    const unsigned best = __reduce_max_sync(FULL_MASK, size);
    if (best < HOT_MIN_GROUP) return INVALID_LABEL;
    const unsigned who = __ballot_sync(FULL_MASK, size == best);
    return __shfl_sync(FULL_MASK, label, __ffs(who) - 1);
}

/*
 * Histogram of keys[0, n) (index of keys[i] for error reports: base + i). Grid-stride over int4 loads; whole
 * warps stay in the loop so that the warp votes see every lane; block 0's first warp takes the n % 4 tail.
 */
template <bool CACHED>
__device__ __forceinline__ void histogram(const int *__restrict__ keys, int n, int m, int bits, unsigned *__restrict__ h,
                                          int *__restrict__ bad, int base, KeyCache cache) {
    const int4 *k4 = reinterpret_cast<const int4 *>(keys);
    const long long n4 = n >> 2;
    const long long stride = (long long) gridDim.x * blockDim.x;
    const long long first = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned lane = lane_id();
    int firstBad = NO_BAD;
    unsigned hotCount = 0;
    unsigned hot = INVALID_LABEL;
    if (first - lane < n4) {
        const int k0 = first < n4 ? __ldg(k4 + first).x : 0;
        hot = pick_hot(k0, first < n4, m, bits);
    }
    for (long long v = first; v - lane < n4; v += stride) {
        const bool in = v < n4;
        const int4 q = in ? __ldg(k4 + v) : make_int4(0, 0, 0, 0);
        const int i = base + (int) (4 * v);
        hist_step<CACHED>(q.x, in, i, m, bits, hot, hotCount, h, firstBad, cache);
        hist_step<CACHED>(q.y, in, i + 1, m, bits, hot, hotCount, h, firstBad, cache);
        hist_step<CACHED>(q.z, in, i + 2, m, bits, hot, hotCount, h, firstBad, cache);
        hist_step<CACHED>(q.w, in, i + 3, m, bits, hot, hotCount, h, firstBad, cache);
    }
    const int tail = n - (int) (4 * n4);
    if (tail > 0 && blockIdx.x == 0 && threadIdx.x < 32) {
        const bool in = (int) lane < tail;
        const int idx = (int) (4 * n4) + (int) lane;
        hist_step<CACHED>(in ? __ldg(keys + idx) : 0, in, base + idx, m, bits, hot, hotCount, h, firstBad, cache);
    }
    if (lane == 0 && hotCount != 0) atomicAdd(&h[hot], hotCount);
    if (bad != NULL) record_bad(bad, firstBad);
}

/* Dynamic shared memory: copies * m unsigned. */
extern "C" __global__ void __launch_bounds__(HIST_THREADS)
sort_hist_shared(const int *__restrict__ keys, int n, int m, int bits, int copies, unsigned *__restrict__ hist,
                 int *__restrict__ bad, int base) {
    extern __shared__ unsigned shist[];
    const int total = copies * m;
    for (int i = threadIdx.x; i < total; i += blockDim.x) shist[i] = 0u;
    __syncthreads();
    histogram<false>(keys, n, m, bits, shist + (int) ((threadIdx.x >> 5) % copies) * m, bad, base, KeyCache {});
    __syncthreads();
    for (int k = threadIdx.x; k < m; k += blockDim.x) {
        unsigned s = 0;
        for (int c = 0; c < copies; c++) s += shist[c * m + k];
        if (s != 0u) atomicAdd(&hist[k], s);
    }
}

extern "C" __global__ void __launch_bounds__(HIST_THREADS)
sort_hist_global(const int *__restrict__ keys, int n, int m, int bits, unsigned *__restrict__ hist,
                 int *__restrict__ bad, int base) {
    __shared__ int ckeys[CACHE_SLOTS];
    __shared__ unsigned ccounts[CACHE_SLOTS];
    for (int i = threadIdx.x; i < CACHE_SLOTS; i += blockDim.x) {
        ckeys[i] = -1;
        ccounts[i] = 0u;
    }
    __syncthreads();
    histogram<true>(keys, n, m, bits, hist, bad, base, KeyCache {ckeys, ccounts});
    __syncthreads();
    for (int i = threadIdx.x; i < CACHE_SLOTS; i += blockDim.x) {
        if (ckeys[i] >= 0 && ccounts[i] != 0u) atomicAdd(&hist[ckeys[i]], ccounts[i]);
    }
}

/* ------------------------------------------------------------------------------------------- pyramid */

/* Levels src+1 .. src+levels of the pyramid of 2^L leaves; block b reduces entries [b*2^levels, (b+1)*2^levels) of level src. */
extern "C" __global__ void __launch_bounds__(PYR_THREADS)
sort_pyramid(unsigned *__restrict__ pyr, int L, int src, int levels) {
    __shared__ unsigned seg[2 * PYR_SEG];
    const int size0 = 1 << levels;
    const unsigned *in = pyr + offset_of_level(L, src) + (long long) blockIdx.x * size0;
    for (int i = threadIdx.x; i < size0; i += blockDim.x) seg[i] = in[i];
    __syncthreads();
    int inOff = 0;
    int size = size0;
    for (int lv = 1; lv <= levels; lv++) {
        const int half = size >> 1;
        unsigned *out = pyr + offset_of_level(L, src + lv) + (long long) blockIdx.x * half;
        for (int j = threadIdx.x; j < half; j += blockDim.x) {
            const unsigned v = seg[inOff + 2 * j] + seg[inOff + 2 * j + 1];
            seg[inOff + size + j] = v;
            out[j] = v;
        }
        __syncthreads();
        inOff += size;
        size = half;
    }
}

/* -------------------------------------------------------------------------------------------- output */

__device__ __forceinline__ unsigned node(const unsigned *__restrict__ pyr, int L, int l, int j) {
    return __ldg(pyr + offset_of_level(L, l) + j);
}

/* Descends from node j of level l with p < count(l, j); returns the key, p becomes the offset in its run. */
__device__ __forceinline__ int descend(const unsigned *__restrict__ pyr, int L, int l, int j, unsigned &p) {
    while (l > 0) {
        --l;
        j <<= 1;
        const unsigned c = node(pyr, L, l, j);
        if (p >= c) {
            p -= c;
            ++j;
        }
    }
    return j;
}

struct MaxOp {
    __device__ __forceinline__ int operator()(int a, int b) const { return a > b ? a : b; }
};

__device__ __forceinline__ int padded(int i) { return i + (i >> 5); }

template <bool RUNS>
__device__ __forceinline__ void keys_chunk(const unsigned *__restrict__ pyr, int L, int p0, int count,
                                           int *__restrict__ out) {
    typedef cub::BlockScan<unsigned, OUT_THREADS> ScanU;
    typedef cub::BlockScan<int, OUT_THREADS> ScanI;
    __shared__ union {
        typename ScanU::TempStorage u;
        typename ScanI::TempStorage i;
    } tmp;
    __shared__ int vals[CHUNK_PADDED];
    __shared__ unsigned pathBase[32];
    __shared__ int ends[2];

    const int a = p0 + blockIdx.x * CHUNK;
    const int e = min(p0 + count, a + CHUNK);
    const int tid = threadIdx.x;
    if (tid == 0) { /* position a: key and the first position of each node on its path */
        unsigned p = (unsigned) a;
        unsigned start = 0;
        int j = 0;
        pathBase[L] = 0;
        for (int l = L; l > 0;) {
            --l;
            j <<= 1;
            const unsigned c = node(pyr, L, l, j);
            if (p >= c) {
                p -= c;
                start += c;
                ++j;
            }
            pathBase[l] = start;
        }
        ends[0] = j;
    } else if (tid == 32) {
        unsigned p = (unsigned) (e - 1);
        ends[1] = descend(pyr, L, L, 0, p);
    }
    __syncthreads();
    const int ka = ends[0];
    const int kb = ends[1];
    int *dst = out + (a - p0);
    const int len = e - a;

    if (ka == kb) { /* one run */
        if (len == CHUNK) {
            const int4 v = make_int4(ka, ka, ka, ka);
#pragma unroll
            for (int r = 0; r < CHUNK / 4 / OUT_THREADS; r++) reinterpret_cast<int4 *>(dst)[tid + r * OUT_THREADS] = v;
        } else {
            for (int i = tid; i < len; i += OUT_THREADS) dst[i] = ka;
        }
        return;
    }

    if (!RUNS) {
        const int lam = 32 - __clz(ka ^ kb);
        const int top = ka >> lam;
        const unsigned topStart = pathBase[lam];
        const int p = a + tid * OUT_ITEMS;
        if (p < e) {
            unsigned r = (unsigned) p - topStart;
            int k = descend(pyr, L, lam, top, r);
            unsigned c = node(pyr, L, 0, k);
            for (int i = 0; i < OUT_ITEMS && p + i < e; i++) {
                if (r >= c) { /* run of k ended: the next non-empty key, else a new descent */
                    bool found = false;
#pragma unroll 1
                    for (int t = 0; t < NEXT_KEY_TRIES && k + 1 + t <= kb; t++) {
                        const unsigned c2 = node(pyr, L, 0, k + 1 + t);
                        if (c2 != 0u) {
                            k = k + 1 + t;
                            c = c2;
                            r = 0;
                            found = true;
                            break;
                        }
                    }
                    if (!found) {
                        r = (unsigned) (p + i) - topStart;
                        k = descend(pyr, L, lam, top, r);
                        c = node(pyr, L, 0, k);
                    }
                }
                vals[padded(tid * OUT_ITEMS + i)] = k;
                r++;
            }
        }
    } else {
        for (int i = tid; i < CHUNK; i += OUT_THREADS) vals[padded(i)] = -1;
        __syncthreads();
        if (tid == 0) vals[0] = ka;
        unsigned run = pathBase[0] + node(pyr, L, 0, ka); /* first position of key ka + 1 */
        for (int w0 = ka + 1; w0 <= kb; w0 += OUT_THREADS * RUNS_KEYS_PER_THREAD) {
            unsigned c[RUNS_KEYS_PER_THREAD];
            unsigned s = 0;
            const int k0 = w0 + tid * RUNS_KEYS_PER_THREAD;
#pragma unroll
            for (int q = 0; q < RUNS_KEYS_PER_THREAD; q++) {
                c[q] = k0 + q <= kb ? node(pyr, L, 0, k0 + q) : 0u;
                s += c[q];
            }
            unsigned excl, total;
            ScanU(tmp.u).ExclusiveSum(s, excl, total);
            unsigned pos = run + excl;
#pragma unroll
            for (int q = 0; q < RUNS_KEYS_PER_THREAD; q++) {
                if (c[q] != 0u && pos < (unsigned) e) vals[padded((int) (pos - (unsigned) a))] = k0 + q;
                pos += c[q];
            }
            run += total;
            __syncthreads();
        }
        __syncthreads();
        int v[OUT_ITEMS];
        int mx = -1;
#pragma unroll
        for (int i = 0; i < OUT_ITEMS; i++) {
            v[i] = vals[padded(tid * OUT_ITEMS + i)];
            mx = max(mx, v[i]);
        }
        int before;
        ScanI(tmp.i).ExclusiveScan(mx, before, -1, MaxOp());
        int cur = before;
#pragma unroll
        for (int i = 0; i < OUT_ITEMS; i++) {
            cur = max(cur, v[i]);
            vals[padded(tid * OUT_ITEMS + i)] = cur;
        }
    }
    __syncthreads();
    if (len == CHUNK) {
#pragma unroll
        for (int r = 0; r < CHUNK / 4 / OUT_THREADS; r++) {
            const int q = 4 * (tid + r * OUT_THREADS);
            reinterpret_cast<int4 *>(dst)[tid + r * OUT_THREADS] =
                    make_int4(vals[padded(q)], vals[padded(q + 1)], vals[padded(q + 2)], vals[padded(q + 3)]);
        }
    } else {
        for (int i = tid; i < len; i += OUT_THREADS) dst[i] = vals[padded(i)];
    }
}

/* Sorted keys at positions [p0, p0 + count) into out[0, count); one block per CHUNK positions. */
extern "C" __global__ void __launch_bounds__(OUT_THREADS)
sort_keys_descent(const unsigned *__restrict__ pyr, int L, int p0, int count, int *__restrict__ out) {
    keys_chunk<false>(pyr, L, p0, count, out);
}

extern "C" __global__ void __launch_bounds__(OUT_THREADS)
sort_keys_runs(const unsigned *__restrict__ pyr, int L, int p0, int count, int *__restrict__ out) {
    keys_chunk<true>(pyr, L, p0, count, out);
}

/* ------------------------------------------------------------------------------------ stable passes */

/* Digit of a pass: `bits` bits from bit `shift` (keys taken as unsigned, so any int gives a digit in range). */
struct PassDigit {
    int shift;
    unsigned mask;
    __device__ __forceinline__ PassDigit(int s, int bits) : shift(s), mask((1u << bits) - 1u) {}
    __device__ __forceinline__ unsigned Digit(unsigned key) const { return (key >> shift) & mask; }
};

/* counts[d * tiles + t] for the digits d < 2^bits of tile t (one block per tile). */
template <int RB>
__device__ __forceinline__ void count_tile(const int *__restrict__ keys, int n, int shift, int bits, int tiles,
                                           unsigned *__restrict__ counts, int m, int *__restrict__ bad) {
    __shared__ unsigned h[SORT_WARPS][1 << RB];
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    for (int i = tid; i < SORT_WARPS * (1 << RB); i += SORT_THREADS) (&h[0][0])[i] = 0u;
    __syncthreads();
    const PassDigit dig(shift, bits);
    const int t = blockIdx.x;
    const long long base = (long long) t * TILE;
    const int len = (int) min((long long) TILE, (long long) n - base);
    int firstBad = NO_BAD;
    const unsigned below = lanemask_lt();
#pragma unroll
    for (int r = 0; r < TILE / 4 / SORT_THREADS; r++) {
        const int e = 4 * (tid + r * SORT_THREADS);
        int4 q;
        if (e + 3 < len) {
            q = __ldg(reinterpret_cast<const int4 *>(keys + base) + tid + r * SORT_THREADS);
        } else {
            q.x = e < len ? __ldg(keys + base + e) : 0;
            q.y = e + 1 < len ? __ldg(keys + base + e + 1) : 0;
            q.z = e + 2 < len ? __ldg(keys + base + e + 2) : 0;
            q.w = e + 3 < len ? __ldg(keys + base + e + 3) : 0;
        }
        const int kk[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const bool in = e + c < len;
            if (bad != NULL && in && (unsigned) kk[c] >= (unsigned) m) firstBad = min(firstBad, (int) base + e + c);
            const unsigned label = in ? dig.Digit((unsigned) kk[c]) : INVALID_LABEL;
            const unsigned peers = warp_peers(label, RB);
            if (in && (peers & below) == 0) atomicAdd(&h[warp][label], (unsigned) __popc(peers));
        }
    }
    __syncthreads();
    for (int d = tid; d < (1 << bits); d += SORT_THREADS) {
        unsigned s = 0;
#pragma unroll
        for (int w = 0; w < SORT_WARPS; w++) s += h[w][d];
        counts[(long long) d * tiles + t] = s;
    }
    if (bad != NULL) record_bad(bad, firstBad);
}

extern "C" __global__ void __launch_bounds__(SORT_THREADS)
sort_count_r4(const int *__restrict__ keys, int n, int shift, int bits, int tiles, unsigned *__restrict__ counts, int m,
              int *__restrict__ bad) {
    count_tile<4>(keys, n, shift, bits, tiles, counts, m, bad);
}

extern "C" __global__ void __launch_bounds__(SORT_THREADS)
sort_count_r8(const int *__restrict__ keys, int n, int shift, int bits, int tiles, unsigned *__restrict__ counts, int m,
              int *__restrict__ bad) {
    count_tile<8>(keys, n, shift, bits, tiles, counts, m, bad);
}

/* Exclusive scan of each row counts[row * tiles .. + tiles) in place (one block per row); row totals to rowTotals. */
extern "C" __global__ void __launch_bounds__(SCAN_THREADS)
sort_rowscan(unsigned *__restrict__ counts, int tiles, unsigned *__restrict__ rowTotals) {
    typedef cub::BlockScan<unsigned, SCAN_THREADS> Scan;
    __shared__ typename Scan::TempStorage tmp;
    unsigned *row = counts + (long long) blockIdx.x * tiles;
    unsigned carry = 0;
    for (int s = 0; s < tiles; s += SCAN_THREADS * SCAN_ITEMS) {
        unsigned v[SCAN_ITEMS];
        const int b = s + threadIdx.x * SCAN_ITEMS;
#pragma unroll
        for (int i = 0; i < SCAN_ITEMS; i++) v[i] = b + i < tiles ? row[b + i] : 0u;
        unsigned total;
        Scan(tmp).ExclusiveSum(v, v, total);
#pragma unroll
        for (int i = 0; i < SCAN_ITEMS; i++) {
            if (b + i < tiles) row[b + i] = v[i] + carry;
        }
        carry += total;
        __syncthreads();
    }
    if (threadIdx.x == 0) rowTotals[blockIdx.x] = carry;
}

template <typename IdxT>
__device__ __forceinline__ void store_index(IdxT *out, int pos, long long offset, int idx);

template <>
__device__ __forceinline__ void store_index<int>(int *out, int pos, long long offset, int idx) {
    out[pos] = (int) offset + idx;
}

template <>
__device__ __forceinline__ void store_index<long long>(long long *out, int pos, long long offset, int idx) {
    out[pos] = offset + idx;
}

/* The tile's keys, warp-striped (element w*512 + i*32 + lane of warp w, item i); past the end: the largest digit,
 * ranked after every element of the tile. */
__device__ __forceinline__ void load_tile_keys(unsigned (&keys)[SORT_ITEMS], const int *__restrict__ keysIn, int base,
                                               int len, int warp, int lane) {
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++) {
        const int e = warp * (SORT_ITEMS * 32) + i * 32 + lane;
        keys[i] = e < len ? (unsigned) __ldg(keysIn + base + e) : 0xffffffffu;
    }
}

/* The tile's elements in rank order (sKey, sIdx) written out at delta[digit] + rank, consecutive threads at
 * consecutive positions of a digit run; keysOut null, or (MAY_SKIP_IDX) idxOut null: not written. */
template <typename IdxT, bool MAY_SKIP_IDX>
__device__ __forceinline__ void write_tile(const int *sKey, const int *sIdx, const int *delta, PassDigit dig, int len,
                                           int *__restrict__ keysOut, IdxT *__restrict__ idxOut, long long offset) {
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++) {
        const int r = i * SORT_THREADS + threadIdx.x;
        if (r < len) {
            const int key = sKey[r];
            const int pos = delta[dig.Digit((unsigned) key)] + r;
            if (keysOut != NULL) keysOut[pos] = key;
            if (!MAY_SKIP_IDX || idxOut != NULL) store_index<IdxT>(idxOut, pos, offset, sIdx[r]);
        }
    }
}

/* One stable pass over tile blockIdx.x: see the header. */
template <int RB, typename IdxT>
__device__ __forceinline__ void scatter_tile(const int *__restrict__ keysIn, const int *__restrict__ idxIn, int n,
                                             int shift, int bits, int tiles, const unsigned *__restrict__ counts,
                                             const unsigned *__restrict__ rowTotals, int *__restrict__ keysOut,
                                             IdxT *__restrict__ idxOut, long long offset) {
    typedef cub::BlockRadixRankMatch<SORT_THREADS, RB, false> Rank;
    typedef cub::BlockScan<unsigned, SORT_THREADS> Scan;
    __shared__ union {
        typename Rank::TempStorage rank;
        typename Scan::TempStorage scan;
    } tmp;
    __shared__ int sKey[TILE];
    __shared__ int sIdx[TILE];
    __shared__ int delta[1 << RB];

    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int t = blockIdx.x;
    const int base = t * TILE;
    const int len = min(TILE, n - base);
    const int digits = 1 << bits;

    /* first position of digit d in the output: exclusive scan of the row totals (thread d) */
    const unsigned total = tid < digits ? rowTotals[tid] : 0u;
    unsigned digitStart;
    Scan(tmp.scan).ExclusiveSum(total, digitStart);
    const unsigned tileStart = tid < digits ? digitStart + counts[(long long) tid * tiles + t] : 0u;
    __syncthreads();

    unsigned keys[SORT_ITEMS];
    load_tile_keys(keys, keysIn, base, len, warp, lane);
    int ranks[SORT_ITEMS];
    int firstRank[Rank::BINS_TRACKED_PER_THREAD];
    const PassDigit dig(shift, bits);
    Rank(tmp.rank).RankKeys(keys, ranks, dig, firstRank);
    if (tid < digits) delta[tid] = (int) (tileStart - (unsigned) firstRank[0]);
    /* indices are loaded only now, to keep registers free during the ranking */
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++) {
        const int e = warp * (SORT_ITEMS * 32) + i * 32 + lane;
        sKey[ranks[i]] = (int) keys[i];
        if (e < len) sIdx[ranks[i]] = idxIn != NULL ? __ldg(idxIn + base + e) : base + e;
    }
    __syncthreads();
    write_tile<IdxT, false>(sKey, sIdx, delta, dig, len, keysOut, idxOut, offset);
}

#define SORT_SCATTER(RB, SUFFIX, IDXT)                                                                             \
    extern "C" __global__ void __launch_bounds__(SORT_THREADS, 3) sort_scatter_r##RB##_##SUFFIX(                  \
            const int *__restrict__ keysIn, const int *__restrict__ idxIn, int n, int shift, int bits, int tiles,  \
            const unsigned *__restrict__ counts, const unsigned *__restrict__ rowTotals, int *__restrict__ keysOut, \
            IDXT *__restrict__ idxOut, long long offset) {                                                          \
        scatter_tile<RB, IDXT>(keysIn, idxIn, n, shift, bits, tiles, counts, rowTotals, keysOut, idxOut, offset);  \
    }

SORT_SCATTER(4, i32, int)
SORT_SCATTER(4, i64, long long)
SORT_SCATTER(8, i32, int)
SORT_SCATTER(8, i64, long long)

/* -------------------------------------------------------------------------------- onesweep stable passes */

/*
 * The stable passes in onesweep form (SortGpu.Stable with two or more passes; the passes' results are those of
 * sort_count/sort_rowscan/sort_scatter above, bit for bit, since a stable pass has one result):
 *   sort_os_hist    one read of the keys gives the digit counts of every pass at once: hist[(firstPass + q) * 256
 *                   + d] for pass q < passes, whose bits are the q-th nibble of bitsPacked and whose shift is the
 *                   sum of the bits before. Per-block shared histograms (one copy per warp modulo OS_HIST_COPIES),
 *                   flushed with global atomics (integer sums: the same on every run); the warp's hot key (the
 *                   largest group of its first load, pick_hot) is counted in a register. With m > 0 the smallest
 *                   index of a key outside [0, m) is recorded (the key is still counted by its masked digits, so
 *                   the passes stay inside the buffers).
 *   sort_os_pass_*  one block per tile; a block takes its tile number from an atomic counter, so every earlier
 *                   tile's block is already running and each look-back ends. The tile is ranked as sort_scatter
 *                   ranks it. Thread d publishes the tile's count of digit d (flag AGG), then adds earlier tiles'
 *                   entries of digit d, walking back until one holds an inclusive prefix (flag INCL), and
 *                   publishes its own inclusive prefix. Flag and value share one 64-bit word (one store, one
 *                   load); flags carry the pass number, so one status array, zeroed once per sort, serves every
 *                   pass. The first position of digit d in the tile is the exclusive scan of the pass's histogram
 *                   at d plus the tiles before at d: sort_scatter's start[d] + counts[d * tiles + t].
 */
#define OS_HIST_COPIES 4

static_assert(SORT_THREADS == OS_DIGITS, "sort_os_pass uses thread d for digit d");

__device__ __forceinline__ void os_count(unsigned key, int index, int m, unsigned hot, unsigned &hotCount,
                                         unsigned (*__restrict__ h)[OS_DIGITS], const int *shifts,
                                         const unsigned *masks, int passes, int &firstBad) {
    if (m > 0 && key >= (unsigned) m) firstBad = min(firstBad, index);
    if (key == hot) {
        hotCount++;
        return;
    }
#pragma unroll
    for (int q = 0; q < 4; q++) {
        if (q < passes) atomicAdd(&h[q][(key >> shifts[q]) & masks[q]], 1u);
    }
}

/* The warp's hot key among its lanes' first keys (all lanes call it); 0xffffffff when none. */
__device__ __forceinline__ unsigned os_pick_hot(unsigned key, bool in) {
    const unsigned peers = __match_any_sync(FULL_MASK, in ? key : 0u);
    const unsigned size = in ? (unsigned) __popc(peers) : 0u;
    const unsigned best = __reduce_max_sync(FULL_MASK, size);
    if (best < HOT_MIN_GROUP) return INVALID_LABEL;
    const unsigned who = __ballot_sync(FULL_MASK, size == best);
    return __shfl_sync(FULL_MASK, key, __ffs(who) - 1);
}

extern "C" __global__ void __launch_bounds__(SORT_THREADS)
sort_os_hist(const int *__restrict__ keys, int n, int passes, int bitsPacked, int firstPass,
             unsigned *__restrict__ hist, int m, int *__restrict__ bad) {
    __shared__ unsigned h[OS_HIST_COPIES][4][OS_DIGITS];
    for (int i = threadIdx.x; i < OS_HIST_COPIES * 4 * OS_DIGITS; i += SORT_THREADS) (&h[0][0][0])[i] = 0u;
    int shifts[4];
    unsigned masks[4];
    int sh = 0;
#pragma unroll
    for (int q = 0; q < 4; q++) {
        const int b = q < passes ? (bitsPacked >> (4 * q)) & 15 : 0;
        shifts[q] = sh;
        masks[q] = (1u << b) - 1u;
        sh += b;
    }
    __syncthreads();
    unsigned (*hc)[OS_DIGITS] = h[(threadIdx.x >> 5) % OS_HIST_COPIES];
    const int4 *k4 = reinterpret_cast<const int4 *>(keys);
    const long long n4 = n >> 2;
    const long long stride = (long long) gridDim.x * blockDim.x;
    const long long first = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned lane = lane_id();
    int firstBad = NO_BAD;
    unsigned hotCount = 0;
    unsigned hot = INVALID_LABEL;
    if (first - lane < n4) hot = os_pick_hot(first < n4 ? (unsigned) __ldg(k4 + first).x : 0u, first < n4);
    for (long long v = first; v < n4; v += stride) {
        const int4 q = __ldg(k4 + v);
        const int i = (int) (4 * v);
        os_count((unsigned) q.x, i, m, hot, hotCount, hc, shifts, masks, passes, firstBad);
        os_count((unsigned) q.y, i + 1, m, hot, hotCount, hc, shifts, masks, passes, firstBad);
        os_count((unsigned) q.z, i + 2, m, hot, hotCount, hc, shifts, masks, passes, firstBad);
        os_count((unsigned) q.w, i + 3, m, hot, hotCount, hc, shifts, masks, passes, firstBad);
    }
    const int tail = n - (int) (4 * n4);
    if (blockIdx.x == 0 && (int) threadIdx.x < tail) {
        const int idx = (int) (4 * n4) + (int) threadIdx.x;
        os_count((unsigned) __ldg(keys + idx), idx, m, hot, hotCount, hc, shifts, masks, passes, firstBad);
    }
    const unsigned warpHot = __reduce_add_sync(FULL_MASK, hotCount);
    if (lane == 0 && warpHot != 0) {
        for (int q = 0; q < passes; q++) atomicAdd(&hc[q][(hot >> shifts[q]) & masks[q]], warpHot);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < passes * OS_DIGITS; i += SORT_THREADS) {
        const int q = i / OS_DIGITS, d = i % OS_DIGITS;
        unsigned sum = 0;
#pragma unroll
        for (int c = 0; c < OS_HIST_COPIES; c++) sum += h[c][q][d];
        if (sum != 0) atomicAdd(&hist[(firstPass + q) * OS_DIGITS + d], sum);
    }
    if (bad != NULL) record_bad(bad, firstBad);
}

/* Asynchronous 4-byte copy global -> shared (sm_80+), and the wait for this thread's copies. */
__device__ __forceinline__ void cp_async4(int *smem, const int *gmem) {
    const unsigned s = (unsigned) __cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem) : "memory");
}

__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

/* One onesweep pass over the tile this block takes: see above. */
template <typename IdxT>
__device__ __forceinline__ void onesweep_tile(const int *__restrict__ keysIn, const int *__restrict__ idxIn, int n,
                                              int shift, int bits, int pass, const unsigned *__restrict__ hist,
                                              int *__restrict__ tileCounter, unsigned long long *status,
                                              int *__restrict__ keysOut, IdxT *__restrict__ idxOut, long long offset) {
    typedef cub::BlockRadixRankMatch<SORT_THREADS, 8, false> Rank;
    typedef cub::BlockScan<unsigned, SORT_THREADS> Scan;
    __shared__ union {
        typename Rank::TempStorage rank;
        typename Scan::TempStorage scan;
    } tmp;
    __shared__ int sKey[TILE];
    __shared__ int sIdx[TILE];
    __shared__ int delta[OS_DIGITS];
    __shared__ int sFirst[OS_DIGITS];
    __shared__ int sTile;

    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int digits = 1 << bits;
    if (tid == 0) sTile = atomicAdd(tileCounter, 1);
    const unsigned total = tid < digits ? hist[pass * OS_DIGITS + tid] : 0u;
    unsigned digitStart;
    Scan(tmp.scan).ExclusiveSum(total, digitStart);
    __syncthreads();
    const int t = sTile;
    const int base = t * TILE;
    const int len = min(TILE, n - base);

    /* the tile's indices are copied into sKey (free until the keys are exchanged) while the keys are ranked */
    if (idxIn != NULL) {
#pragma unroll
        for (int i = 0; i < SORT_ITEMS; i++) {
            const int e = warp * (SORT_ITEMS * 32) + i * 32 + lane;
            if (e < len) cp_async4(sKey + e, idxIn + base + e);
        }
    }
    unsigned keys[SORT_ITEMS];
    load_tile_keys(keys, keysIn, base, len, warp, lane);
    int ranks[SORT_ITEMS];
    int firstRank[Rank::BINS_TRACKED_PER_THREAD];
    const PassDigit dig(shift, bits);
    Rank(tmp.rank).RankKeys(keys, ranks, dig, firstRank);
    if (tid < digits) sFirst[tid] = firstRank[0];
    cp_async_wait_all();
    __syncthreads();
    /* indices into rank order (sIdx) now, so that the look-back below finds more tiles published */
    if (idxOut != NULL) {
#pragma unroll
        for (int i = 0; i < SORT_ITEMS; i++) {
            const int e = warp * (SORT_ITEMS * 32) + i * 32 + lane;
            if (e < len) sIdx[ranks[i]] = idxIn != NULL ? sKey[e] : base + e;
        }
    }
    if (tid < digits) {
        /* past-the-end elements hold the last digit and rank after the tile's elements */
        const unsigned count = (unsigned) ((tid + 1 < digits ? sFirst[tid + 1] : len) - sFirst[tid]);
        const unsigned long long agg = (unsigned long long) (2 * pass + 1) << 32;
        const unsigned long long incl = (unsigned long long) (2 * pass + 2) << 32;
        volatile unsigned long long *st = status;
        unsigned before = 0;
        if (t == 0) {
            st[tid] = incl | count;
        } else {
            st[(long long) t * OS_DIGITS + tid] = agg | count;
            for (int j = t - 1;;) {
                const unsigned long long v = st[(long long) j * OS_DIGITS + tid];
                const unsigned long long f = v & 0xffffffff00000000ull;
                if (f == incl) {
                    before += (unsigned) v;
                    break;
                }
                if (f == agg) {
                    before += (unsigned) v;
                    j--;
                }
            }
            st[(long long) t * OS_DIGITS + tid] = incl | (before + count);
        }
        delta[tid] = (int) (digitStart + before - (unsigned) sFirst[tid]);
    }
    __syncthreads(); /* every index read out of sKey */
#pragma unroll
    for (int i = 0; i < SORT_ITEMS; i++) sKey[ranks[i]] = (int) keys[i];
    __syncthreads();
    write_tile<IdxT, true>(sKey, sIdx, delta, dig, len, keysOut, idxOut, offset);
}

#define SORT_ONESWEEP(SUFFIX, IDXT)                                                                                \
    extern "C" __global__ void __launch_bounds__(SORT_THREADS, 3) sort_os_pass_##SUFFIX(                          \
            const int *__restrict__ keysIn, const int *__restrict__ idxIn, int n, int shift, int bits, int pass,   \
            const unsigned *__restrict__ hist, int *__restrict__ tileCounter, unsigned long long *status,          \
            int *__restrict__ keysOut, IDXT *__restrict__ idxOut, long long offset) {                              \
        onesweep_tile<IDXT>(keysIn, idxIn, n, shift, bits, pass, hist, tileCounter, status, keysOut, idxOut,       \
                            offset);                                                                               \
    }

SORT_ONESWEEP(i32, int)
SORT_ONESWEEP(i64, long long)

/* ------------------------------------------------------------------------------------------ wide keys */

/*
 * Stable order of 64-bit keys (SortGpu.orderWide): the stable passes above run on the low 32-bit words; then this
 * kernel puts the high words into the order reached, dst[i] = src[idx[i]] (src: high words in input order), and
 * further passes sort them, carrying the indices. One thread per element, block 256.
 */
extern "C" __global__ void __launch_bounds__(256)
sort_gather(const int *__restrict__ src, const int *__restrict__ idx, int n, int *__restrict__ dst) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = __ldg(src + __ldg(idx + i));
}

/* ------------------------------------------------------------------------------------------ 64-bit pairs */

/*
 * Stable LSD radix sort of (64-bit unsigned key, int index) pairs already on the device, one 8-bit digit per pass at
 * bit `shift` (io.sparkgpu.sort.PairRadixSort, whose CPU twin has the same passes; the host skips a pass whose digit
 * is the same for every key). The general path for callers that build their keys on the device (isotonic's sort
 * and pool). Per pass, tiles of TILE = 4096 pairs:
 *   sort_p64_count    one block per tile: counts[d * tiles + t] = keys of tile t with digit d (a shared histogram).
 *   sort_rowscan      (above) one block per digit: the row scanned over the tiles, its total to rowTotals[d].
 *   sort_p64_scatter  one block per tile, thread = digit for the offsets: the first output position of (d, t) is
 *                     the exclusive scan of the row totals at d plus the scanned counts[d * tiles + t]. Then
 *                     SORT_ITEMS rounds of 256 consecutive pairs: ranks within a warp by __match_any_sync, per-warp
 *                     digit counts scanned over the warps by thread = digit (order: round, warp, lane), so the
 *                     scatter is stable; a stable pass has one result, which the CPU twin computes too.
 */
#define P64_DIGIT_BITS 8
#define P64_DIGITS (1 << P64_DIGIT_BITS)

static_assert(SORT_THREADS == P64_DIGITS, "sort_p64_* use thread d for digit d");

extern "C" __global__ void __launch_bounds__(SORT_THREADS)
sort_p64_count(const unsigned long long *__restrict__ keys, int len, int shift, int tiles,
               unsigned *__restrict__ counts) {
    __shared__ unsigned h[P64_DIGITS];
    const int t = blockIdx.x;
    h[threadIdx.x] = 0u;
    __syncthreads();
    const long long from = (long long) t * TILE;
    for (int k = 0; k < SORT_ITEMS; k++) {
        const long long i = from + (long long) k * SORT_THREADS + threadIdx.x;
        if (i < len) atomicAdd(&h[(int) ((keys[i] >> shift) & (P64_DIGITS - 1))], 1u);
    }
    __syncthreads();
    counts[(long long) threadIdx.x * tiles + t] = h[threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(SORT_THREADS)
sort_p64_scatter(const unsigned long long *__restrict__ keysIn, const int *__restrict__ idxIn,
                 unsigned long long *__restrict__ keysOut, int *__restrict__ idxOut, int len, int shift, int tiles,
                 const unsigned *__restrict__ counts, const unsigned *__restrict__ rowTotals) {
    typedef cub::BlockScan<unsigned, SORT_THREADS> Scan;
    __shared__ typename Scan::TempStorage scanTemp;
    __shared__ int wcnt[SORT_WARPS][P64_DIGITS];
    __shared__ int next[P64_DIGITS];
    const int t = blockIdx.x;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned digitStart;
    Scan(scanTemp).ExclusiveSum(rowTotals[threadIdx.x], digitStart);
    next[threadIdx.x] = (int) (digitStart + counts[(long long) threadIdx.x * tiles + t]);
    const unsigned below = (1u << lane) - 1u;
    for (int k = 0; k < SORT_ITEMS; k++) {
        const long long i = (long long) t * TILE + (long long) k * SORT_THREADS + threadIdx.x;
        const bool valid = i < len;
        unsigned long long key = 0;
        int row = 0, d = P64_DIGITS; /* no digit */
        if (valid) {
            key = keysIn[i];
            row = idxIn[i];
            d = (int) ((key >> shift) & (P64_DIGITS - 1));
        }
#pragma unroll
        for (int q = 0; q < SORT_WARPS; q++) wcnt[q][threadIdx.x] = 0;
        __syncthreads();
        const unsigned peers = __match_any_sync(FULL_MASK, d);
        const int rank = __popc(peers & below);
        if (valid && rank == 0) wcnt[warp][d] = __popc(peers);
        __syncthreads();
        { /* thread = digit: exclusive scan over the warps, continuing from the previous rounds */
            int run = next[threadIdx.x];
#pragma unroll
            for (int q = 0; q < SORT_WARPS; q++) {
                const int c = wcnt[q][threadIdx.x];
                wcnt[q][threadIdx.x] = run;
                run += c;
            }
            next[threadIdx.x] = run;
        }
        __syncthreads();
        if (valid) {
            const int dst = wcnt[warp][d] + rank;
            keysOut[dst] = key;
            idxOut[dst] = row;
        }
        __syncthreads();
    }
}
