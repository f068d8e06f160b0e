package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** The order keys of tsne_minmax (mirrored here) decode back exactly and order doubles as Math.min/max do. */
class TsneDeviceStateTest {

    /** The kernel's key: bits ^ (sign ? ~0 : 2^63). */
    private static long key(double v) {
        long b = Double.doubleToRawLongBits(v);
        return b ^ (b < 0 ? -1L : Long.MIN_VALUE);
    }

    @Test
    void keysRoundTripAndOrderLikeMathMinMax() {
        Random rnd = new Random(3);
        double[] v = new double[2000];
        for (int i = 0; i < v.length; i++) {
            v[i] = (rnd.nextDouble() - 0.5) * Math.pow(10, rnd.nextInt(40) - 20);
        }
        double[] special = {0.0, -0.0, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MAX_VALUE, -Double.MAX_VALUE,
            Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1.0, -1.0};
        System.arraycopy(special, 0, v, 0, special.length);
        for (double x : v) {
            assertEquals(Double.doubleToRawLongBits(x), Double.doubleToRawLongBits(TsneDeviceState.fromKey(key(x))));
        }
        for (int t = 0; t < 20000; t++) {
            double a = v[rnd.nextInt(v.length)];
            double b = v[rnd.nextInt(v.length)];
            long ka = key(a);
            long kb = key(b);
            double min = Long.compareUnsigned(ka, kb) <= 0 ? a : b;
            double max = Long.compareUnsigned(ka, kb) >= 0 ? a : b;
            assertEquals(Double.doubleToRawLongBits(Math.min(a, b)), Double.doubleToRawLongBits(min), a + " " + b);
            assertEquals(Double.doubleToRawLongBits(Math.max(a, b)), Double.doubleToRawLongBits(max), a + " " + b);
        }
        // a NaN of either sign falls outside [-inf, +inf], so a diverged coordinate shows in the bounds
        long lo = key(Double.NEGATIVE_INFINITY);
        long hi = key(Double.POSITIVE_INFINITY);
        for (long bits : new long[] {0x7FF8000000000000L, 0xFFF8000000000000L, 0x7FF0000000000001L}) {
            long k = key(Double.longBitsToDouble(bits));
            assertTrue(Long.compareUnsigned(k, lo) < 0 || Long.compareUnsigned(k, hi) > 0, Long.toHexString(bits));
            assertTrue(Double.isNaN(TsneDeviceState.fromKey(k)));
        }
    }
}
