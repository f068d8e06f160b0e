package io.sparkgpu.kmeans;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.IntStream;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.storage.StorageLevel;

/**
 * The packed points of a fit and the passes over them, in one of two places: as a cached RDD with one
 * Spark job per pass ({@link #spark}), or as blocks the driver holds, passed over by the driver's own
 * threads with no Spark job at all ({@link #local}, the small-data path). Both compute per-block results
 * exactly as the other and combine them with exact integer sums, so the answer is the same bits either way.
 * k-means|| ({@link #initParallel}) is written once over these operations.
 */
abstract class KMeansBlocks implements AutoCloseable {
    final int k;
    final boolean cosine;
    final KMeansScales scales;
    final Backend backend;

    KMeansBlocks(int k, boolean cosine, KMeansScales scales, Backend backend) {
        this.k = k;
        this.cosine = cosine;
        this.scales = scales;
        this.backend = backend;
    }

    /** One accumulating pass with {@code m} centres: the exact sum over all blocks. */
    abstract KMeansLloyd.Partial pass(double[] centres, int m);

    /** k-means||: lowers each point's cost to its distance to the nearest of {@code bs} new centres; exact cost sum (2 longs). */
    abstract long[] updateCosts(double[] batch, int bs);

    /** k-means||: the points sampled in step {@code step} given the total cost. */
    abstract List<KMeansTrainer.Cand> sample(long seed, int step, double sumCost);

    @Override
    public abstract void close();

    /** Per-block k-means|| cost sum: w * max(0, cost) in exact fixed point. */
    static long[] costSum(KMeansData p, double[] cost, double cm1, double cm2) {
        long[] acc = new long[2];
        for (int i = 0; i < p.n; i++) {
            FixedPoint.add(acc, 0, p.w[i] * Math.max(0.0, cost[i]), cm1, cm2);
        }
        return acc;
    }

    static long[] addCost(long[] a, long[] c) {
        FixedPoint.addPair(a, 0, c[0], c[1]);
        return a;
    }

    static List<KMeansTrainer.Cand> sampleBlock(KMeansData p, double[] c, long seed, int step, int k, double sumCost) {
        List<KMeansTrainer.Cand> out = new ArrayList<>();
        for (int i = 0; i < p.n; i++) {
            double cost = p.w[i] * Math.max(0.0, c[i]);
            if (cost <= 0) {
                continue;
            }
            long h = KMeansTrainer.valueHash(p.x, i * p.d, p.d, seed);
            if (KMeansTrainer.uniform(seed, step, h) < 2.0 * k * cost / sumCost) {
                out.add(new KMeansTrainer.Cand(h, Arrays.copyOfRange(p.x, i * p.d, i * p.d + p.d)));
            }
        }
        return out;
    }

    static double[] infiniteCosts(KMeansData p) {
        double[] c = new double[p.n];
        Arrays.fill(c, Double.POSITIVE_INFINITY);
        return c;
    }

    /** One block's accumulating pass, the empty block included (it does not know the dimension). */
    static KMeansLloyd.Partial blockPass(Backend backend, KMeansData p, double[] centres, int m, boolean cosine,
                                         KMeansScales scales) {
        return KMeansStep.runBlocks(backend, p.n == 0 ? List.of() : List.of(p), centres, m, cosine, scales);
    }

    // ---------------------------------------------------------------- one Spark job per pass

    static KMeansBlocks spark(JavaRDD<KMeansData> packed, int k, boolean cosine, KMeansScales scales, Backend backend) {
        return new OnSpark(packed, k, cosine, scales, backend);
    }

    private static final class OnSpark extends KMeansBlocks {
        private final JavaRDD<KMeansData> packed;
        private JavaRDD<double[]> costs;
        private final List<JavaRDD<double[]>> toRelease = new ArrayList<>();

        OnSpark(JavaRDD<KMeansData> packed, int k, boolean cosine, KMeansScales scales, Backend backend) {
            super(k, cosine, scales, backend);
            this.packed = packed;
        }

        @Override
        KMeansLloyd.Partial pass(double[] centres, int m) {
            final Backend be = backend;
            final boolean cos = cosine;
            final KMeansScales sc = scales;
            return packed.map(p -> blockPass(be, p, centres, m, cos, sc))
                    .treeReduce((a, b) -> a.add(b, m, sc.d), 2);
        }

        @Override
        long[] updateCosts(double[] batch, int bs) {
            if (costs == null) {
                costs = packed.map(KMeansBlocks::infiniteCosts);
            }
            final Backend be = backend;
            final boolean cos = cosine;
            JavaRDD<double[]> updated = packed.zip(costs).map(t -> {
                double[] c = t._2().clone();
                KMeansStep.run(be, t._1(), batch, bs, cos, null, false, null, c, true);
                return c;
            }).persist(StorageLevel.MEMORY_AND_DISK());
            toRelease.add(updated);
            costs = updated;
            final double cm1 = scales.multipliers[2 * scales.d + 2];
            final double cm2 = scales.multipliers[2 * scales.d + 3];
            return packed.zip(updated).map(t -> costSum(t._1(), t._2(), cm1, cm2)).reduce(KMeansBlocks::addCost);
        }

        @Override
        List<KMeansTrainer.Cand> sample(long seed, int step, double sumCost) {
            final int kk = k;
            return packed.zip(costs).flatMap(t -> sampleBlock(t._1(), t._2(), seed, step, kk, sumCost).iterator())
                    .collect();
        }

        @Override
        public void close() {
            for (JavaRDD<double[]> r : toRelease) {
                r.unpersist(false);
            }
            toRelease.clear();
        }
    }

    // ---------------------------------------------------------------- blocks on the driver

