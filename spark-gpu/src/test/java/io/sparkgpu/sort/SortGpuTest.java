package io.sparkgpu.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The sort kernels against the CPU twin: every distribution and key range boundary of SortCpuTest, both keys-only
 * output kernels and the keys-only radix passes, both histogram kernels (shared up to 2^15 bins, global above), one-
 * and multi-pass stable orders with int and long indices (classic and onesweep kernels), chunked transfers, host key
 * windows, 10^7-key inputs, and the same input errors. The outputs are integers determined by the input, so they
 * must be equal, element for element.
 */
@Tag("gpu")
class SortGpuTest {

    private static void assertSameAsTwin(CudaDevice dev, int[] keys, int m, String what) {
        int[] h = SortCpu.histogram(keys, m);
        assertArrayEquals(h, SortGpu.histogram(dev, keys, m), what + ": histogram");
        int[] sorted = SortCpu.sortKeys(keys, m);
        String saved = SortGpu.keysKernel;
        try {
            for (String k : new String[] {"runs", "descent", "radix"}) {
                SortGpu.keysKernel = k;
                assertArrayEquals(sorted, SortGpu.sortKeys(dev, keys, m), what + ": sorted keys (" + k + ")");
            }
        } finally {
            SortGpu.keysKernel = saved;
        }
        int[] order = SortCpu.order(keys, m);
        assertArrayEquals(order, SortGpu.order(dev, keys, m), what + ": stable order");
        assertArrayEquals(SortCpu.orderLong(keys, m, 3L << 32), SortGpu.orderLong(dev, keys, m, 3L << 32),
                what + ": stable order, long");
    }

