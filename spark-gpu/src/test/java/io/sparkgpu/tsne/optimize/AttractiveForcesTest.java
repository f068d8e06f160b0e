package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.tsne.TsneForcesTestData;
import io.sparkgpu.tsne.affinity.SparseRows;
import org.junit.jupiter.api.Test;

/** The attractive term's CPU twin against the exact term and an independently written sum; bad input. */
class AttractiveForcesTest {

    /** sum_j P_ij w_ij (y_i - y_j), written independently: entries in reverse order, w = 1 / (1 + d2) first. */
    static double[] attractiveReversed(SparseRows p, double[] y, int dim) {
        double[] out = new double[p.rows * dim];
        for (int r = 0; r < p.rows; r++) {
            int i = p.rowOffset + r;
            for (int e = p.rowPtr[r + 1] - 1; e >= p.rowPtr[r]; e--) {
                int j = p.col[e];
                double d2 = 0;
                for (int a = dim - 1; a >= 0; a--) {
                    d2 += (y[i * dim + a] - y[j * dim + a]) * (y[i * dim + a] - y[j * dim + a]);
                }
                double w = 1.0 / (1.0 + d2);
                for (int a = 0; a < dim; a++) {
                    out[r * dim + a] += p.val[e] * w * (y[i * dim + a] - y[j * dim + a]);
                }
            }
        }
        return out;
    }

    @Test
    void attractiveEqualsExactUpToRoundingOrder() {
        for (int dim = 1; dim <= 3; dim++) {
            int n = 300;
            double[] y = TsneForcesTestData.clusters(n, dim, 5, 30, dim);
            SparseRows whole = TsneForcesTestData.randomRows(n, 0, n, 5, 40, 120, 10 + dim);
            SparseRows slice = TsneForcesTestData.randomRows(n, 37, 101, 1, 30, 0, 20 + dim);
            for (SparseRows p : new SparseRows[] {whole, slice}) {
                double[] f = AttractiveForces.attractive(p, y, dim, Backend.CPU);
                assertArrayEquals(ExactTsne.attractive(p, y, dim), f, 0.0, "the twin is the exact term, dim " + dim);
                double err = TsneForcesTestData.relNorm(f, attractiveReversed(p, y, dim));
                assertTrue(err <= 1e-13, "dim " + dim + ": relative difference " + err);
            }
        }
    }

    @Test
    void badInput() {
        SparseRows p = TsneForcesTestData.randomRows(4, 0, 4, 1, 3, 0, 1);
        assertThrows(IllegalArgumentException.class,
                () -> AttractiveForces.attractive(p, new double[7], 2, Backend.CPU));
        assertThrows(IllegalArgumentException.class,
                () -> AttractiveForces.attractive(p, new double[] {0, 0, 0, 0, 0, 0, 0, Double.POSITIVE_INFINITY}, 2,
                        Backend.CPU));
    }
}
