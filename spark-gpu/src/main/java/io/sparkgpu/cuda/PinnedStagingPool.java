package io.sparkgpu.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUstream;

/**
 * Per-device pool of pinned staging slots of {@link #SLOT_BYTES} each, for {@link HostToDevice}: a caller borrows
 * {@link #SLOTS_PER_LEASE} slots (double buffering), so concurrent callers never share one. Slots are allocated
 * lazily, reused, and at most {@link #MAX_IDLE_PER_DEVICE} idle slots are kept per device (more are freed on
 * return); {@link #releaseIdle()} frees the idle ones, and a shutdown hook does so at JVM exit. Each slot carries a
 * CUevent recorded after the last copy that reads it; whoever fills a slot first waits for that event, so a
 * slot may be returned while its last copy is still running. Thread-safe.
 */
public final class PinnedStagingPool {
    public static final long SLOT_BYTES = 16L << 20;
    public static final int SLOTS_PER_LEASE = 2;
    public static final int MAX_IDLE_PER_DEVICE = 16;

    private static final Map<Integer, ArrayDeque<Slot>> IDLE = new HashMap<>();
    private static final AtomicLong POOL_BYTES = new AtomicLong(); // pinned bytes of all slots, idle or lent
    private static final AtomicLong LENT_BYTES = new AtomicLong();
    private static boolean hookAdded;

    private PinnedStagingPool() {
    }

    /** One staging slot: pinned memory and the event that says when the copy last reading it is done. */
    public static final class Slot {
        final PinnedHostBuffer buffer;
        final CUevent event;
        private boolean pending;

        private Slot(PinnedHostBuffer buffer, CUevent event) {
            this.buffer = buffer;
            this.event = event;
        }

        public PinnedHostBuffer buffer() {
            return buffer;
        }

        /** Blocks until the last copy recorded on this slot has finished (so it may be refilled). */
        public void awaitIdle() {
            if (pending) {
                buffer.device().bind();
                try {
                    cuEventSynchronize(event);
                } catch (RuntimeException e) {
                    throw new CudaException("host-to-device copy from pinned staging failed on " + buffer.device() + ": "
                            + CudaRuntime.describe(e), e);
                }
                pending = false;
            }
        }

        /** Marks the copies enqueued so far on {@code stream} as the ones reading this slot. */
        public void recordUse(CUstream stream) {
            cuEventRecord(event, stream);
            pending = true;
        }

        private void free() {
            buffer.device().bind();
            try {
                awaitIdle();
            } finally {
                try {
                    cuEventDestroy(event);
                } finally {
                    buffer.close();
                    POOL_BYTES.addAndGet(-buffer.bytes());
                }
            }
        }
    }

    /** Slots lent to one caller until {@link #close()}. */
    public static final class Lease implements AutoCloseable {
        private final CudaDevice device;
        private List<Slot> slots;

        private Lease(CudaDevice device, List<Slot> slots) {
            this.device = device;
            this.slots = slots;
        }

        public Slot slot(int i) {
            if (slots == null) {
                throw new IllegalStateException("staging lease already returned");
            }
            return slots.get(i);
        }

        @Override
        public void close() {
            if (slots != null) {
                giveBack(device, slots);
                slots = null;
            }
        }
    }

    /** {@link #SLOTS_PER_LEASE} slots on {@code device}, reused when idle ones exist. */
    public static Lease borrow(CudaDevice device) {
        List<Slot> got = new ArrayList<>(SLOTS_PER_LEASE);
        synchronized (IDLE) {
            ArrayDeque<Slot> idle = IDLE.get(device.ordinal());
            while (idle != null && !idle.isEmpty() && got.size() < SLOTS_PER_LEASE) {
                got.add(idle.pollLast()); // most recently used first: likeliest to be done and in cache
            }
            if (!hookAdded) {
                hookAdded = true;
                Runtime.getRuntime().addShutdownHook(new Thread(PinnedStagingPool::releaseIdleQuietly, "pinned-staging-release"));
            }
        }
        try {
            while (got.size() < SLOTS_PER_LEASE) {
                got.add(newSlot(device));
            }
        } catch (RuntimeException e) {
            giveBack(device, got);
            throw e;
        }
        for (Slot s : got) {
            LENT_BYTES.addAndGet(s.buffer.bytes());
        }
        return new Lease(device, got);
    }

    private static Slot newSlot(CudaDevice device) {
        PinnedHostBuffer b = PinnedHostBuffer.allocate(device, SLOT_BYTES);
        CUevent ev = new CUevent();
        try {
            cuEventCreate(ev, CUevent_flags.CU_EVENT_DISABLE_TIMING);
        } catch (RuntimeException e) {
            b.close();
            throw new CudaException("cannot create a CUDA event on " + device + ": " + CudaRuntime.describe(e), e);
        }
        POOL_BYTES.addAndGet(b.bytes());
        return new Slot(b, ev);
    }

    private static void giveBack(CudaDevice device, List<Slot> slots) {
        List<Slot> excess = new ArrayList<>();
        synchronized (IDLE) {
            ArrayDeque<Slot> idle = IDLE.computeIfAbsent(device.ordinal(), k -> new ArrayDeque<>());
            for (Slot s : slots) {
                if (idle.size() < MAX_IDLE_PER_DEVICE) {
                    idle.addLast(s);
                } else {
                    excess.add(s);
                }
            }
        }
        for (Slot s : slots) {
            LENT_BYTES.addAndGet(-s.buffer.bytes());
        }
        for (Slot s : excess) {
            s.free();
        }
    }

    /** Frees every idle slot (waiting for its last copy); lent slots stay with their callers. */
    public static void releaseIdle() {
        List<Slot> all = new ArrayList<>();
        synchronized (IDLE) {
            for (ArrayDeque<Slot> q : IDLE.values()) {
                all.addAll(q);
                q.clear();
            }
        }
        RuntimeException first = null;
        for (Slot s : all) {
            try {
                s.free();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    private static void releaseIdleQuietly() {
        try {
            releaseIdle();
        } catch (RuntimeException | LinkageError e) {
            // the driver may already be shutting down; the OS reclaims pinned memory with the process
        }
    }

    /** Pinned bytes held by the pool's slots, idle or lent. */
    public static long pooledBytes() {
        return POOL_BYTES.get();
    }

    /** Pinned bytes of slots currently lent to callers (0 when no copy is in progress). */
    public static long lentBytes() {
        return LENT_BYTES.get();
    }

    /** Idle slots kept for {@code device}. */
    public static int idleSlots(CudaDevice device) {
        synchronized (IDLE) {
            ArrayDeque<Slot> q = IDLE.get(device.ordinal());
            return q == null ? 0 : q.size();
        }
    }
}
