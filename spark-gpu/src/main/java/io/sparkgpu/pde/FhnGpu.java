package io.sparkgpu.pde;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuResources;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import java.util.Arrays;
import jcuda.Pointer;

/**
 * GPU implementation of {@link FhnCpu} through the {@code pde} module ({@code pde.cu}; its header lists the
 * kernels). A batch of simulations on one grid runs as one launch series: explicit on axons of up to 32
 * {@link #LANES_CMAX} cells (a sweep's), whole axons in registers, a segment of lanes per axon
 * ({@link #lanesPerAxon}); up to {@link #RESIDENT_MAX_CELLS} cells, whole axons in shared memory, for every step of a
 * launch (one launch for runs of up to {@link #RESIDENT_STEPS} steps); explicit on longer axons, one thread per
 * cell and {@link #EXPLICIT_STEPS_PER_LAUNCH} steps per launch (temporal blocking in shared memory); Crank-Nicolson with Thomas, one thread per axon and one launch per chunk of steps (Newton
 * iterations and their convergence test inside); Crank-Nicolson with cyclic reduction, one thread per cell, the
 * Newton test on the device (a per-system done flag turns the rest of the enqueued iterations into no-ops), the
 * reduction in shared memory when a system fits, else level by level with the last levels in one block. Results
 * equal the twin's bit for bit. Throws {@code CudaException} for device problems; never falls back itself.
 */
final class FhnGpu {
    public static final String MODULE = "pde";
    public static final String PROBE_KERNEL = "pde_explicit_step";

    static final int THREADS = 256;
    static final int AXON_THREADS = 64;
    static final int CR_BLOCK = 512;
    /**
     * Steps per launch of the explicit scheme (pde_explicit_steps, temporal blocking in shared memory; at most the
     * kernel's TB_KMAX = 32; 1: pde_explicit_step, one launch per step). Same bits for any value.
     */
    static final int EXPLICIT_STEPS_PER_LAUNCH = 16;
    static final int TB_KMAX = 32;
    static final int TB_THREADS = 256;
    /** Steps per launch of pde_cn_thomas. */
    static final int STEP_CHUNK = 256;
    /** Rows a level may keep before the rest of the reduction runs in one block. */
    static final int BLOCK_ROWS = 4096;
    /** Shared memory one system may use in pde_cr_block (5 n doubles). */
    static final int SHARED_CAP = 96 * 1024;

    private FhnGpu() {
    }

    static int grid(long threads, int block) {
        long g = (threads + block - 1) / block;
        if (g > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("batch too large for one launch: " + threads + " threads");
        }
        return (int) Math.max(1, g);
    }

    /** Simulations of {@code params} on the setup's grid with its scheme (not the adaptive one: CPU only). */
    public static FhnResult[] run(CudaDevice dev, FhnSetup s, FhnParams[] params) {
        return run(dev, s, params, true);
    }

    /**
     * As {@link #run(CudaDevice, FhnSetup, FhnParams[])}; without {@code withState} the explicit scheme on short
     * axons leaves the final v and w on the device (results carry null v, w: a sweep needs only the observables).
     */
    public static FhnResult[] run(CudaDevice dev, FhnSetup s, FhnParams[] params, boolean withState) {
        if (params.length == 0) {
            return new FhnResult[0];
        }
        switch (s.config.scheme) {
            case FhnConfig.EXPLICIT:
                for (FhnParams p : params) {
                    FhnSetup.checkExplicitStable(s, p, null);
                }
                return s.n <= RESIDENT_MAX_CELLS ? explicitResident(dev, s, params, RESIDENT_STEPS, withState)
                        : explicit(dev, s, params);
            case FhnConfig.CRANK_NICOLSON:
                return FhnConfig.CYCLIC_REDUCTION.equals(s.config.solver) ? cnCr(dev, s, params)
                        : cnThomas(dev, s, params);
            default:
                throw new IllegalArgumentException("scheme " + s.config.scheme + " has no GPU kernel (CPU only)");
        }
    }

    /**
     * Simulations per GPU batch: at most {@code maxBatchCells} cells, and within the device-memory budget through the
     * planner ({@link io.sparkgpu.cuda.DeviceMemoryBudget#itemsPerChunk}, from {@link #bytesPerSimulation} and
     * {@link #fixedBytes}). Simulations are independent, so any batching gives the same bits.
     */
    static int batchSize(FhnSetup s, int count, int maxBatchCells, long budget) {
        int byCells = Math.max(1, maxBatchCells / s.n);
        if (count == 0) {
            return byCells;
        }
        return Math.min(byCells, io.sparkgpu.cuda.DeviceMemoryBudget.intItemsPerChunk("a FitzHugh-Nagumo batch", count,
                fixedBytes(s), bytesPerSimulation(s), budget));
    }

