package io.sparkgpu.tsne;

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
 * embedding to rows of fitted ids (an id that was not fitted is an error: t-SNE has no out-of-sample map).
 *
 * <p>Saved as {@code path/metadata} (MLlib layout, plus numPoints and dimension), {@code path/data} (Parquet rows
 * {@code index: int, id, embedding: array<double>}) and {@code path/summary} (Parquet, one row). The embedding is
 * held on the driver (n * dimension doubles and n ids).
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
     * The rows of {@code dataset} with outputCol appended: the embedding of each row's idCol value. Ids that were
     * not fitted are an {@link IllegalArgumentException} naming one of them; NULL ids too.
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
        List<Row> unknown = df.join(emb, key.equalTo(emb.col(JOIN_KEY)), "left_anti").select(id).limit(3)
                .collectAsList();
        if (!unknown.isEmpty()) {
            List<Object> names = new ArrayList<>();
            for (Row r : unknown) {
                names.add(r.get(0));
            }
            throw new IllegalArgumentException("idCol '" + id + "' holds ids that were not fitted, e.g. " + names
                    + "; t-SNE embeds only the training rows (fit again with these rows to embed them)");
        }
        return df.join(emb, key.equalTo(emb.col(JOIN_KEY)), "inner").drop(JOIN_KEY);
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
            ParamsIO.saveMetadata(m, path, spark, Map.of("numPoints", m.ids.length, "dimension", m.dimension));
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

    /** For tests: the embedding vector of row i. */
    Vector vector(int i) {
        double[] v = new double[dimension];
        System.arraycopy(embedding, i * dimension, v, 0, dimension);
        return Vectors.dense(v);
    }
}
