package io.sparkgpu.tsne.affinity;

import io.sparkgpu.common.SchemaColumns;
import io.sparkgpu.common.SparkErrors;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.tsne.TsneConfig;
import java.io.Serializable;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.Partitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import org.apache.spark.util.CollectionAccumulator;
import scala.Tuple2;

/**
 * Distributed t-SNE affinities on Spark: the symmetrised, normalised affinity matrix P of a DataFrame of dense
 * vectors (perplexity-calibrated kNN affinities) or of a weighted edge list (stochastic-graph mode), as an RDD of
 * {@link SparseRows} slices, one per partition, covering contiguous row ranges in partition order.
 *
 * <h2>Row numbering</h2>
 * Rows get global indices 0..n-1 in the DataFrame's order (partition by partition, rows in partition order),
 * as {@code zipWithIndex} would number them. The input is read once and the blocks persisted, so a DataFrame
 * whose order is deterministic (files, a sorted or explicitly created frame) gives a deterministic numbering.
 *
 * <h2>Result</h2>
 * {@link Result#rows}: partition p holds exactly one {@link SparseRows} with rowOffset = offsets[p] and
 * rows = offsets[p+1] - offsets[p] (possibly 0 rows), persisted MEMORY_AND_DISK (call
 * {@link Result#unpersist()} when done). For vectors, the slices are bitwise equal to the rows of the local
 * {@code JointProbabilities.symmetrize(g, TsneAffinities.conditional(g, perplexity, b))} with
 * {@code g = TsneAffinities.knn(x, n, d, k, b)} (x the vectors rounded to float) for any number of partitions
 * and any backend; for edges, to {@link JointProbabilities#fromEdges} with rows split into
 * {@code edges.rdd().getNumPartitions()} near-equal contiguous ranges.
 *
 * <h2>kNN</h2>
 * Query blocks are the DataFrame's partitions. When the reference set (4 n d bytes) is at most
 * {@code broadcastBytes}, it is broadcast and each partition computes its rows' kNN against all points; otherwise
 * every (query block, reference block) pair is one task ({@code cartesian}) and the partial graphs are combined
 * by the exact top-k {@link TsneAffinities#merge} in a shuffle. Conditional P per partition; symmetrisation by one
 * shuffle of the transposed entries to the partitions that own their rows. GPU work runs on the device Spark
 * assigned to the task ({@code gpu} resource; else {@code spark.sparkgpu.device}), through the
 * {@code io.sparkgpu.cuda} runtime.
 */
public final class TsneAffinitiesSpark {
    /** Default reference size up to which the points are broadcast (256 MiB of floats). */
    public static final long DEFAULT_BROADCAST_BYTES = 256L << 20;

    private TsneAffinitiesSpark() {
    }

    /** The distributed affinity matrix: slices by partition, n and the row offsets of the partitions. */
    public static final class Result implements Serializable {
        private static final long serialVersionUID = 1L;
        /** One SparseRows per partition, partition p holding rows [offsets[p], offsets[p+1]). */
        public final transient JavaRDD<SparseRows> rows;
        /** Number of points. */
        public final int n;
        /** partitions + 1 row offsets; offsets[0] = 0, offsets[partitions] = n. */
        public final int[] offsets;
        /** Neighbours per point used (0 for edge input). */
        public final int k;
        /** Where the kNN and the calibration of the tasks ran (empty for edge input). */
        public final BackendUsage usage;

        Result(JavaRDD<SparseRows> rows, int n, int[] offsets, int k) {
            this(rows, n, offsets, k, new BackendUsage());
        }

        Result(JavaRDD<SparseRows> rows, int n, int[] offsets, int k, BackendUsage usage) {
            this.rows = rows;
            this.n = n;
            this.offsets = offsets;
            this.k = k;
            this.usage = usage;
        }

        public int numPartitions() {
            return offsets.length - 1;
        }

        /** All slices on the driver, in row order (for tests and small data). */
        public List<SparseRows> collect() {
            return rows.collect();
        }

        public void unpersist() {
            rows.unpersist(false);
        }
    }

    /** {@link #fromVectors(Dataset, String, double, int, Backend, long)} with the default k, backend auto. */
    public static Result fromVectors(Dataset<Row> df, String featuresCol, double perplexity) {
        return fromVectors(df, featuresCol, perplexity, 0, Backend.AUTO, DEFAULT_BROADCAST_BYTES);
    }