    /**
     * Device bytes per simulation of a batch, the most any scheme allocates: nine state/work fields of n cells
     * (cyclic reduction), the recorded frames, parameters and observables.
     */
    static long bytesPerSimulation(FhnSetup s) {
        long frames = Math.max(0, FhnCpu.frames(s));
        return io.sparkgpu.cuda.DeviceMemoryBudget.add(
                io.sparkgpu.cuda.DeviceMemoryBudget.times(8L * s.n, 10 + frames), 96);
    }

    /** Device bytes of a batch that do not grow with its simulations: the profile and the per-launch signals. */
    static long fixedBytes(FhnSetup s) {
        return 8L * s.n + 8L * Math.max(RESIDENT_STEPS, Math.max(STEP_CHUNK + 1, TB_KMAX));
    }

    static double[] packParams(FhnParams[] ps) {
        int S = ps.length;
        double[] out = new double[5 * S];
        for (int j = 0; j < S; j++) {
            out[j] = ps[j].a;
            out[S + j] = ps[j].eps;
            out[2 * S + j] = ps[j].gamma;
            out[3 * S + j] = ps[j].current;
            out[4 * S + j] = ps[j].diffusion;
        }
        return out;
    }

    /** Frames of the field for a batch of S, after checking that the batch and its field fit Java arrays. */
    static int checkedFrames(FhnSetup s, int S) {
        checkSize(S, s.n);
        int frames = FhnCpu.frames(s);
        checkSize((long) S * Math.max(1, frames), s.n);
        return frames;
    }

    static void checkSize(long S, int n) {
        if (S * n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a GPU batch must hold under 2^31 cells, got " + S + " x " + n);
        }
    }

    /** Observables per simulation, on the device. */
    static final class Stats implements AutoCloseable {
        final DeviceBuffer tNear;
        final DeviceBuffer tFar;
        final DeviceBuffer pulses;
        final DeviceBuffer max;
        final DeviceBuffer newton;
        final DeviceBuffer unconv;
        final int S;

        /** keyedMax: the max is an order key (atomics), else a double. */
        Stats(CudaDevice dev, GpuStream st, int S, double initialMax, boolean keyedMax) {
            this.S = S;
            tNear = DeviceBuffer.ofDoubles(dev, S);
            tFar = DeviceBuffer.ofDoubles(dev, S);
            pulses = DeviceBuffer.allocate(dev, 4L * S);
            max = DeviceBuffer.allocate(dev, 8L * S);
            newton = DeviceBuffer.allocate(dev, 8L * S);
            unconv = DeviceBuffer.allocate(dev, 8L * S);
            double[] nan = new double[S];
            Arrays.fill(nan, Double.NaN);
            tNear.upload(nan, st);
            tFar.upload(nan, st);
            pulses.zero(st);
            newton.zero(st);
            unconv.zero(st);
            long[] m = new long[S];
            Arrays.fill(m, keyedMax ? FhnCpu.orderKey(initialMax) : Double.doubleToRawLongBits(initialMax));
            max.upload(m, st);
        }

        FhnResult[] results(FhnSetup s, GpuStream st, boolean keyedMax, double[][] v, double[][] w, double[][] field,
                            int frames) {
            double[] tn = new double[S];
            double[] tf = new double[S];
            int[] pu = new int[S];
            long[] mx = new long[S];
            long[] nw = new long[S];
            long[] un = new long[S];
            tNear.download(tn, S, st);
            tFar.download(tf, S, st);
            pulses.download(pu, S, st);
            max.download(mx, S, st);
            newton.download(nw, S, st);
            unconv.download(un, S, st);
            st.synchronize("download of " + S + " FitzHugh-Nagumo results");
            FhnResult[] out = new FhnResult[S];
            for (int j = 0; j < S; j++) {
                double m = keyedMax ? FhnCpu.fromOrderKey(mx[j]) : Double.longBitsToDouble(mx[j]);
                out[j] = FhnCpu.result(s, tn[j], tf[j], pu[j], m, v[j], w[j], field == null ? null : field[j], frames,
                        nw[j], un[j], s.n);
            }
            return out;
        }

        @Override
        public void close() {
            GpuResources.closeAll(tNear, tFar, pulses, max, newton, unconv);
        }
    }

