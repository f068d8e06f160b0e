package io.sparkgpu.isotonic;

import io.sparkgpu.common.FixedPoint;
import java.io.Serializable;

/**
 * Fixed-point scales of one isotonic fit: every pooled point's weighted label sum s = w*y and weight w are
 * stored as 128-bit integers trunc(v * 2^shift) ({@link FixedPoint}). The shifts come from bounds that do not
 * depend on how the data is partitioned (row count times the largest |w*y| and the largest w), so every
 * partition, the GPU kernels and the CPU twins quantize identically and all later sums are exact.
 */
public final class IsoScales implements Serializable {
    private static final long serialVersionUID = 1L;

    public final int labelShift;
    public final int weightShift;
    /** (s1, s2) multipliers of the label sums and of the weights, as {@link FixedPoint#multipliers}. */
    public final double[] labelMul;
    public final double[] weightMul;

    public IsoScales(int labelShift, int weightShift) {
        this.labelShift = labelShift;
        this.weightShift = weightShift;
        this.labelMul = FixedPoint.multipliers(labelShift);
        this.weightMul = FixedPoint.multipliers(weightShift);
    }

    /**
     * @param count     number of rows (an upper bound is fine)
     * @param maxAbsWY  the largest |w * y| over the rows
     * @param maxW      the largest weight
     */
    public static IsoScales fromBounds(long count, double maxAbsWY, double maxW) {
        double c = Math.max(count, 1) * (1 + 1e-12);
        return new IsoScales(FixedPoint.shiftFor(c * maxAbsWY), FixedPoint.shiftFor(c * maxW));
    }

    /** Scales for data held in arrays (tests, benchmarks, local use). */
    public static IsoScales forData(double[] y, double[] w, int n) {
        double my = 0;
        double mw = 0;
        for (int i = 0; i < n; i++) {
            double wi = w == null ? 1.0 : w[i];
            my = Math.max(my, Math.abs(wi * y[i]));
            mw = Math.max(mw, wi);
        }
        return fromBounds(n, my, mw);
    }

    /** The weighted mean s/w of exact sums, as a double: both sums rounded to double, scaled, then divided. */
    public double mean(long sLo, long sHi, long wLo, long wHi) {
        double s = Math.scalb(io.sparkgpu.common.Int128.toDouble(sLo, sHi), -labelShift);
        double w = Math.scalb(io.sparkgpu.common.Int128.toDouble(wLo, wHi), -weightShift);
        return s / w;
    }

    /** The exact weight as a double (rounded once). */
    public double weight(long wLo, long wHi) {
        return Math.scalb(io.sparkgpu.common.Int128.toDouble(wLo, wHi), -weightShift);
    }

    @Override
    public String toString() {
        return "IsoScales(labelShift=" + labelShift + ", weightShift=" + weightShift + ")";
    }
}