    /**
     * Perplexity-calibrated t-SNE affinities of the vectors in {@code featuresCol} (an ml Vector or array of
     * numbers column; values are rounded to float).
     *
     * @param k               neighbours per point, or &lt;= 0 for {@link TsneConfig#defaultK}; the rules are
     *                        {@link TsneConfig#neighbours}: perplexity &lt; k &lt;= n - 1
     * @param backend         where the kNN and the bandwidth search run (auto: GPU when usable, else the CPU twin)
     * @param broadcastBytes  broadcast the points when 4 n d bytes are at most this; otherwise block pairs
     * @throws IllegalArgumentException naming the column for a missing/mistyped column, a null row, a NaN or
     *         infinite value, vectors of different sizes, n &lt; 4, and saying what to lower when perplexity or k
     *         is too large for n; also for duplicate points that make the perplexity unreachable
     */
    public static Result fromVectors(Dataset<Row> df, String featuresCol, double perplexity, int k, Backend backend,
            long broadcastBytes) {
        try {
            return vectors(df, featuresCol, perplexity, k, backend, broadcastBytes);
        } catch (Exception e) {
            throw SparkErrors.unwrap(e);
        }
    }

    /** A partition's points as floats, with its partition index. */
    static final class Block implements Serializable {
        private static final long serialVersionUID = 1L;
        final int part;
        final int rows;
        final int d; // -1 when empty
        final float[] x;

        Block(int part, int rows, int d, float[] x) {
            this.part = part;
            this.rows = rows;
            this.d = d;
            this.x = x;
        }
    }

    /** Routes key p to partition p. */
    static final class IdPartitioner extends Partitioner {
        private static final long serialVersionUID = 1L;
        private final int parts;

        IdPartitioner(int parts) {
            this.parts = parts;
        }

        @Override
        public int numPartitions() {
            return parts;
        }

        @Override
        public int getPartition(Object key) {
            return (Integer) key;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof IdPartitioner && ((IdPartitioner) o).parts == parts;
        }

        @Override
        public int hashCode() {
            return parts;
        }
    }

    static void checkVectorColumn(StructType schema, String col) {
        int idx = SchemaColumns.index(schema, col, "featuresCol");
        DataType t = schema.fields()[idx].dataType();
        boolean ok = t.equals(SQLDataTypes.VectorType())
                || (t instanceof ArrayType && ((ArrayType) t).elementType() instanceof NumericType);
        if (!ok) {
            throw new IllegalArgumentException("featuresCol '" + col + "' must be a vector or array<double> column, "
                    + "but has type " + t.simpleString());
        }
    }

    private static Block readBlock(int part, Iterator<Row> it, String col) {
        List<float[]> rows = new ArrayList<>();
        int d = -1;
        while (it.hasNext()) {
            Row row = it.next();
            if (row.isNullAt(0)) {
                throw new IllegalArgumentException("featuresCol '" + col + "' contains a null row; t-SNE needs a "
                        + "vector for every row (drop or impute the nulls)");
            }
            Object v = row.get(0);
            double[] vals;
            if (v instanceof Vector) {
                vals = ((Vector) v).toArray();
            } else {
                List<Object> list = row.getList(0);
                vals = new double[list.size()];
                for (int i = 0; i < vals.length; i++) {
                    Object e = list.get(i);
                    if (e == null) {
                        throw new IllegalArgumentException("featuresCol '" + col + "' contains an array with a null "
                                + "element");
                    }
                    vals[i] = ((Number) e).doubleValue();
                }
            }
            if (d == -1) {
                d = vals.length;
                if (d == 0) {
                    throw new IllegalArgumentException("featuresCol '" + col + "' contains an empty vector");
                }
            } else if (vals.length != d) {
                throw new IllegalArgumentException("featuresCol '" + col + "' holds vectors of different sizes ("
                        + d + " and " + vals.length + "); t-SNE needs one dimension for all rows");
            }
            float[] f = new float[d];
            for (int i = 0; i < d; i++) {
                if (!Double.isFinite(vals[i])) {
                    throw new IllegalArgumentException("featuresCol '" + col + "' contains " + vals[i] + " (at index "
                            + i + "); t-SNE needs finite features");
                }
                f[i] = (float) vals[i];
                if (!Float.isFinite(f[i])) {
                    throw new IllegalArgumentException("featuresCol '" + col + "' contains " + vals[i] + " (at index "
                            + i + "), beyond the float range t-SNE computes in; rescale the features");
                }
            }
            rows.add(f);
        }
        float[] x = new float[rows.size() * Math.max(d, 0)];
        for (int r = 0; r < rows.size(); r++) {
            System.arraycopy(rows.get(r), 0, x, r * d, d);
        }
        return new Block(part, rows.size(), d, x);
    }

