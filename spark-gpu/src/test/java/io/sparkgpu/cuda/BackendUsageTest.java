package io.sparkgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The usage accumulator: gpu / cpu / mixed overall and per phase, reasons, merging, threads, serialisation. */
class BackendUsageTest {

    @Test
    void namesOverallAndPerPhase() {
        BackendUsage u = new BackendUsage();
        assertTrue(u.isEmpty());
        assertEquals("none", u.backend());
        assertNull(u.backend("kNN"));
        u.record("kNN", true, null);
        assertEquals("gpu", u.backend());
        u.record("forces", false, "no GPU");
        u.record("forces", false, "no GPU");
        assertEquals("mixed", u.backend());
        assertEquals("gpu", u.backend("kNN"));
        assertEquals("cpu", u.backend("forces"));
        u.record("kNN", false, "GPU failed");
        assertEquals("mixed", u.backend("kNN"));
        assertEquals(List.of("kNN", "forces"), List.copyOf(u.phaseBackends().keySet()));
        assertEquals(Map.of("kNN", "GPU failed", "forces", "no GPU"), u.fallbackReasons());
        assertEquals(1, u.gpuCalls("kNN"));
        assertEquals(2, u.cpuCalls("forces"));
        assertTrue(u.toString().startsWith("mixed (kNN mixed: GPU failed, forces cpu: no GPU"), u.toString());

        BackendUsage cpu = new BackendUsage().record("forces", false, null);
        assertEquals("cpu", cpu.backend());
        assertTrue(cpu.fallbackReasons().isEmpty(), "cpu asked for: no fallback reason");
    }

    @Test
    void recordsRanAndCombines() {
        BackendChooser.Ran<String> r = BackendChooser.run(Backend.CPU, "m", "k", "p", dev -> "g", () -> "c");
        assertEquals("cpu", new BackendUsage().record("p", r).backend("p"));
        assertEquals("gpu", BackendUsage.combine(null, "gpu"));
        assertEquals("cpu", BackendUsage.combine("cpu", null));
        assertEquals("gpu", BackendUsage.combine("gpu", "gpu"));
        assertEquals("mixed", BackendUsage.combine("gpu", "cpu"));
        assertEquals("mixed", BackendUsage.combine("mixed", "gpu"));
        assertNull(BackendUsage.combine(null, null));
    }

    @Test
    void mergesAndKeepsAFewDistinctReasons() {
        BackendUsage a = new BackendUsage().record("kNN", true, null);
        BackendUsage b = new BackendUsage();
        for (int i = 0; i < 10; i++) {
            b.record("kNN", false, "reason " + (i % 6));
        }
        a.merge(b).merge(null).merge(a);
        assertEquals(1, a.gpuCalls("kNN"));
        assertEquals(10, a.cpuCalls("kNN"));
        assertEquals(String.join("; ", "reason 0", "reason 1", "reason 2", "reason 3"), a.fallbackReasons().get("kNN"));
    }

    @Test
    void threadSafeAndSerializable() throws Exception {
        BackendUsage u = new BackendUsage();
        IntStream.range(0, 20_000).parallel().forEach(i -> u.record("p" + (i % 3), i % 2 == 0, null));
        long total = 0;
        for (String p : List.of("p0", "p1", "p2")) {
            total += u.gpuCalls(p) + u.cpuCalls(p);
        }
        assertEquals(20_000, total);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(u.record("p0", false, "why"));
        }
        BackendUsage back;
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            back = (BackendUsage) in.readObject();
        }
        assertEquals(u.toString(), back.toString());
        assertFalse(back.isEmpty());
    }
}
