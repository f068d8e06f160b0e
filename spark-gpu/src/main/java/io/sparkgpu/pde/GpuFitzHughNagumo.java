package io.sparkgpu.pde;

import io.sparkgpu.ml.ParamChecks;
import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.ml.Transformer;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A FitzHugh-Nagumo parameter sweep as a Spark ML {@link Transformer}: every row of the input is one parameter set
 * (columns a, eps, gamma, I, D; a column the DataFrame lacks takes the param {@code <name>Value} for every row), and
 * the output is the input plus, per row, the simulation's observables:
 * {@code waveSpeed} (NaN when a probe never fired), {@code pulseCount}, {@code maxV}, {@code propagated},
 * {@code finalTime}, {@code steps}, {@code newtonIterations}, {@code unconvergedSteps}, {@code meanNodes}, the
 * {@code backend} that ran it, and with {@code recordEvery > 0} the space-time field {@code field} (frames x cells,
 * frame-major). There is nothing to fit, so it is a transformer, not an estimator; its params save and load
 * ({@link MLWritable}).
 *
 * <p>Each task simulates all rows of its partition as one batch ({@link FhnStep}: one GPU launch series, or the CPU
 * twin). Simulations are independent and the twins give the same bits, so the output does not depend on the
 * partitioning or on the backend.
 */
