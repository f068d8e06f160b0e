package io.sparkgpu.tsne;

import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.tsne.affinity.TsneAffinitiesSpark;
import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Wall-clock time per phase of one t-SNE run, in nanoseconds. In distributed mode in one barrier stage the iteration
 * phases are those measured in task 0 (sent to the driver when the stage ends; with several tasks, the exchange of
 * the rows' forces is counted under {@link Phase#UPDATE}). In the per-iteration fallback the executor phases
 * (attractive, S2G, G2S) are the driver-observed wall time of their Spark jobs; the attractive and G2S shares of
 * their common job are split in proportion to the executors' own measurements. The distributed kNN and affinities
 * ({@link TsneAffinitiesSpark}) are one Spark pipeline and are recorded together under {@link Phase#KNN}. In the
 * device-resident loop of one GPU the iteration phases are GPU times between CUDA events, and the attractive term runs
 * on its own stream beside the others: there the phases add up to more than the iterations took, and S2G counts from
 * the iteration's start (the bounds and the host's planning included).
 *
 * <p>{@link #backends()} says where the GPU-capable phases ran (gpu, cpu or mixed, with the reasons of fallbacks);
 * in the one-stage distributed mode, like the iteration times, those of task 0. Not kept by {@link #fromMap}.
 */
public final class TsneTimings implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The phases, in pipeline order. */
    public enum Phase {
        /** Input packing, validation, PCA and initialisation. */
        PREPARE,
        /** k nearest neighbours. */
        KNN,
        /** Perplexity calibration, symmetrisation (or graph normalisation). */
        AFFINITIES,
        /** Attractive term, all iterations. */
        ATTRACTIVE,
        /** Point-to-grid interpolation (and the exact sum of the partial grids), all iterations. */
        S2G,
        /** Grid-to-grid convolution, all iterations. */
        G2G,
        /** Grid-to-point interpolation, Phi2Force and Z, all iterations. */
        G2S,
        /** The exact O(n^2) repulsive term and Z, all iterations (instead of S2G, G2G, G2S when the fit chose it). */
        EXACT,
        /** Gradient, gains, momentum and position update (and broadcasting or exchanging Y's terms), all iterations. */
        UPDATE,
        /** KL divergence evaluations. */
        KL,
        /** The whole run. */
        TOTAL
    }

    private final long[] nanos = new long[Phase.values().length];
    private int iterations;
    private final BackendUsage backends = new BackendUsage();

    public void add(Phase p, long ns) {
        nanos[p.ordinal()] += ns;
    }

    /** Adds every phase of {@code other} (its iteration count replaces this one's when set). */
    public void addAll(TsneTimings other) {
        for (int i = 0; i < nanos.length; i++) {
            nanos[i] += other.nanos[i];
        }
        if (other.iterations > 0) {
            iterations = other.iterations;
        }
        backends.merge(other.backends);
    }

    /** Where the run's GPU-capable phases ran (thread-safe; the phases record into it as they run). */
    public BackendUsage backends() {
        return backends;
    }

    public long nanos(Phase p) {
        return nanos[p.ordinal()];
    }

    public double seconds(Phase p) {
        return nanos[p.ordinal()] / 1e9;
    }

    /** Gradient iterations timed. */
    public int iterations() {
        return iterations;
    }

    public void setIterations(int it) {
        iterations = it;
    }

    /** Seconds per gradient iteration of phase p (0 when no iteration ran). */
    public double secondsPerIteration(Phase p) {
        return iterations == 0 ? 0 : seconds(p) / iterations;
    }

    /** Phase name (lower case) to seconds, in pipeline order. */
    public Map<String, Double> toMap() {
        Map<String, Double> m = new LinkedHashMap<>();
        for (Phase p : Phase.values()) {
            m.put(p.name().toLowerCase(Locale.ROOT), seconds(p));
        }
        return m;
    }

    /** Restores timings from {@link #toMap()} output (unknown names are ignored). */
    public static TsneTimings fromMap(Map<String, Double> m, int iterations) {
        TsneTimings t = new TsneTimings();
        for (Phase p : Phase.values()) {
            Double s = m.get(p.name().toLowerCase(Locale.ROOT));
            if (s != null) {
                t.nanos[p.ordinal()] = Math.round(s * 1e9);
            }
        }
        t.iterations = iterations;
        return t;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Phase p : Phase.values()) {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(p.name().toLowerCase(Locale.ROOT)).append(String.format(Locale.ROOT, " %.3f s", seconds(p)));
        }
        return sb.append(" (").append(iterations).append(" iterations)").toString();
    }
}