    static KMeansBlocks local(List<KMeansData> blocks, int k, boolean cosine, KMeansScales scales, Backend backend) {
        return new Local(blocks, k, cosine, scales, backend);
    }

    /**
     * The driver's blocks, each passed over by one thread of the common fork-join pool (the same per-block
     * work as a Spark task) and combined in block order with exact sums.
     */
    private static final class Local extends KMeansBlocks {
        private final List<KMeansData> blocks;
        private List<double[]> costs;

        Local(List<KMeansData> blocks, int k, boolean cosine, KMeansScales scales, Backend backend) {
            super(k, cosine, scales, backend);
            this.blocks = blocks;
        }

        @Override
        KMeansLloyd.Partial pass(double[] centres, int m) {
            if (backend != Backend.CPU && BackendChooser.gpuUsable(KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL)) {
                // one launch per block into one device accumulator from this thread (many small blocks in parallel
                // threads would each pay a stream, buffers and a synchronisation)
                List<KMeansData> nonEmpty = new ArrayList<>();
                for (KMeansData b : blocks) {
                    if (b.n > 0) {
                        nonEmpty.add(b);
                    }
                }
                return KMeansStep.runBlocks(backend, nonEmpty, centres, m, cosine, scales);
            }
            KMeansLloyd.Partial[] parts = new KMeansLloyd.Partial[blocks.size()];
            IntStream.range(0, parts.length).parallel()
                    .forEach(i -> parts[i] = blockPass(backend, blocks.get(i), centres, m, cosine, scales));
            KMeansLloyd.Partial sum = new KMeansLloyd.Partial(new long[KMeansAccumulator.length(m, scales.d)]);
            for (KMeansLloyd.Partial p : parts) {
                sum.add(p, m, scales.d);
            }
            return sum;
        }

        @Override
        long[] updateCosts(double[] batch, int bs) {
            if (costs == null) {
                costs = new ArrayList<>();
                for (KMeansData p : blocks) {
                    costs.add(infiniteCosts(p));
                }
            }
            final double cm1 = scales.multipliers[2 * scales.d + 2];
            final double cm2 = scales.multipliers[2 * scales.d + 3];
            long[][] sums = new long[blocks.size()][];
            IntStream.range(0, sums.length).parallel().forEach(i -> {
                KMeansStep.run(backend, blocks.get(i), batch, bs, cosine, null, false, null, costs.get(i), true);
                sums[i] = costSum(blocks.get(i), costs.get(i), cm1, cm2);
            });
            long[] total = new long[2];
            for (long[] s : sums) {
                addCost(total, s);
            }
            return total;
        }

        @Override
        List<KMeansTrainer.Cand> sample(long seed, int step, double sumCost) {
            List<KMeansTrainer.Cand> out = new ArrayList<>();
            for (int i = 0; i < blocks.size(); i++) {
                out.addAll(sampleBlock(blocks.get(i), costs.get(i), seed, step, k, sumCost));
            }
            return out;
        }

        @Override
        public void close() {
            costs = null;
        }
    }

    // ---------------------------------------------------------------- k-means||

    /**
     * k-means|| (Bahmani et al. 2012) with sampling decided by hashes of point values: O(initSteps) passes
     * over the blocks, then k-means++ on the driver over the candidates weighted by the points nearest to
     * each. Same candidates, same centres for any partitioning and either place.
     */
    static double[] initParallel(KMeansBlocks blocks, TreeSet<KMeansTrainer.Cand> firstCands, KMeansConfig cfg, int d) {
        final int k = cfg.k;
        final long seed = cfg.seed;
        final int costShift = blocks.scales.costShift();
        TreeSet<KMeansTrainer.Cand> chosen = new TreeSet<>();
        chosen.add(firstCands.first());
        double[] batch = firstCands.first().p.clone();
        int batchSize = 1;
        for (int step = 0; step < cfg.initSteps; step++) {
            long[] sum = blocks.updateCosts(batch, batchSize);
            double sumCost = FixedPoint.toDouble(sum, 0, costShift);
            if (!(sumCost > 0)) {
                break;
            }
            List<KMeansTrainer.Cand> sampled = blocks.sample(seed, step, sumCost);
            TreeSet<KMeansTrainer.Cand> fresh = new TreeSet<>();
            for (KMeansTrainer.Cand c : sampled) {
                if (!chosen.contains(c)) {
                    fresh.add(c);
                }
            }
            if (fresh.isEmpty()) {
                break;
            }
            chosen.addAll(fresh);
            batch = new double[fresh.size() * d];
            int i = 0;
            for (KMeansTrainer.Cand c : fresh) {
                System.arraycopy(c.p, 0, batch, i++ * d, d);
            }
            batchSize = fresh.size();
        }
        List<KMeansTrainer.Cand> cands = new ArrayList<>(chosen);
        if (cands.size() <= k) {
            for (KMeansTrainer.Cand c : firstCands) {
                if (cands.size() >= k) {
                    break;
                }
                if (!chosen.contains(c)) {
                    cands.add(c);
                }
            }
            double[] centres = new double[k * d];
            for (int i = 0; i < k; i++) {
                System.arraycopy(cands.get(i).p, 0, centres, i * d, d);
            }
            return centres;
        }
        final int m = cands.size();
        final double[] candArr = new double[m * d];
        for (int i = 0; i < m; i++) {
            System.arraycopy(cands.get(i).p, 0, candArr, i * d, d);
        }
        long[] acc = blocks.pass(candArr, m).acc;
        double[] weights = new double[m];
        for (int i = 0; i < m; i++) {
            weights[i] = FixedPoint.toDouble(acc, KMeansAccumulator.weightAt(i, m, d), blocks.scales.weightShift());
        }
        return LocalKMeans.kMeansPlusPlus(candArr, weights, m, d, k, blocks.cosine, seed, 30);
    }
}
