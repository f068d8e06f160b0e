package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.PinnedHostBuffer;
import io.sparkgpu.cuda.PinnedStagingPool;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link ResidentBlockSink} driven as {@link FeatureIngest}'s packer drives it (full chunks while a next point
 * follows, then the block, then close), without Spark: the resident entry holds x then w bit for bit (random bit
 * patterns, NaN payloads included) for several chunks with a partial last one, a last chunk that is exactly full,
 * a single chunk, chunks larger than one pinned staging slot, and an empty block; chunks that find no staging
 * room are copied from the block at the end; when the entry cannot be had, or is being filled or already filled,
 * nothing changes; 8 threads sink concurrently into one device; and no device, staging or pinned byte is left
 * behind. (The Spark-level twin is {@link FeatureIngestGpuTest}.)
 */
@Tag("gpu")
class ResidentBlockSinkGpuTest {
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

    static FeatureBlock block(int n, int d, long seed) {
        if (n == 0) {
            return new FeatureBlock(new double[0], new double[0], 0, 0, 0);
        }
        return new FeatureBlock(randomDoubles(n * d, seed), randomDoubles(n, seed + 1), n, d, 0);
    }

    /**
     * Hands {@code b}'s chunks of {@code chunkPoints} points to the sink like the packer: a chunk when a further point
     * follows it (so the last chunk, full or not, only through the block). The chunk arrays are overwritten right
     * after each call: the sink must have read them by then. Returns the points handed over.
     */
    static int handChunks(ResidentBlockSink sink, FeatureBlock b, int chunkPoints) {
        int passed = 0;
        while (b.n - passed > chunkPoints) {
            double[] x = Arrays.copyOfRange(b.x, passed * b.d, (passed + chunkPoints) * b.d);
            double[] w = Arrays.copyOfRange(b.w, passed, passed + chunkPoints);
            sink.chunk(x, w, passed, chunkPoints, b.d);
            Arrays.fill(x, Double.NaN);
            Arrays.fill(w, Double.NaN);
            passed += chunkPoints;
        }
        return passed;
    }

    /** The whole protocol: chunks, finish, close; the outcome. */
    static ResidentBlockSink.Outcome sink(ResidentBlockSink sink, FeatureBlock b, int chunkPoints) {
        try (sink) {
            sink.finish(b, handChunks(sink, b, chunkPoints));
        }
        return sink.outcome();
    }

    /** The entry {@code key} of {@code cache} is filled and holds b.x then b.w, bit for bit. */
    static void assertResident(DeviceResidentCache cache, String key, FeatureBlock b, String what) {
        long bytes = 8L * b.n * (b.d + 1);
        DeviceResidentCache.Lease lease = cache.acquire(key, bytes);
        assertNotNull(lease, what + ": no entry of " + bytes + " bytes could be leased");
        try {
            assertTrue(lease.wasPresent(), what + ": the entry was not filled");
            double[] back = new double[b.n * (b.d + 1)];
            try (GpuStream s = new GpuStream(cache.device())) {
                lease.buffer().download(back, back.length, s);
                s.synchronize("download of " + key);
            }
            assertArrayEquals(bits(b.x, 0, b.n * b.d), bits(back, 0, b.n * b.d), what + ": x");
            assertArrayEquals(bits(b.w, 0, b.n), bits(back, b.n * b.d, b.n), what + ": w (after all of x)");
        } finally {
            lease.close();
        }
    }

    /** Device, staging and pinned memory before a test; {@link #assertNothingLeft} compares with them. */
    static final class Baseline {
        final CudaDevice dev;
        final long device;
        final long pinned;

        Baseline(CudaDevice dev) {
            this.dev = dev;
            PinnedStagingPool.releaseIdle();
            this.device = dev.allocatedBytes();
            this.pinned = PinnedHostBuffer.allocatedBytes();
            assertEquals(0, DeviceResidentCache.of(dev).stagedBytes(), "staging held before the test");
        }

        void assertNothingLeft() {
            assertEquals(0, DeviceResidentCache.of(dev).stagedBytes(), "staging left");
            assertEquals(0, PinnedStagingPool.lentBytes(), "pinned staging slots still lent");
            assertEquals(device, dev.allocatedBytes(), "device bytes leaked");
            PinnedStagingPool.releaseIdle();
            assertEquals(pinned, PinnedHostBuffer.allocatedBytes(), "pinned bytes leaked");
        }
    }

