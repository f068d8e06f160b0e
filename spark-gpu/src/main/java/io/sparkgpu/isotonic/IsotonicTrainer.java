package io.sparkgpu.isotonic;

import io.sparkgpu.common.SparkErrors;
import io.sparkgpu.spark.ExecutorCoalescer;
import java.io.Serializable;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import scala.Tuple2;

/**
 * Distributed isotonic regression with bounded driver memory. No phase handles Spark {@code Row}s.
 *
 * <ol>
 *   <li><b>pack+validate</b>: one pass over the projected input's {@code InternalRow}s
 *       ({@code queryExecution().toRdd()}) reads (y, x, w) of each partition into primitive arrays
 *       ({@link IsoBlock}; x a double column or element {@code featureIndex} of an ml Vector in its internal
 *       struct form), validating every row as before (nulls name the column, {@link IsoPoints#check}, featureIndex
 *       against the vector size), and gathers in the same task the bounds of the exact fixed-point scales
 *       ({@link IsoScales}), min/max of x and a deterministic sample (evenly spaced rows) of x and y. The packed
 *       blocks are persisted (MEMORY_AND_DISK) and everything after reads them. Partitions small enough ship their
 *       arrays with this job's result.</li>
 *   <li><b>small inputs</b> (at most {@link #LOCAL_ROWS} rows, default 2^20): the arrays are concatenated on the
 *       driver and solved there by {@link IsotonicSolver#solveRows} (GPU if the driver resolves one, else the
 *       CPU twin; with {@code backend=gpu} and no GPU on the driver, the range path instead);
 *       {@code increasing=auto} is {@link Spearman#increasing} on the same arrays. One Spark job, no shuffle, no
 *       merge tree.</li>
 *   <li><b>range split+shuffle</b> (larger inputs): R ranges with upper bounds taken from the sorted x sample
 *       (a row goes to the first range whose bound is >= x, so equal features share a range). R is
 *       {@link IsotonicConfig#numPartitions} when set, else with a GPU backend (L2, PAVA) one when one executor
 *       holds every GPU and all rows fit in one device, otherwise one per GPU (or more; {@link #gpuRanges}), and
 *       without a GPU the number of input partitions. R = 1 coalesces the packed blocks into
 *       one task (no shuffle: one GPU in one JVM); input partitions already ordered by feature (per-partition
 *       min/max of x, no tie across an edge) are the ranges as they are when R is their number; otherwise each
 *       block splits its rows into per-range primitive chunks, shuffled as (range, chunk) pairs into one
 *       partition per range and concatenated. The ranges are
 *       persisted and the packed blocks dropped.</li>
 *   <li><b>spearman</b> ({@code increasing=auto} only): x-ranks per range (plus the rows before it), then (y,
 *       x-rank) arrays range-partitioned by y; exact integer rank-product sums ({@link #spearmanSum}).</li>
 *   <li><b>solve</b>: each range is radix-sorted, pooled ({@link IsoPoints}) and solved on the GPU or its CPU
 *       twin ({@link IsotonicSolver#solveRows}: least squares with PAVA sorts and pools on the GPU too; L1:
 *       {@link L1Blocks}).</li>
 *   <li><b>merge+collect</b>: range solutions are merged pairwise in a tree by the decomposition theorem
 *       (ceil(log2 R) shuffle rounds of blocks, each merge holding two neighbours' blocks); only the final blocks,
 *       in compact form, reach the driver, which builds the <b>model</b>.</li>
 * </ol>
 * The seconds of each phase, and the backend of the solve, are in {@link IsotonicResult#timings()} and
 * {@link IsotonicResult#phaseBackends()}. Cost: O(n) per range for sorting, pooling and PAVA (MLS: O(n_r^2)),
 * O(m log R) for the merges, where m is the number of blocks. All sums are exact integers and all comparisons
 * exact, so the model has the same bits on either path, for any number of ranges, any range bounds and either
 * backend.
 */
final class IsotonicTrainer {
    private IsotonicTrainer() {
    }

    /** What the first pass learns (merged over partitions). */
    static final class Stats implements Serializable {
        private static final long serialVersionUID = 1L;
        long rows;
        long positive;
        double maxAbsWY;
        double maxW;
        double minX = Double.POSITIVE_INFINITY;
        double maxX = Double.NEGATIVE_INFINITY;

        Stats add(Stats o) {
            rows += o.rows;
            positive += o.positive;
            maxAbsWY = Math.max(maxAbsWY, o.maxAbsWY);
            maxW = Math.max(maxW, o.maxW);
            minX = Math.min(minX, o.minX);
            maxX = Math.max(maxX, o.maxX);
            return this;
        }
    }

    /** A solved feature range: partition index (order), blocks, and counts. */
    static final class Part implements Serializable {
        private static final long serialVersionUID = 1L;
        final int index;
        final Object blocks; // L2Blocks or L1Blocks
        final long rows;
        final long zeroRows;
        final boolean gpu;

        Part(int index, Object blocks, long rows, long zeroRows, boolean gpu) {
            this.index = index;
            this.blocks = blocks;
            this.rows = rows;
            this.zeroRows = zeroRows;
            this.gpu = gpu;
        }

        static Part merge(Part a, Part b) {
            Part l = a.index < b.index ? a : b;
            Part r = a.index < b.index ? b : a;
            return new Part(l.index, IsotonicLocal.merge(l.blocks, r.blocks), l.rows + r.rows, l.zeroRows + r.zeroRows,
                    l.gpu || r.gpu);
        }
    }

