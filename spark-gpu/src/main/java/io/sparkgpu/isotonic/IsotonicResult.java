package io.sparkgpu.isotonic;

import java.io.Serializable;
import java.util.Arrays;

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

    public IsotonicResult(double[] boundaries, double[] predictions, boolean isotonic, long numRows,
                          long zeroWeightRows, int numBlocks, String backend) {
        this.boundaries = boundaries;
        this.predictions = predictions;
        this.isotonic = isotonic;
        this.numRows = numRows;
        this.zeroWeightRows = zeroWeightRows;
        this.numBlocks = numBlocks;
        this.backend = backend;
    }

    /** Builds the model arrays from final blocks (feature order) with optional clipping (NaN: no bound). */
    public static IsotonicResult from(FinalBlocks b, boolean isotonic, double yMin, double yMax, long numRows,
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
