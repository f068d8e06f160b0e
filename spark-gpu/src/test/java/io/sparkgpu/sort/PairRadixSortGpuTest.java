package io.sparkgpu.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.testutil.GpuTestSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The device-resident pair radix sort (sort_p64_count, sort_rowscan, sort_p64_scatter) against its CPU twin: keys
 * and indices equal element for element, every pass and only the varying ones, around the tile size (4096) and
 * at 10^6 + 3 pairs.
 */
@Tag("gpu")
class PairRadixSortGpuTest {

    private static void sameAsTwin(CudaDevice dev, long[] keys, int[] shifts) {
        int n = keys.length;
        int[] idx = new int[n];
        for (int i = 0; i < n; i++) {
            idx[i] = i;
        }
        long[] wantK = keys.clone();
        int[] wantI = idx.clone();
        PairRadixSort.sort(wantK, wantI, n);
        long[] gotK = new long[n];
        int[] gotI = new int[n];
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer k0 = DeviceBuffer.allocate(dev, 8L * Math.max(1, n));
             DeviceBuffer k1 = DeviceBuffer.allocate(dev, 8L * Math.max(1, n));
             DeviceBuffer i0 = DeviceBuffer.allocate(dev, 4L * Math.max(1, n));
             DeviceBuffer i1 = DeviceBuffer.allocate(dev, 4L * Math.max(1, n));
             DeviceBuffer counts = DeviceBuffer.allocate(dev, PairRadixSort.countsBytes(n));
             DeviceBuffer totals = DeviceBuffer.allocate(dev, PairRadixSort.rowTotalsBytes())) {
            if (n > 0) {
                k0.upload(keys, s);
                i0.upload(idx, s);
            }
            int cur = PairRadixSort.sortResident(s, new DeviceBuffer[] {k0, k1}, new DeviceBuffer[] {i0, i1}, n,
                    shifts, counts, totals);
            if (n > 0) {
                (cur == 0 ? k0 : k1).download(gotK, s);
                (cur == 0 ? i0 : i1).download(gotI, n, s);
            }
            s.synchronize("pair radix sort test");
        }
        assertArrayEquals(wantK, gotK, "keys, n=" + n);
        assertArrayEquals(wantI, gotI, "indices, n=" + n);
    }

    private static int[] passesOf(long[] k) {
        int[] digits = new int[PairRadixSort.PASSES * PairRadixSort.DIGITS];
        for (long v : k) {
            for (int p = 0; p < PairRadixSort.PASSES; p++) {
                digits[PairRadixSort.DIGITS * p + (int) ((v >>> (8 * p)) & 0xff)]++;
            }
        }
        return PairRadixSort.passes(digits, k.length);
    }

    @Test
    void residentSortEqualsTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        int[] all = {0, 8, 16, 24, 32, 40, 48, 56};
        long seed = 5;
        for (int n : new int[] {0, 1, 2, 4095, 4096, 4097, 70_001, 1_000_003}) {
            for (int bits : new int[] {13, 64}) {
                for (boolean ties : new boolean[] {false, true}) {
                    long[] k = PairRadixSortTest.keys(n, bits, ties, seed++);
                    sameAsTwin(dev, k, passesOf(k));
                    sameAsTwin(dev, k, all); // the skipped passes change nothing
                }
            }
        }
    }
}
