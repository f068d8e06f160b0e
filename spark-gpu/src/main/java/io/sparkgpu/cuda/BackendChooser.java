package io.sparkgpu.cuda;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the backend policy. {@code cpu}: the CPU twin. {@code gpu}: the selected device, or a
 * {@link CudaException} explaining why not. {@code auto}: the device when driver, device and the
 * capability's module all load, otherwise the CPU twin, with one WARN line per distinct reason per JVM.
 */
public final class BackendChooser {
    private static final Logger LOG = LoggerFactory.getLogger(BackendChooser.class);
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

    private BackendChooser() {
    }

    /**
     * @param module a kernel module of the capability and {@code probeKernel} one of its kernels; loading it
     *               proves the fatbin runs on this GPU
     * @return the device to use, or {@code null} for the CPU twin
     */
    public static CudaDevice resolve(Backend backend, String module, String probeKernel) {
        if (backend == Backend.CPU) {
            return null;
        }
        try {
            CudaDevice dev = CudaRuntime.device(CudaRuntime.selectDeviceOrdinal());
            dev.function(module, probeKernel);
            return dev;
        } catch (CudaException | LinkageError e) {
            if (backend == Backend.GPU) {
                throw e instanceof CudaException ? (CudaException) e
                        : new CudaException("GPU backend requested but unusable: " + e, e);
            }
            fallback(module, e.getMessage());
            return null;
        }
    }

    /** Records (once per reason) that {@code module} runs on the CPU twin. */
    public static void fallback(String module, String reason) {
        if (WARNED.add(module + "|" + reason)) {
            LOG.warn("spark-gpu: {} runs on the CPU twin (backend=auto): {}", module, reason);
        }
    }

    /** True when {@code auto} would use a GPU in this JVM for the current thread. */
    public static boolean gpuUsable(String module, String probeKernel) {
        try {
            return resolve(Backend.AUTO, module, probeKernel) != null;
        } catch (RuntimeException e) {
            return false;
        }
    }
}
