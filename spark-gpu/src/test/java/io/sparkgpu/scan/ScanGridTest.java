package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Bad input gets a clear IllegalArgumentException naming the column and the cell. */
class ScanGridTest {
    static final String[] NAMES = {"cases_col", "pop_col", "ss_col"};
    static final ScanShape S3 = new ScanShape(3);

    private static void assertBad(Executable e, String... fragments) {
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, e);
        for (String f : fragments) {
            assertTrue(ex.getMessage().contains(f), "message '" + ex.getMessage() + "' should contain '" + f + "'");
        }
    }

    private static ScanGrid g(ScanModel m, double[] c, double[] b) {
        return ScanGrid.of(m, S3, c, b, null, NAMES);
    }

    @Test
    void negativeCountsAndBaselines() {
        assertBad(() -> g(ScanModel.POISSON, new double[] {1, -1, 0}, new double[] {1, 1, 1}), "cases_col", "cell (1)",
                "negative");
        assertBad(() -> g(ScanModel.POISSON, new double[] {1, 0, 0}, new double[] {1, -2, 1}), "pop_col", "negative");
        assertBad(() -> g(ScanModel.NORMAL, new double[] {1, 0, 2}, new double[] {1, -1, 1}), "pop_col", "negative");
    }

    @Test
    void casesAbovePopulationForBernoulli() {
        assertBad(() -> g(ScanModel.BERNOULLI, new double[] {1, 5, 0}, new double[] {3, 4, 3}), "cases_col", "cell (1)",
                "more cases than the population");
        assertBad(() -> g(ScanModel.BERNOULLI, new double[] {1, 0, 0}, new double[] {2.5, 4, 3}), "pop_col",
                "whole number");
    }

    @Test
    void zeroTotalBaselineAndZeroCases() {
        assertBad(() -> g(ScanModel.POISSON, new double[] {0, 0, 0}, new double[] {0, 0, 0}), "pop_col",
                "total baseline is 0");
        assertBad(() -> g(ScanModel.POISSON, new double[] {0, 0, 0}, new double[] {1, 1, 1}), "cases_col",
                "total number of cases is 0");
        assertBad(() -> g(ScanModel.POISSON, new double[] {0, 2, 0}, new double[] {1, 0, 1}), "cases_col",
                "baseline is 0");
    }

    @Test
    void nanAndInfinity() {
        assertBad(() -> g(ScanModel.POISSON, new double[] {0, Double.NaN, 0}, new double[] {1, 1, 1}), "cases_col",
                "not a finite number");
        assertBad(() -> g(ScanModel.EBP, new double[] {0, 1, 0}, new double[] {1, Double.POSITIVE_INFINITY, 1}),
                "pop_col", "not a finite number");
        assertBad(() -> ScanGrid.of(ScanModel.NORMAL, S3, new double[] {1, 2, 3}, new double[] {1, 1, 1},
                new double[] {1, Double.NaN, 9}, NAMES), "ss_col");
    }

    @Test
    void nonIntegerCountsAndShapeMismatch() {
        // fractional counts: Poisson models take them, Bernoulli says why it does not
        g(ScanModel.POISSON, new double[] {0.5, 1, 0}, new double[] {1, 1, 1});
        g(ScanModel.EBP, new double[] {0.5, 1, 0}, new double[] {1, 1, 1});
        assertBad(() -> g(ScanModel.BERNOULLI, new double[] {0.5, 1, 0}, new double[] {1, 1, 1}), "cases_col",
                "cell (0)", "fractional case count", "each case is one of the cell's individuals");
        assertBad(() -> g(ScanModel.POISSON, new double[] {0x1p-1000, 0, 0}, new double[] {1, 1, 1}), "cases_col",
                "below the smallest supported total 2^-960");
        assertBad(() -> ScanGrid.of(ScanModel.POISSON, S3, new double[] {1, 1}, new double[] {1, 1, 1}, null, NAMES),
                "3 cells");
    }

    @Test
    void emptyAndOversizedGrids() {
        assertBad(() -> new ScanShape(0), "empty");
        assertBad(() -> new ScanShape(), "1, 2 or 3 axes");
        assertBad(() -> new ScanShape(ScanShape.MAX_AXIS_1D + 1), "over the supported maximum");
        assertBad(() -> new ScanShape(ScanShape.MAX_AXIS_ND + 1, 2), "over the supported maximum");
    }

    @Test
    void normalModelNeedsVarianceAndEqualObservationsForReplicas() {
        assertBad(() -> ScanTables.of(g(ScanModel.NORMAL, new double[] {2, 2, 2}, new double[] {1, 1, 1})),
                "same value");
        ScanTables t = ScanTables.of(g(ScanModel.NORMAL, new double[] {2, 5, 1}, new double[] {1, 2, 1}));
        assertBad(() -> ScanReplicas.checkSupported(t), "same number of observations");
    }
}
