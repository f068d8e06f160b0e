package io.sparkgpu.cuda;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuDeviceTotalMem;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/**
 * One GPU of this JVM: its primary context (shared by all threads; the driver API is thread-safe), a cache
 * of loaded modules and kernel handles, and a count of the device memory our buffers hold. Obtain through
 * {@link CudaRuntime#device(int)}.
 */
public final class CudaDevice {
    private final int ordinal;
    private final CUdevice device;
    private final CUcontext context;
    private final String name;
    private final long totalMemory;
    private final int multiprocessors;
    private final int maxSharedOptin;
    private final double peakBandwidthGBs;
    private final int computeCapability;
    private final ConcurrentHashMap<String, CUmodule> modules = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, CUfunction> functions = new ConcurrentHashMap<>();
    private final AtomicLong allocated = new AtomicLong();
    /** A stand-in without a driver ({@link #fake}); false for every real device. */
    private final boolean fake;

    private CudaDevice(int ordinal) {
        this.ordinal = ordinal;
        this.fake = false;
        try {
            device = new CUdevice();
            cuDeviceGet(device, ordinal);
            context = new CUcontext();
            cuDevicePrimaryCtxRetain(context, device);
            cuCtxSetCurrent(context);
            byte[] nameBytes = new byte[256];
            cuDeviceGetName(nameBytes, nameBytes.length, device);
            int len = 0;
            while (len < nameBytes.length && nameBytes[len] != 0) {
                len++;
            }
            name = new String(nameBytes, 0, len, StandardCharsets.US_ASCII);
            long[] mem = new long[1];
            cuDeviceTotalMem(mem, device);
            totalMemory = mem[0];
            multiprocessors = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
            maxSharedOptin = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
            computeCapability = 10 * attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
                    + attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
            double memClockKHz = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
            double busBits = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
            peakBandwidthGBs = 2.0 * memClockKHz * 1e3 * (busBits / 8.0) / 1e9;
        } catch (RuntimeException e) {
            throw new CudaException("cannot open GPU " + ordinal + ": " + CudaRuntime.describe(e), e);
        }
    }

    static CudaDevice open(int ordinal) {
        return new CudaDevice(ordinal);
    }

    /** The fake device: attributes of an H100, no driver. */
    private CudaDevice() {
        ordinal = -1;
        fake = true;
        device = null;
        context = null;
        name = "fake GPU for injected test faults";
        totalMemory = 80L << 30;
        multiprocessors = 132;
        maxSharedOptin = 227 * 1024;
        computeCapability = 90;
        peakBandwidthGBs = 3350;
    }

    private static final class Fake {
        static final CudaDevice INSTANCE = new CudaDevice();
    }

    /**
     * For {@link BackendChooser}'s test hook only: a device with plausible attributes whose every driver call fails
     * with a {@link CudaException} (device work starts with {@link #bind}), so GPU code given it runs its host part
     * and then fails as a GPU failing part-way would.
     */
    static CudaDevice fake() {
        return Fake.INSTANCE;
    }

    private int attribute(int attr) {
        int[] v = new int[1];
        cuDeviceGetAttribute(v, attr, device);
        return v[0];
    }

    /** Makes this device's context current on the calling thread (cheap; call before any driver work). */
    public void bind() {
        if (fake) {
            throw new CudaException(name + ": no driver (injected fault)");
        }
        cuCtxSetCurrent(context);
    }

    /**
     * The kernel {@code kernel} of module {@code module}, loaded once per device from the classpath resource
     * {@code /io/sparkgpu/kernels/<module>.fatbin} built by the native-kernels module.
     */
    public CUfunction function(String module, String kernel) {
        String key = module + "/" + kernel;
        CUfunction f = functions.get(key);
        if (f != null) {
            return f;
        }
        CUmodule m = modules.computeIfAbsent(module, this::loadModule);
        synchronized (functions) {
            f = functions.get(key);
            if (f == null) {
                bind();
                f = new CUfunction();
                try {
                    cuModuleGetFunction(f, m, kernel);
                } catch (RuntimeException e) {
                    throw new CudaException("kernel " + kernel + " not found in module " + module + ": "
                            + CudaRuntime.describe(e), e);
                }
                functions.put(key, f);
            }
            return f;
        }
    }

    private CUmodule loadModule(String module) {
        String resource = "/io/sparkgpu/kernels/" + module + ".fatbin";
        byte[] image;
        try (InputStream in = CudaDevice.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new CudaException("GPU kernels " + resource + " are not on the classpath (was the jar built "
                        + "with -DskipNvcc?)");
            }
            image = in.readAllBytes();
        } catch (IOException e) {
            throw new CudaException("cannot read " + resource + ": " + e.getMessage(), e);
        }
        bind();
        CUmodule m = new CUmodule();
        try {
            cuModuleLoadData(m, image);
        } catch (RuntimeException e) {
            throw new CudaException("cannot load " + resource + " on GPU " + ordinal + " (" + name + ", sm_"
                    + computeCapability + "): " + CudaRuntime.describe(e), e);
        }
        return m;
    }

    /** Free and total device memory as reported by the driver. */
    public long[] memoryInfo() {
        bind();
        long[] free = new long[1];
        long[] total = new long[1];
        cuMemGetInfo(free, total);
        return new long[] {free[0], total[0]};
    }

    void addAllocated(long delta) {
        allocated.addAndGet(delta);
    }

    /** Bytes currently held by {@link DeviceBuffer}s on this device (for leak checks and budgets). */
    public long allocatedBytes() {
        return allocated.get();
    }

    /** This device's primary context (for driver calls that name a context, e.g. peer copies). */
    public CUcontext context() {
        return context;
    }

    public int ordinal() {
        return ordinal;
    }

    public String name() {
        return name;
    }

    public long totalMemory() {
        return totalMemory;
    }

    public int multiprocessors() {
        return multiprocessors;
    }

    public int maxSharedMemoryOptin() {
        return maxSharedOptin;
    }

    public int computeCapability() {
        return computeCapability;
    }

    /** Theoretical DRAM bandwidth from memory clock and bus width (GB/s). */
    public double peakBandwidthGBs() {
        return peakBandwidthGBs;
    }

    @Override
    public String toString() {
        return "GPU " + ordinal + " (" + name + ", sm_" + computeCapability + ", " + multiprocessors + " SMs, "
                + (totalMemory >> 20) + " MiB)";
    }
}
