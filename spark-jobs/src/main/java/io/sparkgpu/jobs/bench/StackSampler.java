package io.sparkgpu.jobs.bench;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Where one thread's wall time goes, for benchmarks: a daemon thread reads the thread's stack every {@code periodMs}
 * and counts, per method, the samples it was on the stack in (inclusive) and the samples it was the top frame in
 * (self). Coarse (safepoint-biased, like every {@code getStackTrace} sampler), but enough to tell a first call's
 * class loading, JIT warm-up or native waits from the work itself.
 */
final class StackSampler implements AutoCloseable {
    private final Thread target;
    private final long periodMs;
    private final Thread sampler;
    private final Map<String, Integer> inclusive = new HashMap<>();
    private final Map<String, Integer> self = new HashMap<>();
    private int samples;
    private volatile boolean running = true;

    StackSampler(Thread target, long periodMs) {
        this.target = target;
        this.periodMs = Math.max(1, periodMs);
        sampler = new Thread(this::loop, "bench-stack-sampler");
        sampler.setDaemon(true);
        sampler.start();
    }

    private void loop() {
        while (running) {
            StackTraceElement[] st = target.getStackTrace();
            if (st.length > 0) {
                synchronized (this) {
                    samples++;
                    self.merge(frame(st[0]), 1, Integer::sum);
                    Set<String> seen = new HashSet<>();
                    for (StackTraceElement e : st) {
                        String f = frame(e);
                        if (seen.add(f)) {
                            inclusive.merge(f, 1, Integer::sum);
                        }
                    }
                }
            }
            try {
                Thread.sleep(periodMs);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static String frame(StackTraceElement e) {
        return e.getClassName() + "." + e.getMethodName();
    }

    /** The counts so far, copied: a phase's share can be reported later, while the sampling goes on. */
    synchronized Snapshot snapshot() {
        return new Snapshot(samples, periodMs, new HashMap<>(inclusive), new HashMap<>(self));
    }

    /** {@code snapshot().report(title, top)}. */
    String report(String title, int top) {
        return snapshot().report(title, top);
    }

    /** The sampler's counts at one moment. */
    static final class Snapshot {
        private final int samples;
        private final long periodMs;
        private final Map<String, Integer> inclusive;
        private final Map<String, Integer> self;

        private Snapshot(int samples, long periodMs, Map<String, Integer> inclusive, Map<String, Integer> self) {
            this.samples = samples;
            this.periodMs = periodMs;
            this.inclusive = inclusive;
            this.self = self;
        }

        /**
         * The {@code top} methods by inclusive samples (leaving out the trunk: methods on the stack in every sample),
         * then the {@code top} by self samples, as text lines with their share of the samples and the wall time that
         * stands for.
         */
        String report(String title, int top) {
            StringBuilder sb = new StringBuilder();
            sb.append(String.format(Locale.ROOT, "stack samples of %s: %d every %d ms (about %.2f s)%n", title,
                    samples, periodMs, samples * periodMs / 1e3));
            append(sb, "inclusive", inclusive, samples, top);
            append(sb, "self (top frame)", self, Integer.MAX_VALUE, top);
            return sb.toString();
        }

        private void append(StringBuilder sb, String what, Map<String, Integer> m, int trunk, int top) {
            sb.append("  ").append(what).append(":").append(System.lineSeparator());
            m.entrySet().stream().filter(e -> e.getValue() < trunk)
                    .sorted((a, b) -> b.getValue() != a.getValue().intValue() ? b.getValue() - a.getValue()
                            : a.getKey().compareTo(b.getKey()))
                    .limit(top)
                    .forEach(e -> sb.append(String.format(Locale.ROOT, "    %5.1f%%  %6.3f s  %s%n",
                            100.0 * e.getValue() / Math.max(1, samples), e.getValue() * periodMs / 1e3, e.getKey())));
        }
    }

    @Override
    public void close() {
        running = false;
        sampler.interrupt();
        try {
            sampler.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
