package io.sparkgpu.scan;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a scan looks for, apart from the data: the direction, the allowed range sizes (in cells, and as a
 * fraction of the total baseline) and boxes that ranges must not overlap (for secondary clusters).
 * Immutable; {@link #excluding} returns a copy with one more excluded box.
 */
public final class ScanSpec implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Most boxes a scan can exclude (the kernel keeps them in shared memory). */
    public static final int MAX_EXCLUDED = 64;

    final ScanDirection direction;
    final long minCells;
    final long maxCells;
    final double maxBaselineFraction;
    final List<int[]> excluded;

    /**
     * @param minCells            smallest number of cells of a range (>= 1)
     * @param maxCells            largest number of cells of a range (>= minCells; Long.MAX_VALUE for no limit)
     * @param maxBaselineFraction largest share of the total baseline inside a range, in (0, 1]
     */
    public ScanSpec(ScanDirection direction, long minCells, long maxCells, double maxBaselineFraction) {
        this(direction, minCells, maxCells, maxBaselineFraction, List.of());
    }

    private ScanSpec(ScanDirection direction, long minCells, long maxCells, double maxBaselineFraction,
                     List<int[]> excluded) {
        if (direction == null) {
            throw new IllegalArgumentException("direction is required");
        }
        // the rules of ScanConfig (maxCells here is a limit: Long.MAX_VALUE for none)
        ScanConfig.checkCellRange(minCells, maxCells);
        ScanConfig.checkMaxBaselineFraction(maxBaselineFraction);
        if (excluded.size() > MAX_EXCLUDED) {
            throw new IllegalArgumentException("at most " + MAX_EXCLUDED + " excluded boxes, got " + excluded.size());
        }
        this.direction = direction;
        this.minCells = minCells;
        this.maxCells = maxCells;
        this.maxBaselineFraction = maxBaselineFraction;
        this.excluded = List.copyOf(excluded);
    }

    /** Any high-rate range: no size limits, no exclusions. */
    public static ScanSpec all(ScanDirection direction) {
        return new ScanSpec(direction, 1, Long.MAX_VALUE, 1.0);
    }

    /** This spec with {@code box} ({lo_x, hi_x, lo_y, hi_y, lo_z, hi_z}) added to the excluded boxes. */
    public ScanSpec excluding(int[] box) {
        if (box == null || box.length != 6) {
            throw new IllegalArgumentException("a box has 6 bounds");
        }
        List<int[]> ex = new ArrayList<>(excluded);
        ex.add(box.clone());
        return new ScanSpec(direction, minCells, maxCells, maxBaselineFraction, ex);
    }

    /** This spec without exclusions (Monte Carlo replicas scan every range). */
    public ScanSpec withoutExclusions() {
        return new ScanSpec(direction, minCells, maxCells, maxBaselineFraction, List.of());
    }

    public ScanDirection direction() {
        return direction;
    }

    public long minCells() {
        return minCells;
    }

    public long maxCells() {
        return maxCells;
    }

    public double maxBaselineFraction() {
        return maxBaselineFraction;
    }

    public int excludedCount() {
        return excluded.size();
    }

    /** A copy of excluded box i. */
    public int[] excluded(int i) {
        return excluded.get(i).clone();
    }

    /** Largest quantized baseline a range may hold, from the fraction limit. */
    long maxBaseQ(ScanTables t) {
        if (maxBaselineFraction >= 1.0) {
            return Long.MAX_VALUE;
        }
        return (long) Math.floor(maxBaselineFraction * (double) t.baseTotalQ);
    }

    /** Excluded boxes flattened, 6 ints each (for the kernel). */
    int[] excludedFlat() {
        int[] out = new int[6 * excluded.size()];
        for (int i = 0; i < excluded.size(); i++) {
            System.arraycopy(excluded.get(i), 0, out, 6 * i, 6);
        }
        return out;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("ScanSpec(").append(direction.id()).append(", cells ").append(minCells)
                .append("..").append(maxCells == Long.MAX_VALUE ? "any" : String.valueOf(maxCells))
                .append(", baseline fraction <= ").append(maxBaselineFraction);
        for (int[] b : excluded) {
            sb.append(", excluding ").append(Arrays.toString(b));
        }
        return sb.append(')').toString();
    }
}
