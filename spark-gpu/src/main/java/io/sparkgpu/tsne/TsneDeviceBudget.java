package io.sparkgpu.tsne;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.cuda.DeviceFaults;
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import io.sparkgpu.tsne.repulsion.G2GGpu;

/**
 * t-SNE under the device-memory budget ({@link DeviceMemoryBudget}): every iteration reads all n positions and the
 * whole P, so a fit cannot be split into chunks with the same bits. Its device working set is estimated before the
 * fit, on the driver; over the budget, {@code backend=auto} runs the whole fit on the CPU twin (one WARN line, the
 * same bits) and {@code backend=gpu} fails with a message naming {@value DeviceMemoryBudget#KEY}, the estimate and
 * the budget.
 */
public final class TsneDeviceBudget {
    private TsneDeviceBudget() {
    }

    /**
     * Estimated device bytes of a fit of n points of d features with k neighbours (0: the default k) into
     * {@code cfg.dimension} dimensions: the largest of the kNN phase (float features twice, k distances and indices
     * per row twice, see KnnCells), the optimiser's set-up (P's CSR copy next to its SELL layout) and the optimiser
     * (P with up to 2nk entries of a double and an int, its row offsets, positions, update, gains, both forces and
     * keys per point, and, for grid repulsion, the grid at its largest allowed size: charges, potentials and the
     * G2G's FFT workspace, {@link G2GGpu#fftWorkspaceBytes}). An estimate, not a bound.
     */
    public static long estimate(TsneConfig cfg, long n, long d) {
        long k = cfg.effectiveK(n);
        int dim = cfg.dimension;
        // the kNN over cells: points in cell order, lists in cell order, and the points in their own order (the
        // assignments) or the lists in point order (the final scatter)
        long knn = DeviceMemoryBudget.times(n, 4L * d + 8L * k + 4L * Math.max(d, 2L * k));
        long nnz = DeviceMemoryBudget.times(2 * n, k);
        long opt = DeviceMemoryBudget.add(DeviceMemoryBudget.times(nnz, 12), DeviceMemoryBudget.times(n + 1, 8));
        opt = DeviceMemoryBudget.add(opt, DeviceMemoryBudget.times(n, 8L * (5L * dim + 1)));
        // while the SELL layout is filled, P's CSR copy (freed before the iterations, whose grid takes its place)
        long setUp = DeviceMemoryBudget.add(opt, DeviceMemoryBudget.times(nnz, 12));
        if (!cfg.exactRepulsion(n)) {
            long side = (long) cfg.grid.maxIntervals[dim] * cfg.grid.p;
            long nodes = 1;
            for (int a = 0; a < dim; a++) {
                nodes = DeviceMemoryBudget.times(nodes, side);
            }
            // the state's charges and potentials ((dim + 2) doubles per node each) and the G2G's FFT workspace
            long grid = DeviceMemoryBudget.add(DeviceMemoryBudget.times(nodes, 16L * (dim + 2)),
                    G2GGpu.fftWorkspaceBytes(dim, (int) side, dim + 2));
            opt = DeviceMemoryBudget.add(opt, grid);
        }
        return Math.max(knn, Math.max(opt, setUp));
    }

    /**
     * The backend the fit runs on: {@code cfg.backend}, or the CPU twin when the estimate is over the budget under
     * {@code auto} (logged once per reason). Without a budget, the estimate is checked against the memory of the GPU
     * this JVM would use when the fit's GPU work runs here ({@code local}: local mode, whose tasks run in the
     * driver's JVM), so a fit that cannot fit the device is refused before it starts rather than failing on an
     * allocation after the kNN.
     *
     * @throws CudaException under {@code gpu} when the estimate is over the budget or the device
     */
    public static Backend backendFor(TsneConfig cfg, long n, long d, boolean local) {
        if (cfg.backend == Backend.CPU) {
            return cfg.backend;
        }
        long budget = DeviceMemoryBudget.bytes();
        return budget != DeviceMemoryBudget.UNLIMITED ? backendFor(cfg, n, d, budget, null)
                : local ? backendFor(cfg, n, d, 0, localDevice()) : cfg.backend;
    }

    /** {@link #backendFor(TsneConfig, long, long, boolean)} for a fit whose GPU work runs in this JVM. */
    public static Backend backendFor(TsneConfig cfg, long n, long d) {
        return backendFor(cfg, n, d, true);
    }

    /** A GPU's name and memory, the limit of a fit when no budget is set. */
    record Device(String name, long bytes) {
    }

    /** No usable GPU in this JVM: nothing to check against. */
    static final Device NO_DEVICE = new Device(null, 0);

    /**
     * The decision against a budget ({@code device} null) or against a device's memory ({@link #NO_DEVICE}: none
     * here, nothing to check).
     */
    static Backend backendFor(TsneConfig cfg, long n, long d, long budget, Device device) {
        if (cfg.backend == Backend.CPU || device == NO_DEVICE) {
            return cfg.backend;
        }
        String what = "t-SNE of " + n + " points (d=" + d + ", dimension " + cfg.dimension + ")";
        long est = estimate(cfg, n, d);
        try {
            if (device == null) {
                DeviceMemoryBudget.check(what, est, budget);
            } else if (est > device.bytes()) {
                throw new CudaException(what + " needs an estimated " + DeviceMemoryBudget.describe(est)
                        + " of device memory, more than the " + DeviceMemoryBudget.describe(device.bytes())
                        + " of " + device.name() + "; reduce the features first (pcaDimension), lower the perplexity, "
                        + "or run it on the CPU twin (backend=auto does so by itself)");
            }
            return cfg.backend;
        } catch (CudaException e) {
            if (cfg.backend == Backend.GPU) {
                throw new CudaException("backend=gpu: " + e.getMessage(), e);
            }
            BackendChooser.fallback("tsne", e.getMessage());
            return Backend.CPU;
        }
    }

    /** The GPU this thread would use, or {@link #NO_DEVICE} when none is usable here. */
    private static Device localDevice() {
        if (!SparkGpuConf.get(DeviceFaults.KEY, "").isBlank()) {
            return NO_DEVICE; // test faults armed: this probe must not consume one of them
        }
        try {
            CudaDevice dev = CudaRuntime.device(CudaRuntime.selectDeviceOrdinal());
            return new Device(dev.name(), dev.totalMemory());
        } catch (CudaException | LinkageError | IllegalArgumentException e) {
            return NO_DEVICE;
        }
    }
}
