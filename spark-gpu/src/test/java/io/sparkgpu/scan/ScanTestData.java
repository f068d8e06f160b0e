package io.sparkgpu.scan;

import java.util.Random;

/** Random grids for the scan tests (shared by the CPU and GPU tests, so no Spark types here). */
final class ScanTestData {
    private ScanTestData() {
    }

    /** A random valid grid of the model: counts with a planted hot box, baselines of mixed magnitudes. */
    static ScanGrid grid(ScanModel model, ScanShape shape, long seed) {
        Random r = new Random(seed);
        int cells = shape.cells();
        double[] c = new double[cells];
        double[] b = new double[cells];
        double[] q = model == ScanModel.NORMAL ? new double[cells] : null;
        int[] hot = randomBox(shape, r);
        for (int i = 0; i < cells; i++) {
            int x = i % shape.size(0);
            int y = (i / shape.size(0)) % shape.size(1);
            int z = i / (shape.size(0) * shape.size(1));
            boolean inHot = x >= hot[0] && x <= hot[1] && y >= hot[2] && y <= hot[3] && z >= hot[4] && z <= hot[5];
            switch (model) {
                case BERNOULLI: {
                    int pop = r.nextInt(8) == 0 ? 0 : 1 + r.nextInt(40);
                    double p = inHot ? 0.45 : 0.2;
                    int k = 0;
                    for (int j = 0; j < pop; j++) {
                        k += r.nextDouble() < p ? 1 : 0;
                    }
                    b[i] = pop;
                    c[i] = k;
                    break;
                }
                case NORMAL: { // two observations per cell, with some spread inside the cell
                    b[i] = 2;
                    c[i] = 2 * (r.nextGaussian() + (inHot ? 1.5 : 0) + 3);
                    q[i] = c[i] * c[i] / 2 + 0.1 + r.nextDouble();
                    break;
                }
                default: {
                    double base = r.nextInt(10) == 0 ? 0 : Math.exp(r.nextGaussian() * 1.5) * 20;
                    double mean = base * (model == ScanModel.EBP ? 0.05 : 0.01) * (inHot ? 3 : 1);
                    b[i] = model == ScanModel.EBP ? base * 0.05 : base;
                    c[i] = base == 0 ? 0 : poisson(r, mean);
                    break;
                }
            }
        }
        double totalBase = 0;
        for (double v : b) {
            totalBase += v;
        }
        if (totalBase == 0) {
            b[0] = 1;
        }
        if (model.countCases()) {
            double total = 0;
            for (double v : c) {
                total += v;
            }
            if (total == 0) { // keep the grid valid: one case in the first cell with a baseline
                for (int i = 0; i < cells; i++) {
                    if (b[i] > 0) {
                        c[i] = 1;
                        break;
                    }
                }
            }
        }
        return ScanGrid.of(model, shape, c, b, q, null);
    }

    /**
     * {@link #grid} of a Poisson model with fractional counts, as cases allocated to areas by population shares
     * give: each count times 0.73 plus a random share below 0.1 where the baseline is positive (not dyadic).
     */
    static ScanGrid fractional(ScanModel model, ScanShape shape, long seed) {
        ScanGrid g = grid(model, shape, seed);
        Random r = new Random(~seed);
        double[] c = g.casesArray();
        double[] b = g.baselineArray();
        for (int i = 0; i < c.length; i++) {
            c[i] = b[i] > 0 ? c[i] * 0.73 + 0.1 * r.nextDouble() : 0;
        }
        return ScanGrid.of(model, shape, c, b, null, null);
    }

    static int[] randomBox(ScanShape shape, Random r) {
        int[] box = new int[6];
        for (int k = 0; k < 3; k++) {
            int n = shape.size(k);
            int a = r.nextInt(n);
            int b = a + r.nextInt(Math.max(1, Math.min(n - a, 1 + n / 3)));
            box[2 * k] = a;
            box[2 * k + 1] = Math.min(b, n - 1);
        }
        return box;
    }

    static int poisson(Random r, double mean) {
        double l = Math.exp(-mean);
        int k = 0;
        double p = r.nextDouble();
        while (p > l) {
            p *= r.nextDouble();
            k++;
        }
        return k;
    }

    /**
     * Brute force with our arithmetic: every box, its exact quantized sums formed cell by cell (no prefix
     * tables), the LLR of {@link ScanTables#llr}, constraints checked directly. Must agree with the scan bit for
     * bit.
     */
    static ScanBest exactBrute(ScanTables t, long[] cellCases, long[] cellBase, ScanSpec spec) {
        ScanShape sh = t.shape();
        double best = Double.NEGATIVE_INFINITY;
        long bestIdx = -1;
        long maxBq = spec.maxBaseQ(t);
        for (long g = 0; g < sh.ranges(); g++) {
            int[] box = sh.decode(g);
            long cells = ScanShape.boxCells(box);
            if (cells < spec.minCells() || cells > spec.maxCells()) {
                continue;
            }
            boolean ex = false;
            for (int e = 0; e < spec.excludedCount(); e++) {
                ex |= ScanShape.overlap(box, spec.excluded(e));
            }
            if (ex) {
                continue;
            }
            long dc = 0;
            long db = 0;
            for (int z = box[4]; z <= box[5]; z++) {
                for (int y = box[2]; y <= box[3]; y++) {
                    for (int x = box[0]; x <= box[1]; x++) {
                        dc += cellCases[sh.cell(x, y, z)];
                        db += cellBase[sh.cell(x, y, z)];
                    }
                }
            }
            if (db > maxBq) {
                continue;
            }
            double llr = t.llr(dc, db, spec.direction().code());
            if (ScanBest.better(llr, g, best, bestIdx)) {
                best = llr;
                bestIdx = g;
            }
        }
        return bestIdx < 0 ? ScanBest.NONE : new ScanBest(best, bestIdx);
    }

    /** The quantized per-cell cases of a grid, formed without the prefix tables. */
    static long[] quantizedCases(ScanGrid grid, ScanTables t) {
        long[] out = new long[grid.shape().cells()];
        for (int c = 0; c < out.length; c++) {
            out[c] = (long) Math.rint(Math.scalb(grid.cases(c), t.casesShift)); // shift 0: whole counts
        }
        return out;
    }

    /** The quantized per-cell baselines (differences of the running sum used by the replicas). */
    static long[] quantizedBase(ScanTables t) {
        long[] out = new long[t.baseCum.length];
        for (int c = 0; c < out.length; c++) {
            out[c] = t.baseCum[c] - (c == 0 ? 0 : t.baseCum[c - 1]);
        }
        return out;
    }
}
