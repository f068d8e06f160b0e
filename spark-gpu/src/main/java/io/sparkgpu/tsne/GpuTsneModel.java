package io.sparkgpu.tsne;

import io.sparkgpu.tsne.optimize.TsneTransform;

import io.sparkgpu.common.SchemaColumns;
import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.Path;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A fitted t-SNE embedding (see {@link GpuTsne}): one point of {@code dimension} coordinates per training row,
 * keyed by the row's id. {@link #embedding()} is the (id, embedding) DataFrame; {@link #transform} joins the
 * embedding to rows of fitted ids and places rows of other ids into the fixed map from their featuresCol
 * ({@link TsneTransform}, openTSNE's transform: kNN into the fit's features, the fit's perplexity and dof, only the new
 * points optimised, each independently of the others) when the model has the fit's {@link TsneReference} (feature
 * mode); without one (graph mode, or a model built from coordinates) such ids are an error.
 *
 * <p>Saved as {@code path/metadata} (MLlib layout, plus numPoints and dimension, and with a reference its
 * referenceDim, inputDim, perplexity and k), {@code path/data} (Parquet rows {@code index: int, id,
 * embedding: array<double>}), {@code path/summary} (Parquet, one row), with a reference {@code path/reference}
 * (Parquet rows {@code index: int, features: array<float>}) and, after a PCA, {@code path/pca} (one row
 * {@code basis: array<double>}); every file is sealed by {@link ParamsIO#seal}. The embedding and the reference are
 * held on the driver (n * dimension doubles, n ids, n * referenceDim floats).
 */
public class GpuTsneModel extends Model<GpuTsneModel> implements GpuTsneModelParams<GpuTsneModel>, MLWritable {
    private static final long serialVersionUID = 1L;
    private static final String JOIN_KEY = "__sparkgpu_tsne_id";

    private final String uid;
    private final Object[] ids;
    private final DataType idType;
    private final double[] embedding;
    private final int dimension;
    private final ParamSlots slots = new ParamSlots();
    private GpuTsneSummary summary;
    /** What the fit returned (not saved): null for a loaded or built model. */
    private transient TsneFit trainingFit;
    private transient volatile Lookup lookup;
    /** The fit's features for new rows, or null (graph mode, built from coordinates). */
    private TsneReference reference;

    /**
     * A model for the given ids (numbers or strings, unique) and row-major n x dimension coordinates (copied).
     * Models normally come from {@link GpuTsne#fit} or {@link #load}.
     */
    public GpuTsneModel(String uid, Object[] ids, DataType idType, double[] embedding, int dimension) {
        if (dimension < 1 || dimension > 3) {
            throw new IllegalArgumentException("dimension must be 1, 2 or 3, got " + dimension);
        }
        if (embedding.length != (long) ids.length * dimension) {
            throw new IllegalArgumentException("embedding holds " + embedding.length + " values for " + ids.length
                    + " ids of dimension " + dimension);
        }
        this.uid = uid;
        this.ids = ids.clone();
        this.idType = idType;
        this.embedding = embedding.clone();
        this.dimension = dimension;
        setDefault(idCol(), GENERATED_ID);
        setDefault(outputCol(), DEFAULT_OUTPUT);
        setDefault(featuresCol(), io.sparkgpu.ml.HasFeaturesCol.DEFAULT);
        TsneTransform.Settings ts = new TsneTransform.Settings();
        setDefault(dof(), new TsneConfig().dof);
        setDefault(transformMaxIter(), ts.maxIter);
        setDefault(transformLearningRate(), ts.learningRate);
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    /** Number of embedded points. */
    public int numPoints() {
        return ids.length;
    }

    public int dimension() {
        return dimension;
    }

    /** Type of the id column. */
    public DataType idType() {
        return idType;
    }

    /** A copy of the row-major n x dimension coordinates, in training row order. */
    public double[] embeddingArray() {
        return embedding.clone();
    }

    /** A copy of the ids in training row order. */
    public Object[] ids() {
        return ids.clone();
    }

    /** The coordinates of the point with this id, or null when the id was not fitted. */
    public double[] embeddingOf(Object id) {
        return lookup().get(id);
    }

    /** The id-to-coordinates map (built once; serializable, e.g. to broadcast). */
    public Lookup lookup() {
        Lookup l = lookup;
        if (l == null) {
            l = new Lookup(ids, embedding, dimension);
            lookup = l;
        }
        return l;
    }

    /** The embedding as a DataFrame (idCol name, outputCol vector), one row per fitted point, in row order. */
    public Dataset<Row> embedding() {
        return embedding(SparkSession.active());
    }

    public Dataset<Row> embedding(SparkSession spark) {
        List<Row> rows = new ArrayList<>(ids.length);
        for (int i = 0; i < ids.length; i++) {
            double[] v = new double[dimension];
            System.arraycopy(embedding, i * dimension, v, 0, dimension);
            rows.add(RowFactory.create(ids[i], Vectors.dense(v)));
        }
        StructType schema = new StructType().add(getIdCol(), idType, false)
                .add(getOutputCol(), SQLDataTypes.VectorType(), false);
        return spark.createDataFrame(rows, schema);
    }

    /**
     * The rows of {@code dataset} with outputCol appended: the fitted embedding of each row's idCol value; rows of
     * ids that were not fitted are placed into the map from their featuresCol ({@link TsneTransform}) when the model
     * has a reference ({@link #hasReference()}), else they are an {@link IllegalArgumentException} naming one of
     * them; NULL ids are an error. Row order is not kept (fitted rows first).
     */
    @Override
    public Dataset<Row> transform(Dataset<?> dataset) {
        transformSchema(dataset.schema());
        String id = getIdCol();
        Dataset<Row> df = dataset.toDF();
        if (!df.filter(df.col(id).isNull()).limit(1).isEmpty()) {
            throw new IllegalArgumentException("idCol '" + id + "' contains a null value; only fitted ids have an "
                    + "embedding");
        }
        Dataset<Row> emb = embedding(dataset.sparkSession()).withColumnRenamed(getIdCol(), JOIN_KEY);
        Column key = df.col(id).cast(idType);
        Dataset<Row> known = df.join(emb, key.equalTo(emb.col(JOIN_KEY)), "inner").drop(JOIN_KEY);
        Dataset<Row> fresh = df.join(emb, key.equalTo(emb.col(JOIN_KEY)), "left_anti");
        if (reference == null) {
            List<Row> unknown = fresh.select(id).limit(3).collectAsList();
            if (!unknown.isEmpty()) {
                List<Object> names = new ArrayList<>();
                for (Row r : unknown) {
                    names.add(r.get(0));
                }
                throw new IllegalArgumentException("idCol '" + id + "' holds ids that were not fitted, e.g. " + names
                        + "; this model has no reference features to place new rows (graph mode, or built from "
                        + "coordinates): fit again with these rows, or fit in feature mode");
            }
            return known;
        }
        if (fresh.isEmpty()) {
            return known;
        }
        return known.unionByName(placeNew(fresh));
    }

    /**
     * What placing new rows needs, serializable (to broadcast; e.g. the SQL function): the fitted points' lookup, and
     * with a reference the embedding, reference, {@link #transformConfig()} and {@link #transformSettings()}.
     */
    public Placer placer() {
        return new Placer(lookup(), embedding, reference, reference == null ? null : transformConfig(),
                transformSettings());
    }

    /** See {@link #placer()}. */
    public static final class Placer implements Serializable {
        private static final long serialVersionUID = 1L;
        private final Lookup lookup;
        private final double[] embedding;
        private final TsneReference reference;
        private final TsneConfig config;
        private final TsneTransform.Settings settings;

        Placer(Lookup lookup, double[] embedding, TsneReference reference, TsneConfig config,
                TsneTransform.Settings settings) {
            this.lookup = lookup;
            this.embedding = embedding;
            this.reference = reference;
            this.config = config;
            this.settings = settings;
        }

        /** The fitted points. */
        public Lookup lookup() {
            return lookup;
        }

        /** Whether new rows can be placed (the model kept its reference features). */
        public boolean canPlace() {
            return reference != null;
        }

        /**
         * Places new rows (each inputDim finite features; {@code what} names their column in errors) into the map:
         * nq x dimension coordinates, each row independent of the others ({@link TsneTransform}).
         */
        public double[] place(List<double[]> rows, String what) {
            if (reference == null) {
                throw new IllegalArgumentException("this model has no reference features to place new rows (graph "
                        + "mode, or built from coordinates)");
            }
            TsneReference ref = reference;
            int nq = rows.size();
            float[] x = new float[nq * ref.d];
            for (int r = 0; r < nq; r++) {
                double[] v = rows.get(r).clone();
                if (v.length != ref.inputDim) {
                    throw new IllegalArgumentException(what + " has vectors of size " + v.length + ", but the model "
                            + "was fitted on " + ref.inputDim + " features");
                }
                for (int a = 0; a < v.length; a++) {
                    if (!Double.isFinite(v[a])) {
                        throw new IllegalArgumentException(what + " contains " + v[a] + " (index " + a + "); t-SNE "
                                + "needs finite features");
                    }
                    v[a] += 0.0; // as the fit: -0.0 becomes 0.0
                }
                ref.encode(v, x, r * ref.d);
                for (int a = 0; a < ref.d; a++) { // finite doubles can still overflow the floats t-SNE computes in
                    if (!Float.isFinite(x[r * ref.d + a])) {
                        throw new IllegalArgumentException(what + " holds values beyond the float range t-SNE computes "
                                + "in (coordinate " + a + " of a row" + (ref.d != ref.inputDim ? " after the fit's PCA"
                                : "") + " is " + x[r * ref.d + a] + "); rescale the features");
                    }
                }
            }
            return TsneTransform.embed(embedding, ref.features, ref.n, ref.d, x, nq, ref.k, config, settings, null);
        }
    }

    /** The settings of the transform of new rows: the fit's dimension, perplexity and dof, this model's backend. */
    TsneConfig transformConfig() {
        TsneConfig cfg = new TsneConfig();
        cfg.dimension = dimension;
        cfg.perplexity = reference.perplexity;
        cfg.k = reference.k;
        cfg.dof = getDof();
        cfg.backend = io.sparkgpu.cuda.SparkGpuConf.backend(backendSetting());
        return cfg;
    }

    /** The transform's optimisation settings (transformMaxIter, transformLearningRate). */
    TsneTransform.Settings transformSettings() {
        TsneTransform.Settings st = new TsneTransform.Settings();
        st.maxIter = getTransformMaxIter();
        st.learningRate = getTransformLearningRate();
        return st;
    }

    /**
     * Rows of ids that were not fitted, placed by {@link TsneTransform} partition by partition (each new row depends
     * only on the reference, so the partitioning does not change a bit); featuresCol must hold the fit's inputDim
     * finite numbers.
     */
    private Dataset<Row> placeNew(Dataset<Row> fresh) {
        String featuresCol = getFeaturesCol();
        StructType in = fresh.schema();
        int fIdx = io.sparkgpu.common.Features.checkFeatures(in, featuresCol);
        StructType out = GpuTsneModelParams.appendOutput(in, getOutputCol());
        SparkSession spark = fresh.sparkSession();
        org.apache.spark.broadcast.Broadcast<Placer> bp = org.apache.spark.api.java.JavaSparkContext
                .fromSparkContext(spark.sparkContext()).broadcast(placer());
        org.apache.spark.api.java.JavaRDD<Row> rows = fresh.javaRDD().mapPartitions(it -> {
            List<Row> buf = new ArrayList<>();
            it.forEachRemaining(buf::add);
            int nq = buf.size();
            List<double[]> xs = new ArrayList<>(nq);
            for (Row row : buf) {
                xs.add(io.sparkgpu.common.Features.read(row, fIdx, featuresCol));
            }
            double[] y = bp.value().place(xs, "featuresCol '" + featuresCol + "'");
            int dim = dimension;
            List<Row> res = new ArrayList<>(nq);
            for (int r = 0; r < nq; r++) {
                Row row = buf.get(r);
                Object[] vals = new Object[row.size() + 1];
                for (int c = 0; c < row.size(); c++) {
                    vals[c] = row.get(c);
                }
                vals[row.size()] = Vectors.dense(java.util.Arrays.copyOfRange(y, r * dim, (r + 1) * dim));
                res.add(RowFactory.create(vals));
            }
            return res.iterator();
        });
        return spark.createDataFrame(rows, out);
    }

    /** Checks idCol exists and appends outputCol (vector). */
    @Override
    public StructType transformSchema(StructType schema) {
        SchemaColumns.index(schema, getIdCol(), "idCol");
        return GpuTsneModelParams.appendOutput(schema, getOutputCol());
    }

    @Override
    public GpuTsneModel copy(ParamMap extra) {
        GpuTsneModel c = copyValues(new GpuTsneModel(uid, ids, idType, embedding, dimension), extra);
        c.summary = summary;
        c.trainingFit = trainingFit;
        c.reference = reference;
        return hasParent() ? c.setParent(parent()) : c;
    }

    public boolean hasSummary() {
        return summary != null;
    }

    /** The training summary; IllegalStateException when the model has none (see {@link #hasSummary()}). */
    public GpuTsneSummary summary() {
        if (summary == null) {
            throw new IllegalStateException("GpuTsneModel " + uid + " has no training summary: only models produced "
                    + "by GpuTsne.fit (or loaded from one) have one; check hasSummary() first");
        }
        return summary;
    }

    /** Whether rows of ids that were not fitted can be placed ({@link #transform}): the fit's features are kept. */
    public boolean hasReference() {
        return reference != null;
    }

    /** The fit's reference features for new rows, or null. */
    public TsneReference reference() {
        return reference;
    }

    /** Sets the reference (n rows in training order, as the embedding); null: new rows are an error. */
    public GpuTsneModel setReference(TsneReference r) {
        if (r != null && r.n != ids.length) {
            throw new IllegalArgumentException("reference holds " + r.n + " rows for " + ids.length + " points");
        }
        this.reference = r;
        return this;
    }

    GpuTsneModel setSummary(GpuTsneSummary s) {
        this.summary = s;
        return this;
    }

    void setTrainingFit(TsneFit f) {
        this.trainingFit = f;
    }

    /**
     * What the fit that produced this model returned (result with KL history and timings, ids, features used,
     * quality), or null for a loaded or built model: it is not saved.
     */
    public TsneFit trainingFit() {
        return trainingFit;
    }

    @Override
    public String toString() {
        return "GpuTsneModel: uid=" + uid + ", numPoints=" + ids.length + ", dimension=" + dimension;
    }

    /** Id to coordinates; numbers compare by their long value, other ids by their string. */
    public static final class Lookup implements Serializable {
        private static final long serialVersionUID = 1L;
        private final Map<Object, Integer> index;
        private final double[] embedding;
        private final int dimension;

        Lookup(Object[] ids, double[] embedding, int dimension) {
            this.index = new HashMap<>(ids.length * 2);
            for (int i = 0; i < ids.length; i++) {
                index.put(key(ids[i]), i);
            }
            this.embedding = embedding;
            this.dimension = dimension;
        }

        /** Normalised key: integral numbers as Long, other numbers as Double, anything else as its string. */
        public static Object key(Object id) {
            if (id instanceof Long || id instanceof Integer || id instanceof Short || id instanceof Byte) {
                return ((Number) id).longValue();
            }
            if (id instanceof Number) {
                double v = ((Number) id).doubleValue();
                return v == Math.rint(v) && Math.abs(v) < 0x1p62 ? (Object) (long) v : (Object) v;
            }
            return id.toString();
        }

        public double[] get(Object id) {
            Integer i = id == null ? null : index.get(key(id));
            if (i == null) {
                return null;
            }
            double[] v = new double[dimension];
            System.arraycopy(embedding, i * dimension, v, 0, dimension);
            return v;
        }

        public int dimension() {
            return dimension;
        }

        public int size() {
            return index.size();
        }
    }

    // ------------------------------------------------------------------ persistence

    @Override
    public MLWriter write() {
        return new Writer(this);
    }

    public static MLReader<GpuTsneModel> read() {
        return new Reader();
    }

    public static GpuTsneModel load(String path) {
        return read().load(path);
    }

    private static final class Writer extends MLWriter {
        private final GpuTsneModel m;

        Writer(GpuTsneModel m) {
            this.m = m;
        }

        @Override
        public void saveImpl(String path) {
            SparkSession spark = sparkSession();
            Map<String, Object> extra = new HashMap<>(Map.of("numPoints", m.ids.length, "dimension", m.dimension));
            TsneReference ref = m.reference;
            if (ref != null) {
                extra.putAll(Map.of("referenceDim", ref.d, "inputDim", ref.inputDim, "perplexity", ref.perplexity,
                        "k", ref.k));
            }
            ParamsIO.saveMetadata(m, path, spark, extra);
            List<Row> rows = new ArrayList<>(m.ids.length);
            for (int i = 0; i < m.ids.length; i++) {
                List<Double> c = new ArrayList<>(m.dimension);
                for (int a = 0; a < m.dimension; a++) {
                    c.add(m.embedding[i * m.dimension + a]);
                }
                rows.add(RowFactory.create(i, m.ids[i], c));
            }
            StructType schema = new StructType().add("index", DataTypes.IntegerType, false)
                    .add("id", m.idType, false)
                    .add("embedding", DataTypes.createArrayType(DataTypes.DoubleType, false), false);
            spark.createDataFrame(rows, schema).coalesce(1).write().parquet(ParamsIO.child(path, "data"));
            if (m.summary != null) {
                spark.createDataFrame(List.of(m.summary.toRow()), GpuTsneSummary.SCHEMA).coalesce(1)
                        .write().parquet(ParamsIO.child(path, "summary"));
            }
            if (ref != null) {
                List<Row> fr = new ArrayList<>(ref.n);
                for (int i = 0; i < ref.n; i++) {
                    List<Float> v = new ArrayList<>(ref.d);
                    for (int a = 0; a < ref.d; a++) {
                        v.add(ref.features[i * ref.d + a]);
                    }
                    fr.add(RowFactory.create(i, v));
                }
                StructType fs = new StructType().add("index", DataTypes.IntegerType, false)
                        .add("features", DataTypes.createArrayType(DataTypes.FloatType, false), false);
                spark.createDataFrame(fr, fs).coalesce(1).write().parquet(ParamsIO.child(path, "reference"));
                if (ref.pca != null) {
                    List<Double> b = new ArrayList<>(ref.pca.length);
                    for (double v : ref.pca) {
                        b.add(v);
                    }
                    StructType ps = new StructType().add("basis",
                            DataTypes.createArrayType(DataTypes.DoubleType, false), false);
                    spark.createDataFrame(List.of(RowFactory.create(b)), ps).coalesce(1).write()
                            .parquet(ParamsIO.child(path, "pca"));
                }
            }
            ParamsIO.seal(m, path, spark);
        }
    }

    private static final class Reader extends MLReader<GpuTsneModel> {
        @Override
        public GpuTsneModel load(String path) {
            SparkSession spark = sparkSession();
            ParamsIO.Metadata md = ParamsIO.loadMetadata(path, spark, GpuTsneModel.class.getName());
            Dataset<Row> data = spark.read().parquet(ParamsIO.child(path, "data"));
            DataType idType = data.schema().apply("id").dataType();
            List<Row> rows = data.select("index", "id", "embedding").collectAsList();
            int n = rows.size();
            int dim = md.field("dimension").asInt(0);
            if (n != md.field("numPoints").asInt(-1) || n == 0) {
                throw new IllegalArgumentException("model at " + path + ": metadata says numPoints="
                        + md.field("numPoints") + " but data holds " + n + " rows");
            }
            Object[] ids = new Object[n];
            double[] emb = new double[n * dim];
            boolean[] seen = new boolean[n];
            for (Row r : rows) {
                int i = r.getInt(0);
                List<Double> v = r.getList(2);
                if (i < 0 || i >= n || seen[i] || v.size() != dim) {
                    throw new IllegalArgumentException("model at " + path + ": bad or repeated row index " + i);
                }
                seen[i] = true;
                ids[i] = r.get(1);
                for (int a = 0; a < dim; a++) {
                    emb[i * dim + a] = v.get(a);
                    if (!Double.isFinite(emb[i * dim + a])) {
                        throw new IllegalArgumentException("model at " + path + ": data/ row " + i
                                + " has a non-finite coordinate " + emb[i * dim + a]);
                    }
                }
            }
            java.util.Map<Object, Integer> firstOf = new java.util.HashMap<>();
            for (int i = 0; i < n; i++) {
                Object key = ids[i] instanceof byte[] ? java.nio.ByteBuffer.wrap((byte[]) ids[i]) : ids[i];
                Integer j = key == null ? null : firstOf.putIfAbsent(key, i);
                if (key == null || j != null) {
                    throw new IllegalArgumentException("model at " + path + ": data/ ids must be unique and not "
                            + "null, but row " + i + (key == null ? " has a null id" : " repeats the id of row " + j
                            + " (" + ids[i] + ")"));
                }
            }
            GpuTsneModel model = new GpuTsneModel(md.uid(), ids, idType, emb, dim);
            md.applyTo(model);
            if (md.field("referenceDim") != null && !md.field("referenceDim").isMissingNode()
                    && !md.field("referenceDim").isNull()) {
                model.setReference(loadReference(spark, path, md, n));
            }
            String summaryPath = ParamsIO.child(path, "summary");
            try {
                Path hp = new Path(summaryPath);
                if (hp.getFileSystem(spark.sparkContext().hadoopConfiguration()).exists(hp)) {
                    List<Row> s = spark.read().parquet(summaryPath).collectAsList();
                    if (s.size() != 1) {
                        throw new IllegalArgumentException("model at " + path + ": summary must hold one row");
                    }
                    model.setSummary(GpuTsneSummary.fromRow(s.get(0)));
                }
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot access " + summaryPath + ": " + e.getMessage(), e);
            }
            return model;
        }
    }

    /** The reference of a saved model: n rows of referenceDim finite floats, indices 0..n-1 once each, the PCA basis. */
    private static TsneReference loadReference(SparkSession spark, String path, ParamsIO.Metadata md, int n) {
        int d = md.field("referenceDim").asInt(0);
        int inputDim = md.field("inputDim").asInt(0);
        if (d < 1 || inputDim < d) {
            throw new IllegalArgumentException("model at " + path + ": metadata has referenceDim=" + d + ", inputDim="
                    + inputDim + "; expected 1 <= referenceDim <= inputDim");
        }
        List<Row> rows = spark.read().parquet(ParamsIO.child(path, "reference")).select("index", "features")
                .collectAsList();
        if (rows.size() != n) {
            throw new IllegalArgumentException("model at " + path + ": reference/ holds " + rows.size() + " rows for "
                    + n + " points");
        }
        float[] x = new float[n * d];
        boolean[] seen = new boolean[n];
        for (Row r : rows) {
            int i = r.getInt(0);
            List<Float> v = r.getList(1);
            if (i < 0 || i >= n || seen[i] || v.size() != d) {
                throw new IllegalArgumentException("model at " + path + ": reference/ has a bad or repeated row index "
                        + i + " or a row of " + v.size() + " features (expected " + d + ")");
            }
            seen[i] = true;
            for (int a = 0; a < d; a++) {
                x[i * d + a] = v.get(a);
            }
        }
        double[] pca = null;
        if (inputDim != d) {
            List<Row> b = spark.read().parquet(ParamsIO.child(path, "pca")).collectAsList();
            if (b.size() != 1) {
                throw new IllegalArgumentException("model at " + path + ": pca/ must hold one row");
            }
            List<Double> v = b.get(0).getList(0);
            pca = new double[v.size()];
            for (int t = 0; t < pca.length; t++) {
                pca[t] = v.get(t);
            }
        }
        try {
            return new TsneReference(x, n, d, inputDim, pca, md.field("perplexity").asDouble(Double.NaN),
                    md.field("k").asInt(0));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("model at " + path + ": " + e.getMessage(), e);
        }
    }

    /** For tests: the embedding vector of row i. */
    Vector vector(int i) {
        double[] v = new double[dimension];
        System.arraycopy(embedding, i * dimension, v, 0, dimension);
        return Vectors.dense(v);
    }
}
