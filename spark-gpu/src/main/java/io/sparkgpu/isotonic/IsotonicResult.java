package io.sparkgpu.isotonic;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A fitted isotonic function in MLlib's form: strictly increasing {@code boundaries} and {@code predictions}
 * (non-decreasing when isotonic, non-increasing when antitonic). A block spanning several distinct features
 * contributes its first and last feature with the same prediction; a single-feature block one boundary.
 * Values are clipped to [yMin, yMax] when set, and adjacent blocks whose values become equal (by clipping, or
 * when two exact means round to the same double) are joined. Also carries
 * what the fit did (rows, dropped zero-weight rows, blocks, backend).
 */
public final class IsotonicResult implements Serializable {
    private static final long serialVersionUID = 1L;

    public final double[] boundaries;
    public final double[] predictions;
    public final boolean isotonic;
    public final long numRows;
    public final long zeroWeightRows;
    public final int numBlocks;
    public final String backend;
    private final LinkedHashMap<String, Double> timings;
    private final LinkedHashMap<String, String> phaseBackends;

    public IsotonicResult(double[] boundaries, double[] predictions, boolean isotonic, long numRows,
                          long zeroWeightRows, int numBlocks, String backend) {
        this.boundaries = boundaries;
        this.predictions = predictions;
        this.isotonic = isotonic;
        this.numRows = numRows;
        this.zeroWeightRows = zeroWeightRows;
        this.numBlocks = numBlocks;
        this.backend = backend;
        this.timings = new LinkedHashMap<>();
        this.phaseBackends = new LinkedHashMap<>();
    }

    private IsotonicResult(IsotonicResult r, Map<String, Double> timings, Map<String, String> phaseBackends) {
        this(r.boundaries, r.predictions, r.isotonic, r.numRows, r.zeroWeightRows, r.numBlocks, r.backend);
        this.timings.putAll(timings);
        this.phaseBackends.putAll(phaseBackends);
    }

    /** This result with the fit's phase timings (seconds, in order) and the backend of the phases that have one. */
    public IsotonicResult withTimings(Map<String, Double> timings, Map<String, String> phaseBackends) {
        return new IsotonicResult(this, timings, phaseBackends);
    }

    /**
     * Seconds of each phase of the fit, in the order they ran (empty for local fits). The Spark trainer's phases:
     * {@code pack+validate} (the pass reading rows into primitive arrays, with stats and sample), then for small
     * inputs {@code collect} (rows not shipped with the first job), {@code spearman} (increasing=auto only),
     * {@code solve} (on the driver) and {@code model}; for the range path {@code range split+shuffle},
     * {@code spearman} (auto only), {@code solve} (every range), {@code merge+collect} (merge tree and the final
     * blocks to the driver) and {@code model}.
     */
    public Map<String, Double> timings() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(timings));
    }

    /** The backend of each phase that has one ("gpu", "cpu", or "mixed (g/r ranges on gpu)"), in phase order. */
    public Map<String, String> phaseBackends() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(phaseBackends));
    }

    /** One line "phase s, phase s, ..." of {@link #timings()} with backends where known. */
    public String timingsLine() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Double> e : timings.entrySet()) {
            if (sb.length() > 0) {
                sb.append(", ");
            }
            sb.append(e.getKey()).append(' ').append(String.format(java.util.Locale.ROOT, "%.3f s", e.getValue()));
            String b = phaseBackends.get(e.getKey());
            if (b != null) {
                sb.append(" [").append(b).append(']');
            }
        }
        return sb.toString();
    }

    /** Builds the model arrays from final blocks (feature order) with optional clipping (NaN: no bound). */
    static IsotonicResult from(FinalBlocks b, boolean isotonic, double yMin, double yMax, long numRows,
                               long zeroWeightRows, String backend) {
        int m = b.size();
        double[] bs = new double[2 * m];
        double[] ps = new double[2 * m];
        int k = 0;
        int blocks = 0;
        int i = 0;
        while (i < m) {
            double v = clip(b.value[i], yMin, yMax);
            double xs = b.xStart[i];
            double xe = b.xEnd[i];
            int j = i + 1;
            while (j < m && clip(b.value[j], yMin, yMax) == v) { // after clipping, or two means rounding alike
                xe = b.xEnd[j];
                j++;
            }
            bs[k] = xs;
            ps[k++] = v;
            if (xe > xs) {
                bs[k] = xe;
                ps[k++] = v;
            }
            blocks++;
            i = j;
        }
        return new IsotonicResult(Arrays.copyOf(bs, k), Arrays.copyOf(ps, k), isotonic, numRows, zeroWeightRows,
                blocks, backend);
    }

    static double clip(double v, double lo, double hi) {
        if (!Double.isNaN(lo) && v < lo) {
            v = lo;
        }
        if (!Double.isNaN(hi) && v > hi) {
            v = hi;
        }
        return v;
    }

    @Override
    public String toString() {
        return "IsotonicResult(" + boundaries.length + " boundaries, " + numBlocks + " blocks, isotonic=" + isotonic
                + ", rows=" + numRows + ", backend=" + backend + ")";
    }
}
