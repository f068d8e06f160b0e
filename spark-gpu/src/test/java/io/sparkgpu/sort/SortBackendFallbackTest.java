package io.sparkgpu.sort;

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

/**
 * The backend policy for the sort's general key path, on any machine: a device failure injected under {@code auto}
 * gives the CPU twin's order and says so; under {@code gpu} it is an error naming the phase.
 */
class SortBackendFallbackTest {

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void wideOrderFallsBackToTheTwinUnderAutoAndFailsUnderGpu(String kind) {
        long[] k = SortWideCpuTest.keys(5000, 40, 50, 3);
        try (BackendFaults f = BackendFaults.of(kind, SortStep.ORDER_WIDE)) {
            BackendChooser.Ran<int[]> r = SortStep.orderWide(Backend.AUTO, k, 40);
            assertArrayEquals(SortCpu.orderWide(k, 40), r.value);
            assertEquals("cpu", r.backend());
            assertTrue(f.fired() > 0);
            CudaException e = assertThrows(CudaException.class, () -> SortStep.orderWide(Backend.GPU, k, 40));
            assertTrue(e.getMessage().contains(SortStep.ORDER_WIDE), e.getMessage());
        }
        // a user error is never retried and is the same on every backend
        for (Backend b : Backend.values()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SortStep.orderWide(b, new long[] {1L << 41}, 40));
            assertTrue(e.getMessage().startsWith("keys[0] = "), e.getMessage());
        }
    }
}
