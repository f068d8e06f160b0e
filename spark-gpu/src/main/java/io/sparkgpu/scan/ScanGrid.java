package io.sparkgpu.scan;

import java.io.Serializable;
import java.util.Locale;

/**
 * A validated grid of cells (1-D, 2-D or 3-D, x fastest) with each cell's cases and baseline (and, for the
 * normal model, an optional sum of squares), in the units the {@link ScanModel} defines. Construction checks
 * every cell and throws {@link IllegalArgumentException} naming the column (as given in {@code names}) and
 * the cell: NaN or infinite values, negative counts or baselines, fractional counts of the Bernoulli model
 * (the Poisson models take fractional counts: {@link ScanModel#fractionalCases}), cases above the population
 * (Bernoulli), cases where the baseline is zero (Poisson models), a zero total. Nothing is dropped or clamped.
 */
public final class ScanGrid implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Largest total of cases of the count models (a Poisson replica allocates up to this many cases). */
    public static final long MAX_TOTAL_CASES = 1L << 53;

    /**
     * Smallest positive total of (fractional) cases, 2^-960: the tables hold cases in units of 2^-s with the total
     * near 2^60 ({@link ScanTables}), and 2^-s must stay a normal double.
     */
    public static final double MIN_TOTAL_CASES = 0x1p-960;

    private final ScanShape shape;
    private final ScanModel model;
    private final double[] cases;
    private final double[] baseline;
    private final double[] sumSquares;
    private final String[] names;

    private ScanGrid(ScanShape shape, ScanModel model, double[] cases, double[] baseline, double[] sumSquares,
                     String[] names) {
        this.shape = shape;
        this.model = model;
        this.cases = cases;
        this.baseline = baseline;
        this.sumSquares = sumSquares;
        this.names = names;
    }

    /** Default column names used in error messages: cases, baseline, sumSquares. */
    public static final String[] DEFAULT_NAMES = {"cases", "baseline", "sumSquares"};

    /**
     * A grid of {@code shape.cells()} cells (flattened with x fastest).
     *
     * @param cases      per cell: case count (Poisson, Bernoulli, EBP) or sum of observed values (normal)
     * @param baseline   per cell: population or expected count (Poisson), population (Bernoulli), expected
     *                   count (EBP), number of observations (normal)
     * @param sumSquares normal model only, may be null: per-cell sum of squared observations; when null each
     *                   cell's observations are taken to equal its mean (exact for one observation per cell)
     * @param names      names of the three inputs for error messages (null: {@link #DEFAULT_NAMES})
     */
    public static ScanGrid of(ScanModel model, ScanShape shape, double[] cases, double[] baseline, double[] sumSquares,
                              String[] names) {
        if (model == null || shape == null) {
            throw new IllegalArgumentException("model and shape are required");
        }
        String[] nm = names == null ? DEFAULT_NAMES : names;
        int cells = shape.cells();
        if (cases == null || baseline == null || cases.length != cells || baseline.length != cells) {
            throw new IllegalArgumentException("grid " + shape + " has " + cells + " cells, got "
                    + (cases == null ? "no" : cases.length) + " " + nm[0] + " and "
                    + (baseline == null ? "no" : baseline.length) + " " + nm[1] + " values");
        }
        if (sumSquares != null && model != ScanModel.NORMAL) {
            throw new IllegalArgumentException(nm[2] + " is only used by the normal model, not " + model.id());
        }
        if (sumSquares != null && sumSquares.length != cells) {
            throw new IllegalArgumentException("grid " + shape + " has " + cells + " cells, got " + sumSquares.length
                    + " " + nm[2] + " values");
        }
        ScanGrid g = new ScanGrid(shape, model, cases.clone(), baseline.clone(),
                sumSquares == null ? null : sumSquares.clone(), nm.clone());
        g.validate();
        return g;
    }

    private String where(int c) {
        int x = c % shape.size(0);
        int rest = c / shape.size(0);
        int y = rest % shape.size(1);
        int z = rest / shape.size(1);
        StringBuilder sb = new StringBuilder("cell (").append(x);
        if (shape.dims() > 1) {
            sb.append(", ").append(y);
        }
        if (shape.dims() > 2) {
            sb.append(", ").append(z);
        }
        return sb.append(')').toString();
    }

    private IllegalArgumentException bad(int name, int c, String what) {
        double v = name == 0 ? cases[c] : name == 1 ? baseline[c] : sumSquares[c];
        return new IllegalArgumentException(String.format(Locale.ROOT, "column '%s' at %s: %s (value %s)",
                names[name], where(c), what, v));
    }

    private void validate() {
        boolean counts = model.countCases();
        boolean integerBaseline = model == ScanModel.BERNOULLI || model == ScanModel.NORMAL;
        long totalCases = 0;
        double sumCases = 0;
        double totalBase = 0;
        for (int c = 0; c < cases.length; c++) {
            double v = cases[c];
            double b = baseline[c];
            if (!Double.isFinite(v)) {
                throw bad(0, c, "not a finite number");
            }
            if (!Double.isFinite(b)) {
                throw bad(1, c, "not a finite number");
            }
            if (b < 0) {
                throw bad(1, c, "negative " + (model == ScanModel.NORMAL ? "number of observations" : "baseline"));
            }
            if (integerBaseline && b != Math.rint(b)) {
                throw bad(1, c, "the " + model.id() + " model needs a whole number of "
                        + (model == ScanModel.NORMAL ? "observations" : "individuals"));
            }
            if (counts) {
                if (v < 0) {
                    throw bad(0, c, "negative case count");
                }
                if (v != Math.rint(v) && !model.fractionalCases()) {
                    throw bad(0, c, "a fractional case count; " + ScanModel.WHOLE_CASES_REASON);
                }
                if (v > 0 && b == 0) {
                    throw bad(0, c, model == ScanModel.BERNOULLI ? "cases in a cell with population 0"
                            : "cases in a cell whose baseline is 0 (the expected count there is 0)");
                }
                if (model == ScanModel.BERNOULLI && v > b) {
                    throw bad(0, c, "more cases than the population " + b + " of the cell");
                }
                sumCases += v;
                if (v > MAX_TOTAL_CASES || (totalCases += (long) v) > MAX_TOTAL_CASES || sumCases > MAX_TOTAL_CASES) {
                    throw new IllegalArgumentException("column '" + names[0] + "': total cases over the supported "
                            + "maximum of 2^53");
                }
            } else {
                if (b == 0 && v != 0) {
                    throw bad(0, c, "a value sum in a cell without observations");
                }
                if (sumSquares != null) {
                    double q = sumSquares[c];
                    if (!Double.isFinite(q) || q < 0) {
                        throw bad(2, c, "sum of squares must be a finite number >= 0");
                    }
                    if (b > 0 && q < v * v / b * (1 - 1e-9) - 1e-300) {
                        throw bad(2, c, "sum of squares below (sum)^2 / n of the cell");
                    }
                    if (b == 0 && q != 0) {
                        throw bad(2, c, "a sum of squares in a cell without observations");
                    }
                }
            }
            totalBase += b;
        }
        if (!(totalBase > 0)) {
            throw new IllegalArgumentException("column '" + names[1] + "': the total baseline is 0 (every cell has "
                    + "baseline 0), so no expected counts can be formed");
        }
        if (!Double.isFinite(totalBase) || (integerBaseline && totalBase >= 0x1p62)) {
            throw new IllegalArgumentException("column '" + names[1] + "': the total baseline " + totalBase
                    + " is too large");
        }
        if (counts && sumCases == 0) {
            throw new IllegalArgumentException("column '" + names[0] + "': the total number of cases is 0; there is "
                    + "nothing to scan for");
        }
        if (counts && sumCases < MIN_TOTAL_CASES) {
            throw new IllegalArgumentException("column '" + names[0] + "': the total number of cases " + sumCases
                    + " is below the smallest supported total 2^-960");
        }
        if (model == ScanModel.NORMAL && totalBase < 2) {
            throw new IllegalArgumentException("column '" + names[1] + "': the normal model needs at least two "
                    + "observations, got " + totalBase);
        }
    }

    public ScanShape shape() {
        return shape;
    }

    public ScanModel model() {
        return model;
    }

    /** Cases (or value sum) of cell c. */
    public double cases(int c) {
        return cases[c];
    }

    /** Baseline of cell c. */
    public double baseline(int c) {
        return baseline[c];
    }

    /** Sum of squares of cell c (normal model); s^2/n when none was given. */
    public double sumSquares(int c) {
        if (sumSquares != null) {
            return sumSquares[c];
        }
        return baseline[c] > 0 ? cases[c] * cases[c] / baseline[c] : 0.0;
    }

    public boolean hasSumSquares() {
        return sumSquares != null;
    }

    /** Copies of the per-cell values. */
    public double[] casesArray() {
        return cases.clone();
    }

    public double[] baselineArray() {
        return baseline.clone();
    }

    /** Input names used in messages: cases, baseline, sum of squares. */
    public String[] names() {
        return names.clone();
    }
}
