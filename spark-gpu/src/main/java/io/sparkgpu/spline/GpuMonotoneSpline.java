package io.sparkgpu.spline;

import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Monotone spline interpolation as a Spark ML {@link Estimator}: fits a C1 monotone spline through the points
 * (xCol, yCol), optionally with derivatives (slopeCol, kind=rational) and weights (weightCol).
 * <ul>
 *   <li>{@code kind=schumaker}: Schumaker's monotone quadratic spline with Butland's harmonic-mean slopes (one
 *       extra knot per interval); {@code kind=rational}: Gregory and Delbourgo's monotone rational quadratic
 *       Hermite spline (the given slopes, else Butland's). Both keep strictly monotone data strictly monotone and
 *       flat stretches flat (Beliakov and Liu's GPU algorithms; see {@link SplineCpu}).</li>
 *   <li>{@code smoothing=none}: y must be monotone (either direction); {@code isotonic}: noisy y is first replaced
 *       by its weighted isotonic regression ({@code io.sparkgpu.isotonic}).</li>
 *   <li>{@code extrapolate}: clip, linear, nan or error outside the knots (the model's setting).</li>
 * </ul>
 * The points are collected to the driver (interpolation data is small next to the data a model is applied to):
 * duplicate x are merged into their weighted mean ({@link SplineEngine}); the model evaluates on the executors, on
 * the GPU when one is usable. Bad input (null, NaN or infinite values, weights &lt;= 0, non-monotone y without
 * smoothing, fewer than 2 distinct x) raises an IllegalArgumentException naming the column or setting.
 */
public class GpuMonotoneSpline extends Estimator<GpuMonotoneSplineModel>
        implements GpuMonotoneSplineParams<GpuMonotoneSpline>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final ParamSlots slots = new ParamSlots();

    public GpuMonotoneSpline() {
        this(Identifiable.randomUID("gpuMonotoneSpline"));
    }

    public GpuMonotoneSpline(String uid) {
        this.uid = uid;
        GpuMonotoneSplineModelParams.setDefaults(this);
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    /** The columns of a fit as doubles, collected to the driver: x, y, slope (or null), weight (or null). */
    static double[][] collect(Dataset<?> df, String[] params, String[] cols) {
        StructType schema = df.schema();
        List<Column> sel = new ArrayList<>();
        for (int c = 0; c < cols.length; c++) {
            if (cols[c] != null) {
                SplineTransform.checkNumeric(schema, params[c], cols[c]);
                sel.add(df.col("`" + cols[c].replace("`", "``") + "`").cast(DataTypes.DoubleType));
            }
        }
        List<Row> rows = df.select(sel.toArray(new Column[0])).collectAsList();
        double[][] out = new double[cols.length][];
        int k = 0;
        for (int c = 0; c < cols.length; c++) {
            if (cols[c] == null) {
                continue;
            }
            double[] v = new double[rows.size()];
            for (int i = 0; i < v.length; i++) {
                Row r = rows.get(i);
                if (r.isNullAt(k)) {
                    throw new IllegalArgumentException(params[c] + " '" + cols[c] + "' must not be null (row " + i + ")");
                }
                v[i] = r.getDouble(k);
            }
            out[c] = v;
            k++;
        }
        return out;
    }

    @Override
    public GpuMonotoneSplineModel fit(Dataset<?> dataset) {
        SplineConfig cfg = toConfig().validate();
        transformSchema(dataset.schema());
        String[] cols = {getXCol(), getYCol(), getSlopeCol(), getWeightCol()};
        double[][] d = collect(dataset, new String[] {"xCol", "yCol", "slopeCol", "weightCol"}, cols);
        SplineEngine.Fit f = SplineEngine.fit(d[0], d[1], d[2], d[3], cfg, new SplineEngine.Columns(cols[0], cols[1],
                cols[2], cols[3]));
        GpuMonotoneSplineModel m = copyValues(new GpuMonotoneSplineModel(uid, f.spline), ParamMap.empty());
        m.setFit(f);
        return m.setParent(this);
    }

    @Override
    public StructType transformSchema(StructType schema) {
        return GpuMonotoneSplineModel.outputSchema(schema, this);
    }

    @Override
    public GpuMonotoneSpline copy(ParamMap extra) {
        return defaultCopy(extra);
    }

    @Override
    public MLWriter write() {
        return ParamsIO.paramsWriter(this);
    }

    public static MLReader<GpuMonotoneSpline> read() {
        return ParamsIO.paramsReader(GpuMonotoneSpline.class, GpuMonotoneSpline::new);
    }

    public static GpuMonotoneSpline load(String path) {
        return read().load(path);
    }
}
