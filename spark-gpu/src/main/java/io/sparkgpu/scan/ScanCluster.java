package io.sparkgpu.scan;

import java.io.Serializable;
import java.util.Arrays;

/**
 * One reported cluster: a box of cells with its LLR, observed and expected counts, relative risk and Monte
 * Carlo p-value. Rank 1 is the most likely cluster; ranks 2, 3, ... are the best ranges that overlap none of
 * the clusters ranked before them (secondary clusters, as SaTScan reports them with no geographical overlap).
 */
public final class ScanCluster implements Serializable {
    private static final long serialVersionUID = 1L;

    private final int rank;
    private final long index;
    private final int[] box;
    private final double llr;
    private final double observed;
    private final double expected;
    private final double relativeRisk;
    private final double pValue;
    private final double baseline;

    public ScanCluster(int rank, long index, int[] box, double llr, double observed, double expected,
                       double relativeRisk, double baseline, double pValue) {
        if (box == null || box.length != 6) {
            throw new IllegalArgumentException("a cluster box has 6 bounds");
        }
        this.rank = rank;
        this.index = index;
        this.box = box.clone();
        this.llr = llr;
        this.observed = observed;
        this.expected = expected;
        this.relativeRisk = relativeRisk;
        this.baseline = baseline;
        this.pValue = pValue;
    }

    /** 1 for the most likely cluster, then 2, 3, ... */
    public int rank() {
        return rank;
    }

    /** Global range index (the tie-break key). */
    public long index() {
        return index;
    }

    /** Inclusive cell bounds {lo_x, hi_x, lo_y, hi_y, lo_z, hi_z} (unused axes {0, 0}). */
    public int[] box() {
        return box.clone();
    }

    public int lo(int axis) {
        return box[2 * axis];
    }

    public int hi(int axis) {
        return box[2 * axis + 1];
    }

    /** Number of cells in the box. */
    public long cells() {
        return ScanShape.boxCells(box);
    }

    public double llr() {
        return llr;
    }

    /** Cases in the box (normal model: the sum of the values). */
    public double observed() {
        return observed;
    }

    /** Expected cases under the null (normal model: observations times the overall mean). */
    public double expected() {
        return expected;
    }

    /** (observed/expected inside) / (observed/expected outside); EBP: observed/expected; normal: ratio of means. */
    public double relativeRisk() {
        return relativeRisk;
    }

    /** Baseline inside the box, in the input's units (population, expected count or observations). */
    public double baseline() {
        return baseline;
    }

    /** Monte Carlo p-value (1 + #replicas with max LLR >= llr) / (R + 1); NaN without replicas. */
    public double pValue() {
        return pValue;
    }

    /** Copy with another p-value. */
    ScanCluster withPValue(double p) {
        return new ScanCluster(rank, index, box, llr, observed, expected, relativeRisk, baseline, p);
    }

    /** True when the cell (x, y, z) lies inside the box. */
    public boolean contains(int x, int y, int z) {
        return x >= box[0] && x <= box[1] && y >= box[2] && y <= box[3] && z >= box[4] && z <= box[5];
    }

    @Override
    public String toString() {
        return "ScanCluster(rank=" + rank + ", box=" + Arrays.toString(box) + ", llr=" + llr + ", observed=" + observed
                + ", expected=" + expected + ", relativeRisk=" + relativeRisk + ", p=" + pValue + ")";
    }
}
