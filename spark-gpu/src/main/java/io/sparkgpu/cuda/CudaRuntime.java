package io.sparkgpu.cuda;

import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDriverGetVersion;
import static jcuda.driver.JCudaDriver.cuInit;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Process-wide entry to the CUDA driver: loads JCuda once, initialises the driver once, and hands out one
 * {@link CudaDevice} (with its primary context and module cache) per device ordinal. All methods are
 * thread-safe; many Spark task threads of one executor share these objects.
 */
public final class CudaRuntime {
    private static final Object INIT_LOCK = new Object();
    private static volatile Status status;
    private static final ConcurrentHashMap<Integer, CudaDevice> DEVICES = new ConcurrentHashMap<>();

    /** Outcome of driver initialisation. */
    public static final class Status {
        public final boolean available;
        public final int deviceCount;
        public final int driverVersion;
        public final String reason;

        Status(boolean available, int deviceCount, int driverVersion, String reason) {
            this.available = available;
            this.deviceCount = deviceCount;
            this.driverVersion = driverVersion;
            this.reason = reason;
        }

        @Override
        public String toString() {
            return available ? deviceCount + " CUDA device(s), driver " + driverVersion : "no GPU: " + reason;
        }
    }

    private CudaRuntime() {
    }

    /** Initialises the driver on first call; never throws. */
    public static Status status() {
        Status s = status;
        if (s != null) {
            return s;
        }
        synchronized (INIT_LOCK) {
            if (status == null) {
                status = initialise();
            }
            return status;
        }
    }

    private static Status initialise() {
        try {
            NativeLoader.loadJCudaDriver();
        } catch (Throwable t) {
            return new Status(false, 0, 0, "JCuda driver library could not be loaded: " + describe(t));
        }
        try {
            cuInit(0);
            int[] v = new int[1];
            cuDriverGetVersion(v);
            int[] count = new int[1];
            cuDeviceGetCount(count);
            if (count[0] == 0) {
                return new Status(false, 0, v[0], "the CUDA driver reports no device");
            }
            return new Status(true, count[0], v[0], null);
        } catch (Throwable t) {
            return new Status(false, 0, 0, "CUDA driver unavailable (" + describe(t) + ")");
        }
    }

    private static final java.util.regex.Pattern MISSING_SO =
            java.util.regex.Pattern.compile("(lib[\\w.+-]+\\.so[.\\d]*): cannot open shared object file");

    static String describe(Throwable t) {
        String m = t.getMessage();
        if (m != null) {
            java.util.regex.Matcher missing = MISSING_SO.matcher(m);
            if (missing.find()) {
                String lib = missing.group(1);
                return lib.startsWith("libcuda.") ? "NVIDIA driver library " + lib + " not found (no CUDA driver on this host)"
                        : "shared library " + lib + " not found";
            }
        }
        if (m != null && m.length() > 300) {
            m = m.substring(0, 300) + "...";
        }
        return t.getClass().getSimpleName() + (m == null ? "" : ": " + m.replace('\n', ' '));
    }

    /** The device with this ordinal; throws {@link CudaException} if the driver or device is unusable. */
    public static CudaDevice device(int ordinal) {
        Status s = status();
        if (!s.available) {
            throw new CudaException(s.reason);
        }
        if (ordinal < 0 || ordinal >= s.deviceCount) {
            throw new CudaException("GPU ordinal " + ordinal + " does not exist (" + s.deviceCount
                    + " device(s) visible); check the task's gpu resource or " + SparkGpuConf.DEVICE);
        }
        DeviceFaults.strike(DeviceFaults.CONTEXT);
        return DEVICES.computeIfAbsent(ordinal, CudaDevice::open);
    }

    /**
     * The device this thread should use: the GPU Spark assigned to the current task, else
     * {@link SparkGpuConf#DEVICE}, else 0.
     */
    public static int selectDeviceOrdinal() {
        java.util.OptionalInt fromTask = SparkBridge.taskGpu();
        return fromTask.isPresent() ? fromTask.getAsInt() : SparkGpuConf.configuredDevice();
    }
}
