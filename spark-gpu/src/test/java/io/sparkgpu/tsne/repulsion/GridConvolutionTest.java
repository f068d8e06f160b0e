package io.sparkgpu.tsne.repulsion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.tsne.repulsion.GridConvolution.Method;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** G2G on the CPU twin: DIRECT vs a naive loop, FFT vs DIRECT on awkward sizes, deltas, the FFT itself, errors. */
class GridConvolutionTest {

    static InterpGrid grid(int dim, int intervals, int p, double boxWidth) {
        return new InterpGrid(dim, intervals, p, new double[dim], boxWidth);
    }

    static double[] randomCharges(InterpGrid g, long seed) {
        Random r = new Random(seed);
        double[] q = new double[g.charges() * g.nodes()];
        for (int i = 0; i < q.length; i++) {
            q[i] = r.nextDouble() * 2 - 1;
        }
        return q;
    }

    /** Independent reference: coordinates by nested loops, kernel by Math.pow. */
    static double[] naive(InterpGrid g, double[] q) {
        int n = g.nodesPerDim();
        int nodes = g.nodes();
        int ny = g.dim >= 2 ? n : 1;
        int nz = g.dim >= 3 ? n : 1;
        double h = g.spacing();
        double[] phi = new double[q.length];
        for (int c = 0; c < g.charges(); c++) {
            for (int az = 0; az < nz; az++) {
                for (int ay = 0; ay < ny; ay++) {
                    for (int ax = 0; ax < n; ax++) {
                        double s = 0;
                        for (int bz = 0; bz < nz; bz++) {
                            for (int by = 0; by < ny; by++) {
                                for (int bx = 0; bx < n; bx++) {
                                    double d2 = Math.pow(ax - bx, 2) + Math.pow(ay - by, 2) + Math.pow(az - bz, 2);
                                    s += Math.pow(1 + h * h * d2, -2) * q[c * nodes + bx + n * (by + n * bz)];
                                }
                            }
                        }
                        phi[c * nodes + ax + n * (ay + n * az)] = s;
                    }
                }
            }
        }
        return phi;
    }

    /** max |a - b| / max |b| over the whole arrays. */
    static double relDiffRaw(double[] a, double[] b) {
        double scale = 0;
        double diff = 0;
        for (int i = 0; i < b.length; i++) {
            scale = Math.max(scale, Math.abs(b[i]));
            diff = Math.max(diff, Math.abs(a[i] - b[i]));
        }
        return scale == 0 ? diff : diff / scale;
    }

    static double relDiff(InterpGrid g, double[] a, double[] b) {
        return GridConvolution.maxRelativeDifference(g, a, b);
    }

    /**
     * Max over charges c of max |a - b| / sum |q_c|: the float transforms' round-off is relative to the transformed
     * data, so where a charge's signed values cancel (phi much smaller than sum |q| * max K, K <= 1) it is the
     * absolute scale that bounds the difference, not the potential's own size.
     */
    static double diffOverTotalCharge(InterpGrid g, double[] a, double[] b, double[] q) {
        int nodes = g.nodes();
        double worst = 0;
        for (int c = 0; c < g.charges(); c++) {
            double total = 0;
            double diff = 0;
            for (int i = c * nodes; i < (c + 1) * nodes; i++) {
                total += Math.abs(q[i]);
                diff = Math.max(diff, Math.abs(a[i] - b[i]));
            }
            worst = Math.max(worst, total == 0 ? diff : diff / total);
        }
        return worst;
    }

    /** Max relative difference allowed between FFT (float transforms) and DIRECT potentials, per charge. */
    static final double FFT_REL = 2e-6;

    static final int[][] SHAPES = {
        // dim, intervals, p
        {1, 1, 1}, {1, 2, 1}, {1, 7, 1}, {1, 13, 1}, {1, 11, 3}, {1, 31, 1}, {1, 97, 1}, {1, 50, 3},
        {2, 1, 1}, {2, 5, 1}, {2, 7, 2}, {2, 17, 1}, {2, 11, 3},
        {3, 1, 2}, {3, 7, 1}, {3, 3, 3}, {3, 11, 1},
    };

