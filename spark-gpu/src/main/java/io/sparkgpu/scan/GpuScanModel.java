package io.sparkgpu.scan;

import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.when;

import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The result of {@link GpuScanStatistic#fit}: the reported clusters (most likely first) with LLR, observed and
 * expected counts, relative risk and Monte Carlo p-value, the replica maxima, and where the grid lies in the
 * input's coordinates. {@link #transform} labels rows with the rank of the cluster that contains their cell
 * (a pure SQL expression, O(rows * clusters)); {@link #clusterTable} gives the clusters as a DataFrame.
 *
 * <p>Saved as {@code path/metadata} (MLlib layout, plus the grid and scan settings), {@code path/clusters} and
 * {@code path/replicas} (Parquet). A loaded model has the same clusters, p-values and transform.
 */
public class GpuScanModel extends Model<GpuScanModel> implements GpuScanModelParams<GpuScanModel>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final ScanGridInfo info;
    private final ScanResult result;
    private final ParamSlots slots = new ParamSlots();

    public GpuScanModel(String uid, ScanGridInfo info, ScanResult result) {
        this.uid = uid;
        this.info = info;
        this.result = result;
        set(coordinateCols(), info.coordinateCols());
        set(inputType(), info.inputType());
        set(statistic(), result.model().id());
        set(direction(), result.spec().direction().id());
        setDefault(clusterCol(), DEFAULT_CLUSTER);
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    /** Coordinate columns of the data to transform (default: those of the training data). */
    @Override
    public GpuScanModel setCoordinateCols(String... v) {
        if (v == null || v.length != info.dims()) {
            throw new IllegalArgumentException("coordinateCols needs " + info.dims() + " columns");
        }
        return GpuScanModelParams.super.setCoordinateCols(v);
    }

    // ------------------------------------------------------------------ result

    /** The reported clusters by rank (empty when no range has a positive LLR). */
    public List<ScanCluster> clusters() {
        return result.clusters();
    }

    /** The full result (clusters, replica maxima, totals, backend). */
    public ScanResult result() {
        return result;
    }

    /**
     * Seconds of each phase of the fit that produced this model, in order (read input + build tables, scan,
     * secondary clusters, replicas, result, GPU calls, total: {@link ScanResult#timings()}); not saved, so empty
     * for a loaded model.
     */
    public Map<String, Double> timings() {
        return result.timings();
    }

    /** Where each scanning phase of the fit ran, e.g. "gpu in 1 task" ({@link ScanResult#phaseBackends()}). */
    public Map<String, String> phaseBackends() {
        return result.phaseBackends();
    }

    /** Where the grid lies in the input's coordinates. */
    public ScanGridInfo gridInfo() {
        return info;
    }

    /** Maximum LLR of each Monte Carlo replica. */
    public double[] replicaLlrs() {
        return result.replicaLlrs();
    }

    /** The Monte Carlo p-value of any LLR against this model's replicas. */
    public double pValue(double llr) {
        return ScanResult.pValue(llr, result.replicaLlrs());
    }

    static final StructType CLUSTER_TABLE = new StructType()
            .add("rank", DataTypes.IntegerType, false)
            .add("rangeIndex", DataTypes.LongType, false)
            .add("cellLo", DataTypes.createArrayType(DataTypes.IntegerType, false), false)
            .add("cellHi", DataTypes.createArrayType(DataTypes.IntegerType, false), false)
            .add("coordLo", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
            .add("coordHi", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
            .add("cells", DataTypes.LongType, false)
            .add("llr", DataTypes.DoubleType, false)
            .add("observed", DataTypes.DoubleType, false)
            .add("expected", DataTypes.DoubleType, false)
            .add("relativeRisk", DataTypes.DoubleType, false)
            .add("baseline", DataTypes.DoubleType, false)
            .add("pValue", DataTypes.DoubleType, false);

    /** The clusters as rows: rank, cell and coordinate bounds per axis, LLR, counts, relative risk, p-value. */
    public Dataset<Row> clusterTable(SparkSession spark) {
        List<Row> rows = new ArrayList<>();
        for (ScanCluster c : result.clusters()) {
            List<Integer> lo = new ArrayList<>();
            List<Integer> hi = new ArrayList<>();
            List<Double> clo = new ArrayList<>();
            List<Double> chi = new ArrayList<>();
            for (int k = 0; k < info.dims(); k++) {
                lo.add(c.lo(k));
                hi.add(c.hi(k));
                clo.add(info.lower(k, c.lo(k)));
                chi.add(info.upper(k, c.hi(k)));
            }
            rows.add(RowFactory.create(c.rank(), c.index(), lo, hi, clo, chi, c.cells(), c.llr(), c.observed(),
                    c.expected(), c.relativeRisk(), c.baseline(), c.pValue()));
        }
        return spark.createDataFrame(rows, CLUSTER_TABLE);
    }

    /** Appends clusterCol: the rank of the first reported cluster containing the row's cell, else null. */
    @Override
    public Dataset<Row> transform(Dataset<?> dataset) {
        transformSchema(dataset.schema());
        String[] cols = getCoordinateCols();
        Column[] axis = new Column[info.dims()];
        for (int k = 0; k < axis.length; k++) {
            axis[k] = ScanInput.axisCell(info, k, ScanInput.q(cols[k]));
        }
        Column label = lit(null).cast(DataTypes.IntegerType);
        List<ScanCluster> cs = result.clusters();
        for (int i = cs.size() - 1; i >= 0; i--) { // built inside out, so rank 1 is tested first
            ScanCluster c = cs.get(i);
            Column in = null;
            for (int k = 0; k < axis.length; k++) {
                Column t = axis[k].between(c.lo(k), c.hi(k));
                in = in == null ? t : in.and(t);
            }
            label = when(in, lit(c.rank())).otherwise(label);
        }
        return dataset.toDF().withColumn(getClusterCol(), label);
    }

    @Override
    public StructType transformSchema(StructType schema) {
        return GpuScanModelParams.appendCluster(schema, getCoordinateCols(), getClusterCol());
    }

    @Override
    public GpuScanModel copy(ParamMap extra) {
        GpuScanModel c = copyValues(new GpuScanModel(uid, info, result), extra);
        return hasParent() ? c.setParent(parent()) : c;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("GpuScanModel: uid=").append(uid).append(", ").append(result.model().id())
                .append(' ').append(result.shape()).append(", ").append(result.clusters().size()).append(" clusters, ")
                .append(result.numReplicas()).append(" replicas");
        for (ScanCluster c : result.clusters()) {
            sb.append("\n  #").append(c.rank()).append(' ').append(info.describe(c.box())).append(": LLR ")
                    .append(c.llr()).append(", p ").append(c.pValue());
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------ persistence

    static final StructType CLUSTERS_SCHEMA = new StructType()
            .add("rank", DataTypes.IntegerType, false)
            .add("rangeIndex", DataTypes.LongType, false)
            .add("box", DataTypes.createArrayType(DataTypes.IntegerType, false), false)
            .add("llr", DataTypes.DoubleType, false)
            .add("observed", DataTypes.DoubleType, false)
            .add("expected", DataTypes.DoubleType, false)
            .add("relativeRisk", DataTypes.DoubleType, false)
            .add("baseline", DataTypes.DoubleType, false)
            .add("pValue", DataTypes.DoubleType, false);

    static final StructType REPLICAS_SCHEMA = new StructType()
            .add("replica", DataTypes.IntegerType, false)
            .add("maxLlr", DataTypes.DoubleType, false);

    @Override
    public MLWriter write() {
        return new Writer(this);
    }

    public static MLReader<GpuScanModel> read() {
        return new Reader();
    }

    public static GpuScanModel load(String path) {
        return read().load(path);
    }

    private static final class Writer extends MLWriter {
        private final GpuScanModel m;

        Writer(GpuScanModel m) {
            this.m = m;
        }

        @Override
        public void saveImpl(String path) {
            SparkSession spark = sparkSession();
            ScanResult r = m.result;
            ScanSpec s = r.spec();
            Map<String, Object> extra = new LinkedHashMap<>();
            extra.put("sizes", m.info.sizes());
            extra.put("origin", m.info.origin());
            extra.put("upper", m.info.upper());
            extra.put("gridCoordinateCols", m.info.coordinateCols());
            extra.put("minCells", s.minCells());
            extra.put("maxCells", s.maxCells());
            extra.put("maxBaselineFraction", s.maxBaselineFraction());
            extra.put("seed", r.seed());
            extra.put("totalCases", r.totalCases());
            extra.put("totalBaseline", r.totalBaseline());
            extra.put("backendUsed", r.backend());
            ParamsIO.saveMetadata(m, path, spark, extra);
            List<Row> cl = new ArrayList<>();
            for (ScanCluster c : r.clusters()) {
                List<Integer> box = new ArrayList<>();
                for (int b : c.box()) {
                    box.add(b);
                }
                cl.add(RowFactory.create(c.rank(), c.index(), box, c.llr(), c.observed(), c.expected(), c.relativeRisk(),
                        c.baseline(), c.pValue()));
            }
            spark.createDataFrame(cl, CLUSTERS_SCHEMA).coalesce(1).write().parquet(ParamsIO.child(path, "clusters"));
            List<Row> rep = new ArrayList<>();
            double[] reps = r.replicaLlrs();
            for (int i = 0; i < reps.length; i++) {
                rep.add(RowFactory.create(i, reps[i]));
            }
            spark.createDataFrame(rep, REPLICAS_SCHEMA).coalesce(1).write().parquet(ParamsIO.child(path, "replicas"));
            ParamsIO.seal(m, path, spark);
        }
    }

    /** The invariants of a saved cluster: ranks 1, 2, ... in order; a box inside the grid; a p-value in [0, 1]. */
    static void checkCluster(String path, int expectedRank, int rank, int[] box, int[] sizes, double pValue) {
        String where = "model at " + path + ": clusters/ rank " + rank;
        if (rank != expectedRank) {
            throw new IllegalArgumentException(where + ": ranks must run 1, 2, ... without gaps, expected "
                    + expectedRank);
        }
        if (box.length != 6) {
            throw new IllegalArgumentException(where + ": a box has 6 bounds, found " + box.length);
        }
        for (int k = 0; k < 3; k++) {
            int size = k < sizes.length ? sizes[k] : 1;
            if (box[2 * k] < 0 || box[2 * k] > box[2 * k + 1] || box[2 * k + 1] >= size) {
                throw new IllegalArgumentException(where + ": box " + java.util.Arrays.toString(box)
                        + " is not inside the grid on axis " + k + " (0.." + (size - 1) + ")");
            }
        }
        if (!(pValue >= 0 && pValue <= 1) && !Double.isNaN(pValue)) {
            throw new IllegalArgumentException(where + ": p-value " + pValue + " is not in [0, 1]");
        }
    }

    private static final class Reader extends MLReader<GpuScanModel> {
        @Override
        public GpuScanModel load(String path) {
            SparkSession spark = sparkSession();
            ParamsIO.Metadata md = ParamsIO.loadMetadata(path, spark, GpuScanModel.class.getName());
            int d = md.field("sizes").size();
            if (d < 1 || d > 3) {
                throw new IllegalArgumentException("model at " + path + ": metadata has no valid grid sizes");
            }
            int[] sizes = new int[d];
            double[] origin = new double[d];
            double[] upper = new double[d];
            String[] cols = new String[d];
            for (int k = 0; k < d; k++) {
                sizes[k] = md.field("sizes").get(k).asInt();
                origin[k] = md.field("origin").get(k).asDouble();
                upper[k] = md.field("upper").get(k).asDouble();
                cols[k] = md.field("gridCoordinateCols").get(k).asText();
            }
            String type = md.field("paramMap").path("inputType").asText(ScanGridInfo.CELLS);
            ScanGridInfo info = new ScanGridInfo(type, cols, sizes, origin, upper);
            ScanModel model = ScanModel.parse(md.field("paramMap").path("statistic").asText(), "statistic");
            ScanDirection dir = ScanDirection.parse(md.field("paramMap").path("direction").asText(), "direction");
            ScanSpec spec = new ScanSpec(dir, md.field("minCells").asLong(), md.field("maxCells").asLong(),
                    md.field("maxBaselineFraction").asDouble());
            List<ScanCluster> clusters = new ArrayList<>();
            List<Row> cl = spark.read().parquet(ParamsIO.child(path, "clusters")).orderBy("rank").collectAsList();
            for (Row r : cl) {
                int[] box = r.<Integer>getList(r.fieldIndex("box")).stream().mapToInt(Integer::intValue).toArray();
                checkCluster(path, clusters.size() + 1, r.getInt(r.fieldIndex("rank")), box, sizes,
                        r.getDouble(r.fieldIndex("pValue")));
                clusters.add(new ScanCluster(r.getInt(r.fieldIndex("rank")), r.getLong(r.fieldIndex("rangeIndex")), box,
                        r.getDouble(r.fieldIndex("llr")), r.getDouble(r.fieldIndex("observed")),
                        r.getDouble(r.fieldIndex("expected")), r.getDouble(r.fieldIndex("relativeRisk")),
                        r.getDouble(r.fieldIndex("baseline")), r.getDouble(r.fieldIndex("pValue"))));
            }
            List<Row> rp = spark.read().parquet(ParamsIO.child(path, "replicas")).orderBy("replica").collectAsList();
            double[] reps = new double[rp.size()];
            for (int i = 0; i < reps.length; i++) {
                Row r = rp.get(i);
                if (r.getInt(0) != i) {
                    throw new IllegalArgumentException("model at " + path + ": replica " + i + " is missing");
                }
                reps[i] = r.getDouble(1);
            }
            ScanResult result = new ScanResult(new ScanShape(sizes), model, spec, clusters, reps,
                    md.field("seed").asLong(), md.field("totalCases").asDouble(), md.field("totalBaseline").asDouble(),
                    md.field("backendUsed").asText("unknown"));
            GpuScanModel m = new GpuScanModel(md.uid(), info, result);
            md.applyTo(m);
            return m;
        }
    }
}
