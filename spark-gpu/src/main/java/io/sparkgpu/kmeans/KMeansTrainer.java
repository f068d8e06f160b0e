package io.sparkgpu.kmeans;

import io.sparkgpu.common.FixedPoint;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.UUID;
import io.sparkgpu.common.SparkErrors;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.DeviceResidentCache;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Distributed Lloyd k-means (Lloyd 1982) with per-partition GPU passes and an exact driver combiner.
 *
 * <p>Each partition is packed once into primitive arrays ({@link KMeansData}) and cached. Every iteration
 * runs one pass per partition (GPU kernel or CPU twin, O(n k d)) that returns per-cluster sums, weights,
 * counts and cost as 128-bit fixed-point integers; the driver adds them exactly (O(P k d) for P
 * partitions) and recomputes the centres. Because the combined sums are exact, the result does not depend
 * on the number of partitions, their order, or which backend ran each one. Initialisation is
 * {@code random} (k distinct points chosen by a seeded hash of their values) or {@code k-means||}
 * (Bahmani, Moseley, Vattani, Kumar, Vassilvitskii, "Scalable K-Means++", VLDB 2012) with sampling
 * decisions derived from point values, so the same seed gives the same centres for any partitioning.
 * Convergence follows MLlib: stop when every centre moved by at most {@code tol} or after maxIter.
 */
public final class KMeansTrainer {
    private static final Logger LOG = LoggerFactory.getLogger(KMeansTrainer.class);
    private static final int PREDICT_BATCH = 1 << 16;

    private KMeansTrainer() {
    }

    // ---------------------------------------------------------------- hashing of point values

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Hash of a point's coordinates (identical points, identical hash). */
    static long valueHash(double[] x, int off, int d, long seed) {
        long h = mix(seed ^ 0x9E3779B97F4A7C15L);
        for (int j = 0; j < d; j++) {
            h = mix(h ^ Double.doubleToLongBits(x[off + j]) + 0x9E3779B97F4A7C15L * (j + 1));
        }
        return h;
    }

    static double uniform(long seed, int step, long hash) {
        return (mix(mix(seed + 0x632BE59BD9B4E019L * (step + 1)) ^ hash) >>> 11) * 0x1.0p-53;
    }

    /** A distinct point ordered by (hash, coordinates). */
    static final class Cand implements Comparable<Cand>, Serializable {
        private static final long serialVersionUID = 1L;
        final long hash;
        final double[] p;

        Cand(long hash, double[] p) {
            this.hash = hash;
            this.p = p;
        }

        @Override
        public int compareTo(Cand o) {
            int c = Long.compare(hash, o.hash);
            return c != 0 ? c : Arrays.compare(p, o.p);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Cand && compareTo((Cand) o) == 0;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(hash);
        }
    }

    /** Per-partition statistics: count, dimension, bounds, and up to k smallest-hash distinct points. */
    static final class Stats implements Serializable {
        private static final long serialVersionUID = 1L;
        long n;
        int d = -1;
        double maxW;
        double[] maxAbs;
        TreeSet<Cand> cands = new TreeSet<>();

        Stats merge(Stats o, int k, String featuresCol) {
            if (o.d >= 0) {
                if (d >= 0 && d != o.d) {
                    throw new IllegalArgumentException("featuresCol '" + featuresCol + "' has vectors of different sizes ("
                            + d + " and " + o.d + ")");
                }
                if (d < 0) {
                    d = o.d;
                    maxAbs = o.maxAbs.clone();
                } else {
                    for (int j = 0; j < d; j++) {
                        maxAbs[j] = Math.max(maxAbs[j], o.maxAbs[j]);
                    }
                }
            }
            n += o.n;
            maxW = Math.max(maxW, o.maxW);
            for (Cand c : o.cands) {
                addCand(cands, c, k);
            }
            return this;
        }
    }

    static void addCand(TreeSet<Cand> set, Cand c, int k) {
        if (set.size() < k) {
            set.add(c);
        } else if (c.compareTo(set.last()) < 0 && set.add(c)) {
            set.pollLast();
        }
    }

    /** Partial result of one pass: exact accumulator plus which backend ran. */
    static final class Partial implements Serializable {
        private static final long serialVersionUID = 1L;
        long[] acc;
        int gpu;
        int cpu;
    }

