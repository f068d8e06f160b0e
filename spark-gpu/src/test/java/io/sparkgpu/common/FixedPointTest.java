package io.sparkgpu.common;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class FixedPointTest {

    /** Exact value of trunc(v * 2^shift) computed with BigDecimal, independently of FixedPoint.add. */
    private static BigInteger reference(double v, int shift) {
        BigDecimal scaled = new BigDecimal(v).multiply(new BigDecimal(BigInteger.ONE.shiftLeft(Math.max(shift, 0))))
                .divide(new BigDecimal(BigInteger.ONE.shiftLeft(Math.max(-shift, 0))));
        return scaled.setScale(0, java.math.RoundingMode.DOWN).toBigIntegerExact();
    }

    @Test
    void quantizationMatchesBigDecimalTruncation() {
        Random r = new Random(1);
        for (int t = 0; t < 20000; t++) {
            double scale = Math.pow(10, r.nextInt(40) - 20);
            double v = (r.nextDouble() * 2 - 1) * scale;
            if (t % 7 == 0) {
                v = -v;
            }
            int shift = FixedPoint.shiftFor(Math.abs(v) * 1000 + Double.MIN_NORMAL);
            double[] m = FixedPoint.multipliers(shift);
            long[] acc = new long[2];
            FixedPoint.add(acc, 0, v, m[0], m[1]);
            assertEquals(reference(v, shift), FixedPoint.toBigInteger(acc, 0), "v=" + v + " shift=" + shift);
        }
    }

    @Test
    void sumsAreExactAndOrderIndependent() {
        Random r = new Random(2);
        List<Double> vals = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            vals.add((r.nextGaussian()) * Math.pow(2, r.nextInt(60) - 30));
        }
        double bound = 0;
        for (double v : vals) {
            bound += Math.abs(v);
        }
        int shift = FixedPoint.shiftFor(bound);
        double[] m = FixedPoint.multipliers(shift);
        long[] a = new long[2];
        BigInteger ref = BigInteger.ZERO;
        for (double v : vals) {
            FixedPoint.add(a, 0, v, m[0], m[1]);
            ref = ref.add(reference(v, shift));
        }
        assertEquals(ref, FixedPoint.toBigInteger(a, 0));
        Collections.shuffle(vals, new Random(3));
        long[] b = new long[2];
        long[] c = new long[2];
        for (int i = 0; i < vals.size(); i++) {
            FixedPoint.add(i % 3 == 0 ? b : c, 0, vals.get(i), m[0], m[1]);
        }
        FixedPoint.addPair(b, 0, c[0], c[1]);
        assertArrayEquals(a, b);
        // the decoded double is the correctly rounded exact sum (quantization error is far below one ulp)
        BigDecimal exact = BigDecimal.ZERO;
        for (double v : vals) {
            exact = exact.add(new BigDecimal(v));
        }
        double got = FixedPoint.toDouble(a, 0, shift);
        assertEquals(exact.doubleValue(), got, Math.ulp(got), "decoded sum");
    }

    @Test
    void carriesAcrossTheLowWordAndNegativeTotals() {
        double[] m = FixedPoint.multipliers(FixedPoint.shiftFor(4.0));
        int shift = FixedPoint.shiftFor(4.0);
        long[] acc = new long[2];
        for (int i = 0; i < 1000; i++) {
            FixedPoint.add(acc, 0, 0.7, m[0], m[1]);
            FixedPoint.add(acc, 0, -0.7, m[0], m[1]);
        }
        assertEquals(BigInteger.ZERO, FixedPoint.toBigInteger(acc, 0));
        FixedPoint.add(acc, 0, -1.25, m[0], m[1]);
        assertEquals(-1.25, FixedPoint.toDouble(acc, 0, shift), 0.0);
        assertEquals(new BigDecimal("-1.25").round(MathContext.DECIMAL64).doubleValue(), FixedPoint.toDouble(acc, 0, shift));
    }
}
