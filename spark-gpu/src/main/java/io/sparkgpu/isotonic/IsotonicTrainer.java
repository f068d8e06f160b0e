package io.sparkgpu.isotonic;

import io.sparkgpu.common.SparkErrors;
import java.io.Serializable;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;
import scala.Tuple2;

/**
 * Distributed isotonic regression with bounded driver memory.
 *
 * <ol>
 *   <li>One pass validates every row (errors name the column or parameter) and takes the bounds that fix the
 *       exact fixed-point scales ({@link IsoScales}).</li>
 *   <li>{@code increasing=auto} only: the sign of Spearman's rho from two range-partitioned sorts (x, then y)
 *       with exact integer rank sums; two extra shuffles.</li>
 *   <li>The rows are range-partitioned by feature (equal features share a partition), and each partition is
 *       read into primitive arrays, radix-sorted, pooled ({@link IsoPoints}) and solved on the GPU or its CPU
 *       twin ({@link IsotonicSolver#solveRows}: least squares with PAVA sorts and pools on the GPU too; L1:
 *       {@link L1Blocks}).</li>
 *   <li>Partition solutions are merged pairwise in a tree by the decomposition theorem (ceil(log2 P) shuffle
 *       rounds, each merge holding two neighbours' blocks); only the final blocks, in compact form, reach the
 *       driver, which builds the model.</li>
 * </ol>
 * Cost: O(n) per partition for sorting, pooling and PAVA (MLS: O(n_p^2)), O(m log P) for the merges, where m
 * is the number of blocks. All sums are exact integers and all comparisons exact, so the model has the same bits
 * for any number of partitions, any partition boundaries and either backend.
 */
public final class IsotonicTrainer {
    private IsotonicTrainer() {
    }

    /** What the first pass learns (merged over partitions). */
    static final class Stats implements Serializable {
        private static final long serialVersionUID = 1L;
        long rows;
        long positive;
        double maxAbsWY;
        double maxW;

        Stats add(Stats o) {
            rows += o.rows;
            positive += o.positive;
            maxAbsWY = Math.max(maxAbsWY, o.maxAbsWY);
            maxW = Math.max(maxW, o.maxW);
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

        /** (y, x, w) of a row of the selected frame (label, feature, weight); errors name the column. */
        void read(Row r, double[] out) {
            if (r.isNullAt(0)) {
                throw new IllegalArgumentException(cols.label + " contains a null value");
            }
            if (r.isNullAt(1)) {
                throw new IllegalArgumentException(cols.feature + " contains a null value");
            }
            if (r.isNullAt(2)) {
                throw new IllegalArgumentException(cols.weight + " contains a null value");
            }
            out[0] = r.getDouble(0);
            if (vector) {
                Vector v = (Vector) r.get(1);
                if (featureIndex >= v.size()) {
                    throw new IllegalArgumentException("featureIndex " + featureIndex + " is out of range for a vector of size "
                            + v.size() + " in featuresCol '" + featuresCol + "'");
                }
                out[1] = v.apply(featureIndex);
            } else {
                out[1] = r.getDouble(1);
            }
            out[2] = r.getDouble(2);
            IsoPoints.check(out[1], out[0], out[2], cols);
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
        if (featureIndex < 0) {
            throw new IllegalArgumentException("featureIndex must be >= 0, got " + featureIndex);
        }
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
            return run(raw, in, cfg);
        } catch (Exception e) { // Spark's job failures are checked SparkExceptions thrown undeclared
            throw SparkErrors.unwrap(e);
        }
    }

    private static IsotonicResult run(Dataset<Row> raw, Inputs in, IsotonicConfig cfg) {
        Stats st = raw.javaRDD().mapPartitions((Iterator<Row> rows) -> {
            Stats s = new Stats();
            double[] v = new double[3];
            while (rows.hasNext()) {
                in.read(rows.next(), v);
                s.rows++;
                if (v[2] > 0) {
                    s.positive++;
                }
                s.maxAbsWY = Math.max(s.maxAbsWY, Math.abs(v[2] * v[0]));
                s.maxW = Math.max(s.maxW, v[2]);
            }
            return Collections.singletonList(s).iterator();
        }).reduce(Stats::add);
        if (st.rows == 0) {
            throw new IllegalArgumentException("isotonic regression needs at least one row; the input is empty");
        }
        if (st.positive == 0) {
            throw new IllegalArgumentException(in.cols.weight + ": every weight is 0; isotonic regression needs at least "
                    + "one row with a positive weight");
        }
        final IsoScales sc = IsoScales.fromBounds(st.rows, st.maxAbsWY, st.maxW);
        int parts = cfg.numPartitions > 0 ? cfg.numPartitions : Math.max(1, raw.rdd().getNumPartitions());

        Column xExpr = in.vector
                ? org.apache.spark.ml.functions.vector_to_array(raw.col("f"), "float64").getItem(in.featureIndex)
                : raw.col("f");
        Dataset<Row> xyw = raw.select(raw.col("y"), xExpr.as("x"), raw.col("w"));

        final boolean isotonic = cfg.direction == IsotonicConfig.Direction.AUTO
                ? spearmanIncreasing(xyw.select("x", "y"), parts)
                : cfg.direction == IsotonicConfig.Direction.INCREASING;
        final IsotonicConfig c = cfg.copy();
        final IsoColumns cols = in.cols;

        JavaRDD<Row> ranged = xyw.repartitionByRange(parts, xyw.col("x")).javaRDD();
        JavaPairRDD<Integer, Part> level = ranged.mapPartitionsWithIndex((Integer pid, Iterator<Row> rows) -> {
            Doubles xs = new Doubles();
            Doubles ys = new Doubles();
            Doubles ws = new Doubles();
            while (rows.hasNext()) {
                Row r = rows.next();
                ys.add(r.getDouble(0));
                xs.add(r.getDouble(1));
                ws.add(r.getDouble(2));
            }
            IsotonicSolver.Solved p = IsotonicSolver.solveRows(xs.a, ys.a, ws.a, xs.n, !isotonic, sc, cols, c);
            return Collections.singletonList(new Part(pid, p.blocks, p.rows, p.zeroWeightRows, p.gpu)).iterator();
        }, true).mapToPair(p -> new Tuple2<>(p.index, p));

        int count = ranged.getNumPartitions();
        while (count > 1) {
            int next = (count + 1) / 2;
            level = level.mapToPair(t -> new Tuple2<>(t._1() / 2, t._2())).reduceByKey(Part::merge, next);
            count = next;
        }
        List<Done> out = level.values().map(p -> new Done(p.blocks instanceof L1Blocks
                ? FinalBlocks.of((L1Blocks) p.blocks, sc, !isotonic)
                : FinalBlocks.of((L2Blocks) p.blocks, sc, !isotonic), p.rows, p.zeroRows, p.gpu)).collect();
        if (out.size() != 1) {
            throw new IllegalStateException("the merge tree ended with " + out.size() + " ranges instead of one");
        }
        Done d = out.get(0);
        return IsotonicResult.from(d.blocks, isotonic, c.yMin, c.yMax, d.rows, d.zeroRows, d.gpu ? "gpu" : "cpu");
    }

