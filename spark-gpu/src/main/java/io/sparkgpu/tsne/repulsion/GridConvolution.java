package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.cuda.CudaDevice;

/**
 * G2G: the potentials phi_c(a) = sum_b K(a - b) q_c(b) on the interpolation lattice, K(delta) = (1 + h^2
 * |delta|^2)^-2, h the node spacing, for every charge c (the grid-to-grid step of FIt-SNE: Linderman, Rachh,
 * Hoskins, Steinerberger, Kluger, Nature Methods 16, 2019; and SG-t-SNE-Pi: Pitsianis et al., JOSS 4(39), 2019).
 *
 * <ul>
 *   <li><b>DIRECT</b>: every node pair, O(charges * N^2) for N = n^dim nodes; the only rounding is that of each
 *   product and of the running sum (source nodes in ascending order).</li>
 *   <li><b>FFT</b>: the aperiodic convolution as a circulant of length 2m per axis (m >= n, 5-smooth) split
 *   into 2^dim parity combinations of m^dim-point transforms, so no zero-padded array is formed (SG-t-SNE-Pi's
 *   no-padding scheme); our own mixed-radix Stockham FFT, with two real charges per complex transform:
 *   O(2^dim * ceil(charges/2) * m^dim * log m) time, O(ceil(charges/2) * m^dim) extra memory. Exact in exact
 *   arithmetic; its transforms run in float (pack and accumulate in double, each charge scaled by a power of two,
 *   {@link G2GPlan}), so it agrees with DIRECT to about 1e-7 relative to each charge's potential scale (of the
 *   total charge where signed charges cancel).</li>
 *   <li><b>AUTO</b>: the one with the smaller modelled time on the GPU ({@link #DIRECT_NS_GPU} etc.), also when
 *   the CPU twin runs, so that the result does not depend on the backend.</li>
 * </ul>
 * GPU and CPU give the same bits for the same method (same operations in the same order, see
 * {@link G2GCpu}); the CPU twin runs when the backend resolves to CPU, and under {@code auto} also when the GPU
 * fails part-way ({@link BackendChooser#run}, phase {@value #PHASE}).
 */
public final class GridConvolution {
    /** Direct summation, FFT, or the faster one for the grid's size. */
    public enum Method { AUTO, DIRECT, FFT }

    /** Phase name of the grid-to-grid convolution (logs, errors, {@link BackendUsage}, test faults). */
    public static final String PHASE = "t-SNE G2G";

    /**
     * Cost model, nanoseconds per unit. DIRECT: per (charge, node pair). FFT: per unit of {@code
     * G2GPlan.fftWork} (points times pass radix, summed over passes, parities and transforms), plus a fixed cost
     * per phase (a GPU kernel launch, or a parallel loop of the CPU twin). CPU constants: TsneG2GBenchmark on the
     * development machine (2 shared cores, so small grids are dominated by the fixed costs). GPU constants: an
     * estimate for an H100 (FP64 throughput for DIRECT, memory traffic for FFT), to be replaced by the values the
     * benchmark fits on the device.
     */
    public static final double DIRECT_NS_CPU = 5.9;
    public static final double FFT_NS_CPU = 8.7;
    public static final double PHASE_NS_CPU = 50_000;
    public static final double DIRECT_NS_GPU = 3e-4;
    /**
     * GPU DIRECT lower bound per source node: each thread walks all sources in order, so a grid too small to
     * fill the device costs about this much per source (about 25 cycles per source and thread).
     */
    public static final double DIRECT_SOURCE_NS_GPU = 15;
    public static final double FFT_NS_GPU = 0.0015;
    public static final double LAUNCH_NS_GPU = 4000;

    private GridConvolution() {
    }

    /** The FFT length G2G pads an axis of n nodes to: the smallest 2^a 3^b 5^c >= n. */
    public static int fftSize(int n) {
        return G2GPlan.fftSize(n);
    }

    /** charges and result laid out [charge][node] as in {@link InterpGrid}. */
    public static double[] convolve(InterpGrid grid, double[] charges, Method method, Backend backend) {
        return convolve(grid, charges, method, backend, null);
    }

    /** {@link #convolve(InterpGrid, double[], Method, Backend)}, recording where it ran (null: not recorded). */
    public static double[] convolve(InterpGrid grid, double[] charges, Method method, Backend backend,
            BackendUsage usage) {
        if (grid == null || charges == null || method == null || backend == null) {
            throw new IllegalArgumentException("grid, charges, method and backend must not be null");
        }
        int c = grid.charges();
        long expected = (long) c * grid.nodes();
        if (charges.length != expected) {
            throw new IllegalArgumentException("charges has length " + charges.length + ", expected charges*nodes = "
                    + c + "*" + grid.nodes() + " = " + expected + " for a " + grid.dim + "-D grid of "
                    + grid.nodesPerDim() + " nodes per axis");
        }
        for (int i = 0; i < charges.length; i++) {
            if (!Double.isFinite(charges[i])) {
                throw new IllegalArgumentException("charges[" + i + "] is " + charges[i] + " (charge " + i
                        / grid.nodes() + ", node " + i % grid.nodes() + "); grid charges must be finite");
            }
        }
        BackendChooser.Ran<double[]> r = BackendChooser.run(backend, G2GGpu.MODULE, G2GGpu.PROBE_KERNEL, PHASE,
                dev -> run(dev, grid, charges, method, null), () -> run(null, grid, charges, method, null));
        BackendUsage.recordIfAny(usage, PHASE, r);
        return r.value;
    }

