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

    @Test
    void planUsesTheScreeningKernelOnlyWhereItApplies() {
        long shared = 227 * 1024 - 1024;
        KMeansGpu.Filter f = KMeansGpu.Filter.of(new double[64 * 32], 64, 32);
        KMeansGpu.Plan p = KMeansGpu.plan(64, 32, true, f, shared, null);
        assertTrue(p.filter);
        assertEquals("kmeans_filt_d32", p.kernel);
        assertTrue(p.accInShared && p.centresInShared, "k=64, d=32 keeps everything in shared memory");
        assertEquals(2, p.pointsPerThread);
        assertFalse(KMeansGpu.plan(64, 32, true, null, shared, null).filter, "no filter data: FP64 kernel");
        assertNull(KMeansGpu.filterFor(new double[64 * 32], 64, 32, true), "cosine");
        assertNull(KMeansGpu.filterFor(new double[2 * 65], 2, 65, false), "d > 64");
        KMeansGpu.Plan big = KMeansGpu.plan(1000, 64, true, KMeansGpu.Filter.of(new double[1000 * 64], 1000, 64),
                shared, null);
        assertFalse(big.filter, "256 KB of FP32 centres do not fit: FP64 kernel");
        KMeansGpu.Plan mid = KMeansGpu.plan(1000, 32, true, KMeansGpu.Filter.of(new double[1000 * 32], 1000, 32),
                shared, null);
        assertTrue(mid.filter && !mid.accInShared && !mid.centresInShared, "FP32 centres only in shared memory");
        for (int d : new int[] {1, 8, 9, 16, 17, 32, 33, 64}) {
            KMeansGpu.Plan q = KMeansGpu.plan(3, d, true, KMeansGpu.Filter.of(new double[3 * d], 3, d), shared, null);
            assertEquals(KMeansGpu.filterPointsPerThread(d), q.pointsPerThread);
            for (int m : new int[] {1, 255, 256, 257, 1023, 1025, 1_000_003}) {
                long g = q.grid(m);
                assertTrue(g * KMeansGpu.BLOCK * q.pointsPerThread >= m, "d=" + d + " m=" + m);
                assertTrue((g - 1) * KMeansGpu.BLOCK * q.pointsPerThread < m, "d=" + d + " m=" + m);
            }
        }
    }
}