    // ---------------------------------------------------------------- packing

    /** Packs the rows of each partition into {@link KMeansData}, validating every value. */
    public static JavaRDD<KMeansData> pack(Dataset<?> df, String featuresCol, String weightCol, boolean cosine, String fitId) {
        StructType schema = df.schema();
        int fIdx = Features.checkFeatures(schema, featuresCol);
        int wIdx = weightCol == null || weightCol.isEmpty() ? -1 : Features.checkWeight(schema, weightCol);
        return df.toDF().javaRDD().mapPartitionsWithIndex((pid, rows) -> {
            DoubleBuilder xs = new DoubleBuilder();
            DoubleBuilder ws = new DoubleBuilder();
            int d = -1;
            while (rows.hasNext()) {
                Row r = rows.next();
                double[] p = Features.read(r, fIdx, featuresCol);
                if (d < 0) {
                    d = p.length;
                    if (d == 0) {
                        throw Features.emptyVectors(featuresCol);
                    }
                } else if (p.length != d) {
                    throw Features.differentSizes(featuresCol, d, p.length);
                }
                Features.clean(p, featuresCol, cosine);
                xs.add(p);
                ws.add(wIdx < 0 ? 1.0 : Features.readWeight(r, wIdx, weightCol));
            }
            int n = ws.size();
            KMeansData data = new KMeansData(xs.toArray(), ws.toArray(), n, Math.max(d, 0),
                    fitId == null ? null : fitId + "/" + pid);
            return List.of(data).iterator();
        }, true);
    }

    static Stats stats(KMeansData p, int k, long seed) {
        Stats s = new Stats();
        if (p.n == 0) {
            return s;
        }
        s.n = p.n;
        s.d = p.d;
        s.maxAbs = new double[p.d];
        for (int i = 0; i < p.n; i++) {
            int b = i * p.d;
            for (int j = 0; j < p.d; j++) {
                double a = Math.abs(p.x[b + j]);
                if (a > s.maxAbs[j]) {
                    s.maxAbs[j] = a;
                }
            }
            if (p.w[i] > s.maxW) {
                s.maxW = p.w[i];
            }
            long h = valueHash(p.x, b, p.d, seed);
            if (s.cands.size() < k || h <= s.cands.last().hash) {
                addCand(s.cands, new Cand(h, Arrays.copyOfRange(p.x, b, b + p.d)), k);
            }
        }
        return s;
    }

    // ---------------------------------------------------------------- training

    public static KMeansResult train(Dataset<?> df, String featuresCol, String weightCol, KMeansConfig cfg,
                                     KMeansProgress progress) {
        cfg.validate();
        try {
            return trainUnwrapped(df, featuresCol, weightCol, cfg, progress);
        } catch (Exception e) {
            throw SparkErrors.unwrap(e);
        }
    }

