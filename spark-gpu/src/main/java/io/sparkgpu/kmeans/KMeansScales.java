package io.sparkgpu.kmeans;

import io.sparkgpu.common.FixedPoint;
import java.io.Serializable;

/**
 * Fixed-point scales of one k-means fit, derived from global bounds so that every partition, the GPU and
 * the CPU twin quantize identically: one per feature dimension (bounding sum of w*x_j), one for the weight
 * sums and one for the cost. Layout of {@link #multipliers} matches the kernel's {@code scale} argument.
 */
public final class KMeansScales implements Serializable {
    private static final long serialVersionUID = 1L;
    public final int d;
    /** shift per dimension, then weight shift at index d, cost shift at index d+1. */
    public final int[] shifts;
    /** (s1, s2) pairs: 2*(d+2) values. */
    public final double[] multipliers;

    private KMeansScales(int[] shifts) {
        this.d = shifts.length - 2;
        this.shifts = shifts;
        this.multipliers = new double[2 * shifts.length];
        for (int i = 0; i < shifts.length; i++) {
            double[] m = FixedPoint.multipliers(shifts[i]);
            multipliers[2 * i] = m[0];
            multipliers[2 * i + 1] = m[1];
        }
    }

    /**
     * @param count   total number of points N
     * @param maxW    largest weight
     * @param maxAbs  per dimension, the largest |x_j| (after normalisation for cosine)
     * @param cosine  distance measure (bounds the cost: cosine distance of unit vectors is at most 2)
     */
    public static KMeansScales fromBounds(long count, double maxW, double[] maxAbs, boolean cosine) {
        int d = maxAbs.length;
        int[] shifts = new int[d + 2];
        double nw = Math.max(count, 1) * maxW * (1 + 1e-12);
        double maxDist = 0;
        for (int j = 0; j < d; j++) {
            shifts[j] = FixedPoint.shiftFor(nw * maxAbs[j]);
            maxDist += 4 * maxAbs[j] * maxAbs[j];
        }
        if (cosine) {
            maxDist = 2;
        }
        shifts[d] = FixedPoint.shiftFor(nw);
        shifts[d + 1] = FixedPoint.shiftFor(nw * maxDist * (1 + 1e-9));
        return new KMeansScales(shifts);
    }

    public int weightShift() {
        return shifts[d];
    }

    public int costShift() {
        return shifts[d + 1];
    }
}
