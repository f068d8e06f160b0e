package io.sparkgpu.spline;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.ml.ParamChecks;
import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A fitted monotone spline ({@link Spline}): {@link #predict}, {@link #derivative} and {@link #inverse} on the driver,
 * and {@link #transform}, which appends predictionCol (the value at xCol) and, when derivativeCol is set, the
 * derivative, evaluated per partition on the executors (GPU when usable, else the bitwise-identical CPU twin).
 * Outside the knots the extrapolate param applies; a NaN x gives NaN, a null x null.
 *
 * <p>Saved as {@code path/metadata} (params, {@link ParamsIO}) and {@code path/data} (Parquet, one row: kind, sign,
 * knots t, values a, slopes b of the built spline), so a loaded model has the same bits.
 */
public class GpuMonotoneSplineModel extends Model<GpuMonotoneSplineModel>
        implements GpuMonotoneSplineModelParams<GpuMonotoneSplineModel>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final Spline spline;
    private final ParamSlots slots = new ParamSlots();
    private transient SplineEngine.Fit fit;

    public GpuMonotoneSplineModel(String uid, Spline spline) {
        this.uid = uid;
        this.spline = spline;
        GpuMonotoneSplineModelParams.setDefaults(this);
        set(kind(), spline.kind.id());
    }

    /**
     * The spline through the breakpoints of an isotonic regression model (boundaries, predictions): a C1 monotone
     * smoothing of it. {@code kind}: schumaker or rational.
     */
    public static GpuMonotoneSplineModel fromIsotonic(GpuIsotonicRegressionModel iso, String kind) {
        SplineConfig.Kind k = SplineConfig.parseKind(kind);
        Spline s = SplineEngine.fromIsotonic(iso.boundaryArray(), iso.predictionArray(), k, iso.backendSetting());
        GpuMonotoneSplineModel m = new GpuMonotoneSplineModel(Identifiable.randomUID("gpuMonotoneSpline"), s);
        m.set(m.smoothing(), "isotonic");
        return m;
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    void setFit(SplineEngine.Fit f) {
        fit = f;
    }

    /** What the fit did (rows, duplicates merged, backends), or null for a loaded or built model. */
    public SplineEngine.Fit fitInfo() {
        return fit;
    }

    public Spline spline() {
        return spline;
    }

    static StructType outputSchema(StructType schema, GpuMonotoneSplineModelParams<?> p) {
        SplineTransform.checkNumeric(schema, "xCol", p.getXCol());
        StructType out = ParamChecks.appendColumn(schema, "predictionCol", p.getPredictionCol(), DataTypes.DoubleType,
                true);
        if (p.getDerivativeCol() != null) {
            out = ParamChecks.appendColumn(out, "derivativeCol", p.getDerivativeCol(), DataTypes.DoubleType, true);
        }
        return out;
    }

    private SplineConfig.Extrapolate mode() {
        return SplineConfig.parseExtrapolate(getExtrapolate());
    }

    /** Values at xs (on this JVM; GPU when usable). */
    public double[] predict(double[] xs) {
        double[] v = new double[xs.length];
        SplineStep.eval(backendSetting(), spline, xs, mode(), v, null);
        return v;
    }

    public double predict(double x) {
        return predict(new double[] {x})[0];
    }

    /** First derivatives at xs. */
    public double[] derivative(double[] xs) {
        double[] v = new double[xs.length];
        double[] d = new double[xs.length];
        SplineStep.eval(backendSetting(), spline, xs, mode(), v, d);
        return d;
    }

    public double derivative(double x) {
        return derivative(new double[] {x})[0];
    }

    /**
     * The inverse at ys: the smallest x with s(x) &gt;= y for an increasing spline (s(x) &lt;= y for a decreasing
     * one); outside the spline's values the extrapolate param applies.
     */
    public double[] inverse(double[] ys) {
        return SplineEngine.inverse(spline, ys, mode(), backendSetting());
    }

    public double inverse(double y) {
        return inverse(new double[] {y})[0];
    }

    @Override
    public Dataset<Row> transform(Dataset<?> dataset) {
        transformSchema(dataset.schema());
        final Spline s = spline;
        final SplineConfig.Extrapolate mode = mode();
        final Backend backend = backendSetting();
        final boolean withDeriv = getDerivativeCol() != null;
        String[] outs = withDeriv ? new String[] {getPredictionCol(), getDerivativeCol()}
                : new String[] {getPredictionCol()};
        return SplineTransform.append(dataset, getXCol(), "xCol", outs, z -> {
            double[] v = new double[z.length];
            double[] d = withDeriv ? new double[z.length] : null;
            SplineStep.eval(backend, s, z, mode, v, d);
            return withDeriv ? new double[][] {v, d} : new double[][] {v};
        });
    }

    @Override
    public StructType transformSchema(StructType schema) {
        return outputSchema(schema, this);
    }

    @Override
    public GpuMonotoneSplineModel copy(ParamMap extra) {
        GpuMonotoneSplineModel c = copyValues(new GpuMonotoneSplineModel(uid, spline), extra);
        c.fit = fit;
        return hasParent() ? c.setParent(parent()) : c;
    }

    @Override
    public String toString() {
        return "GpuMonotoneSplineModel: uid=" + uid + ", " + spline;
    }

    // ------------------------------------------------------------------ persistence

    static final StructType DATA_SCHEMA = new StructType()
            .add("kind", DataTypes.StringType, false)
            .add("sign", DataTypes.DoubleType, false)
            .add("t", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
            .add("a", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
            .add("b", DataTypes.createArrayType(DataTypes.DoubleType, false), false);

    /** Writes a spline as the one-row Parquet {@code dir}. */
    static void writeSpline(SparkSession spark, Spline s, String dir) {
        Row row = RowFactory.create(s.kind.id(), s.sign, list(s.t), list(s.a), list(s.b));
        spark.createDataFrame(List.of(row), DATA_SCHEMA).coalesce(1).write().parquet(dir);
    }

    /** Reads a spline written by {@link #writeSpline}. */
    static Spline readSpline(SparkSession spark, String dir) {
        List<Row> rows = spark.read().parquet(dir).select("kind", "sign", "t", "a", "b").collectAsList();
        if (rows.size() != 1) {
            throw new IllegalArgumentException("spline data at " + dir + " must hold one row, found " + rows.size());
        }
        Row r = rows.get(0);
        double[][] arr = new double[3][];
        for (int c = 0; c < 3; c++) {
            arr[c] = r.<Double>getList(2 + c).stream().mapToDouble(Double::doubleValue).toArray();
        }
        return new Spline(SplineConfig.parseKind(r.getString(0)), r.getDouble(1), arr[0], arr[1], arr[2]);
    }

    private static List<Double> list(double[] a) {
        List<Double> l = new ArrayList<>(a.length);
        for (double v : a) {
            l.add(v);
        }
        return l;
    }

    @Override
    public MLWriter write() {
        return new MLWriter() {
            @Override
            public void saveImpl(String path) {
                SparkSession spark = sparkSession();
                ParamsIO.saveMetadata(GpuMonotoneSplineModel.this, path, spark, Map.of("knots", spline.size()));
                writeSpline(spark, spline, ParamsIO.child(path, "data"));
                ParamsIO.seal(GpuMonotoneSplineModel.this, path, spark);
            }
        };
    }

    public static MLReader<GpuMonotoneSplineModel> read() {
        return new MLReader<GpuMonotoneSplineModel>() {
            @Override
            public GpuMonotoneSplineModel load(String path) {
                SparkSession spark = sparkSession();
                ParamsIO.Metadata md = ParamsIO.loadMetadata(path, spark, GpuMonotoneSplineModel.class.getName());
                GpuMonotoneSplineModel m = new GpuMonotoneSplineModel(md.uid(), readSpline(spark,
                        ParamsIO.child(path, "data")));
                md.applyTo(m);
                return m;
            }
        };
    }

    public static GpuMonotoneSplineModel load(String path) {
        return read().load(path);
    }
}
