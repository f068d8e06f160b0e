package io.sparkgpu.spline;

import io.sparkgpu.ml.ParamChecks;
import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.storage.StorageLevel;

/**
 * A smooth monotone CDF of a numeric column as a Spark ML {@link Estimator}: the exact quantiles of the column (or of
 * a random sample of about sampleSize rows, weighted by weightCol when set) at numKnots probability levels, joined
 * by a C1 monotone spline (by default Gregory and Delbourgo's rational quadratic with Butland's density slopes; see
 * {@link SplineCdf} for the definitions). The model gives {@code cdf(x)}, {@code quantile(p)} (its inverse) and
 * {@code density(x)} (its derivative), and {@code transform} appends the CDF (and the density) of a column.
 *
 * <p>Bad input (null, NaN or infinite values, weights not finite and &gt; 0, fewer than 2 distinct values) raises
 * an IllegalArgumentException naming the column; nothing is dropped.
 */
public class GpuMonotoneCdf extends Estimator<GpuMonotoneCdfModel>
        implements GpuMonotoneCdfParams<GpuMonotoneCdf>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final ParamSlots slots = new ParamSlots();

    public GpuMonotoneCdf() {
        this(Identifiable.randomUID("gpuMonotoneCdf"));
    }

    public GpuMonotoneCdf(String uid) {
        this.uid = uid;
        GpuMonotoneCdfParams.setDefaults(this);
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    /**
     * The quantiles at the numKnots levels of the fit's input (the whole column or its sample). The sample keeps a
     * row when a seeded hash of its value and weight falls below sampleSize / n, so it depends on the rows' content
     * and the seed only, never on their order or partitioning (rows with the same value and weight are kept or
     * dropped together).
     */
    double[] quantiles(Dataset<?> dataset) {
        Dataset<?> in = dataset;
        long sample = getSampleSize();
        if (sample > 0) {
            long n = dataset.count();
            if (n > sample) {
                Column v = SplineCdf.quoted(dataset, getInputCol());
                Column h = weightColOrNull() == null ? functions.xxhash64(functions.lit(getSeed()), v)
                        : functions.xxhash64(functions.lit(getSeed()), v, SplineCdf.quoted(dataset, weightColOrNull()));
                double unit = 0x1.0p53;
                in = dataset.where(functions.pmod(h, functions.lit((long) unit)).lt((double) sample / n * unit));
            }
        }
        return SplineCdf.quantileKnots(in, getInputCol(), weightColOrNull(), getNumKnots(),
                StorageLevel.MEMORY_AND_DISK(), backendSetting());
    }

    @Override
    public GpuMonotoneCdfModel fit(Dataset<?> dataset) {
        transformSchema(dataset.schema());
        SplineConfig.Kind kind = SplineConfig.parseKind(getKind());
        double[] q = quantiles(dataset);
        Spline s = SplineCdf.build(q, kind, backendSetting(), getInputCol());
        GpuMonotoneCdfModel m = copyValues(new GpuMonotoneCdfModel(uid, s, q), ParamMap.empty());
        return m.setParent(this);
    }

    static StructType outputSchema(StructType schema, GpuMonotoneCdfParams<?> p) {
        SplineTransform.checkNumeric(schema, "inputCol", p.getInputCol());
        StructType out = ParamChecks.appendColumn(schema, "outputCol", p.getOutputCol(), DataTypes.DoubleType, true);
        if (p.getDensityCol() != null) {
            out = ParamChecks.appendColumn(out, "densityCol", p.getDensityCol(), DataTypes.DoubleType, true);
        }
        return out;
    }

    @Override
    public StructType transformSchema(StructType schema) {
        if (weightColOrNull() != null) {
            SplineTransform.checkNumeric(schema, "weightCol", weightColOrNull());
        }
        return outputSchema(schema, this);
    }

    @Override
    public GpuMonotoneCdf copy(ParamMap extra) {
        return defaultCopy(extra);
    }

    /**
     * {@code df} repartitioned into {@code numPartitions} ranges of {@code col} of nearly equal size: a CDF of a
     * sample maps the key to fine bins whose rows are counted exactly, and the cuts fall at the counts nearest to
     * k n / N, the rows of one heavy value split by a tie-break (see {@link SplineRangePartitioner}); null keys go
     * to the first partition, NaN to the last. df must be deterministic (it is read up to five times: cache it).
     */
    public static Dataset<Row> partitionByQuantiles(Dataset<?> df, String col, int numPartitions) {
        return SplineRangePartitioner.partitionByQuantiles(df, col, numPartitions);
    }

    @Override
    public MLWriter write() {
        return ParamsIO.paramsWriter(this);
    }

    public static MLReader<GpuMonotoneCdf> read() {
        return ParamsIO.paramsReader(GpuMonotoneCdf.class, GpuMonotoneCdf::new);
    }

    public static GpuMonotoneCdf load(String path) {
        return read().load(path);
    }
}
