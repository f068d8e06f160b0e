package io.sparkgpu.kmeans;

import io.sparkgpu.common.Features;
import io.sparkgpu.ml.DoubleMatrixParam;
import io.sparkgpu.ml.HasFeaturesCol;
import io.sparkgpu.ml.HasPredictionCol;
import io.sparkgpu.ml.ParamChecks;
import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.Path;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
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
 * A fitted k-means model: k centres of d features. {@link #transform} appends the index of the nearest
 * centre (int) to every row, with the batch engine of {@link KMeansTrainer#predict} (GPU or CPU twin,
 * O(n k d)); {@link #predict(Vector)} does one point on the CPU (O(k d)). Produced by
 * {@link GpuKMeans#fit}, which attaches a {@link GpuKMeansSummary}; training follows Lloyd (1982) with
 * k-means|| initialisation (Bahmani et al. 2012) and an exact combiner (see {@link GpuKMeans}).
 *
 * <p>Saved as {@code path/metadata} (one JSON line in MLlib's layout: class, uid, timestamp, sparkVersion,
 * paramMap, defaultParamMap, k, numFeatures), {@code path/data} (Parquet rows {@code clusterIdx: int,
 * clusterCenter: array<double>}) and, when present, {@code path/summary} (Parquet, one row). A loaded model
 * predicts identically and still has its summary.
 */
public class GpuKMeansModel extends Model<GpuKMeansModel>
        implements GpuKMeansModelParams<GpuKMeansModel>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final double[][] centers;
    private final ParamSlots slots = new ParamSlots();
    private GpuKMeansSummary summary;
    private transient volatile KMeansPredictor predictor;

    /**
     * A model with the given centres (k rows of d finite values, copied) and default params
     * (features, prediction, euclidean; backend unset). Models normally come from {@link GpuKMeans#fit} or
     * {@link #load}; this constructor allows importing centres computed elsewhere.
     */
    public GpuKMeansModel(String uid, double[][] clusterCenters) {
        DoubleMatrixParam.check(clusterCenters, "clusterCenters");
        this.uid = uid;
        this.centers = DoubleMatrixParam.copy(clusterCenters);
        setDefault(featuresCol(), HasFeaturesCol.DEFAULT);
        setDefault(predictionCol(), HasPredictionCol.DEFAULT);
        setDefault(distanceMeasure(), KMeansConfig.EUCLIDEAN);
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
     * Checks the input columns and returns {@code schema} with {@code predictionCol} (int, not null) appended.
     *
     * @param weightCol null when unweighted
     */
    static StructType appendPrediction(StructType schema, String featuresCol, String weightCol, String predictionCol) {
        Features.checkFeatures(schema, featuresCol);
        if (weightCol != null) {
            Features.checkWeight(schema, weightCol);
        }
        return ParamChecks.appendColumn(schema, "predictionCol", predictionCol, DataTypes.IntegerType, false);
    }

    private boolean cosine() {
        return KMeansConfig.COSINE.equals(getDistanceMeasure());
    }

    // ------------------------------------------------------------------ centres and prediction

    /** The k centres as dense ml vectors (copies), as MLlib's {@code KMeansModel.clusterCenters()}. */
    public Vector[] clusterCenters() {
        Vector[] v = new Vector[centers.length];
        for (int i = 0; i < v.length; i++) {
            v[i] = Vectors.dense(centers[i].clone());
        }
        return v;
    }

    /** A copy of the k x d centres as arrays. */
    public double[][] clusterCentersArray() {
        return DoubleMatrixParam.copy(centers);
    }

    /** @deprecated the centres as vectors are {@link #clusterCenters()}, as in MLlib. */
    @Deprecated
    public Vector[] clusterCenterVectors() {
        return clusterCenters();
    }

    /** Number of clusters. */
    public int getK() {
        return centers.length;
    }

    /** Size d of the feature vectors the model expects. */
    public int numFeatures() {
        return centers[0].length;
    }

    /** Index of the centre nearest to {@code features} (CPU, O(k d)); same result as {@link #transform}. */
    public int predict(Vector features) {
        return predictor().predict(features.toArray(), "features");
    }

    /** Single-point predictor for the current distanceMeasure, built once. */
    public KMeansPredictor predictor() {
        boolean cos = cosine();
        KMeansPredictor p = predictor;
        if (p == null || p.cosine() != cos) {
            p = new KMeansPredictor(centers, cos);
            predictor = p;
        }
        return p;
    }

    /** Appends predictionCol (int) with the nearest centre of every row; features are validated as in training. */
    @Override
    public Dataset<Row> transform(Dataset<?> dataset) {
        transformSchema(dataset.schema());
        return KMeansTrainer.predict(dataset, getFeaturesCol(), getPredictionCol(), centers, cosine(),
                backendSetting());
    }

    /** Checks featuresCol (vector or array of numbers) and appends predictionCol (int; error if present). */
    @Override
    public StructType transformSchema(StructType schema) {
        return appendPrediction(schema, getFeaturesCol(), null, getPredictionCol());
    }

    @Override
    public GpuKMeansModel copy(ParamMap extra) {
        GpuKMeansModel c = copyValues(new GpuKMeansModel(uid, centers), extra);
        c.summary = summary;
        return hasParent() ? c.setParent(parent()) : c;
    }

    // ------------------------------------------------------------------ MLlib conversion (one naming with isotonic)

    /**
     * This model as MLlib's {@code org.apache.spark.ml.clustering.KMeansModel} (same uid, centres, distance measure,
     * featuresCol and predictionCol; it predicts what this model predicts). Its constructor
     * {@code (String, mllib KMeansModel)} is {@code private[ml]} in Scala, i.e. public in bytecode. It has no
     * training summary (MLlib builds one only in its own fit).
     */
    public org.apache.spark.ml.clustering.KMeansModel toMLlib() {
        org.apache.spark.ml.clustering.KMeansModel m = new org.apache.spark.ml.clustering.KMeansModel(uid, toOldMLlib());
        m = m.copy(new ParamMap().put(m.distanceMeasure(), getDistanceMeasure()));
        m.setFeaturesCol(getFeaturesCol()).setPredictionCol(getPredictionCol());
        return m;
    }

    /**
     * This model as the RDD-based {@code org.apache.spark.mllib.clustering.KMeansModel} (same centres and
     * distance measure; training cost and iterations from the summary when there is one).
     */
    public org.apache.spark.mllib.clustering.KMeansModel toOldMLlib() {
        org.apache.spark.mllib.linalg.Vector[] v = new org.apache.spark.mllib.linalg.Vector[centers.length];
        for (int i = 0; i < v.length; i++) {
            v[i] = org.apache.spark.mllib.linalg.Vectors.dense(centers[i].clone());
        }
        if (summary != null) {
            return new org.apache.spark.mllib.clustering.KMeansModel(v, getDistanceMeasure(), summary.trainingCost(),
                    summary.numIter());
        }
        return new org.apache.spark.mllib.clustering.KMeansModel(v, getDistanceMeasure());
    }

    /** @deprecated named {@link #toOldMLlib()} now ({@link #toMLlib()} gives the DataFrame-based model). */
    @Deprecated
    public org.apache.spark.mllib.clustering.KMeansModel toMLlibModel() {
        return toOldMLlib();
    }

    /** A model with MLlib's uid, centres, distance measure, featuresCol and predictionCol (no summary). */
    public static GpuKMeansModel fromMLlib(org.apache.spark.ml.clustering.KMeansModel m) {
        GpuKMeansModel g = fromOldMLlib(m.uid(), m.clusterCenters(), m.getDistanceMeasure());
        return g.setFeaturesCol(m.getFeaturesCol()).setPredictionCol(m.getPredictionCol());
    }

    /** A model with the RDD-based model's centres and distance measure (a new uid, default columns). */
    public static GpuKMeansModel fromOldMLlib(org.apache.spark.mllib.clustering.KMeansModel m) {
        org.apache.spark.mllib.linalg.Vector[] c = m.clusterCenters();
        Vector[] v = new Vector[c.length];
        for (int i = 0; i < c.length; i++) {
            v[i] = Vectors.dense(c[i].toArray());
        }
        return fromOldMLlib(Identifiable.randomUID("gpukmeans"), v, m.distanceMeasure());
    }

    private static GpuKMeansModel fromOldMLlib(String uid, Vector[] centres, String distanceMeasure) {
        double[][] c = new double[centres.length][];
        for (int i = 0; i < c.length; i++) {
            c[i] = centres[i].toArray();
        }
        GpuKMeansModel g = new GpuKMeansModel(uid, c);
        g.set(g.distanceMeasure(), distanceMeasure);
        return g;
    }

    // ------------------------------------------------------------------ summary

    public boolean hasSummary() {
        return summary != null;
    }

    /**
     * The training summary.
     *
     * @throws IllegalStateException when the model was not produced by {@link GpuKMeans#fit} (nor loaded from
     *                               a model that was)
     */
    public GpuKMeansSummary summary() {
        if (summary == null) {
            throw new IllegalStateException("GpuKMeansModel " + uid + " has no training summary: only models produced "
                    + "by GpuKMeans.fit (or loaded from one) have one; check hasSummary() first");
        }
        return summary;
    }

    GpuKMeansModel setSummary(GpuKMeansSummary s) {
        this.summary = s;
        return this;
    }

    @Override
    public String toString() {
        return "GpuKMeansModel: uid=" + uid + ", k=" + centers.length + ", numFeatures=" + numFeatures()
                + ", distanceMeasure=" + getDistanceMeasure();
    }

    // ------------------------------------------------------------------ persistence

    static final StructType DATA_SCHEMA = new StructType()
            .add("clusterIdx", DataTypes.IntegerType, false)
            .add("clusterCenter", DataTypes.createArrayType(DataTypes.DoubleType, false), false);

    @Override
    public MLWriter write() {
        return new Writer(this);
    }

    public static MLReader<GpuKMeansModel> read() {
        return new Reader();
    }

    public static GpuKMeansModel load(String path) {
        return read().load(path);
    }

    private static final class Writer extends MLWriter {
        private final GpuKMeansModel m;

        Writer(GpuKMeansModel m) {
            this.m = m;
        }

        @Override
        public void saveImpl(String path) {
            SparkSession spark = sparkSession();
            ParamsIO.saveMetadata(m, path, spark, Map.of("k", m.getK(), "numFeatures", m.numFeatures()));
            List<Row> rows = new ArrayList<>(m.centers.length);
            for (int i = 0; i < m.centers.length; i++) {
                List<Double> c = new ArrayList<>(m.centers[i].length);
                for (double v : m.centers[i]) {
                    c.add(v);
                }
                rows.add(RowFactory.create(i, c));
            }
            spark.createDataFrame(rows, DATA_SCHEMA).coalesce(1).write().parquet(ParamsIO.child(path, "data"));
            if (m.summary != null) {
                spark.createDataFrame(List.of(m.summary.toRow()), GpuKMeansSummary.SCHEMA).coalesce(1)
                        .write().parquet(ParamsIO.child(path, "summary"));
            }
            ParamsIO.seal(m, path, spark);
        }
    }

    private static final class Reader extends MLReader<GpuKMeansModel> {
        @Override
        public GpuKMeansModel load(String path) {
            SparkSession spark = sparkSession();
            ParamsIO.Metadata md = ParamsIO.loadMetadata(path, spark, GpuKMeansModel.class.getName());
            List<Row> rows = spark.read().parquet(ParamsIO.child(path, "data"))
                    .select("clusterIdx", "clusterCenter").collectAsList();
            int k = rows.size();
            int expectedK = md.field("k").asInt(k);
            if (k != expectedK || k == 0) {
                throw new IllegalArgumentException("model at " + path + ": metadata says k=" + expectedK
                        + " but data holds " + k + " centres");
            }
            double[][] centers = new double[k][];
            for (Row r : rows) {
                int idx = r.getInt(0);
                if (idx < 0 || idx >= k || centers[idx] != null) {
                    throw new IllegalArgumentException("model at " + path + ": bad or repeated clusterIdx " + idx);
                }
                centers[idx] = r.<Double>getList(1).stream().mapToDouble(Double::doubleValue).toArray();
            }
            GpuKMeansModel model;
            try {
                model = new GpuKMeansModel(md.uid(), centers);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("model at " + path + ": data/ breaks an invariant of a fit: "
                        + e.getMessage(), e);
            }
            int d = md.field("numFeatures").asInt(model.numFeatures());
            if (d != model.numFeatures()) {
                throw new IllegalArgumentException("model at " + path + ": metadata says numFeatures=" + d
                        + " but data/ holds centres of " + model.numFeatures());
            }
            md.applyTo(model);
            String summaryPath = ParamsIO.child(path, "summary");
            if (exists(spark, summaryPath)) {
                List<Row> s = spark.read().parquet(summaryPath).collectAsList();
                if (s.size() != 1) {
                    throw new IllegalArgumentException("model at " + path + ": summary must hold one row, found " + s.size());
                }
                model.setSummary(GpuKMeansSummary.fromRow(s.get(0)));
            }
            return model;
        }

        private static boolean exists(SparkSession spark, String p) {
            try {
                Path hp = new Path(p);
                return hp.getFileSystem(spark.sparkContext().hadoopConfiguration()).exists(hp);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot access " + p + ": " + e.getMessage(), e);
            }
        }
    }
}
