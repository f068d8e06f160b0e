package io.sparkgpu.tsne.repulsion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.tsne.TsneForcesTestData;
import io.sparkgpu.tsne.TsneGridOptions;
import io.sparkgpu.tsne.optimize.ExactTsne;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * CPU twins of the interpolated repulsion (S2G, G2S) against the exact O(n^2) terms ({@link ExactTsne}) in 1-D, 2-D
 * and 3-D, partition independence of the fixed-point grids and z sums, the grid plan, and bad or degenerate input.
 */
class GridRepulsionTest {
    /** The whole repulsive pipeline on row slices cut at {@code cuts} (G2G by brute force on the support). */
    static final class Rep {
        InterpGrid grid;
        long[] charges;
        double[] force;
        long[] zTotal;
        double z;
    }

    static Rep repulsion(double[] y, int n, int dim, TsneGridOptions opt, int[] cuts, Backend backend) {
        Rep r = new Rep();
        r.grid = TsneForcesTestData.plan(y, n, dim, opt);
        r.charges = new long[GridRepulsion.chargesLength(r.grid)];
        for (int s = 0; s + 1 < cuts.length; s++) {
            GridRepulsion.addCharges(r.charges, GridRepulsion.s2g(r.grid, n,
                    TsneForcesTestData.rows(y, dim, cuts[s], cuts[s + 1]), cuts[s + 1] - cuts[s], backend));
        }
        double[] phi = TsneForcesTestData.convolveOnSupport(r.grid, GridRepulsion.chargesToDouble(r.grid, n, r.charges));
        r.force = new double[n * dim];
        r.zTotal = new long[2];
        for (int s = 0; s + 1 < cuts.length; s++) {
            Repulsion part = GridRepulsion.g2s(r.grid, n, phi, TsneForcesTestData.rows(y, dim, cuts[s], cuts[s + 1]),
                    cuts[s + 1] - cuts[s], backend);
            System.arraycopy(part.force, 0, r.force, cuts[s] * dim, part.force.length);
            GridRepulsion.addZ(r.zTotal, part);
        }
        r.z = GridRepulsion.z(r.zTotal, n);
        return r;
    }

    /**
     * Repulsive forces and Z against the exact O(n^2) sums, relative error of the whole force vector asserted per
     * case. Measured (CPU twin = GPU bits): the default grid (p = 3, one box per unit, at least 50 boxes) gives
     * about 2e-4 at extent 10 (boxes 0.2 wide) but 1.5e-2 at extent 50 (boxes about 1 wide), 3e-2 in 3-D; the
     * error is set by the box width, and p = 4 with two boxes per unit stays below 1e-3 everywhere.
     */
    @Test
    void repulsionMatchesExactInOneTwoAndThreeDimensions() {
        // dim, extent, p, boxes per unit, min boxes, max boxes, bound on the force error, bound on the Z error
        double[][] cases = {
            {1, 10, 3, 1, 50, 400, 1e-3, 1e-4}, {1, 50, 3, 1, 50, 400, 3e-2, 1e-4}, {1, 50, 4, 2, 50, 400, 1e-3, 1e-4},
            {2, 10, 3, 1, 50, 200, 1e-3, 1e-4}, {2, 50, 3, 1, 50, 200, 3e-2, 3e-3}, {2, 50, 4, 2, 50, 200, 1e-3, 1e-4},
            {3, 10, 3, 1, 20, 40, 2e-2, 6e-3}, {3, 50, 3, 1, 20, 40, 5e-2, 3e-2}, {3, 10, 4, 2, 20, 40, 1e-3, 1e-3},
        };
        StringBuilder failures = new StringBuilder();
        for (double[] c : cases) {
            int dim = (int) c[0];
            double extent = c[1];
            int n = dim == 3 ? 250 : 400;
            int[] max = {0, (int) c[5], (int) c[5], (int) c[5]}; // only max[dim] matters
            TsneGridOptions opt = new TsneGridOptions((int) c[2], c[3], (int) c[4], max);
            double[] y = TsneForcesTestData.clusters(n, dim, 6, extent, 100 * dim + (long) extent);
            Rep r = repulsion(y, n, dim, opt, new int[] {0, n}, Backend.CPU);
            double[] exact = ExactTsne.repulsive(y, n, dim);
            double zExact = ExactTsne.z(y, n, dim);
            double errF = TsneForcesTestData.relNorm(r.force, exact);
            double errZ = Math.abs(r.z - zExact) / zExact;
            String what = String.format("dim %d extent %.0f n %d: %d boxes x p %d (%.2f wide)", dim, extent, n,
                    r.grid.intervals, r.grid.p, r.grid.boxWidth);
            System.out.printf("[tsne forces] %s: force rel err %.3g, Z rel err %.3g%n", what, errF, errZ);
            if (errF > c[6] || errZ > c[7]) {
                failures.append(what).append(": force ").append(errF).append(", Z ").append(errZ).append("; ");
            }
        }
        assertEquals("", failures.toString(), "relative errors above the bound");
    }