    /** The final merged range in compact form. */
    static final class Done implements Serializable {
        private static final long serialVersionUID = 1L;
        final FinalBlocks blocks;
        final long rows;
        final long zeroRows;
        final boolean gpu;

        Done(FinalBlocks blocks, long rows, long zeroRows, boolean gpu) {
            this.blocks = blocks;
            this.rows = rows;
            this.zeroRows = zeroRows;
            this.gpu = gpu;
        }
    }

    /** How the inputs are read and named. */
    static final class Inputs implements Serializable {
        private static final long serialVersionUID = 1L;
        final boolean vector;
        final int featureIndex;
        final IsoColumns cols;
        final String featuresCol;

        Inputs(boolean vector, int featureIndex, IsoColumns cols, String featuresCol) {
            this.vector = vector;
            this.featureIndex = featureIndex;
            this.cols = cols;
            this.featuresCol = featuresCol;
        }
    }

    /**
     * Checks the columns of {@code schema}: label and weight numeric, features numeric or an ml Vector.
     *
     * @return true when the features column holds vectors
     */
    public static boolean checkSchema(StructType schema, String featuresCol, String labelCol, String weightCol) {
        DataType f = field(schema, featuresCol, "featuresCol").dataType();
        boolean vector = f.equals(SQLDataTypes.VectorType());
        if (!vector && !(f instanceof NumericType)) {
            throw new IllegalArgumentException("featuresCol '" + featuresCol + "' must be a numeric or vector column, but "
                    + "has type " + f.simpleString());
        }
        if (labelCol != null) {
            DataType l = field(schema, labelCol, "labelCol").dataType();
            if (!(l instanceof NumericType)) {
                throw new IllegalArgumentException("labelCol '" + labelCol + "' must be numeric, but has type "
                        + l.simpleString());
            }
        }
        if (weightCol != null) {
            DataType w = field(schema, weightCol, "weightCol").dataType();
            if (!(w instanceof NumericType)) {
                throw new IllegalArgumentException("weightCol '" + weightCol + "' must be numeric, but has type "
                        + w.simpleString());
            }
        }
        return vector;
    }

    static StructField field(StructType schema, String col, String param) {
        if (col == null || col.isEmpty()) {
            throw new IllegalArgumentException(param + " is not set");
        }
        for (StructField f : schema.fields()) {
            if (f.name().equals(col)) {
                return f;
            }
        }
        throw new IllegalArgumentException(param + ": column '" + col + "' does not exist. Available columns: "
                + String.join(", ", schema.fieldNames()));
    }

    static String quote(String name) {
        return "`" + name.replace("`", "``") + "`";
    }

    /**
     * Fits an isotonic function of {@code featuresCol} (a number, or element {@code featureIndex} of a vector) to
     * {@code labelCol} with optional non-negative weights.
     *
     * @param weightCol null for weight 1
     * @throws IllegalArgumentException for bad parameters or input (naming the column or parameter), an empty
     *                                  input, or all weights 0
     */
    public static IsotonicResult train(Dataset<?> dataset, String featuresCol, int featureIndex, String labelCol,
                                       String weightCol, IsotonicConfig cfg) {
        cfg.validate();
        IsotonicConfig.checkFeatureIndex(featureIndex);
        StructType schema = dataset.schema();
        boolean vector = checkSchema(schema, featuresCol, labelCol, weightCol);
        Inputs in = new Inputs(vector, featureIndex, new IsoColumns("labelCol '" + labelCol + "'",
                "featuresCol '" + featuresCol + "'" + (vector ? " (element " + featureIndex + ")" : ""),
                weightCol == null ? "weightCol" : "weightCol '" + weightCol + "'"), featuresCol);
        Dataset<Row> df = dataset.toDF();
        Column f = df.col(quote(featuresCol));
        Dataset<Row> raw = df.select(df.col(quote(labelCol)).cast(DataTypes.DoubleType).as("y"),
                (vector ? f : f.cast(DataTypes.DoubleType)).as("f"),
                (weightCol == null ? functions.lit(1.0) : df.col(quote(weightCol)).cast(DataTypes.DoubleType)).as("w"));
        try {
            return run(raw, in, weightCol != null, cfg);
        } catch (Exception e) { // Spark's job failures are checked SparkExceptions thrown undeclared
            throw SparkErrors.unwrap(e);
        }
    }

    /** Rows at or below which the fit runs on the driver (see {@link #LOCAL_ROWS}). */
    static final long DEFAULT_LOCAL_ROWS = 1L << 20;

    /**
     * {@value}: inputs of at most this many rows (default 2^20) are collected to the driver as primitive arrays
     * and solved there in one piece, with no shuffle and no merge tree; 0 always takes the range path. Why 2^20:
     * the collected arrays are at most 24 MiB, which any driver holds, and the driver's sort+pool+PAVA of 2^20
     * rows takes some 0.1 s on the CPU twin (milliseconds on a GPU) whereas the range path costs at least three
     * extra Spark jobs with a shuffle and a merge tree (about 0.3-1 s of scheduling on local[16]); above a few
     * million rows the parallel range path wins. {@link IsotonicConfig#localRows} overrides it per fit.
     */
    public static final String LOCAL_ROWS = "spark.sparkgpu.isotonic.localRows";