    /** S copies of the initial state, axon-major (cell i of axon j at j n + i). */
    static double[] replicateMajor(double[] v0, int S) {
        int n = v0.length;
        double[] out = new double[S * n];
        for (int j = 0; j < S; j++) {
            System.arraycopy(v0, 0, out, j * n, n);
        }
        return out;
    }

    static double[][] splitMajor(double[] x, int S, int n) {
        double[][] out = new double[S][];
        for (int j = 0; j < S; j++) {
            out[j] = Arrays.copyOfRange(x, j * n, (j + 1) * n);
        }
        return out;
    }

    /** Frames laid out [frame][axon][cell] into one field per axon. */
    static double[][] fieldsMajor(double[] f, int frames, int S, int n) {
        double[][] out = new double[S][frames * n];
        for (int q = 0; q < frames; q++) {
            for (int j = 0; j < S; j++) {
                System.arraycopy(f, (q * S + j) * n, out[j], q * n, n);
            }
        }
        return out;
    }

    /** Downloads the axon-major state (and field, [frame][axon][cell]) and the observables of a batch. */
    static FhnResult[] resultsMajor(FhnSetup s, GpuStream st, Stats stats, DeviceBuffer v, DeviceBuffer w,
                                    DeviceBuffer fieldBuf, int S, int frames) {
        int n = s.n;
        int cells = S * n;
        double[] hv = new double[cells];
        double[] hw = new double[cells];
        v.download(hv, cells, st);
        w.download(hw, cells, st);
        double[][] field = null;
        if (fieldBuf != null) {
            double[] f = new double[cells * frames];
            fieldBuf.download(f, f.length, st);
            st.synchronize("download of the space-time field");
            field = fieldsMajor(f, frames, S, n);
        }
        return stats.results(s, st, true, splitMajor(hv, S, n), splitMajor(hw, S, n), field, frames);
    }

    // ------------------------------------------------------------------------------------------ explicit

    static FhnResult[] explicit(CudaDevice dev, FhnSetup s, FhnParams[] ps) {
        return explicit(dev, s, ps, EXPLICIT_STEPS_PER_LAUNCH);
    }

    /** The explicit scheme with {@code perLaunch} steps per launch (1: one launch of pde_explicit_step per step). */
    static FhnResult[] explicit(CudaDevice dev, FhnSetup s, FhnParams[] ps, int perLaunch) {
        if (perLaunch < 1 || perLaunch > TB_KMAX) {
            throw new IllegalArgumentException("steps per launch must be in [1, " + TB_KMAX + "], got " + perLaunch);
        }
        int S = ps.length;
        int n = s.n;
        long cells = (long) S * n;
        int frames = checkedFrames(s, S);
        DeviceBuffer[] b = new DeviceBuffer[8];
        try (GpuStream st = new GpuStream(dev);
             Stats stats = new Stats(dev, st, S, FhnCpu.initialMax(s.v0), true)) {
            for (int q = 0; q < 4; q++) {
                b[q] = DeviceBuffer.ofDoubles(dev, cells);
            }
            b[4] = DeviceBuffer.ofDoubles(dev, 5L * S);
            b[5] = DeviceBuffer.ofDoubles(dev, n);
            b[6] = frames > 0 ? DeviceBuffer.ofDoubles(dev, cells * frames) : null;
            DeviceBuffer v = b[0];
            DeviceBuffer w = b[1];
            DeviceBuffer vn = b[2];
            DeviceBuffer wn = b[3];
            v.upload(replicateMajor(s.v0, S), st);
            w.zero(st);
            b[4].upload(packParams(ps), st);
            b[5].upload(s.profile, st);
            if (b[6] != null) {
                b[6].copyFrom(v, 0, 0, 8 * cells, st);
            }
            int grid = grid(cells, THREADS);
            int every = s.config.recordEvery;
            int tiles = (n + TB_THREADS - 1) / TB_THREADS;
            int blocked = grid((long) S * tiles, 1);
            if (perLaunch > 1) {
                b[7] = DeviceBuffer.ofDoubles(dev, perLaunch);
            }
            for (long k = 0; k < s.steps; ) {
                int m = 1;
                if (perLaunch == 1) {
                    KernelLauncher.launch(st, MODULE, "pde_explicit_step", grid, THREADS, 0, S, n, v, w, vn, wn, b[4],
                            b[5], s.signal(k), s.dt, s.idx2, s.bc, s.probeNear, s.probeFar, s.threshold, s.time(k),
                            stats.tNear, stats.tFar, stats.pulses, stats.max);
                } else {
                    // a chunk ends at every recorded step, so frames are taken between launches
                    m = (int) Math.min(perLaunch, s.steps - k);
                    if (b[6] != null) {
                        m = (int) Math.min(m, every - k % every);
                    }
                    b[7].upload(s.signals(k, m), 0, m, 0, st);
                    KernelLauncher.launch(st, MODULE, "pde_explicit_steps", blocked, TB_THREADS, 0, S, n, tiles, m, v,
                            w, vn, wn, b[4], b[5], b[7], s.dt, s.idx2, s.bc, s.probeNear, s.probeFar, s.threshold, k,
                            stats.tNear, stats.tFar, stats.pulses, stats.max);
                }
                k += m;
                DeviceBuffer t = v;
                v = vn;
                vn = t;
                t = w;
                w = wn;
                wn = t;
                if (b[6] != null && k % every == 0) {
                    b[6].copyFrom(v, 0, 8 * cells * (k / every), 8 * cells, st);
                }
            }
            return resultsMajor(s, st, stats, v, w, b[6], S, frames);
        } finally {
            GpuResources.closeAll(b);
        }
    }

