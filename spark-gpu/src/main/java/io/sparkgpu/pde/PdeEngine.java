package io.sparkgpu.pde;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuResources;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.cuda.KernelTimer;
import java.util.Arrays;
import java.util.Random;
import jcuda.Pointer;

/**
 * The public internal surface of the pde engine for the benchmarks, commands and tests of spark-jobs: whole
 * FitzHugh-Nagumo runs of arrays on one twin without Spark (the CPU twin {@code FhnCpu}, the 2-D ADI on either twin;
 * the dispatcher {@link FhnStep} with its fallback is the public library call), the batched tridiagonal solvers on
 * their own, and kernel-only timings (CUDA events, data resident on the device, no transfer inside the interval) of
 * the explicit step, the batched Thomas, the partitioned batched solver, cyclic reduction and a plain copy (the
 * bandwidth reference of the same run).
 *
 * <p><b>Batched tridiagonal solvers</b> (interleaved layout: row i of system j at i S + j). The batched Thomas
 * ({@link #thomasBatch}) is one thread per system: one division chain per system, and c', d' written to memory and
 * read back (9 doubles of traffic per unknown where 5 count). The partitioned solver ({@link #tridiagPartition},
 * kernels {@code pde_tridiag_partition_R4/_R8/_R16}, twin {@code FhnCpu.partitionInterleaved}) cuts each system into
 * chunks of R rows, one thread per chunk with its rows in registers: a local elimination per chunk, the chunks'
 * interface unknowns by parallel cyclic reduction in shared memory, then every row back; a, b and c are only read
 * and d receives the solution, so each unknown costs 5 doubles of traffic. n up to
 * {@link #PARTITION_MAX_UNKNOWNS}. Its staged kernels ({@link #partitionStagedPlan}, {@code
 * pde_tridiag_partition_R8_S/_R16_S}) run persistent blocks that copy the next group of systems into shared memory
 * while they solve the current one: the automatic plan on tiles above 512 unknowns. Both need a non-singular
 * elimination without pivoting (diagonal dominance suffices, as in {@link #randomSystems}).
 */
public final class PdeEngine {
    private PdeEngine() {
    }

    /**
     * The systems of the last timed solve, reused by the next one of the same shape and seed (timeSolve does not
     * change them on the host): a benchmark times several solvers and launch shapes on each shape, and generating
     * 10^6 x 128 systems takes seconds.
     */
    private static Object[] lastTimed;

    /**
     * Systems to generate for a timed batch of S: whole tiles of {@link #PARTITION_TILE}, so the batched solvers'
     * timings on either layout share one set of arrays (each kernel reads only its S systems).
     */
    private static int tiledRows(int S) {
        return Math.toIntExact(tiledLength(S, 1, PARTITION_TILE));
    }

    private static synchronized double[][] timedSystems(int S, int n, long seed) {
        Object[] l = lastTimed;
        if (l != null && (int) l[0] == S && (int) l[1] == n && (long) l[2] == seed) {
            return (double[][]) l[3];
        }
        lastTimed = null; // the old arrays may be collected before the new ones are made
        double[][] sys = randomSystems(S, n, seed);
        lastTimed = new Object[] {S, n, seed, sys};
        return sys;
    }

    /** S diagonally dominant systems of n unknowns: {a, b, c, d}, each S n long (any layout: rows are i.i.d.). */
    public static double[][] randomSystems(int S, int n, long seed) {
        Random r = new Random(seed);
        int len = Math.multiplyExact(S, n);
        double[][] out = new double[4][len];
        for (int e = 0; e < len; e++) {
            out[0][e] = r.nextDouble() - 0.5;
            out[1][e] = 2.0 + r.nextDouble();
            out[2][e] = r.nextDouble() - 0.5;
            out[3][e] = r.nextDouble() * 2 - 1;
        }
        return out;
    }

    private static DeviceBuffer[] upload(CudaDevice dev, GpuStream st, double[][] sys, int extra) {
        DeviceBuffer[] b = new DeviceBuffer[4 + extra];
        try {
            for (int q = 0; q < 4 + extra; q++) {
                b[q] = DeviceBuffer.ofDoubles(dev, sys[0].length);
                if (q < 4) {
                    b[q].upload(sys[q], st);
                }
            }
            return b;
        } catch (RuntimeException e) {
            GpuResources.closeAll(b);
            throw e;
        }
    }

    /** Batched Thomas on the interleaved layout (element i of system j at i S + j): the solutions, same layout. */
    public static double[] thomasBatch(CudaDevice dev, int S, int n, double[][] sys) {
        return thomasBatch(dev, S, n, sys, false);
    }

    /**
     * {@link #thomasBatch(CudaDevice, int, int, double[][])}; {@code shared}: the variant with the intermediate in
     * shared memory (pde_thomas_batch_shared; n up to {@link #thomasSharedMaxUnknowns}). Same bits.
     */
    public static double[] thomasBatch(CudaDevice dev, int S, int n, double[][] sys, boolean shared) {
        return solveOnce(dev, S, n, sys, "batched Thomas", (st, b) -> launchThomas(st, S, n, b, shared));
    }

    /** One solver launch on {a, b, c, d} in b[0..3] (the solution into d, b[3]). */
    @FunctionalInterface
    private interface Solve {
        void launch(GpuStream st, DeviceBuffer[] b);
    }

    /** Uploads {@code sys}, runs {@code solve} once and downloads d (the solutions). */
    private static double[] solveOnce(CudaDevice dev, int S, int n, double[][] sys, String what, Solve solve) {
        try (GpuStream st = new GpuStream(dev)) {
            DeviceBuffer[] b = upload(dev, st, sys, 0);
            try {
                solve.launch(st, b);
                double[] x = new double[sys[0].length];
                b[3].download(x, x.length, st);
                st.synchronize(what + " " + S + " x " + n);
                return x;
            } finally {
                GpuResources.closeAll(b);
            }
        }
    }

    /** Threads per block of pde_thomas_batch_shared (each holds 2 n doubles of shared memory). */
    static final int THOMAS_SHARED_THREADS = 32;