    /** The small-input threshold: the config's when set, else {@link #LOCAL_ROWS}. */
    static long localRows(IsotonicConfig cfg) {
        if (cfg.localRows >= 0) {
            return cfg.localRows;
        }
        String v = io.sparkgpu.cuda.SparkGpuConf.get(LOCAL_ROWS, Long.toString(DEFAULT_LOCAL_ROWS));
        try {
            long r = Long.parseLong(v.trim());
            if (r < 0) {
                throw new IllegalArgumentException(LOCAL_ROWS + " must be >= 0, got " + v);
            }
            return r;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(LOCAL_ROWS + " must be a row count >= 0, got '" + v + "'", e);
        }
    }

    /** What each input partition reports after packing: stats, a deterministic sample, and its rows if small. */
    static final class Summary implements Serializable {
        private static final long serialVersionUID = 1L;
        final int pid;
        final Stats stats;
        final double[] sampleX;
        final double[] sampleY;
        /** The partition's rows when it is small enough to ship with the summary, else null. */
        final IsoBlock rows;

        Summary(int pid, Stats stats, double[] sampleX, double[] sampleY, IsoBlock rows) {
            this.pid = pid;
            this.stats = stats;
            this.sampleX = sampleX;
            this.sampleY = sampleY;
            this.rows = rows;
        }
    }

    /** A packed input partition: its rows and what reading them learnt. */
    static final class Packed implements Serializable {
        private static final long serialVersionUID = 1L;
        final IsoBlock rows;
        final Stats stats;

        Packed(IsoBlock rows, Stats stats) {
            this.rows = rows;
            this.stats = stats;
        }
    }

    /** Ordered phase timings of one fit, in seconds. */
    static final class Clock {
        final java.util.LinkedHashMap<String, Double> phases = new java.util.LinkedHashMap<>();
        final java.util.LinkedHashMap<String, String> backends = new java.util.LinkedHashMap<>();
        private long t = System.nanoTime();
        /** One progress line per phase ({@link io.sparkgpu.common.Progress}); the total is set once the path is known. */
        private io.sparkgpu.common.Progress progress = io.sparkgpu.common.Progress.start("spark-gpu isotonic", 0);
        private int laps;
        private int expected;

        /**
         * The number of phases this fit will lap at most (pack, then the path's own), for the estimate of what
         * remains; "model" is always the last.
         */
        void expect(int phaseCount) {
            expected = phaseCount;
            progress = progress.withTotal(phaseCount);
        }

        void lap(String phase) {
            long now = System.nanoTime();
            phases.merge(phase, (now - t) / 1e9, Double::sum);
            t = now;
            laps = "model".equals(phase) ? Math.max(laps + 1, expected) : laps + 1;
            progress.step(laps, "phase", phase + " done");
        }

        /** Seconds since the last lap, starting a new lap (for a job whose parts are split by task times). */
        double peek() {
            long now = System.nanoTime();
            double s = (now - t) / 1e9;
            t = now;
            return s;
        }

        void put(String phase, double seconds) {
            phases.merge(phase, seconds, Double::sum);
        }
    }

    private static IsotonicResult run(Dataset<Row> raw, Inputs in, boolean weighted, IsotonicConfig cfg) {
        Clock clock = new Clock();
        final IsotonicConfig c = cfg.copy();
        final IsoColumns cols = in.cols;
        org.apache.spark.rdd.RDD<InternalRow> internal = raw.queryExecution().toRdd();
        int inputParts = Math.max(1, internal.getNumPartitions());
        long localRows = localRows(c);
        SparkContext sc = raw.sparkSession().sparkContext();

        // 1. one pass: InternalRow -> validated primitive arrays (persisted), with stats and a sample
        JavaRDD<Packed> packed = internal.toJavaRDD().mapPartitions((Iterator<InternalRow> it) -> {
            Stats s = new Stats();
            IsoBlock b = IsoBlock.read(it, in, weighted, s);
            return Collections.singletonList(new Packed(b, s)).iterator();
        }).persist(StorageLevel.MEMORY_AND_DISK());
        try {
            int planned = c.numPartitions > 0 ? c.numPartitions : inputParts;
            // about 256 sampled rows per planned range (range sizes then within some 10-20% of each other)
            final int perPart = (int) Math.min(1 << 16, Math.max(64, (256L * planned + inputParts - 1) / inputParts));
            final long shipCap = localRows / inputParts;
            List<Summary> sums = packed.mapPartitionsWithIndex((Integer pid, Iterator<Packed> it) -> {
                Packed p = it.next();
                IsoBlock b = p.rows;
                return Collections.singletonList(new Summary(pid, p.stats, IsoBlock.sample(b.x, b.n, perPart),
                        IsoBlock.sample(b.y, b.n, perPart), b.n <= shipCap ? b : null)).iterator();
            }, true).collect();
            Stats st = new Stats();
            for (Summary s : sums) {
                st.add(s.stats);
            }
            clock.lap("pack+validate");
            if (st.rows == 0) {
                throw new IllegalArgumentException("isotonic regression needs at least one row; the input is empty");
            }
            if (st.positive == 0) {
                throw new IllegalArgumentException(cols.weight + ": every weight is 0; isotonic regression needs at least "
                        + "one row with a positive weight");
            }
            final IsoScales scales = IsoScales.fromBounds(st.rows, st.maxAbsWY, st.maxW);
            if (st.rows <= localRows && driverCanSolve(c)) {
                return small(packed, sums, scales, cols, c, clock);
            }
            return ranged(packed, sums, st, scales, cols, c, clock, gpuRanges(sc, st.rows, c), inputParts);
        } finally {
            packed.unpersist(false);
        }
    }

