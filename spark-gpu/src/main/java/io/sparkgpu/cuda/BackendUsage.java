package io.sparkgpu.cuda;

import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * Where the phases of one fit ran: per phase the calls on the GPU and on the CPU twin and the distinct reasons of
 * fallbacks (at most {@value #MAX_REASONS} per phase), in the order the phases were first recorded. Summaries read
 * "gpu" (every call on a GPU), "cpu" (none) or "mixed", overall or per phase. Thread-safe (tasks of one executor
 * may record into one instance) and serializable (task results carry theirs to the driver, which {@link #merge}s
 * them).
 */
public final class BackendUsage implements Serializable {
    private static final long serialVersionUID = 1L;
    static final int MAX_REASONS = 4;

    /** phase -> {GPU calls, CPU calls}. */
    private final LinkedHashMap<String, long[]> calls = new LinkedHashMap<>();
    /** phase -> distinct fallback reasons. */
    private final LinkedHashMap<String, LinkedHashSet<String>> reasons = new LinkedHashMap<>();

    /** Records one call of {@code phase} as {@link BackendChooser#run} reported it. */
    public BackendUsage record(String phase, BackendChooser.Ran<?> ran) {
        return record(phase, ran.onGpu(), ran.fallbackReason());
    }

    /** Records one call of {@code phase} in {@code usage} (null: not recorded). */
    public static void recordIfAny(BackendUsage usage, String phase, BackendChooser.Ran<?> ran) {
        if (usage != null) {
            usage.record(phase, ran);
        }
    }

    /** Records one call of {@code phase}, on the GPU or not, with the reason of a fallback (null if none). */
    public synchronized BackendUsage record(String phase, boolean gpu, String fallbackReason) {
        return add(phase, gpu ? 1 : 0, gpu ? 0 : 1, fallbackReason == null ? List.of() : List.of(fallbackReason));
    }

    private BackendUsage add(String phase, long gpu, long cpu, Iterable<String> why) {
        long[] c = calls.computeIfAbsent(phase, p -> new long[2]);
        c[0] += gpu;
        c[1] += cpu;
        for (String r : why) {
            LinkedHashSet<String> rs = reasons.computeIfAbsent(phase, p -> new LinkedHashSet<>());
            if (rs.size() < MAX_REASONS) {
                rs.add(r);
            }
        }
        return this;
    }

    /** Adds every record of {@code other} (e.g. a task's usage) to this one. */
    public BackendUsage merge(BackendUsage other) {
        if (other == null || other == this) {
            return this;
        }
        Map<String, long[]> oc;
        Map<String, List<String>> or;
        synchronized (other) { // copy first: never hold both locks
            oc = new LinkedHashMap<>();
            other.calls.forEach((p, c) -> oc.put(p, c.clone()));
            or = new LinkedHashMap<>();
            other.reasons.forEach((p, r) -> or.put(p, new ArrayList<>(r)));
        }
        synchronized (this) {
            oc.forEach((p, c) -> add(p, c[0], c[1], or.getOrDefault(p, List.of())));
        }
        return this;
    }

    /** True when nothing was recorded. */
    public synchronized boolean isEmpty() {
        return calls.isEmpty();
    }

    /** "gpu" when every recorded call ran on a GPU, "cpu" when none did, "mixed" otherwise, "none" when empty. */
    public synchronized String backend() {
        String all = null;
        for (long[] c : calls.values()) {
            all = combine(all, name(c));
        }
        return all == null ? "none" : all;
    }

    /** {@link #backend()} of one phase, or null when it was not recorded. */
    public synchronized String backend(String phase) {
        long[] c = calls.get(phase);
        return c == null ? null : name(c);
    }

    /** Phase to "gpu", "cpu" or "mixed", in the order of first record. */
    public synchronized Map<String, String> phaseBackends() {
        Map<String, String> m = new LinkedHashMap<>();
        calls.forEach((p, c) -> m.put(p, name(c)));
        return Collections.unmodifiableMap(m);
    }

    /** Phase to its fallback reasons ("; "-separated), for the phases that fell back. */
    public synchronized Map<String, String> fallbackReasons() {
        Map<String, String> m = new LinkedHashMap<>();
        reasons.forEach((p, r) -> m.put(p, String.join("; ", r)));
        return Collections.unmodifiableMap(m);
    }

    /** Calls of {@code phase} that ran on a GPU. */
    public synchronized long gpuCalls(String phase) {
        long[] c = calls.get(phase);
        return c == null ? 0 : c[0];
    }

    /** Calls of {@code phase} that ran on the CPU twin. */
    public synchronized long cpuCalls(String phase) {
        long[] c = calls.get(phase);
        return c == null ? 0 : c[1];
    }

    /** The backend of two groups of calls together: equal names stay, different ones give "mixed"; null is neutral. */
    public static String combine(String a, String b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return a.equals(b) ? a : "mixed";
    }

    private static String name(long[] c) {
        return c[0] > 0 && c[1] == 0 ? "gpu" : c[0] == 0 ? "cpu" : "mixed";
    }

    private synchronized void writeObject(ObjectOutputStream out) throws IOException {
        out.defaultWriteObject();
    }

    /** E.g. "mixed (t-SNE kNN gpu, t-SNE attractive cpu: reason)". */
    @Override
    public synchronized String toString() {
        StringBuilder sb = new StringBuilder(backend());
        String sep = " (";
        for (Map.Entry<String, long[]> e : calls.entrySet()) {
            sb.append(sep).append(e.getKey()).append(' ').append(name(e.getValue()));
            LinkedHashSet<String> r = reasons.get(e.getKey());
            if (r != null) {
                sb.append(": ").append(String.join("; ", r));
            }
            sep = ", ";
        }
        return calls.isEmpty() ? sb.toString() : sb.append(')').toString();
    }
}
