package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.Backend;
import java.util.ArrayList;
import java.util.List;

/**
 * Isotonic regression of data held in arrays, without Spark, with the engine of the distributed trainer:
 * rows are split into feature ranges ("partitions": all rows of one feature value in one range), each range
 * is pooled and solved on its own, and the range solutions are merged pairwise in a tree by the decomposition
 * theorem. Scales come from global bounds, so the result has the same bits for any split.
 */
final class IsotonicLocal {
    private IsotonicLocal() {
    }

    /** One range: one partition of all rows. */
    public static IsotonicResult fit(double[] x, double[] y, double[] w, IsotonicConfig cfg) {
        return fit(x, y, w, cfg, new double[0], IsoColumns.DEFAULT);
    }

    /**
     * @param cuts strictly increasing feature values: range r holds the rows with cuts[r-1] <= x < cuts[r]
     */
    public static IsotonicResult fit(double[] x, double[] y, double[] w, IsotonicConfig cfg, double[] cuts,
                                     IsoColumns cols) {
        cfg.validate();
        int n = x.length;
        if (y.length != n || (w != null && w.length != n)) {
            throw new IllegalArgumentException("features, labels and weights must have the same length");
        }
        long positive = 0;
        for (int i = 0; i < n; i++) {
            double wi = w == null ? 1.0 : w[i];
            IsoPoints.check(x[i], y[i], wi, cols);
            if (wi > 0) {
                positive++;
            }
        }
        if (n == 0) {
            throw new IllegalArgumentException("isotonic regression needs at least one row; the input is empty");
        }
        if (positive == 0) {
            throw new IllegalArgumentException(cols.weight + ": every weight is 0; isotonic regression needs at least "
                    + "one row with a positive weight");
        }
        boolean isotonic = cfg.direction == IsotonicConfig.Direction.AUTO ? Spearman.increasing(x, y, n)
                : cfg.direction == IsotonicConfig.Direction.INCREASING;
        IsoScales sc = IsoScales.forData(y, w, n);
        int parts = cuts.length + 1;
        List<Object> solved = new ArrayList<>();
        long rows = 0;
        long zero = 0;
        String backend = "cpu";
        for (int r = 0; r < parts; r++) {
            int cnt = 0;
            for (int i = 0; i < n; i++) {
                if (inRange(x[i], cuts, r)) {
                    cnt++;
                }
            }
            double[] px = new double[cnt];
            double[] py = new double[cnt];
            double[] pw = w == null ? null : new double[cnt];
            int k = 0;
            for (int i = 0; i < n; i++) {
                if (inRange(x[i], cuts, r)) {
                    px[k] = x[i];
                    py[k] = y[i];
                    if (pw != null) {
                        pw[k] = w[i];
                    }
                    k++;
                }
            }
            IsotonicSolver.Solved p = IsotonicSolver.solveRows(px, py, pw, cnt, !isotonic, sc, cols, cfg);
            rows += p.rows;
            zero += p.zeroWeightRows;
            solved.add(p.blocks);
            if (p.gpu) {
                backend = "gpu";
            }
        }
        Object all = treeMerge(solved);
        FinalBlocks fb = all instanceof L1Blocks ? FinalBlocks.of((L1Blocks) all, sc, !isotonic)
                : FinalBlocks.of((L2Blocks) all, sc, !isotonic);
        return IsotonicResult.from(fb, isotonic, cfg.yMin, cfg.yMax, rows, zero, backend);
    }

    private static boolean inRange(double v, double[] cuts, int r) {
        double x = v + 0.0;
        return (r == 0 || x >= cuts[r - 1]) && (r == cuts.length || x < cuts[r]);
    }

    /** Pairwise merges of adjacent solutions, level by level (the same tree the Spark trainer builds). */
    static Object treeMerge(List<Object> parts) {
        List<Object> level = parts;
        while (level.size() > 1) {
            List<Object> next = new ArrayList<>();
            for (int i = 0; i < level.size(); i += 2) {
                if (i + 1 == level.size()) {
                    next.add(level.get(i));
                } else {
                    next.add(merge(level.get(i), level.get(i + 1)));
                }
            }
            level = next;
        }
        return level.get(0);
    }

    static Object merge(Object a, Object b) {
        if (a instanceof L1Blocks) {
            return L1Blocks.merge((L1Blocks) a, (L1Blocks) b);
        }
        return L2Blocks.merge((L2Blocks) a, (L2Blocks) b);
    }

    /** Convenience for the CPU twin with default settings. */
    public static IsotonicResult fitCpu(double[] x, double[] y, double[] w, boolean isotonic) {
        IsotonicConfig c = new IsotonicConfig();
        c.backend = Backend.CPU;
        c.direction = isotonic ? IsotonicConfig.Direction.INCREASING : IsotonicConfig.Direction.DECREASING;
        return fit(x, y, w, c);
    }
}