    /** The defaults construct and keep the force error below the 1e-3 in 1-, 2- and 3-D at extent 20. */
    @Test
    void defaultGridMeetsTheErrorAim() {
        TsneGridOptions opt = TsneGridOptions.defaults();
        for (int dim = 1; dim <= 3; dim++) {
            int n = dim == 3 ? 250 : 400;
            double[] y = TsneForcesTestData.clusters(n, dim, 6, 20, 7 * dim);
            Rep r = repulsion(y, n, dim, opt, new int[] {0, n}, Backend.CPU);
            double errF = TsneForcesTestData.relNorm(r.force, ExactTsne.repulsive(y, n, dim));
            double errZ = Math.abs(r.z - ExactTsne.z(y, n, dim)) / ExactTsne.z(y, n, dim);
            assertTrue(errF <= 1e-3 && errZ <= 1e-3, "dim " + dim + ": force error " + errF + ", Z error " + errZ
                    + " with " + r.grid.intervals + " boxes of width " + r.grid.boxWidth);
        }
    }

    @Test
    void gridsForcesAndZDoNotDependOnTheRowSplit() {
        for (int dim = 1; dim <= 3; dim++) {
            int n = 203;
            double[] y = TsneForcesTestData.clusters(n, dim, 4, 20, 7 * dim);
            TsneGridOptions opt = new TsneGridOptions(3, 1.0, 8, new int[] {0, 400, 200, 40});
            Rep one = repulsion(y, n, dim, opt, new int[] {0, n}, Backend.CPU);
            Rep two = repulsion(y, n, dim, opt, new int[] {0, 101, n}, Backend.CPU);
            Rep five = repulsion(y, n, dim, opt, new int[] {0, 1, 50, 51, 150, n}, Backend.CPU);
            for (Rep other : new Rep[] {two, five}) {
                assertArrayEquals(one.charges, other.charges, "charges, dim " + dim);
                assertArrayEquals(one.force, other.force, 0.0, "forces, dim " + dim);
                assertArrayEquals(one.zTotal, other.zTotal, "z sum, dim " + dim);
            }
            // the charges are exact: the total of charge 0 is n (partition of unity) up to truncation
            double total = 0;
            double[] q = GridRepulsion.chargesToDouble(one.grid, n, one.charges);
            for (int m = 0; m < one.grid.nodes(); m++) {
                total += q[m];
            }
            assertEquals(n, total, 1e-9, "sum of the unit charges, dim " + dim);
        }
    }

