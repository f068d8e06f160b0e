package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The tensor-core filter's bound (TsneKnnBound) on the host: the filter's key is emulated (3xTF32 split rounded
 * to nearest, chunks of 32 dimensions accumulated in float with truncation, the kernel's float key) and every pair must satisfy
 * twin dist2 &gt;= the certificate's lower bound, on data built to make the TF32 error large (points far from the
 * centre, nearly equal, d = 1, 50, 784). The plain 3xTF32 distance must overshoot the twin's on that data, so the
 * data does test the bound.
 */
class TsneKnnBoundTest {

    /** Round-toward-zero float of a double (the most pessimistic tensor-core accumulation step). */
    private static float truncate(double x) {
        float f = (float) x;
        if (Math.abs((double) f) > Math.abs(x)) {
            f = nextTowardZero(f);
        }
        return f;
    }

    private static float nextTowardZero(float f) {
        return f > 0 ? Math.nextDown(f) : Math.nextUp(f);
    }

    private static final class Emu {
        final float[] z;
        final float[] lo;
        final float[] nrm;
        final float[] m;

        Emu(float[] x, int rows, int d, float[] mu, float cm) {
            z = new float[rows * d];
            lo = new float[rows * d];
            nrm = new float[rows];
            m = new float[rows];
            for (int r = 0; r < rows; r++) {
                double s = 0;
                for (int t = 0; t < d; t++) {
                    float y = x[r * d + t] - mu[t];
                    s += (double) y * y;
                    z[r * d + t] = TsneKnnBound.tf32(y);
                    lo[r * d + t] = TsneKnnBound.tf32(y - z[r * d + t]);
                }
                nrm[r] = (float) s;
                m[r] = nrm[r] * cm;
            }
        }

        float key(int i, int j, int d) {
            float acc = 0f;
            for (int t0 = 0; t0 < d; t0 += 32) { // chunks of 32 dimensions, each truncated term by term
                float part = 0f;
                for (int t = t0; t < Math.min(d, t0 + 32); t++) { // products of TF32 values are exact in double
                    part = truncate((double) part + (double) z[i * d + t] * lo[j * d + t]);
                    part = truncate((double) part + (double) lo[i * d + t] * z[j * d + t]);
                    part = truncate((double) part + (double) z[i * d + t] * z[j * d + t]);
                }
                acc += part;
            }
            return (nrm[i] + m[j]) - 2f * acc;
        }
    }

    /** Smallest (twin dist2 - lower bound) over all pairs, relative to the query norm, with the bound scaled by f. */
    private static double worst(float[] x, int n, int d, float[] mu, double f) {
        TsneKnnBound b = new TsneKnnBound(d);
        Emu e = new Emu(x, n, d, mu, b.cm);
        double worst = Double.POSITIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (i == j) {
                    continue;
                }
                float key = e.key(i, j, d);
                float dd = TsneAffinitiesCpu.dist2(x, i, x, j, d);
                double lb = b.g * ((double) key - f * b.c3 * e.nrm[i]) - b.absSlack;
                worst = Math.min(worst, (dd - lb) / Math.max(1e-30, e.nrm[i]));
            }
        }
        return worst;
    }

    private static float[] farCluster(Random r, int n, int d, double offset, double spread) {
        float[] x = new float[n * d];
        double[] base = new double[d];
        for (int t = 0; t < d; t++) {
            base[t] = offset * (1 + r.nextDouble());
        }
        for (int i = 0; i < n; i++) {
            for (int t = 0; t < d; t++) {
                x[i * d + t] = (float) (base[t] + spread * r.nextGaussian());
            }
        }
        return x;
    }

    @Test
    void keyMinusBoundNeverExceedsTheTwinsDistance() {
        Random r = new Random(7);
        int[][] shapes = {{60, 1}, {40, 50}, {12, 784}};
        for (int[] s : shapes) {
            int n = s[0];
            int d = s[1];
            // centre 0 while the points sit far from it: the TF32 error of the dot product dominates
            float[] x = farCluster(r, n, d, 100, 1e-1);
            float[] zero = new float[d];
            assertTrue(worst(x, n, d, zero, 1.0) >= 0, "bound violated for d=" + d);
            float[] mixed = TsneAffinitiesTest.data(r, n, d, true);
            assertTrue(worst(mixed, n, d, TsneAffinitiesGpu.centre(mixed, n, d), 1.0) >= 0, "ties, d=" + d);
        }
        // the data is hard enough: the plain 3xTF32 distance (no bound) overshoots the twin's somewhere (so a filter
        // without the bound would be wrong), by a visible part of the allowance c2 (N_i + N_j) (the accumulation
        // term of the bound is a worst case: measured truncation errors mostly cancel)
        int n = 60;
        float[] far = farCluster(r, n, 1, 100, 1e-1);
        TsneKnnBound b = new TsneKnnBound(1);
        Emu plain = new Emu(far, n, 1, new float[1], 1f);
        double most = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (i != j) {
                    double over = plain.key(i, j, 1) - TsneAffinitiesCpu.dist2(far, i, far, j, 1);
                    most = Math.max(most, over / (b.c2 * ((double) plain.nrm[i] + plain.nrm[j])));
                }
            }
        }
        assertTrue(most > 0.005, "the TF32 error reaches only " + most + " of the bound");
    }

    @Test
    void constantsAndTf32Rounding() {
        TsneKnnBound b = new TsneKnnBound(50);
        assertEquals(56, b.dp);
        assertTrue(b.cm <= 1.0 - b.c2 && b.c2 > 3 * 32 * 0x1p-21 && b.c2 < 1e-4, "c2=" + b.c2);
        assertTrue(b.g < 1 && b.g > 1 - 1e-5);
        assertEquals(1.0f, TsneKnnBound.tf32(1.0f + 0x1p-12f)); // halfway: ties away from zero
        assertEquals(1.0f + 0x1p-10f, TsneKnnBound.tf32(1.0f + 0x1p-11f + 0x1p-23f));
        assertEquals(-(1.0f + 0x1p-10f), TsneKnnBound.tf32(-(1.0f + 0x1p-11f)));
        assertEquals(1.0f, TsneKnnBound.tf32(1.0f + 0x1p-12f - 0x1p-23f));
        // certificate: strict, and never with a non-positive bound
        assertTrue(b.certified(1f, 10f, 1f));
        assertTrue(!b.certified(0f, 0f, 1f));
        assertTrue(!b.certified(0f, Float.NEGATIVE_INFINITY, 1f));
    }

    @Test
    void candidatesAndCentre() {
        int saved = TsneAffinitiesGpu.margin;
        try {
            TsneAffinitiesGpu.margin = -1;
            assertEquals(90 + 45, TsneAffinitiesGpu.candidates(90, 1_000_000));
            assertEquals(10 + 16, TsneAffinitiesGpu.candidates(10, 1_000_000));
            assertEquals(20, TsneAffinitiesGpu.candidates(10, 20));
            TsneAffinitiesGpu.margin = 0;
            assertEquals(90, TsneAffinitiesGpu.candidates(90, 1_000_000));
        } finally {
            TsneAffinitiesGpu.margin = saved;
        }
        float[] mu = TsneAffinitiesGpu.centre(new float[] {1, 10, 3, 20}, 2, 2);
        assertEquals(2f, mu[0]);
        assertEquals(15f, mu[1]);
    }
}
