package io.sparkgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class GpuResourcesTest {

    private static AutoCloseable res(List<String> log, String name, boolean fail) {
        return () -> {
            log.add(name);
            if (fail) {
                throw new IllegalStateException(name + " failed");
            }
        };
    }

    @Test
    void closesEveryResourceInOrderSkippingNulls() {
        List<String> log = new ArrayList<>();
        GpuResources.closeAll(res(log, "a", false), null, res(log, "b", false));
        assertEquals(List.of("a", "b"), log);
    }

    @Test
    void aFailureDoesNotStopTheOthersAndTheFirstIsReported() {
        List<String> log = new ArrayList<>();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> GpuResources.closeAll(
                res(log, "a", true), res(log, "b", false), res(log, "c", true)));
        assertEquals(List.of("a", "b", "c"), log);
        assertEquals("a failed", e.getMessage());
        assertEquals(1, e.getSuppressed().length);
        assertEquals("c failed", e.getSuppressed()[0].getMessage());
    }

    @Test
    void closingAfterAFailureKeepsThatFailure() {
        List<String> log = new ArrayList<>();
        RuntimeException cause = new RuntimeException("allocation failed");
        GpuResources.closeAfter(cause, res(log, "a", true), null, res(log, "b", false));
        assertEquals(List.of("a", "b"), log);
        assertEquals(1, cause.getSuppressed().length);
        assertSame(IllegalStateException.class, cause.getSuppressed()[0].getClass());
        assertEquals("a failed", cause.getSuppressed()[0].getMessage());
    }
}
