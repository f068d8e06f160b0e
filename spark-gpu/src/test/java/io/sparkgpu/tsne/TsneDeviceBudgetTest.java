package io.sparkgpu.tsne;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import io.sparkgpu.tsne.repulsion.G2GGpu;
import org.junit.jupiter.api.Test;

/** t-SNE's estimate and the backend it runs on under a device-memory budget (decided on the driver, no GPU). */
class TsneDeviceBudgetTest {

    private static TsneConfig cfg(Backend b) {
        TsneConfig c = new TsneConfig();
        c.backend = b;
        return c.validate();
    }

    @Test
    void estimateGrowsWithThePointsAndCountsTheGrid() {
        TsneConfig c = cfg(Backend.AUTO);
        long small = TsneDeviceBudget.estimate(c, 1000, 50);
        long exactLarge = TsneDeviceBudget.estimate(c, 10_000, 50);
        long grid = TsneDeviceBudget.estimate(c, 10_001, 50);
        assertTrue(small > 1000L * 50 * 4 && small < exactLarge, small + " " + exactLarge);
        // above 10,000 points the grid (320 boxes x 4 nodes per axis in 2-D) is added: the state's charges and
        // potentials and the G2G workspace (4 parities side by side: 4 x 3 arrays of complex floats and 4 x 4 terms a
        // node, with its own charges, potentials and kernel table: 25 doubles and 12 complex floats a node; the float
        // roots and double shifts, 8 bytes of ping-pong buffer and 5 exponents)
        long g2g = G2GGpu.fftWorkspaceBytes(2, 1280, 4);
        assertEquals((8L * 25 + 8 * 12) * 1280 * 1280 + 8 + (8 + 16) * 1280 + 4 * 5, g2g);
        assertTrue(grid - exactLarge > g2g, grid + " " + exactLarge);
        // 3-D keeps one parity after the other: 2 x 4 arrays of complex floats, one set of terms (5 charges)
        assertEquals((8L * (5 + 5 + 1 + 5) + 8 * 2 * 4) * 160 * 160 * 160 + (8 + 16) * 160 + 4 * 5,
                G2GGpu.fftWorkspaceBytes(3, 160, 5));
    }

    @Test
    void overTheBudgetAutoRunsOnTheCpuTwinAndGpuFailsNamingTheBudget() {
        String old = System.getProperty(DeviceMemoryBudget.KEY);
        try {
            System.clearProperty(DeviceMemoryBudget.KEY);
            assertEquals(Backend.GPU, TsneDeviceBudget.backendFor(cfg(Backend.GPU), 1_000_000, 784));
            System.setProperty(DeviceMemoryBudget.KEY, "1m");
            assertEquals(Backend.AUTO, TsneDeviceBudget.backendFor(cfg(Backend.AUTO), 100, 4));
            assertEquals(Backend.CPU, TsneDeviceBudget.backendFor(cfg(Backend.AUTO), 100_000, 4));
            assertEquals(Backend.CPU, TsneDeviceBudget.backendFor(cfg(Backend.CPU), 100_000, 4));
            CudaException e = assertThrows(CudaException.class,
                    () -> TsneDeviceBudget.backendFor(cfg(Backend.GPU), 100_000, 4));
            long est = TsneDeviceBudget.estimate(cfg(Backend.GPU), 100_000, 4);
            assertTrue(e.getMessage().startsWith("backend=gpu: t-SNE of 100000 points"), e.getMessage());
            assertTrue(e.getMessage().contains("needs an estimated " + est + " bytes"), e.getMessage());
            assertTrue(e.getMessage().contains(DeviceMemoryBudget.KEY + "=1048576 bytes (1.0 MiB)"), e.getMessage());
        } finally {
            if (old == null) {
                System.clearProperty(DeviceMemoryBudget.KEY);
            } else {
                System.setProperty(DeviceMemoryBudget.KEY, old);
            }
        }
    }

    @Test
    void withoutABudgetAFitLargerThanTheDeviceIsRefusedBeforeItStarts() {
        TsneConfig gpu = cfg(Backend.GPU);
        long est = TsneDeviceBudget.estimate(gpu, 100_000, 4);
        TsneDeviceBudget.Device small = new TsneDeviceBudget.Device("Fake GPU", est - 1);
        TsneDeviceBudget.Device large = new TsneDeviceBudget.Device("Fake GPU", est);
        assertEquals(Backend.GPU, TsneDeviceBudget.backendFor(gpu, 100_000, 4, 0, large));
        assertEquals(Backend.AUTO, TsneDeviceBudget.backendFor(cfg(Backend.AUTO), 100_000, 4, 0, large));
        assertEquals(Backend.CPU, TsneDeviceBudget.backendFor(cfg(Backend.AUTO), 100_000, 4, 0, small));
        CudaException e = assertThrows(CudaException.class,
                () -> TsneDeviceBudget.backendFor(gpu, 100_000, 4, 0, small));
        assertTrue(e.getMessage().startsWith("backend=gpu: t-SNE of 100000 points")
                && e.getMessage().contains("more than the") && e.getMessage().contains("of Fake GPU")
                && e.getMessage().contains("pcaDimension"), e.getMessage());
        // no device in this JVM: nothing to check here (a cluster's executors check their own)
        assertEquals(Backend.GPU, TsneDeviceBudget.backendFor(gpu, 100_000, 4, 0, TsneDeviceBudget.NO_DEVICE));
    }
}
