package io.sparkgpu.isotonic;

import java.io.Serializable;

/**
 * The compact form of a solved range that the driver receives: per block its feature range, fitted value
 * (mean or median, in the label's own sign) and total weight. No rows, no exact sums.
 */
final class FinalBlocks implements Serializable {
    private static final long serialVersionUID = 1L;

    public final double[] xStart;
    public final double[] xEnd;
    public final double[] value;
    public final double[] weight;

    public FinalBlocks(double[] xStart, double[] xEnd, double[] value, double[] weight) {
        this.xStart = xStart;
        this.xEnd = xEnd;
        this.value = value;
        this.weight = weight;
    }

    public int size() {
        return value.length;
    }

    /** Least-squares blocks; {@code negated}: the sums are of -y (antitonic fit), so values are negated back. */
    public static FinalBlocks of(L2Blocks b, IsoScales sc, boolean negated) {
        double[] v = new double[b.m];
        double[] w = new double[b.m];
        for (int i = 0; i < b.m; i++) {
            double mean = b.mean(i, sc);
            v[i] = negated ? -mean : mean;
            w[i] = b.weight(i, sc);
        }
        return new FinalBlocks(b.xStart.clone(), b.xEnd.clone(), v, w);
    }

    public static FinalBlocks of(L1Blocks b, IsoScales sc, boolean negated) {
        int m = b.size();
        double[] xs = new double[m];
        double[] xe = new double[m];
        double[] v = new double[m];
        double[] w = new double[m];
        for (int i = 0; i < m; i++) {
            xs[i] = b.xStart(i);
            xe[i] = b.xEnd(i);
            v[i] = negated ? -b.median(i) : b.median(i);
            w[i] = b.weight(i, sc);
        }
        return new FinalBlocks(xs, xe, v, w);
    }
}