    /** The largest system pde_thomas_batch_shared takes on {@code dev}. */
    public static int thomasSharedMaxUnknowns(CudaDevice dev) {
        return dev.maxSharedMemoryOptin() / (16 * THOMAS_SHARED_THREADS);
    }

    private static void launchThomas(GpuStream st, int S, int n, DeviceBuffer[] b, boolean shared) {
        if (!shared) {
            KernelLauncher.launch(st, FhnGpu.MODULE, "pde_thomas_batch", FhnGpu.grid(S, FhnGpu.AXON_THREADS),
                    FhnGpu.AXON_THREADS, 0, S, n, b[0], b[1], b[2], b[3]);
            return;
        }
        int max = thomasSharedMaxUnknowns(st.device());
        if (n > max) {
            throw new IllegalArgumentException("the shared-memory Thomas takes at most " + max + " unknowns on this "
                    + "device, got " + n);
        }
        KernelLauncher.launch(st, FhnGpu.MODULE, "pde_thomas_batch_shared", FhnGpu.grid(S, THOMAS_SHARED_THREADS),
                THOMAS_SHARED_THREADS, 16 * n * THOMAS_SHARED_THREADS, S, n, b[0], b[1], b[2], b[3]);
    }

    // ------------------------------------------------------------------ partitioned batched solver

    /** The chunk sizes R with a kernel (pde_tridiag_partition_R&lt;R&gt;). */
    public static final int[] PARTITION_R = {4, 8, 16};

    /**
     * The largest n the partitioned solver takes, for every R: a block holds SB &gt;= 1 systems of K = ceil(n / R)
     * chunk threads each, within the kernel's thread budget ({@link #partitionMaxThreads}: 1024 x 4, 512 x 8,
     * 256 x 16 = 4096 unknowns at SB = 1); its shared memory, 48 bytes a thread, stays within the default 48 KiB.
     */
    public static final int PARTITION_MAX_UNKNOWNS = 4096;

    /**
     * Threads the automatic R wants in flight, per SM: 4 blocks of 256 (about 135k threads on the H200's 132 SMs).
     * See {@link #partitionR}.
     */
    static final int PARTITION_THREADS_PER_SM = 4 * 256;

    /**
     * Threads a block of pde_tridiag_partition_R&lt;r&gt; may have: its __launch_bounds__ (include/layout/pde.cuh),
     * set by the R rows it keeps in registers (ptxas, sm_90: R4 58 registers, R8 94, R16 172, no spills).
     */
    static int partitionMaxThreads(int r) {
        switch (r) {
            case 4:
                return 1024;
            case 8:
                return 512;
            case 16:
                return 256;
            default:
                throw new IllegalArgumentException("the partitioned tridiagonal solver has kernels for R = 4, 8 and 16, "
                        + "got R = " + r);
        }
    }

