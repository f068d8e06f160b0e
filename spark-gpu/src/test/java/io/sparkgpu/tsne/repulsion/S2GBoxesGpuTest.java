package io.sparkgpu.tsne.repulsion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * S2G by boxes (include/tsne/boxes.cuh) gives the plain per-point S2G's bits and the CPU twin's, on awkward inputs:
 * every dimension, the unrolled p = 3, 4 and the generic p = 2, 5, a few points, more than a warp of points in one
 * box, all points in one box, most boxes empty, points outside the grid (clamped into the edge boxes), and a sum
 * added to what acc held.
 */
@Tag("gpu")
class S2GBoxesGpuTest {

    static long[] run(CudaDevice dev, InterpGrid g, long nTotal, double[] y, int rows, boolean byBoxes, long[] start) {
        double[] prm = GridRepulsionGpu.s2gParams(g, nTotal);
        long[] acc = new long[GridRepulsion.chargesLength(g)];
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer yb = DeviceBuffer.ofDoubles(dev, Math.max(1, y.length));
             DeviceBuffer pb = DeviceBuffer.ofDoubles(dev, prm.length);
             DeviceBuffer ab = DeviceBuffer.allocate(dev, 8L * acc.length);
             S2GBoxes boxes = new S2GBoxes()) {
            yb.upload(y, s);
            pb.upload(prm, s);
            ab.upload(start, s);
            if (byBoxes) {
                GridRepulsionGpu.launchS2GByBoxes(s, g, rows, yb, pb, ab, boxes);
                // a second call on the same buffers: the index buffers are reused, the sums add up
                GridRepulsionGpu.launchS2GByBoxes(s, g, rows, yb, pb, ab, boxes);
            } else {
                GridRepulsionGpu.launchS2G(s, g, rows, yb, pb, ab);
                GridRepulsionGpu.launchS2G(s, g, rows, yb, pb, ab);
            }
            ab.download(acc, acc.length, s);
            s.synchronize("S2G test");
        }
        return acc;
    }

    @Test
    void byBoxesEqualsThePlainKernelAndTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        SplittableRandom r = new SplittableRandom(41);
        int[][] cases = { // dim, intervals, p, rows, layout (0 spread, 1 one box, 2 clustered in few boxes, 3 outside)
            {1, 50, 3, 1000, 0}, {2, 40, 3, 20000, 0}, {3, 8, 3, 5000, 0}, {2, 30, 4, 7000, 2}, {3, 6, 4, 3000, 0},
            {2, 17, 2, 3001, 0}, {2, 9, 5, 2999, 3}, {1, 7, 2, 33, 1}, {2, 64, 3, 5, 0}, {2, 25, 3, 4000, 1},
            {3, 5, 5, 700, 2}};
        for (int[] c : cases) {
            int dim = c[0];
            int rows = c[3];
            double[] lo = new double[dim];
            java.util.Arrays.fill(lo, -5.0);
            double boxWidth = 10.0 / c[1];
            InterpGrid g = new InterpGrid(dim, c[1], c[2], lo, boxWidth);
            double[] y = new double[rows * dim];
            for (int i = 0; i < y.length; i++) {
                switch (c[4]) {
                    case 1: y[i] = -5.0 + 0.3 * boxWidth + 0.2 * boxWidth * r.nextDouble(); break;
                    case 2: y[i] = (r.nextInt(3) - 1) * 2.0 + 0.01 * r.nextGaussian(); break;
                    case 3: y[i] = r.nextDouble(-7.0, 7.0); break;
                    default: y[i] = r.nextDouble(-5.0, 5.0);
                }
            }
            long nTotal = 3L * rows;
            long[] start = new long[GridRepulsion.chargesLength(g)];
            for (int i = 0; i < start.length; i++) {
                start[i] = r.nextLong() >>> 8;
            }
            String what = "dim " + dim + ", intervals " + c[1] + ", p " + c[2] + ", rows " + rows + ", layout " + c[4];
            long[] plain = run(dev, g, nTotal, y, rows, false, start);
            long[] boxes = run(dev, g, nTotal, y, rows, true, start);
            assertArrayEquals(plain, boxes, what + ": by boxes vs per point");
            long[] cpu = GridRepulsionCpu.s2g(g, nTotal, y, rows);
            long[] twice = start.clone();
            GridRepulsion.addCharges(twice, cpu);
            GridRepulsion.addCharges(twice, cpu);
            assertArrayEquals(twice, boxes, what + ": by boxes vs the CPU twin");
        }
    }
}