    private static Result vectors(Dataset<Row> df, String featuresCol, double perplexity, int kIn, Backend backend,
            long broadcastBytes) {
        checkVectorColumn(df.schema(), featuresCol);
        TsneConfig.checkPerplexity(perplexity);
        final String col = featuresCol;
        JavaRDD<Block> blocks = df.select(featuresCol).javaRDD()
                .mapPartitionsWithIndex((p, it) -> Collections.singletonList(readBlock(p, it, col)).iterator(), true)
                .persist(StorageLevel.MEMORY_AND_DISK());
        try {
            List<int[]> meta = blocks.map(b -> new int[] {b.part, b.rows, b.d}).collect();
            final int parts = meta.size();
            final int[] offsets = new int[parts + 1];
            long total = 0;
            int d = -1;
            for (int[] m : meta) {
                if (m[2] != -1) {
                    if (d != -1 && d != m[2]) {
                        throw new IllegalArgumentException("featuresCol '" + col + "' holds vectors of different sizes ("
                                + d + " and " + m[2] + "); t-SNE needs one dimension for all rows");
                    }
                    d = m[2];
                }
                total += m[1];
                if (total > Integer.MAX_VALUE - 1) {
                    throw new IllegalArgumentException("t-SNE supports at most " + (Integer.MAX_VALUE - 1) + " rows");
                }
                offsets[m[0] + 1] = m[1];
            }
            for (int p = 0; p < parts; p++) {
                offsets[p + 1] += offsets[p];
            }
            final int n = (int) total;
            final int k;
            try {
                k = TsneConfig.neighbours(Math.max(kIn, 0), perplexity, n);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("featuresCol '" + col + "': " + e.getMessage(), e);
            }
            final int dim = d;
            JavaSparkContext jsc = JavaSparkContext.fromSparkContext(df.sparkSession().sparkContext());
            // where the tasks' kNN and calibration ran: an executor's records reach the driver with its task results
            final CollectionAccumulator<BackendUsage> used = jsc.sc().collectionAccumulator("spark-gpu t-SNE affinities");
            JavaRDD<KnnGraph> graphs;
            Broadcast<float[]> bx = null;
            JavaRDD<Block> nonEmpty = blocks;
            if (4L * n * dim <= broadcastBytes && (long) n * dim <= Integer.MAX_VALUE - 8) {
                float[] all = new float[n * dim];
                for (Block b : blocks.collect()) {
                    System.arraycopy(b.x, 0, all, offsets[b.part] * dim, b.rows * dim);
                }
                final Broadcast<float[]> bAll = jsc.broadcast(all);
                bx = bAll;
                graphs = blocks.map(b -> {
                    BackendUsage u = new BackendUsage();
                    KnnGraph g = TsneAffinities.knnBlock(b.x, offsets[b.part], b.rows, bAll.value(), 0, n, dim, k, n,
                            backend, u);
                    used.add(u);
                    return g;
                });
            } else {
                JavaPairRDD<Integer, KnnGraph> partial = blocks.cartesian(blocks).mapToPair(qr -> {
                    Block q = qr._1();
                    Block r = qr._2();
                    BackendUsage u = new BackendUsage();
                    KnnGraph g = TsneAffinities.knnBlock(q.x, offsets[q.part], q.rows, r.x, offsets[r.part], r.rows,
                            dim, k, n, backend, u);
                    used.add(u);
                    return new Tuple2<>(q.part, g);
                });
                graphs = partial.reduceByKey(new IdPartitioner(parts), TsneAffinities::merge).values();
            }
            // conditional P, then the transposed entries to the partitions that own their rows
            // partition p of graphs holds block p's rows (map keeps partitions; reduceByKey routes key p to p)
            JavaRDD<Piece> own = graphs.mapPartitionsWithIndex((p, it) -> {
                List<Piece> out = new ArrayList<>();
                BackendUsage u = new BackendUsage();
                while (it.hasNext()) {
                    KnnGraph g = it.next();
                    out.add(new Piece(p, g, TsneAffinities.conditional(g, perplexity, backend, u)));
                }
                used.add(u);
                return out.iterator();
            }, true).persist(StorageLevel.MEMORY_AND_DISK());
            JavaPairRDD<Integer, Piece> pieces = own.flatMapToPair(pc -> pc.split(offsets).iterator());
            JavaRDD<SparseRows> rows = pieces.partitionBy(new IdPartitioner(parts))
                    .mapPartitionsWithIndex((p, it) -> Collections.singletonList(
                            assembleVectors(p, it, offsets, n, k)).iterator(), true)
                    .persist(StorageLevel.MEMORY_AND_DISK());
            rows.count();
            own.unpersist(false);
            if (bx != null) {
                bx.unpersist(false); // not destroy: a lost partition of rows recomputes through it
            }
            BackendUsage usage = new BackendUsage();
            for (BackendUsage u : used.value()) {
                usage.merge(u);
            }
            return new Result(rows, n, offsets, k, usage);
        } finally {
            blocks.unpersist(false);
        }
    }