    /** Small input: every row to the driver, one solve there (GPU if the driver has one), no shuffle. */
    private static IsotonicResult small(JavaRDD<Packed> packed, List<Summary> sums, IsoScales sc, IsoColumns cols,
                                        IsotonicConfig c, Clock clock) {
        List<IsoBlock> blocks = new ArrayList<>();
        List<Integer> missing = new ArrayList<>();
        for (Summary s : sums) {
            if (s.rows == null) {
                missing.add(s.pid);
            }
            blocks.add(s.rows);
        }
        if (!missing.isEmpty()) { // skewed partitions too large to ship with the summaries: fetch them now
            java.util.Set<Integer> want = new java.util.HashSet<>(missing);
            List<Tuple2<Integer, IsoBlock>> got = packed.mapPartitionsWithIndex((Integer pid, Iterator<Packed> it) ->
                    want.contains(pid) ? Collections.singletonList(new Tuple2<>(pid, it.next().rows)).iterator()
                            : Collections.<Tuple2<Integer, IsoBlock>>emptyIterator(), true).collect();
            for (Tuple2<Integer, IsoBlock> t : got) {
                blocks.set(t._1(), t._2());
            }
        }
        IsoBlock all = IsoBlock.concat(blocks);
        clock.expect(c.direction == IsotonicConfig.Direction.AUTO ? 5 : 4); // pack, collect, [spearman], solve, model
        clock.lap("collect");
        boolean isotonic = c.direction == IsotonicConfig.Direction.AUTO ? Spearman.increasing(all.x, all.y, all.n)
                : c.direction == IsotonicConfig.Direction.INCREASING;
        if (c.direction == IsotonicConfig.Direction.AUTO) {
            clock.lap("spearman");
            clock.backends.put("spearman", "cpu");
        }
        IsotonicSolver.Solved p = IsotonicSolver.solveRows(all.x, all.y, all.w, all.n, !isotonic, sc, cols, c);
        clock.lap("solve");
        clock.backends.put("solve", (p.gpu ? "gpu" : "cpu") + " (driver)");
        FinalBlocks fb = p.blocks instanceof L1Blocks ? FinalBlocks.of((L1Blocks) p.blocks, sc, !isotonic)
                : FinalBlocks.of((L2Blocks) p.blocks, sc, !isotonic);
        IsotonicResult r = IsotonicResult.from(fb, isotonic, c.yMin, c.yMax, p.rows, p.zeroWeightRows,
                p.gpu ? "gpu" : "cpu");
        clock.lap("model");
        return r.withTimings(clock.phases, clock.backends);
    }

    /**
     * False only when the fit demands a GPU ({@code backend=gpu}, least squares) and the driver has none: then
     * small inputs take the range path with one range, solved by an executor's GPU.
     */
    static boolean driverCanSolve(IsotonicConfig c) {
        if (c.backend != io.sparkgpu.cuda.Backend.GPU || c.loss == IsotonicConfig.Loss.L1) {
            return true;
        }
        return io.sparkgpu.cuda.BackendChooser.gpuUsable(IsotonicGpu.MODULE, IsotonicGpu.PROBE_KERNEL);
    }

    /**
     * Ranges for a GPU backend: <b>one</b> when one executor holds every GPU (local mode too) and all rows fit in
     * one device (about 128 bytes per row for sort, pool and PAVA-merge, {@link IsoPoolGpu}, within 60% of the
     * device; and Java's array limit); else one per GPU, more when such a range would not fit. One range needs no
     * shuffle: the packed blocks are coalesced into one task, which reads them in place when they are all in its
     * executor. Several ranges range-partition every row through Spark's shuffle, which costs more than the GPU
     * work it spreads. Measured on 2 H200s, 4 x 10^8 rows (BENCHMARKS.md, issue 20):
     * <ul>
     * <li>one executor, one range: a 1.0 s coalesce, then the GPU solve in 1.27 s;</li>
     * <li>one executor per GPU, a range per GPU: the shuffle took 6.1 s;</li>
     * <li>one executor per GPU, one range: 17.5 s, because the one coalescing task fetched the other executor's
     * blocks one by one.</li>
     * </ul>
     * 0 when the fit will not run on GPUs (CPU backend, L1, MLS, or no GPU to be seen).
     */
    static int gpuRanges(SparkContext sc, long rows, IsotonicConfig c) {
        if (c.backend == io.sparkgpu.cuda.Backend.CPU || c.loss != IsotonicConfig.Loss.L2
                || c.algorithm != IsotonicConfig.Algorithm.PAVA) {
            return 0;
        }
        io.sparkgpu.cuda.CudaDevice dev = null;
        try {
            dev = io.sparkgpu.cuda.BackendChooser.resolve(io.sparkgpu.cuda.Backend.AUTO, IsotonicGpu.MODULE,
                    IsotonicGpu.PROBE_KERNEL);
        } catch (RuntimeException e) {
            dev = null;
        }
        long gpus;
        long executors;
        if (sc.isLocal()) {
            gpus = dev != null ? 1 : 0; // local mode: every task uses the driver's configured device
            executors = 1;
        } else {
            long perExecutor = sc.getConf().getLong("spark.executor.resource.gpu.amount", 0L);
            executors = Math.max(0, sc.statusTracker().getExecutorInfos().length - 1);
            gpus = perExecutor * executors;
        }
        if (gpus <= 0) {
            return 0;
        }
        long mem = dev != null ? dev.totalMemory() : 16L << 30; // a driver without a GPU: assume 16 GiB devices
        return rangesFor(rows, gpus, executors, mem);
    }