    /**
     * The fused axis blocks G2GGpu launches for every FFT length it fuses (5-smooth m <= 4096, first and strided
     * axes, the H100's 227 KB of shared memory per block and a device with 48 KB): whole warps, at most 1024 threads,
     * every element of the block held by a thread's TSNE_G2G_FUSED_EPT registers, the lines' buffers within the
     * shared memory; and the lines and threads the H100 float timings chose at m = 1280.
     */
    @Test
    void fusedBlocksFitEveryFusableLength() {
        for (long shared : new long[] {227 * 1024, 48 * 1024}) {
            for (int m = 2; m <= G2GPlan.FUSED_MAX_M; m++) {
                if (!fiveSmooth(m)) {
                    continue;
                }
                for (boolean contiguous : new boolean[] {true, false}) {
                    int lines = G2GGpu.fusedLines(shared, m, contiguous);
                    if (lines == 0) {
                        assertTrue(G2GGpu.fusedBytes(m, 1) > shared, "m " + m + ": one line would fit");
                        continue;
                    }
                    int threads = G2GGpu.fusedThreads(m * lines, contiguous);
                    String what = "m " + m + (contiguous ? " first axis" : " strided axis") + ", " + lines
                            + " lines, " + threads + " threads";
                    assertTrue(threads % 32 == 0 && threads <= G2GGpu.FUSED_MAX_THREADS, what);
                    assertTrue((long) threads * G2GGpu.FUSED_EPT >= (long) m * lines, what);
                    assertTrue(G2GGpu.fusedBytes(m, lines) <= shared, what);
                    int mid = G2GGpu.middleLines(shared, m, contiguous);
                    if (mid == 0) {
                        assertTrue(G2GGpu.middleBytes(m, 1) > shared, "m " + m + ": one middle line would fit");
                        continue;
                    }
                    int midThreads = G2GGpu.fusedThreads(m * mid, contiguous);
                    what = "m " + m + " middle" + (contiguous ? " (1-D)" : "") + ", " + mid + " lines, " + midThreads
                            + " threads";
                    assertTrue(midThreads % 32 == 0 && midThreads <= G2GGpu.FUSED_MAX_THREADS, what);
                    assertTrue((long) midThreads * G2GGpu.FUSED_EPT >= (long) m * mid, what);
                    assertTrue(G2GGpu.middleBytes(m, mid) <= shared, what);
                }
            }
        }
        assertEquals(2, G2GGpu.middleLines(227 * 1024, 1280, false));
        assertEquals(1, G2GGpu.middleLines(227 * 1024, 4096, true));
        assertEquals(0, G2GGpu.middleLines(48 * 1024, 4096, true), "1-D m = 4096 needs 96 KB: the global passes");
        assertEquals(1, G2GGpu.fusedLines(227 * 1024, 1280, true));
        assertEquals(160, G2GGpu.fusedThreads(1280, true));
        assertEquals(2, G2GGpu.fusedLines(227 * 1024, 1280, false));
        assertEquals(320, G2GGpu.fusedThreads(2560, false));
        assertThrows(IllegalStateException.class, () -> G2GGpu.fusedThreads(8 * 1024 + 1, true));
    }

    private static boolean fiveSmooth(int m) {
        for (int r : new int[] {2, 3, 5}) {
            while (m % r == 0) {
                m /= r;
            }
        }
        return m == 1;
    }

    @Test
    void directEqualsNaiveLoop() {
        for (int[] s : SHAPES) {
            InterpGrid g = grid(s[0], s[1], s[2], 0.37 + s[1] * 0.01);
            if (g.nodes() > 400) {
                continue;
            }
            double[] q = randomCharges(g, 7 + s[1]);
            double[] direct = GridConvolution.convolve(g, q, Method.DIRECT, Backend.CPU);
            double rel = relDiff(g, direct, naive(g, q));
            assertTrue(rel < 1e-13, "DIRECT vs naive " + java.util.Arrays.toString(s) + ": " + rel);
        }
    }

    @Test
    void fftEqualsDirectOnAwkwardSizes() {
        for (int[] s : SHAPES) {
            for (double bw : new double[] {0.05, 1.0, 6.0}) {
                InterpGrid g = grid(s[0], s[1], s[2], bw);
                double[] q = randomCharges(g, 100 + s[1] * 3 + s[0]);
                double[] direct = GridConvolution.convolve(g, q, Method.DIRECT, Backend.CPU);
                double[] fft = GridConvolution.convolve(g, q, Method.FFT, Backend.CPU);
                double rel = diffOverTotalCharge(g, fft, direct, q);
                assertTrue(rel < FFT_REL, "FFT vs DIRECT " + java.util.Arrays.toString(s) + " boxWidth " + bw
                        + " (m=" + G2GPlan.fftSize(g.nodesPerDim()) + "): " + rel);
            }
        }
    }