    /** Either a partition's own rows (graph + p_{j|i}) or incoming entries (row i, column j, p_{i|j}). */
    static final class Piece implements Serializable {
        private static final long serialVersionUID = 1L;
        final int part; // own: its partition
        final KnnGraph graph; // own
        final double[] pcond; // own
        final int[] row; // incoming: global row
        final int[] col;
        final double[] val;

        Piece(int part, KnnGraph graph, double[] pcond) {
            this.part = part;
            this.graph = graph;
            this.pcond = pcond;
            this.row = null;
            this.col = null;
            this.val = null;
        }

        Piece(int[] row, int[] col, double[] val) {
            this.part = -1;
            this.graph = null;
            this.pcond = null;
            this.row = row;
            this.col = col;
            this.val = val;
        }

        /** This own piece to its partition, and its transposed entries grouped by the partition of their row. */
        List<Tuple2<Integer, Piece>> split(int[] offsets) {
            final int parts = offsets.length - 1;
            final int k = graph.k;
            int[] counts = new int[parts];
            int[] target = new int[graph.index.length];
            for (int e = 0; e < graph.index.length; e++) {
                int p = partitionOf(offsets, graph.index[e]);
                target[e] = p;
                counts[p]++;
            }
            int[][] rs = new int[parts][];
            int[][] cs = new int[parts][];
            double[][] vs = new double[parts][];
            for (int p = 0; p < parts; p++) {
                if (counts[p] > 0) {
                    rs[p] = new int[counts[p]];
                    cs[p] = new int[counts[p]];
                    vs[p] = new double[counts[p]];
                }
            }
            int[] fill = new int[parts];
            for (int e = 0; e < graph.index.length; e++) {
                int p = target[e];
                int at = fill[p]++;
                rs[p][at] = graph.index[e];
                cs[p][at] = graph.rowOffset + e / k;
                vs[p][at] = pcond[e];
            }
            List<Tuple2<Integer, Piece>> out = new ArrayList<>();
            out.add(new Tuple2<>(part, this));
            for (int p = 0; p < parts; p++) {
                if (counts[p] > 0) {
                    out.add(new Tuple2<>(p, new Piece(rs[p], cs[p], vs[p])));
                }
            }
            return out;
        }
    }