    @Test
    void planAdaptsToTheExtentAndKeepsPointsInside() {
        TsneGridOptions opt = new TsneGridOptions(3, 2.0, 10, new int[] {0, 300, 100, 30});
        InterpGrid g = GridRepulsion.plan(new double[] {-3, 1}, new double[] {17, 5}, 2, opt);
        assertEquals(40, g.intervals); // ceil(20 * 2)
        assertEquals(3, g.p);
        assertTrue(g.lo[0] < -3 && g.lo[0] + g.intervals * g.boxWidth > 17);
        assertTrue(g.lo[1] < 1 && g.lo[1] + g.intervals * g.boxWidth > 5);
        assertEquals(10, GridRepulsion.plan(new double[] {0}, new double[] {1}, 1, opt).intervals);
        assertEquals(100, GridRepulsion.plan(new double[] {0, 0}, new double[] {1e4, 1}, 2, opt).intervals);
        InterpGrid again = GridRepulsion.plan(new double[] {-3, 1}, new double[] {17, 5}, 2, opt);
        assertArrayEquals(g.lo, again.lo, 0.0);
        assertEquals(g.boxWidth, again.boxWidth, 0.0);
        InterpGrid flat = GridRepulsion.plan(new double[] {2, 2, 2}, new double[] {2, 2, 2}, 3, opt);
        assertTrue(flat.boxWidth > 0 && flat.lo[0] < 2);
        assertThrows(IllegalArgumentException.class,
                () -> GridRepulsion.plan(new double[] {0, Double.NaN}, new double[] {1, 1}, 2, opt));
        assertThrows(IllegalArgumentException.class,
                () -> GridRepulsion.plan(new double[] {0, 2}, new double[] {1, 1}, 2, opt));
        assertThrows(IllegalArgumentException.class,
                () -> GridRepulsion.plan(new double[] {0}, new double[] {1}, 4, opt));
    }
    @Test
    void degenerateInputs() {
        TsneGridOptions opt = TsneForcesTestData.options(2);
        // all points equal: no repulsive force, Z = n (n - 1)
        double[] same = new double[2 * 6];
        Arrays.fill(same, 3.5);
        Rep r = repulsion(same, 6, 2, opt, new int[] {0, 6}, Backend.CPU);
        for (double f : r.force) {
            assertEquals(0, f, 1e-9);
        }
        assertEquals(30, r.z, 30 * 1e-6);
        // n = 4
        double[] four = {0, 0, 1, 0, 0, 2, 5, 5};
        Rep r4 = repulsion(four, 4, 2, opt, new int[] {0, 2, 4}, Backend.CPU);
        assertTrue(TsneForcesTestData.relNorm(r4.force, ExactTsne.repulsive(four, 4, 2)) < 1e-3);
        assertEquals(ExactTsne.z(four, 4, 2), r4.z, 1e-3 * ExactTsne.z(four, 4, 2));
        // huge extent: the grid is capped (box width 5000 here), so the interpolation is meaningless, but the results
        // stay finite and each z_i is clamped to [0, 2n] so the fixed-point sum cannot overflow
        double[] huge = TsneForcesTestData.clusters(100, 2, 3, 1e6, 5);
        Rep rh = repulsion(huge, 100, 2, opt, new int[] {0, 100}, Backend.CPU);
        assertEquals(200, rh.grid.intervals);
        for (double f : rh.force) {
            assertTrue(Double.isFinite(f));
        }
        assertTrue(rh.z >= -100 && rh.z <= 2.0 * 100 * 100, "Z " + rh.z);
        // bad input
        InterpGrid g = r.grid;
        assertThrows(IllegalArgumentException.class,
                () -> GridRepulsion.s2g(g, 6, new double[] {0, Double.NaN}, 1, Backend.CPU));
        assertThrows(IllegalArgumentException.class, () -> GridRepulsion.s2g(g, 6, new double[] {0}, 1, Backend.CPU));
        assertThrows(IllegalArgumentException.class, () -> GridRepulsion.s2g(g, 0, new double[] {0, 0}, 1, Backend.CPU));
        assertThrows(IllegalArgumentException.class,
                () -> GridRepulsion.g2s(g, 6, new double[3], new double[] {0, 0}, 1, Backend.CPU));
        assertThrows(IllegalArgumentException.class, () -> GridRepulsion.addCharges(new long[4], new long[6]));
    }
    /** The fixed-point bound assumes |w_k(t)| <= 2^5 per axis for t in [0, p], p <= 8. */
    @Test
    void lagrangeWeightsStayWithinTheFixedPointBound() {
        double bound = Math.scalb(1.0, GridRepulsion.WEIGHT_BITS_PER_AXIS);
        for (int p = 1; p <= 8; p++) {
            InterpGrid g = new InterpGrid(1, 1, p, new double[] {0}, p);
            GridRepulsionCpu.Stencil st = new GridRepulsionCpu.Stencil(g);
            for (int s = 0; s <= 1000; s++) {
                st.locate(new double[] {p * s / 1000.0}, 0);
                double sum = 0;
                for (int k = 0; k < p; k++) {
                    assertTrue(Math.abs(st.weight[k]) <= bound, "p " + p + " weight " + st.weight[k]);
                    sum += st.weight[k];
                }
                assertEquals(1.0, sum, 1e-9, "partition of unity, p " + p);
            }
        }
    }

    @Test
    void fastFixedPointConversionIsCorrectlyRounded() {
        Random r = new Random(9);
        long[] acc = new long[2];
        for (int t = 0; t < 20000; t++) {
            acc[0] = r.nextLong();
            acc[1] = r.nextLong() >> (4 + r.nextInt(60));
            int shift = r.nextInt(120);
            assertEquals(FixedPoint.toDouble(acc, 0, shift), GridRepulsion.toDouble(acc[0], acc[1], shift), 0.0,
                    Arrays.toString(acc) + " shift " + shift);
        }
    }
}
