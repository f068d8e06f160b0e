package io.sparkgpu.spark;

import io.sparkgpu.common.Features;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.InputAdapter;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Packs a features column (ml Vector, dense or sparse, or an array of any numeric type) and an optional numeric
 * weight column of every partition into one {@link FeatureBlock} of primitive arrays, without creating
 * {@link org.apache.spark.sql.Row} or {@link org.apache.spark.ml.linalg.Vector} objects. The values are the
 * same bits as the Row path ({@link Features#read} and {@link Features#readWeight}: ints, longs and floats
 * widened to double, decimals through {@code BigDecimal.doubleValue()}, sparse vectors expanded with +0.0), with
 * the same errors naming the column, and each partition gives exactly one block (n = 0 for an empty one).
 *
 * <p>Which path runs ({@link #path}):
 * <ul>
 * <li>{@link Path#COLUMNAR} when the physical plan of {@code df.select(features[, weight])} is a
 * {@code ColumnarToRowExec} (inside whole-stage codegen or not, optionally under a {@code ProjectExec} of plain
 * column references) over a columnar source: Parquet or ORC scans with the vectorized reader (in Spark 4 also
 * for nested arrays and structs, so Parquet vector columns too; ORC keeps no ml vector type, its struct is rejected
 * by the schema check like before), or an in-memory cache whose serializer outputs
 * columnar batches (the default serializer does so only for flat primitive columns, so a cached vector or
 * array column is read as rows). The {@code ColumnarBatch}es of the source's {@code executeColumnar()} are
 * read column by column; arrays of doubles are copied in bulk.</li>
 * <li>{@link Path#ROWS} in every other case (cached data, local relations, computed columns, joins, adaptive
 * plans, ...): the {@code InternalRow}s of {@code queryExecution().toRdd()}; arrays of doubles in
 * {@code UnsafeArrayData} are copied with one {@code Platform.copyMemory}, other arrays element by element
 * through the primitive getters (no boxing).</li>
 * </ul>
 * Rows and batches may be reused buffers: values are copied out at once. The output arrays grow geometrically
 * and are trimmed to exactly n * d and n values at the end of the partition.
 *
 * <p>Checks, in the order of the Row path for each row: null features, null array elements, empty vectors,
 * vectors of different sizes within a partition (and malformed sparse vectors), then the caller's
 * {@link PointCheck} on the packed point (non-finite values, -0.0, normalisation: the caller's rule), then the
 * weight (null, negative or non-finite). Errors are IllegalArgumentExceptions thrown in the task; the driver
 * sees them wrapped in a SparkException ({@link io.sparkgpu.common.SparkErrors#unwrap} finds them).
 *
 * <p>A caller may pass {@link ChunkSinks} to see each partition's values while the partition is still being packed
 * (e.g. to copy them to a GPU meanwhile, {@link ResidentBlockSink}): its {@link ChunkSink} gets every full chunk as
 * soon as the next point needs a new one, then the finished block, and is closed when the task is done with it,
 * also after an error. The block is the same with or without a sink.
 *
 * <p>Relies on Spark internals (stable across 3.x and 4.x but not public API): the internal form of VectorUDT
 * (struct type: byte, size: int, indices: array&lt;int&gt;, values: array&lt;double&gt;), the UnsafeArrayData
 * layout (8-byte count, null bits, values), and the physical operator classes named above.
 */
public final class FeatureIngest {
    /** Most values one block can hold (a Java array). */
    static final long MAX_VALUES = Integer.MAX_VALUE - 16;
    /** Values per chunk while packing a partition (16 MiB); tests lower it to exercise several chunks. */
    static long CHUNK_VALUES = 1L << 21;

    /** Validates (and may normalise) the point {@code x[off, off + d)} in place; throws IllegalArgumentException naming the column. */
    public interface PointCheck extends Serializable {
        void check(double[] x, int off, int d);
    }

    /**
     * Sees one partition's packed values while the partition is packed, on the task's thread. The packer fills
     * chunks of at most {@link #CHUNK_VALUES} values (at least one point); when a chunk is full and the next point
     * needs room, {@link #chunk} gets it, in order, so the chunks are the points {@code [0, p)} for some p. Then
     * {@link #finish} gets the whole block and p (the points it holds beyond p, the last chunk, were never passed
     * as a chunk: a sink takes them from the block), also for an empty partition. {@link #close} is called exactly
     * once, last, whether packing succeeded or failed (a validation error may come after some chunks). The arrays
     * handed over are the packer's and the block's: a sink reads them during the call (they do not change
     * afterwards either) and never writes them. An exception thrown by a sink fails the task.
     */
    public interface ChunkSink extends AutoCloseable {
        /**
         * Points {@code [first, first + points)} of the partition: coordinates {@code x[0, points * d)} (row-major)
         * and weights {@code w[0, points)}; the arrays may be longer.
         */
        void chunk(double[] x, double[] w, int first, int points, int d);

        /** The finished block; its points {@code [0, passed)} were handed to {@link #chunk} before. */
        void finish(FeatureBlock block, int passed);

        /** Releases what the sink holds; called once, after {@link #finish} or after a failure. */
        @Override
        void close();
    }

    /** Opens the {@link ChunkSink} of a partition in its task ({@code null}: none); shipped to the tasks. */
    @FunctionalInterface
    public interface ChunkSinks extends Serializable {
        ChunkSink open(int partition);
    }

    /** How {@link #read} gets at the values (see the class comment). */
    public enum Path {
        ROWS, COLUMNAR
    }

    private FeatureIngest() {
    }

    // ---------------------------------------------------------------- value kinds

    static final int VECTOR = 0;
    static final int DOUBLE = 1;
    static final int FLOAT = 2;
    static final int INT = 3;
    static final int LONG = 4;
    static final int SHORT = 5;
    static final int BYTE = 6;
    static final int DECIMAL = 7;

    private static int numericKind(DataType t) {
        if (t instanceof DoubleType) {
            return DOUBLE;
        } else if (t instanceof FloatType) {
            return FLOAT;
        } else if (t instanceof IntegerType) {
            return INT;
        } else if (t instanceof LongType) {
            return LONG;
        } else if (t instanceof ShortType) {
            return SHORT;
        } else if (t instanceof ByteType) {
            return BYTE;
        } else if (t instanceof DecimalType) {
            return DECIMAL;
        }
        throw new IllegalArgumentException("unsupported numeric type " + t.simpleString());
    }

    /**
     * The value of numeric column {@code i} (of type {@code t}: byte, short, int, long, float, double or decimal) of an
     * internal row as a double, as {@code ((Number) row.get(i)).doubleValue()} gives it for the external {@code Row}.
     */
    public static double numberAt(InternalRow r, int i, DataType t) {
        switch (numericKind(t)) {
            case DOUBLE:
                return r.getDouble(i);
            case FLOAT:
                return r.getFloat(i);
            case INT:
                return r.getInt(i);
            case LONG:
                return r.getLong(i);
            case SHORT:
                return r.getShort(i);
            case BYTE:
                return r.getByte(i);
            default:
                DecimalType d = (DecimalType) t;
                return r.getDecimal(i, d.precision(), d.scale()).toJavaBigDecimal().doubleValue();
        }
    }

    /** What to read: the kinds, decimal precision/scale, names and the caller's check (shipped to the tasks). */
    static final class Spec implements Serializable {
        private static final long serialVersionUID = 1L;
        final String featuresCol;
        final String weightCol; // null: all weights 1
        final int featureKind; // VECTOR or the array element kind
        final boolean elementsNullable;
        final int elemPrecision;
        final int elemScale;
        final int weightKind;
        final int weightPrecision;
        final int weightScale;
        final PointCheck check;

        Spec(StructType schema, String featuresCol, String weightCol, PointCheck check) {
            this.featuresCol = featuresCol;
            this.weightCol = weightCol;
            this.check = check;
            DataType ft = schema.fields()[Features.checkFeatures(schema, featuresCol)].dataType();
            if (ft.equals(SQLDataTypes.VectorType())) {
                featureKind = VECTOR;
                elementsNullable = false;
                elemPrecision = 0;
                elemScale = 0;
            } else {
                ArrayType at = (ArrayType) ft;
                featureKind = numericKind(at.elementType());
                elementsNullable = at.containsNull();
                elemPrecision = at.elementType() instanceof DecimalType ? ((DecimalType) at.elementType()).precision() : 0;
                elemScale = at.elementType() instanceof DecimalType ? ((DecimalType) at.elementType()).scale() : 0;
            }
            if (weightCol == null) {
                weightKind = -1;
                weightPrecision = 0;
                weightScale = 0;
            } else {
                DataType wt = schema.fields()[Features.checkWeight(schema, weightCol)].dataType();
                weightKind = numericKind(wt);
                weightPrecision = wt instanceof DecimalType ? ((DecimalType) wt).precision() : 0;
                weightScale = wt instanceof DecimalType ? ((DecimalType) wt).scale() : 0;
            }
        }
    }

    // ---------------------------------------------------------------- entry points

    /**
     * Checks that {@code featuresCol} is a vector or numeric array column and {@code weightColOrNull} (when not
     * null or empty) a numeric column of {@code schema}, with the errors of {@link Features#checkFeatures} and
     * {@link Features#checkWeight}.
     */
    public static void checkSchema(StructType schema, String featuresCol, String weightColOrNull) {
        new Spec(schema, featuresCol, blankToNull(weightColOrNull), null);
    }

    /**
     * One {@link FeatureBlock} per partition of {@code df} (in partition order, lazily: errors surface when an
     * action runs). Schema errors are thrown here. {@code check} may be null (no per-point check).
     */
    public static JavaRDD<FeatureBlock> read(Dataset<?> df, String featuresCol, String weightColOrNull, PointCheck check) {
        return read(df, featuresCol, weightColOrNull, check, null);
    }

    /**
     * {@link #read}, handing each partition's chunks to the sink {@code sinks} opens for it in the task (see
     * {@link ChunkSink}); {@code sinks} may be null (no sink).
     */
    public static JavaRDD<FeatureBlock> read(Dataset<?> df, String featuresCol, String weightColOrNull, PointCheck check,
                                             ChunkSinks sinks) {
        String weightCol = blankToNull(weightColOrNull);
        Spec spec = new Spec(df.schema(), featuresCol, weightCol, check);
        Dataset<?> sel = select(df, featuresCol, weightCol);
        Source src = columnarSource(sel);
        if (src != null) {
            int fOrd = src.ordinals[0];
            int wOrd = weightCol == null ? -1 : src.ordinals[1];
            RDD<ColumnarBatch> batches = src.plan.executeColumnar();
            return batches.toJavaRDD().mapPartitionsWithIndex(
                    (pid, it) -> one(packBatches(spec, pid, it, fOrd, wOrd, open(sinks, pid))), true);
        }
        RDD<InternalRow> rows = sel.queryExecution().toRdd();
        return rows.toJavaRDD().mapPartitionsWithIndex((pid, it) -> one(packRows(spec, pid, it, open(sinks, pid))), true);
    }

    /** The path {@link #read} takes for these arguments. */
    public static Path path(Dataset<?> df, String featuresCol, String weightColOrNull) {
        String weightCol = blankToNull(weightColOrNull);
        checkSchema(df.schema(), featuresCol, weightCol);
        return columnarSource(select(df, featuresCol, weightCol)) != null ? Path.COLUMNAR : Path.ROWS;
    }

    private static String blankToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    private static ChunkSink open(ChunkSinks sinks, int partition) {
        return sinks == null ? null : sinks.open(partition);
    }

    private static Iterator<FeatureBlock> one(FeatureBlock b) {
        return List.of(b).iterator();
    }

    private static Dataset<?> select(Dataset<?> df, String featuresCol, String weightCol) {
        Column f = df.col(quote(featuresCol));
        return weightCol == null ? df.select(f) : df.select(f, df.col(quote(weightCol)));
    }

    private static String quote(String name) {
        return "`" + name.replace("`", "``") + "`";
    }

    // ---------------------------------------------------------------- choosing the columnar source

    /** A plan that produces ColumnarBatches and where our columns are in them. */
    static final class Source {
        final SparkPlan plan;
        final int[] ordinals;

        Source(SparkPlan plan, int[] ordinals) {
            this.plan = plan;
            this.ordinals = ordinals;
        }
    }

    /** The columnar child of the ColumnarToRowExec that feeds {@code sel}, or null when unsure. */
    static Source columnarSource(Dataset<?> sel) {
        try {
            SparkPlan top = sel.queryExecution().executedPlan();
            List<Attribute> want = new ArrayList<>(CollectionConverters.asJava(top.output()));
            SparkPlan p = unwrap(top);
            if (p instanceof ProjectExec) {
                List<Attribute> mapped = new ArrayList<>();
                for (NamedExpression e : CollectionConverters.asJava(((ProjectExec) p).projectList())) {
                    if (!(e instanceof AttributeReference)) {
                        return null; // a computed column: read the projected rows
                    }
                    mapped.add((Attribute) e);
                }
                want = mapped;
                p = unwrap(((ProjectExec) p).child());
            }
            if (!(p instanceof ColumnarToRowExec)) {
                return null;
            }
            SparkPlan src = unwrap(((ColumnarToRowExec) p).child());
            if (!src.supportsColumnar()) {
                return null;
            }
            List<Attribute> out = CollectionConverters.asJava(src.output());
            int[] ord = new int[want.size()];
            for (int k = 0; k < ord.length; k++) {
                ord[k] = -1;
                for (int i = 0; i < out.size(); i++) {
                    if (out.get(i).exprId().equals(want.get(k).exprId())) {
                        ord[k] = i;
                        break;
                    }
                }
                if (ord[k] < 0 || !out.get(ord[k]).dataType().sameType(want.get(k).dataType())) {
                    return null;
                }
            }
            return new Source(src, ord);
        } catch (RuntimeException | LinkageError e) {
            return null; // a Spark whose operators differ: the row path always works
        }
    }

    private static SparkPlan unwrap(SparkPlan p) {
        while (true) {
            if (p instanceof WholeStageCodegenExec) {
                p = ((WholeStageCodegenExec) p).child();
            } else if (p instanceof InputAdapter) {
                p = ((InputAdapter) p).child();
            } else {
                return p;
            }
        }
    }

    // ---------------------------------------------------------------- packing

    /** Growing output of one partition. */
    static final class Packer {
        final Spec spec;
        final int partition;
        final ChunkSink sink; // null: none
        double[] x = new double[0];
        double[] w = new double[0];
        int n;
        int d = -1;
        int cap; // points x and w can hold

        Packer(Spec spec, int partition, ChunkSink sink) {
            this.spec = spec;
            this.partition = partition;
            this.sink = sink;
        }

        /** Makes room for one more point of size {@code len}; returns its offset in x. */
        int begin(int len) {
            if (d < 0) {
                if (len == 0) {
                    throw Features.emptyVectors(spec.featuresCol);
                }
                d = len;
            } else if (len != d) {
                throw Features.differentSizes(spec.featuresCol, d, len);
            }
            if (n == cap) {
                grow();
            }
            return (n - base) * d;
        }

        /**
         * Full chunks of points (x and w); the current chunk is {@link #x}/{@link #w}. Chunks grow to
         * {@link #CHUNK_VALUES} values and are never copied until {@link #finish} joins them once, so packing
         * copies each value twice (into a chunk, into the block) instead of about four times with doubling arrays.
         * A full chunk is final (its points have passed their checks) and goes to the {@link #sink} at once.
         */
        private final java.util.List<double[]> doneX = new java.util.ArrayList<>();
        private final java.util.List<double[]> doneW = new java.util.ArrayList<>();
        private int base; // points in the full chunks

        private void grow() {
            long maxPoints = MAX_VALUES / d;
            if (n >= maxPoints) {
                throw new IllegalArgumentException("featuresCol '" + spec.featuresCol + "': partition " + partition
                        + " holds more than " + MAX_VALUES + " values (" + n + " points of size " + d
                        + "); use more partitions");
            }
            int local = n - base;
            int chunkPoints = (int) Math.max(1, CHUNK_VALUES / d);
            if (local < chunkPoints) { // grow the current chunk up to the chunk size (small partitions stay small)
                int want = cap == 0 ? Math.max(16, (1 << 16) / d) : 2 * local;
                int c = (int) Math.min(Math.min(want, chunkPoints), maxPoints - base);
                x = Arrays.copyOf(x, c * d);
                w = Arrays.copyOf(w, c);
                cap = base + c;
                return;
            }
            if (sink != null) {
                sink.chunk(x, w, base, local, d);
            }
            doneX.add(x);
            doneW.add(w);
            base = n;
            int c = (int) Math.min(chunkPoints, maxPoints - base);
            x = new double[c * d];
            w = new double[c];
            cap = base + c;
        }

        /** Finishes the point begun last: the caller's check, then its weight. */
        void end(double weight) {
            if (spec.check != null) {
                spec.check.check(x, (n - base) * d, d);
            }
            w[n++ - base] = weight;
        }

        FeatureBlock finish() {
            FeatureBlock b = join();
            if (sink != null) {
                sink.finish(b, base);
            }
            return b;
        }

        private FeatureBlock join() {
            if (n == 0) {
                return new FeatureBlock(new double[0], new double[0], 0, 0, partition);
            }
            double[] xs;
            double[] ws;
            int local = n - base;
            if (doneX.isEmpty()) {
                xs = x.length == local * d ? x : Arrays.copyOf(x, local * d);
                ws = w.length == local ? w : Arrays.copyOf(w, local);
            } else {
                xs = new double[n * d];
                ws = new double[n];
                int at = 0;
                for (int i = 0; i < doneX.size(); i++) {
                    double[] cw = doneW.get(i);
                    System.arraycopy(doneX.get(i), 0, xs, at * d, cw.length * d);
                    System.arraycopy(cw, 0, ws, at, cw.length);
                    at += cw.length;
                }
                System.arraycopy(x, 0, xs, at * d, local * d);
                System.arraycopy(w, 0, ws, at, local);
                doneX.clear();
                doneW.clear();
            }
            x = null;
            w = null;
            return new FeatureBlock(xs, ws, n, d, partition);
        }
    }

    /** Packs the rows, handing chunks to {@code sink} (may be null), which is closed before this returns or throws. */
    static FeatureBlock packRows(Spec spec, int partition, Iterator<InternalRow> rows, ChunkSink sink) {
        try (ChunkSink s = sink) {
            return packRows(new Packer(spec, partition, s), rows);
        }
    }

    private static FeatureBlock packRows(Packer pk, Iterator<InternalRow> rows) {
        Spec spec = pk.spec;
        boolean weighted = spec.weightCol != null;
        while (rows.hasNext()) {
            InternalRow r = rows.next();
            if (r.isNullAt(0)) {
                throw Features.nullFeatures(spec.featuresCol);
            }
            if (spec.featureKind == VECTOR) {
                readVector(pk, r.getStruct(0, 4));
            } else {
                readArray(pk, r.getArray(0));
            }
            double wt = 1.0;
            if (weighted) {
                if (r.isNullAt(1)) {
                    throw Features.nullWeight(spec.weightCol);
                }
                wt = Features.checkWeightValue(weightOf(r, spec), spec.weightCol);
            }
            pk.end(wt);
        }
        return pk.finish();
    }

    /** Packs the batches, handing chunks to {@code sink} (may be null), which is closed before this returns or throws. */
    static FeatureBlock packBatches(Spec spec, int partition, Iterator<ColumnarBatch> batches, int fOrd, int wOrd,
                                    ChunkSink sink) {
        try (ChunkSink s = sink) {
            return packBatches(new Packer(spec, partition, s), batches, fOrd, wOrd);
        }
    }

    private static FeatureBlock packBatches(Packer pk, Iterator<ColumnarBatch> batches, int fOrd, int wOrd) {
        Spec spec = pk.spec;
        while (batches.hasNext()) {
            ColumnarBatch b = batches.next();
            ColumnVector fv = b.column(fOrd);
            ColumnVector wv = wOrd < 0 ? null : b.column(wOrd);
            int rows = b.numRows();
            for (int i = 0; i < rows; i++) {
                if (fv.isNullAt(i)) {
                    throw Features.nullFeatures(spec.featuresCol);
                }
                if (spec.featureKind == VECTOR) {
                    readVector(pk, fv.getStruct(i));
                } else {
                    readArray(pk, fv.getArray(i));
                }
                double wt = 1.0;
                if (wv != null) {
                    if (wv.isNullAt(i)) {
                        throw Features.nullWeight(spec.weightCol);
                    }
                    wt = Features.checkWeightValue(weightOf(wv, i, spec), spec.weightCol);
                }
                pk.end(wt);
            }
        }
        return pk.finish();
    }

    /** A VectorUDT value in its internal form (type, size, indices, values). */
    private static void readVector(Packer pk, InternalRow v) {
        ArrayData values = v.getArray(3);
        if (v.getByte(0) == 1) { // dense
            int len = values.numElements();
            int off = pk.begin(len);
            copyDoubles(values, len, pk.x, off);
            return;
        }
        int size = v.getInt(1);
        ArrayData indices = v.getArray(2);
        int nnz = indices.numElements();
        if (size < 0 || nnz != values.numElements() || nnz > size) {
            throw badSparse(pk, "size " + size + " with " + nnz + " indices and " + values.numElements() + " values");
        }
        int off = pk.begin(size);
        Arrays.fill(pk.x, off, off + size, 0.0);
        int prev = -1;
        for (int k = 0; k < nnz; k++) {
            int j = indices.getInt(k);
            if (j <= prev || j >= size) {
                throw badSparse(pk, "index " + j + (j <= prev ? " follows " + prev : " out of bounds for size " + size));
            }
            pk.x[off + j] = values.getDouble(k);
            prev = j;
        }
    }

    private static IllegalArgumentException badSparse(Packer pk, String what) {
        return new IllegalArgumentException("featuresCol '" + pk.spec.featuresCol + "' contains an invalid sparse vector ("
                + what + ")");
    }

    private static void readArray(Packer pk, ArrayData a) {
        Spec s = pk.spec;
        int len = a.numElements();
        if (s.elementsNullable && hasNull(a, len)) {
            throw Features.nullElement(s.featuresCol);
        }
        int off = pk.begin(len);
        double[] x = pk.x;
        switch (s.featureKind) {
            case DOUBLE:
                copyDoubles(a, len, x, off);
                break;
            case FLOAT:
                if (a instanceof ColumnarArray) {
                    float[] f = a.toFloatArray();
                    for (int i = 0; i < len; i++) {
                        x[off + i] = f[i];
                    }
                } else {
                    for (int i = 0; i < len; i++) {
                        x[off + i] = a.getFloat(i);
                    }
                }
                break;
            case INT:
                for (int i = 0; i < len; i++) {
                    x[off + i] = a.getInt(i);
                }
                break;
            case LONG:
                for (int i = 0; i < len; i++) {
                    x[off + i] = a.getLong(i);
                }
                break;
            case SHORT:
                for (int i = 0; i < len; i++) {
                    x[off + i] = a.getShort(i);
                }
                break;
            case BYTE:
                for (int i = 0; i < len; i++) {
                    x[off + i] = a.getByte(i);
                }
                break;
            case DECIMAL:
                for (int i = 0; i < len; i++) {
                    x[off + i] = a.getDecimal(i, s.elemPrecision, s.elemScale).toJavaBigDecimal().doubleValue();
                }
                break;
            default:
                throw new IllegalStateException("feature kind " + s.featureKind);
        }
    }

    /** Copies {@code len} doubles of {@code a} (no nulls) to {@code dst[off...]}, in bulk where the layout allows. */
    static void copyDoubles(ArrayData a, int len, double[] dst, int off) {
        if (a instanceof UnsafeArrayData) {
            UnsafeArrayData u = (UnsafeArrayData) a;
            Platform.copyMemory(u.getBaseObject(), u.getBaseOffset() + UnsafeArrayData.calculateHeaderPortionInBytes(len),
                    dst, Platform.DOUBLE_ARRAY_OFFSET + 8L * off, 8L * len);
        } else if (a instanceof ColumnarArray) {
            System.arraycopy(a.toDoubleArray(), 0, dst, off, len);
        } else {
            for (int i = 0; i < len; i++) {
                dst[off + i] = a.getDouble(i);
            }
        }
    }

    /** Whether any of the {@code len} elements is null (for UnsafeArrayData: one look at each word of null bits). */
    static boolean hasNull(ArrayData a, int len) {
        if (a instanceof UnsafeArrayData) {
            UnsafeArrayData u = (UnsafeArrayData) a;
            Object base = u.getBaseObject();
            long bits = u.getBaseOffset() + 8;
            for (int k = 0, words = (len + 63) / 64; k < words; k++) {
                if (Platform.getLong(base, bits + 8L * k) != 0) {
                    return true;
                }
            }
            return false;
        }
        for (int i = 0; i < len; i++) {
            if (a.isNullAt(i)) {
                return true;
            }
        }
        return false;
    }

    private static double weightOf(InternalRow r, Spec s) {
        switch (s.weightKind) {
            case DOUBLE:
                return r.getDouble(1);
            case FLOAT:
                return r.getFloat(1);
            case INT:
                return r.getInt(1);
            case LONG:
                return r.getLong(1);
            case SHORT:
                return r.getShort(1);
            case BYTE:
                return r.getByte(1);
            case DECIMAL:
                return r.getDecimal(1, s.weightPrecision, s.weightScale).toJavaBigDecimal().doubleValue();
            default:
                throw new IllegalStateException("weight kind " + s.weightKind);
        }
    }

    private static double weightOf(ColumnVector v, int i, Spec s) {
        switch (s.weightKind) {
            case DOUBLE:
                return v.getDouble(i);
            case FLOAT:
                return v.getFloat(i);
            case INT:
                return v.getInt(i);
            case LONG:
                return v.getLong(i);
            case SHORT:
                return v.getShort(i);
            case BYTE:
                return v.getByte(i);
            case DECIMAL:
                return v.getDecimal(i, s.weightPrecision, s.weightScale).toJavaBigDecimal().doubleValue();
            default:
                throw new IllegalStateException("weight kind " + s.weightKind);
        }
    }
}
