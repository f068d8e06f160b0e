package io.sparkgpu.scan;

import java.io.Serializable;

/**
 * The sufficient statistics of a {@link ScanGrid} as exact integer prefix tables, which give the sums of any
 * box in O(1) by inclusion/exclusion, plus the constants of the model's LLR. This is what Spark tasks and the
 * GPU receive.
 *
 * <p><b>Tables.</b> For an axis layout of sizes n_x, n_y, n_z the table has (n_x+1)(n_y+1)(n_z+1) entries,
 * x fastest, and P[x, y, z] is the sum over the cells x' < x, y' < y, z' < z (zero on the lower borders). The
 * sum over the box [a_x, b_x] x [a_y, b_y] x [a_z, b_z] is the alternating sum of P over the 2^d corners
 * {a_k, b_k + 1}. All entries are 64-bit integers, so this is exact, whatever the cancellation:
 * <ul>
 *   <li>whole case counts are integers already (s = 0: the tables, LLRs and replicas of whole counts are what
 *       they were before fractional counts were accepted);</li>
 *   <li>fractional case counts (Poisson and expectation-based Poisson) are fixed point like the baseline:
 *       q = rint(c * 2^s), s the largest shift with the total below 2^61 (expectation-based Poisson: the total or a
 *       bound on a replica's Poisson total, whichever is larger). A box's case sum is the exact sum of the
 *       quantized cells, rounded once to a double and scaled by 2^-s (exact); a cell is off by at most 2^-62 of
 *       the total (counts that are multiples of 2^-s, e.g. halves or quarters, are exact). The sums depend on
 *       the grid only, so the same bits on the GPU and the CPU and for any partitioning;</li>
 *   <li>baselines are fixed point: q = rint(b * 2^s), s the largest shift with the total below 2^61
 *       (a positive baseline never quantizes to 0: it becomes 1). A box's baseline is an exact sum of the
 *       quantized cells, rounded once to a double; the quantization error per cell is at most 2^-62 of the
 *       total baseline. The Bernoulli and normal models need whole numbers and use s = 0 (no quantization);</li>
 *   <li>normal-model values likewise, with the shift chosen from the sum of their magnitudes.</li>
 * </ul>
 * Ranges outside a box never matter: the complement of a box's baseline is the exact integer B - b.
 *
 * <p><b>Replicas in the same units.</b> A Poisson replica allocates N whole cases and case k adds
 * {@link #replicaUnit} (+1 for k &lt; {@link #replicaExtra}) to its cell: N = C and unit 1 for whole counts; for a
 * fractional total C, N = C rounded half up (at least 1) and the units split the quantized total exactly, so each
 * case carries C / N and every replica's total equals the observed C bit for bit (the LLR's constants are the
 * observed ones). Expectation-based Poisson replicas are whole Poisson counts, each case 2^s units.
 */
public final class ScanTables implements Serializable {
    private static final long serialVersionUID = 1L;

    final ScanShape shape;
    final ScanModel model;
    /** Prefix table of cases (counts) or of fixed-point values (normal). */
    final long[] casesPrefix;
    /** Prefix table of the fixed-point baseline. */
    final long[] basePrefix;
    final int casesShift;
    final int baseShift;
    /** Total of the quantized cases (C, or the fixed-point value total) and of the quantized baseline. */
    final long casesTotalQ;
    final long baseTotalQ;
    /** 2^-casesShift: converts a fixed-point case sum to a value (1 for counts). */
    final double casesScale;
    /** Model constants (see {@link #llr}). */
    final double totalCases;
    final double totalBase;
    final double f;
    final double g;
    final double v0;
    final double halfN;
    /** Inclusive running sum of the quantized baseline over the flattened cells (replicas). */
    final long[] baseCum;
    /** Normal model: the non-empty cells and their fixed-point values (replicas permute the values). */
    final int[] valueCells;
    final long[] valueQ;
    /** Number of observations in each non-empty cell when they are all equal, else -1 (normal model). */
    final long equalObservations;
    /** Cases a Poisson or Bernoulli replica allocates (Poisson: N above; EBP draws its own). */
    final long replicaCases;
    /** Table units each replica case adds; cases k &lt; replicaExtra add one more (see the class comment). */
    final long replicaUnit;
    final long replicaExtra;
    /** Expectation-based Poisson: the most cases a replica may draw with these units (a bound never reached). */
    final long replicaCasesLimit;