    /** Growable primitive array. */
    static final class Doubles {
        double[] a = new double[1024];
        int n;

        void add(double v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, 2 * n);
            }
            a[n++] = v;
        }
    }

    // ------------------------------------------------------------------ increasing=auto

    /**
     * Sign of Spearman's rho of columns (x, y), distributed: rows sorted by x get doubled average ranks, then
     * sorted by y get theirs; the sum of rank products is an exact integer. Rows of weight 0 count, as in
     * scikit-learn (which ignores weights here).
     */
    static boolean spearmanIncreasing(Dataset<Row> xy, int parts) {
        SparkSession spark = xy.sparkSession();
        JavaRDD<Row> byX = xy.repartitionByRange(parts, xy.col("x")).sortWithinPartitions("x").javaRDD()
                .persist(StorageLevel.MEMORY_AND_DISK());
        JavaRDD<Row> byY = null;
        try {
            long[] offX = offsets(byX);
            JavaRDD<Row> rx = byX.mapPartitionsWithIndex((Integer pid, Iterator<Row> it) -> {
                List<Row> rows = new ArrayList<>();
                it.forEachRemaining(rows::add);
                long[] r = ranks(rows, 0, offX[pid]);
                List<Row> out = new ArrayList<>(rows.size());
                for (int i = 0; i < rows.size(); i++) {
                    out.add(RowFactory.create(rows.get(i).getDouble(1), r[i]));
                }
                return out.iterator();
            }, true);
            StructType s = new StructType().add("y", DataTypes.DoubleType, false).add("rx", DataTypes.LongType, false);
            Dataset<Row> yr = spark.createDataFrame(rx, s);
            byY = yr.repartitionByRange(parts, yr.col("y")).sortWithinPartitions("y").javaRDD()
                    .persist(StorageLevel.MEMORY_AND_DISK());
            long[] offY = offsets(byY);
            long n = offY[offY.length - 1];
            BigInteger sum = byY.mapPartitionsWithIndex((Integer pid, Iterator<Row> it) -> {
                List<Row> rows = new ArrayList<>();
                it.forEachRemaining(rows::add);
                long[] r = ranks(rows, 0, offY[pid]);
                BigInteger acc = BigInteger.ZERO;
                for (int i = 0; i < rows.size(); i++) {
                    acc = acc.add(BigInteger.valueOf(rows.get(i).getLong(1)).multiply(BigInteger.valueOf(r[i])));
                }
                return Collections.singletonList(acc).iterator();
            }, true).reduce(BigInteger::add);
            return Spearman.signOfNumerator(sum, n) >= 0;
        } finally {
            byX.unpersist(false);
            if (byY != null) {
                byY.unpersist(false);
            }
        }
    }

    /** Exclusive prefix sums of the partition sizes, with the total last. */
    private static long[] offsets(JavaRDD<Row> rdd) {
        List<Long> counts = rdd.mapPartitions(it -> {
            long c = 0;
            while (it.hasNext()) {
                it.next();
                c++;
            }
            return Collections.singletonList(c).iterator();
        }).collect();
        long[] off = new long[counts.size() + 1];
        for (int i = 0; i < counts.size(); i++) {
            off[i + 1] = off[i] + counts.get(i);
        }
        return off;
    }

    /** Doubled average 1-based ranks of sorted rows by their double column {@code col}, starting after {@code offset}. */
    private static long[] ranks(List<Row> rows, int col, long offset) {
        int n = rows.size();
        long[] r = new long[n];
        int a = 0;
        while (a < n) {
            double v = rows.get(a).getDouble(col);
            int b = a;
            while (b + 1 < n && rows.get(b + 1).getDouble(col) == v) {
                b++;
            }
            long twice = (offset + a + 1) + (offset + b + 1);
            for (int k = a; k <= b; k++) {
                r[k] = twice;
            }
            a = b + 1;
        }
        return r;
    }
}
