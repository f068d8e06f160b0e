package io.sparkgpu.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.KernelHeader;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The deterministic exp and logarithms: bit for bit the values of the implementations they replace (TsneMath.exp/log,
 * ScanMath.log, recorded before the fold into one class), close to StrictMath, and the constants the CUDA twin
 * (include/detmath.cuh) states. (The GPU side: TsneAffinitiesGpuTest.mathMatchesCpuTwinBitwise for exp/log; the
 * scan GPU tests compare LLRs, which use tableLog.)
 */
class DetMathTest {

    /** x, exp(x), log(x), tableLog(x) as raw bits, recorded from TsneMath.exp, TsneMath.log and ScanMath.log. */
    private static final long[][] KNOWN = {
        {0x3FF0000000000000L, 0x4005BF0A8B145769L, 0x0000000000000000L, 0x0000000000000000L}, // 1.0
        {0x4000000000000000L, 0x401D8E64B8D4DDAEL, 0x3FE62E42FEFA39EFL, 0x3FE62E42FEFA39EFL}, // 2.0
        {0x3FE0000000000000L, 0x3FFA61298E1E069CL, 0xBFE62E42FEFA39EFL, 0xBFE62E42FEFA39EFL}, // 0.5
        {0x4024000000000000L, 0x40D5829DCF95055FL, 0x40026BB1BBB55516L, 0x40026BB1BBB55516L}, // 10.0
        {0x3FB999999999999AL, 0x3FF1AEC7B35A00D4L, 0xC0026BB1BBB55515L, 0xC0026BB1BBB55516L}, // 0.1
        {0x01A56E1FC2F8F359L, 0x3FF0000000000000L, 0xC085963447F87FB5L, 0xC085963447F87FB5L}, // 1.0E-300
        {0x7E37E43C8800759CL, 0x7FF0000000000000L, 0x4085963447F87FB5L, 0x4085963447F87FB6L}, // 1.0E300
        {0x0000000000000001L, 0x3FF0000000000000L, 0xC0874385446D71C3L, 0xC0874385446D71C3L}, // 4.9E-324
        {0x0010000000000000L, 0x3FF0000000000000L, 0xC086232BDD7ABCD2L, 0xC086232BDD7ABCD2L}, // 2.2250738585072014E-308
        {0x0005555555555555L, 0x3FF0000000000000L, 0xC0862BF5D2B81354L, 0xC0862BF5D2B81354L}, // 7.41691286169067E-309
        {0x7FEFFFFFFFFFFFFFL, 0x7FF0000000000000L, 0x40862E42FEFA39EFL, 0x40862E42FEFA39EFL}, // 1.7976931348623157E308
        {0x3FF0000000000001L, 0x4005BF0A8B14576BL, 0x3CB0000000000000L, 0x3CAFFFFFFFFFFFFFL}, // 1.0000000000000002
        {0x3FEFFFFFFFFFFFFFL, 0x4005BF0A8B145769L, 0xBCA0000000000000L, 0xBCA0000000000000L}, // 0.9999999999999999
        {0x3FF6A09E667F3BCDL, 0x401073F7E8448776L, 0x3FD62E42FEFA39F0L, 0x3FD62E42FEFA39F0L}, // 1.4142135623730951
        {0x3FF6A09E667F3BCCL, 0x401073F7E8448775L, 0x3FD62E42FEFA39EDL, 0x3FD62E42FEFA39EEL}, // 1.414213562373095
        {0x3FE6A09E667F3BCDL, 0x4000399458F5A0D7L, 0xBFD62E42FEFA39EEL, 0xBFD62E42FEFA39EEL}, // 0.7071067811865476
        {0x3FF000000044B830L, 0x4005BF0A8B71BDACL, 0x3E112E0BFFDB1B44L, 0x3E112E0BFFDB1B44L}, // 1.000000001
        {0x3FEFFFFFFF768FA1L, 0x4005BF0A8AB6F127L, 0xBE112E0BE024E4BCL, 0xBE112E0BE024E4BCL}, // 0.999999999
        {0x4008000000000000L, 0x403415E5BF6FB106L, 0x3FF193EA7AAD030BL, 0x3FF193EA7AAD030BL}, // 3.0
        {0x401E000000000000L, 0x409C402B6EB1F6ADL, 0x40001E85798EB9A3L, 0x40001E85798EB9A3L}, // 7.5
        {0x40FE240C9FBE76C9L, 0x7FF0000000000000L, 0x40277281CAD8A844L, 0x40277281CAD8A844L}, // 123456.789
        {0x44DFE185CA57C517L, 0x7FF0000000000000L, 0x404B60A08FB35901L, 0x404B60A08FB35901L}, // 6.02214076E23
        {0xBFE0000000000000L, 0x3FE368B2FC6F960AL, 0x7FF8000000000000L, 0x7FF8000000000000L}, // -0.5
        {0xBFF0000000000000L, 0x3FD78B56362CEF38L, 0x7FF8000000000000L, 0x7FF8000000000000L}, // -1.0
        {0xC024000000000000L, 0x3F07CD79B5647C9BL, 0x7FF8000000000000L, 0x7FF8000000000000L}, // -10.0
        {0xC059000000000000L, 0x36EA8C1F14E2AF5DL, 0x7FF8000000000000L, 0x7FF8000000000000L}, // -100.0
        {0xC085E00000000000L, 0x00D14F2B0FB9307FL, 0x7FF8000000000000L, 0x7FF8000000000000L}, // -700.0
        {0xC087480000000000L, 0x0000000000000001L, 0x7FF8000000000000L, 0x7FF8000000000000L}, // -745.0
        {0xC08748CCCCCCCCCDL, 0x0000000000000001L, 0x7FF8000000000000L, 0x7FF8000000000000L}, // -745.1
        {0x4086280000000000L, 0x7FDD422D2BE5DC9BL, 0x401A416357D87F55L, 0x401A416357D87F55L}, // 709.0
        {0x3EE4F8B588E368F1L, 0x3FF0000A7C5E340EL, 0xC027069E2AA2AA5BL, 0xC027069E2AA2AA5BL}, // 1.0E-5
        {0xBEE4F8B588E368F1L, 0x3FEFFFEB07515653L, 0x7FF8000000000000L, 0x7FF8000000000000L}, // -1.0E-5
        {0x3FD3333333333333L, 0x3FF599058C8C1A96L, 0xBFF34378FCBDA721L, 0xBFF34378FCBDA720L}, // 0.3
        {0x4045000000000000L, 0x43B823255820115AL, 0x400DE6BF542E3D2DL, 0x400DE6BF542E3D2DL}, // 42.0
    };

