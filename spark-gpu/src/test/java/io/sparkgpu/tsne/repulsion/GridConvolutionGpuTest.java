package io.sparkgpu.tsne.repulsion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.tsne.repulsion.GridConvolution.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * G2G kernels against the CPU twin: both evaluate the same correctly rounded operations in the same order, so
 * DIRECT and FFT must return identical bits (the requirement is 1e-12 relative; bits are checked).
 */
@Tag("gpu")
class GridConvolutionGpuTest {

    @AfterAll
    static void freeWorkspaces() {
        G2GGpu.clearCache();
    }

    static void assertSameBits(double[] cpu, double[] gpu, String what) {
        assertTrue(GridConvolutionTest.relDiffRaw(cpu, gpu) <= 1e-12, what + ": relative difference "
                + GridConvolutionTest.relDiffRaw(cpu, gpu));
        assertArrayEquals(cpu, gpu, 0.0, what + ": bits");
    }

    @Test
    void directAndFftEqualCpuTwinOnAwkwardShapes() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        for (int[] s : GridConvolutionTest.SHAPES) {
            InterpGrid g = GridConvolutionTest.grid(s[0], s[1], s[2], 0.7);
            double[] q = GridConvolutionTest.randomCharges(g, 5 + s[1]);
            for (Method m : new Method[] {Method.DIRECT, Method.FFT}) {
                double[] cpu = GridConvolution.convolveOn(null, g, q, m, null);
                double[] gpu = GridConvolution.convolveOn(dev, g, q, m, null);
                assertSameBits(cpu, gpu, m + " " + java.util.Arrays.toString(s));
            }
        }
    }

    @Test
    void practicalGridSizesEqualCpuTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        // 1-D 400*3, 2-D (200*3)^2, 3-D (20*3)^3 (the CPU twin of (40*3)^3 is left to the benchmark); 1-D 1700*3
        // (m = 5120 > FUSED_MAX_M: one global-memory pass per radix), 2-D m = 135 (odd: line pairs of the
        // strided axis straddle rows), 2-D (320*4)^2 (the 70k x 784 benchmark's grid: 1280 = 5*4*4*4*4, fused)
        int[][] shapes = {{1, 400, 3}, {2, 200, 3}, {3, 20, 3}, {2, 67, 3}, {1, 1700, 3}, {2, 45, 3}, {2, 320, 4}};
        for (int[] s : shapes) {
            InterpGrid g = GridConvolutionTest.grid(s[0], s[1], s[2], 1.0);
            double[] q = GridConvolutionTest.randomCharges(g, s[1]);
            double[] cpu = GridConvolution.convolveOn(null, g, q, Method.FFT, null);
            double[] gpu = GridConvolution.convolveOn(dev, g, q, Method.FFT, null);
            assertSameBits(cpu, gpu, "FFT " + java.util.Arrays.toString(s));
            if (g.nodes() <= 40_000) {
                double[] direct = GridConvolution.convolveOn(dev, g, q, Method.DIRECT, null);
                double rel = GridConvolutionTest.diffOverTotalCharge(g, gpu, direct, q); // float transforms
                assertTrue(rel < GridConvolutionTest.FFT_REL, "GPU FFT vs GPU DIRECT " + java.util.Arrays.toString(s)
                        + ": " + rel);
                assertSameBits(GridConvolution.convolveOn(null, g, q, Method.DIRECT, null), direct,
                        "DIRECT " + java.util.Arrays.toString(s));
            }
        }
    }

    @Test
    void adaptiveGridsSharingAnFftLengthReuseWorkspacesCorrectly() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        // n = 121..125 all use m = 125: one cached workspace, different lattices and spacings
        for (int n = 125; n >= 121; n--) {
            InterpGrid g = GridConvolutionTest.grid(2, n, 1, 0.5 + n * 0.01);
            double[] q = GridConvolutionTest.randomCharges(g, n);
            assertSameBits(GridConvolution.convolveOn(null, g, q, Method.FFT, null),
                    GridConvolution.convolveOn(dev, g, q, Method.FFT, null), "n=" + n);
        }
    }

    @Test
    void concurrentCallersGetTheirOwnResults() throws Exception {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<String>> fs = new ArrayList<>();
            for (int t = 0; t < 12; t++) {
                final int k = t;
                fs.add(pool.submit(() -> {
                    InterpGrid g = GridConvolutionTest.grid(1 + k % 3, k % 3 == 2 ? 6 : 20, 3, 1.0 + k);
                    double[] q = GridConvolutionTest.randomCharges(g, 1000 + k);
                    Method m = k % 2 == 0 ? Method.FFT : Method.DIRECT;
                    double[] want = GridConvolution.convolveOn(null, g, q, m, null);
                    for (int rep = 0; rep < 3; rep++) {
                        double[] got = GridConvolution.convolveOn(dev, g, q, m, null);
                        if (!java.util.Arrays.equals(want, got)) {
                            return "caller " + k + " rep " + rep + " differs";
                        }
                    }
                    return "";
                }));
            }
            for (Future<String> f : fs) {
                String err = f.get();
                assertTrue(err.isEmpty(), err);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void deviceResidentPathEqualsHostPath() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        InterpGrid g = GridConvolutionTest.grid(2, 30, 3, 0.8);
        double[] q = GridConvolutionTest.randomCharges(g, 77);
        for (Method m : new Method[] {Method.DIRECT, Method.FFT}) {
            double[] host = GridConvolution.convolveOn(dev, g, q, m, null);
            try (GpuStream s = new GpuStream(dev);
                 DeviceBuffer dq = DeviceBuffer.ofDoubles(dev, q.length);
                 DeviceBuffer dphi = DeviceBuffer.ofDoubles(dev, q.length)) {
                dq.upload(q, s);
                G2GGpu.convolve(s, g, dq, dphi, m);
                double[] got = new double[q.length];
                dphi.download(got, got.length, s);
                s.synchronize("test");
                assertSameBits(host, got, "device-resident " + m);
            }
        }
    }
}