    /**
     * t-SNE-like charges of very different scales (weights w, w * y_a with |y| up to ~60, w * |y|^2): two real
     * charges share one complex transform, so each charge's potential must stay accurate relative to its own
     * scale, not its partner's.
     */
    @Test
    void fftStaysAccuratePerChargeForTsneScaledCharges() {
        for (int dim = 1; dim <= 3; dim++) {
            InterpGrid g = new InterpGrid(dim, dim == 3 ? 5 : 12, 3, java.util.Arrays.copyOf(
                    new double[] {-60, -55, -50}, dim), dim == 3 ? 24 : 10);
            int n = g.nodesPerDim();
            int nodes = g.nodes();
            Random r = new Random(dim);
            double[] q = new double[g.charges() * nodes];
            for (int i = 0; i < nodes; i++) {
                double w = r.nextDouble() < 0.3 ? 0 : r.nextDouble();
                int[] c = {i % n, (i / n) % n, i / (n * n)};
                double y2 = 0;
                q[i] = w;
                for (int a = 0; a < dim; a++) {
                    double y = g.lo[a] + (c[a] + 0.5) * g.spacing();
                    q[(1 + a) * nodes + i] = w * y;
                    y2 += y * y;
                }
                q[(dim + 1) * nodes + i] = w * y2;
            }
            double[] direct = GridConvolution.convolve(g, q, Method.DIRECT, Backend.CPU);
            double[] fft = GridConvolution.convolve(g, q, Method.FFT, Backend.CPU);
            double rel = relDiff(g, fft, direct);
            assertTrue(rel < FFT_REL, "dim " + dim + ": per-charge relative difference " + rel);
        }
    }

    /**
     * Two charges share one complex float transform, so without the powers of two (G2GPlan.chargeExponents) the
     * smaller of a pair would keep only its partner's relative precision: here charge 0 (~1) shares with charge 1
     * (~1e6) and charge 2 (~1e-6) with charge 3 (~1e3); each must still match DIRECT to float precision of its own.
     */
    @Test
    void chargesOfVeryDifferentSizesKeepTheirOwnPrecision() {
        InterpGrid g = grid(2, 9, 3, 0.7);
        int nodes = g.nodes();
        double[] size = {1, 1e6, 1e-6, 1e3};
        Random r = new Random(5);
        double[] q = new double[g.charges() * nodes];
        for (int i = 0; i < q.length; i++) {
            q[i] = size[i / nodes] * r.nextDouble();
        }
        double[] direct = GridConvolution.convolve(g, q, Method.DIRECT, Backend.CPU);
        double[] fft = GridConvolution.convolve(g, q, Method.FFT, Backend.CPU);
        double rel = relDiff(g, fft, direct);
        assertTrue(rel < FFT_REL, "per-charge relative difference " + rel);
    }

    @Test
    void chargeExponentsBringEachChargesLargestValueToOneTwo() {
        double tiny = Double.MIN_VALUE * 8; // subnormal
        double[] q = {0.5, -3.0, 1.0, /* 2nd */ 0.0, 0.0, 0.0, /* 3rd */ tiny, -tiny, 0.0, /* 4th */ 1e-300, 7e10, -8e10};
        int[] e = G2GPlan.chargeExponents(q, 4, 3);
        assertArrayEquals(new int[] {-1, 0, 0, -Math.getExponent(8e10)}, e);
        for (int c : new int[] {0, 3}) {
            double top = 0;
            for (int i = 0; i < 3; i++) {
                top = Math.max(top, Math.abs(Math.scalb(q[c * 3 + i], e[c])));
            }
            assertTrue(top >= 1 && top < 2, "charge " + c + ": " + top);
        }
    }