    private static void assertBits(double want, double got, String what) {
        assertEquals(Double.doubleToRawLongBits(want), Double.doubleToRawLongBits(got),
                what + ": " + got + " instead of " + want);
    }

    @Test
    void knownValuesBitForBit() {
        for (long[] k : KNOWN) {
            double x = Double.longBitsToDouble(k[0]);
            assertBits(Double.longBitsToDouble(k[1]), DetMath.exp(x), "exp(" + x + ")");
            assertBits(Double.longBitsToDouble(k[2]), DetMath.log(x), "log(" + x + ")");
            assertBits(Double.longBitsToDouble(k[3]), DetMath.tableLog(x), "tableLog(" + x + ")");
        }
    }

    /** Hashes of 200 000 results over every magnitude, recorded from the replaced implementations. */
    @Test
    void checksumsOfManyArguments() {
        SplittableRandom r = new SplittableRandom(20251125L);
        long he = 0;
        long hl = 0;
        long ht = 0;
        for (int i = 0; i < 200_000; i++) {
            double x = i % 2 == 0 ? Double.longBitsToDouble(r.nextLong() & 0x7FEFFFFFFFFFFFFFL)
                    : r.nextDouble(-800, 800);
            he = he * 31 + Double.doubleToRawLongBits(DetMath.exp(x));
            hl = hl * 31 + Double.doubleToRawLongBits(DetMath.log(x));
            ht = ht * 31 + Double.doubleToRawLongBits(DetMath.tableLog(x));
        }
        assertEquals(0xA4301388957BB149L, he, "exp");
        assertEquals(0x2367EF5C81005E0DL, hl, "log");
        assertEquals(0x68972134D5C6E0A1L, ht, "tableLog");
        double[] t = DetMath.logTable();
        long h = 0;
        for (double v : t) {
            h = h * 31 + Double.doubleToRawLongBits(v);
        }
        assertEquals(2 * DetMath.LOG_TABLE_ENTRIES, t.length);
        assertEquals(0x0C029117A973BF01L, h, "log table");
    }

    @Test
    void specialValues() {
        for (double x : new double[] {0.0, -0.0}) {
            assertEquals(Double.NEGATIVE_INFINITY, DetMath.log(x));
            assertEquals(Double.NEGATIVE_INFINITY, DetMath.tableLog(x));
            assertEquals(1.0, DetMath.exp(x));
        }
        for (double x : new double[] {-1.0, Double.NEGATIVE_INFINITY, Double.NaN, -Double.MIN_VALUE}) {
            assertTrue(Double.isNaN(DetMath.log(x)), "log(" + x + ")");
            assertTrue(Double.isNaN(DetMath.tableLog(x)), "tableLog(" + x + ")");
        }
        assertEquals(Double.POSITIVE_INFINITY, DetMath.log(Double.POSITIVE_INFINITY));
        assertEquals(Double.POSITIVE_INFINITY, DetMath.tableLog(Double.POSITIVE_INFINITY));
        assertEquals(Double.POSITIVE_INFINITY, DetMath.exp(Double.POSITIVE_INFINITY));
        assertEquals(Double.POSITIVE_INFINITY, DetMath.exp(709.5));
        assertEquals(0.0, DetMath.exp(Double.NEGATIVE_INFINITY));
        assertEquals(0.0, DetMath.exp(-800));
        assertTrue(Double.isNaN(DetMath.exp(Double.NaN)));
        assertEquals(0.0, DetMath.log(1.0));
        assertEquals(0.0, DetMath.tableLog(1.0));
    }

