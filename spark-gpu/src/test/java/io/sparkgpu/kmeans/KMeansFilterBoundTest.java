package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * CPU-only checks of the FP32 screening used by the kmeans_filt_* kernels, through a Java replica of the
 * kernel's arithmetic ({@link KMeansFilterEmulator}): the error bound of kmeans.cu holds even without its
 * safety factor (checked against exact BigDecimal values of the twin's FP64 distances), the decision plus
 * recheck gives the CPU twin's labels on adversarial data, rechecks happen on near-ties and stay rare on
 * separated blobs. The GPU itself is compared with the twin in {@link KMeansGpuTest}.
 */
class KMeansFilterBoundTest {

    private static int[] twinLabels(KMeansAdversarialData a) {
        int[] labels = new int[a.data.n];
        KMeansCpu.step(a.data, a.centres, a.k, false, null, false, labels, null, false);
        return labels;
    }

    @Test
    void boundHoldsWithoutItsSafetyFactorOnAdversarialData() {
        Random r = new Random(11);
        int checked = 0;
        double worst = 0;
        for (String kind : KMeansAdversarialData.KINDS) {
            for (int d : new int[] {1, 3, 5, 31, 32, 33, 64}) {
                for (int k : new int[] {1, 2, 3, 17}) {
                    KMeansAdversarialData a = KMeansAdversarialData.make(kind, r, 40, d, k);
                    KMeansGpu.Filter fl = KMeansGpu.Filter.of(a.centres, a.k, d);
                    assertNotNull(fl, a.toString());
                    KMeansFilterEmulator em = KMeansFilterEmulator.create();
                    for (int i = 0; i < a.data.n; i++) {
                        assertTrue(em.checkBound(fl, a.data.x, i, a.centres, a.k, d), a + " point " + i);
                        checked++;
                    }
                    worst = Math.max(worst, em.worstRatio);
                }
            }
        }
        System.out.printf("filter bound: %d points, worst |e - T| / (B / safety) = %.3g%n", checked, worst);
        assertTrue(checked > 5000, "points checked: " + checked);
        // the bound is rigorous, so the observed error must stay below it, and it should not be absurdly loose
        assertTrue(worst <= 1.0, "worst |e - T| / B: " + worst);
        assertTrue(worst > 1e-4, "bound far looser than needed? worst ratio " + worst);
    }

    /**
     * At d = 1 and 2 the derived bound is nearly attained (the input rounding, the one FMA and the norm
     * rounding can all point the same way), so this probes many points there: the bound without its safety
     * factor must still hold everywhere.
     */
    @Test
    void boundHoldsWhereItIsNearlyTight() {
        Random r = new Random(14);
        double worst = 0;
        for (String kind : new String[] {"far", "huge", "gauss", "mixed"}) {
            for (int d : new int[] {1, 2}) {
                for (int rep = 0; rep < 40; rep++) {
                    KMeansAdversarialData a = KMeansAdversarialData.make(kind, r, 250, d, 2 + rep % 3);
                    KMeansGpu.Filter fl = KMeansGpu.Filter.of(a.centres, a.k, d);
                    KMeansFilterEmulator em = KMeansFilterEmulator.create();
                    for (int i = 0; i < a.data.n; i++) {
                        assertTrue(em.checkBound(fl, a.data.x, i, a.centres, a.k, d), a + " point " + i);
                    }
                    worst = Math.max(worst, em.worstRatio);
                }
            }
        }
        System.out.printf("filter bound at d <= 2: worst |e - T| / (B / safety) = %.3g%n", worst);
        assertTrue(worst <= 1.0, "worst ratio " + worst);
    }

    @Test
    void decisionWithRecheckGivesTheTwinsLabels() {
        Random r = new Random(12);
        long tieRechecks = 0;
        long tiePoints = 0;
        java.util.Map<String, Long> perKind = new java.util.TreeMap<>();
        for (String kind : KMeansAdversarialData.KINDS) {
            for (int d : new int[] {1, 3, 5, 31, 32, 33, 64}) {
                for (int k : new int[] {1, 2, 3, 64}) {
                    KMeansAdversarialData a = KMeansAdversarialData.make(kind, r, 300, d, k);
                    KMeansGpu.Filter fl = KMeansGpu.Filter.of(a.centres, a.k, d);
                    KMeansFilterEmulator em = KMeansFilterEmulator.create();
                    int[] got = new int[a.data.n];
                    for (int i = 0; i < a.data.n; i++) {
                        got[i] = em.nearest(fl, a.data.x, i, a.centres, a.k, d);
                    }
                    assertArrayEquals(twinLabels(a), got, a.toString());
                    if ((kind.equals("ties") || kind.equals("duplicates") || kind.equals("neartie")) && k > 1) {
                        tieRechecks += em.rechecks;
                        tiePoints += a.data.n;
                        perKind.merge(kind, em.rechecks, Long::sum);
                    }
                }
            }
        }
        System.out.printf("filter rechecks on tie data: %d of %d points, per kind %s%n", tieRechecks, tiePoints, perKind);
        assertEquals(3, perKind.size());
        perKind.forEach((kind, n) -> assertTrue(n > 0, "no recheck on " + kind + " data"));
        assertTrue(tieRechecks > tiePoints / 10, "rechecks on tie data: " + tieRechecks + " of " + tiePoints);
    }

    @Test
    void rechecksAreRareOnSeparatedBlobs() {
        Random r = new Random(13);
        KMeansAdversarialData a = KMeansAdversarialData.blobs(r, 20_000, 32, 64, 1.0);
        KMeansGpu.Filter fl = KMeansGpu.Filter.of(a.centres, a.k, 32);
        KMeansFilterEmulator em = KMeansFilterEmulator.create();
        int[] got = new int[a.data.n];
        for (int i = 0; i < a.data.n; i++) {
            got[i] = em.nearest(fl, a.data.x, i, a.centres, a.k, 32);
        }
        assertArrayEquals(twinLabels(a), got);
        System.out.printf("filter rechecks on blobs: %d of %d points%n", em.rechecks, a.data.n);
        assertTrue(em.rechecks < a.data.n / 100, "rechecks " + em.rechecks + " of " + a.data.n);
    }

    @Test
    void nonFiniteCentresFallBackToTheFp64Kernels() {
        assertNull(KMeansGpu.Filter.of(new double[] {1, Double.NaN}, 2, 1));
        assertNull(KMeansGpu.Filter.of(new double[] {Double.MAX_VALUE, Double.MAX_VALUE, -Double.MAX_VALUE}, 3, 1),
                "the sum for the mean overflows");
        assertNotNull(KMeansGpu.Filter.of(new double[] {Double.MAX_VALUE, -Double.MAX_VALUE}, 2, 1), "c' = +-2");
        assertNotNull(KMeansGpu.Filter.of(new double[] {1e300, 1e300}, 2, 1));
        KMeansGpu.Filter one = KMeansGpu.Filter.of(new double[] {3, 4}, 1, 2);
        assertEquals(1.0, one.s, "a single centre has no spread: s = 1");
        assertEquals(Float.POSITIVE_INFINITY, Float.intBitsToFloat(one.fncBits[1]), "odd k: dummy centre");
    }
}
