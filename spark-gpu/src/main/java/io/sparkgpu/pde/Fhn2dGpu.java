package io.sparkgpu.pde;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuResources;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;

/**
 * GPU implementation of {@link Fhn2d#cpu}: per step the row right-hand side ({@code pde_adi_rhs_rows}), the row
 * solve ({@code pde_thomas_batch}, cellsY systems interleaved), the column right-hand side
 * ({@code pde_adi_rhs_cols}), the column solve (cellsX systems) and the w update ({@code pde_adi_w}); the state stays
 * on the device, recorded frames are copied back. The solver overwrites its super-diagonal, which a device copy
 * restores before each solve. Bits equal the twin's. Throws {@code CudaException}; never falls back itself.
 */
final class Fhn2dGpu {
    private Fhn2dGpu() {
    }

    public static Fhn2d.Result run(CudaDevice dev, Fhn2dConfig config, FhnParams p) {
        Fhn2d.Setup s = new Fhn2d.Setup(config, p);
        int len = s.nx * s.ny;
        long bytes = 8L * len;
        // ten fields of the whole grid (ADI sweeps read whole rows and columns): over the device-memory budget the
        // policy recomputes on the CPU twin (auto) or reports it (gpu)
        io.sparkgpu.cuda.DeviceMemoryBudget.check("FitzHugh-Nagumo 2-D run of " + s.nx + " x " + s.ny + " cells",
                10 * bytes);
        int frames = Fhn2d.frames(s);
        double[] field = frames > 0 ? new double[frames * len] : null;
        if (field != null) {
            System.arraycopy(s.v0, 0, field, 0, len);
        }
        double[] frame = field != null ? new double[len] : null;
        DeviceBuffer[] b = new DeviceBuffer[10];
        try (GpuStream st = new GpuStream(dev)) {
            double[][] host = {s.v0, s.w0, null, null, s.ax, s.bx, s.cx, s.ay, s.by, s.cy};
            for (int q = 0; q < b.length; q++) {
                b[q] = DeviceBuffer.ofDoubles(dev, len);
                if (host[q] != null) {
                    b[q].upload(host[q], st);
                }
            }
            DeviceBuffer v = b[0];
            DeviceBuffer w = b[1];
            DeviceBuffer dT = b[2];
            DeviceBuffer c = b[3];
            int grid = FhnGpu.grid(len, FhnGpu.THREADS);
            for (long k = 0; k < s.steps; k++) {
                KernelLauncher.launch(st, FhnGpu.MODULE, "pde_adi_rhs_rows", grid, FhnGpu.THREADS, 0, s.nx, s.ny, v,
                        w, s.p.a, s.ry, s.dt2, dT);
                c.copyFrom(b[6], bytes, st);
                KernelLauncher.launch(st, FhnGpu.MODULE, "pde_thomas_batch", FhnGpu.grid(s.ny, FhnGpu.AXON_THREADS),
                        FhnGpu.AXON_THREADS, 0, s.ny, s.nx, b[4], b[5], c, dT);
                KernelLauncher.launch(st, FhnGpu.MODULE, "pde_adi_rhs_cols", grid, FhnGpu.THREADS, 0, s.nx, s.ny, dT,
                        w, s.p.a, s.rx, s.dt2, v);
                c.copyFrom(b[9], bytes, st);
                KernelLauncher.launch(st, FhnGpu.MODULE, "pde_thomas_batch", FhnGpu.grid(s.nx, FhnGpu.AXON_THREADS),
                        FhnGpu.AXON_THREADS, 0, s.nx, s.ny, b[7], b[8], c, v);
                KernelLauncher.launch(st, FhnGpu.MODULE, "pde_adi_w", grid, FhnGpu.THREADS, 0, (long) len, v, w,
                        s.dtEps, s.wDen);
                if (field != null && (k + 1) % s.c.recordEvery == 0) {
                    v.download(frame, len, st);
                    st.synchronize("fhn 2-D frame");
                    System.arraycopy(frame, 0, field, (int) ((k + 1) / s.c.recordEvery) * len, len);
                }
            }
            double[] vOut = new double[len];
            double[] wOut = new double[len];
            v.download(vOut, len, st);
            w.download(wOut, len, st);
            st.synchronize("fhn 2-D ADI");
            return new Fhn2d.Result(s, vOut, wOut, field, frames);
        } finally {
            GpuResources.closeAll(b);
        }
    }
}