    @Test
    void deltaChargeGivesTheKernel() {
        for (int dim = 1; dim <= 3; dim++) {
            InterpGrid g = grid(dim, 3, 3, 0.8); // n = 9 -> m = 9
            int n = g.nodesPerDim();
            int nodes = g.nodes();
            int[] centre = {4, 4, 4};
            int a0 = centre[0] + (dim >= 2 ? n * centre[1] : 0) + (dim >= 3 ? n * n * centre[2] : 0);
            for (Method method : new Method[] {Method.DIRECT, Method.FFT}) {
                for (int c = 0; c < g.charges(); c++) {
                    double[] q = new double[g.charges() * nodes];
                    q[c * nodes + a0] = 2.5;
                    double[] phi = GridConvolution.convolve(g, q, method, Backend.CPU);
                    double h = g.spacing();
                    for (int i = 0; i < nodes; i++) {
                        int x = i % n;
                        int y = dim >= 2 ? (i / n) % n : centre[1];
                        int z = dim >= 3 ? i / (n * n) : centre[2];
                        double d2 = Math.pow(x - centre[0], 2) + Math.pow(y - centre[1], 2) + Math.pow(z - centre[2], 2);
                        double want = 2.5 / Math.pow(1 + h * h * d2, 2);
                        assertEquals(want, phi[c * nodes + i], (method == Method.FFT ? FFT_REL : 1e-13) * 2.5,
                                method + " dim " + dim + " node " + i);
                        // mirror node has the same potential
                        int mx = 2 * centre[0] - x;
                        int my = dim >= 2 ? 2 * centre[1] - y : 0;
                        int mz = dim >= 3 ? 2 * centre[2] - z : 0;
                        assertEquals(phi[c * nodes + i], phi[c * nodes + mx + n * (my + n * mz)],
                                (method == Method.FFT ? FFT_REL : 1e-13) * 2.5);
                    }
                    for (int c2 = 0; c2 < g.charges(); c2++) {
                        if (c2 != c) {
                            for (int i = 0; i < nodes; i++) {
                                // two charges share one complex array: cross-talk is FFT round-off, a few ulps of the charge
                                assertEquals(0.0, phi[c2 * nodes + i], (method == Method.FFT ? FFT_REL : 1e-14) * 2.5,
                                        "other charges stay zero");
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void cornerDeltaReachesTheFarCorner() {
        // the longest offset (n-1 on every axis) is where a wrong circulant embedding would wrap around
        for (int dim = 1; dim <= 3; dim++) {
            InterpGrid g = grid(dim, 7, 1, 0.3); // n = 7 -> m = 8 > n
            int nodes = g.nodes();
            double[] q = new double[g.charges() * nodes];
            q[0] = 1.0;
            double[] phi = GridConvolution.convolve(g, q, Method.FFT, Backend.CPU);
            double h = g.spacing();
            double want = 1 / Math.pow(1 + h * h * 36.0 * dim, 2);
            assertEquals(want, phi[nodes - 1], FFT_REL, "far corner, dim " + dim);
        }
    }

    @Test
    void fftPassesEqualNaiveDft() {
        for (int m : new int[] {1, 2, 3, 8, 12, 30, 45, 64, 100, 240}) {
            G2GPlan plan = G2GPlan.of(1, m);
            assertEquals(m, plan.m);
            Random r = new Random(m);
            float[] x = new float[2 * m];
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) r.nextGaussian();
            }
            for (boolean inverse : new boolean[] {false, true}) {
                float[][] ab = {x.clone(), new float[2 * m]};
                G2GCpu.transform(plan, ab, 1, inverse);
                double sign = inverse ? 1 : -1;
                for (int k = 0; k < m; k++) {
                    double re = 0;
                    double im = 0;
                    for (int j = 0; j < m; j++) {
                        double a = sign * 2 * Math.PI * ((long) j * k % m) / m;
                        re += x[2 * j] * Math.cos(a) - x[2 * j + 1] * Math.sin(a);
                        im += x[2 * j] * Math.sin(a) + x[2 * j + 1] * Math.cos(a);
                    }
                    assertEquals(re, ab[0][2 * k], 1e-6 * Math.sqrt(m), "m=" + m + " re " + k);
                    assertEquals(im, ab[0][2 * k + 1], 1e-6 * Math.sqrt(m), "m=" + m + " im " + k);
                }
            }
        }
    }

    @Test
    void planSizesAndRadices() {
        assertEquals(1, G2GPlan.fftSize(1));
        assertEquals(15, G2GPlan.fftSize(13));
        assertEquals(32, G2GPlan.fftSize(31));
        assertEquals(600, G2GPlan.fftSize(600));
        assertEquals(1200, G2GPlan.fftSize(1200));
        assertEquals(125, G2GPlan.fftSize(121));
        for (int m : new int[] {2, 9, 120, 600, 1200, 1024, 375, 1280, 4096, 5000, 8000, 15625}) {
            int[] rs = G2GPlan.factor(m);
            int prod = 1;
            int twos = 0;
            for (int i = 0; i < rs.length; i++) {
                int r = rs[i];
                assertTrue(r >= 2 && r <= (m <= G2GPlan.FUSED_MAX_M ? 5 : G2GPlan.MAX_RADIX), "m " + m + " radix " + r);
                assertTrue(i == 0 || rs[i - 1] >= r, "m " + m + ": radices largest first");
                twos += r == 2 ? 1 : 0;
                prod *= r;
            }
            assertEquals(m, prod);
            assertTrue(twos <= 1, "m " + m + ": the power of two goes in 4s");
            assertEquals(m <= G2GPlan.FUSED_MAX_M, G2GPlan.of(1, m).fusable(), "m " + m);
        }
        assertArrayEquals(new int[] {5, 5, 4, 3, 2}, G2GPlan.factor(600));
        assertArrayEquals(new int[] {5, 4, 4, 4, 4}, G2GPlan.factor(1280));
        assertEquals(4, G2GPlan.factor(5000).length); // fewest radices <= 16 above FUSED_MAX_M: 10*10*10*5
        assertEquals(4, G2GPlan.factor(8000).length);
        assertEquals(0x44445L, G2GPlan.of(1, 1280).radixCode() & 0xFFFFF, "4 bits per pass, first lowest");
    }

    @Test
    void autoPicksDirectForTinyAndFftForLargeGrids() {
        assertEquals(Method.DIRECT.name(), pick(grid(1, 4, 1, 1.0)));
        assertEquals(Method.FFT.name(), pick(grid(2, 200, 3, 1.0)));
        assertEquals(Method.FFT.name(), pick(grid(3, 40, 3, 1.0)));
    }

    private static String pick(InterpGrid g) {
        boolean fft = GridConvolution.useFft(G2GPlan.of(g), g.charges(), Method.AUTO, false);
        return fft ? "FFT" : "DIRECT";
    }

    @Test
    void autoEqualsOneOfTheMethods() {
        InterpGrid g = grid(2, 6, 3, 0.5);
        double[] q = randomCharges(g, 3);
        double[] auto = GridConvolution.convolve(g, q, Method.AUTO, Backend.CPU);
        double[] d = GridConvolution.convolve(g, q, Method.DIRECT, Backend.CPU);
        double[] f = GridConvolution.convolve(g, q, Method.FFT, Backend.CPU);
        assertTrue(java.util.Arrays.equals(auto, d) || java.util.Arrays.equals(auto, f));
    }

    @Test
    void badInputIsRejectedWithClearErrors() {
        InterpGrid g = grid(2, 4, 2, 1.0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GridConvolution.convolve(g, new double[g.nodes() * 3], Method.FFT, Backend.CPU));
        assertTrue(e.getMessage().contains("charges") && e.getMessage().contains("expected"), e.getMessage());
        double[] q = new double[g.nodes() * g.charges()];
        q[g.nodes() + 5] = Double.NaN;
        e = assertThrows(IllegalArgumentException.class,
                () -> GridConvolution.convolve(g, q, Method.DIRECT, Backend.CPU));
        assertTrue(e.getMessage().contains("charges[" + (g.nodes() + 5) + "]"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> GridConvolution.convolve(g, null, Method.DIRECT, Backend.CPU));
        assertThrows(IllegalArgumentException.class,
                () -> GridConvolution.convolve(g, new double[g.nodes() * g.charges()], null, Backend.CPU));
    }

    @Test
    void cpuTwinIsIndependentOfRepeatsAndSharedPlans() {
        InterpGrid g = grid(3, 5, 2, 0.9);
        double[] q = randomCharges(g, 11);
        double[] a = GridConvolution.convolve(g, q, Method.FFT, Backend.CPU);
        double[] b = GridConvolution.convolve(g, q, Method.FFT, Backend.CPU);
        assertTrue(java.util.Arrays.equals(a, b));
    }
}
