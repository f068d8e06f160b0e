package io.sparkgpu.pde;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendFaults;
import io.sparkgpu.cuda.CudaException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The backend policy for the FitzHugh-Nagumo simulations on any machine: a device failure under {@code auto} gives
 * the CPU twin's bits and reports the CPU; under {@code gpu} it is an error naming the phase; the adaptive scheme
 * (no kernel) runs on the CPU under auto and is refused under gpu.
 */
class FhnBackendFallbackTest {

    static FhnConfig config(Backend b) {
        FhnConfig c = FhnTestData.small(FhnConfig.CRANK_NICOLSON, FhnConfig.THOMAS, FhnConfig.NEUMANN,
                FhnConfig.CONSTANT);
        c.backend = b;
        return c;
    }

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void autoFallsBackToTheCpuTwinsBits(String kind) {
        FhnParams[] ps = FhnTestData.sweep(3);
        FhnResult[] ref = FhnStep.run(config(Backend.CPU), ps, 1).value;
        try (BackendFaults f = BackendFaults.of(kind, FhnStep.SIMULATE)) {
            BackendChooser.Ran<FhnResult[]> r = FhnStep.run(config(Backend.AUTO), ps, 1);
            assertTrue(f.fired() > 0, "the fault struck");
            assertEquals("cpu", r.backend());
            for (int j = 0; j < ps.length; j++) {
                assertArrayEquals(ref[j].v, r.value[j].v);
                assertArrayEquals(ref[j].field, r.value[j].field);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void gpuBackendFailsNamingThePhase(String kind) {
        try (BackendFaults f = BackendFaults.of(kind, FhnStep.SIMULATE)) {
            CudaException e = assertThrows(CudaException.class,
                    () -> FhnStep.run(config(Backend.GPU), FhnTestData.sweep(2), 1));
            assertTrue(e.getMessage().contains(FhnStep.SIMULATE), e.getMessage());
        }
    }

    @Test
    void adaptiveRunsOnTheCpuAndGpuRefusesIt() {
        FhnConfig c = config(Backend.AUTO);
        c.scheme = FhnConfig.ADAPTIVE;
        c.dt = 0.02;
        assertEquals("cpu", FhnStep.run(c, FhnTestData.sweep(2), 1).backend());
        c.backend = Backend.GPU;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> FhnStep.run(c, FhnTestData.sweep(2), 1));
        assertEquals("backend must be cpu or auto with scheme adaptive (it has no GPU kernel), got 'gpu'",
                e.getMessage());
    }

    @Test
    void aRowAboveTheStabilityLimitIsNamed() {
        FhnConfig c = config(Backend.CPU);
        c.scheme = FhnConfig.EXPLICIT;
        c.dt = 0.1; // dx = 0.5: limit 0.125 / D
        FhnParams[] ps = {FhnParams.excitable(0.1), new FhnParams(0.1, 0.01, 0.5, 0, 2.0)};
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FhnStep.run(c, ps, 1));
        assertTrue(e.getMessage().startsWith("row 1 (a=0.1, eps=0.01, gamma=0.5, I=0.0, D=2.0): dt must be <= "),
                e.getMessage());
        assertTrue(e.getMessage().contains("dx^2 / (2 D) = 0.0625 for diffusion alone"), e.getMessage());
    }
}
