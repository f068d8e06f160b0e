package io.sparkgpu.scan;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Locale;

/**
 * How the grid sits in the input's coordinates. For {@code cells} input a cell is an integer coordinate:
 * cell index = coordinate - origin (bin width 1). For {@code points} input axis k is the closed interval
 * [origin_k, upper_k] cut into size_k equal bins of width (upper_k - origin_k) / size_k: cell index =
 * floor((v - origin) / width), the upper end falling into the last bin.
 */
public final class ScanGridInfo implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String CELLS = "cells";
    public static final String POINTS = "points";

    private final String inputType;
    private final String[] coordinateCols;
    private final int[] sizes;
    private final double[] origin;
    private final double[] width;
    private final double[] upper;

    /**
     * @param origin lowest coordinate of each axis
     * @param upper  highest coordinate of each axis (points: the extent's upper end; cells: origin + size - 1)
     */
    public ScanGridInfo(String inputType, String[] coordinateCols, int[] sizes, double[] origin, double[] upper) {
        if (!CELLS.equals(inputType) && !POINTS.equals(inputType)) {
            throw new IllegalArgumentException("inputType must be cells or points, got " + inputType);
        }
        int d = sizes.length;
        if (coordinateCols.length != d || origin.length != d || upper.length != d) {
            throw new IllegalArgumentException("grid info needs one coordinate column, origin and upper end per axis");
        }
        this.inputType = inputType;
        this.coordinateCols = coordinateCols.clone();
        this.sizes = sizes.clone();
        this.origin = origin.clone();
        this.upper = upper.clone();
        this.width = new double[d];
        for (int k = 0; k < d; k++) {
            width[k] = CELLS.equals(inputType) ? 1.0 : (upper[k] - origin[k]) / sizes[k];
        }
    }

    public String inputType() {
        return inputType;
    }

    public boolean points() {
        return POINTS.equals(inputType);
    }

    public String[] coordinateCols() {
        return coordinateCols.clone();
    }

    public int[] sizes() {
        return sizes.clone();
    }

    public int dims() {
        return sizes.length;
    }

    public double[] origin() {
        return origin.clone();
    }

    public double[] width() {
        return width.clone();
    }

    /** Highest coordinate of each axis. */
    public double[] upper() {
        return upper.clone();
    }

    public ScanShape shape() {
        return new ScanShape(sizes);
    }

    /** Lower coordinate of cell {@code i} of axis k (cells: the coordinate itself). */
    public double lower(int k, int i) {
        return points() ? origin[k] + i * width[k] : origin[k] + i;
    }

    /** Upper coordinate of cell {@code i} of axis k: the bin's upper edge (points) or the coordinate (cells). */
    public double upper(int k, int i) {
        if (points()) {
            return i == sizes[k] - 1 ? upper[k] : origin[k] + (i + 1) * width[k];
        }
        return origin[k] + i;
    }

    /** A box in the input's coordinates, e.g. {@code x in [2.5, 4.0), y in [0, 1.5)} or {@code x 3..7}. */
    public String describe(int[] box) {
        StringBuilder sb = new StringBuilder();
        for (int k = 0; k < sizes.length; k++) {
            if (k > 0) {
                sb.append(", ");
            }
            sb.append(coordinateCols[k]);
            if (points()) {
                sb.append(String.format(Locale.ROOT, " in [%.6g, %.6g)", lower(k, box[2 * k]), upper(k, box[2 * k + 1])));
            } else {
                sb.append(String.format(Locale.ROOT, " %s..%s", fmt(lower(k, box[2 * k])), fmt(upper(k, box[2 * k + 1]))));
            }
        }
        return sb.toString();
    }

    private static String fmt(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? String.valueOf((long) v) : String.valueOf(v);
    }

    @Override
    public String toString() {
        return "ScanGridInfo(" + inputType + ", " + Arrays.toString(coordinateCols) + ", sizes " + Arrays.toString(sizes)
                + ", origin " + Arrays.toString(origin) + ", upper " + Arrays.toString(upper) + ")";
    }
}
