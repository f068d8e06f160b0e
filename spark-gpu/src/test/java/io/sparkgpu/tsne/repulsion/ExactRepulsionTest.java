package io.sparkgpu.tsne.repulsion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.tsne.TsneForcesTestData;
import io.sparkgpu.tsne.optimize.ExactTsne;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.Test;

/**
 * The CPU twin of the exact repulsion ({@link ExactRepulsionCpu}): against the plain O(n^2) sums of {@link ExactTsne},
 * against a lane-by-lane simulation of the kernel's warp (32 strided lanes, xor butterfly), and independent of row
 * slices and of the number of threads.
 */
class ExactRepulsionTest {
    @Test
    void equalsThePlainSumsToRounding() {
        for (int dim = 1; dim <= 3; dim++) {
            int n = 203; // not a multiple of 32: lanes with one pair fewer
            double[] y = TsneForcesTestData.clusters(n, dim, 5, 30, 11 * dim);
            Repulsion r = ExactRepulsion.repulsion(y, n, dim, 0, n, Backend.CPU, null);
            double err = TsneForcesTestData.relNorm(r.force, ExactTsne.repulsive(y, n, dim));
            assertTrue(err < 1e-13, "dim " + dim + ": force relative error " + err);
            double z = GridRepulsion.z(r.zFixed, n);
            double zPlain = ExactTsne.z(y, n, dim);
            assertEquals(zPlain, z, 1e-13 * zPlain, "dim " + dim + ": Z (self pairs removed)");
            assertEquals(z, ExactRepulsion.z(y, n, dim, Backend.CPU, null), 0.0, "dim " + dim);
        }
    }

    /** The kernel's order, lane by lane: lane l sums j = l, l + 32, ...; then v[l] += v[l ^ off] in every lane. */
    private static double[] warp(double[] y, int n, int dim, int i) {
        double[][] v = new double[32][dim + 1];
        for (int l = 0; l < 32; l++) {
            for (int j = l; j < n; j += 32) {
                double[] diff = new double[dim];
                double d2 = 0;
                for (int a = 0; a < dim; a++) {
                    diff[a] = y[i * dim + a] - y[j * dim + a];
                    d2 = a == 0 ? diff[a] * diff[a] : d2 + diff[a] * diff[a];
                }
                double w = 1.0 / (1.0 + d2);
                double w2 = w * w;
                for (int a = 0; a < dim; a++) {
                    v[l][a] = v[l][a] + w2 * diff[a];
                }
                v[l][dim] = v[l][dim] + w;
            }
        }
        for (int off = 16; off > 0; off >>= 1) {
            double[][] next = new double[32][dim + 1];
            for (int l = 0; l < 32; l++) {
                for (int c = 0; c <= dim; c++) {
                    next[l][c] = v[l][c] + v[l ^ off][c];
                }
            }
            v = next;
        }
        return v[0];
    }

    @Test
    void followsTheKernelsLaneOrderBitForBit() {
        for (int dim = 1; dim <= 3; dim++) {
            for (int n : new int[] {4, 31, 33, 100}) {
                double[] y = TsneForcesTestData.clusters(n, dim, 3, 20, 7 * n + dim);
                int zShift = GridRepulsion.zShift(n);
                Repulsion r = ExactRepulsionCpu.repulsion(y, n, dim, 0, n, zShift);
                long[] z = new long[2];
                double[] m = FixedPoint.multipliers(zShift);
                for (int i = 0; i < n; i++) {
                    double[] expect = warp(y, n, dim, i);
                    for (int a = 0; a < dim; a++) {
                        assertEquals(Double.doubleToRawLongBits(expect[a]), Double.doubleToRawLongBits(
                                r.force[i * dim + a]), "dim " + dim + " n " + n + " row " + i + " axis " + a);
                    }
                    FixedPoint.add(z, 0, expect[dim], m[0], m[1]);
                }
                assertArrayEquals(z, r.zFixed, "dim " + dim + " n " + n + ": z sum");
            }
        }
    }

    @Test
    void slicesAndThreadCountsGiveTheSameBits() throws Exception {
        int n = 517;
        for (int dim = 1; dim <= 3; dim++) {
            double[] y = TsneForcesTestData.clusters(n, dim, 4, 25, 3 + dim);
            Repulsion whole = ExactRepulsion.repulsion(y, n, dim, 0, n, Backend.CPU, null);
            int[] cuts = {0, 1, 40, 41, 300, n};
            double[] force = new double[n * dim];
            long[] z = new long[2];
            for (int s = 0; s + 1 < cuts.length; s++) {
                Repulsion part = ExactRepulsion.repulsion(y, n, dim, cuts[s], cuts[s + 1] - cuts[s], Backend.CPU, null);
                System.arraycopy(part.force, 0, force, cuts[s] * dim, part.force.length);
                GridRepulsion.addZ(z, part);
            }
            assertArrayEquals(whole.force, force, 0.0, "dim " + dim + ": slices");
            assertArrayEquals(whole.zFixed, z, "dim " + dim + ": slices' z");
            final int d = dim;
            ForkJoinPool one = new ForkJoinPool(1);
            try {
                Repulsion single = one.submit(() -> ExactRepulsion.repulsion(y, n, d, 0, n, Backend.CPU, null)).get();
                assertArrayEquals(whole.force, single.force, 0.0, "dim " + dim + ": one thread");
                assertArrayEquals(whole.zFixed, single.zFixed, "dim " + dim + ": one thread's z");
            } finally {
                one.shutdown();
            }
        }
    }

    @Test
    void badInputNamesTheProblem() {
        double[] y = {0, 0, 1, 1, 2, 2, 3, Double.NaN};
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ExactRepulsion.repulsion(y, 4, 2, 0, 4,
                Backend.CPU, null)).getMessage().contains("y[7] is not finite"));
        double[] ok = {0, 0, 1, 1, 2, 2, 3, 3};
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ExactRepulsion.repulsion(ok, 4, 2, 2, 3,
                Backend.CPU, null)).getMessage().contains("must lie in [0, 4)"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ExactRepulsion.repulsion(ok, 5, 2, 0, 5,
                Backend.CPU, null)).getMessage().contains("n * dim = 10"));
        assertEquals(0, ExactRepulsion.repulsion(ok, 4, 2, 4, 0, Backend.CPU, null).force.length);
    }
}
