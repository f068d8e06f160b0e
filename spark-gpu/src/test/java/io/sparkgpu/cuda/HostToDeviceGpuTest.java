package io.sparkgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.GpuTestSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link HostToDevice#copy} through pinned, double-buffered staging: random doubles (NaN payloads, -0.0 and
 * subnormals included, so any conversion would show) round-trip bit for bit for sizes around the chunk and
 * offsets on both sides, bytes around the target stay untouched, and the staging pool gives back every pinned
 * byte after 8 threads copied concurrently.
 */
@Tag("gpu")
class HostToDeviceGpuTest {
    static final int CHUNK = HostToDevice.CHUNK_BYTES / 8;

    static double[] randomDoubles(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] a = new double[n];
        for (int i = 0; i < n; i++) {
            a[i] = Double.longBitsToDouble(r.nextLong()); // any bit pattern
        }
        return a;
    }

    static long[] bits(double[] a, int from, int count) {
        long[] b = new long[count];
        for (int i = 0; i < count; i++) {
            b[i] = Double.doubleToRawLongBits(a[from + i]);
        }
        return b;
    }

    /** Copies src[from, from + count) to a zeroed buffer at element offset dstOff and checks every byte of it. */
    static void roundTrip(CudaDevice dev, GpuStream s, int from, int count, int dstOff, int chunkBytes, long seed) {
        double[] src = randomDoubles(from + count + 5, seed);
        long elems = dstOff + count + 3L;
        try (DeviceBuffer dst = DeviceBuffer.ofDoubles(dev, elems)) {
            dst.zero(s);
            HostToDevice.copy(src, from, count, dst, 8L * dstOff, s, chunkBytes);
            java.util.Arrays.fill(src, Double.NaN); // the copy must not depend on src after returning
            double[] back = new double[(int) elems];
            dst.download(back, back.length, s);
            s.synchronize("round trip download");
            double[] expect = randomDoubles(from + count + 5, seed);
            String what = "from " + from + ", count " + count + ", dst offset " + dstOff + ", chunk " + chunkBytes;
            assertArrayEquals(bits(expect, from, count), bits(back, dstOff, count), what);
            assertArrayEquals(new long[dstOff], bits(back, 0, dstOff), what + ": bytes before the target");
            assertArrayEquals(new long[3], bits(back, dstOff + count, 3), what + ": bytes after the target");
        }
    }

    @Test
    void sizesAroundTheChunkRoundTripBitForBit() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        try (GpuStream s = new GpuStream(dev)) {
            int[] sizes = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + CHUNK / 2};
            long seed = 1;
            for (int count : sizes) {
                for (int[] off : new int[][] {{0, 0}, {3, 1}, {7, 513}}) {
                    roundTrip(dev, s, off[0], count, off[1], HostToDevice.CHUNK_BYTES, seed++);
                }
            }
            // small chunks: many slot reuses per call
            int small = 64;
            for (int count : new int[] {0, 1, small / 8 - 1, small / 8, small / 8 + 1, 7 * small / 16, 1000}) {
                roundTrip(dev, s, 5, count, 2, small, seed++);
            }
        }
        assertEquals(0, PinnedStagingPool.lentBytes());
    }

    @Test
    void badRangesAreRejectedBeforeAnyCopy() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        try (GpuStream s = new GpuStream(dev); DeviceBuffer dst = DeviceBuffer.ofDoubles(dev, 4)) {
            double[] src = new double[10];
            assertThrows(IndexOutOfBoundsException.class, () -> HostToDevice.copy(src, 8, 3, dst, 0, s));
            assertThrows(IllegalArgumentException.class, () -> HostToDevice.copy(src, 0, 5, dst, 0, s));
            assertThrows(IllegalArgumentException.class, () -> HostToDevice.copy(src, 0, 4, dst, 8, s));
            assertThrows(IllegalArgumentException.class, () -> HostToDevice.copy(src, 0, 1, dst, 0, s, 12));
        }
        assertEquals(0, PinnedStagingPool.lentBytes());
    }

    @Test
    void poolBytesReturnToTheBaselineAfterConcurrentCopies() throws Exception {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        PinnedStagingPool.releaseIdle();
        long pinnedBase = PinnedHostBuffer.allocatedBytes();
        long deviceBase = dev.allocatedBytes();
        assertEquals(0, PinnedStagingPool.pooledBytes());
        int threads = 8;
        int copiesPerThread = 100;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int tid = t;
                fs.add(pool.submit(() -> {
                    SplittableRandom r = new SplittableRandom(100 + tid);
                    try (GpuStream s = new GpuStream(dev)) {
                        for (int i = 0; i < copiesPerThread; i++) {
                            boolean big = i % 10 == 0;
                            int chunkBytes = big ? HostToDevice.CHUNK_BYTES : 8 * (1 + r.nextInt(4096));
                            int count = big ? r.nextInt(2 * CHUNK + 7) : r.nextInt(5 * chunkBytes / 8 + 3);
                            roundTrip(dev, s, r.nextInt(9), count, r.nextInt(9), chunkBytes, 1000L * tid + i);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        assertEquals(0, PinnedStagingPool.lentBytes(), "slots still lent");
        assertTrue(PinnedStagingPool.idleSlots(dev) <= PinnedStagingPool.MAX_IDLE_PER_DEVICE);
        assertTrue(PinnedStagingPool.pooledBytes() <= PinnedStagingPool.MAX_IDLE_PER_DEVICE * PinnedStagingPool.SLOT_BYTES,
                "pool holds " + PinnedStagingPool.pooledBytes() + " bytes");
        assertEquals(PinnedStagingPool.pooledBytes() + pinnedBase, PinnedHostBuffer.allocatedBytes());
        PinnedStagingPool.releaseIdle();
        assertEquals(0, PinnedStagingPool.pooledBytes());
        assertEquals(pinnedBase, PinnedHostBuffer.allocatedBytes(), "pinned bytes leaked");
        assertEquals(deviceBase, dev.allocatedBytes(), "device bytes leaked");
    }
}
