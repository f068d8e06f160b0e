package io.sparkgpu.spline;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.param.ParamMap;
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
 * A fitted smooth monotone CDF ({@link SplineCdf}): {@link #cdf}, {@link #quantile} and {@link #density} on the
 * driver (GPU when usable, else the bitwise-identical CPU twin), and {@link #transform}, which appends outputCol (the
 * CDF at inputCol) and, when densityCol is set, the density, per partition on the executors. A null input gives
 * null, NaN gives NaN; the CDF is 0 below the smallest knot and 1 from the largest on.
 *
 * <p>Saved as {@code path/metadata} (params), {@code path/data} (the spline, as {@link GpuMonotoneSplineModel} saves
 * it) and {@code path/quantiles} (the exact quantiles at the levels), sealed by {@link ParamsIO#seal}.
 */
public class GpuMonotoneCdfModel extends Model<GpuMonotoneCdfModel>
        implements GpuMonotoneCdfParams<GpuMonotoneCdfModel>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final Spline spline;
    private final double[] quantiles;
    private final ParamSlots slots = new ParamSlots();

    public GpuMonotoneCdfModel(String uid, Spline spline, double[] quantiles) {
        this.uid = uid;
        this.spline = spline;
        this.quantiles = quantiles;
        GpuMonotoneCdfParams.setDefaults(this);
        set(kind(), spline.kind.id());
        set(numKnots(), quantiles.length);
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    public Spline spline() {
        return spline;
    }

    /** The exact quantiles at the levels k / (numKnots - 1) (a copy). */
    public double[] knotQuantiles() {
        return quantiles.clone();
    }

    /** The CDF at xs. */
    public double[] cdf(double[] xs) {
        return SplineCdf.cdf(spline, xs, backendSetting(), null);
    }

    public double cdf(double x) {
        return cdf(new double[] {x})[0];
    }

    /** The density (the CDF's derivative) at xs; 0 outside the knots. */
    public double[] density(double[] xs) {
        double[] d = new double[xs.length];
        SplineCdf.cdf(spline, xs, backendSetting(), d);
        return d;
    }

    public double density(double x) {
        return density(new double[] {x})[0];
    }

    /** The quantiles at ps: the smallest x with cdf(x) &gt;= p; every p must be in [0, 1]. */
    public double[] quantile(double[] ps) {
        return SplineCdf.quantile(spline, ps, backendSetting());
    }

    public double quantile(double p) {
        return quantile(new double[] {p})[0];
    }

    @Override
    public Dataset<Row> transform(Dataset<?> dataset) {
        transformSchema(dataset.schema());
        final Spline s = spline;
        final Backend backend = backendSetting();
        final boolean withDensity = getDensityCol() != null;
        String[] outs = withDensity ? new String[] {getOutputCol(), getDensityCol()} : new String[] {getOutputCol()};
        return SplineTransform.append(dataset, getInputCol(), "inputCol", outs, z -> {
            double[] d = withDensity ? new double[z.length] : null;
            double[] v = SplineCdf.cdf(s, z, backend, d);
            return withDensity ? new double[][] {v, d} : new double[][] {v};
        });
    }

    @Override
    public StructType transformSchema(StructType schema) {
        return GpuMonotoneCdf.outputSchema(schema, this);
    }

    @Override
    public GpuMonotoneCdfModel copy(ParamMap extra) {
        GpuMonotoneCdfModel c = copyValues(new GpuMonotoneCdfModel(uid, spline, quantiles), extra);
        return hasParent() ? c.setParent(parent()) : c;
    }

    @Override
    public String toString() {
        return "GpuMonotoneCdfModel: uid=" + uid + ", " + quantiles.length + " levels, " + spline;
    }

    // ------------------------------------------------------------------ persistence

    static final StructType QUANTILES_SCHEMA = new StructType()
            .add("q", DataTypes.createArrayType(DataTypes.DoubleType, false), false);

    @Override
    public MLWriter write() {
        return new MLWriter() {
            @Override
            public void saveImpl(String path) {
                SparkSession spark = sparkSession();
                GpuMonotoneCdfModel m = GpuMonotoneCdfModel.this;
                ParamsIO.saveMetadata(m, path, spark, Map.of("knots", spline.size()));
                GpuMonotoneSplineModel.writeSpline(spark, spline, ParamsIO.child(path, "data"));
                List<Double> q = new ArrayList<>(quantiles.length);
                for (double v : quantiles) {
                    q.add(v);
                }
                spark.createDataFrame(List.of(RowFactory.create(q)), QUANTILES_SCHEMA).coalesce(1).write()
                        .parquet(ParamsIO.child(path, "quantiles"));
                ParamsIO.seal(m, path, spark);
            }
        };
    }

    public static MLReader<GpuMonotoneCdfModel> read() {
        return new MLReader<GpuMonotoneCdfModel>() {
            @Override
            public GpuMonotoneCdfModel load(String path) {
                SparkSession spark = sparkSession();
                ParamsIO.Metadata md = ParamsIO.loadMetadata(path, spark, GpuMonotoneCdfModel.class.getName());
                Spline s = GpuMonotoneSplineModel.readSpline(spark, ParamsIO.child(path, "data"));
                List<Row> rows = spark.read().parquet(ParamsIO.child(path, "quantiles")).select("q").collectAsList();
                if (rows.size() != 1) {
                    throw new IllegalArgumentException("model at " + path + ": quantiles must hold one row, found "
                            + rows.size());
                }
                double[] q = rows.get(0).<Double>getList(0).stream().mapToDouble(Double::doubleValue).toArray();
                GpuMonotoneCdfModel m = new GpuMonotoneCdfModel(md.uid(), s, q);
                md.applyTo(m);
                return m;
            }
        };
    }

    public static GpuMonotoneCdfModel load(String path) {
        return read().load(path);
    }
}