    private ScanTables(ScanGrid grid) {
        shape = grid.shape();
        model = grid.model();
        int cells = shape.cells();
        long[] caseQ = new long[cells];
        long[] baseQ = new long[cells];

        // baseline: fixed point
        if (model == ScanModel.BERNOULLI || model == ScanModel.NORMAL) {
            baseShift = 0;
            for (int c = 0; c < cells; c++) {
                baseQ[c] = (long) grid.baseline(c);
            }
        } else {
            double total = 0;
            for (int c = 0; c < cells; c++) {
                total += grid.baseline(c);
            }
            baseShift = shiftFor(total);
            for (int c = 0; c < cells; c++) {
                double b = grid.baseline(c);
                long q = (long) Math.rint(Math.scalb(b, baseShift));
                baseQ[c] = b > 0 && q == 0 ? 1 : q;
            }
        }
        // cases: counts (whole, or fixed point when fractional), or fixed-point values
        if (model.countCases() && whole(grid)) {
            casesShift = 0;
            for (int c = 0; c < cells; c++) {
                caseQ[c] = (long) grid.cases(c);
            }
        } else if (model.countCases()) {
            double total = 0;
            for (int c = 0; c < cells; c++) {
                total += grid.cases(c);
            }
            casesShift = shiftFor(model == ScanModel.EBP ? Math.max(total, ebpReplicaBound(grid)) : total);
            for (int c = 0; c < cells; c++) {
                caseQ[c] = (long) Math.rint(Math.scalb(grid.cases(c), casesShift));
            }
        } else {
            double abs = 0;
            for (int c = 0; c < cells; c++) {
                abs += Math.abs(grid.cases(c));
            }
            casesShift = abs > 0 ? shiftFor(abs) : 0;
            for (int c = 0; c < cells; c++) {
                caseQ[c] = (long) Math.rint(Math.scalb(grid.cases(c), casesShift));
            }
        }
        casesScale = Math.scalb(1.0, -casesShift);
        casesPrefix = prefix(shape, caseQ);
        basePrefix = prefix(shape, baseQ);
        casesTotalQ = casesPrefix[casesPrefix.length - 1];
        baseTotalQ = basePrefix[basePrefix.length - 1];
        baseCum = new long[cells];
        long run = 0;
        for (int c = 0; c < cells; c++) {
            run += baseQ[c];
            baseCum[c] = run;
        }

        replicaCases = model == ScanModel.POISSON ? poissonReplicaCases(casesTotalQ, casesShift) : casesTotalQ;
        replicaUnit = model == ScanModel.POISSON ? casesTotalQ / replicaCases
                : model == ScanModel.EBP ? 1L << casesShift : 1;
        replicaExtra = model == ScanModel.POISSON ? casesTotalQ % replicaCases : 0;
        replicaCasesLimit = ((1L << 62) - 1) / replicaUnit;

        switch (model) {
            case POISSON:
                totalCases = casesTotalQ * casesScale;
                totalBase = baseTotalQ;
                f = totalCases / totalBase;
                g = 0;
                v0 = 0;
                halfN = 0;
                break;
            case BERNOULLI:
                totalCases = casesTotalQ;
                totalBase = baseTotalQ;
                f = totalCases / totalBase;
                g = (totalBase - totalCases) / totalBase;
                v0 = 0;
                halfN = 0;
                break;
            case EBP:
                totalCases = casesTotalQ * casesScale;
                totalBase = Math.scalb((double) baseTotalQ, -baseShift);
                f = Math.scalb(1.0, -baseShift);
                g = 0;
                v0 = 0;
                halfN = 0;
                break;
            case NORMAL:
            default:
                totalCases = casesTotalQ * casesScale;
                totalBase = baseTotalQ;
                f = 0;
                g = 0;
                v0 = totalSquaredDeviation(grid);
                halfN = 0.5 * totalBase;
                break;
        }

        if (model == ScanModel.NORMAL) {
            int nonEmpty = 0;
            for (int c = 0; c < cells; c++) {
                if (baseQ[c] > 0) {
                    nonEmpty++;
                }
            }
            valueCells = new int[nonEmpty];
            valueQ = new long[nonEmpty];
            long obs = -2;
            int k = 0;
            for (int c = 0; c < cells; c++) {
                if (baseQ[c] > 0) {
                    valueCells[k] = c;
                    valueQ[k++] = caseQ[c];
                    obs = obs == -2 || obs == baseQ[c] ? baseQ[c] : -1;
                }
            }
            equalObservations = obs;
        } else {
            valueCells = null;
            valueQ = null;
            equalObservations = -1;
        }
    }