    /** The partition whose range holds global row i (the last such one when empty partitions share the offset). */
    static int partitionOf(int[] offsets, int i) {
        int lo = 0;
        int hi = offsets.length - 2;
        while (lo < hi) { // largest p with offsets[p] <= i
            int mid = (lo + hi + 1) >>> 1;
            if (offsets[mid] <= i) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    private static SparseRows assembleVectors(int p, Iterator<Tuple2<Integer, Piece>> it, int[] offsets, int n,
            int k) {
        final int off = offsets[p];
        final int rows = offsets[p + 1] - off;
        KnnGraph g = null;
        double[] pcond = null;
        List<Piece> incoming = new ArrayList<>();
        while (it.hasNext()) {
            Piece pc = it.next()._2();
            if (pc.graph != null) {
                if (pc.graph.rows != rows || pc.graph.rowOffset != off) {
                    throw new IllegalStateException("partition " + p + " (rows [" + off + ", +" + rows
                            + ")) received kNN rows [" + pc.graph.rowOffset + ", +" + pc.graph.rows + ")");
                }
                g = pc.graph;
                pcond = pc.pcond;
            } else {
                incoming.add(pc);
            }
        }
        if (g == null) {
            if (rows > 0) {
                throw new IllegalStateException("partition " + p + " received no kNN rows");
            }
            g = new KnnGraph(n, off, 0, k, new int[0], new float[0]);
            pcond = new double[0];
        }
        int[] inPtr = new int[rows + 1];
        for (Piece pc : incoming) {
            for (int r : pc.row) {
                inPtr[r - off + 1]++;
            }
        }
        for (int r = 0; r < rows; r++) {
            inPtr[r + 1] += inPtr[r];
        }
        int[] fill = Arrays.copyOf(inPtr, rows);
        int[] inCol = new int[inPtr[rows]];
        double[] inVal = new double[inPtr[rows]];
        for (Piece pc : incoming) {
            for (int e = 0; e < pc.row.length; e++) {
                int at = fill[pc.row[e] - off]++;
                inCol[at] = pc.col[e];
                inVal[at] = pc.val[e];
            }
        }
        // columns ascending within each row (each source point contributes once per row)
        long[] keys = new long[16];
        double[] tmp = new double[16];
        for (int r = 0; r < rows; r++) {
            int a = inPtr[r];
            int len = inPtr[r + 1] - a;
            if (len > keys.length) {
                keys = new long[len];
                tmp = new double[len];
            }
            for (int e = 0; e < len; e++) {
                keys[e] = ((long) inCol[a + e] << 32) | e;
                tmp[e] = inVal[a + e];
            }
            Arrays.sort(keys, 0, len);
            for (int e = 0; e < len; e++) {
                inCol[a + e] = (int) (keys[e] >>> 32);
                inVal[a + e] = tmp[(int) keys[e]];
            }
        }
        return JointProbabilities.assemble(n, off, rows, k, g.index, pcond, inPtr, inCol, inVal);
    }

    // ------------------------------------------------------------------------------------------------ edges

    /**
     * Stochastic-graph mode: P from a weighted edge list with columns {@code srcCol}, {@code dstCol} (integer or
     * long point indices in 0..n-1) and {@code weightCol} (numeric, finite, &gt;= 0; null means the column is
     * absent: every edge weighs 1). Semantics as {@link JointProbabilities#fromEdges}: both directions summed,
     * duplicates summed, normalised to sum 1, isolated points allowed (empty rows). Rows are split into
     * {@code edges.rdd().getNumPartitions()} near-equal contiguous ranges.
     *
     * @param n number of points (&gt;= 4; indices must be below it)
     * @throws IllegalArgumentException naming the column for nulls, out-of-range indices, self loops, negative
     *         or non-finite weights; for n &lt; 4 or an all-zero graph
     */
    public static Result fromEdges(Dataset<Row> edges, String srcCol, String dstCol, String weightCol, int n) {
        try {
            return edgesImpl(edges, srcCol, dstCol, weightCol, n);
        } catch (Exception e) {
            throw SparkErrors.unwrap(e);
        }
    }

    private static void checkIndexColumn(StructType schema, String col, String param) {
        int idx = SchemaColumns.index(schema, col, param);
        DataType t = schema.fields()[idx].dataType();
        if (!(t instanceof IntegerType) && !(t instanceof LongType)) {
            throw new IllegalArgumentException(param + ": column '" + col + "' must hold integer point indices "
                    + "(int or bigint), but has type " + t.simpleString());
        }
    }

    private static Result edgesImpl(Dataset<Row> edges, String srcCol, String dstCol, String weightCol, int n) {
        StructType schema = edges.schema();
        checkIndexColumn(schema, srcCol, "srcCol");
        checkIndexColumn(schema, dstCol, "dstCol");
        boolean weighted = weightCol != null;
        if (weighted) {
            SchemaColumns.numeric(schema, weightCol, "weightCol");
        }
        TsneConfig.checkPoints(n);
        final int parts = Math.max(1, edges.rdd().getNumPartitions());
        final int[] offsets = new int[parts + 1];
        for (int p = 0; p <= parts; p++) {
            offsets[p] = (int) ((long) p * n / parts);
        }
        Dataset<Row> sel = weighted ? edges.select(srcCol, dstCol, weightCol) : edges.select(srcCol, dstCol);
        final String wName = weightCol;
        JavaPairRDD<Integer, Piece> pieces = sel.javaRDD().mapPartitions(it -> {
            int[][] rs = new int[parts][];
            int[][] cs = new int[parts][];
            double[][] vs = new double[parts][];
            int[] cnt = new int[parts];
            while (it.hasNext()) {
                Row row = it.next();
                if (row.isNullAt(0) || row.isNullAt(1)) {
                    throw new IllegalArgumentException((row.isNullAt(0) ? "srcCol '" + srcCol : "dstCol '" + dstCol)
                            + "' contains a null; every edge needs both endpoints");
                }
                long a = ((Number) row.get(0)).longValue();
                long b = ((Number) row.get(1)).longValue();
                double w = 1.0;
                if (weighted) {
                    if (row.isNullAt(2)) {
                        throw new IllegalArgumentException("weightCol '" + wName + "' contains a null");
                    }
                    w = ((Number) row.get(2)).doubleValue();
                }
                JointProbabilities.checkEdge(n, a, b, w, "edge (" + srcCol + ", " + dstCol
                        + (weighted ? ", " + wName : "") + ")");
                for (int dir = 0; dir < 2; dir++) {
                    int r = (int) (dir == 0 ? a : b);
                    int c = (int) (dir == 0 ? b : a);
                    int p = partitionOf(offsets, r);
                    if (rs[p] == null) {
                        rs[p] = new int[16];
                        cs[p] = new int[16];
                        vs[p] = new double[16];
                    } else if (cnt[p] == rs[p].length) {
                        rs[p] = Arrays.copyOf(rs[p], 2 * cnt[p]);
                        cs[p] = Arrays.copyOf(cs[p], 2 * cnt[p]);
                        vs[p] = Arrays.copyOf(vs[p], 2 * cnt[p]);
                    }
                    rs[p][cnt[p]] = r;
                    cs[p][cnt[p]] = c;
                    vs[p][cnt[p]++] = w;
                }
            }
            List<Tuple2<Integer, Piece>> out = new ArrayList<>();
            for (int p = 0; p < parts; p++) {
                if (cnt[p] > 0) {
                    out.add(new Tuple2<>(p, new Piece(Arrays.copyOf(rs[p], cnt[p]), Arrays.copyOf(cs[p], cnt[p]),
                            Arrays.copyOf(vs[p], cnt[p]))));
                }
            }
            return out.iterator();
        }).mapToPair(t -> t);
        JavaRDD<JointProbabilities.EdgeRows> sums = pieces.partitionBy(new IdPartitioner(parts))
                .mapPartitionsWithIndex((p, it) -> {
                    List<int[]> ra = new ArrayList<>();
                    List<int[]> ca = new ArrayList<>();
                    List<double[]> va = new ArrayList<>();
                    int total = 0;
                    while (it.hasNext()) {
                        Piece pc = it.next()._2();
                        ra.add(pc.row);
                        ca.add(pc.col);
                        va.add(pc.val);
                        total += pc.row.length;
                    }
                    int[] a = new int[total];
                    int[] b = new int[total];
                    double[] w = new double[total];
                    int at = 0;
                    for (int i = 0; i < ra.size(); i++) {
                        System.arraycopy(ra.get(i), 0, a, at, ra.get(i).length);
                        System.arraycopy(ca.get(i), 0, b, at, ca.get(i).length);
                        System.arraycopy(va.get(i), 0, w, at, va.get(i).length);
                        at += ra.get(i).length;
                    }
                    return Collections.singletonList(JointProbabilities.edgeRows(n, offsets[p], offsets[p + 1] - offsets[p],
                            a, b, w, false)).iterator();
                }, true)
                .persist(StorageLevel.MEMORY_AND_DISK());
        try {
            BigDecimal total = BigDecimal.ZERO;
            for (BigDecimal t : sums.map(er -> er.total).collect()) {
                total = total.add(t);
            }
            if (total.signum() == 0) {
                throw new IllegalArgumentException("all edge weights are 0 (or there are no edges); the graph has no "
                        + "affinity to normalise");
            }
            final double t = total.doubleValue();
            JavaRDD<SparseRows> rows = sums.map(er -> er.normalised(t)).persist(StorageLevel.MEMORY_AND_DISK());
            rows.count();
            return new Result(rows, n, offsets, 0);
        } finally {
            sums.unpersist(false);
        }
    }
}
