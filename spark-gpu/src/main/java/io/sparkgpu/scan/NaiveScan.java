package io.sparkgpu.scan;

/**
 * The textbook scan, kept as an independent reference and as the benchmark's baseline: every box of the grid,
 * its sums formed by adding its cells one by one from the raw double values (O(range size) per box, so
 * O(n^3) in 1-D and O(n^6) in 2-D), and the LLR formulas in their usual form with {@code StrictMath.log}.
 * It shares nothing with the fast path but {@link ScanShape#encode} for the tie-break, so agreement with
 * {@link ScanCpu} checks the prefix tables, the range mapping and the LLR arithmetic at once (to rounding).
 */
final class NaiveScan {
    private NaiveScan() {
    }

    /** The best box of the grid: larger LLR, then smaller global index. */
    public static ScanBest scan(ScanGrid grid, ScanSpec spec) {
        ScanShape sh = grid.shape();
        int nx = sh.size(0);
        int ny = sh.size(1);
        int nz = sh.size(2);
        double[] tot = totals(grid);
        double best = Double.NEGATIVE_INFINITY;
        long bestIdx = -1;
        int[] box = new int[6];
        for (int az = 0; az < nz; az++) {
            for (int bz = az; bz < nz; bz++) {
                for (int ay = 0; ay < ny; ay++) {
                    for (int by = ay; by < ny; by++) {
                        for (int ax = 0; ax < nx; ax++) {
                            for (int bx = ax; bx < nx; bx++) {
                                box[0] = ax;
                                box[1] = bx;
                                box[2] = ay;
                                box[3] = by;
                                box[4] = az;
                                box[5] = bz;
                                double llr = llrOfBox(grid, tot, spec, box);
                                if (Double.isNaN(llr)) {
                                    continue;
                                }
                                if (llr >= best) {
                                    long idx = sh.encode(box);
                                    if (ScanBest.better(llr, idx, best, bestIdx)) {
                                        best = llr;
                                        bestIdx = idx;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return bestIdx < 0 ? ScanBest.NONE : new ScanBest(best, bestIdx);
    }

    /** {total cases or value sum, total baseline, total sum of squares}. */
    static double[] totals(ScanGrid grid) {
        double c = 0;
        double b = 0;
        double q = 0;
        for (int i = 0; i < grid.shape().cells(); i++) {
            c += grid.cases(i);
            b += grid.baseline(i);
            if (grid.model() == ScanModel.NORMAL) {
                q += grid.sumSquares(i);
            }
        }
        return new double[] {c, b, q};
    }

    /**
     * The LLR of one box by direct summation, or NaN when the box is not allowed by {@code spec} (size, baseline
     * fraction, excluded boxes).
     */
    public static double llrOfBox(ScanGrid grid, double[] totals, ScanSpec spec, int[] box) {
        long cells = ScanShape.boxCells(box);
        if (cells < spec.minCells() || cells > spec.maxCells()) {
            return Double.NaN;
        }
        for (int e = 0; e < spec.excludedCount(); e++) {
            if (ScanShape.overlap(box, spec.excluded(e))) {
                return Double.NaN;
            }
        }
        ScanShape sh = grid.shape();
        double c = 0;
        double b = 0;
        for (int z = box[4]; z <= box[5]; z++) {
            for (int y = box[2]; y <= box[3]; y++) {
                for (int x = box[0]; x <= box[1]; x++) {
                    int i = sh.cell(x, y, z);
                    c += grid.cases(i);
                    b += grid.baseline(i);
                }
            }
        }
        if (b > spec.maxBaselineFraction() * totals[1] * (1 + 1e-12)) {
            return Double.NaN;
        }
        return llr(grid.model(), spec.direction(), c, b, totals);
    }

    /** The textbook LLR of a box with case (value) sum c and baseline b. */
    public static double llr(ScanModel model, ScanDirection dir, double c, double b, double[] totals) {
        double tc = totals[0];
        double tb = totals[1];
        switch (model) {
            case POISSON: {
                double e = tc * b / tb;
                if (b <= 0 || b >= tb || !wanted(dir, c - e)) {
                    return 0;
                }
                return xlog(c, c / e) + xlog(tc - c, (tc - c) / (tc - e));
            }
            case BERNOULLI: {
                double n = b;
                if (n <= 0 || n >= tb || !wanted(dir, c / n - (tc - c) / (tb - n))) {
                    return 0;
                }
                double inside = xlog(c, c / n) + xlog(n - c, (n - c) / n);
                double outside = xlog(tc - c, (tc - c) / (tb - n)) + xlog(tb - n - tc + c, (tb - n - tc + c) / (tb - n));
                double nul = xlog(tc, tc / tb) + xlog(tb - tc, (tb - tc) / tb);
                return Math.max(0, inside + outside - nul);
            }
            case NORMAL: {
                double n = b;
                if (n <= 0 || n >= tb) {
                    return 0;
                }
                double meanIn = c / n;
                double meanOut = (tc - c) / (tb - n);
                if (!wanted(dir, meanIn - meanOut)) {
                    return 0;
                }
                double v0 = totals[2] - tc * tc / tb;
                double v1 = totals[2] - c * c / n - (tc - c) * (tc - c) / (tb - n);
                return v1 <= 0 ? Double.POSITIVE_INFINITY : Math.max(0, tb / 2 * StrictMath.log(v0 / v1));
            }
            case EBP:
            default: {
                if (b <= 0 || !wanted(dir, c - b)) {
                    return 0;
                }
                return xlog(c, c / b) + b - c;
            }
        }
    }

    private static boolean wanted(ScanDirection dir, double insideMinusOutside) {
        switch (dir) {
            case HIGH:
                return insideMinusOutside > 0;
            case LOW:
                return insideMinusOutside < 0;
            case BOTH:
            default:
                return insideMinusOutside != 0;
        }
    }

    /** x ln(ratio), 0 when x is 0. */
    private static double xlog(double x, double ratio) {
        return x == 0 ? 0 : x * StrictMath.log(ratio);
    }
}