    private static void assertClose(double want, double got, double ulps, String what) {
        double ulp = Math.ulp(want);
        assertTrue(Math.abs(got - want) <= ulps * ulp, what + " = " + got + ", StrictMath " + want + ", "
                + Math.abs(got - want) / ulp + " ulp apart");
    }

    /** tableLog within 2 ulp of StrictMath (formerly in ScanMathTest). */
    @Test
    void tableLogMatchesStrictMathWithinTwoUlps() {
        Random r = new Random(7);
        for (int i = 0; i < 200_000; i++) {
            double x = Math.scalb(1 + r.nextDouble(), r.nextInt(200) - 100);
            assertClose(StrictMath.log(x), DetMath.tableLog(x), 2, "tableLog(" + x + ")");
        }
        for (int k = 1; k <= 15; k++) {
            double d = Math.pow(10, -k);
            assertClose(StrictMath.log(1 + d), DetMath.tableLog(1 + d), 2, "tableLog(1 + " + d + ")");
            assertClose(StrictMath.log(1 - d), DetMath.tableLog(1 - d), 2, "tableLog(1 - " + d + ")");
        }
        for (double x : new double[] {Double.MIN_VALUE, 3 * Double.MIN_VALUE, Double.MIN_NORMAL / 3, Double.MIN_NORMAL,
                Double.MAX_VALUE, Math.nextUp(1.0), Math.nextDown(1.0), Math.sqrt(2), Math.nextDown(Math.sqrt(2)),
                0.5, 2, 0.75, 1.5, 0.7071067811865476, 1e-300, 1e300}) {
            assertClose(StrictMath.log(x), DetMath.tableLog(x), 2, "tableLog(" + x + ")");
        }
    }

    /** exp and log within 4 ulp of Math (formerly in TsneAffinitiesTest). */
    @Test
    void expAndLogAreCloseToJavaMath() {
        Random r = new Random(3);
        for (int t = 0; t < 200000; t++) {
            double x = t < 1000 ? -t * 0.75 : -r.nextDouble() * 800 + (t % 5 == 0 ? 700 : 0);
            double e = DetMath.exp(x);
            double want = Math.exp(x);
            if (x > 709.0) {
                continue;
            }
            if (want > Double.MIN_NORMAL) {
                assertEquals(want, e, 4 * Math.ulp(want), "exp(" + x + ")");
            } else {
                assertEquals(want, e, 2 * Double.MIN_VALUE, "exp(" + x + ")");
            }
            double y = Math.abs(r.nextGaussian()) * Math.pow(10, r.nextInt(600) - 300);
            assertEquals(Math.log(y), DetMath.log(y), 4 * Math.ulp(Math.log(y)) + 1e-300, "log(" + y + ")");
        }
        assertEquals(Math.log(Double.MIN_VALUE), DetMath.log(Double.MIN_VALUE), 1e-12);
    }

    /** The two logarithms are different functions (hence both stay): many arguments near 1 tell them apart. */
    @Test
    void theTwoLogarithmsDiffer() {
        SplittableRandom r = new SplittableRandom(1);
        int differ = 0;
        for (int i = 0; i < 10_000; i++) {
            double x = r.nextDouble(0.5, 2.0);
            if (DetMath.log(x) != DetMath.tableLog(x)) {
                differ++;
            }
        }
        assertTrue(differ > 1000, differ + " of 10000 differ");
    }

    /** The constants of include/detmath.cuh are DetMath's. */
    @Test
    void cudaHeaderStatesTheSameConstants() {
        KernelHeader h = KernelHeader.load("include/detmath.cuh");
        assertBits(DetMath.LN2_HI, h.doubleValue("DM_LN2_HI"), "DM_LN2_HI");
        assertBits(DetMath.LN2_LO, h.doubleValue("DM_LN2_LO"), "DM_LN2_LO");
        h.assertValue("DM_LOG_TABLE_JMIN", DetMath.LOG_TABLE_J_MIN);
        h.assertValue("DM_LOG_TABLE_ENTRIES", DetMath.LOG_TABLE_ENTRIES);
        h.assertAllCompared();
    }
}
