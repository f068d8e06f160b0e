package io.sparkgpu.tsne.affinity;

import io.sparkgpu.cuda.Backend;
import java.util.Random;

/**
 * Timing of the local affinity pipeline on the GPU (not a test): {@code TsneKnnTiming n d k perplexity [check]}.
 * Data: 20 Gaussian clusters. With check, 2000 random rows are recomputed on the CPU twin and compared bitwise.
 */
public final class TsneKnnTiming {
    private TsneKnnTiming() {
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        int d = Integer.parseInt(args[1]);
        int k = Integer.parseInt(args[2]);
        double perp = Double.parseDouble(args[3]);
        boolean check = args.length > 4;
        Random r = new Random(1);
        float[] centres = new float[20 * d];
        for (int i = 0; i < centres.length; i++) {
            centres[i] = (float) (r.nextGaussian() * 10);
        }
        float[] x = new float[n * d];
        for (int i = 0; i < n; i++) {
            int c = r.nextInt(20);
            for (int t = 0; t < d; t++) {
                x[i * d + t] = centres[c * d + t] + (float) r.nextGaussian();
            }
        }
        // warm-up (module load, JIT)
        TsneAffinities.knn(java.util.Arrays.copyOf(x, 200 * d), 200, d, Math.min(k, 199), Backend.GPU);
        long t0 = System.nanoTime();
        KnnGraph g = TsneAffinities.knn(x, n, d, k, Backend.GPU);
        long t1 = System.nanoTime();
        double[] pc = TsneAffinities.conditional(g, perp, Backend.GPU);
        long t2 = System.nanoTime();
        SparseRows p = JointProbabilities.symmetrize(g, pc);
        long t3 = System.nanoTime();
        System.out.printf("n=%d d=%d k=%d perplexity=%.1f: knn %.3f s, conditional %.3f s, symmetrize %.3f s, nnz %d%n",
                n, d, k, perp, (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9, p.nnz());
        if (check) {
            int rows = 2000;
            int q0 = r.nextInt(n - rows + 1);
            float[] q = java.util.Arrays.copyOfRange(x, q0 * d, (q0 + rows) * d);
            long c0 = System.nanoTime();
            KnnGraph cpu = TsneAffinities.knnBlock(q, q0, rows, x, 0, n, d, k, n, Backend.CPU);
            long c1 = System.nanoTime();
            boolean same = java.util.Arrays.equals(cpu.index, java.util.Arrays.copyOfRange(g.index, q0 * k, (q0 + rows) * k))
                    && java.util.Arrays.equals(cpu.dist2, java.util.Arrays.copyOfRange(g.dist2, q0 * k, (q0 + rows) * k));
            System.out.printf("check rows %d..%d on the CPU twin (%.1f s): %s%n", q0, q0 + rows, (c1 - c0) / 1e9,
                    same ? "bitwise equal" : "DIFFERENT");
            if (!same) {
                System.exit(3);
            }
        }
    }
}