    /** {@link #gpuRanges} for {@code rows} rows, {@code gpus} GPUs of {@code deviceBytes} each on {@code executors}. */
    static int rangesFor(long rows, long gpus, long executors, long deviceBytes) {
        long perRange = Math.min(Integer.MAX_VALUE - 16L, (long) (0.6 * deviceBytes / 128));
        if (executors <= 1 && rows <= perRange) {
            return 1;
        }
        long perGpu = (rows + gpus - 1) / gpus;
        long rounds = (perGpu + perRange - 1) / perRange;
        return (int) Math.min(1 << 16, gpus * rounds);
    }

    /**
     * True when the input partitions are already feature ranges in order: every non-empty partition's features lie
     * strictly above those of the partitions before it (from the per-partition min/max of the first pass), so
     * equal features never straddle two partitions. Then each packed block is its own range and nothing moves.
     */
    static boolean orderedByFeature(List<Summary> sums) {
        double prevMax = Double.NEGATIVE_INFINITY;
        boolean any = false;
        for (Summary s : sums) {
            if (s.stats.rows == 0) {
                continue;
            }
            if (any && !(s.stats.minX > prevMax)) {
                return false;
            }
            prevMax = s.stats.maxX;
            any = true;
        }
        return true;
    }

    /** Up to {@code parts - 1} strictly increasing upper bounds at the quantiles of the sorted sample. */
    static double[] bounds(double[] sorted, int parts) {
        int m = sorted.length;
        double[] b = new double[Math.max(0, parts - 1)];
        int k = 0;
        for (int r = 1; r < parts && m > 0; r++) {
            double v = sorted[(int) Math.min(m - 1, Math.max(0, ((long) r * m + parts - 1) / parts - 1))];
            if (k == 0 || v > b[k - 1]) {
                b[k++] = v;
            }
        }
        return Arrays.copyOf(b, k);
    }

    private static double[] sortedSample(List<Summary> sums, boolean ofX) {
        int total = 0;
        for (Summary s : sums) {
            total += (ofX ? s.sampleX : s.sampleY).length;
        }
        double[] all = new double[total];
        int at = 0;
        for (Summary s : sums) {
            double[] v = ofX ? s.sampleX : s.sampleY;
            System.arraycopy(v, 0, all, at, v.length);
            at += v.length;
        }
        Arrays.sort(all);
        return all;
    }

    /** The packed rows split into {@code upper.length + 1} feature ranges, range r in partition r. */
    static JavaRDD<IsoBlock> split(JavaRDD<Packed> packed, double[] upper) {
        if (upper.length == 0) { // one range: no shuffle, the packed blocks are concatenated in one task
            return packed.coalesce(1, false).mapPartitions((Iterator<Packed> it) -> {
                List<IsoBlock> l = new ArrayList<>();
                it.forEachRemaining(p -> l.add(p.rows));
                return Collections.singletonList(IsoBlock.concat(l)).iterator();
            });
        }
        return packed.flatMapToPair((Packed p) -> p.rows.split(upper).iterator())
                .partitionBy(new org.apache.spark.HashPartitioner(upper.length + 1)) // key r goes to partition r
                .mapPartitions((Iterator<Tuple2<Integer, IsoBlock>> it) -> {
                    List<IsoBlock> l = new ArrayList<>();
                    it.forEachRemaining(t -> l.add(t._2()));
                    return Collections.singletonList(IsoBlock.concat(l)).iterator();
                }, true);
    }

    /**
     * Rows per distinct feature (estimated from the sample) from which a least-squares fit with several ranges pools
     * equal features in each packed block before the shuffle ({@link #splitPooled}): the shuffle then moves one entry
     * per feature and block instead of every row (4 x 10^8 rows with 10^6 distinct features: 32 x 10^6 entries).
     */
    static final long POOL_FIRST_ROWS_PER_FEATURE = 16;

    /**
     * Distinct values among the data a sorted sample came from, estimated from the sample's pairs of equal values
     * (each pair of draws is equal with probability about 1 / D when D values are equally common: D ~ S (S - 1) / 2
     * pairs); {@link Long#MAX_VALUE} when no two sampled values are equal.
     */
    static long distinctEstimate(double[] sorted) {
        long pairs = 0;
        int run = 1;
        for (int i = 1; i <= sorted.length; i++) {
            if (i < sorted.length && sorted[i] == sorted[i - 1]) {
                run++;
            } else {
                pairs += (long) run * (run - 1) / 2;
                run = 1;
            }
        }
        if (pairs == 0) {
            return Long.MAX_VALUE;
        }
        long s = sorted.length;
        return Math.max(1, s * (s - 1) / 2 / pairs);
    }