    /**
     * For benchmarks and tests: {@code method} on {@code dev} (null: the CPU twin), charges already validated
     * by the caller's sizes; {@code kernelMillis}, if not null, receives the GPU time without transfers.
     */
    public static double[] convolveOn(CudaDevice dev, InterpGrid grid, double[] charges, Method method,
                                      double[] kernelMillis) {
        if (charges.length != (long) grid.charges() * grid.nodes()) {
            throw new IllegalArgumentException("charges has length " + charges.length + ", expected "
                    + (long) grid.charges() * grid.nodes());
        }
        return run(dev, grid, charges, method, kernelMillis);
    }

    private static double[] run(CudaDevice dev, InterpGrid grid, double[] charges, Method method,
                                double[] kernelMillis) {
        G2GPlan plan = G2GPlan.of(grid);
        int c = grid.charges();
        double h = grid.spacing();
        double h2 = h * h;
        // AUTO decides by the GPU's cost model whichever backend runs, so the method -- and with it the bits, since
        // DIRECT and FFT agree only to rounding -- never depends on the backend or on a fallback to the CPU twin.
        boolean fft = useFft(plan, c, method, true);
        if (dev != null) {
            return G2GGpu.convolve(dev, plan, h2, grid.dof, charges, c, fft, kernelMillis);
        }
        return fft ? G2GCpu.fft(plan, h2, grid.dof, charges, c) : G2GCpu.direct(plan, h2, grid.dof, charges, c);
    }

    /**
     * Agreement of two potential arrays: max over charges of max |a - b| / max |b| (b the reference; an all-zero
     * charge of b compares absolutely). NaN when either is null.
     */
    public static double maxRelativeDifference(InterpGrid grid, double[] a, double[] b) {
        if (a == null || b == null) {
            return Double.NaN;
        }
        int nodes = grid.nodes();
        double worst = 0;
        for (int c = 0; c < grid.charges(); c++) {
            double scale = 0;
            double diff = 0;
            for (int i = c * nodes; i < (c + 1) * nodes; i++) {
                scale = Math.max(scale, Math.abs(b[i]));
                diff = Math.max(diff, Math.abs(a[i] - b[i]));
            }
            worst = Math.max(worst, scale == 0 ? diff : diff / scale);
        }
        return worst;
    }

    /** The method AUTO picks for this grid on the GPU ({@code gpu}) or the CPU. */
    public static Method autoChoice(InterpGrid grid, boolean gpu) {
        return useFft(G2GPlan.of(grid), grid.charges(), Method.AUTO, gpu) ? Method.FFT : Method.DIRECT;
    }

    /** FFT length per axis (5-smooth, >= nodesPerDim) and its pass radices, e.g. "600 = 12*10*5". */
    public static String fftShape(InterpGrid grid) {
        G2GPlan plan = G2GPlan.of(grid);
        StringBuilder sb = new StringBuilder().append(plan.m).append(" =");
        for (int i = 0; i < plan.radices.length; i++) {
            sb.append(i == 0 ? " " : "*").append(plan.radices[i]);
        }
        return sb.toString();
    }

    /** Work units of the FFT method (see the cost constants) and its GPU kernel launches. */
    public static double[] fftWorkAndLaunches(InterpGrid grid) {
        G2GPlan plan = G2GPlan.of(grid);
        return new double[] {plan.fftWork(grid.charges()), plan.fftLaunches()};
    }

    /** Modelled time in nanoseconds of {@code method} (DIRECT or FFT) on a grid of this shape. */
    public static double modelledNanos(InterpGrid grid, Method method, boolean gpu) {
        G2GPlan plan = G2GPlan.of(grid);
        return modelledNanos(plan, grid.charges(), method == Method.FFT, gpu);
    }

    static double modelledNanos(G2GPlan plan, int charges, boolean fft, boolean gpu) {
        if (fft) {
            double work = plan.fftWork(charges);
            return gpu ? FFT_NS_GPU * work + LAUNCH_NS_GPU * plan.fftLaunches()
                    : FFT_NS_CPU * work + PHASE_NS_CPU * plan.fftLaunches();
        }
        double pairs = (double) charges * plan.gridNodes * plan.gridNodes;
        return gpu ? Math.max(DIRECT_NS_GPU * pairs, DIRECT_SOURCE_NS_GPU * plan.gridNodes) + LAUNCH_NS_GPU * 2
                : DIRECT_NS_CPU * pairs + PHASE_NS_CPU;
    }

    static boolean useFft(G2GPlan plan, int charges, Method method, boolean gpu) {
        switch (method) {
            case DIRECT:
                return false;
            case FFT:
                return true;
            default:
                return modelledNanos(plan, charges, true, gpu) < modelledNanos(plan, charges, false, gpu);
        }
    }
}