    /** Axons up to this many cells run wholly in shared memory (pde_explicit_resident: a thread per cell). */
    static final int RESIDENT_MAX_CELLS = 1024;
    /** Steps per launch of pde_explicit_resident (the state goes through global memory once per launch). */
    static final int RESIDENT_STEPS = 4096;

    /**
     * Axons per block of pde_explicit_resident for n cells: the count (at most 512 / n, at least 1) whose threads,
     * rounded up to whole warps, waste the fewest lanes; the smaller count on a tie.
     */
    static int residentAxons(int n) {
        int best = 1;
        double bestUse = 0;
        for (int a = 1; a <= Math.max(1, 512 / n); a++) {
            double use = (double) (a * n) / residentThreads(n, a);
            if (use > bestUse) {
                best = a;
                bestUse = use;
            }
        }
        return best;
    }

    static int residentThreads(int n, int axons) {
        return (axons * n + 31) / 32 * 32;
    }

    /** Cells per lane at most in pde_explicit_lanes_C (the kernel's LANES_CMAX): axons of up to 32 times this. */
    static final int LANES_CMAX = 16;
    /** Threads per block of pde_explicit_lanes_C. */
    static final int LANES_THREADS = 128;
    /**
     * Lanes per axon forced for pde_explicit_lanes_C by the system property {@code sparkgpu.pde.lanes} (a power of
     * two up to 32, or 0 for the shared-memory kernel): a benchmark's knob, not a user setting. Same bits for any.
     */
    static final String LANES_PROPERTY = "sparkgpu.pde.lanes";

    /** Cells per lane the automatic choice prefers: more cost registers (at most 128 up to 8, ~200 at 13), so warps. */
    static final int LANES_CPREF = 8;

    /**
     * Lanes per axon of the register kernel for n cells (a power of two dividing 32, n at most 32 LANES_CMAX): the
     * count whose lanes x ceil(n / lanes) cells waste the fewest slots, the most lanes on a tie (fewer registers),
     * among those of at most LANES_CPREF cells per lane when n allows (measured on an H200 for 101 cells: 16 lanes
     * of 7 cells 79.5 ms, 8 of 13 88.3 ms, 32 of 4 86.7 ms); 0 when n is too long (the shared-memory kernel) or the
     * property chose it.
     */
    static int lanesPerAxon(int n) {
        String forced = System.getProperty(LANES_PROPERTY);
        if (forced != null) {
            int l = Integer.parseInt(forced.trim());
            if (l != 0 && (Integer.bitCount(l) != 1 || l > 32)) {
                throw new IllegalArgumentException(LANES_PROPERTY + " must be 0 or a power of two up to 32, got " + l);
            }
            return l == 0 || (n + l - 1) / l > LANES_CMAX ? 0 : l;
        }
        int cmax = n <= 32 * LANES_CPREF ? LANES_CPREF : LANES_CMAX;
        int best = 0;
        long bestSlots = Long.MAX_VALUE;
        for (int l = 32; l >= 1; l >>= 1) {
            int c = (n + l - 1) / l;
            if (c <= cmax && (long) l * c < bestSlots) {
                best = l;
                bestSlots = (long) l * c;
            }
        }
        return best;
    }