    /**
     * The packed rows pooled ({@link IsoPoints#poolPart}: validated, one entry per distinct feature with exact sums),
     * split by feature range and shuffled: partition r holds range r's pooled parts, which {@link IsoPoints#merge}
     * joins into the points {@link IsoPoints#pool} would give for all its rows.
     *
     * @param groups  0: each packed block is pooled on its own, on the CPU, by as many tasks as blocks; else the
     *                blocks are pooled in this many groups by the executor caching them ({@link ExecutorCoalescer}),
     *                on {@code backend}: one GPU pools its executor's rows at once, so the shuffle moves one entry
     *                per feature and group instead of one per feature and block (measured on 2 H200s, 4 x 10^8 rows
     *                with 10^6 features: 32 blocks pooled on the CPU, then 3.2 x 10^7 entries shuffled, 4.6 s)
     */
    static JavaRDD<List<IsoPoints>> splitPooled(JavaRDD<Packed> packed, double[] upper, boolean negate, IsoScales sc,
                                                IsoColumns cols, int groups, io.sparkgpu.cuda.Backend backend) {
        JavaRDD<Packed> src = groups > 0 ? ExecutorCoalescer.coalesce(packed, groups) : packed;
        io.sparkgpu.cuda.Backend on = groups > 0 ? backend : io.sparkgpu.cuda.Backend.CPU;
        return src.mapPartitionsToPair((Iterator<Packed> it) -> {
                    List<IsoBlock> blocks = new ArrayList<>();
                    it.forEachRemaining(p -> blocks.add(p.rows));
                    return IsotonicSolver.poolPart(blocks, negate, sc, cols, on).value.split(upper).iterator();
                })
                .partitionBy(new org.apache.spark.HashPartitioner(upper.length + 1)) // key r goes to partition r
                .mapPartitions((Iterator<Tuple2<Integer, IsoPoints>> it) -> {
                    List<IsoPoints> l = new ArrayList<>();
                    it.forEachRemaining(t -> l.add(t._2()));
                    return Collections.singletonList(l).iterator();
                }, true);
    }

    /** What solving one range gives: its Part, or with a single range directly the final blocks; task seconds. */
    static final class Solved implements Serializable {
        private static final long serialVersionUID = 1L;
        final Part part;
        final Done done;
        final boolean gpu;
        final double solveSeconds;
        final double finalSeconds;

        Solved(Part part, Done done, boolean gpu, double solveSeconds, double finalSeconds) {
            this.part = part;
            this.done = done;
            this.gpu = gpu;
            this.solveSeconds = solveSeconds;
            this.finalSeconds = finalSeconds;
        }

        Solved light() {
            return new Solved(null, null, gpu, solveSeconds, finalSeconds);
        }
    }

    /**
     * Range {@code pid}'s solution {@code p} (solved since {@code t0}) as its Part, or with a single range as the
     * final blocks directly.
     */
    static Solved solvedRange(int pid, IsotonicSolver.Solved p, int parts, IsoScales sc, boolean isotonic, long t0) {
        long t1 = System.nanoTime();
        Part part = new Part(pid, p.blocks, p.rows, p.zeroWeightRows, p.gpu);
        Done d = parts == 1 ? done(p.blocks, sc, isotonic, p.rows, p.zeroWeightRows, p.gpu) : null;
        long t2 = System.nanoTime();
        return new Solved(parts == 1 ? null : part, d, p.gpu, (t1 - t0) / 1e9, (t2 - t1) / 1e9);
    }

    static Done done(Object blocks, IsoScales sc, boolean isotonic, long rows, long zeroRows, boolean gpu) {
        return new Done(blocks instanceof L1Blocks ? FinalBlocks.of((L1Blocks) blocks, sc, !isotonic)
                : FinalBlocks.of((L2Blocks) blocks, sc, !isotonic), rows, zeroRows, gpu);
    }