public class GpuFitzHughNagumo extends Transformer
        implements GpuFitzHughNagumoParams<GpuFitzHughNagumo>, MLWritable {
    private static final long serialVersionUID = 1L;
    /** The output columns, in order (field only with recordEvery > 0). */
    public static final List<String> OUTPUTS = List.of("waveSpeed", "pulseCount", "maxV", "propagated", "finalTime",
            "steps", "newtonIterations", "unconvergedSteps", "meanNodes", "backend");
    public static final String FIELD = "field";

    private final String uid;
    private final ParamSlots slots = new ParamSlots();

    public GpuFitzHughNagumo() {
        this(Identifiable.randomUID("gpuFhn"));
    }

    public GpuFitzHughNagumo(String uid) {
        this.uid = uid;
        setFhnDefaults();
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    @Override
    public String uid() {
        return uid;
    }

    private List<Param<String>> columnParams() {
        return List.of(aCol(), epsCol(), gammaCol(), currentCol(), diffusionCol());
    }

    /** Index of each per-row parameter's column in {@code schema}, or -1 for the Value param (checked types). */
    private int[] columns(StructType schema) {
        List<Param<String>> ps = columnParams();
        int[] idx = new int[ps.size()];
        List<String> names = Arrays.asList(schema.fieldNames());
        for (int q = 0; q < idx.length; q++) {
            Param<String> p = ps.get(q);
            String col = getOrDefault(p);
            idx[q] = names.indexOf(col);
            if (idx[q] < 0 && isSet(p)) {
                throw new IllegalArgumentException(p.name() + " '" + col + "' is not a column of the input ("
                        + String.join(", ", schema.fieldNames()) + ")");
            }
            if (idx[q] >= 0) {
                DataType t = schema.fields()[idx[q]].dataType();
                if (!(t instanceof NumericType)) {
                    throw new IllegalArgumentException("column '" + col + "' (" + p.name() + ") must be numeric, got "
                            + t.simpleString());
                }
            }
        }
        return idx;
    }

    @Override
    public StructType transformSchema(StructType schema) {
        columns(schema);
        StructType out = schema;
        DataType[] types = {DataTypes.DoubleType, DataTypes.IntegerType, DataTypes.DoubleType, DataTypes.BooleanType,
            DataTypes.DoubleType, DataTypes.LongType, DataTypes.LongType, DataTypes.LongType, DataTypes.DoubleType,
            DataTypes.StringType};
        for (int q = 0; q < OUTPUTS.size(); q++) {
            out = ParamChecks.appendColumn(out, "output column", OUTPUTS.get(q), types[q], false);
        }
        if (getRecordEvery() > 0) {
            out = ParamChecks.appendColumn(out, "output column", FIELD,
                    DataTypes.createArrayType(DataTypes.DoubleType, false), false);
        }
        return out;
    }

    @Override
    public Dataset<Row> transform(Dataset<?> dataset) {
        StructType out = transformSchema(dataset.schema());
        FhnConfig cfg = toConfig().validate();
        int[] cols = columns(dataset.schema());
        List<Param<String>> cps = columnParams();
        String[] colNames = new String[cols.length];
        for (int q = 0; q < cols.length; q++) {
            colNames[q] = getOrDefault(cps.get(q));
        }
        double[] values = {(Double) getOrDefault(aValue()), (Double) getOrDefault(epsValue()),
            (Double) getOrDefault(gammaValue()), (Double) getOrDefault(currentValue()),
            (Double) getOrDefault(diffusionValue())};
        boolean withField = cfg.recordEvery > 0;
        StructType inSchema = dataset.schema();
        DataType[] types = new DataType[cols.length];
        for (int q = 0; q < cols.length; q++) {
            types[q] = cols[q] < 0 ? null : inSchema.fields()[cols[q]].dataType();
        }
        // Spark's internal rows in and out: no Row objects and no conversion of every value to and from Scala's types
        JavaRDD<InternalRow> rows = dataset.toDF().queryExecution().toRdd().toJavaRDD().mapPartitions(it -> {
            List<InternalRow> in = new ArrayList<>();
            while (it.hasNext()) {
                in.add(it.next().copy()); // Spark reuses the row object
            }
            if (in.isEmpty()) {
                return in.iterator();
            }
            FhnParams[] ps = new FhnParams[in.size()];
            for (int j = 0; j < ps.length; j++) {
                ps[j] = rowParams(in.get(j), inSchema, cols, types, colNames, values);
            }
            var ran = FhnStep.run(cfg, ps, 1, false); // observables only: the final state stays on the device
            UTF8String backend = UTF8String.fromString(ran.backend());
            int width = OUTPUTS.size() + (withField ? 1 : 0);
            return new java.util.Iterator<InternalRow>() {
                int j;

                @Override
                public boolean hasNext() {
                    return j < ps.length;
                }

                @Override
                public InternalRow next() {
                    if (j >= ps.length) {
                        throw new java.util.NoSuchElementException();
                    }
                    FhnResult r = ran.value[j];
                    Object[] o = new Object[width];
                    o[0] = r.waveSpeed;
                    o[1] = r.pulseCount;
                    o[2] = r.maxV;
                    o[3] = r.propagated;
                    o[4] = r.finalTime;
                    o[5] = r.steps;
                    o[6] = r.newtonIterations;
                    o[7] = r.unconvergedSteps;
                    o[8] = r.meanNodes;
                    o[9] = backend;
                    if (withField) {
                        o[10] = UnsafeArrayData.fromPrimitiveArray(r.field);
                    }
                    InternalRow row = new JoinedRow(in.get(j), new GenericInternalRow(o));
                    in.set(j, null);
                    ran.value[j++] = null;
                    return row;
                }
            };
        }, true);
        return ((org.apache.spark.sql.classic.SparkSession) dataset.sparkSession())
                .internalCreateDataFrame(rows.rdd(), out, false);
    }

    /** The rule of each per-row parameter, in the order of {@link #columnParams()}. */
    private static final java.util.function.DoubleConsumer[] RULES = {FhnParams::checkA, FhnParams::checkEps,
        FhnParams::checkGamma, FhnParams::checkCurrent, FhnParams::checkDiffusion};

    /**
     * The parameters of one (internal) row; a null or a value breaking its parameter's rule is an error naming the
     * column and showing the row as Spark's {@code Row} prints it.
     */
    static FhnParams rowParams(InternalRow row, StructType schema, int[] cols, DataType[] types, String[] names,
                               double[] values) {
        double[] v = new double[5];
        for (int q = 0; q < 5; q++) {
            if (cols[q] < 0) {
                v[q] = values[q];
            } else if (row.isNullAt(cols[q])) {
                throw new IllegalArgumentException("column '" + names[q] + "' must not be null (row "
                        + describe(row, schema) + ")");
            } else {
                v[q] = io.sparkgpu.spark.FeatureIngest.numberAt(row, cols[q], types[q]);
                try {
                    RULES[q].accept(v[q]);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("column '" + names[q] + "': " + e.getMessage() + " (row "
                            + describe(row, schema) + ")", e);
                }
            }
        }
        return new FhnParams(v[0], v[1], v[2], v[3], v[4]).checkLazily(() -> "row " + describe(row, schema));
    }

    /** The row as Spark's {@code Row.toString} prints it (for error messages only). */
    static String describe(InternalRow row, StructType schema) {
        return String.valueOf(CatalystTypeConverters.createToScalaConverter(schema).apply(row));
    }

    @Override
    public GpuFitzHughNagumo copy(ParamMap extra) {
        return defaultCopy(extra);
    }

    @Override
    public MLWriter write() {
        return ParamsIO.paramsWriter(this);
    }

    public static MLReader<GpuFitzHughNagumo> read() {
        return ParamsIO.paramsReader(GpuFitzHughNagumo.class, GpuFitzHughNagumo::new);
    }

    public static GpuFitzHughNagumo load(String path) {
        return read().load(path);
    }
}
