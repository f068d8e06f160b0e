package io.sparkgpu.cuda;

import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backend policy, in one place for every capability.
 * <ul>
 * <li>{@code cpu}: the CPU twin; the GPU is never touched.</li>
 * <li>{@code gpu}: the selected device, or a {@link CudaException} naming the phase and why (no GPU, the module
 * does not load, or the GPU work failed); never a silent fallback.</li>
 * <li>{@code auto}: the device when driver, device and the capability's module all load, otherwise the CPU twin;
 * and when the GPU work fails part-way with a CUDA, JCuda or linkage error, the CPU twin computes the whole call
 * again. The twins give the same bits, so a GPU problem never changes an answer. One WARN line per distinct
 * reason per JVM.</li>
 * </ul>
 * Any other exception of either twin (a user error such as {@link IllegalArgumentException}, a divergence) is
 * thrown unchanged: only device failures fall back.
 *
 * <p>{@link #run} returns the value with where it ran ({@link Ran}); callers that report backends record it in a
 * {@link BackendUsage}.
 *
 * <p><b>Fault injection (tests).</b> A package-private hook ({@link #injectFault}, driven by the test class
 * {@code io.sparkgpu.cuda.BackendFaults}) makes the GPU fail in a named phase (or every phase of a module) without
 * a GPU: at resolution ({@link Fault#UNUSABLE}); pretending a device resolved, in the GPU call itself
 * ({@link Fault#MID_CALL}); or by handing the GPU twin a fake device whose first driver call fails
 * ({@link Fault#FAKE_DEVICE}), so the twin's host part runs as it would. Armed faults also fire at the
 * {@link #faultPoint}s inside larger GPU runs such as t-SNE's device-resident loop. Off by default; when off it
 * costs one read of a volatile field per call.
 */
public final class BackendChooser {
    private static final Logger LOG = LoggerFactory.getLogger(BackendChooser.class);
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

    private BackendChooser() {
    }

    /** The GPU twin of a computation, on the resolved device. */
    @FunctionalInterface
    public interface OnGpu<T> {
        T run(CudaDevice dev);
    }

    /**
     * The CPU twin of a computation. {@code afterGpuFailure} is true when it recomputes work that a GPU began and
     * failed (backend {@code auto}); nested calls should then stay on the CPU instead of trying the GPU again.
     */
    @FunctionalInterface
    public interface OnCpu<T> {
        T run(boolean afterGpuFailure);
    }

    /** The value of one call of {@link #run} and where it was computed. */
    public static final class Ran<T> {
        /** The result (of the GPU, or of the CPU twin). */
        public final T value;
        private final boolean gpu;
        private final String fallbackReason;
        private final long gpuNanos;

        private Ran(T value, boolean gpu, String fallbackReason, long gpuNanos) {
            this.value = value;
            this.gpu = gpu;
            this.fallbackReason = fallbackReason;
            this.gpuNanos = gpuNanos;
        }

        /** True when the GPU computed the value. */
        public boolean onGpu() {
            return gpu;
        }

        /** "gpu" or "cpu". */
        public String backend() {
            return gpu ? "gpu" : "cpu";
        }

        /**
         * Why the CPU twin ran although the backend was {@code auto} (no usable GPU, or the GPU work failed and was
         * recomputed); null when the GPU ran or {@code cpu} was asked for.
         */
        public String fallbackReason() {
            return fallbackReason;
        }

        /** Wall seconds of the GPU work (the whole GPU call: copies, kernels, synchronisation); 0 on the CPU. */
        public double gpuSeconds() {
            return gpuNanos / 1e9;
        }

        @Override
        public String toString() {
            return backend() + (fallbackReason == null ? "" : " (fallback: " + fallbackReason + ")");
        }
    }

    /** {@link #run(Backend, String, String, String, OnGpu, OnCpu)} with a CPU twin that needs no flag. */
    public static <T> Ran<T> run(Backend backend, String module, String probeKernel, String phase, OnGpu<T> gpu,
                                 Supplier<T> cpu) {
        Objects.requireNonNull(cpu, "cpu");
        return run(backend, module, probeKernel, phase, gpu, afterGpuFailure -> cpu.get());
    }

    /**
     * Computes one phase under the backend policy (see the class comment).
     *
     * @param module      the capability's kernel module; {@code probeKernel} one of its kernels (loading it proves
     *                    the fatbin runs on this GPU)
     * @param phase       what is computed, e.g. "t-SNE kNN": named in logs and errors, and the key of injected faults
     * @param gpu         the GPU twin; it may throw a device failure at any point (its partial work is discarded)
     * @param cpu         the CPU twin, which must give the GPU twin's bits
     * @throws CudaException under {@code gpu} when no device is usable or the GPU work fails, naming the phase
     */
    public static <T> Ran<T> run(Backend backend, String module, String probeKernel, String phase, OnGpu<T> gpu,
                                 OnCpu<T> cpu) {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(gpu, "gpu");
        Objects.requireNonNull(cpu, "cpu");
        if (phase != null && phase.equals(module)) {
            // faults, logs and usage are keyed by phase or module: a phase named like its module is ambiguous
            throw new IllegalArgumentException("phase '" + phase + "' must differ from its module's name");
        }
        if (backend == Backend.CPU) {
            return new Ran<>(cpu.run(false), false, null, 0);
        }
        Fault fault = injected(module, phase);
        CudaDevice dev = fault == Fault.FAKE_DEVICE ? CudaDevice.fake() : null;
        if (fault == null || fault == Fault.UNUSABLE) { // the other faults pretend that a device resolved
            try {
                if (fault == Fault.UNUSABLE) {
                    throw new CudaException("injected fault: no usable GPU for " + phase);
                }
                dev = device(module, probeKernel);
            } catch (RuntimeException | LinkageError e) {
                if (!isDeviceFailure(e)) {
                    throw e;
                }
                String why = why(e);
                if (backend == Backend.GPU) {
                    throw new CudaException("backend=gpu but no GPU is usable for " + phase + ": " + why, e);
                }
                fallback(module, why);
                return new Ran<>(cpu.run(false), false, why, 0);
            }
        }
        long t0 = System.nanoTime();
        T value;
        try {
            if (fault == Fault.MID_CALL) {
                throw new CudaException("injected fault: the GPU failed during " + phase);
            }
            value = gpu.run(dev);
        } catch (RuntimeException | LinkageError e) {
            if (!isDeviceFailure(e)) {
                throw e;
            }
            String why = phase + " failed on " + (dev == null ? "the GPU" : dev.toString()) + ": "
                    + why(e);
            if (backend == Backend.GPU) {
                throw new CudaException(why + " (backend=gpu, so no fallback to the CPU twin)", e);
            }
            fallback(module, why + "; recomputed on the CPU twin");
            return new Ran<>(cpu.run(true), false, why, 0);
        }
        return new Ran<>(value, true, null, System.nanoTime() - t0);
    }

    /**
     * True for the failures the policy falls back on: a {@link CudaException}, JCuda's own exception, a
     * {@link LinkageError} (native library or class missing), also when wrapped by a {@link CompletionException}.
     */
    public static boolean isDeviceFailure(Throwable e) {
        if (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        return e instanceof CudaException || e instanceof jcuda.CudaException || e instanceof LinkageError;
    }

    /** A failure in words: a {@link CudaException}'s own message, else the type and message. */
    private static String why(Throwable e) {
        if (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        return e instanceof CudaException && e.getMessage() != null ? e.getMessage() : CudaRuntime.describe(e);
    }

    private static CudaDevice device(String module, String probeKernel) {
        CudaDevice dev = CudaRuntime.device(CudaRuntime.selectDeviceOrdinal());
        dev.function(module, probeKernel);
        return dev;
    }

    /**
     * The device for a decision made ahead of the work (task counts, memory budgets); {@link #run} is the policy
     * for the work itself.
     *
     * @param module a kernel module of the capability and {@code probeKernel} one of its kernels; loading it
     *               proves the fatbin runs on this GPU
     * @return the device to use, or {@code null} for the CPU twin
     */
    public static CudaDevice resolve(Backend backend, String module, String probeKernel) {
        if (backend == Backend.CPU) {
            return null;
        }
        try {
            return device(module, probeKernel);
        } catch (CudaException | LinkageError e) {
            if (backend == Backend.GPU) {
                throw e instanceof CudaException ? (CudaException) e
                        : new CudaException("GPU backend requested but unusable: " + e, e);
            }
            fallback(module, e.getMessage());
            return null;
        }
    }

    /**
     * The driver-side check of {@code backend=gpu} made when a fit starts, before any Spark job: throws a
     * {@link CudaException} naming {@code what} and the reason when no device of this JVM loads {@code module}.
     * While test faults are armed they decide: an unusable fault on {@code module} fails the check, anything else
     * passes it (the phases' own checks then fire the faults); the check consumes none of them.
     */
    public static void checkGpuUsable(String module, String probeKernel, String what) {
        Map<String, Injection> f = faults;
        Injection inj = f == null ? null : f.get(module);
        if (f != null && (inj == null || inj.fault != Fault.UNUSABLE)) {
            return; // tests simulating a device (or a fault in one phase): the phases' own checks decide
        }
        try {
            if (inj != null) {
                throw new CudaException("injected fault: no usable GPU for " + module);
            }
            device(module, probeKernel);
        } catch (RuntimeException | LinkageError e) {
            if (!isDeviceFailure(e)) {
                throw e;
            }
            throw new CudaException("backend=gpu but no GPU is usable for " + what + " (checked on the driver before "
                    + "any Spark job): " + why(e) + "; set backend to auto or cpu, or run where a GPU is visible "
                    + "(or give executors GPUs with spark.executor.resource.gpu.amount)", e);
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

    // ------------------------------------------------------------------------------------------ fault injection

    /** Where an injected fault strikes. */
    enum Fault {
        /** At device resolution: as if the GPU were absent or its module did not load. */
        UNUSABLE,
        /** In the GPU work: a device is taken to have resolved, then the GPU call fails (before the twin runs). */
        MID_CALL,
        /** The GPU twin runs on {@link CudaDevice#fake()} and fails at its first driver call. */
        FAKE_DEVICE
    }

    /** One armed fault: it fires on every matching check after the first {@code skip}. */
    static final class Injection {
        final Fault fault;
        final int skip;
        final AtomicInteger checks = new AtomicInteger();
        final AtomicInteger fired = new AtomicInteger();

        Injection(Fault fault, int skip) {
            this.fault = fault;
            this.skip = skip;
        }
    }

    /** Armed faults by phase or module; null (the normal state) when none. */
    private static volatile Map<String, Injection> faults;

    /**
     * Test hook: makes the GPU fail in {@code phaseOrModule} (a phase name given to {@link #run}, or a module,
     * meaning all its phases) from the {@code skip + 1}-th matching check on, until {@link #clearFaults}.
     */
    static synchronized Injection injectFault(String phaseOrModule, Fault fault, int skip) {
        Objects.requireNonNull(phaseOrModule, "phaseOrModule");
        Objects.requireNonNull(fault, "fault");
        Map<String, Injection> next = faults == null ? new ConcurrentHashMap<>() : new ConcurrentHashMap<>(faults);
        Injection inj = new Injection(fault, skip);
        next.put(phaseOrModule, inj);
        faults = next;
        return inj;
    }

    /** Test hook: disarms the fault armed as {@code inj} for {@code phaseOrModule} (if still armed). */
    static synchronized void clearFault(String phaseOrModule, Injection inj) {
        Map<String, Injection> f = faults;
        if (f == null || f.get(phaseOrModule) != inj) {
            return;
        }
        Map<String, Injection> next = new ConcurrentHashMap<>(f);
        next.remove(phaseOrModule);
        faults = next.isEmpty() ? null : next;
    }

    /** Test hook: disarms every injected fault. */
    static synchronized void clearFaults() {
        faults = null;
    }

    /** The fault to simulate for this check of (module, phase), or null. */
    private static Fault injected(String module, String phase) {
        Map<String, Injection> f = faults;
        if (f == null) {
            return null;
        }
        Injection inj = phase == null ? null : f.get(phase);
        if (inj == null && module != null) {
            inj = f.get(module);
        }
        if (inj == null || inj.checks.getAndIncrement() < inj.skip) {
            return null;
        }
        inj.fired.incrementAndGet();
        return inj.fault;
    }

    /**
     * A point inside a larger GPU run where the work of {@code phase} begins (e.g. the attractive term inside
     * t-SNE's device-resident iteration): throws the injected device failure when a fault is armed for it (either
     * kind: the run is already on a device); otherwise does nothing.
     */
    public static void faultPoint(String module, String phase) {
        if (faults != null && injected(module, phase) != null) {
            throw new CudaException("injected fault: the GPU failed during " + phase);
        }
    }
}
