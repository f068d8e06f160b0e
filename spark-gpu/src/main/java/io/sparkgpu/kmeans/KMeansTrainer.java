package io.sparkgpu.kmeans;

import io.sparkgpu.common.Features;
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
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.spark.BarrierStages;
import io.sparkgpu.spark.FeatureIngest;
import io.sparkgpu.common.Progress;
import io.sparkgpu.spark.GpuTasks;
import io.sparkgpu.spark.ResidentBlockSink;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.SparkContext;
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
 * Distributed Lloyd k-means (Lloyd 1982) with per-partition GPU passes and an exact combiner.
 *
 * <p>Each partition is packed once into primitive arrays ({@link KMeansData}) and cached; with a GPU the
 * packing task also copies its block to the device, chunk by chunk while it packs the next chunks, so all
 * partitions upload in parallel and mostly behind the packing. A pass over a
 * block (GPU kernel or CPU twin, O(n k d)) returns per-cluster sums, weights, counts and cost as 128-bit
 * fixed-point integers, which are added exactly, and the centres are recomputed from the sum
 * ({@link KMeansLloyd}). Where the passes run ({@link Mode}): small data (n*d at most
 * {@value #LOCAL_VALUES}) on the driver's threads over the collected blocks, with no Spark job after the
 * packing; with a GPU, all iterations inside one barrier stage with one task per GPU
 * ({@link KMeansBarrier}); otherwise one Spark job per pass. Because the combined sums are exact, the result
 * does not depend on the number of partitions, their order, where the loop ran, or which backend ran each
 * block. Initialisation is
 * {@code random} (k distinct points chosen by a seeded hash of their values) or {@code k-means||}
 * (Bahmani, Moseley, Vattani, Kumar, Vassilvitskii, "Scalable K-Means++", VLDB 2012) with sampling
 * decisions derived from point values, so the same seed gives the same centres for any partitioning.
 * Convergence follows MLlib: stop when every centre moved by at most {@code tol} or after maxIter.
 */
final class KMeansTrainer {
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
        /**
         * Seconds the packing tasks' threads spent on copying their blocks to the GPU (summed over tasks, and the
         * longest; see {@link #UPLOAD_SUM}).
         */
        double uploadSeconds;
        double uploadSecondsMax;
        /** Seconds of the bounds and candidate hashing in the longest task (the rest of packing is reading rows). */
        double statsSecondsMax;

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
            uploadSeconds += o.uploadSeconds;
            uploadSecondsMax = Math.max(uploadSecondsMax, o.uploadSecondsMax);
            statsSecondsMax = Math.max(statsSecondsMax, o.statsSecondsMax);
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

    // ---------------------------------------------------------------- packing

    /**
     * Packs each partition into {@link KMeansData} without Row objects ({@link FeatureIngest}: from Spark's
     * internal rows or columnar batches), validating every value (errors name the column).
     */
    public static JavaRDD<KMeansData> pack(Dataset<?> df, String featuresCol, String weightCol, boolean cosine, String fitId) {
        return pack(df, featuresCol, weightCol, cosine, fitId, null);
    }

    /**
     * {@link #pack}; with a {@code residentOn} backend other than CPU (and a {@code fitId}), each task also copies
     * its partition's chunks to the GPU that backend resolves to while it packs the next ones
     * ({@link KMeansStep#residentSink}), so that the block is resident under its residency key when packing ends.
     * The blocks are the same either way.
     */
    public static JavaRDD<KMeansData> pack(Dataset<?> df, String featuresCol, String weightCol, boolean cosine, String fitId,
                                           Backend residentOn) {
        String w = weightCol == null || weightCol.isEmpty() ? null : weightCol;
        FeatureIngest.ChunkSinks sinks = fitId == null || residentOn == null || residentOn == Backend.CPU ? null
                : partition -> KMeansStep.residentSink(residentOn, residencyKey(fitId, partition));
        return FeatureIngest.read(df, featuresCol, w, (x, off, d) -> Features.clean(x, off, d, featuresCol, cosine), sinks)
                .map(b -> new KMeansData(b.x, b.w, b.n, b.d, fitId == null ? null : residencyKey(fitId, b.partition)));
    }

    static String residencyKey(String fitId, int partition) {
        return fitId + "/" + partition;
    }

    /**
     * Bounds of one block and, when {@code candidates}, its k distinct points of smallest value hash (random and
     * k-means|| initialisation; with given initial centres no point is hashed).
     */
    static Stats stats(KMeansData p, int k, long seed, boolean candidates) {
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
            if (candidates) {
                long h = valueHash(p.x, b, p.d, seed);
                if (s.cands.size() < k || h <= s.cands.last().hash) {
                    addCand(s.cands, new Cand(h, Arrays.copyOfRange(p.x, b, b + p.d)), k);
                }
            }
        }
        return s;
    }

    // ---------------------------------------------------------------- training

    /**
     * Timings: seconds the packing tasks' threads spent on copying their blocks to the GPU, summed over tasks and in
     * the longest task: putting each full chunk into pinned staging and enqueueing its copy (the copy itself runs
     * while the next chunk is packed), waiting for a staging slot still being copied from, placing the chunks and
     * copying the last one when the partition ends, and whole-block copies after packing where the block could
     * not be made resident while packing. Part of "pack".
     */
    public static final String UPLOAD_MAX = "  of which upload on the packing thread (longest task)";
    public static final String UPLOAD_SUM = "upload on the packing threads (sum over tasks)";

    /** Setting: largest n*d (feature values) fitted on the driver's threads without Spark jobs. */
    static final String LOCAL_VALUES = "spark.sparkgpu.kmeans.localValues";
    /** Default of {@link #LOCAL_VALUES}: 2^22 values (32 MiB), e.g. 131,072 points of 32 dimensions. */
    static final long DEFAULT_LOCAL_VALUES = 1L << 22;

    public static KMeansResult train(Dataset<?> df, String featuresCol, String weightCol, KMeansConfig cfg,
                                     KMeansProgress progress) {
        cfg.validate();
        try {
            return trainUnwrapped(df, featuresCol, weightCol, cfg, progress);
        } catch (Exception e) {
            throw SparkErrors.unwrap(e);
        }
    }

    /** The numbers of a progress line of one Lloyd iteration. */
    static String iterationDetail(double cost, double shift) {
        return String.format(java.util.Locale.ROOT, "cost %.6e, max centre shift %.4e", cost, shift);
    }

    /** Where the Lloyd iterations of a fit run. */
    enum Mode {
        /** Small data: the driver's threads over blocks collected from the packing job, no further Spark job. */
        LOCAL,
        /** GPU: every iteration inside one barrier stage, one task per GPU. */
        SINGLE_STAGE,
        /** One Spark job per pass (the CPU twin spread over all partitions, or when a barrier stage cannot run). */
        JOB_PER_PASS
    }

    /** True when the GPU is the backend a pass would use on this cluster (decided on the driver). */
    static boolean gpuFit(SparkContext sc, Backend backend) {
        return GpuTasks.gpuFit(sc, backend, KMeansGpu.MODULE, KMeansGpu.PROBE_KERNEL);
    }

    /** Setting: {@code auto} (default), or force {@code local}, {@code single-stage} or {@code job-per-pass}. */
    static final String MODE = "spark.sparkgpu.kmeans.mode";

    static String modeSetting() {
        return SparkGpuConf.get(MODE, "auto").trim().toLowerCase(java.util.Locale.ROOT);
    }

    /** @param barrierTasks {@link KMeansBarrier#tasks} where a single stage may run (a GPU fit, or forced), else 0 */
    static Mode chooseMode(long values, boolean gpu, int barrierTasks, int k, int d) {
        String m = modeSetting();
        switch (m) {
            case "auto":
                return values <= localValues() ? Mode.LOCAL : gpu && barrierTasks > 0 ? Mode.SINGLE_STAGE
                        : Mode.JOB_PER_PASS;
            case "local":
                return Mode.LOCAL;
            case "job-per-pass":
                return Mode.JOB_PER_PASS;
            case "single-stage":
                if (barrierTasks == 0) {
                    throw new IllegalArgumentException(MODE + "=single-stage cannot run here: dynamic allocation is on, "
                            + "or the exact accumulator of k=" + k + ", d=" + d + " is too large to exchange per iteration");
                }
                return Mode.SINGLE_STAGE;
            default:
                throw new IllegalArgumentException(MODE + " must be auto, local, single-stage or job-per-pass, got '"
                        + m + "'");
        }
    }


    static long localValues() {
        String v = SparkGpuConf.get(LOCAL_VALUES, String.valueOf(DEFAULT_LOCAL_VALUES));
        try {
            long n = Long.parseLong(v.trim());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(LOCAL_VALUES + " must be an integer >= 0 (0 turns the driver path off), got '"
                + v + "'");
    }

    private static KMeansResult trainUnwrapped(Dataset<?> df, String featuresCol, String weightCol, KMeansConfig cfg,
                                               KMeansProgress progress) throws Exception {
        final long fit0 = System.nanoTime();
        final String fitId = "kmeans-" + UUID.randomUUID();
        SparkContext sc = df.sparkSession().sparkContext();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(sc);
        String oldDesc = jsc.getLocalProperty("spark.job.description");
        final int k = cfg.k;
        final boolean cosine = cfg.cosine;
        final Backend backend = cfg.backend;
        final boolean gpu = gpuFit(sc, backend);
        Map<String, Double> timings = new LinkedHashMap<>();
        JavaRDD<KMeansData> packed = pack(df, featuresCol, weightCol, cosine, fitId,
                gpu && io.sparkgpu.cuda.SparkGpuConf.uploadWhilePacking() ? backend : null)
                .persist(StorageLevel.MEMORY_AND_DISK());
        KMeansBlocks blocks = null;
        try {
            jsc.setJobDescription("spark-gpu k-means: pack and validate");
            final long seed = cfg.seed;
            final boolean candidates = cfg.initialCenters == null;
            long p0 = System.nanoTime();
            Stats total = packed.map(p -> {
                long s0 = System.nanoTime();
                Stats st = stats(p, k, seed, candidates);
                st.statsSecondsMax = (System.nanoTime() - s0) / 1e9;
                if (gpu) {
                    // the packing thread's share of copying the chunks while packing, plus the copy after packing
                    // where that did not make the block resident
                    st.uploadSeconds = (p.residencyKey == null ? 0 : ResidentBlockSink.takeSeconds(p.residencyKey))
                            + KMeansStep.preload(backend, p);
                    st.uploadSecondsMax = st.uploadSeconds;
                }
                return st;
            }).reduce((a, b) -> a.merge(b, k, featuresCol));
            timings.put("pack", (System.nanoTime() - p0) / 1e9);
            timings.put(candidates ? "  of which bounds and candidates (longest task)" : "  of which bounds (longest task)", total.statsSecondsMax);
            if (gpu) {
                // chunks are copied while the next ones are packed: these are the seconds the packing threads were
                // kept from packing by uploads, not the duration of the copies (which overlap the packing)
                timings.put(UPLOAD_MAX, total.uploadSecondsMax);
                timings.put(UPLOAD_SUM, total.uploadSeconds);
            }
            if (total.n == 0) {
                throw new IllegalArgumentException("k-means needs at least one row, but the dataset (featuresCol '"
                        + featuresCol + "') is empty");
            }
            if (!(total.maxW > 0)) { // weights are checked >= 0 while packing: here every one is 0
                throw new IllegalArgumentException("weightCol '" + weightCol + "': every weight is 0; k-means needs at "
                        + "least one row with a positive weight (with none, every set of centres has cost 0)");
            }
            if (candidates && total.cands.size() < k) {
                throw new IllegalArgumentException("k=" + k + " exceeds the number of distinct points ("
                        + total.cands.size() + ") in featuresCol '" + featuresCol + "'");
            }
            final int d = total.d;
            final KMeansScales scales;
            try {
                scales = KMeansScales.fromBounds(total.n, total.maxW, total.maxAbs, cosine);
            } catch (ArithmeticException e) { // a bound of the exact sums overflows a double
                double maxAbs = 0;
                for (double a : total.maxAbs) {
                    maxAbs = Math.max(maxAbs, a);
                }
                throw new IllegalArgumentException("featuresCol '" + featuresCol + "' holds values up to " + maxAbs
                        + " in magnitude" + (weightCol == null ? "" : " (weightCol '" + weightCol + "' up to "
                        + total.maxW + ")") + ": too large for k-means' exact sums, which need rows x largest weight "
                        + "x sum over dimensions of 4 max|x|^2 below " + Double.MAX_VALUE + "; scale the features "
                        + "down (e.g. StandardScaler) first", e);
            }
            final int parts = packed.getNumPartitions();
            final int barrierTasks = gpu || "single-stage".equals(modeSetting()) ? KMeansBarrier.tasks(sc, parts, k, d) : 0;
            Mode mode = chooseMode(total.n * d, gpu, barrierTasks, k, d);
            if (mode == Mode.LOCAL) {
                long c0 = System.nanoTime();
                blocks = KMeansBlocks.local(packed.collect(), k, cosine, scales, backend);
                timings.put("collect to the driver", (System.nanoTime() - c0) / 1e9);
            } else {
                blocks = KMeansBlocks.spark(packed, k, cosine, scales, backend);
            }
            long i0 = System.nanoTime();
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
                centres = KMeansBlocks.initParallel(blocks, total.cands, cfg, d);
            }
            timings.put("initialisation", (System.nanoTime() - i0) / 1e9);

            KMeansLloyd.Spec spec = new KMeansLloyd.Spec(k, d, cfg.maxIter, cfg.tol, cosine, scales);
            KMeansLloyd.Outcome o;
            long l0 = System.nanoTime();
            Progress prog = Progress.start("spark-gpu k-means", cfg.maxIter);
            o = null;
            if (mode == Mode.SINGLE_STAGE) {
                jsc.setJobDescription("spark-gpu k-means: " + cfg.maxIter + " iterations in one stage ("
                        + barrierTasks + " GPU task(s))");
                for (int attempt = 0; o == null && mode == Mode.SINGLE_STAGE; attempt++) {
                    try {
                        o = KMeansBarrier.fit(packed, barrierTasks, spec, centres, backend, fitId, attempt);
                    } catch (Exception e) { // Spark's job failures are checked SparkExceptions thrown undeclared
                        if (!BarrierStages.causedBy(e, BarrierStages.MissingBlock.class)) {
                            throw e;
                        }
                        if (attempt == 0) {
                            // an executor was lost with its cached blocks: recompute them (lineage), then run again
                            LOG.warn("spark-gpu k-means: a packed block was lost ({}); recomputing the lost blocks and "
                                    + "running the single stage again", e.getMessage());
                            jsc.setJobDescription("spark-gpu k-means: recompute lost blocks");
                            packed.foreachPartition(it -> {
                                while (it.hasNext()) {
                                    KMeansStep.preload(backend, it.next());
                                }
                            });
                            jsc.setJobDescription("spark-gpu k-means: " + cfg.maxIter + " iterations in one stage ("
                                    + barrierTasks + " GPU task(s)), again");
                        } else {
                            LOG.warn("spark-gpu k-means: a cached block was not readable in the single-stage fit ({}); "
                                    + "running one Spark job per pass instead", e.getMessage());
                            mode = Mode.JOB_PER_PASS;
                        }
                    }
                }
            }
            if (o != null) {
                for (int i = 0; i < o.iterations; i++) {
                    double[] h = o.history.get(i);
                    prog.step(i + 1, "iteration", iterationDetail(h[0], h[1]));
                    if (progress != null) {
                        progress.onIteration(i + 1, h[0], h[1]);
                    }
                }
            } else {
                final KMeansBlocks bl = blocks;
                jsc.setJobDescription(cfg.maxIter > 0 ? "spark-gpu k-means: iteration 1/" + cfg.maxIter
                        : "spark-gpu k-means: cluster sizes");
                o = KMeansLloyd.run(spec, centres, bl::pass, (i, cost, shift) -> {
                    prog.step(i, "iteration", iterationDetail(cost, shift));
                    if (progress != null) {
                        progress.onIteration(i, cost, shift);
                    }
                    if (i < cfg.maxIter) {
                        jsc.setJobDescription("spark-gpu k-means: iteration " + (i + 1) + "/" + cfg.maxIter);
                    } else {
                        jsc.setJobDescription("spark-gpu k-means: cluster sizes");
                    }
                });
            }
            double loop = (System.nanoTime() - l0) / 1e9;
            double iterSum = 0;
            for (double t : o.iterationSeconds) {
                iterSum += t;
            }
            timings.put("iterations", iterSum);
            timings.put("final pass", o.finalPassSeconds);
            timings.put("GPU time in passes", o.gpuSeconds);
            if (mode == Mode.SINGLE_STAGE) {
                timings.put("stage scheduling and result", Math.max(0, loop - iterSum - o.finalPassSeconds));
            }
            double[][] out = new double[k][];
            for (int c = 0; c < k; c++) {
                out[c] = Arrays.copyOfRange(o.centres, c * d, c * d + d);
            }
            long e0 = System.nanoTime();
            cleanUp(sc, packed, fitId, mode);
            packed = null;
            timings.put("clean-up", (System.nanoTime() - e0) / 1e9);
            timings.put("total", (System.nanoTime() - fit0) / 1e9);
            double[] iterSeconds = new double[o.iterationSeconds.size()];
            for (int i = 0; i < iterSeconds.length; i++) {
                iterSeconds[i] = o.iterationSeconds.get(i);
            }
            return new KMeansResult(out, o.trainingCost, o.sizes, o.finalCost, o.iterations, o.converged,
                    KMeansLloyd.backendName(o.gpuPasses, o.cpuPasses), o.history, total.n)
                    .withTimings(mode.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'), timings, iterSeconds);
        } finally {
            jsc.setJobDescription(oldDesc);
            if (blocks != null) {
                blocks.close();
            }
            if (packed != null) {
                cleanUp(sc, packed, fitId, Mode.JOB_PER_PASS);
            }
        }
    }

    /**
     * Frees the fit's device-resident blocks and the cached packing. In local mode every task ran in this JVM,
     * so the driver evicts directly; on a cluster one small job visits the executors.
     */
    private static void cleanUp(SparkContext sc, JavaRDD<KMeansData> packed, String fitId, Mode mode) {
        try {
            DeviceResidentCache.forEach(c -> c.evictPrefix(fitId));
            ResidentBlockSink.forgetSeconds(fitId);
            if (!sc.isLocal()) {
                packed.foreachPartition(it -> {
                    DeviceResidentCache.forEach(c -> c.evictPrefix(fitId));
                    ResidentBlockSink.forgetSeconds(fitId);
                });
            }
        } catch (RuntimeException e) {
            LOG.debug("eviction of resident k-means data failed", e);
        }
        packed.unpersist(false);
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
