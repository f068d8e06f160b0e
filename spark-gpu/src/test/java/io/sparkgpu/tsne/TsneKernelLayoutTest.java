package io.sparkgpu.tsne;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.KernelHeader;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The host side of the tsne module (TsneAffinitiesGpu, TsneForcesGpu, SellRows, G2GGpu, G2GPlan, TsneDeviceState,
 * TsneGridOptions) agrees with the sizes and layouts the kernels use
 * (native-kernels/src/main/cuda/include/layout/tsne.cuh), and every G2G pass the plan can ask for exists.
 */
class TsneKernelLayoutTest {

    @Test
    void layoutMatchesTheKernels() {
        KernelHeader h = KernelHeader.load("include/layout/tsne.cuh");
        // kNN and affinities
        h.assertValue("TSNE_KNN_THREADS", TsneAffinitiesGpu.KNN_THREADS);
        h.assertValue("TSNE_KNN_KQ", TsneAffinitiesGpu.KQ);
        h.assertValue("TSNE_KNN_KD", TsneAffinitiesGpu.KD);
        assertEquals(h.eval("TSNE_KNN_KR", TsneAffinitiesGpu.RPT), TsneAffinitiesGpu.KR);
        assertEquals(TsneAffinitiesGpu.RPT == 4 ? "tsne_knn_tile" : "tsne_knn_tile8", TsneAffinitiesGpu.KNN_KERNEL);
        for (int k : new int[] {1, 5, 30, 90, 150}) {
            for (int qDims : new int[] {TsneAffinitiesGpu.KD, 64, 96, 800}) {
                assertEquals(h.eval("TSNE_KNN_SHARED_BYTES", k, qDims, TsneAffinitiesGpu.RPT),
                        TsneAffinitiesGpu.knnSharedBytes(k, qDims), "knnSharedBytes(" + k + ", " + qDims + ")");
            }
            assertEquals(h.eval("TSNE_AFF_SHARED_BYTES", k), TsneAffinitiesGpu.affSharedBytes(k));
        }
        h.assertValue("TSNE_AFF_THREADS", TsneAffinitiesGpu.AFF_THREADS);
        // forces, G2G, iteration
        h.assertValue("TSNE_BLOCK", TsneForcesGpu.BLOCK);
        h.assertValue("TSNE_BLOCK", G2GGpu.BLOCK);
        h.assertValue("TSNE_BLOCK", TsneDeviceState.BLOCK);
        h.assertValue("TSNE_SELL_C", SellRows.C);
        h.assertValue("TSNE_MAX_CHARGES", new InterpGrid(3, 1, 1, new double[3], 1.0).charges());
        assertThrows(IllegalArgumentException.class, () -> new InterpGrid(4, 1, 1, new double[4], 1.0));
        h.assertValue("TSNE_MAX_P", TsneGridOptions.MAX_P);
        h.assertValue("TSNE_PRM_LO", TsneForcesGpu.PRM_LO);
        h.assertValue("TSNE_PRM_CENTRE", TsneForcesGpu.PRM_CENTRE);
        h.assertValue("TSNE_PRM_H", TsneForcesGpu.PRM_H);
        h.assertValue("TSNE_PRM_ZMAX", TsneForcesGpu.PRM_ZMAX);
        h.assertValue("TSNE_PRM_MULT", TsneForcesGpu.PRM_MULT);
        h.assertValue("TSNE_G2G_TILE", G2GGpu.DIRECT_TILE);
        for (int m : new int[] {1, 8, 60, 4096}) {
            for (int lines : new int[] {1, 2, 16}) {
                assertEquals(h.eval("TSNE_G2G_FUSED_BYTES", m, lines), G2GGpu.fusedBytes(m, lines));
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
        h.assertAllCompared();
    }

    /** tsne_g2g_pass_R exists for every radix a plan can use: the 5-smooth numbers 2..MAX_RADIX. */
    @Test
    void everyG2GPassExists() {
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