    @Test
    void everyCaseAndKeyRangeBoundaryEqualsTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        long seed = 1;
        for (int m : SortTestData.boundaryRanges()) {
            int[] sizes = m <= (1 << 17) ? new int[] {0, 1, 2, 3, 4, 5, 31, 1000, 4096, 4097, 70_001}
                    : new int[] {0, 1, 5, 4097, 70_001};
            for (SortTestData.Case c : SortTestData.CASES) {
                if (c.name().equals("zipf-1.2") && m > (1 << 20)) {
                    continue;
                }
                for (int n : sizes) {
                    assertSameAsTwin(dev, c.gen().keys(n, m, seed++), m, c.name() + " n=" + n + " m=" + m);
                }
            }
        }
    }

    @Test
    void tenMillionKeysEqualTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        int n = 10_000_000;
        long seed = 100;
        for (int m : new int[] {1 << 8, 1 << 16, 1 << 24}) {
            for (String dist : List.of("uniform", "zipf-1.2", "one-hot-50%", "sorted")) {
                SortTestData.Case c = SortTestData.CASES.stream().filter(x -> x.name().equals(dist)).findFirst()
                        .orElseThrow();
                int[] keys = c.gen().keys(n, m, seed++);
                assertSameAsTwin(dev, keys, m, dist + " n=" + n + " m=" + m);
            }
        }
    }

    @Test
    void bothStableKernelsEqualTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        String saved = SortGpu.stableKernel;
        try {
            for (String kernel : new String[] {"classic", "onesweep"}) {
                SortGpu.stableKernel = kernel;
                long seed = 500;
                for (int m : new int[] {257, 1 << 12, (1 << 16) + 1, 1 << 24}) {
                    for (String dist : List.of("uniform", "zipf-1.2", "one-hot-50%", "reversed")) {
                        SortTestData.Case c = SortTestData.CASES.stream().filter(x -> x.name().equals(dist))
                                .findFirst().orElseThrow();
                        for (int n : new int[] {4097, 1_000_003, 6_000_001}) {
                            int[] keys = c.gen().keys(n, m, seed++);
                            String what = kernel + " " + dist + " n=" + n + " m=" + m;
                            assertArrayEquals(SortCpu.order(keys, m), SortGpu.order(dev, keys, m), what);
                            if (n < 2_000_000) {
                                assertArrayEquals(SortCpu.orderLong(keys, m, 9), SortGpu.orderLong(dev, keys, m, 9),
                                        what + ", long");
                            }
                        }
                    }
                }
                for (int bits : new int[] {32, 41, 64}) {
                    long[] k = SortWideCpuTest.keys(3_000_017, bits, bits == 41 ? 5 : 1 << 30, 70 + bits);
                    assertArrayEquals(SortCpu.orderWide(k, bits), SortGpu.orderWide(dev, k, bits),
                            kernel + " wide bits=" + bits);
                }
            }
        } finally {
            SortGpu.stableKernel = saved;
        }
    }

    @Test
    void chunkedTransfersAndChunkedOutputEqualTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        int saved = SortGpu.transferChunk;
        try {
            for (int chunk : new int[] {4096, 10_001, 65_536}) {
                SortGpu.transferChunk = chunk;
                long seed = 300;
                for (int m : new int[] {1, 7, 256, 1 << 15, (1 << 15) + 1, 1 << 20}) {
                    for (SortTestData.Case c : SortTestData.CASES) {
                        int[] keys = c.gen().keys(250_003, m, seed++);
                        assertSameAsTwin(dev, keys, m, c.name() + " m=" + m + " chunk " + chunk);
                    }
                }
            }
        } finally {
            SortGpu.transferChunk = saved;
        }
    }

    @Test
    void keyWindowsForInputsLargerThanTheDeviceEqualTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        long saved = SortGpu.residentLimit;
        try {
            SortGpu.residentLimit = 50_000;
            long seed = 400;
            for (int m : new int[] {2, 300, (1 << 16) + 3, 1 << 20}) {
                for (SortTestData.Case c : SortTestData.CASES) {
                    int[] keys = c.gen().keys(200_001, m, seed++);
                    String what = c.name() + " m=" + m + " in windows of <= 50000";
                    assertArrayEquals(SortCpu.order(keys, m), SortGpu.order(dev, keys, m), what);
                    assertArrayEquals(SortCpu.orderLong(keys, m, 17), SortGpu.orderLong(dev, keys, m, 17), what + ", long");
                }
            }
        } finally {
            SortGpu.residentLimit = saved;
        }
    }

    private static void assertSameError(Executable cpu, Executable gpu, String what) {
        IllegalArgumentException a = assertThrows(IllegalArgumentException.class, cpu, what + " (cpu)");
        IllegalArgumentException b = assertThrows(IllegalArgumentException.class, gpu, what + " (gpu)");
        assertEquals(a.getMessage(), b.getMessage(), what);
    }

    @Test
    void badKeysGiveTheTwinsErrorOnTheGpu() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        int saved = SortGpu.transferChunk;
        try {
            SortGpu.transferChunk = 40_000; // bad keys in later chunks, and in the n % 4 tail
            for (int m : new int[] {1, 256, 1 << 16, 1 << 24}) {
                for (int[] bad : new int[][] {{0, -1}, {99_999, m}, {99_998, -5, 99_999, m}, {53_123, m + 1000,
                        53_124, -1}, {45_000, Integer.MIN_VALUE}, {71_777, Integer.MAX_VALUE}}) {
                    int[] keys = SortTestData.uniform(100_000, m, bad[0]);
                    for (int j = 0; j < bad.length; j += 2) {
                        keys[bad[j]] = bad[j + 1];
                    }
                    String what = "m=" + m + " bad keys " + java.util.Arrays.toString(bad);
                    assertSameError(() -> SortCpu.histogram(keys, m), () -> SortGpu.histogram(dev, keys, m), what);
                    assertSameError(() -> SortCpu.sortKeys(keys, m), () -> SortGpu.sortKeys(dev, keys, m), what);
                    assertSameError(() -> SortCpu.order(keys, m), () -> SortGpu.order(dev, keys, m), what);
                    assertSameError(() -> SortCpu.orderLong(keys, m, 0), () -> SortGpu.orderLong(dev, keys, m, 0), what);
                    assertSameError(() -> SortCpu.order(keys, m), () -> SortStep.order(Backend.GPU, keys, m), what);
                }
            }
        } finally {
            SortGpu.transferChunk = saved;
        }
        assertSameError(() -> SortCpu.sortKeys(new int[] {0}, 0), () -> SortGpu.sortKeys(dev, new int[] {0}, 0), "m = 0");
        assertSameError(() -> SortCpu.order(new int[] {0}, (1 << 24) + 1),
                () -> SortGpu.order(dev, new int[] {0}, (1 << 24) + 1), "m = 2^24 + 1");
    }

    @Test
    void backendGpuRunsOnTheGpuAndLeavesNoDeviceMemory() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        long before = dev.allocatedBytes();
        int[] keys = SortTestData.zipf(1_000_000, 1 << 12, 1.2, 5);
        var sorted = SortStep.sortKeys(Backend.GPU, keys, 1 << 12);
        assertArrayEquals(SortCpu.sortKeys(keys, 1 << 12), sorted.value);
        assertEquals("gpu", sorted.backend());
        var order = SortStep.order(Backend.AUTO, keys, 1 << 12);
        assertArrayEquals(SortCpu.order(keys, 1 << 12), order.value);
        assertEquals("gpu", order.backend());
        assertArrayEquals(SortCpu.histogram(keys, 1 << 12), SortStep.histogram(Backend.GPU, keys, 1 << 12).value);
        assertArrayEquals(SortCpu.orderLong(keys, 1 << 12, 9), SortStep.orderLong(Backend.GPU, keys, 1 << 12, 9).value);
        assertEquals(before, dev.allocatedBytes(), "device buffers released");
    }

    @Test
    void kernelTimingsRunEveryOperation() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        int[] keys = SortTestData.uniform(2_000_000, 1 << 16, 6);
        for (SortGpu.Op op : SortGpu.Op.values()) {
            double[] ms = SortGpu.kernelMillis(dev, keys, 1 << 16, op, null, 3);
            for (double t : ms) {
                assertTrue(t > 0 && t < 10_000, op + ": " + t + " ms");
            }
        }
        double[] d = SortGpu.kernelMillis(dev, keys, 1 << 16, SortGpu.Op.KEYS, "sort_keys_descent", 2);
        assertTrue(d[1] > 0);
        // timing leaves the keys and a later sort intact
        assertArrayEquals(SortCpu.order(keys, 1 << 16), SortGpu.order(dev, keys, 1 << 16));
    }
}