    @Test
    void chunksLandBitForBitInTheResidentLayout() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Baseline base = new Baseline(dev);
        DeviceResidentCache cache = DeviceResidentCache.of(dev);
        String run = "sink-test-" + UUID.randomUUID() + "/";
        long used0 = cache.usedBytes();
        // n, d, points per chunk
        int[][] cases = {
            {1000, 33, 7}, // many chunks, a partial last one
            {14, 33, 7}, // the last chunk exactly full: handed over only with the block
            {5, 33, 7}, // a single (partial) chunk: no chunk before the block
            {1, 3, 7}, // one point
            {97, 1, 10}, // d = 1
            {50, 32, 1}, // one point a chunk
            {0, 0, 7}, // an empty partition
            {200_000, 32, 65_536}, // FeatureIngest's default: x of a chunk fills a 16 MiB staging slot, w the other
            {150_000, 32, 70_000}, // x of a chunk larger than a staging slot: split over both
        };
        long expectUsed = 0;
        for (int i = 0; i < cases.length; i++) {
            int[] c = cases[i];
            FeatureBlock b = block(c[0], c[1], 100 + i);
            String key = run + i;
            String what = "n=" + c[0] + ", d=" + c[1] + ", " + c[2] + " points a chunk";
            ResidentBlockSink s = new ResidentBlockSink(dev, key);
            ResidentBlockSink.Outcome o = sink(s, b, c[2]);
            assertEquals(b.n == 0 ? ResidentBlockSink.Outcome.EMPTY : ResidentBlockSink.Outcome.RESIDENT, o, what);
            assertEquals(0, cache.stagedBytes(), what + ": staging left after close");
            assertEquals(s.seconds(), ResidentBlockSink.takeSeconds(key), 0.0, what + ": recorded seconds");
            assertEquals(0.0, ResidentBlockSink.takeSeconds(key), what + ": seconds are taken once");
            if (b.n > 0) {
                assertResident(cache, key, b, what);
                expectUsed += 8L * b.n * (b.d + 1);
            }
            assertEquals(used0 + expectUsed, cache.usedBytes(), what + ": resident bytes");
        }
        cache.evictPrefix(run);
        assertEquals(used0, cache.usedBytes());
        base.assertNothingLeft();
    }

    @Test
    void chunksWithoutStagingRoomAreCopiedFromTheBlockAtTheEnd() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Baseline base = new Baseline(dev);
        final int n = 100;
        final int d = 8;
        final int cp = 10;
        final long chunkBytes = 8L * cp * (d + 1);
        final long blockBytes = 8L * n * (d + 1);
        FeatureBlock b = block(n, d, 7);
        // room for two and a half chunks of staging while another entry of the block's size is held
        DeviceResidentCache cache = DeviceResidentCache.standalone(dev, blockBytes + 2 * chunkBytes + chunkBytes / 2);
        DeviceResidentCache.Lease other = cache.acquire("other", blockBytes);
        assertNotNull(other);
        ResidentBlockSink s = new ResidentBlockSink(cache, "block");
        try (s) {
            int passed = handChunks(s, b, cp);
            assertEquals(90, passed);
            assertEquals(2 * chunkBytes, cache.stagedBytes(), "two chunks staged, the other seven refused");
            other.close(); // never filled: dropped, which leaves room for the block
            assertEquals(0, cache.usedBytes());
            s.finish(b, passed);
        }
        assertEquals(ResidentBlockSink.Outcome.RESIDENT, s.outcome());
        assertEquals(0, cache.stagedBytes());
        assertResident(cache, "block", b, "two staged chunks, the rest from the block");
        ResidentBlockSink.takeSeconds("block");

        // no staging room at all: everything comes from the block
        DeviceResidentCache none = DeviceResidentCache.standalone(dev, blockBytes);
        DeviceResidentCache.Lease full = none.acquire("full", blockBytes);
        ResidentBlockSink t = new ResidentBlockSink(none, "block");
        try (t) {
            int passed = handChunks(t, b, cp);
            assertEquals(0, none.stagedBytes());
            full.close();
            t.finish(b, passed);
        }
        assertEquals(ResidentBlockSink.Outcome.RESIDENT, t.outcome());
        assertResident(none, "block", b, "nothing staged");
        ResidentBlockSink.takeSeconds("block");

        cache.evictPrefix("");
        none.evictPrefix("");
        base.assertNothingLeft();
    }

    @Test
    void anEntryThatCannotBeHadChangesNothing() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Baseline base = new Baseline(dev);
        FeatureBlock b = block(100, 8, 9);
        final long blockBytes = 8L * 100 * 9;
        final int cp = 10;

        // the budget holds the staging of every chunk but not the block: nothing resident, nothing left
        DeviceResidentCache small = DeviceResidentCache.standalone(dev, blockBytes - 8);
        ResidentBlockSink s = new ResidentBlockSink(small, "block");
        assertEquals(ResidentBlockSink.Outcome.NOT_RESIDENT, sink(s, b, cp));
        assertEquals(0, small.usedBytes());
        assertEquals(0, small.stagedBytes());
        ResidentBlockSink.takeSeconds("block");

        // another task is filling the entry: this sink leaves it alone
        DeviceResidentCache cache = DeviceResidentCache.standalone(dev, 4 * blockBytes);
        DeviceResidentCache.Lease filling = cache.acquire("block", blockBytes);
        assertNotNull(filling);
        assertEquals(ResidentBlockSink.Outcome.NOT_RESIDENT, sink(new ResidentBlockSink(cache, "block"), b, cp));
        assertEquals(blockBytes, cache.usedBytes());
        filling.close(); // never filled: dropped
        assertEquals(0, cache.usedBytes());

        // filled by an earlier run of the partition: kept as it is
        assertEquals(ResidentBlockSink.Outcome.RESIDENT, sink(new ResidentBlockSink(cache, "block"), b, cp));
        assertEquals(ResidentBlockSink.Outcome.ALREADY_RESIDENT, sink(new ResidentBlockSink(cache, "block"), b, cp));
        assertResident(cache, "block", b, "after a second run");
        assertEquals(0, cache.stagedBytes());
        ResidentBlockSink.takeSeconds("block");

        // packing failed after some chunks: close without finish releases everything
        ResidentBlockSink broken = new ResidentBlockSink(cache, "broken");
        try (broken) {
            handChunks(broken, b, cp);
            assertTrue(cache.stagedBytes() > 0);
        }
        assertEquals(ResidentBlockSink.Outcome.PENDING, broken.outcome());
        assertEquals(0, cache.stagedBytes());
        assertEquals(blockBytes, cache.usedBytes(), "only the filled block");
        assertThrows(IllegalStateException.class, () -> broken.finish(b, 90), "finish after close");
        ResidentBlockSink.takeSeconds("broken");

        // contract errors are errors, not fallbacks
        try (ResidentBlockSink odd = new ResidentBlockSink(cache, "odd")) {
            assertThrows(IllegalArgumentException.class, () -> odd.chunk(new double[16], new double[2], 1, 2, 8),
                    "a chunk that does not follow the previous ones");
            odd.chunk(new double[16], new double[2], 0, 2, 8);
            assertThrows(IllegalArgumentException.class, () -> odd.chunk(new double[18], new double[2], 2, 2, 9),
                    "another dimension");
            assertThrows(IllegalArgumentException.class, () -> odd.finish(b, 4), "finish with a wrong count");
        }
        ResidentBlockSink.takeSeconds("odd");

        small.evictPrefix("");
        cache.evictPrefix("");
        base.assertNothingLeft();
    }

    @Test
    void concurrentSinksOnOneDevice() throws Exception {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Baseline base = new Baseline(dev);
        DeviceResidentCache cache = DeviceResidentCache.of(dev);
        String run = "sink-test-" + UUID.randomUUID() + "/";
        int threads = 8;
        int blocksPerThread = 6;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<List<FeatureBlock>>> fs = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                final int tid = t;
                fs.add(pool.submit(() -> {
                    SplittableRandom r = new SplittableRandom(tid);
                    List<FeatureBlock> mine = new ArrayList<>();
                    for (int i = 0; i < blocksPerThread; i++) {
                        int d = 1 + r.nextInt(40);
                        int n = r.nextInt(i == 0 ? 1 : 20_000);
                        FeatureBlock b = block(n, n == 0 ? 0 : d, 1000L * tid + i);
                        int cp = 50 + r.nextInt(3000); // at most 400 chunks a block
                        ResidentBlockSink.Outcome o = sink(new ResidentBlockSink(dev, run + tid + "/" + i), b, cp);
                        assertEquals(n == 0 ? ResidentBlockSink.Outcome.EMPTY : ResidentBlockSink.Outcome.RESIDENT, o,
                                "thread " + tid + ", block " + i + ": n=" + n + ", d=" + d + ", " + cp + " points a chunk");
                        ResidentBlockSink.takeSeconds(run + tid + "/" + i);
                        mine.add(b);
                    }
                    return mine;
                }));
            }
            for (int t = 0; t < threads; t++) {
                List<FeatureBlock> mine = fs.get(t).get();
                for (int i = 0; i < mine.size(); i++) {
                    if (mine.get(i).n > 0) {
                        assertResident(cache, run + t + "/" + i, mine.get(i), "thread " + t + ", block " + i);
                    }
                }
            }
        } finally {
            pool.shutdown();
        }
        cache.evictPrefix(run);
        base.assertNothingLeft();
    }

    @Test
    void deviceToDeviceCopiesCheckTheirRanges() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        try (GpuStream s = new GpuStream(dev); DeviceBuffer a = DeviceBuffer.ofDoubles(dev, 8);
             DeviceBuffer b = DeviceBuffer.ofDoubles(dev, 4)) {
            double[] src = randomDoubles(8, 3);
            a.upload(src, s);
            b.zero(s);
            b.copyFrom(a, 8 * 5, 8, 16, s); // a[5, 7) to b[1, 3)
            double[] back = new double[4];
            b.download(back, 4, s);
            s.synchronize("device copy");
            assertArrayEquals(new long[] {0, Double.doubleToRawLongBits(src[5]), Double.doubleToRawLongBits(src[6]), 0},
                    bits(back, 0, 4));
            assertThrows(IllegalArgumentException.class, () -> b.copyFrom(a, 0, 8, 32, s));
            assertThrows(IllegalArgumentException.class, () -> b.copyFrom(a, 48, 0, 24, s));
            assertThrows(IllegalArgumentException.class, () -> b.copyFrom(a, -8, 0, 8, s));
        }
        assertNull(DeviceResidentCache.standalone(dev, 100).stage(101), "staging beyond the budget");
    }
}