    /** Large input: range-partition the packed arrays by feature, solve each range, merge in a tree. */
    private static IsotonicResult ranged(JavaRDD<Packed> packed, List<Summary> sums, Stats st, IsoScales sc,
                                         IsoColumns cols, IsotonicConfig c, Clock clock, int gpuRanges,
                                         int inputParts) {
        int want = c.numPartitions > 0 ? c.numPartitions : gpuRanges > 0 ? gpuRanges : inputParts;
        double[] xSample = sortedSample(sums, true);
        boolean ordered = want == inputParts && inputParts > 1 && orderedByFeature(sums);
        final double[] upper = ordered ? new double[inputParts - 1] : bounds(xSample, want);
        final int parts = upper.length + 1;
        // least squares with a known direction and many equal features: pool them in each block before the shuffle
        final boolean poolFirst = !ordered && parts > 1 && c.loss == IsotonicConfig.Loss.L2
                && c.direction != IsotonicConfig.Direction.AUTO
                && distinctEstimate(xSample) <= st.rows / POOL_FIRST_ROWS_PER_FEATURE;
        // one range: the packed blocks coalesced into one task, solved together (on a GPU each block is uploaded in
        // place, no host concatenation); else one partition per range
        JavaRDD<IsoBlock> ranges = poolFirst || parts == 1 ? null : ordered ? packed.map(p -> p.rows)
                : split(packed, upper);
        // a GPU fit pools each executor's blocks at once on its GPU (one group per range); else per block on the CPU
        final int poolGroups = poolFirst && gpuRanges > 0 ? parts : 0;
        String splitNote = ordered ? "cpu (input partitions already ordered by feature, no shuffle)"
                : parts == 1 ? "cpu (coalesce, no shuffle)" : poolFirst ? (poolGroups > 0 ? c.backend + " (" + parts
                + " ranges, equal features pooled first in " + poolGroups + " groups of blocks by executor)"
                : "cpu (" + parts + " ranges, equal features pooled in each block first)")
                : "cpu (" + parts + " ranges)";
        boolean splitDone = false;
        JavaRDD<Solved> solved = null;
        // pack, split+shuffle, [spearman], solve, merge+collect, model
        clock.expect(c.direction == IsotonicConfig.Direction.AUTO ? 6 : 5);
        try {
            final boolean isotonic;
            if (c.direction == IsotonicConfig.Direction.AUTO) {
                // Spearman needs feature ranges; reuse the solve's, or with a single one split by input partitions
                double[] su = parts > 1 ? upper : bounds(xSample, inputParts);
                JavaRDD<IsoBlock> sr = (parts > 1 ? ranges : split(packed, su)).persist(StorageLevel.MEMORY_AND_DISK());
                try {
                    List<Integer> counts = sr.map(b -> b.n).collect();
                    if (parts > 1) {
                        ranges = sr;
                        splitDone = true;
                        packed.unpersist(false); // the persisted ranges hold every row now
                        clock.lap("range split+shuffle");
                        clock.backends.put("range split+shuffle", splitNote);
                    }
                    isotonic = spearmanIncreasing(sr, counts, sortedSample(sums, false));
                } finally {
                    if (parts == 1) {
                        sr.unpersist(false);
                    }
                }
                clock.lap("spearman");
                clock.backends.put("spearman", "cpu (" + (su.length + 1) + " ranges)");
            } else {
                isotonic = c.direction == IsotonicConfig.Direction.INCREASING;
            }

            final boolean negate = !isotonic;
            solved = poolFirst ? splitPooled(packed, upper, negate, sc, cols, poolGroups, c.backend)
                    .mapPartitionsWithIndex(
                    (Integer pid, Iterator<List<IsoPoints>> it) -> {
                long t0 = System.nanoTime();
                IsotonicSolver.Solved p = IsotonicSolver.solvePooled(IsoPoints.merge(it.next(), cols), c, c.backend);
                return Collections.singletonList(solvedRange(pid, p, parts, sc, isotonic, t0)).iterator();
            }, true) : parts == 1 ? packed.coalesce(1, false).mapPartitions((Iterator<Packed> it) -> {
                List<IsoBlock> blocks = new ArrayList<>();
                it.forEachRemaining(p -> blocks.add(p.rows));
                long t0 = System.nanoTime();
                IsotonicSolver.Solved p = IsotonicSolver.solveBlocks(blocks, negate, sc, cols, c);
                return Collections.singletonList(solvedRange(0, p, parts, sc, isotonic, t0)).iterator();
            }) : ranges.mapPartitionsWithIndex((Integer pid, Iterator<IsoBlock> it) -> {
                IsoBlock b = it.next();
                long t0 = System.nanoTime();
                IsotonicSolver.Solved p = IsotonicSolver.solveRows(b.x, b.y, b.w, b.n, negate, sc, cols, c);
                return Collections.singletonList(solvedRange(pid, p, parts, sc, isotonic, t0)).iterator();
            }, true);
            List<Solved> out;
            if (parts == 1) {
                out = solved.collect(); // the final blocks come back with the solve: no persist, no tree
            } else {
                solved = solved.persist(StorageLevel.MEMORY_AND_DISK());
                out = solved.map(Solved::light).collect();
            }
            double solveS = 0;
            double finalS = 0;
            long g = 0;
            for (Solved o : out) {
                solveS = Math.max(solveS, o.solveSeconds);
                finalS = Math.max(finalS, o.finalSeconds);
                g += o.gpu ? 1 : 0;
            }
            if (!splitDone) { // split/shuffle and solve ran in one job: the slowest range's solve is the solve phase
                Double jobS = clock.peek();
                clock.put("range split+shuffle", Math.max(0, jobS - solveS - finalS));
                clock.backends.put("range split+shuffle", splitNote);
                clock.put("solve", solveS);
            } else {
                clock.lap("solve");
            }
            clock.backends.put("solve", g == parts ? "gpu" : g == 0 ? "cpu" : "mixed (" + g + "/" + parts
                    + " ranges on gpu)");
            Done d;
            if (parts == 1) {
                clock.put("merge+collect", finalS);
                d = out.get(0).done;
            } else {
                JavaPairRDD<Integer, Part> level = solved.mapToPair(o -> new Tuple2<>(o.part.index, o.part));
                int count = parts;
                while (count > 1) {
                    int next = (count + 1) / 2;
                    level = level.mapToPair(t -> new Tuple2<>(t._1() / 2, t._2())).reduceByKey(Part::merge, next);
                    count = next;
                }
                List<Done> fin = level.values().map(p -> done(p.blocks, sc, isotonic, p.rows, p.zeroRows, p.gpu))
                        .collect();
                if (fin.size() != 1) {
                    throw new IllegalStateException("the merge tree ended with " + fin.size() + " ranges instead of one");
                }
                d = fin.get(0);
                clock.lap("merge+collect");
            }
            IsotonicResult r = IsotonicResult.from(d.blocks, isotonic, c.yMin, c.yMax, d.rows, d.zeroRows,
                    d.gpu ? "gpu" : "cpu");
            clock.lap("model");
            return r.withTimings(clock.phases, clock.backends);
        } finally {
            if (ranges != null) {
                ranges.unpersist(false);
            }
            if (solved != null) {
                solved.unpersist(false);
            }
        }
    }

    // ------------------------------------------------------------------ increasing=auto

    /** (label, doubled x-rank) pairs of some rows. */
    static final class YRanks implements Serializable {
        private static final long serialVersionUID = 1L;
        final double[] y;
        final long[] rx;
        final int n;

        YRanks(double[] y, long[] rx, int n) {
            this.y = y;
            this.rx = rx;
            this.n = n;
        }
    }