    /** Builds the tables of a validated grid. */
    public static ScanTables of(ScanGrid grid) {
        return new ScanTables(grid);
    }

    /** True when every cell's cases are a whole number. */
    private static boolean whole(ScanGrid grid) {
        for (int c = 0; c < grid.shape().cells(); c++) {
            if (grid.cases(c) != Math.rint(grid.cases(c))) {
                return false;
            }
        }
        return true;
    }

    /**
     * A bound on the Poisson(B) total of an expectation-based replica, B the total baseline: B + 40 sqrt(B) + 100,
     * beyond which the probability is below e^-500 (Chernoff); the fixed-point units admit twice that, and a replica
     * above it is refused ({@link ScanReplicas#casesOf}).
     */
    private static double ebpReplicaBound(ScanGrid grid) {
        double b = 0;
        for (int c = 0; c < grid.shape().cells(); c++) {
            b += grid.baseline(c);
        }
        return b + 40 * Math.sqrt(b) + 100;
    }

    /**
     * N, the whole cases of a Poisson replica: the quantized total {@code casesTotalQ} (units 2^-shift) rounded half
     * up to a whole number, at least 1; {@code casesTotalQ} itself for whole counts (shift 0).
     */
    static long poissonReplicaCases(long casesTotalQ, int shift) {
        if (shift == 0) {
            return casesTotalQ;
        }
        long n = shift >= 62 ? 0 : (casesTotalQ + (1L << (shift - 1))) >>> shift;
        return Math.max(1, n);
    }

    /** Largest s such that a non-negative total bounded by {@code total} (with slack) stays below 2^61 after scaling by 2^s. */
    static int shiftFor(double total) {
        double bound = total * (1 + 1e-8) + Double.MIN_NORMAL;
        return 60 - Math.getExponent(bound);
    }

    /** Sum of squared deviations of all observations from their mean: within cells plus between cells. */
    private static double totalSquaredDeviation(ScanGrid grid) {
        int cells = grid.shape().cells();
        double s = 0;
        double n = 0;
        for (int c = 0; c < cells; c++) {
            s += grid.cases(c);
            n += grid.baseline(c);
        }
        double mean = s / n;
        double within = 0;
        double between = 0;
        for (int c = 0; c < cells; c++) {
            double nc = grid.baseline(c);
            if (nc > 0) {
                double sc = grid.cases(c);
                within += Math.max(0.0, grid.sumSquares(c) - sc * sc / nc);
                double d = sc / nc - mean;
                between += nc * d * d;
            }
        }
        double v = within + between;
        if (!(v > 0)) {
            throw new IllegalArgumentException("column '" + grid.names()[0] + "': every observation has the same "
                    + "value, so the normal model has no variance to explain");
        }
        return v;
    }

    /**
     * The prefix table of per-cell values {@code cellValues} (flattened, x fastest): values placed at
     * (x+1, y+1, z+1), then running sums along each axis.
     */
    public static long[] prefix(ScanShape shape, long[] cellValues) {
        long[] p = new long[shape.tableLength()];
        int cells = shape.cells();
        for (int c = 0; c < cells; c++) {
            p[shape.tableIndexOfCell(c)] = cellValues[c];
        }
        prefixInPlace(shape, p);
        return p;
    }

    /** Running sums along every axis of a table that holds cell values at their shifted positions. */
    static void prefixInPlace(ScanShape shape, long[] p) {
        int len = p.length;
        for (int k = 0; k < shape.dims(); k++) {
            int stride = shape.tableStride(k);
            int extent = shape.size(k) + 1;
            int block = stride * extent;
            for (int base = 0; base < len; base += block) {
                for (int off = 0; off < stride; off++) {
                    int i = base + off;
                    long run = 0;
                    for (int j = 0; j < extent; j++, i += stride) {
                        run += p[i];
                        p[i] = run;
                    }
                }
            }
        }
    }