    /**
     * The explicit scheme with whole axons resident on chip ({@code n <= RESIDENT_MAX_CELLS}): in registers
     * (pde_explicit_lanes_C, {@link #lanesPerAxon}) up to 32 LANES_CMAX cells, else in shared memory
     * (pde_explicit_resident). The whole batch is one launch per {@code stepsPerLaunch} steps (one, for runs up to
     * that many steps), the observables reduced on the device; the host uploads the signal once per launch and
     * downloads the observables (and, with {@code withState}, the final state) once. The register kernel starts
     * from the n initial values (no S n upload) and, without the state in a one-launch run, allocates no state at
     * all. Same bits as the twin.
     */
    static FhnResult[] explicitResident(CudaDevice dev, FhnSetup s, FhnParams[] ps, int stepsPerLaunch,
                                        boolean withState) {
        return explicitResident(dev, s, ps, stepsPerLaunch, withState, lanesPerAxon(s.n));
    }

    /** As above with {@code lanes} lanes per axon in the register kernel (0: the shared-memory kernel). */
    static FhnResult[] explicitResident(CudaDevice dev, FhnSetup s, FhnParams[] ps, int stepsPerLaunch,
                                        boolean withState, int lanes) {
        return explicitResident(dev, s, ps, stepsPerLaunch, withState, lanes, null);
    }

    /** As above; {@code timer} (nullable) times the launches alone (the benchmark's kernel time). */
    static FhnResult[] explicitResident(CudaDevice dev, FhnSetup s, FhnParams[] ps, int stepsPerLaunch,
                                        boolean withState, int lanes, io.sparkgpu.cuda.KernelTimer timer) {
        int S = ps.length;
        int n = s.n;
        if (n > RESIDENT_MAX_CELLS || stepsPerLaunch < 1) {
            throw new IllegalArgumentException("resident axons hold at most " + RESIDENT_MAX_CELLS + " cells with >= 1"
                    + " step per launch, got " + n + " cells, " + stepsPerLaunch + " steps");
        }
        int cellsPerLane = lanes == 0 ? 0 : (n + lanes - 1) / lanes;
        if (lanes != 0 && (Integer.bitCount(lanes) != 1 || lanes > 32 || cellsPerLane > LANES_CMAX)) {
            throw new IllegalArgumentException("lanes per axon must be a power of two up to 32 holding at most "
                    + LANES_CMAX + " cells each, got " + lanes + " for " + n + " cells");
        }
        long cells = (long) S * n;
        int frames = checkedFrames(s, S);
        int axons = residentAxons(n);
        int threads = residentThreads(n, axons);
        int blocks = grid(S, axons);
        int every = s.config.recordEvery;
        // the register kernel needs no state on the device for a one-launch run whose final state nobody reads
        boolean state = lanes == 0 || withState || s.steps > stepsPerLaunch;
        DeviceBuffer[] b = new DeviceBuffer[7];
        try (GpuStream st = new GpuStream(dev);
             Stats stats = new Stats(dev, st, S, FhnCpu.initialMax(s.v0), true)) {
            b[0] = state ? DeviceBuffer.ofDoubles(dev, cells) : null;
            b[1] = state ? DeviceBuffer.ofDoubles(dev, cells) : null;
            b[2] = DeviceBuffer.ofDoubles(dev, 5L * S);
            b[3] = DeviceBuffer.ofDoubles(dev, n);
            b[4] = DeviceBuffer.ofDoubles(dev, (int) Math.min(stepsPerLaunch, Math.max(1, s.steps)));
            b[5] = frames > 0 ? DeviceBuffer.ofDoubles(dev, cells * frames) : null;
            b[2].upload(packParams(ps), st);
            b[3].upload(s.profile, st);
            if (lanes == 0) {
                b[0].upload(replicateMajor(s.v0, S), st);
                b[1].zero(st);
                if (b[5] != null) {
                    b[5].copyFrom(b[0], 0, 0, 8 * cells, st);
                }
            } else {
                b[6] = DeviceBuffer.ofDoubles(dev, n);
                b[6].upload(s.v0, st);
                if (b[5] != null) {
                    b[5].upload(replicateMajor(s.v0, S), st); // frame 0: the initial state
                }
            }
            if (timer != null) {
                timer.start(st);
            }
            for (long k = 0; k < s.steps; ) {
                int m = (int) Math.min(stepsPerLaunch, s.steps - k);
                b[4].upload(s.signals(k, m), 0, m, 0, st);
                if (lanes == 0) {
                    KernelLauncher.launch(st, MODULE, "pde_explicit_resident", blocks, threads, 16 * axons * n, S, n,
                            axons, m, b[0], b[1], b[2], b[3], b[4], s.dt, s.idx2, s.bc, s.probeNear, s.probeFar,
                            s.threshold, k, stats.tNear, stats.tFar, stats.pulses, stats.max,
                            KernelLauncher.nullable(b[5]), b[5] == null ? 0 : every);
                } else {
                    KernelLauncher.launch(st, MODULE, "pde_explicit_lanes_" + cellsPerLane,
                            grid((long) S * lanes, LANES_THREADS), LANES_THREADS, 0, S, n, lanes, m,
                            KernelLauncher.nullable(b[0]), KernelLauncher.nullable(b[1]),
                            KernelLauncher.nullable(k == 0 ? b[6] : null), b[2], b[3], b[4], s.dt, s.idx2, s.bc,
                            s.probeNear, s.probeFar, s.threshold, k, stats.tNear, stats.tFar, stats.pulses, stats.max,
                            KernelLauncher.nullable(b[5]), b[5] == null ? 0 : every);
                }
                k += m;
            }
            if (timer != null) {
                timer.stop(st);
            }
            if (withState) {
                if (s.steps == 0 && lanes != 0) {
                    b[0].upload(replicateMajor(s.v0, S), st); // no launch ran: the initial state is the final one
                    b[1].zero(st);
                }
                return resultsMajor(s, st, stats, b[0], b[1], b[5], S, frames);
            }
            double[][] field = null;
            if (b[5] != null) {
                double[] f = new double[(int) (cells * frames)];
                b[5].download(f, f.length, st);
                st.synchronize("download of the space-time field");
                field = fieldsMajor(f, frames, S, n);
            }
            return stats.results(s, st, true, new double[S][], new double[S][], field, frames);
        } finally {
            GpuResources.closeAll(b);
        }
    }

