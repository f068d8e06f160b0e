package io.sparkgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The backend policy of {@link BackendChooser#run} on any machine: the module "test-module" never loads (no
 * fatbin, and usually no GPU), and the fault hook supplies the device-side failures, including a fake device on
 * which a GPU twin really runs until its first driver call.
 */
class BackendChooserTest {
    private static final String MODULE = "test-module";
    private static final String PHASE = "test phase";

    /** The calls each twin received: "gpu" or "cpu(afterGpuFailure)". */
    private final List<String> calls = new ArrayList<>();

    @AfterEach
    void disarm() {
        BackendChooser.clearFaults();
    }

    private BackendChooser.Ran<String> run(Backend b, BackendChooser.OnGpu<String> gpu) {
        return BackendChooser.run(b, MODULE, "probe", PHASE, dev -> {
            calls.add("gpu");
            return gpu.run(dev);
        }, after -> {
            calls.add("cpu(" + after + ")");
            return "cpu value";
        });
    }

    /** A GPU twin that does host work, then starts device work on {@code dev} (a real driver call). */
    private static BackendChooser.OnGpu<String> deviceWork(AtomicInteger hostPart) {
        return dev -> {
            hostPart.incrementAndGet();
            dev.bind();
            return "gpu value";
        };
    }

    @Test
    void aPhaseNamedLikeItsModuleIsRefused() {
        // with the same name, a fault armed for the phase struck every phase of the module (scan, once)
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BackendChooser.run(Backend.CPU, "scan", "scan_reduce", "scan", dev -> 1, () -> 2));
        assertTrue(e.getMessage().contains("must differ from its module's name"), e.getMessage());
    }

    @Test
    void cpuNeverTouchesTheGpuNorTheFaults() {
        try (BackendFaults f = BackendFaults.fakeDevice(PHASE)) {
            BackendChooser.Ran<String> r = run(Backend.CPU, dev -> "gpu value");
            assertEquals("cpu value", r.value);
            assertEquals("cpu", r.backend());
            assertFalse(r.onGpu());
            assertNull(r.fallbackReason(), "cpu was asked for: not a fallback");
            assertEquals(0.0, r.gpuSeconds());
            assertEquals(0, f.checks());
        }
        assertEquals(List.of("cpu(false)"), calls);
    }

    @Test
    void autoWithoutUsableDeviceRunsTheTwinAndSaysWhy() {
        // no fault: this module's fatbin does not exist, so resolution fails on every machine
        BackendChooser.Ran<String> r = run(Backend.AUTO, dev -> "gpu value");
        assertEquals("cpu value", r.value);
        assertNotNull(r.fallbackReason());
        assertEquals(List.of("cpu(false)"), calls);
    }

    @Test
    void gpuWithoutUsableDeviceFailsNamingThePhase() {
        CudaException e = assertThrows(CudaException.class, () -> run(Backend.GPU, dev -> "gpu value"));
        assertTrue(e.getMessage().contains("backend=gpu") && e.getMessage().contains(PHASE), e.getMessage());
        assertTrue(calls.isEmpty(), "no twin ran: " + calls);
    }

    @Test
    void injectedUnusableDevice() {
        try (BackendFaults f = BackendFaults.unusable(PHASE)) {
            BackendChooser.Ran<String> r = run(Backend.AUTO, dev -> "gpu value");
            assertEquals("cpu value", r.value);
            assertTrue(r.fallbackReason().contains("injected"), r.fallbackReason());
            CudaException e = assertThrows(CudaException.class, () -> run(Backend.GPU, dev -> "gpu value"));
            assertTrue(e.getMessage().contains("injected") && e.getMessage().contains(PHASE), e.getMessage());
            assertEquals(2, f.fired());
        }
        assertEquals(List.of("cpu(false)"), calls);
    }

    @Test
    void failureMidCallIsRecomputedByTheTwinUnderAuto() {
        AtomicInteger hostPart = new AtomicInteger();
        try (BackendFaults f = BackendFaults.fakeDevice(PHASE)) {
            BackendChooser.Ran<String> r = run(Backend.AUTO, deviceWork(hostPart));
            assertEquals("cpu value", r.value);
            assertEquals("cpu", r.backend());
            assertTrue(r.fallbackReason().contains(PHASE) && r.fallbackReason().contains("injected"),
                    r.fallbackReason());
            assertEquals(1, f.fired());
        }
        assertEquals(1, hostPart.get(), "the GPU twin ran its host part on the fake device");
        assertEquals(List.of("gpu", "cpu(true)"), calls);
    }

    @Test
    void failureMidCallUnderGpuIsAClearError() {
        AtomicInteger hostPart = new AtomicInteger();
        try (BackendFaults f = BackendFaults.fakeDevice(PHASE)) {
            CudaException e = assertThrows(CudaException.class, () -> run(Backend.GPU, deviceWork(hostPart)));
            assertTrue(e.getMessage().startsWith(PHASE + " failed on ") && e.getMessage().contains("backend=gpu"),
                    e.getMessage());
            assertTrue(e.getCause() instanceof CudaException, "the device error is the cause");
        }
        assertEquals(List.of("gpu"), calls, "no silent fallback");
    }

    @Test
    void midCallFaultFailsWithoutRunningTheGpuTwin() {
        try (BackendFaults f = BackendFaults.midCall(PHASE)) {
            BackendChooser.Ran<String> r = run(Backend.AUTO, dev -> "gpu value");
            assertEquals("cpu value", r.value);
            assertTrue(r.fallbackReason().contains("injected"), r.fallbackReason());
            CudaException e = assertThrows(CudaException.class, () -> run(Backend.GPU, dev -> "gpu value"));
            assertTrue(e.getMessage().contains(PHASE), e.getMessage());
        }
        assertEquals(List.of("cpu(true)"), calls);
    }

    @Test
    void everyKindOfDeviceFailureFallsBack() {
        List<Supplier<RuntimeException>> runtime = List.of(
                () -> new CudaException("ours"),
                () -> new jcuda.CudaException("CUDA_ERROR_ILLEGAL_ADDRESS"),
                () -> new CompletionException(new CudaException("in a future")));
        try (BackendFaults f = BackendFaults.fakeDevice(PHASE)) {
            for (Supplier<RuntimeException> s : runtime) {
                BackendChooser.Ran<String> r = run(Backend.AUTO, dev -> {
                    throw s.get();
                });
                assertEquals("cpu value", r.value, s.get().toString());
            }
            BackendChooser.Ran<String> r = run(Backend.AUTO, dev -> {
                throw new UnsatisfiedLinkError("libcuda.so.1: cannot open shared object file");
            });
            assertEquals("cpu value", r.value);
            assertTrue(r.fallbackReason().contains("libcuda"), r.fallbackReason());
            assertThrows(CudaException.class, () -> run(Backend.GPU, dev -> {
                throw new NoClassDefFoundError("jcuda/driver/JCudaDriver");
            }));
        }
    }

    @Test
    void otherExceptionsOfTheGpuTwinPropagateUnchanged() {
        IllegalArgumentException bad = new IllegalArgumentException("k must be >= 1");
        ArithmeticException diverged = new ArithmeticException("Z=NaN");
        try (BackendFaults f = BackendFaults.fakeDevice(PHASE)) {
            for (Backend b : new Backend[] {Backend.AUTO, Backend.GPU}) {
                assertSame(bad, assertThrows(IllegalArgumentException.class, () -> run(b, dev -> {
                    throw bad;
                })));
                assertSame(diverged, assertThrows(ArithmeticException.class, () -> run(b, dev -> {
                    throw diverged;
                })));
                // wrapped user errors are not device failures either
                assertThrows(CompletionException.class, () -> run(b, dev -> {
                    throw new CompletionException(bad);
                }));
            }
        }
        assertFalse(calls.contains("cpu(true)") || calls.contains("cpu(false)"), "never swallowed: " + calls);
    }

    @Test
    void exceptionsOfTheCpuTwinPropagateUnchanged() {
        IllegalStateException bad = new IllegalStateException("did not converge");
        for (Backend b : Backend.values()) {
            if (b == Backend.GPU) {
                continue;
            }
            assertSame(bad, assertThrows(IllegalStateException.class,
                    () -> BackendChooser.run(b, MODULE, "probe", PHASE, dev -> "gpu", () -> {
                        throw bad;
                    })));
        }
    }

    @Test
    void successfulGpuCallReportsGpu() {
        try (BackendFaults f = BackendFaults.fakeDevice(PHASE)) {
            BackendChooser.Ran<String> r = run(Backend.GPU, dev -> "gpu value on " + dev.name());
            assertTrue(r.value.startsWith("gpu value on fake"), r.value);
            assertTrue(r.onGpu());
            assertEquals("gpu", r.backend());
            assertNull(r.fallbackReason());
            assertTrue(r.gpuSeconds() >= 0);
        }
        assertEquals(List.of("gpu"), calls);
    }

    @Test
    void faultsMatchPhaseOrModuleAndCanStrikeLater() {
        try (BackendFaults f = BackendFaults.midCall(MODULE, 2)) {
            for (int i = 0; i < 4; i++) {
                BackendChooser.Ran<String> r = run(Backend.AUTO, dev -> "gpu value");
                assertEquals(i >= 2, r.fallbackReason().contains("injected"), i + ": " + r.fallbackReason());
            }
            assertEquals(4, f.checks());
            assertEquals(2, f.fired());
            // another module is not affected
            BackendChooser.Ran<String> other = BackendChooser.run(Backend.AUTO, "other-module", "probe", PHASE,
                    dev -> "gpu", () -> "cpu");
            assertFalse(other.fallbackReason().contains("injected"), other.fallbackReason());
        }
        BackendChooser.Ran<String> after = run(Backend.AUTO, dev -> "gpu value");
        assertFalse(after.fallbackReason().contains("injected"), "closed faults do not strike");
    }

    @Test
    void faultPointsThrowOnlyWhenArmed() {
        BackendChooser.faultPoint(MODULE, PHASE);
        try (BackendFaults f = BackendFaults.midCall(PHASE)) {
            BackendChooser.faultPoint(MODULE, "another phase");
            CudaException e = assertThrows(CudaException.class, () -> BackendChooser.faultPoint(MODULE, PHASE));
            assertTrue(e.getMessage().contains(PHASE), e.getMessage());
            assertTrue(BackendChooser.isDeviceFailure(e));
            assertEquals(1, f.fired());
        }
        BackendChooser.faultPoint(MODULE, PHASE);
    }

    @Test
    void theFakeDeviceFailsItsFirstDriverCall() {
        CudaDevice fake = CudaDevice.fake();
        assertTrue(fake.maxSharedMemoryOptin() > 48 * 1024 && fake.totalMemory() > 0);
        assertThrows(CudaException.class, fake::bind);
        assertThrows(CudaException.class, () -> DeviceBuffer.allocate(fake, 64));
        assertThrows(CudaException.class, () -> new GpuStream(fake));
        assertThrows(CudaException.class, () -> fake.function(MODULE, "probe"));
    }
}
