package io.sparkgpu.cuda;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Test-only fault injector of the device path (issue 18 item 7), off unless {@value #KEY} is set (Spark conf or
 * system property): {@code context}, {@code alloc}, {@code launch} or {@code copy}, optionally {@code :N} to let the
 * first N operations of that kind pass. The chosen driver operation then throws the {@link CudaException} a real
 * failure would, so every capability's GPU path meets it where it really can fail: under {@code auto} the phase is
 * redone on the CPU twin (same bits), under {@code gpu} the fit fails with a message naming the fault. Costs one
 * configuration lookup per operation when off.
 */
public final class DeviceFaults {
    /** {@code context|alloc|launch|copy[:N]}. */
    public static final String KEY = "spark.sparkgpu.test.deviceFault";

    static final String CONTEXT = "context";
    static final String ALLOC = "alloc";
    static final String LAUNCH = "launch";
    static final String COPY = "copy";

    private static final AtomicLong SEEN = new AtomicLong();
    private static final AtomicLong FIRED = new AtomicLong();
    private static volatile String lastSetting = "";

    private DeviceFaults() {
    }

    /** Throws the injected fault when {@value #KEY} names {@code point} and its first N operations have passed. */
    static void strike(String point) {
        String v = SparkGpuConf.get(KEY, "").trim();
        if (v.isEmpty()) {
            return;
        }
        if (!v.equals(lastSetting)) {
            synchronized (DeviceFaults.class) {
                if (!v.equals(lastSetting)) {
                    SEEN.set(0);
                    FIRED.set(0);
                    lastSetting = v;
                }
            }
        }
        int colon = v.indexOf(':');
        String at = colon < 0 ? v : v.substring(0, colon);
        long after = 0;
        if (!at.equals(CONTEXT) && !at.equals(ALLOC) && !at.equals(LAUNCH) && !at.equals(COPY)) {
            throw new IllegalArgumentException(KEY + " must be context, alloc, launch or copy, optionally :N, got '"
                    + v + "'");
        }
        if (colon >= 0) {
            try {
                after = Long.parseLong(v.substring(colon + 1).trim());
            } catch (NumberFormatException e) {
                after = -1;
            }
            if (after < 0) {
                throw new IllegalArgumentException(KEY + " must end in :N with N >= 0 operations let through, got '"
                        + v + "'");
            }
        }
        if (at.equals(point) && SEEN.incrementAndGet() > after) {
            FIRED.incrementAndGet();
            throw new CudaException("injected device fault at " + point + " (" + KEY + "=" + v + ")");
        }
    }

    /** How often the current setting's fault struck in this JVM (a test whose fault never struck proves nothing). */
    public static long fired() {
        return FIRED.get();
    }

    /** Forgets the counts (the next operation counts from zero again). */
    public static synchronized void reset() {
        SEEN.set(0);
        FIRED.set(0);
        lastSetting = "";
    }
}