    // ------------------------------------------------------------------------------------------ CN + Thomas

    static double[] interleave(double[] v0, int S) {
        int n = v0.length;
        double[] out = new double[S * n];
        for (int i = 0; i < n; i++) {
            Arrays.fill(out, i * S, (i + 1) * S, v0[i]);
        }
        return out;
    }

    static double[][] splitInterleaved(double[] x, int S, int n) {
        double[][] out = new double[S][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < S; j++) {
                out[j][i] = x[i * S + j];
            }
        }
        return out;
    }

    static FhnResult[] cnThomas(CudaDevice dev, FhnSetup s, FhnParams[] ps) {
        int S = ps.length;
        int n = s.n;
        long cells = (long) S * n;
        int frames = checkedFrames(s, S);
        boolean periodic = s.bc == FhnSetup.BC_PERIODIC;
        DeviceBuffer[] b = new DeviceBuffer[11];
        try (GpuStream st = new GpuStream(dev);
             Stats stats = new Stats(dev, st, S, FhnCpu.initialMax(s.v0), false)) {
            for (int q = 0; q < 6; q++) {
                b[q] = DeviceBuffer.ofDoubles(dev, cells);
            }
            b[6] = DeviceBuffer.ofDoubles(dev, periodic ? cells : 1);
            b[7] = DeviceBuffer.ofDoubles(dev, 5L * S);
            b[8] = DeviceBuffer.ofDoubles(dev, n);
            b[9] = DeviceBuffer.ofDoubles(dev, STEP_CHUNK + 1);
            b[10] = frames > 0 ? DeviceBuffer.ofDoubles(dev, cells * frames) : null;
            double[] v0 = interleave(s.v0, S);
            b[0].upload(v0, st);
            b[1].zero(st);
            b[7].upload(packParams(ps), st);
            b[8].upload(s.profile, st);
            if (b[10] != null) {
                b[10].upload(v0, st);
            }
            int grid = grid(S, AXON_THREADS);
            for (long k0 = 0; k0 < s.steps; k0 += STEP_CHUNK) {
                int count = (int) Math.min(STEP_CHUNK, s.steps - k0);
                double[] sig = s.signals(k0, count + 1);
                b[9].upload(sig, st);
                KernelLauncher.launch(st, MODULE, "pde_cn_thomas", grid, AXON_THREADS, 0, S, n, b[0], b[1], b[2],
                        b[3], b[4], b[5], b[6], b[7], b[8], b[9], k0, count, s.dt, s.idx2, s.bc,
                        s.config.newtonTol, s.config.maxNewton, s.probeNear, s.probeFar, s.threshold, stats.tNear,
                        stats.tFar, stats.pulses, stats.max, stats.newton, stats.unconv,
                        KernelLauncher.nullable(b[10]), s.config.recordEvery);
                st.synchronize("Crank-Nicolson steps " + k0 + ".." + (k0 + count) + " of " + S + " axons");
            }
            double[] hv = new double[(int) cells];
            double[] hw = new double[(int) cells];
            b[0].download(hv, (int) cells, st);
            b[1].download(hw, (int) cells, st);
            double[][] field = null;
            if (b[10] != null) {
                double[] f = new double[(int) (cells * frames)];
                b[10].download(f, f.length, st);
                st.synchronize("download of the space-time field");
                field = new double[S][frames * n];
                for (int q = 0; q < frames; q++) {
                    for (int i = 0; i < n; i++) {
                        for (int j = 0; j < S; j++) {
                            field[j][q * n + i] = f[(q * n + i) * S + j];
                        }
                    }
                }
            }
            return stats.results(s, st, false, splitInterleaved(hv, S, n), splitInterleaved(hw, S, n), field,
                    frames);
        } finally {
            GpuResources.closeAll(b);
        }
    }

    // ------------------------------------------------------------------------------------------ cyclic reduction

    /** Device arrays of S systems of n unknowns, system-major, for cyclic reduction. */
    static final class CrSystems {
        final int S;
        final int n;
        final DeviceBuffer a;
        final DeviceBuffer b;
        final DeviceBuffer c;
        final DeviceBuffer d;
        final DeviceBuffer x;

        CrSystems(DeviceBuffer a, DeviceBuffer b, DeviceBuffer c, DeviceBuffer d, DeviceBuffer x, int S, int n) {
            this.a = a;
            this.b = b;
            this.c = c;
            this.d = d;
            this.x = x;
            this.S = S;
            this.n = n;
        }
    }

    /** Whether one system of n unknowns is reduced wholly in shared memory. */
    static boolean fitsShared(CudaDevice dev, int n) {
        return 40L * n <= Math.min(SHARED_CAP, dev.maxSharedMemoryOptin());
    }

    /**
     * The launch plan of {@link #crSolve} for systems of n unknowns: the whole reduction in shared memory (one block
     * of {@link #sharedBlock} threads per system), or levels 0..lswitch-1 launched one by one (forward, then
     * backward in reverse order; a thread per row of every system) with the remaining levels in one block of
     * {@link #CR_TAIL_THREADS} threads per system, in global memory. The kernels enumerate a level's rows by row
     * number j in [0, {@link #rows}), row index {@link #row}; FhnLaunchModelTest replays this plan on the CPU.
     */
    static final class CrPlan {
        final int n;
        /** Levels: the smallest k with 2^k - 1 >= n (FhnCpu.crLevels). */
        final int k;
        final boolean shared;
        final int sharedBlock;
        /** Levels launched one by one before the one-block tail (0 on the shared path). */
        final int lswitch;

        CrPlan(int n, boolean shared) {
            this.n = n;
            this.k = FhnCpu.crLevels(n);
            this.shared = shared;
            this.sharedBlock = Math.min(CR_BLOCK, Math.max(32, Integer.highestOneBit(Math.max(1, n / 2)) * 2));
            int l = 0;
            while (!shared && l < k - 1 && (n >> (l + 1)) > BLOCK_ROWS) {
                l++;
            }
            this.lswitch = l;
        }

        /** Rows of level l: forward rows 2s-1 + 2s j, backward rows s-1 + 2s j (pde.cu's rows_from). */
        long rows(int l, boolean forward) {
            long s = 1L << l;
            long first = forward ? 2 * s - 1 : s - 1;
            return first < n ? (n - first + 2 * s - 1) / (2 * s) : 0;
        }

        /** Row j of level l (pde.cu's cr_row). */
        long row(int l, boolean forward, long j) {
            long s = 1L << l;
            return (forward ? 2 * s - 1 : s - 1) + 2 * s * j;
        }
    }

    /** Threads of the one-block tail of pde_cr_block. */
    static final int CR_TAIL_THREADS = 1024;

    /**
     * Solves every system not marked done (done may be null) by cyclic reduction (FhnCpu.cyclicReduction's bits).
     * Any n the arrays hold: there is no size cap (the 10^7-unknown crash was the kernel's 32-bit row stride, see
     * pde.cu's rows_from); device memory is the caller's (five S n arrays, allocated before this call).
     */
    static void crSolve(GpuStream st, CrSystems sys, Object done) {
        int S = sys.S;
        int n = sys.n;
        CudaDevice dev = st.device();
        CrPlan plan = new CrPlan(n, fitsShared(dev, n));
        int k = plan.k;
        if (plan.shared) {
            KernelLauncher.launch(st, MODULE, "pde_cr_block", S, plan.sharedBlock, 40 * n, S, n, k, 0, sys.a, sys.b,
                    sys.c, sys.d, sys.x, done, 1);
            return;
        }
        KernelLauncher.launch(st, MODULE, "pde_cr_ends", grid(S, THREADS), THREADS, 0, S, n, sys.a, sys.c, done);
        for (int l = 0; l < plan.lswitch; l++) {
            KernelLauncher.launch(st, MODULE, "pde_cr_forward", grid(plan.rows(l, true) * S, THREADS), THREADS, 0, S,
                    n, 1 << l, sys.a, sys.b, sys.c, sys.d, done);
        }
        KernelLauncher.launch(st, MODULE, "pde_cr_block", S, CR_TAIL_THREADS, 0, S, n, k, plan.lswitch, sys.a, sys.b,
                sys.c, sys.d, sys.x, done, 0);
        for (int l = plan.lswitch - 1; l >= 0; l--) {
            KernelLauncher.launch(st, MODULE, "pde_cr_backward", grid(plan.rows(l, false) * S, THREADS), THREADS, 0,
                    S, n, 1 << l, sys.a, sys.b, sys.c, sys.d, sys.x, done);
        }
    }

    static FhnResult[] cnCr(CudaDevice dev, FhnSetup s, FhnParams[] ps) {
        int S = ps.length;
        int n = s.n;
        long cells = (long) S * n;
        int frames = checkedFrames(s, S);
        DeviceBuffer[] b = new DeviceBuffer[14];
        try (GpuStream st = new GpuStream(dev);
             Stats stats = new Stats(dev, st, S, FhnCpu.initialMax(s.v0), true)) {
            for (int q = 0; q < 9; q++) {
                b[q] = DeviceBuffer.ofDoubles(dev, cells);
            }
            b[9] = DeviceBuffer.ofDoubles(dev, 5L * S);
            b[10] = DeviceBuffer.ofDoubles(dev, n);
            b[11] = DeviceBuffer.allocate(dev, 4L * S);
            b[12] = DeviceBuffer.allocate(dev, 8L * S);
            b[13] = frames > 0 ? DeviceBuffer.ofDoubles(dev, cells * frames) : null;
            DeviceBuffer v = b[0];
            DeviceBuffer w = b[1];
            DeviceBuffer u = b[2];
            DeviceBuffer r = b[3];
            CrSystems sys = new CrSystems(b[4], b[5], b[6], b[7], b[8], S, n);
            DeviceBuffer prm = b[9];
            DeviceBuffer done = b[11];
            DeviceBuffer errKey = b[12];
            v.upload(replicateMajor(s.v0, S), st);
            w.zero(st);
            prm.upload(packParams(ps), st);
            b[10].upload(s.profile, st);
            if (b[13] != null) {
                b[13].copyFrom(v, 0, 0, 8 * cells, st);
            }
            int grid = grid(cells, THREADS);
            int sgrid = grid(S, THREADS);
            int every = s.config.recordEvery;
            for (long k = 0; k < s.steps; k++) {
                KernelLauncher.launch(st, MODULE, "pde_cn_rhs", grid, THREADS, 0, S, n, v, w, u, r, prm, b[10],
                        s.signal(k), s.signal(k + 1), s.dt, s.idx2, s.bc, done, errKey);
                for (int it = 0; it < s.config.maxNewton; it++) {
                    KernelLauncher.launch(st, MODULE, "pde_cn_system", grid, THREADS, 0, S, n, u, r, sys.a, sys.b,
                            sys.c, sys.d, prm, s.dt, s.idx2, s.bc, done);
                    crSolve(st, sys, done);
                    KernelLauncher.launch(st, MODULE, "pde_cn_update", grid, THREADS, 0, S, n, u, sys.x, errKey, done);
                    KernelLauncher.launch(st, MODULE, "pde_cn_check", sgrid, THREADS, 0, S, errKey, done,
                            stats.newton, s.config.newtonTol);
                }
                KernelLauncher.launch(st, MODULE, "pde_cn_finish", grid, THREADS, 0, S, n, v, w, u, prm, s.dt, s.idx2,
                        done, stats.unconv, s.probeNear, s.probeFar, s.threshold, s.time(k), stats.tNear, stats.tFar,
                        stats.pulses, stats.max);
                if (b[13] != null && (k + 1) % every == 0) {
                    b[13].copyFrom(v, 0, 8 * cells * ((k + 1) / every), 8 * cells, st);
                }
                if ((k & 63) == 63) {
                    st.synchronize("Crank-Nicolson (cyclic reduction) step " + k);
                }
            }
            return resultsMajor(s, st, stats, v, w, b[13], S, frames);
        } finally {
            GpuResources.closeAll(b);
        }
    }

    /** A null device pointer argument. */
    static Object none() {
        return new Pointer();
    }
}
