package io.sparkgpu.tsne.repulsion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.KernelHeader;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The S2G/G2S and G2G part of io.sparkgpu.tsne.TsneKernelLayoutTest (include/layout/tsne.cuh and include/tsne/g2g.cuh
 * against {@link GridRepulsionGpu}, {@link G2GGpu}, {@link G2GPlan}, {@link InterpGrid}), here because the constants
 * are package-private.
 */
public final class RepulsionKernelLayout {
    private RepulsionKernelLayout() {
    }

    public static void check(KernelHeader h) {
        h.assertValue("TSNE_BLOCK", GridRepulsionGpu.BLOCK);
        h.assertValue("TSNE_BLOCK", G2GGpu.BLOCK);
        h.assertValue("TSNE_MAX_CHARGES", new InterpGrid(3, 1, 1, new double[3], 1.0).charges());
        h.assertValue("TSNE_MAX_CHARGES", G2GGpu.TOP_INTS); // the exponent buffer holds one int per charge
        assertThrows(IllegalArgumentException.class, () -> new InterpGrid(4, 1, 1, new double[4], 1.0));
        h.assertValue("TSNE_PRM_LO", GridRepulsionGpu.PRM_LO);
        h.assertValue("TSNE_PRM_CENTRE", GridRepulsionGpu.PRM_CENTRE);
        h.assertValue("TSNE_PRM_H", GridRepulsionGpu.PRM_H);
        h.assertValue("TSNE_PRM_ZMAX", GridRepulsionGpu.PRM_ZMAX);
        h.assertValue("TSNE_PRM_MULT", GridRepulsionGpu.PRM_MULT);
        h.assertValue("TSNE_BOX_SCAN_THREADS", S2GBoxes.SCAN_THREADS);
        h.assertValue("TSNE_BOX_SCAN_ITEMS", S2GBoxes.SCAN_ITEMS);
        h.assertValue("TSNE_G2G_TILE", G2GGpu.DIRECT_TILE);
        h.assertValue("TSNE_G2G_FUSED_EPT", G2GGpu.FUSED_EPT);
        h.assertValue("TSNE_G2G_FUSED_MAX_THREADS", G2GGpu.FUSED_MAX_THREADS);
        for (int m : new int[] {1, 8, 60, 4096}) {
            for (int lines : new int[] {1, 2, 16}) {
                assertEquals(h.eval("TSNE_G2G_FUSED_BYTES", m, lines), G2GGpu.fusedBytes(m, lines));
                assertEquals(h.eval("TSNE_G2G_MIDDLE_BYTES", m, lines), G2GGpu.middleBytes(m, lines));
            }
        }
        h.assertValue("TSNE_G2G_MAX_RADIX", G2GPlan.MAX_RADIX);
        long bits = h.value("TSNE_G2G_RADIX_BITS");
        long fusedMax = h.value("TSNE_G2G_FUSED_MAX_RADIX");
        assertTrue(fusedMax < 1L << bits, "a fused radix fits in its field of the radix code");
        for (int n : new int[] {1, 2, 7, 33, 100, 1000, 4096}) {
            G2GPlan plan = G2GPlan.of(1, n);
            assertTrue(plan.fusable(), "m = " + plan.m);
            int[] decoded = new int[plan.radices.length];
            for (int i = 0; i < decoded.length; i++) {
                decoded[i] = (int) ((plan.radixCode() >> (bits * i)) & ((1L << bits) - 1));
            }
            assertArrayEquals(plan.radices, decoded, "radix code of m = " + plan.m);
        }
        for (int m = 1; m <= 1 << 16; m = G2GPlan.fftSize(m + 1)) { // every 5-smooth length
            for (int r : G2GPlan.factor(m)) {
                assertTrue(r <= (m <= G2GPlan.FUSED_MAX_M ? fusedMax : G2GPlan.MAX_RADIX),
                        "radix " + r + " of m = " + m);
            }
        }
    }

    /** tsne_g2g_pass_R exists for every radix a plan can use: the 5-smooth numbers 2..MAX_RADIX. */
    public static void everyG2GPassExists() {
        TreeSet<Integer> have = new TreeSet<>();
        Matcher pass = Pattern.compile("(?m)^G2G_PASS\\((\\d+)\\)")
                .matcher(KernelHeader.source("include/tsne/g2g.cuh"));
        while (pass.find()) {
            have.add(Integer.parseInt(pass.group(1)));
        }
        TreeSet<Integer> want = new TreeSet<>();
        for (int r = 2; r <= G2GPlan.MAX_RADIX; r++) {
            int x = r;
            for (int f : new int[] {2, 3, 5}) {
                while (x % f == 0) {
                    x /= f;
                }
            }
            if (x == 1) {
                want.add(r);
            }
        }
        assertEquals(want, have);
        for (int m = 1; m <= 1 << 16; m = G2GPlan.fftSize(m + 1)) { // every 5-smooth length
            for (int r : G2GPlan.factor(m)) {
                assertTrue(have.contains(r), "radix " + r + " of m = " + m);
            }
        }
    }
}
