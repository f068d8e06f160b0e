package io.sparkgpu.cuda;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Device buffers that outlive a task: a partition's packed rows stay on the GPU across the iterations of
 * an algorithm (each iteration is a separate Spark job, and tasks of later jobs find the data here).
 * Least-recently-used entries are evicted when the per-device budget
 * ({@link SparkGpuConf#RESIDENT_FRACTION} of device memory) would be exceeded; entries in use are never
 * evicted. Data on its way into the cache may first be held in {@link Staging} memory (e.g. chunks copied while a
 * partition is still being packed, before its size is known): staging counts against the same budget while it
 * lives, but nothing is ever evicted for it and entries are acquired as if it were not there, so the device holds
 * at most the budget plus the staging of the entries being assembled at that moment. Thread-safe.
 */
public final class DeviceResidentCache {
    private static final Map<Integer, DeviceResidentCache> PER_DEVICE = new LinkedHashMap<>();

    private final CudaDevice device;
    private final long budget;
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private long used;
    private long staged;

    /** A cached buffer, pinned while leased. */
    public final class Lease implements AutoCloseable {
        private final Entry entry;
        private boolean released;

        private Lease(Entry entry) {
            this.entry = entry;
        }

        public DeviceBuffer buffer() {
            return entry.buffer;
        }

        /** True when the buffer was filled by an earlier lease (data already on the device). */
        public boolean wasPresent() {
            return entry.filledBefore;
        }

        /** Declares the buffer filled; a lease closed without this drops the entry (e.g. a failed upload). */
        public void markFilled() {
            synchronized (DeviceResidentCache.this) {
                entry.filledBefore = true;
            }
        }

        @Override
        public void close() {
            synchronized (DeviceResidentCache.this) {
                if (!released) {
                    released = true;
                    entry.pins--;
                    if (!entry.filledBefore && entry.pins == 0) {
                        entries.values().remove(entry);
                        entry.buffer.close();
                        used -= entry.buffer.bytes();
                    }
                }
            }
        }
    }

    private static final class Entry {
        final DeviceBuffer buffer;
        int pins;
        boolean filledBefore;

        Entry(DeviceBuffer buffer) {
            this.buffer = buffer;
        }
    }

    /** Device memory outside the entries, counted against the budget until closed ({@link #stage}). */
    public final class Staging implements AutoCloseable {
        private final DeviceBuffer buffer;
        private boolean released;

        private Staging(DeviceBuffer buffer) {
            this.buffer = buffer;
        }

        public DeviceBuffer buffer() {
            return buffer;
        }

        /** Frees the memory (the caller makes sure no copy from or to it is still running). */
        @Override
        public void close() {
            synchronized (DeviceResidentCache.this) {
                if (released) {
                    return;
                }
                released = true;
                staged -= buffer.bytes();
            }
            buffer.close();
        }
    }

    private DeviceResidentCache(CudaDevice device, long budget) {
        this.device = device;
        this.budget = budget;
    }

    /** The cache of {@code device} shared by this JVM (budget: {@link SparkGpuConf#RESIDENT_FRACTION} of its memory). */
    public static DeviceResidentCache of(CudaDevice device) {
        synchronized (PER_DEVICE) {
            return PER_DEVICE.computeIfAbsent(device.ordinal(),
                    o -> new DeviceResidentCache(device, (long) (device.totalMemory() * SparkGpuConf.residentFraction())));
        }
    }

    /**
     * A cache of its own on {@code device} with a budget of {@code budgetBytes}, not the shared one of {@link #of}
     * (not seen by {@link #forEach}): for tests and tools that need a small budget. Its owner frees its entries
     * ({@code evictPrefix("")}).
     */
    public static DeviceResidentCache standalone(CudaDevice device, long budgetBytes) {
        if (budgetBytes < 0) {
            throw new IllegalArgumentException("negative budget: " + budgetBytes);
        }
        return new DeviceResidentCache(device, budgetBytes);
    }

    /**
     * Leases the buffer stored under {@code key}, allocating {@code bytes} if absent. Returns {@code null}
     * when the entry cannot fit in the budget even after evicting unpinned entries; the caller then streams.
     * A caller that gets a lease with {@link Lease#wasPresent()} false must fill the buffer before closing it.
     */
    public synchronized Lease acquire(String key, long bytes) {
        Entry e = entries.get(key);
        if (e != null && e.buffer.bytes() == bytes && e.filledBefore) {
            e.pins++;
            return new Lease(e);
        }
        if (e != null && e.pins == 0) {
            remove(key);
        } else if (e != null) {
            return null; // being filled by another task right now: do not wait, stream instead
        }
        if (bytes > budget) {
            return null;
        }
        Iterator<Map.Entry<String, Entry>> it = entries.entrySet().iterator();
        while (used + bytes > budget && it.hasNext()) {
            Map.Entry<String, Entry> old = it.next();
            if (old.getValue().pins == 0) {
                old.getValue().buffer.close();
                used -= old.getValue().buffer.bytes();
                it.remove();
            }
        }
        if (used + bytes > budget) {
            return null;
        }
        DeviceBuffer b;
        try {
            b = DeviceBuffer.allocate(device, bytes);
        } catch (CudaException oom) {
            return null;
        }
        Entry fresh = new Entry(b);
        fresh.pins = 1;
        entries.put(key, fresh);
        used += bytes;
        return new Lease(fresh);
    }

    /**
     * {@code bytes} of device memory for data on its way into this cache, or {@code null} when the entries and
     * the staging already held leave less than {@code bytes} of the budget (nothing is evicted for staging) or the
     * allocation fails. Close it once no copy uses it any more.
     */
    public Staging stage(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("staging of " + bytes + " bytes");
        }
        synchronized (this) {
            if (used + staged + bytes > budget) {
                return null;
            }
            staged += bytes;
        }
        DeviceBuffer b;
        try {
            b = DeviceBuffer.allocate(device, bytes); // outside the lock: other tasks keep leasing meanwhile
        } catch (RuntimeException e) {
            synchronized (this) {
                staged -= bytes;
            }
            if (e instanceof CudaException) {
                return null; // out of device memory: like a full budget
            }
            throw e;
        }
        return new Staging(b);
    }

    /** Frees every unpinned entry whose key starts with {@code prefix} (e.g. one fit's data). */
    public synchronized void evictPrefix(String prefix) {
        entries.entrySet().removeIf(en -> {
            if (en.getKey().startsWith(prefix) && en.getValue().pins == 0) {
                en.getValue().buffer.close();
                used -= en.getValue().buffer.bytes();
                return true;
            }
            return false;
        });
    }

    private void remove(String key) {
        Entry e = entries.remove(key);
        if (e != null) {
            e.buffer.close();
            used -= e.buffer.bytes();
        }
    }

    public synchronized long usedBytes() {
        return used;
    }

    public CudaDevice device() {
        return device;
    }

    /** Bytes of {@link Staging} memory currently held. */
    public synchronized long stagedBytes() {
        return staged;
    }

    /** The budget in bytes ({@link SparkGpuConf#RESIDENT_FRACTION} of the device's memory for the shared cache). */
    public long budgetBytes() {
        return budget;
    }

    /** Applies {@code action} to the cache of every device opened in this JVM. */
    public static void forEach(Consumer<DeviceResidentCache> action) {
        synchronized (PER_DEVICE) {
            PER_DEVICE.values().forEach(action);
        }
    }
}
