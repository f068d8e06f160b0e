package io.sparkgpu.kmeans;

import io.sparkgpu.common.FixedPoint;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The Lloyd loop, written once and run wherever the passes run: on the driver around one Spark job per
 * pass, on the driver over blocks it holds (small data), or inside every task of one barrier stage around
 * passes whose partials the tasks exchange. Each pass returns the exact combined accumulator of all points;
 * the centre update, the convergence test (MLlib's: every centre moved by at most {@code tol}) and the cost
 * are computed from it alone, so every place that runs the loop computes the same bits.
 */
final class KMeansLloyd {
    private KMeansLloyd() {
    }

    /** What does not change during a fit. */
    static final class Spec implements Serializable {
        private static final long serialVersionUID = 1L;
        final int k;
        final int d;
        final int maxIter;
        final double tol;
        final boolean cosine;
        final KMeansScales scales;

        Spec(int k, int d, int maxIter, double tol, boolean cosine, KMeansScales scales) {
            this.k = k;
            this.d = d;
            this.maxIter = maxIter;
            this.tol = tol;
            this.cosine = cosine;
            this.scales = scales;
        }
    }

    /** Exact partial (or combined) result of one pass, with which backend ran how many blocks and the GPU's time. */
    static final class Partial implements Serializable {
        private static final long serialVersionUID = 1L;
        long[] acc;
        int gpu;
        int cpu;
        /** Wall seconds of GPU work (copies, kernels, the final synchronisation) inside this pass, summed over blocks. */
        double gpuSeconds;

        Partial(long[] acc) {
            this.acc = acc;
        }

        Partial add(Partial o, int k, int d) {
            KMeansAccumulator.merge(acc, o.acc, k, d);
            gpu += o.gpu;
            cpu += o.cpu;
            gpuSeconds += o.gpuSeconds;
            return this;
        }

        /** Bytes for the barrier tasks' exchange: counts, GPU time and the accumulator. */
        byte[] encodeBytes() {
            ByteBuffer b = ByteBuffer.allocate(8 * (acc.length + 3));
            b.putLong(gpu).putLong(cpu).putDouble(gpuSeconds);
            for (long v : acc) {
                b.putLong(v);
            }
            return b.array();
        }

        static Partial decode(byte[] bytes) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            int gpu = (int) b.getLong();
            int cpu = (int) b.getLong();
            double gs = b.getDouble();
            long[] acc = new long[b.remaining() / 8];
            for (int i = 0; i < acc.length; i++) {
                acc[i] = b.getLong();
            }
            Partial p = new Partial(acc);
            p.gpu = gpu;
            p.cpu = cpu;
            p.gpuSeconds = gs;
            return p;
        }
    }

    /** One pass over all points with these centres: the exact combined accumulator. */
    @FunctionalInterface
    interface Pass {
        Partial run(double[] centres, int k);
    }

    /** Called after each iteration (1-based) where the loop runs. */
    @FunctionalInterface
    interface Listener {
        void onIteration(int iteration, double cost, double maxShift);
    }

    /** Outcome of the loop and the final pass. */
    static final class Outcome implements Serializable {
        private static final long serialVersionUID = 1L;
        double[] centres;
        final List<double[]> history = new ArrayList<>();
        /** Wall seconds of each iteration where the loop ran (pass, exchange and update). */
        final List<Double> iterationSeconds = new ArrayList<>();
        int iterations;
        boolean converged;
        double trainingCost;
        long[] sizes;
        double finalCost;
        int gpuPasses;
        int cpuPasses;
        double gpuSeconds;
        double finalPassSeconds;
    }

    /** Runs up to maxIter Lloyd iterations from {@code centres}, then the final pass (cluster sizes, cost). */
    static Outcome run(Spec s, double[] centres, Pass pass, Listener listener) {
        Outcome o = new Outcome();
        final int k = s.k;
        final int d = s.d;
        while (o.iterations < s.maxIter && !o.converged) {
            long t0 = System.nanoTime();
            Partial part = pass.run(centres, k);
            o.gpuPasses += part.gpu;
            o.cpuPasses += part.cpu;
            o.gpuSeconds += part.gpuSeconds;
            long[] acc = part.acc;
            double[] next = KMeansAccumulator.centres(acc, centres, k, d, s.cosine, s.scales);
            double maxShift = 0;
            boolean converged = true;
            for (int c = 0; c < k; c++) {
                // cosine: a centre that did not change has moved by exactly 0 (its computed cosine distance to
                // itself is ~1e-16 and would never meet tol = 0)
                double moved = !s.cosine ? KMeansCpu.fullSquared(centres, c * d, next, c * d, d)
                        : java.util.Arrays.equals(centres, c * d, (c + 1) * d, next, c * d, (c + 1) * d) ? 0.0
                        : Math.max(0.0, KMeansCpu.cosineDistance(centres, c * d, next, c * d, d));
                boolean ok = s.cosine ? moved <= s.tol : moved <= s.tol * s.tol;
                converged &= ok;
                maxShift = Math.max(maxShift, s.cosine ? moved : Math.sqrt(moved));
            }
            o.converged = converged;
            centres = next;
            o.trainingCost = FixedPoint.toDouble(acc, KMeansAccumulator.costAt(k, d), s.scales.costShift());
            o.iterations++;
            o.history.add(new double[] {o.trainingCost, maxShift});
            o.iterationSeconds.add((System.nanoTime() - t0) / 1e9);
            if (listener != null) {
                listener.onIteration(o.iterations, o.trainingCost, maxShift);
            }
        }
        long f0 = System.nanoTime();
        Partial fin = pass.run(centres, k);
        o.finalPassSeconds = (System.nanoTime() - f0) / 1e9;
        o.gpuPasses += fin.gpu;
        o.cpuPasses += fin.cpu;
        o.gpuSeconds += fin.gpuSeconds;
        o.sizes = new long[k];
        for (int c = 0; c < k; c++) {
            o.sizes[c] = fin.acc[KMeansAccumulator.countAt(c, k, d)];
        }
        o.finalCost = FixedPoint.toDouble(fin.acc, KMeansAccumulator.costAt(k, d), s.scales.costShift());
        o.centres = centres;
        return o;
    }

    static String backendName(int gpuPasses, int cpuPasses) {
        return gpuPasses > 0 && cpuPasses == 0 ? "gpu" : gpuPasses == 0 ? "cpu" : "mixed";
    }
}
