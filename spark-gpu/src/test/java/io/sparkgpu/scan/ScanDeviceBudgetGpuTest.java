package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import io.sparkgpu.testutil.GpuTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The scan under a device-memory budget (issue 18 item 7): every range reads the whole prefix tables, so the scan
 * cannot be chunked; a session over the budget fails under {@code gpu} naming the budget and gives the CPU twin's
 * bits under {@code auto}; within the budget the device runs as before.
 */
@Tag("gpu")
class ScanDeviceBudgetGpuTest {

    @AfterEach
    void clear() {
        System.clearProperty(DeviceMemoryBudget.KEY);
    }

    @Test
    void overTheBudgetAutoHasTheCpuBitsAndGpuNamesTheBudget() {
        GpuTestSupport.deviceOrSkip();
        ScanTables t = ScanTables.of(ScanTestData.grid(ScanModel.POISSON, new ScanShape(40, 30), 31));
        ScanSpec spec = ScanSpec.all(ScanDirection.HIGH);
        ScanResult cpu = LocalScan.run(t, spec, 3, 19, 7, Backend.CPU, 2);
        long need = ScanGpu.Session.deviceBytes(t, 0);
        assertTrue(need > 24L * 41 * 31, "the tables are counted: " + need);

        System.setProperty(DeviceMemoryBudget.KEY, Long.toString(need + (1 << 20)));
        assertSame(cpu, LocalScan.run(t, spec, 3, 19, 7, Backend.GPU, 2));

        System.setProperty(DeviceMemoryBudget.KEY, Long.toString(need / 2));
        assertSame(cpu, LocalScan.run(t, spec, 3, 19, 7, Backend.AUTO, 2));
        CudaException e = assertThrows(CudaException.class, () -> LocalScan.run(t, spec, 3, 19, 7, Backend.GPU, 2));
        assertTrue(e.getMessage().contains(DeviceMemoryBudget.KEY + "=" + need / 2 + " bytes"), e.getMessage());
    }

    private static void assertSame(ScanResult ref, ScanResult r) {
        assertEquals(ref.clusters().size(), r.clusters().size());
        for (int i = 0; i < ref.clusters().size(); i++) {
            assertEquals(ref.clusters().get(i).index(), r.clusters().get(i).index());
            assertEquals(Double.doubleToLongBits(ref.clusters().get(i).llr()),
                    Double.doubleToLongBits(r.clusters().get(i).llr()));
        }
        assertArrayEquals(ref.replicaLlrs(), r.replicaLlrs(), "replica bits");
    }
}