    /**
     * The exact sum of a box from a prefix table: box = {a_x, b_x, a_y, b_y, a_z, b_z} (inclusive; unused axes
     * {0, 0}).
     */
    public long boxSum(long[] table, int[] box) {
        int sy = shape.tableStride(1);
        int sz = shape.tableStride(2);
        long s = 0;
        for (int corner = 0; corner < (1 << shape.dims()); corner++) {
            int idx = 0;
            int sign = 1;
            for (int k = 0; k < shape.dims(); k++) {
                boolean upper = (corner >> k & 1) != 0;
                int coord = upper ? box[2 * k + 1] + 1 : box[2 * k];
                if (!upper) {
                    sign = -sign;
                }
                idx += coord * (k == 0 ? 1 : k == 1 ? sy : sz);
            }
            s += sign * table[idx];
        }
        return s;
    }

    /**
     * LLR of a box with quantized case sum {@code dc} and quantized baseline {@code db}: the CPU twin of the
     * kernel's evaluation, the same operations in the same order.
     */
    public double llr(long dc, long db, int direction) {
        switch (model) {
            case POISSON:
                return ScanMath.poisson((double) dc * casesScale, (double) db * f, (double) (baseTotalQ - db) * f,
                        totalCases, direction);
            case BERNOULLI:
                return ScanMath.bernoulli((double) dc, (double) db, totalCases, totalBase, f, g, direction);
            case NORMAL:
                return ScanMath.normal((double) dc * casesScale, (double) db, totalBase, totalCases, v0, halfN,
                        direction);
            case EBP:
            default:
                return ScanMath.ebp((double) dc * casesScale, (double) db * f, direction);
        }
    }

    /** Cases (or value sum) and expected count of a box: {observed, expected}. */
    public double[] observedExpected(long dc, long db) {
        switch (model) {
            case POISSON:
            case EBP:
                return new double[] {(double) dc * casesScale, (double) db * f};
            case BERNOULLI:
                return new double[] {(double) dc, (double) db * f};
            case NORMAL:
            default:
                // value sum and the sum expected from the overall mean
                return new double[] {(double) dc * casesScale, (double) db * (totalCases / totalBase)};
        }
    }

    /**
     * Relative risk of a box: (observed/expected inside) / (observed/expected outside) for the count models
     * (SaTScan's definition; EBP: observed/expected inside), the ratio of the means inside and outside for the
     * normal model. NaN where undefined.
     */
    public double relativeRisk(long dc, long db) {
        double[] oe = observedExpected(dc, db);
        switch (model) {
            case POISSON:
            case BERNOULLI: {
                double outObs = totalCases - oe[0];
                double outExp = (double) (baseTotalQ - db) * f;
                return (oe[0] / oe[1]) / (outObs / outExp);
            }
            case EBP:
                return oe[0] / oe[1];
            case NORMAL:
            default: {
                double nIn = db;
                double nOut = totalBase - nIn;
                return (oe[0] / nIn) / ((totalCases - oe[0]) / nOut);
            }
        }
    }

    public ScanShape shape() {
        return shape;
    }

    public ScanModel model() {
        return model;
    }

    /** Total cases (count models) or total of the values (normal). */
    public double totalCases() {
        return totalCases;
    }

    /** Total baseline in the input's units. */
    public double totalBaseline() {
        return model == ScanModel.POISSON ? Math.scalb((double) baseTotalQ, -baseShift) : totalBase;
    }

    /** The quantized baseline total (the integer the fraction limit is applied to). */
    public long baselineTotalQ() {
        return baseTotalQ;
    }

    /** Copies of the prefix tables (for tests and for the GPU upload). */
    public long[] casesPrefix() {
        return casesPrefix.clone();
    }

    public long[] basePrefix() {
        return basePrefix.clone();
    }

    public int baseShift() {
        return baseShift;
    }

    public int casesShift() {
        return casesShift;
    }
}
