package io.sparkgpu.cuda;

import static jcuda.driver.JCudaDriver.cuFuncSetAttribute;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;

import jcuda.NativePointerObject;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;

/**
 * The one way every capability launches a kernel: argument marshalling, dynamic shared memory opt-in,
 * occupancy-based grid sizing, and errors that name the kernel and launch shape.
 */
public final class KernelLauncher {
    private KernelLauncher() {
    }

    /** A device pointer argument that may be absent (passed as a null pointer). */
    public static Object nullable(DeviceBuffer b) {
        return b == null ? new Pointer() : b;
    }

    /**
     * Launches {@code module/kernel} on {@code stream} with a 1-D grid. Arguments may be
     * {@link DeviceBuffer}, {@link NativePointerObject}, Integer, Long, Double or Float.
     */
    public static void launch(GpuStream stream, String module, String kernel, int grid, int block, int sharedBytes,
                              Object... args) {
        CudaDevice dev = stream.device();
        if (grid <= 0 || block <= 0 || block > 1024) {
            throw new CudaException("invalid launch shape " + shape(kernel, grid, block, sharedBytes, dev));
        }
        if (sharedBytes > dev.maxSharedMemoryOptin()) {
            throw new CudaException("launch " + shape(kernel, grid, block, sharedBytes, dev) + " needs more shared "
                    + "memory than the device allows (" + dev.maxSharedMemoryOptin() + " B)");
        }
        dev.bind();
        CUfunction f = dev.function(module, kernel);
        try {
            if (sharedBytes > 48 * 1024) {
                cuFuncSetAttribute(f, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sharedBytes);
            }
            DeviceFaults.strike(DeviceFaults.LAUNCH);
            cuLaunchKernel(f, grid, 1, 1, block, 1, 1, sharedBytes, stream.handle(), Pointer.to(marshal(args)), null);
        } catch (RuntimeException e) {
            throw new CudaException("launch of " + shape(kernel, grid, block, sharedBytes, dev) + " failed: "
                    + CudaRuntime.describe(e), e);
        }
    }

    /** The launch as errors name it (built only for an error: a launch costs a few microseconds of host time). */
    private static String shape(String kernel, int grid, int block, int sharedBytes, CudaDevice dev) {
        return kernel + "<<<" + grid + ", " + block + ", " + sharedBytes + " B shared>>> on " + dev;
    }

    /** Blocks that fit on the whole device at once for this kernel, block size and shared memory. */
    public static int residentBlocks(CudaDevice dev, String module, String kernel, int block, int sharedBytes) {
        dev.bind();
        CUfunction f = dev.function(module, kernel);
        if (sharedBytes > 48 * 1024) {
            cuFuncSetAttribute(f, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sharedBytes);
        }
        int[] perSm = new int[1];
        cuOccupancyMaxActiveBlocksPerMultiprocessor(perSm, f, block, sharedBytes);
        if (perSm[0] == 0) {
            throw new CudaException("kernel " + kernel + " cannot run with block " + block + " and " + sharedBytes
                    + " B shared memory on " + dev);
        }
        return perSm[0] * dev.multiprocessors();
    }

    private static Pointer[] marshal(Object[] args) {
        Pointer[] ps = new Pointer[args.length];
        for (int i = 0; i < args.length; i++) {
            Object a = args[i];
            if (a instanceof DeviceBuffer) {
                ps[i] = Pointer.to(((DeviceBuffer) a).pointer());
            } else if (a instanceof NativePointerObject) {
                ps[i] = Pointer.to((NativePointerObject) a);
            } else if (a instanceof Integer) {
                ps[i] = Pointer.to(new int[] {(Integer) a});
            } else if (a instanceof Long) {
                ps[i] = Pointer.to(new long[] {(Long) a});
            } else if (a instanceof Double) {
                ps[i] = Pointer.to(new double[] {(Double) a});
            } else if (a instanceof Float) {
                ps[i] = Pointer.to(new float[] {(Float) a});
            } else {
                throw new IllegalArgumentException("unsupported kernel argument #" + i + ": " + a);
            }
        }
        return ps;
    }
}