    private static KMeansResult trainUnwrapped(Dataset<?> df, String featuresCol, String weightCol, KMeansConfig cfg,
                                               KMeansProgress progress) {
        final String fitId = "kmeans-" + UUID.randomUUID();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(df.sparkSession().sparkContext());
        String oldDesc = jsc.getLocalProperty("spark.job.description");
        final int k = cfg.k;
        final boolean cosine = cfg.cosine;
        final Backend backend = cfg.backend;
        JavaRDD<KMeansData> packed = pack(df, featuresCol, weightCol, cosine, fitId).persist(StorageLevel.MEMORY_AND_DISK());
        try {
            jsc.setJobDescription("spark-gpu k-means: pack and validate");
            final long seed = cfg.seed;
            Stats total = packed.map(p -> stats(p, k, seed)).reduce((a, b) -> a.merge(b, k, featuresCol));
            if (total.n == 0) {
                throw new IllegalArgumentException("k-means needs at least one row, but the dataset (featuresCol '"
                        + featuresCol + "') is empty");
            }
            if (total.cands.size() < k) {
                throw new IllegalArgumentException("k=" + k + " exceeds the number of distinct points ("
                        + total.cands.size() + ") in featuresCol '" + featuresCol + "'");
            }
            final int d = total.d;
            final KMeansScales scales = KMeansScales.fromBounds(total.n, total.maxW, total.maxAbs, cosine);
            double[] centres;
            if (cfg.initialCenters != null) {
                centres = flattenInitial(cfg.initialCenters, d, cosine);
            } else if (KMeansConfig.INIT_RANDOM.equals(cfg.initMode)) {
                centres = new double[k * d];
                int c = 0;
                for (Cand cand : total.cands) {
                    System.arraycopy(cand.p, 0, centres, c++ * d, d);
                }
            } else {
                jsc.setJobDescription("spark-gpu k-means: k-means|| initialisation");
                centres = initParallel(packed, total, cfg, scales, d);
            }

            List<double[]> history = new ArrayList<>();
            int iteration = 0;
            boolean converged = false;
            double trainingCost = 0;
            int gpuPasses = 0;
            int cpuPasses = 0;
            while (iteration < cfg.maxIter && !converged) {
                jsc.setJobDescription("spark-gpu k-means: iteration " + (iteration + 1) + "/" + cfg.maxIter);
                Partial part = pass(packed, centres, k, cosine, scales, backend);
                gpuPasses += part.gpu;
                cpuPasses += part.cpu;
                long[] acc = part.acc;
                double[] next = updateCentres(acc, centres, k, d, cosine, scales);
                double maxShift = 0;
                converged = true;
                for (int c = 0; c < k; c++) {
                    double moved = cosine ? KMeansCpu.cosineDistance(centres, c * d, next, c * d, d)
                            : KMeansCpu.fullSquared(centres, c * d, next, c * d, d);
                    boolean ok = cosine ? moved <= cfg.tol : moved <= cfg.tol * cfg.tol;
                    converged &= ok;
                    maxShift = Math.max(maxShift, cosine ? moved : Math.sqrt(moved));
                }
                centres = next;
                trainingCost = FixedPoint.toDouble(acc, KMeansAccumulator.costAt(k, d), scales.costShift());
                iteration++;
                history.add(new double[] {trainingCost, maxShift});
                LOG.info("spark-gpu k-means iteration {}: cost {} max centre shift {}", iteration, trainingCost, maxShift);
                if (progress != null) {
                    progress.onIteration(iteration, trainingCost, maxShift);
                }
            }
            jsc.setJobDescription("spark-gpu k-means: cluster sizes");
            Partial fin = pass(packed, centres, k, cosine, scales, backend);
            gpuPasses += fin.gpu;
            cpuPasses += fin.cpu;
            long[] sizes = new long[k];
            for (int c = 0; c < k; c++) {
                sizes[c] = fin.acc[KMeansAccumulator.countAt(c, k, d)];
            }
            double finalCost = FixedPoint.toDouble(fin.acc, KMeansAccumulator.costAt(k, d), scales.costShift());
            double[][] out = new double[k][];
            for (int c = 0; c < k; c++) {
                out[c] = Arrays.copyOfRange(centres, c * d, c * d + d);
            }
            String used = gpuPasses > 0 && cpuPasses == 0 ? "gpu" : gpuPasses == 0 ? "cpu" : "mixed";
            return new KMeansResult(out, trainingCost, sizes, finalCost, iteration, converged, used, history, total.n);
        } finally {
            jsc.setJobDescription(oldDesc);
            try {
                packed.foreachPartition(it -> DeviceResidentCache.forEach(c -> c.evictPrefix(fitId)));
            } catch (RuntimeException e) {
                LOG.debug("eviction of resident k-means data failed", e);
            }
            packed.unpersist(false);
        }
    }

    static double[] flattenInitial(double[][] init, int d, boolean cosine) {
        double[] c = new double[init.length * d];
        for (int i = 0; i < init.length; i++) {
            if (init[i] == null || init[i].length != d) {
                throw new IllegalArgumentException("initialCenters[" + i + "] has size "
                        + (init[i] == null ? "null" : init[i].length) + " but the features have size " + d);
            }
            double[] p = init[i].clone();
            Features.clean(p, "initialCenters", cosine);
            System.arraycopy(p, 0, c, i * d, d);
        }
        return c;
    }