    /**
     * The automatic chunk size for S systems of n unknowns on a device of {@code sms} SMs: the largest R in
     * {16, 8, 4} for which the launch has S ceil(n / R) &gt;= {@link #PARTITION_THREADS_PER_SM} sms threads (about
     * 135k on 132 SMs), else R = 4 (the most threads). An R whose K = ceil(n / R) equals that of R / 2 (n &lt;= R / 2)
     * is skipped: the same threads with more identity rows of padding and more registers.
     *
     * <p>Why, measured on one H200 (132 SMs; copy kernel about 3640 GB/s; % = 40 bytes per unknown / time / copy
     * bandwidth; {@code bench fhn --tridiag ... --tridiag-r auto,4,8,16}, SB by the rule of the time, at least 4):
     * <pre>
     * | shape       | Thomas | R=4 | R=8 | R=16 |
     * | 10^6 x 128  |  61%   | 84% | 77% | 105% |
     * | 10^5 x 128  |  51%   | 89% | 84% |  99% |
     * | 10^4 x 128  |  11%   | 61% | 79% |  61% |   small batch: R=16 has 80k threads, R=8 160k
     * | 10^5 x 256  |  51%   | 49% | 48% |  93% |
     * | 10^5 x 1024 |  51%   | 41% | 42% |  41% |   every R alike
     * </pre>
     * The largest R wins when the batch gives enough threads (fewer, longer chunks: the sweeps' rows in registers
     * carry more bytes in flight per thread, and the PCR has fewer rows and steps); the small batch (10^4 x 128) is
     * short of threads at R = 16 and wants the R that reaches them. The former rule (smallest R with K &lt;= 32) lost
     * up to half the bandwidth at 10^5 x 256.
     */
    public static int partitionR(int S, int n, int sms) {
        checkPartitionUnknowns(n);
        if (S < 1 || sms < 1) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver needs S >= 1 systems and a device "
                    + "of >= 1 SMs, got S = " + S + ", " + sms + " SMs");
        }
        long want = (long) PARTITION_THREADS_PER_SM * sms;
        for (int r = 16; r > 4; r /= 2) {
            int k = (n + r - 1) / r;
            if (k == (n + r / 2 - 1) / (r / 2)) {
                continue;
            }
            if ((long) S * k >= want) {
                return r;
            }
        }
        return 4;
    }

    private static void checkPartitionUnknowns(int n) {
        if (n < 1 || n > PARTITION_MAX_UNKNOWNS) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver takes 1 <= n <= "
                    + PARTITION_MAX_UNKNOWNS + " unknowns per system (a block of ceil(n / R) chunk threads per system "
                    + "within the kernel's 1024 / 512 / 256 threads at R = 4 / 8 / 16), got n = " + n);
        }
    }

    /** Threads a block should have: {@value #PARTITION_TARGET_THREADS} (see {@link #partitionSb}). */
    static final int PARTITION_TARGET_THREADS = 256;
    /** The automatic SB keeps at least this many blocks an SM where it can shrink ({@link #partitionSb}). */
    static final int PARTITION_MIN_BLOCKS_PER_SM = 8;

    /**
     * The automatic systems per block for S systems of K chunks with chunk size r on {@code sms} SMs: the largest
     * power of two SB &lt;= 32 with SB K &lt;= {@link #PARTITION_TARGET_THREADS} (256) and within the kernel's
     * {@link #partitionMaxThreads}, at least 1; halved while the grid would have fewer than
     * {@link #PARTITION_MIN_BLOCKS_PER_SM} blocks an SM (small batches). Such a block always fits an SM: SB K is
     * within the kernel's {@code __launch_bounds__} and its 48 SB K bytes of shared memory within 48 KiB.
     *
     * <p>Why, measured on one H200 at R = 16 ({@code bench fhn --tridiag 1e5x1024,1e5x512,1e5x256,1e5x128,1e4x1024
     * --tridiag-r 16 --tridiag-sb 4,8,16,32}; % of the copy bandwidth as in {@link #partitionR}):
     * <pre>
     * | shape       | Thomas | SB=1 | SB=2 | SB=4 | SB=8 | SB=16 | SB=32 |
     * | 10^5 x 1024 |  51%   | 11%  | 22%  | 41%  |  -   |   -   |   -   |   (K = 64: SB = 4 is 256 threads)
     * | 10^4 x 1024 |   8%   |      |      | 60%  |  -   |   -   |   -   |
     * | 10^5 x 512  |  52%   | 12%  | 23%  | 42%  | 78%  |   -   |   -   |
     * | 10^5 x 256  |  52%   |      |      | 53%  | 93%  |  97%  |   -   |
     * | 10^5 x 128  |  52%   |      |      | 71%  | 91%  |  99%  |  96%  |
     * </pre>
     * The time falls with the threads a block has, up to the kernel's 256 at R = 16: a block's rows are read by SB
     * systems' chunks side by side (SB consecutive systems are SB adjacent words), and each block's barrier phases
     * cover more rows. The former rules (SB K near 128, and SB halved while fewer than 2 blocks fit an SM, by a
     * register model or the driver's occupancy) chose SB = 2 at n = 1024 (22%) and SB = 4 at n = 512 (42%). Small
     * batches want more blocks instead: 10^4 x 128 at R = 8 reached 79% with SB = 8 and 43% with SB = 16.
     */
    static int partitionSb(int r, int k, long S, int sms) {
        return partitionSb(r, k, S, 1, sms);
    }

    /**
     * {@link #partitionSb(int, int, long, int)} for blocks of K chunks a system in clusters of {@code cl} blocks (a
     * grid of cl blocks per SB systems; cl = 1: the plain plan).
     */
    static int partitionSb(int r, int k, long S, int cl, int sms) {
        int sb = 1;
        while (sb < 32 && 2 * sb * k <= Math.min(PARTITION_TARGET_THREADS, partitionMaxThreads(r))) {
            sb *= 2;
        }
        while (sb > 1 && (S + sb - 1) / sb * cl < (long) PARTITION_MIN_BLOCKS_PER_SM * sms) {
            sb /= 2;
        }
        return sb;
    }

    /**
     * The launch of the partitioned solver for S systems of n unknowns with chunk size r (0: {@link #partitionR} on
     * {@code sms} SMs) and sb systems per block (0: {@link #partitionSb}; else 1..32 with sb K within the kernel's
     * {@link #partitionMaxThreads}): {r, K chunks, SB, block threads SB K, grid blocks, dynamic shared bytes 48 SB K}.
     * The solution's bits do not depend on SB: a thread's arithmetic reads only its own system's rows (its
     * neighbours k +- s of the PCR are t +- s SB, the same system), in the same order whatever the block holds.
     */
    public static int[] partitionPlan(int S, int n, int r, int sb, int sms) {
        checkPartitionUnknowns(n);
        if (S < 1) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver needs S >= 1 systems, got " + S);
        }
        int rr = r == 0 ? partitionR(S, n, sms) : r;
        int maxT = partitionMaxThreads(rr);
        int k = (n + rr - 1) / rr;
        if (k > maxT) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver with R = " + rr + " takes n <= "
                    + maxT * rr + " unknowns per system (" + maxT + " threads a block), got n = " + n);
        }
        if (sb < 0 || sb > 32 || (long) sb * k > maxT) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver with R = " + rr + " and n = " + n
                    + " (K = " + k + " chunk threads a system) takes SB = 0 (automatic) or 1.." + Math.min(32, maxT / k)
                    + " systems per block (" + maxT + " threads a block), got SB = " + sb);
        }
        int s = sb == 0 ? partitionSb(rr, k, S, sms) : sb;
        int threads = s * k;
        long grid = ((long) S + s - 1) / s;
        return new int[] {rr, k, s, threads, (int) grid, 48 * threads};
    }

    /** Blocks per cluster with a kernel: pde_tridiag_partition_R16_C&lt;cl&gt; (R = 16; compute capability 9.x). */
    public static final int[] PARTITION_CLUSTERS = {2, 4, 8};

    /**
     * The launch of the cluster variant of the partitioned solver (R = 16): each system's K = ceil(n / 16) chunks
     * spread over the cl blocks of a thread-block cluster, Kc = ceil(K / cl) chunks a block, sb systems per cluster
     * (0: the largest power of two &lt;= 32 with sb Kc &lt;= 256, halved while the grid would have fewer than
     * {@link #PARTITION_MIN_BLOCKS_PER_SM} blocks an SM): {16, K, SB, block threads SB Kc, grid blocks (a multiple
     * of cl), dynamic shared bytes 48 SB Kc, cl}. So a block reads SB adjacent words of each row for SB up to 32
     * whatever n, where the plain plan's SB K &lt;= 256 leaves 4 systems at n = 1024 and 1 at n = 4096. Same bits as
     * the plain plan (and {@code FhnCpu.partitionInterleaved(S, n, 16, ...)}).
     */
    public static int[] partitionClusterPlan(int S, int n, int sb, int cl, int sms) {
        checkPartitionUnknowns(n);
        if (S < 1) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver needs S >= 1 systems, got " + S);
        }
        if (Arrays.stream(PARTITION_CLUSTERS).noneMatch(c -> c == cl)) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver has cluster kernels for "
                    + Arrays.toString(PARTITION_CLUSTERS) + " blocks a cluster, got " + cl);
        }
        int k = (n + 15) / 16;
        int kc = (k + cl - 1) / cl;
        int maxT = partitionMaxThreads(16);
        if (kc > maxT || sb < 0 || sb > 32 || (long) sb * kc > maxT) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver with R = 16, n = " + n + " and "
                    + cl + " blocks a cluster (" + kc + " chunk threads a system and block) takes SB = 0 (automatic)"
                    + " or 1.." + Math.min(32, maxT / kc) + " systems per cluster, got SB = " + sb);
        }
        int s = sb == 0 ? partitionSb(16, kc, S, cl, sms) : sb;
        int threads = s * kc;
        long grid = ((long) S + s - 1) / s * cl;
        if (grid > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver's grid of " + grid + " blocks "
                    + "exceeds 2^31 - 1 (S = " + S + ")");
        }
        return new int[] {16, k, s, threads, (int) grid, 48 * threads, cl};
    }

    /** The automatic plan on tiles takes the staged kernels from this many unknowns on ({@link #partitionAutoPlan}). */
    static final int PARTITION_STAGED_MIN_UNKNOWNS = 513;

    /** Flag at index 7 of a staged plan ({@link #partitionStagedPlan}). */
    private static final int STAGED = 1;

    /** Chunk sizes R with a staged kernel (pde_tridiag_partition_R&lt;R&gt;_S). */
    public static final int[] PARTITION_STAGED_R = {8, 16};

    /**
     * Dynamic shared bytes of a staged block of sb systems of n unknowns in chunks of r rows: 48 SB K (PCR) +
     * 40 SB (n + K) (the four staged arrays and the output, a pad row a chunk).
     */
    static int partitionStagedShared(int n, int r, int sb) {
        int k = (n + r - 1) / r;
        return 48 * sb * k + 40 * sb * (n + k);
    }

    /**
     * The launch of the staged variant of the partitioned solver (kernels {@code pde_tridiag_partition_R8_S} and
     * {@code _R16_S}): persistent blocks of sb systems, each taking groups of SB systems in turn, a group's rows copied
     * into shared memory (cp.async) while the block solves the group before and the solutions written back through
     * shared memory in memory order: {R, K, SB, block threads SB K, groups ceil(S / SB) (the grid: at most this, at
     * launch the blocks that fit on the device at once), dynamic shared bytes {@link #partitionStagedShared}, 1, 1}.
     * r: 8 or 16 ({@link #PARTITION_STAGED_R}), 0 for 16; sb: a power of two with SB K within the kernel's
     * {@link #partitionMaxThreads} and the shared memory within {@code maxShared} (the device's per-block opt-in),
     * 0 for the largest such SB &lt;= 32 with SB K &lt;= 256, halved while fewer groups than 2 {@code sms} remain.
     * Same bits as the plain plan of the same R ({@code FhnCpu.partitionInterleaved(S, n, R, ...)}).
     */
    public static int[] partitionStagedPlan(int S, int n, int r, int sb, int sms, int maxShared) {
        checkPartitionUnknowns(n);
        if (S < 1) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver needs S >= 1 systems, got " + S);
        }
        int rr = r == 0 ? 16 : r;
        if (Arrays.stream(PARTITION_STAGED_R).noneMatch(x -> x == rr)) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver has staged kernels for R = "
                    + Arrays.toString(PARTITION_STAGED_R) + ", got R = " + r);
        }
        int k = (n + rr - 1) / rr;
        int maxT = partitionMaxThreads(rr);
        if (k > maxT || sb < 0 || sb > 32 || (long) sb * k > maxT || Integer.bitCount(sb) > 1
                || (sb > 0 && partitionStagedShared(n, rr, sb) > maxShared)) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver's staged kernel with R = " + rr
                    + " and n = " + n + " (K = " + k + " chunk threads a system) takes SB = 0 (automatic) or a power "
                    + "of two with SB K <= " + maxT + " threads a block and 48 SB K + 40 SB (n + K) bytes of shared "
                    + "memory within the device's " + maxShared + " B a block, got SB = " + sb);
        }
        int s = sb;
        if (s == 0) {
            s = 1;
            while (s < 32 && 2L * s * k <= Math.min(PARTITION_TARGET_THREADS, maxT)
                    && partitionStagedShared(n, rr, 2 * s) <= maxShared) {
                s *= 2;
            }
            while (s > 1 && ((long) S + s - 1) / s < 2L * sms) {
                s /= 2;
            }
            if (partitionStagedShared(n, rr, s) > maxShared) {
                throw new IllegalArgumentException("the partitioned tridiagonal solver's staged kernel needs "
                        + partitionStagedShared(n, rr, s) + " B of shared memory a block for R = " + rr + " and n = "
                        + n + ", more than the device's " + maxShared + " B");
            }
        }
        return new int[] {rr, k, s, s * k, Math.toIntExact(((long) S + s - 1) / s), partitionStagedShared(n, rr, s),
            1, STAGED};
    }

    private static boolean isClusterPlan(int[] plan) {
        return plan.length > 6 && plan[6] > 1;
    }

    private static boolean isStagedPlan(int[] plan) {
        return plan.length > 7 && plan[7] == STAGED;
    }

    /**
     * The automatic plan for S systems of n unknowns on {@code sms} SMs, for the interleaved layout or ({@code
     * tiled}) tiles of the plan's SB systems, on a device that gives a block {@code maxShared} bytes of shared
     * memory: on tiles from 513 unknowns on ({@code PARTITION_STAGED_MIN_UNKNOWNS}), where a staged block of one
     * system fits that memory, {@link #partitionStagedPlan} (R = 16, automatic SB); else, where cluster kernels run
     * and n exceeds 1024 (interleaved) or 2048 (tiled), the cluster plan with the fewest blocks a cluster (2, 4, 8)
     * that reaches SB &gt;= 8 systems (else 8 blocks); otherwise {@link #partitionPlan(int, int, int, int, int)}
     * with the automatic R and SB.
     *
     * <p>The staged kernels on tiles, measured on one H100 ({@code bench fhn --tridiag ... --tridiag-r auto,16,8
     * --tridiag-layout tiled-sb --tridiag-staged auto --tridiag-cluster 8}; % of the copy bandwidth, 2684 GB/s; SB
     * in brackets):
     * <pre>
     * | shape       | staged R = 16 | staged R = 8 | plain R = 16  | plain R = 8 | cluster of 8 |
     * | 10^5 x 2048 | 105% (2)      | 95% (1)      | 82% (2)       | 89% (1)     | 50% (16)     |
     * | 10^4 x 4096 | 101% (1)      | 89% (1)      | 50% (1)       | 70% (1)     | 46% (8)      |
     * | 10^5 x 1024 | 106% (4)      | 96% (2)      | 100% (4)      | 93% (2)     | 52% (32)     |
     * | 10^4 x 1024 | 97% (4)       | 88% (2)      | 88% (4)       | 85% (2)     | 48% (32)     |
     * | 10^5 x 512  | 106% (8)      | 96% (4)      | 107% (8)      | 100% (4)    | 80% (32)     |
     * | 10^4 x 512  | 85% (8)       | 81% (4)      | 86% (8)       | 87% (4)     | 62% (32)     |
     * | 10^5 x 128  | 101% (32)     | 94% (16)     | 106% (32)     | 109% (16)   | 70% (32)     |
     * </pre>
     * A plain block loads its rows, sweeps, reduces and stores in turn, and above 1024 unknowns only one such block
     * fits an SM (R = 16 keeps 64 doubles a thread in registers), so nothing hides those phases; a staged block loads
     * the next group while it solves this one. Up to 512 unknowns several plain blocks share an SM and the two are
     * level.
     *
     * <p>The cluster plans, measured on one H200 ({@code bench fhn --tridiag ... --tridiag-r auto --tridiag-layout
     * interleaved,tiled-sb --tridiag-cluster 2,4,8}; % of the copy bandwidth, 40 bytes per unknown; interleaved /
     * tiles of SB; SB in brackets):
     * <pre>
     * | shape       | plain plan        | cluster of 2    | cluster of 4    | cluster of 8    |
     * | 10^5 x 512  | 81% / 96% (8)     | 67% / 64% (16)  | 60% / 56% (32)  | 58% / 74% (32)  |
     * | 10^5 x 1024 | 41% / 87% (4)     | 53% / 63% (8)   | 55% / 55% (16)  | 54% / 52% (32)  |
     * | 10^4 x 1024 | 58% / 70% (4)     | 54% / 55% (8)   | 49% / 48% (16)  | 47% / 45% (32)  |
     * | 10^5 x 2048 | 22% / 63% (2)     | 36% / 56% (4)   | 43% / 53% (8)   | 47% / 51% (16)  |
     * | 10^4 x 4096 | 22% / 37% (1)     | 30% / 41% (2)   | 36% / 43% (4)   | 43% / 47% (8)   |
     * </pre>
     * A plain block holds SB = 256 / K systems; its barriers are cheaper than a cluster's. On the interleaved layout
     * the clusters' wider rows win once SB falls below 4; on tiles, whose rows a block reads in one contiguous run,
     * only once SB falls to 1.
     */
    public static int[] partitionAutoPlan(int S, int n, int sms, boolean clusters, boolean tiled, int maxShared) {
        if (tiled && n >= PARTITION_STAGED_MIN_UNKNOWNS && partitionStagedShared(n, 16, 1) <= maxShared) {
            return partitionStagedPlan(S, n, 0, 0, sms, maxShared);
        }
        if (!clusters || n <= (tiled ? 2048 : 1024)) {
            return partitionPlan(S, n, 0, 0, sms);
        }
        for (int cl : PARTITION_CLUSTERS) {
            int[] plan = partitionClusterPlan(S, n, 0, cl, sms);
            if (plan[2] >= 8 || cl == PARTITION_CLUSTERS[PARTITION_CLUSTERS.length - 1]) {
                return plan;
            }
        }
        throw new AssertionError("unreachable");
    }

    /** {@link #partitionAutoPlan(int, int, int, boolean, boolean, int)} on {@code dev}. */
    public static int[] partitionAutoPlan(CudaDevice dev, int S, int n, boolean tiled) {
        return partitionAutoPlan(S, n, dev.multiprocessors(), partitionClustersOn(dev), tiled,
                dev.maxSharedMemoryOptin());
    }

    /** Whether {@code dev} runs the cluster kernels (compute capability 9.x: the module's sm_90 code has them). */
    public static boolean partitionClustersOn(CudaDevice dev) {
        return dev.computeCapability() / 10 == 9;
    }

    /**
     * The widest tile of the partitioned solver's tiled layout (kernels {@code pde_tridiag_partition_*_T}): with
     * tiles of T systems (a power of two, 1..32), element i of system j at (j / T) T n + T i + j % T, so the T
     * systems of a tile, interleaved within it, are one contiguous run of 8 T n bytes; the last tile is padded to T
     * systems (arrays of {@link #tiledLength} doubles). Against the interleaved layout (element i at i S + j, one
     * run of 8 S bytes per row across every system), the rows a block reads at once lie in one region of the array
     * however long the systems are; with T = the plan's SB, a block's systems are exactly one tile.
     */
    public static final int PARTITION_TILE = 32;

    private static int tileShift(int tile) {
        if (tile < 1 || tile > PARTITION_TILE || Integer.bitCount(tile) != 1) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver's tiled layout takes tiles of a "
                    + "power of two from 1 to " + PARTITION_TILE + " systems, got " + tile);
        }
        return Integer.numberOfTrailingZeros(tile);
    }

    /** Doubles of an array of S systems of n unknowns in the tiled layout of {@code tile} systems a tile. */
    public static long tiledLength(int S, int n, int tile) {
        tileShift(tile);
        return ((long) S + tile - 1) / tile * tile * n;
    }

    /** The tiled copy (tiles of {@code tile} systems) of an interleaved array x (S systems of n); padding: pad. */
    public static double[] toTiled(int S, int n, double[] x, double pad, int tile) {
        double[] t = new double[Math.toIntExact(tiledLength(S, n, tile))];
        Arrays.fill(t, pad);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < S; j++) {
                t[(j / tile * n + i) * tile + j % tile] = x[i * S + j];
            }
        }
        return t;
    }

    /** The interleaved copy (S systems of n) of a tiled array t (tiles of {@code tile} systems). */
    public static double[] fromTiled(int S, int n, double[] t, int tile) {
        tileShift(tile);
        double[] x = new double[Math.multiplyExact(S, n)];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < S; j++) {
                x[i * S + j] = t[(j / tile * n + i) * tile + j % tile];
            }
        }
        return x;
    }

    /**
     * The plan's solve on {@code dev} (a plan of {@link #partitionPlan}, {@link #partitionClusterPlan} or {@link
     * #partitionStagedPlan}) of the interleaved systems {@code sys}, on the device in the tiled layout of {@code
     * tile} systems a tile (0: the interleaved layout; converted on the host both ways, padding systems are identity
     * rows): the interleaved solutions, the twin's bits either way.
     */
    public static double[] tridiagPartition(CudaDevice dev, int S, int n, double[][] sys, int[] plan, int tile) {
        int[] p = onDevice(dev, plan, tile);
        String what = "partitioned tridiagonal (" + describePlan(plan) + (tile > 0 ? ", tiles of " + tile : "") + ")";
        if (tile == 0) {
            return solveOnce(dev, S, n, sys, what, (st, b) -> launchPartition(st, S, n, p, b, 0));
        }
        double[][] t = new double[4][];
        for (int q = 0; q < 4; q++) {
            t[q] = toTiled(S, n, sys[q], q == 1 ? 1.0 : 0.0, tile);
        }
        double[] x = solveOnce(dev, S, n, t, what, (st, b) -> launchPartition(st, S, n, p, b, tile));
        return fromTiled(S, n, x, tile);
    }

    /**
     * Milliseconds of each of {@code reps} solves by {@code plan}, as {@link #tridiagPartitionMillis}, on the tiled
     * layout of {@code tile} systems a tile (0: interleaved; random rows: the same systems' statistics, 5 doubles of
     * traffic per unknown either way).
     */
    public static double[] tridiagPartitionMillis(CudaDevice dev, int S, int n, int reps, int[] plan, int tile) {
        if (tile > 0) {
            tileShift(tile);
        }
        int[] p = onDevice(dev, plan, tile);
        return timeSolve(dev, S, n, timedSystems(tiledRows(S), n, 1), reps, "timed partitioned tridiagonal",
                (st, b) -> launchPartition(st, S, n, p, b, tile));
    }

    /** "R = r, SB = sb", with ", cluster of cl" for a cluster plan and ", staged" for a staged one. */
    public static String describePlan(int[] plan) {
        return "R = " + plan[0] + ", SB = " + plan[2] + (isClusterPlan(plan) ? ", cluster of " + plan[6] : "")
                + (isStagedPlan(plan) ? ", staged" : "");
    }

    /**
     * The plan as launched on {@code dev} (tiles of {@code tile}, 0: none), once before its solves: a cluster plan
     * checked against the device; a staged plan's grid cut to the blocks that fit on the device at once (its blocks
     * are persistent, each taking groups of SB systems in turn).
     */
    private static int[] onDevice(CudaDevice dev, int[] plan, int tile) {
        if (isClusterPlan(plan) && !partitionClustersOn(dev)) {
            throw new IllegalArgumentException("the partitioned tridiagonal solver's cluster kernels need a device of "
                    + "compute capability 9.x, got sm_" + dev.computeCapability());
        }
        if (!isStagedPlan(plan)) {
            return plan;
        }
        int[] p = plan.clone();
        p[4] = Math.min(p[4], KernelLauncher.residentBlocks(dev, FhnGpu.MODULE, partitionKernel(plan, tile), p[3],
                p[5]));
        return p;
    }

    /** The kernel of {@code plan} on tiles of {@code tile} (0: the interleaved layout). */
    private static String partitionKernel(int[] plan, int tile) {
        return "pde_tridiag_partition_R" + plan[0] + (isClusterPlan(plan) ? "_C" + plan[6] : "")
                + (isStagedPlan(plan) ? "_S" : "") + (tile > 0 ? "_T" : "");
    }

    /** {@link #partitionPlan(int, int, int, int, int)} on {@code dev}'s SMs. */
    public static int[] partitionPlan(CudaDevice dev, int S, int n, int r, int sb) {
        return partitionPlan(S, n, r, sb, dev.multiprocessors());
    }

    /**
     * The partitioned batched solver of S systems of n unknowns, interleaved layout (element i of system j at i S + j,
     * {@code sys} = {a, b, c, d} as {@link #randomSystems}); chunk size r in {@link #PARTITION_R}, 0 for
     * {@link #partitionR}; sb systems per block, 0 for {@link #partitionSb}. The solutions, same layout; the bits of
     * {@code FhnCpu.partitionInterleaved(S, n, R, ...)} whatever sb.
     */
    public static double[] tridiagPartition(CudaDevice dev, int S, int n, double[][] sys, int r, int sb) {
        return tridiagPartition(dev, S, n, sys, partitionPlan(dev, S, n, r, sb), 0);
    }

    /** {@link #tridiagPartition(CudaDevice, int, int, double[][], int, int)} with the automatic SB. */
    public static double[] tridiagPartition(CudaDevice dev, int S, int n, double[][] sys, int r) {
        return tridiagPartition(dev, S, n, sys, r, 0);
    }

    /** Launches the partitioned solver on {a, b, c, d} in b[0..3] by {@code plan} ({@link #partitionPlan}). */
    static void launchPartition(GpuStream st, int S, int n, int[] plan, DeviceBuffer[] b) {
        launchPartition(st, S, n, plan, b, 0);
    }

    /** {@link #launchPartition(GpuStream, int, int, int[], DeviceBuffer[])} on tiles of {@code tile} (0: none). */
    static void launchPartition(GpuStream st, int S, int n, int[] plan, DeviceBuffer[] b, int tile) {
        // the staged kernels take log2 SB; their grid (plan[4]) any size, cut by onDevice to the resident blocks
        int sb = isStagedPlan(plan) ? Integer.numberOfTrailingZeros(plan[2]) : plan[2];
        KernelLauncher.launch(st, FhnGpu.MODULE, partitionKernel(plan, tile), plan[4], plan[3], plan[5], S, n, sb,
                tile > 0 ? tileShift(tile) : 0, b[0], b[1], b[2], b[3]);
    }

    /**
     * Milliseconds of each of {@code reps} partitioned solves of S random systems of n unknowns with chunk size r
     * (0: {@link #partitionR}) and sb systems per block (0: {@link #partitionSb}); same systems and timing as
     * {@link #thomasBatchMillis(CudaDevice, int, int, int)}.
     */
    public static double[] tridiagPartitionMillis(CudaDevice dev, int S, int n, int reps, int r, int sb) {
        return tridiagPartitionMillis(dev, S, n, reps, partitionPlan(dev, S, n, r, sb), 0);
    }

    // ------------------------------------------------------------------ cyclic reduction, timing

    /** Cyclic reduction of S systems stored system-major: the solutions, same layout. */
    public static double[] cyclicReduction(CudaDevice dev, int S, int n, double[][] sys) {
        try (GpuStream st = new GpuStream(dev)) {
            DeviceBuffer[] b = upload(dev, st, sys, 1);
            try {
                FhnGpu.crSolve(st, new FhnGpu.CrSystems(b[0], b[1], b[2], b[3], b[4], S, n), new Pointer());
                double[] x = new double[S * n];
                b[4].download(x, x.length, st);
                st.synchronize("cyclic reduction " + S + " x " + n);
                return x;
            } finally {
                GpuResources.closeAll(b);
            }
        }
    }

    /** Milliseconds of each of {@code reps} batched Thomas solves (the input restored outside the interval). */
    public static double[] thomasBatchMillis(CudaDevice dev, int S, int n, int reps) {
        return thomasBatchMillis(dev, S, n, reps, false);
    }

    /** {@link #thomasBatchMillis(CudaDevice, int, int, int)}, optionally of the shared-memory variant. */
    public static double[] thomasBatchMillis(CudaDevice dev, int S, int n, int reps, boolean shared) {
        return timeSolve(dev, S, n, timedSystems(tiledRows(S), n, 1), reps, "timed batched Thomas",
                (st, b) -> launchThomas(st, S, n, b, shared));
    }

    /** Milliseconds of each of {@code reps} cyclic reductions of S systems of n unknowns. */
    public static double[] cyclicReductionMillis(CudaDevice dev, int S, int n, int reps) {
        return timeSolve(dev, S, n, timedSystems(S, n, 2), reps, "timed cyclic reduction",
                (st, b) -> FhnGpu.crSolve(st, new FhnGpu.CrSystems(b[0], b[1], b[2], b[3], b[4], S, n),
                        new Pointer()));
    }

    /**
     * Milliseconds of each of {@code reps} runs of {@code solve} (CUDA events around the launches alone) on the
     * device copy of {@code sys} in b[0..3] (b[4]: an output buffer of the same size), restored from a pristine
     * device copy before each run, outside the interval.
     */
    private static double[] timeSolve(CudaDevice dev, int S, int n, double[][] sys, int reps, String what,
                                      Solve solve) {
        double[] ms = new double[reps];
        long bytes = 8L * sys[0].length;
        try (GpuStream st = new GpuStream(dev); KernelTimer t = new KernelTimer(dev)) {
            DeviceBuffer[] b = upload(dev, st, sys, 5); // 4 working + x + 4 pristine copies
            try {
                for (int q = 0; q < 4; q++) {
                    b[5 + q].copyFrom(b[q], bytes, st);
                }
                for (int r = 0; r < reps; r++) {
                    for (int q = 0; q < 4; q++) {
                        b[q].copyFrom(b[5 + q], bytes, st);
                    }
                    t.start(st);
                    solve.launch(st, b);
                    t.stop(st);
                    st.synchronize(what + " " + S + " x " + n);
                    ms[r] = t.millis();
                }
            } finally {
                GpuResources.closeAll(b);
            }
        }
        return ms;
    }

    /** Milliseconds of each of {@code reps} copies of {@code doubles} values (read + write: 16 bytes each). */
    public static double[] copyMillis(CudaDevice dev, long doubles, int reps) {
        double[] ms = new double[reps];
        try (GpuStream st = new GpuStream(dev); KernelTimer t = new KernelTimer(dev);
             DeviceBuffer src = DeviceBuffer.ofDoubles(dev, doubles);
             DeviceBuffer dst = DeviceBuffer.ofDoubles(dev, doubles)) {
            src.zero(st);
            int grid = dev.multiprocessors() * 8;
            for (int r = 0; r < reps; r++) {
                t.start(st);
                KernelLauncher.launch(st, FhnGpu.MODULE, "pde_copy", grid, 256, 0, doubles, src, dst);
                t.stop(st);
                st.synchronize("timed copy");
                ms[r] = t.millis();
            }
        }
        return ms;
    }

    /**
     * Milliseconds of each of {@code reps} runs of {@code steps} explicit steps of S axons of n cells (the batch's
     * state stays on the device; a constant stimulus; observables on).
     */
    public static double[] explicitMillis(CudaDevice dev, int S, int n, int steps, int reps) {
        return explicitMillis(dev, S, n, steps, reps, 1);
    }

    /**
     * {@link #explicitMillis(CudaDevice, int, int, int, int)} with {@code perLaunch} steps per launch of the
     * temporally blocked kernel pde_explicit_steps (1: pde_explicit_step, a launch per step).
     */
    public static double[] explicitMillis(CudaDevice dev, int S, int n, int steps, int reps, int perLaunch) {
        FhnConfig c = new FhnConfig();
        c.cells = n;
        c.length = n * 0.2;
        c.dt = 0.01;
        FhnSetup s = new FhnSetup(c.validate());
        FhnParams[] ps = new FhnParams[S];
        for (int j = 0; j < S; j++) {
            ps[j] = FhnParams.excitable(0.5);
        }
        long cells = (long) S * n;
        double[] ms = new double[reps];
        if (perLaunch < 1 || perLaunch > FhnGpu.TB_KMAX) {
            throw new IllegalArgumentException("steps per launch must be in [1, " + FhnGpu.TB_KMAX + "], got "
                    + perLaunch);
        }
        int tiles = (n + FhnGpu.TB_THREADS - 1) / FhnGpu.TB_THREADS;
        int blocked = FhnGpu.grid((long) S * tiles, 1);
        DeviceBuffer[] b = new DeviceBuffer[7];
        try (GpuStream st = new GpuStream(dev); KernelTimer t = new KernelTimer(dev);
             FhnGpu.Stats stats = new FhnGpu.Stats(dev, st, S, 0.0, true)) {
            for (int q = 0; q < 4; q++) {
                b[q] = DeviceBuffer.ofDoubles(dev, cells);
                b[q].zero(st);
            }
            b[4] = DeviceBuffer.ofDoubles(dev, 5L * S);
            b[4].upload(FhnGpu.packParams(ps), st);
            b[5] = DeviceBuffer.ofDoubles(dev, n);
            b[5].upload(s.profile, st);
            b[6] = DeviceBuffer.ofDoubles(dev, FhnGpu.TB_KMAX);
            double[] ones = new double[FhnGpu.TB_KMAX];
            java.util.Arrays.fill(ones, 1.0);
            b[6].upload(ones, st);
            int grid = FhnGpu.grid(cells, FhnGpu.THREADS);
            for (int r = 0; r < reps; r++) {
                t.start(st);
                int p = 0;
                for (int k = 0; k < steps; p ^= 1) {
                    if (perLaunch == 1) {
                        KernelLauncher.launch(st, FhnGpu.MODULE, "pde_explicit_step", grid, FhnGpu.THREADS, 0, S, n,
                                b[p * 2], b[1 + p * 2], b[2 - p * 2], b[3 - p * 2], b[4], b[5], 1.0, s.dt, s.idx2,
                                s.bc, s.probeNear, s.probeFar, s.threshold, s.time(k), stats.tNear, stats.tFar,
                                stats.pulses, stats.max);
                        k++;
                    } else {
                        int m = Math.min(perLaunch, steps - k);
                        KernelLauncher.launch(st, FhnGpu.MODULE, "pde_explicit_steps", blocked, FhnGpu.TB_THREADS, 0,
                                S, n, tiles, m, b[p * 2], b[1 + p * 2], b[2 - p * 2], b[3 - p * 2], b[4], b[5], b[6],
                                s.dt, s.idx2, s.bc, s.probeNear, s.probeFar, s.threshold, (long) k, stats.tNear,
                                stats.tFar, stats.pulses, stats.max);
                        k += m;
                    }
                }
                t.stop(st);
                st.synchronize("timed explicit steps");
                ms[r] = t.millis();
            }
        } finally {
            GpuResources.closeAll(b);
        }
        return ms;
    }

    // ------------------------------------------------------------------ whole runs (internal surface)

    /** The runs of {@code params} under the validated {@code config} by the CPU twin on {@code threads} threads. */
    public static FhnResult[] runCpu(FhnConfig config, FhnParams[] params, int threads) {
        return FhnCpu.run(new FhnSetup(config), params, threads);
    }

    /**
     * The runs of {@code params} under the validated {@code config} as one GPU batch without Spark (the sweep's
     * device side: upload, every step, the observables back; the final state stays on the device).
     */
    public static FhnResult[] runGpuObservables(CudaDevice dev, FhnConfig config, FhnParams[] params) {
        return FhnGpu.run(dev, new FhnSetup(config), params, false);
    }

    /**
     * As {@link #runGpuObservables(CudaDevice, FhnConfig, FhnParams[])} for the explicit scheme on axons of at most
     * 1024 cells with {@code lanes} lanes per axon in the register kernel (0: the shared-memory kernel), every step
     * in one launch: the benchmark's comparison of the two kernels. Same bits for any choice.
     */
    public static FhnResult[] runGpuObservables(CudaDevice dev, FhnConfig config, FhnParams[] params, int lanes) {
        FhnSetup s = new FhnSetup(config);
        for (FhnParams p : params) {
            FhnSetup.checkExplicitStable(s, p, null);
        }
        return FhnGpu.explicitResident(dev, s, params, FhnGpu.RESIDENT_STEPS, false, lanes);
    }

    /**
     * Milliseconds of the launches alone of {@link #runGpuObservables(CudaDevice, FhnConfig, FhnParams[], int)}
     * (CUDA events around them; the signal's upload inside).
     */
    public static double residentKernelMillis(CudaDevice dev, FhnConfig config, FhnParams[] params, int lanes) {
        FhnSetup s = new FhnSetup(config);
        try (io.sparkgpu.cuda.KernelTimer t = new io.sparkgpu.cuda.KernelTimer(dev)) {
            FhnGpu.explicitResident(dev, s, params, FhnGpu.RESIDENT_STEPS, false, lanes, t);
            return t.millis();
        }
    }

    /** Lanes per axon the register kernel takes for axons of n cells (0: too long, the shared-memory kernel). */
    public static int lanesPerAxon(int n) {
        return FhnGpu.lanesPerAxon(n);
    }

    /** The number of time steps a run under the validated {@code config} takes. */
    public static long steps(FhnConfig config) {
        return new FhnSetup(config).steps;
    }

    /** The 2-D ADI run of {@code p} under the validated {@code config} by the CPU twin. */
    public static Fhn2d.Result run2dCpu(Fhn2dConfig config, FhnParams p) {
        return Fhn2d.cpu(config, p);
    }

    /** The 2-D ADI run of {@code p} under the validated {@code config} on {@code dev}, without fallback. */
    public static Fhn2d.Result run2dGpu(CudaDevice dev, Fhn2dConfig config, FhnParams p) {
        return Fhn2dGpu.run(dev, config, p);
    }
}
