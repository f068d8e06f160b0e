package io.sparkgpu.common;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigInteger;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Int128Test {
    private static final BigInteger TWO64 = BigInteger.ONE.shiftLeft(64);

    private static BigInteger big(long lo, long hi) {
        return BigInteger.valueOf(hi).shiftLeft(64).add(new BigInteger(Long.toUnsignedString(lo)));
    }

    private static long[] pair(BigInteger v) {
        return new long[] {v.longValue(), v.shiftRight(64).longValue()};
    }

    private static BigInteger random(Random r, int bits, boolean signed) {
        BigInteger v = new BigInteger(1 + r.nextInt(bits), r);
        return signed && r.nextBoolean() ? v.negate() : v;
    }

    @Test
    void compareRatioMatchesBigIntegerCrossProducts() {
        Random r = new Random(7);
        for (int t = 0; t < 200_000; t++) {
            BigInteger s1 = random(r, 124, true);
            BigInteger s2 = t % 5 == 0 ? s1 : random(r, 124, true);
            BigInteger w1 = random(r, 124, false).add(BigInteger.ONE);
            BigInteger w2 = t % 7 == 0 ? w1 : random(r, 124, false).add(BigInteger.ONE);
            long[] a = pair(s1);
            long[] b = pair(w1);
            long[] c = pair(s2);
            long[] d = pair(w2);
            int expected = s1.multiply(w2).compareTo(s2.multiply(w1));
            assertEquals(expected, Int128.compareRatio(a[0], a[1], b[0], b[1], c[0], c[1], d[0], d[1]),
                    () -> s1 + "/" + w1 + " vs " + s2 + "/" + w2);
        }
    }

    @Test
    void compareRatioEqualFractionsWithDifferentTerms() {
        // 3/6 == 5/10, -7/2 < -3/1, 0/5 == 0/9
        assertEquals(0, Int128.compareRatio(3, 0, 6, 0, 5, 0, 10, 0));
        assertEquals(-1, Int128.compareRatio(-7, -1, 2, 0, -3, -1, 1, 0));
        assertEquals(0, Int128.compareRatio(0, 0, 5, 0, 0, 0, 9, 0));
        assertEquals(1, Int128.compareRatio(0, 0, 5, 0, -1, -1, 9, 0));
    }

    @Test
    void toDoubleIsCorrectlyRounded() {
        Random r = new Random(11);
        for (int t = 0; t < 100_000; t++) {
            BigInteger v = random(r, 126, true);
            if (t % 4 == 0) { // exact halfway cases (2^53 + odd) * 2^k, and just above them (sticky bits)
                v = BigInteger.ONE.shiftLeft(53).add(BigInteger.valueOf(1 + 2 * r.nextInt(4))).shiftLeft(r.nextInt(70));
                if (t % 8 == 0) {
                    v = v.add(BigInteger.ONE);
                }
            }
            long[] p = pair(v);
            BigInteger fv = v;
            // BigInteger.doubleValue is correctly rounded (ties to even)
            assertEquals(v.doubleValue(), Int128.toDouble(p[0], p[1]), () -> fv.toString());
        }
        assertEquals(0x1p64, Int128.unsignedToDouble(-1L));
        assertEquals(TWO64.doubleValue(), Int128.toDouble(0, 1));
    }
}
