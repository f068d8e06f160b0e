package io.sparkgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The budget's rule, the pure chunk planner and the over-budget message (no GPU needed). */
class DeviceMemoryBudgetTest {

    @Test
    void sizesParseWithUnitsAndBadOnesNameTheKey() {
        assertEquals(DeviceMemoryBudget.UNLIMITED, DeviceMemoryBudget.checkMemoryBudget(null));
        assertEquals(DeviceMemoryBudget.UNLIMITED, DeviceMemoryBudget.checkMemoryBudget(" "));
        assertEquals(1, DeviceMemoryBudget.checkMemoryBudget("1"));
        assertEquals(100, DeviceMemoryBudget.checkMemoryBudget("100b"));
        assertEquals(64L << 10, DeviceMemoryBudget.checkMemoryBudget("64k"));
        assertEquals(512L << 20, DeviceMemoryBudget.checkMemoryBudget(" 512MB "));
        assertEquals(4L << 30, DeviceMemoryBudget.checkMemoryBudget("4G"));
        assertEquals(2L << 40, DeviceMemoryBudget.checkMemoryBudget("2t"));
        for (String bad : new String[] {"0", "0k", "-1", "1.5g", "12x", "g", "k1", "1e9", "9999999t",
            "99999999999999999999"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DeviceMemoryBudget.checkMemoryBudget(bad), bad);
            assertTrue(e.getMessage().startsWith(DeviceMemoryBudget.KEY + " must be a size in bytes > 0"), e.getMessage());
            assertTrue(e.getMessage().endsWith("got '" + bad + "'"), e.getMessage());
        }
    }

    @Test
    void everySurfaceChecksTheBudgetWhenItResolvesItsBackend() {
        String old = System.getProperty(DeviceMemoryBudget.KEY);
        try {
            System.setProperty(DeviceMemoryBudget.KEY, "lots");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SparkGpuConf.backend(Backend.CPU));
            assertTrue(e.getMessage().contains(DeviceMemoryBudget.KEY), e.getMessage());
            System.setProperty(DeviceMemoryBudget.KEY, "3m");
            assertEquals(Backend.CPU, SparkGpuConf.backend(Backend.CPU));
            assertEquals(3L << 20, DeviceMemoryBudget.bytes());
            assertTrue(DeviceMemoryBudget.limited());
        } finally {
            if (old == null) {
                System.clearProperty(DeviceMemoryBudget.KEY);
            } else {
                System.setProperty(DeviceMemoryBudget.KEY, old);
            }
        }
    }

    @Test
    void planCoversTheItemsInFewestChunksWithinTheBudget() {
        SplittableRandom r = new SplittableRandom(18);
        for (int t = 0; t < 500; t++) {
            long items = r.nextInt(5) == 0 ? r.nextInt(3) : 1 + r.nextLong(1L << (1 + r.nextInt(23)));
            long per = 1 + r.nextInt(100);
            long fixed = r.nextInt(1000);
            long budget = fixed + per * (1 + r.nextLong(1L << (1 + r.nextInt(20))));
            String what = items + " items, " + per + "/item, fixed " + fixed + ", budget " + budget;
            long maxItems = (budget - fixed) / per;
            if ((items + maxItems - 1) / maxItems > DeviceMemoryBudget.MAX_CHUNKS) {
                assertThrows(CudaException.class, () -> DeviceMemoryBudget.chunks("t", items, fixed, per, budget), what);
                continue;
            }
            long[] b = DeviceMemoryBudget.chunks("t", items, fixed, per, budget);
            assertEquals(0, b[0], what);
            assertEquals(items, b[b.length - 1], what);
            long maxPer = maxItems;
            long chunks = b.length - 1;
            if (items > 0) {
                assertEquals((items + Math.min(items, maxPer) - 1) / Math.min(items, maxPer), chunks, what);
            }
            for (int i = 0; i < chunks; i++) {
                long size = b[i + 1] - b[i];
                assertTrue(size >= 1 && fixed + size * per <= budget, what);
                assertTrue(i == chunks - 1 || size == b[1] - b[0], what + ": chunks of one size but the last");
            }
        }
        assertArrayEquals(new long[] {0, 10}, DeviceMemoryBudget.chunks("t", 10, 5, 8, DeviceMemoryBudget.UNLIMITED));
        long many = (long) DeviceMemoryBudget.MAX_CHUNKS * 3;
        assertEquals(DeviceMemoryBudget.MAX_CHUNKS + 1, DeviceMemoryBudget.chunks("t", many, 0, 1, 3).length);
        CudaException tooMany = assertThrows(CudaException.class, () -> DeviceMemoryBudget.chunks("t", many + 1, 0, 1, 3));
        assertTrue(tooMany.getMessage().contains("chunks at most"), tooMany.getMessage());
        assertArrayEquals(new long[] {0, 3, 6, 9, 10}, DeviceMemoryBudget.chunks("t", 10, 4, 8, 4 + 8 * 3 + 7));
    }

    @Test
    void overTheBudgetIsADeviceFailureNamingKeyEstimateAndBudget() {
        CudaException e = assertThrows(CudaException.class, () -> DeviceMemoryBudget.chunks("x", 10, 100, 8, 107));
        assertTrue(e.getMessage().contains("x (one chunk of 1 item) needs an estimated 108 bytes"), e.getMessage());
        assertTrue(e.getMessage().contains(DeviceMemoryBudget.KEY + "=107 bytes"), e.getMessage());
        assertTrue(BackendChooser.isDeviceFailure(e), "so that auto falls back to the CPU twin");
        CudaException big = assertThrows(CudaException.class,
                () -> DeviceMemoryBudget.check("t-SNE", DeviceMemoryBudget.times(Long.MAX_VALUE / 2, 3), 1L << 30));
        assertTrue(big.getMessage().contains("(1.0 GiB)"), big.getMessage());
        DeviceMemoryBudget.check("fits", 1L << 30, 1L << 30);
    }
}
