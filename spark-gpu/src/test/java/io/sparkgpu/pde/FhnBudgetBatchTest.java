package io.sparkgpu.pde;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The FitzHugh-Nagumo sweep under a device-memory budget (CPU, no GPU needed): the GPU's batches come from the planner,
 * and simulations are independent, so the CPU twin run batch by batch on that plan gives the sweep's bits.
 */
class FhnBudgetBatchTest {

    @Test
    void batchesWithinTheBudgetGiveTheSweepsBits() {
        FhnConfig c = FhnTestData.small(FhnConfig.EXPLICIT, FhnConfig.THOMAS, FhnConfig.NEUMANN, FhnConfig.CONSTANT);
        c.tEnd = 3;
        c.validate();
        FhnSetup s = new FhnSetup(c);
        FhnParams[] ps = FhnTestData.sweep(11);
        long per = FhnGpu.bytesPerSimulation(s);
        long fixed = FhnGpu.fixedBytes(s);
        assertTrue(per >= 8L * s.n * (10 + FhnCpu.frames(s)), "frames counted: " + per);
        assertEquals(FhnStep.MAX_BATCH_CELLS / s.n, FhnGpu.batchSize(s, 1 << 24, FhnStep.MAX_BATCH_CELLS,
                DeviceMemoryBudget.UNLIMITED));
        assertEquals(ps.length, FhnGpu.batchSize(s, ps.length, FhnStep.MAX_BATCH_CELLS, DeviceMemoryBudget.UNLIMITED));
        int batch = FhnGpu.batchSize(s, ps.length, FhnStep.MAX_BATCH_CELLS, fixed + 3 * per + per / 2);
        assertEquals(3, batch);
        assertThrows(CudaException.class, () -> FhnGpu.batchSize(s, ps.length, FhnStep.MAX_BATCH_CELLS, fixed + per - 1));

        FhnResult[] whole = FhnCpu.run(s, ps, 1);
        for (int from = 0; from < ps.length; from += batch) {
            FhnResult[] part = FhnCpu.run(s, Arrays.copyOfRange(ps, from, Math.min(ps.length, from + batch)), 1);
            for (int j = 0; j < part.length; j++) {
                FhnGpuTest.assertSame(whole[from + j], part[j], "row " + (from + j));
            }
        }
    }
}
