package io.sparkgpu.spark;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.HostToDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link FeatureIngest.ChunkSink} that makes a partition's block resident on a GPU while the partition is
 * packed: the entry {@code key} of the device's {@link DeviceResidentCache}, of {@code 8 * n * (d + 1)} bytes
 * holding x ({@code n * d} doubles, row-major) followed by w ({@code n} doubles), the layout k-means' passes
 * read.
 *
 * <p>How: each full chunk, when the packer hands it over, is put into a pinned staging slot
 * ({@link HostToDevice.Stager}) and copied asynchronously on this sink's own stream into device memory held for
 * it ({@link DeviceResidentCache#stage}: counted against the resident budget, nothing evicted for it); the packing
 * thread goes on with the next chunk at once and waits only to refill a slot whose copy is still running. Since n
 * is known only at the end, {@link #finish} then acquires the entry with its exact size, places each staged chunk
 * with two device-to-device copies (its x at its rows, its w after all of x), copies the rest of the block (the
 * last, partial chunk, and any chunk that found no staging room) from the host block through the same staging,
 * synchronises the stream, and marks the entry filled. The staging memory is freed at {@link #close}.
 *
 * <p>Best effort, never a different answer: the host block is produced exactly as without a sink. When the entry
 * cannot be had (resident budget, device memory, another task filling the same key) nothing is made resident;
 * when a CUDA call fails everything held is released and nothing is made resident (logged once per reason).
 * The caller then uploads or streams the host block later as it would without a sink. No device or pinned
 * memory outlives {@link #close}, which never throws for a GPU problem.
 *
 * <p>Used by one thread (the packing task's); many sinks may run on one device at once (each has its own stream
 * and staging slots, the cache is thread-safe).
 */
public final class ResidentBlockSink implements FeatureIngest.ChunkSink {
    private static final Logger LOG = LoggerFactory.getLogger(ResidentBlockSink.class);
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();
    /** Packing-thread seconds of closed sinks by key, until taken ({@link #takeSeconds}). */
    private static final ConcurrentHashMap<String, Double> SECONDS = new ConcurrentHashMap<>();

    /** What a sink did with its block. */
    public enum Outcome {
        /** Not finished yet. */
        PENDING,
        /** The block is resident: this sink filled the entry. */
        RESIDENT,
        /** The entry was already resident (filled by an earlier run of the partition): nothing copied. */
        ALREADY_RESIDENT,
        /** An empty partition: nothing to keep. */
        EMPTY,
        /** The entry could not be had, or a CUDA call failed: the block stays on the host only. */
        NOT_RESIDENT
    }

    /** A staged chunk: points [first, first + points), x then w in {@code mem}. */
    private static final class Piece {
        final DeviceResidentCache.Staging mem;
        final int first;
        final int points;

        Piece(DeviceResidentCache.Staging mem, int first, int points) {
            this.mem = mem;
            this.first = first;
            this.points = points;
        }
    }

    private final CudaDevice device;
    private final DeviceResidentCache cache;
    private final String key;
    private final List<Piece> pieces = new ArrayList<>();
    private GpuStream stream;
    private HostToDevice.Stager stager;
    private int d = -1;
    private int passed; // points handed over as chunks
    private int stagedPoints; // points [0, stagedPoints) are in pieces
    private boolean staging = true; // whether further chunks are staged
    private boolean failed;
    private boolean closed;
    private long nanos;
    private Outcome outcome = Outcome.PENDING;

    /** A sink for the entry {@code key} of {@code device}'s shared resident cache ({@link DeviceResidentCache#of}). */
    public ResidentBlockSink(CudaDevice device, String key) {
        this(DeviceResidentCache.of(device), key);
    }

    /** A sink for the entry {@code key} of {@code cache} (and for its staging). */
    public ResidentBlockSink(DeviceResidentCache cache, String key) {
        if (key == null) {
            throw new IllegalArgumentException("a resident block needs a key");
        }
        this.device = cache.device();
        this.cache = cache;
        this.key = key;
    }

    @Override
    public void chunk(double[] x, double[] w, int first, int points, int d) {
        ensureOpen();
        if (first != passed || points <= 0 || d <= 0 || (this.d >= 0 && d != this.d)
                || (long) points * d > x.length || points > w.length) {
            throw new IllegalArgumentException("chunk of points [" + first + ", " + ((long) first + points) + ") of size "
                    + d + " (arrays of " + x.length + " and " + w.length + ") after " + passed + " points of size "
                    + this.d + " for " + key);
        }
        this.d = d;
        passed = first + points;
        if (failed || !staging) {
            return;
        }
        long t0 = System.nanoTime();
        try {
            DeviceResidentCache.Staging mem = cache.stage(8L * points * (d + 1));
            if (mem == null) {
                staging = false; // no room in the budget now: the rest goes up from the host block at finish
                LOG.debug("spark-gpu: no staging room for {} after {} points; the rest is copied at the end", key, first);
                return;
            }
            pieces.add(new Piece(mem, first, points));
            ensureStream();
            stager.copy(x, 0, points * d, mem.buffer(), 0, stream);
            stager.copy(w, 0, points, mem.buffer(), 8L * points * d, stream);
            stagedPoints = first + points;
        } catch (CudaException | jcuda.CudaException | LinkageError e) {
            fail("copying a chunk", e);
        } finally {
            nanos += System.nanoTime() - t0;
        }
    }

    @Override
    public void finish(FeatureBlock block, int passed) {
        ensureOpen();
        if (outcome != Outcome.PENDING) {
            throw new IllegalStateException("block " + key + " already finished");
        }
        if (passed != this.passed || (block.n > 0 && this.d >= 0 && block.d != this.d) || passed > block.n) {
            throw new IllegalArgumentException("finished block of " + block.n + " points of size " + block.d + " with "
                    + passed + " handed over, but this sink of " + key + " got " + this.passed + " points of size "
                    + this.d);
        }
        if (block.n == 0) {
            outcome = Outcome.EMPTY;
            return;
        }
        if (failed) {
            outcome = Outcome.NOT_RESIDENT;
            return;
        }
        long t0 = System.nanoTime();
        DeviceResidentCache.Lease lease = null;
        try {
            final int n = block.n;
            final int dim = block.d;
            lease = cache.acquire(key, 8L * (dim + 1) * n);
            if (lease == null) {
                outcome = Outcome.NOT_RESIDENT;
                LOG.debug("spark-gpu: {} ({} bytes) not made resident while packing: no room in the resident cache, or "
                        + "another task is filling it", key, 8L * (dim + 1) * n);
                return;
            }
            if (lease.wasPresent()) {
                outcome = Outcome.ALREADY_RESIDENT;
                return;
            }
            ensureStream();
            DeviceBuffer dst = lease.buffer();
            long xBytes = 8L * n * dim;
            for (Piece p : pieces) {
                long px = 8L * p.points * dim;
                dst.copyFrom(p.mem.buffer(), 0, 8L * p.first * dim, px, stream);
                dst.copyFrom(p.mem.buffer(), px, xBytes + 8L * p.first, 8L * p.points, stream);
            }
            int from = stagedPoints;
            stager.copy(block.x, from * dim, (n - from) * dim, dst, 8L * from * dim, stream);
            stager.copy(block.w, from, n - from, dst, xBytes + 8L * from, stream);
            stream.synchronize("upload of " + key + " while packing");
            lease.markFilled();
            outcome = Outcome.RESIDENT;
        } catch (CudaException | jcuda.CudaException | LinkageError e) {
            outcome = Outcome.NOT_RESIDENT;
            fail("assembling the block", e); // waits for the stream first: no copy writes the entry once it is dropped
        } finally {
            if (lease != null) {
                try {
                    lease.close(); // an unfilled entry is dropped and freed
                } catch (CudaException | jcuda.CudaException | LinkageError e) {
                    warn("releasing the resident entry", e);
                }
            }
            nanos += System.nanoTime() - t0;
        }
    }

    /** Waits for this sink's copies, frees its staging memory, gives its pinned slots back; records its seconds. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        long t0 = System.nanoTime();
        try {
            release();
        } finally {
            nanos += System.nanoTime() - t0;
            SECONDS.merge(key, nanos / 1e9, Double::sum);
        }
    }

    /** What this sink did (PENDING until {@link #finish}). */
    public Outcome outcome() {
        return outcome;
    }

    /**
     * Seconds the packing thread spent in this sink so far: staging chunks (copies into pinned memory, waits for a
     * slot, enqueueing), the final assembly and its synchronisation, and the clean-up. The copies themselves run
     * while the thread packs and are not counted.
     */
    public double seconds() {
        return nanos / 1e9;
    }

    /**
     * The {@link #seconds} of the closed sinks of {@code key} in this JVM (summed when a partition was packed more
     * than once), removed from the record; 0 when none closed.
     */
    public static double takeSeconds(String key) {
        Double s = SECONDS.remove(key);
        return s == null ? 0 : s;
    }

    /** Drops the recorded seconds of every key starting with {@code prefix} (e.g. one fit's). */
    public static void forgetSeconds(String prefix) {
        SECONDS.keySet().removeIf(k -> k.startsWith(prefix));
    }

    // ---------------------------------------------------------------- internals

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("sink of " + key + " already closed");
        }
    }

    private void ensureStream() {
        if (stream == null) {
            stream = new GpuStream(device);
        }
        if (stager == null) {
            stager = HostToDevice.stager(device);
        }
    }

    /** A CUDA failure: nothing becomes resident; everything held is released now. */
    private void fail(String what, Throwable e) {
        failed = true;
        staging = false;
        warn(what, e);
        release();
    }

    /** Waits for the stream (its copies read the staging and write the entry), then frees all; never throws for CUDA. */
    private void release() {
        if (stream != null) {
            try {
                stream.synchronize("upload of " + key + " while packing");
            } catch (CudaException | jcuda.CudaException | LinkageError e) {
                failed = true;
                warn("waiting for the copies", e);
            }
        }
        for (Piece p : pieces) {
            try {
                p.mem.close();
            } catch (CudaException | jcuda.CudaException | LinkageError e) {
                warn("freeing staging memory", e);
            }
        }
        pieces.clear();
        if (stager != null) {
            try {
                stager.close();
            } catch (CudaException | jcuda.CudaException | LinkageError e) {
                warn("giving back pinned staging", e);
            }
            stager = null;
        }
        if (stream != null) {
            try {
                stream.close();
            } catch (CudaException | jcuda.CudaException | LinkageError e) {
                warn("destroying the stream", e);
            }
            stream = null;
        }
    }

    private void warn(String what, Throwable e) {
        String reason = what + ": " + e.getMessage();
        if (WARNED.add(reason)) {
            LOG.warn("spark-gpu: copying a partition to {} while packing failed ({}); the block stays on the host and "
                    + "is uploaded or streamed later as without the overlap", device, reason);
        }
    }
}
