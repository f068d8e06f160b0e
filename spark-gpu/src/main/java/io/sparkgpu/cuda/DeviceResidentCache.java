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
 * evicted. Thread-safe.
 */
public final class DeviceResidentCache {
    private static final Map<Integer, DeviceResidentCache> PER_DEVICE = new LinkedHashMap<>();

    private final CudaDevice device;
    private final long budget;
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private long used;

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

    private DeviceResidentCache(CudaDevice device) {
        this.device = device;
        this.budget = (long) (device.totalMemory() * SparkGpuConf.residentFraction());
    }

    public static DeviceResidentCache of(CudaDevice device) {
        synchronized (PER_DEVICE) {
            return PER_DEVICE.computeIfAbsent(device.ordinal(), o -> new DeviceResidentCache(device));
        }
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

    /** Applies {@code action} to the cache of every device opened in this JVM. */
    public static void forEach(Consumer<DeviceResidentCache> action) {
        synchronized (PER_DEVICE) {
            PER_DEVICE.values().forEach(action);
        }
    }
}
