package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendFaults;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.cuda.CudaException;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Host side of the GPU symmetrisation (offsets) and the dispatcher's CPU path; the kernels: TsneSymmetrizeGpuTest. */
class TsneSymmetrizeTest {

    /** n rows, k distinct random neighbours each (never the row); with hub, every row but 0 points to row 0. */
    static KnnGraph randomGraph(Random r, int n, int k, boolean hub) {
        int[] index = new int[n * k];
        float[] dist2 = new float[n * k];
        for (int i = 0; i < n; i++) {
            java.util.Set<Integer> used = new java.util.HashSet<>();
            used.add(i);
            for (int m = 0; m < k; m++) {
                int j;
                if (hub && m == 0 && i != 0) {
                    j = 0;
                } else {
                    do {
                        j = r.nextInt(Math.min(n, 3 * k + 3)) + (r.nextBoolean() ? 0 : i) ;
                        j = j % n;
                    } while (used.contains(j));
                }
                used.add(j);
                index[i * k + m] = j;
                dist2[i * k + m] = m;
            }
        }
        return new KnnGraph(n, 0, n, k, index, dist2);
    }

    static double[] randomPcond(Random r, KnnGraph g) {
        double[] p = new double[g.index.length];
        for (int e = 0; e < p.length; e++) {
            p[e] = r.nextInt(10) == 0 ? 0.0 : r.nextDouble() / g.k;
        }
        return p;
    }

    static void assertSame(SparseRows want, SparseRows got, String what) {
        assertArrayEquals(want.rowPtr, got.rowPtr, what + ": rowPtr");
        assertArrayEquals(want.col, got.col, what + ": col");
        assertArrayEquals(want.val, got.val, what + ": val"); // assertArrayEquals on doubles compares bits
    }

    @Test
    void offsetsAreExclusivePrefixSums() {
        long[] o = TsneAffinitiesGpu.offsets(new int[] {3, 0, 5, Integer.MAX_VALUE});
        assertArrayEquals(new long[] {0, 3, 3, 8, 8L + Integer.MAX_VALUE}, o);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TsneAffinitiesGpu.toInts(o, "symmetrised affinities"));
        assertTrue(e.getMessage().contains("symmetrised affinities"), e.getMessage());
        assertArrayEquals(new int[] {0, 3, 3, 8}, TsneAffinitiesGpu.toInts(new long[] {0, 3, 3, 8}, "x"));
    }

    @Test
    void dispatcherCpuIsTheTwinAndSymmetric() {
        Random r = new Random(5);
        KnnGraph g = randomGraph(r, 200, 7, true);
        double[] pc = randomPcond(r, g);
        SparseRows want = JointProbabilities.symmetrize(g, pc);
        SparseRows got = TsneAffinities.symmetrize(g, pc, Backend.CPU, null);
        assertSame(want, got, "cpu");
        // brute force: dense (p + p^T) / 2n
        int n = g.n;
        double[][] dense = new double[n][n];
        boolean[][] has = new boolean[n][n];
        for (int i = 0; i < n; i++) {
            for (int m = 0; m < g.k; m++) {
                int j = g.index[i * g.k + m];
                dense[i][j] += pc[i * g.k + m];
                dense[j][i] += pc[i * g.k + m];
                has[i][j] = true;
                has[j][i] = true;
            }
        }
        int e = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (has[i][j]) {
                    assertEquals(j, got.col[e]);
                    assertEquals(dense[i][j] / (2.0 * n), got.val[e], 0.0);
                    e++;
                }
            }
            assertEquals(e, got.rowPtr[i + 1]);
        }
    }

    /** The symmetrisation phase's backend policy: a fault under auto gives the twin's bits, under gpu an error. */
    @Test
    void faultsUnderAutoGiveTheTwinAndUnderGpuNameThePhase() {
        Random r = new Random(6);
        KnnGraph g = randomGraph(r, 150, 6, false);
        double[] pc = randomPcond(r, g);
        SparseRows want = JointProbabilities.symmetrize(g, pc);
        String phase = TsneAffinities.SYMMETRIZE_PHASE;
        for (String kind : BackendFaults.KINDS) {
            try (BackendFaults f = BackendFaults.of(kind, phase)) {
                BackendUsage u = new BackendUsage();
                SparseRows got = TsneAffinities.symmetrize(g, pc, Backend.AUTO, u);
                assertTrue(f.fired() > 0, kind);
                assertSame(want, got, kind);
                assertEquals("cpu", u.backend(phase), kind + ": " + u);
                assertTrue(u.fallbackReasons().values().stream().anyMatch(w -> w.contains(phase)), kind + ": " + u);
            }
            try (BackendFaults f = BackendFaults.of(kind, phase)) {
                CudaException e = assertThrows(CudaException.class,
                        () -> TsneAffinities.symmetrize(g, pc, Backend.GPU, null));
                assertTrue(e.getMessage().contains(phase) && e.getMessage().contains("injected"), e.getMessage());
            }
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TsneAffinities.symmetrize(
                new KnnGraph(150, 10, 140, 6, java.util.Arrays.copyOf(g.index, 840), java.util.Arrays.copyOf(g.dist2,
                        840)), java.util.Arrays.copyOf(pc, 840), Backend.CPU, null));
        assertTrue(e.getMessage().contains("all n=150 rows"), e.getMessage());
    }

    /** joint is conditional then symmetrize: the same P, the same errors (here: a partial graph, a bad perplexity). */
    @Test
    void jointEqualsTheTwoStepsAndChecksTheSame() {
        Random r = new Random(8);
        int n = 400;
        float[] x = TsneAffinitiesTest.data(r, n, 4, false);
        KnnGraph g = TsneAffinities.knn(x, n, 4, 25, Backend.CPU);
        double[] pc = TsneAffinities.conditional(g, 8, Backend.CPU);
        io.sparkgpu.cuda.BackendUsage u = new io.sparkgpu.cuda.BackendUsage();
        assertSame(JointProbabilities.symmetrize(g, pc), TsneAffinities.joint(g, 8, Backend.CPU, u), "joint");
        assertEquals("cpu", u.backend(TsneAffinities.AFFINITIES_PHASE), u.toString());
        assertEquals("cpu", u.backend(TsneAffinities.SYMMETRIZE_PHASE), u.toString());
        KnnGraph part = new KnnGraph(n, 10, n - 10, 25, java.util.Arrays.copyOf(g.index, (n - 10) * 25),
                java.util.Arrays.copyOf(g.dist2, (n - 10) * 25));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TsneAffinities.joint(part, 8, Backend.CPU, null));
        assertTrue(e.getMessage().contains("all n=400 rows"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TsneAffinities.joint(g, 30, Backend.CPU, null));
        assertTrue(e.getMessage().contains("perplexity"), e.getMessage());
    }
}