    /**
     * Sign of Spearman's rho of (x, y) over the feature ranges (range r holds {@code counts[r]} rows, all of its
     * features above those of range r-1), with {@link Spearman}'s doubled average ranks and exact integer sums:
     * a range's doubled x-ranks are its local ones plus twice the rows before it; the (y, x-rank) pairs are then
     * range-partitioned by label at bounds from the label sample, and label range r contributes
     * 2 offY[r] sum(rx) + sum(rx * local doubled y-rank). One range: {@link Spearman#increasing} in its task.
     * Rows of weight 0 count, as in scikit-learn (which ignores weights here).
     */
    static boolean spearmanIncreasing(JavaRDD<IsoBlock> ranges, List<Integer> counts, double[] ySample) {
        if (counts.size() == 1) {
            return ranges.map(b -> Spearman.increasing(b.x, b.y, b.n)).collect().get(0);
        }
        long n = 0;
        for (int c : counts) {
            n += c;
        }
        return Spearman.signOfNumerator(spearmanSum(ranges, counts, ySample), n) >= 0;
    }

    /**
     * The exact sum of doubled-rank products (x-rank times y-rank) over the rows of {@code ranges} (feature
     * ranges in order, range r holding {@code counts[r]} rows), label ranges cut at quantiles of the sorted
     * {@code ySample}.
     */
    static BigInteger spearmanSum(JavaRDD<IsoBlock> ranges, List<Integer> counts, double[] ySample) {
        int parts = counts.size();
        long[] offX = new long[parts];
        long n = 0;
        for (int r = 0; r < parts; r++) {
            offX[r] = n;
            n += counts.get(r);
        }
        final double[] upper = bounds(ySample, parts);
        int yParts = upper.length + 1;
        List<YSum> sums = ranges.mapPartitionsWithIndex((Integer pid, Iterator<IsoBlock> it) -> {
            IsoBlock b = it.next();
            long[] rx = Spearman.doubledRanks(b.x, b.n);
            long twice = 2 * offX[pid];
            for (int i = 0; i < b.n; i++) {
                rx[i] += twice;
            }
            // split (y, rx) by label range
            int[] rid = new int[b.n];
            int[] cnt = new int[yParts];
            for (int i = 0; i < b.n; i++) {
                rid[i] = IsoBlock.range(upper, b.y[i]);
                cnt[rid[i]]++;
            }
            double[][] ys = new double[yParts][];
            long[][] rs = new long[yParts][];
            for (int r = 0; r < yParts; r++) {
                ys[r] = new double[cnt[r]];
                rs[r] = new long[cnt[r]];
            }
            int[] at = new int[yParts];
            for (int i = 0; i < b.n; i++) {
                int r = rid[i];
                int k = at[r]++;
                ys[r][k] = b.y[i];
                rs[r][k] = rx[i];
            }
            List<Tuple2<Integer, YRanks>> out = new ArrayList<>();
            for (int r = 0; r < yParts; r++) {
                if (cnt[r] > 0) {
                    out.add(new Tuple2<>(r, new YRanks(ys[r], rs[r], cnt[r])));
                }
            }
            return out.iterator();
        }, true).mapToPair(t -> t).partitionBy(new org.apache.spark.HashPartitioner(yParts))
                .mapPartitionsWithIndex((Integer pid, Iterator<Tuple2<Integer, YRanks>> it) -> {
                    List<YRanks> l = new ArrayList<>();
                    int m = 0;
                    while (it.hasNext()) {
                        YRanks v = it.next()._2();
                        l.add(v);
                        m += v.n;
                    }
                    double[] y = new double[m];
                    long[] rx = new long[m];
                    int at = 0;
                    for (YRanks v : l) {
                        System.arraycopy(v.y, 0, y, at, v.n);
                        System.arraycopy(v.rx, 0, rx, at, v.n);
                        at += v.n;
                    }
                    long[] ry = Spearman.doubledRanks(y, m);
                    BigInteger sumRx = BigInteger.ZERO;
                    BigInteger sumProd = BigInteger.ZERO;
                    long a = 0;
                    long p = 0;
                    for (int i = 0; i < m; i++) {
                        if (a > Long.MAX_VALUE - rx[i]) {
                            sumRx = sumRx.add(BigInteger.valueOf(a));
                            a = 0;
                        }
                        a += rx[i];
                        long q = rx[i] * ry[i]; // < (2n)^2: fits while n < 1.5e9
                        if (p > Long.MAX_VALUE - q) {
                            sumProd = sumProd.add(BigInteger.valueOf(p));
                            p = 0;
                        }
                        p += q;
                    }
                    sumRx = sumRx.add(BigInteger.valueOf(a));
                    sumProd = sumProd.add(BigInteger.valueOf(p));
                    return Collections.singletonList(new YSum(pid, m, sumRx, sumProd)).iterator();
                }, true).collect();
        long[] offY = new long[yParts];
        long[] cnt = new long[yParts];
        for (YSum s : sums) {
            cnt[s.range] = s.count;
        }
        for (int r = 1; r < yParts; r++) {
            offY[r] = offY[r - 1] + cnt[r - 1];
        }
        BigInteger total = BigInteger.ZERO;
        for (YSum s : sums) {
            total = total.add(BigInteger.valueOf(2 * offY[s.range]).multiply(s.sumRx)).add(s.sumProducts);
        }
        return total;
    }

    /** What one label range contributes to the Spearman sum. */
    static final class YSum implements Serializable {
        private static final long serialVersionUID = 1L;
        final int range;
        final long count;
        final BigInteger sumRx;
        final BigInteger sumProducts;

        YSum(int range, long count, BigInteger sumRx, BigInteger sumProducts) {
            this.range = range;
            this.count = count;
            this.sumRx = sumRx;
            this.sumProducts = sumProducts;
        }
    }
}
