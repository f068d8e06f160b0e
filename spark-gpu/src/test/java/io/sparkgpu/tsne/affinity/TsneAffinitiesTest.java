package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** CPU twin: exact kNN against brute force, block/merge algebra, perplexity calibration, symmetrisation, edges. */
class TsneAffinitiesTest {

    /** Random data; with {@code ties} small integer coordinates so that many distances tie exactly, plus duplicates. */
    static float[] data(Random r, int n, int d, boolean ties) {
        float[] x = new float[n * d];
        for (int i = 0; i < x.length; i++) {
            x[i] = ties ? r.nextInt(3) : (float) (r.nextGaussian() * (1 + i % 3));
        }
        if (ties && n > 6) { // a few exact duplicates
            System.arraycopy(x, 0, x, 3 * d, d);
            System.arraycopy(x, d, x, (n - 1) * d, d);
        }
        return x;
    }

    /** Brute force: all other points sorted by (dist2, index), first k. */
    static KnnGraph brute(float[] x, int n, int d, int k) {
        int[] index = new int[n * k];
        float[] dist2 = new float[n * k];
        for (int i = 0; i < n; i++) {
            List<long[]> all = new ArrayList<>();
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    float dd = TsneAffinitiesCpu.dist2(x, i, x, j, d);
                    all.add(new long[] {Float.floatToIntBits(dd), j}); // non-negative floats sort as their bits
                }
            }
            all.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
            for (int m = 0; m < k; m++) {
                index[i * k + m] = (int) all.get(m)[1];
                dist2[i * k + m] = Float.intBitsToFloat((int) all.get(m)[0]);
            }
        }
        return new KnnGraph(n, 0, n, k, index, dist2);
    }

    static void assertSameGraph(KnnGraph want, KnnGraph got) {
        assertEquals(want.n, got.n);
        assertEquals(want.rowOffset, got.rowOffset);
        assertEquals(want.rows, got.rows);
        assertEquals(want.k, got.k);
        assertArrayEquals(want.index, got.index);
        assertArrayEquals(want.dist2, got.dist2);
    }

    @Test
    void knnEqualsBruteForceWithTies() {
        Random r = new Random(7);
        int[][] shapes = {{5, 1, 4}, {37, 3, 5}, {50, 2, 49}, {64, 7, 10}, {70, 1, 12}, {41, 50, 40}};
        for (int[] s : shapes) {
            for (boolean ties : new boolean[] {false, true}) {
                float[] x = data(r, s[0], s[1], ties);
                assertSameGraph(brute(x, s[0], s[1], s[2]), TsneAffinities.knn(x, s[0], s[1], s[2], Backend.CPU));
            }
        }
    }

    @Test
    void blocksAndMergeEqualKnnForAnyPartitioning() {
        Random r = new Random(11);
        int n = 53;
        int d = 3;
        int k = 9;
        for (boolean ties : new boolean[] {false, true}) {
            float[] x = data(r, n, d, ties);
            KnnGraph full = TsneAffinities.knn(x, n, d, k, Backend.CPU);
            for (int parts : new int[] {1, 2, 3, 7, 20}) {
                int[] cuts = cuts(r, n, parts);
                for (int qb = 0; qb < parts; qb++) {
                    int q0 = cuts[qb];
                    int nq = cuts[qb + 1] - q0;
                    KnnGraph acc = null;
                    // reference blocks merged in a shuffled order
                    List<Integer> order = new ArrayList<>();
                    for (int rb = 0; rb < parts; rb++) {
                        order.add(rb);
                    }
                    java.util.Collections.shuffle(order, r);
                    for (int rb : order) {
                        int r0 = cuts[rb];
                        int nr = cuts[rb + 1] - r0;
                        KnnGraph g = TsneAffinities.knnBlock(Arrays.copyOfRange(x, q0 * d, (q0 + nq) * d), q0, nq,
                                Arrays.copyOfRange(x, r0 * d, (r0 + nr) * d), r0, nr, d, k, n, Backend.CPU);
                        acc = acc == null ? g : TsneAffinities.merge(acc, g);
                    }
                    assertArrayEquals(Arrays.copyOfRange(full.index, q0 * k, (q0 + nq) * k), acc.index);
                    assertArrayEquals(Arrays.copyOfRange(full.dist2, q0 * k, (q0 + nq) * k), acc.dist2);
                }
            }
        }
    }

    /** parts + 1 increasing cut points 0 = c_0 <= ... <= c_parts = n (empty blocks allowed). */
    static int[] cuts(Random r, int n, int parts) {
        int[] c = new int[parts + 1];
        for (int i = 1; i < parts; i++) {
            c[i] = r.nextInt(n + 1);
        }
        c[parts] = n;
        Arrays.sort(c);
        return c;
    }

    @Test
    void smallReferenceBlocksArePadded() {
        float[] x = {0f, 1f, 3f, 7f};
        KnnGraph g = TsneAffinities.knnBlock(new float[] {0f}, 0, 1, new float[] {0f, 1f}, 0, 2, 1, 3, 4, Backend.CPU);
        assertArrayEquals(new int[] {1, -1, -1}, g.index);
        assertEquals(Float.POSITIVE_INFINITY, g.dist2[1]);
        KnnGraph h = TsneAffinities.knnBlock(new float[] {0f}, 0, 1, new float[] {3f, 7f}, 2, 2, 1, 3, 4, Backend.CPU);
        KnnGraph m = TsneAffinities.merge(g, h);
        assertSameGraph(TsneAffinities.knnBlock(new float[] {0f}, 0, 1, x, 0, 4, 1, 3, 4, Backend.CPU), m);
        assertArrayEquals(new int[] {1, 2, 3}, m.index);
        // merging a graph with itself changes nothing
        assertSameGraph(m, TsneAffinities.merge(m, m));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TsneAffinities.conditional(g, 1.5, Backend.CPU));
        assertTrue(e.getMessage().contains("fewer than k=3"), e.getMessage());
    }

    /** Perplexity of a row with the JDK's exp/log: exp(-sum p ln p). */
    static double perplexity(double[] p, int base, int k) {
        double h = 0;
        for (int m = 0; m < k; m++) {
            if (p[base + m] > 0) {
                h -= p[base + m] * Math.log(p[base + m]);
            }
        }
        return Math.exp(h);
    }

    @Test
    void perplexityWithin1e5() {
        Random r = new Random(5);
        for (double perp : new double[] {2.0, 5.0, 12.5, 30.0}) {
            int k = (int) Math.min(119, 3 * perp);
            int n = 120;
            float[] x = data(r, n, 4, false);
            // scale some rows far out so the bandwidths vary a lot
            for (int i = 0; i < 4; i++) {
                x[i] *= 1000f;
            }
            KnnGraph g = TsneAffinities.knn(x, n, 4, k, Backend.CPU);
            double[] p = TsneAffinities.conditional(g, perp, Backend.CPU);
            for (int i = 0; i < n; i++) {
                double sum = 0;
                for (int m = 0; m < k; m++) {
                    sum += p[i * k + m];
                    assertTrue(p[i * k + m] >= 0);
                }
                assertEquals(1.0, sum, 1e-12);
                assertEquals(perp, perplexity(p, i * k, k), 1e-5, "row " + i + " perplexity " + perp);
            }
        }
        // tied data (integer grid with duplicates) still calibrates when fewer than perplexity ties
        float[] x = data(r, 200, 5, true);
        KnnGraph g = TsneAffinities.knn(x, 200, 5, 60, Backend.CPU);
        double[] p = TsneAffinities.conditional(g, 20, Backend.CPU);
        for (int i = 0; i < 200; i++) {
            assertEquals(20.0, perplexity(p, i * 60, 60), 1e-5);
        }
    }

    @Test
    void duplicatePointsAreAClearError() {
        int n = 20;
        float[] x = new float[n * 2];
        for (int i = 0; i < n; i++) {
            x[2 * i] = i * 1.37f + i * i * 0.01f;
            x[2 * i + 1] = -i * 0.5f + i * i * i * 0.001f;
        }
        for (int i : new int[] {4, 9, 11, 15, 17}) { // 6 copies of point 2
            x[2 * i] = x[4];
            x[2 * i + 1] = x[5];
        }
        KnnGraph g = TsneAffinities.knn(x, n, 2, 12, Backend.CPU);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TsneAffinities.conditional(g, 4, Backend.CPU));
        String msg = e.getMessage();
        assertTrue(msg.contains("exact duplicates of point 2") && msg.contains("points 4, 9, 11, 15, 17"), msg);
        assertTrue(msg.contains("raise the perplexity above 5"), msg);
        // above the number of duplicates it calibrates
        double[] p = TsneAffinities.conditional(g, 7.5, Backend.CPU);
        assertEquals(7.5, perplexity(p, 2 * 12, 12), 1e-5);
    }

    @Test
    void badInputsHaveClearMessages() {
        float[] x = {0, 1, 2, Float.NaN, 4, 5};
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TsneAffinities.knn(x, 3, 2, 1, Backend.CPU));
        assertTrue(e.getMessage().contains("point 1") && e.getMessage().contains("NaN"), e.getMessage());
        float[] y = {0, 1, 2, 3};
        e = assertThrows(IllegalArgumentException.class, () -> TsneAffinities.knn(y, 4, 1, 4, Backend.CPU));
        assertTrue(e.getMessage().contains("lower k"), e.getMessage());
        KnnGraph g = TsneAffinities.knn(y, 4, 1, 3, Backend.CPU);
        e = assertThrows(IllegalArgumentException.class, () -> TsneAffinities.conditional(g, 3, Backend.CPU));
        assertTrue(e.getMessage().contains("lower the perplexity"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TsneAffinities.conditional(g, Double.NaN, Backend.CPU));
        assertTrue(e.getMessage().contains("perplexity"), e.getMessage());
        float[] big = {0, 3e30f, -3e30f, 1};
        KnnGraph gb = TsneAffinities.knn(big, 4, 1, 3, Backend.CPU);
        e = assertThrows(IllegalArgumentException.class, () -> TsneAffinities.conditional(gb, 2, Backend.CPU));
        assertTrue(e.getMessage().contains("rescale"), e.getMessage());
    }

    static void checkSymmetricStochastic(SparseRows p) {
        double total = 0;
        java.util.Map<Long, Double> all = new java.util.HashMap<>();
        for (int r = 0; r < p.rows; r++) {
            for (int e = p.rowPtr[r]; e < p.rowPtr[r + 1]; e++) {
                if (e > p.rowPtr[r]) {
                    assertTrue(p.col[e] > p.col[e - 1], "columns strictly increasing in row " + r);
                }
                assertTrue(p.col[e] != p.rowOffset + r, "no diagonal");
                assertTrue(p.val[e] >= 0 && Double.isFinite(p.val[e]));
                total += p.val[e];
                all.put(((long) (p.rowOffset + r) << 32) | p.col[e], p.val[e]);
            }
        }
        assertEquals(1.0, total, 1e-12);
        for (java.util.Map.Entry<Long, Double> en : all.entrySet()) {
            long key = en.getKey();
            long t = ((key & 0xFFFFFFFFL) << 32) | (key >>> 32);
            assertEquals(Double.doubleToLongBits(en.getValue()), Double.doubleToLongBits(all.getOrDefault(t, -1.0)),
                    "P symmetric bit for bit");
        }
    }

    @Test
    void symmetrizeIsSymmetricSumsToOneAndMatchesDense() {
        Random r = new Random(9);
        int n = 90;
        int k = 15;
        float[] x = data(r, n, 3, false);
        KnnGraph g = TsneAffinities.knn(x, n, 3, k, Backend.CPU);
        double[] pc = TsneAffinities.conditional(g, 5, Backend.CPU);
        SparseRows p = JointProbabilities.symmetrize(g, pc);
        assertEquals(n, p.n);
        assertEquals(n, p.rows);
        checkSymmetricStochastic(p);
        double[][] dense = new double[n][n];
        for (int i = 0; i < n; i++) {
            for (int m = 0; m < k; m++) {
                dense[i][g.index[i * k + m]] = pc[i * k + m];
            }
        }
        for (int i = 0; i < n; i++) {
            for (int e = p.rowPtr[i]; e < p.rowPtr[i + 1]; e++) {
                int j = p.col[e];
                assertEquals((dense[i][j] + dense[j][i]) / (2.0 * n), p.val[e], 0.0);
            }
        }
    }

    @Test
    void fromEdgesSumsDuplicatesAndIsOrderIndependent() {
        int[] i = {0, 1, 1, 2, 0, 4};
        int[] j = {1, 0, 2, 1, 1, 0};
        double[] w = {1, 2, 3, 0.5, 0.25, 0};
        SparseRows p = JointProbabilities.fromEdges(6, i, j, w);
        checkSymmetricStochastic(p);
        double t = 2 * (1 + 2 + 3 + 0.5 + 0.25);
        assertArrayEquals(new int[] {0, 1, 3, 4, 4, 4, 4}, p.rowPtr); // points 3, 4, 5 isolated (zero edge dropped)
        assertArrayEquals(new int[] {1, 0, 2, 1}, p.col);
        assertEquals((1 + 2 + 0.25) / t, p.val[0], 1e-15);
        assertEquals((3 + 0.5) / t, p.val[2], 1e-15);
        // shuffled edge order gives the same bits
        Random r = new Random(1);
        int m = 300;
        int[] a = new int[m];
        int[] b = new int[m];
        double[] v = new double[m];
        for (int e = 0; e < m; e++) {
            a[e] = r.nextInt(30);
            b[e] = (a[e] + 1 + r.nextInt(29)) % 30;
            v[e] = r.nextDouble() * Math.pow(10, r.nextInt(10));
        }
        SparseRows p1 = JointProbabilities.fromEdges(30, a, b, v);
        checkSymmetricStochastic(p1);
        Integer[] perm = new Integer[m];
        for (int e = 0; e < m; e++) {
            perm[e] = e;
        }
        java.util.Collections.shuffle(Arrays.asList(perm), r);
        int[] a2 = new int[m];
        int[] b2 = new int[m];
        double[] v2 = new double[m];
        for (int e = 0; e < m; e++) {
            boolean flip = r.nextBoolean();
            a2[e] = flip ? b[perm[e]] : a[perm[e]];
            b2[e] = flip ? a[perm[e]] : b[perm[e]];
            v2[e] = v[perm[e]];
        }
        SparseRows p2 = JointProbabilities.fromEdges(30, a2, b2, v2);
        assertArrayEquals(p1.rowPtr, p2.rowPtr);
        assertArrayEquals(p1.col, p2.col);
        assertArrayEquals(p1.val, p2.val);
    }

    @Test
    void fromEdgesRejectsBadEdges() {
        String m = assertThrows(IllegalArgumentException.class,
                () -> JointProbabilities.fromEdges(3, new int[] {0, 1}, new int[] {1, 1}, new double[] {1, 1})).getMessage();
        assertTrue(m.contains("edge 1") && m.contains("self loop"), m);
        m = assertThrows(IllegalArgumentException.class,
                () -> JointProbabilities.fromEdges(3, new int[] {0}, new int[] {3}, new double[] {1})).getMessage();
        assertTrue(m.contains("outside 0..2"), m);
        m = assertThrows(IllegalArgumentException.class,
                () -> JointProbabilities.fromEdges(3, new int[] {0}, new int[] {-1}, new double[] {1})).getMessage();
        assertTrue(m.contains("outside"), m);
        m = assertThrows(IllegalArgumentException.class,
                () -> JointProbabilities.fromEdges(3, new int[] {0}, new int[] {1}, new double[] {-1})).getMessage();
        assertTrue(m.contains("weight -1.0"), m);
        m = assertThrows(IllegalArgumentException.class,
                () -> JointProbabilities.fromEdges(3, new int[] {0}, new int[] {1}, new double[] {Double.NaN})).getMessage();
        assertTrue(m.contains("NaN"), m);
        m = assertThrows(IllegalArgumentException.class,
                () -> JointProbabilities.fromEdges(3, new int[] {0}, new int[] {1}, new double[] {0})).getMessage();
        assertTrue(m.contains("all edge weights are 0"), m);
        m = assertThrows(IllegalArgumentException.class,
                () -> JointProbabilities.fromEdges(3, new int[] {0}, new int[] {1, 2}, new double[] {1})).getMessage();
        assertTrue(m.contains("equal lengths"), m);
    }
}