    static Partial pass(JavaRDD<KMeansData> packed, double[] centres, int k, boolean cosine, KMeansScales scales,
                        Backend backend) {
        return packed.map(p -> {
            Partial r = new Partial();
            if (p.n == 0) { // an empty partition does not know the dimension
                r.acc = new long[KMeansAccumulator.length(k, scales.d)];
                return r;
            }
            r.acc = KMeansStep.run(backend, p, centres, k, cosine, scales, true, null, null, false);
            {
                if ("gpu".equals(KMeansStep.lastBackend())) {
                    r.gpu = 1;
                } else {
                    r.cpu = 1;
                }
            }
            return r;
        }).treeReduce((a, b) -> {
            KMeansAccumulator.merge(a.acc, b.acc, k, scales.d);
            a.gpu += b.gpu;
            a.cpu += b.cpu;
            return a;
        }, 2);
    }

    /** New centres from an exact accumulator; empty (or zero-weight) clusters keep their centre. */
    static double[] updateCentres(long[] acc, double[] old, int k, int d, boolean cosine, KMeansScales scales) {
        return KMeansAccumulator.centres(acc, old, k, d, cosine, scales);
    }

    // ---------------------------------------------------------------- k-means||

    static double[] initParallel(JavaRDD<KMeansData> packed, Stats total, KMeansConfig cfg, KMeansScales scales, int d) {
        final int k = cfg.k;
        final boolean cosine = cfg.cosine;
        final Backend backend = cfg.backend;
        final long seed = cfg.seed;
        final int costShift = scales.costShift();
        final double cm1 = scales.multipliers[2 * d + 2];
        final double cm2 = scales.multipliers[2 * d + 3];
        TreeSet<Cand> chosen = new TreeSet<>();
        chosen.add(total.cands.first());
        double[] batch = total.cands.first().p.clone();
        int batchSize = 1;
        JavaRDD<double[]> costs = packed.map(p -> {
            double[] c = new double[p.n];
            Arrays.fill(c, Double.POSITIVE_INFINITY);
            return c;
        });
        List<JavaRDD<double[]>> toRelease = new ArrayList<>();
        try {
            for (int step = 0; step < cfg.initSteps; step++) {
                final double[] b = batch;
                final int bs = batchSize;
                JavaRDD<double[]> updated = packed.zip(costs).map(t -> {
                    double[] c = t._2().clone();
                    KMeansStep.run(backend, t._1(), b, bs, cosine, null, false, null, c, true);
                    return c;
                }).persist(StorageLevel.MEMORY_AND_DISK());
                toRelease.add(updated);
                long[] sum = packed.zip(updated).map(t -> {
                    long[] acc = new long[2];
                    KMeansData p = t._1();
                    for (int i = 0; i < p.n; i++) {
                        FixedPoint.add(acc, 0, p.w[i] * Math.max(0.0, t._2()[i]), cm1, cm2);
                    }
                    return acc;
                }).reduce((a, c) -> {
                    FixedPoint.addPair(a, 0, c[1], c[0]);
                    return a;
                });
                double sumCost = FixedPoint.toDouble(sum, 0, costShift);
                costs = updated;
                if (!(sumCost > 0)) {
                    break;
                }
                final int st = step;
                List<Cand> sampled = packed.zip(updated).flatMap(t -> {
                    KMeansData p = t._1();
                    double[] c = t._2();
                    List<Cand> out = new ArrayList<>();
                    for (int i = 0; i < p.n; i++) {
                        double cost = p.w[i] * Math.max(0.0, c[i]);
                        if (cost <= 0) {
                            continue;
                        }
                        long h = valueHash(p.x, i * p.d, p.d, seed);
                        if (uniform(seed, st, h) < 2.0 * k * cost / sumCost) {
                            out.add(new Cand(h, Arrays.copyOfRange(p.x, i * p.d, i * p.d + p.d)));
                        }
                    }
                    return out.iterator();
                }).collect();
                TreeSet<Cand> fresh = new TreeSet<>();
                for (Cand c : sampled) {
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
                for (Cand c : fresh) {
                    System.arraycopy(c.p, 0, batch, i++ * d, d);
                }
                batchSize = fresh.size();
            }
        } finally {
            for (JavaRDD<double[]> r : toRelease) {
                r.unpersist(false);
            }
        }
        List<Cand> cands = new ArrayList<>(chosen);
        if (cands.size() <= k) {
            for (Cand c : total.cands) {
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
        // weight every candidate by the total weight of the points nearest to it
        final int m = cands.size();
        final double[] candArr = new double[m * d];
        for (int i = 0; i < m; i++) {
            System.arraycopy(cands.get(i).p, 0, candArr, i * d, d);
        }
        long[] acc = pass(packed, candArr, m, cosine, scales, backend).acc;
        double[] weights = new double[m];
        for (int i = 0; i < m; i++) {
            weights[i] = FixedPoint.toDouble(acc, KMeansAccumulator.weightAt(i, m, d), scales.weightShift());
        }
        return LocalKMeans.kMeansPlusPlus(candArr, weights, m, d, k, cosine, seed, 30);
    }

    // ---------------------------------------------------------------- prediction

    /** Appends {@code predictionCol} (int, nearest centre) to {@code df}; features are validated as in training. */
    public static Dataset<Row> predict(Dataset<?> df, String featuresCol, String predictionCol, double[][] centers,
                                       boolean cosine, Backend backend) {
        StructType schema = df.schema();
        int fIdx = Features.checkFeatures(schema, featuresCol);
        if (Arrays.asList(schema.fieldNames()).contains(predictionCol)) {
            throw new IllegalArgumentException("predictionCol '" + predictionCol + "' already exists in the input");
        }
        final int k = centers.length;
        final int d = centers[0].length;
        final double[] flat = flattenInitial(centers, d, cosine);
        StructType out = schema.add(predictionCol, DataTypes.IntegerType, false);
        return df.toDF().mapPartitions((Iterator<Row> rows) -> new Iterator<Row>() {
            private final List<Row> buf = new ArrayList<>();
            private int[] labels = new int[0];
            private int pos;

            @Override
            public boolean hasNext() {
                if (pos < buf.size()) {
                    return true;
                }
                buf.clear();
                pos = 0;
                DoubleBuilder xs = new DoubleBuilder();
                while (rows.hasNext() && buf.size() < PREDICT_BATCH) {
                    Row r = rows.next();
                    double[] p = Features.read(r, fIdx, featuresCol);
                    if (p.length != d) {
                        throw new IllegalArgumentException("featuresCol '" + featuresCol + "' has a vector of size "
                                + p.length + " but the model was trained on size " + d);
                    }
                    Features.clean(p, featuresCol, cosine);
                    xs.add(p);
                    buf.add(r);
                }
                if (buf.isEmpty()) {
                    return false;
                }
                int n = buf.size();
                double[] w = new double[n];
                labels = new int[n];
                KMeansStep.run(backend, new KMeansData(xs.toArray(), w, n, d, null), flat, k, cosine, null, false,
                        labels, null, false);
                return true;
            }

            @Override
            public Row next() {
                if (!hasNext()) {
                    throw new java.util.NoSuchElementException();
                }
                Row r = buf.get(pos);
                Object[] vals = new Object[r.size() + 1];
                for (int i = 0; i < r.size(); i++) {
                    vals[i] = r.get(i);
                }
                vals[r.size()] = labels[pos++];
                return RowFactory.create(vals);
            }
        }, Encoders.row(out));
    }

    /** Nearest centre of one feature vector (validated). */
    public static int predictOne(double[] features, double[][] centers, boolean cosine, String what) {
        int d = centers[0].length;
        if (features.length != d) {
            throw new IllegalArgumentException(what + " has size " + features.length + " but the model has size " + d);
        }
        double[] p = features.clone();
        Features.clean(p, what, cosine);
        return KMeansCpu.nearest(p, flattenInitial(centers, d, cosine), centers.length, d, cosine);
    }

    /** Growable primitive double array. */
    static final class DoubleBuilder {
        private double[] a = new double[1024];
        private int n;

        void add(double v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, grow(n + 1));
            }
            a[n++] = v;
        }

        void add(double[] v) {
            if (n + v.length > a.length) {
                a = Arrays.copyOf(a, grow(n + v.length));
            }
            System.arraycopy(v, 0, a, n, v.length);
            n += v.length;
        }

        private int grow(long need) {
            long cap = Math.max(need, (long) a.length * 2);
            if (cap > Integer.MAX_VALUE - 8) {
                if (need > Integer.MAX_VALUE - 8) {
                    throw new IllegalArgumentException("partition too large to pack (more than 2^31 values); "
                            + "repartition the input into more partitions");
                }
                cap = Integer.MAX_VALUE - 8;
            }
            return (int) cap;
        }

        int size() {
            return n;
        }

        double[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }
}
