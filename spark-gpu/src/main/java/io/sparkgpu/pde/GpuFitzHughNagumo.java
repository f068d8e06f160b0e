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
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

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
        JavaRDD<Row> rows = dataset.toDF().javaRDD().mapPartitions(it -> {
            List<Row> in = new ArrayList<>();
            it.forEachRemaining(in::add);
            if (in.isEmpty()) {
                return in.iterator();
            }
            FhnParams[] ps = new FhnParams[in.size()];
            for (int j = 0; j < ps.length; j++) {
                ps[j] = rowParams(in.get(j), cols, colNames, values);
            }
            var ran = FhnStep.run(cfg, ps, 1, false); // observables only: the final state stays on the device
            List<Row> res = new ArrayList<>(in.size());
            for (int j = 0; j < ps.length; j++) {
                FhnResult r = ran.value[j];
                Row row = in.get(j);
                Object[] o = new Object[row.size() + OUTPUTS.size() + (withField ? 1 : 0)];
                for (int q = 0; q < row.size(); q++) {
                    o[q] = row.get(q);
                }
                int at = row.size();
                o[at++] = r.waveSpeed;
                o[at++] = r.pulseCount;
                o[at++] = r.maxV;
                o[at++] = r.propagated;
                o[at++] = r.finalTime;
                o[at++] = r.steps;
                o[at++] = r.newtonIterations;
                o[at++] = r.unconvergedSteps;
                o[at++] = r.meanNodes;
                o[at++] = ran.backend();
                if (withField) {
                    o[at] = r.field;
                }
                res.add(RowFactory.create(o));
            }
            return res.iterator();
        });
        return SparkSession.active().createDataFrame(rows, out);
    }

    /** The rule of each per-row parameter, in the order of {@link #columnParams()}. */
    private static final java.util.function.DoubleConsumer[] RULES = {FhnParams::checkA, FhnParams::checkEps,
        FhnParams::checkGamma, FhnParams::checkCurrent, FhnParams::checkDiffusion};

    /** The parameters of one row; a null or a value breaking its parameter's rule is an error naming the column. */
    static FhnParams rowParams(Row row, int[] cols, String[] names, double[] values) {
        double[] v = new double[5];
        for (int q = 0; q < 5; q++) {
            if (cols[q] < 0) {
                v[q] = values[q];
            } else if (row.isNullAt(cols[q])) {
                throw new IllegalArgumentException("column '" + names[q] + "' must not be null (row " + row + ")");
            } else {
                v[q] = ((Number) row.get(cols[q])).doubleValue();
                try {
                    RULES[q].accept(v[q]);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("column '" + names[q] + "': " + e.getMessage() + " (row " + row
                            + ")", e);
                }
            }
        }
        return new FhnParams(v[0], v[1], v[2], v[3], v[4]).checkLazily(() -> "row " + row);
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
