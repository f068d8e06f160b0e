package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Every LLR formula against values computed by hand (the logarithm itself: io.sparkgpu.common.DetMathTest). */
class ScanMathTest {

    @Test
    void poissonLlrHandComputed() {
        // c = 10 cases where 5 are expected, 20 cases in all: 10 ln 2 + 10 ln(10/15) = 10 ln(4/3)
        assertEquals(2.8768207245178083, ScanMath.poisson(10, 5, 15, 20, 0), 1e-14);
        // not a high-rate range
        assertEquals(0.0, ScanMath.poisson(2, 5, 15, 20, 0));
        // low rate: 2 ln(2/5) + 18 ln(18/15)
        assertEquals(1.4492065585428728, ScanMath.poisson(2, 5, 15, 20, 1), 1e-14);
        assertEquals(1.4492065585428728, ScanMath.poisson(2, 5, 15, 20, 2), 1e-14);
        assertEquals(0.0, ScanMath.poisson(10, 5, 15, 20, 1));
        // all cases inside: C ln(C/E)
        assertEquals(20 * Math.log(4), ScanMath.poisson(20, 5, 15, 20, 0), 1e-13);
        // zone without baseline, or with all of it
        assertEquals(0.0, ScanMath.poisson(0, 0, 20, 20, 2));
        assertEquals(0.0, ScanMath.poisson(20, 20, 0, 20, 2));
    }

    @Test
    void bernoulliLlrHandComputed() {
        // 8 cases of 10 inside, 12 of 90 outside, 20 of 100 overall
        double f = 20.0 / 100;
        double g = 80.0 / 100;
        assertEquals(9.695516067957206, ScanMath.bernoulli(8, 10, 20, 100, f, g, 0), 1e-13);
        assertEquals(0.0, ScanMath.bernoulli(8, 10, 20, 100, f, g, 1));
        // same rate inside and outside: nothing
        assertEquals(0.0, ScanMath.bernoulli(2, 10, 20, 100, f, g, 2), 1e-15);
    }

    @Test
    void normalLlrHandComputed() {
        // inside {5, 6}, outside {1, 2, 3}: V0 = 75 - 17^2/5 = 17.2, V1 = 75 - 121/2 - 36/3 = 2.5
        double v0 = 17.2;
        assertEquals(4.82154662986313, ScanMath.normal(11, 2, 5, 17, v0, 2.5, 0), 1e-13);
        assertEquals(0.0, ScanMath.normal(11, 2, 5, 17, v0, 2.5, 1));
        assertEquals(4.82154662986313, ScanMath.normal(11, 2, 5, 17, v0, 2.5, 2), 1e-13);
    }

    @Test
    void expectationBasedPoissonLlrHandComputed() {
        assertEquals(3.162907318741551, ScanMath.ebp(10, 4, 0), 1e-14);
        assertEquals(0.0, ScanMath.ebp(4, 10, 0));
        // low rate with no cases: the whole expectation
        assertEquals(7.5, ScanMath.ebp(0, 7.5, 1), 0.0);
    }
}
