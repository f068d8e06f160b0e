package io.sparkgpu.spline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.spline.SplineConfig.Extrapolate;
import io.sparkgpu.spline.SplineConfig.Kind;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The kernels against the CPU twin, bit for bit, on awkward sizes (around the guide and block sizes). */
@Tag("gpu")
class SplineGpuTest {
    private static final int[] SIZES = {2, 3, 4, 255, 256, 257, 2047, 2048, 2049, 4095, 4096, 4097, 8193, 100_003};

    /** Monotone data with flats, steps and uneven spacing; direction by sign. */
    static double[][] data(int n, long seed, double sign) {
        Random r = new Random(seed);
        double[] x = new double[n];
        double[] y = new double[n];
        double xv = r.nextGaussian();
        double yv = 0;
        for (int i = 0; i < n; i++) {
            xv += r.nextInt(20) == 0 ? 1e-9 : r.nextDouble() * (r.nextInt(10) == 0 ? 100 : 1);
            x[i] = xv;
            int kind = r.nextInt(6);
            yv += kind == 0 ? 0 : kind == 1 ? r.nextDouble() * 50 : r.nextDouble();
            y[i] = sign * yv;
        }
        return new double[][] {x, y};
    }

    static double[] queries(double[] x, int k, long seed, boolean sorted) {
        Random r = new Random(seed);
        double lo = x[0];
        double hi = x[x.length - 1];
        double span = hi - lo;
        double[] z = new double[k];
        for (int i = 0; i < k; i++) {
            int c = r.nextInt(10);
            z[i] = c == 0 ? x[r.nextInt(x.length)] : c == 1 ? lo - span * r.nextDouble() * 0.1
                    : c == 2 ? hi + span * r.nextDouble() * 0.1 : c == 3 ? Double.NaN : lo + span * r.nextDouble();
        }
        if (sorted) {
            Arrays.sort(z);
        }
        return z;
    }

    @Test
    void buildEvalAndInverseMatchTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        for (int n : SIZES) {
            for (double sign : new double[] {1, -1}) {
                double[][] d = data(n, n * 31L + (sign > 0 ? 1 : 2), sign);
                double[] slopes = SplineCpu.butlandSlopes(d[0], d[1]);
                for (int variant = 0; variant < 3; variant++) {
                    Kind kind = variant == 0 ? Kind.SCHUMAKER : Kind.RATIONAL;
                    double[] p = variant == 2 ? Arrays.stream(slopes).map(v -> v * 1.5).toArray() : null;
                    Spline cpu = SplineCpu.build(kind, d[0], d[1], p);
                    Spline gpu = SplineGpu.build(dev, kind, d[0], d[1], p);
                    String what = kind + " n=" + n + " sign=" + sign + " variant=" + variant;
                    assertTrue(cpu.sameBits(gpu), what + ": construction bits");
                    for (Extrapolate mode : new Extrapolate[] {Extrapolate.CLIP, Extrapolate.LINEAR, Extrapolate.NAN}) {
                        int k = n == 100_003 ? 300_001 : 5_000;
                        double[] z = queries(d[0], k, n + mode.code, mode == Extrapolate.CLIP);
                        double[] cv = new double[k];
                        double[] cd = new double[k];
                        double[] gv = new double[k];
                        double[] gd = new double[k];
                        SplineCpu.eval(cpu, z, mode, cv, cd);
                        SplineGpu.eval(dev, gpu, z, mode, gv, gd);
                        assertArrayEquals(cv, gv, 0.0, what + " " + mode + ": values");
                        assertArrayEquals(cd, gd, 0.0, what + " " + mode + ": derivatives");
                        double[] gvOnly = new double[k];
                        SplineGpu.eval(dev, gpu, z, mode, gvOnly, null); // the value-only kernel path
                        assertArrayEquals(cv, gvOnly, 0.0, what + " " + mode + ": values without derivatives");
                        double[] ci = new double[k];
                        double[] gi = new double[k];
                        SplineCpu.inverse(cpu, cv, mode, ci);
                        SplineGpu.inverse(dev, gpu, cv, mode, gi);
                        assertArrayEquals(ci, gi, 0.0, what + " " + mode + ": inverse");
                    }
                }
            }
        }
    }

    @Test
    void errorsAreTheTwinsErrors() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        double[][] d = data(5000, 3, 1);
        double[] y = d[1].clone();
        y[4000] = y[3999] - 1;
        y[4500] = Double.NaN;
        for (Kind kind : Kind.values()) {
            String cpu = assertThrows(IllegalArgumentException.class, () -> SplineCpu.build(kind, d[0], y, null))
                    .getMessage();
            String gpu = assertThrows(IllegalArgumentException.class, () -> SplineGpu.build(dev, kind, d[0], y, null))
                    .getMessage();
            assertEquals(cpu, gpu);
            Spline s = SplineCpu.build(kind, d[0], d[1], null);
            double[] z = queries(d[0], 10_000, 5, false);
            double[] out = new double[z.length];
            String ce = assertThrows(IllegalArgumentException.class,
                    () -> SplineCpu.eval(s, z, Extrapolate.ERROR, out, null)).getMessage();
            String ge = assertThrows(IllegalArgumentException.class,
                    () -> SplineGpu.eval(dev, s, z, Extrapolate.ERROR, out, null)).getMessage();
            assertEquals(ce, ge);
        }
    }
}
