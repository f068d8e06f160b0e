package io.sparkgpu.sql;

import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.kmeans.KMeansPredictor;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.types.StringType;
import scala.Function1;
import scala.collection.immutable.Seq;

/**
 * The SQL function {@code sparkgpu_kmeans_predict(model_path, features)}.
 *
 * <p>When Catalyst resolves a call, the builder requires {@code model_path} to be a constant string, loads
 * the {@code GpuKMeansModel} saved there on the driver and broadcasts its centres. Loaded models are
 * cached by path (at most {@value #MAX_CACHED}, least recently used first out), so a query, and later queries,
 * reuse the model and its broadcast; an entry is reloaded when the files under the path change (a save with
 * {@code overwrite()} writes new part files) or the SparkContext changed.
 */
public final class KMeansPredictFunction {
    public static final String NAME = "sparkgpu_kmeans_predict";
    static final int MAX_CACHED = 32;

    private static final Map<String, Entry> CACHE = new LinkedHashMap<>(16, 0.75f, true);
    private static final AtomicLong LOADS = new AtomicLong();

    private KMeansPredictFunction() {
    }

    static SqlFunctionSpec spec() {
        ExpressionInfo info = new ExpressionInfo(
                KMeansPredictExpression.class.getName(),
                null,
                NAME,
                "_FUNC_(model_path, features) - Returns the index (INT) of the centre of the GpuKMeansModel saved at "
                        + "model_path that is nearest to features, or NULL when features is NULL.",
                "\n    Arguments:\n"
                        + "      * model_path - a constant STRING: the directory written by GpuKMeansModel.save(path).\n"
                        + "          The model is loaded once on the driver and broadcast to the executors.\n"
                        + "      * features - an ARRAY of numbers or an ml VECTOR with the model's number of features.\n"
                        + "          NaN, infinite values or a size mismatch raise an error.\n",
                "\n    Examples:\n"
                        + "      > SELECT _FUNC_('/models/kmeans', array(0.5D, 1.5D));\n"
                        + "       1\n"
                        + "      > SELECT id, _FUNC_('/models/kmeans', features) AS cluster FROM points;\n",
                "\n    Note: distances are computed on the CPU per row with the arithmetic of GpuKMeansModel.transform,\n"
                        + "    which gives the same predictions.\n  ",
                "misc_funcs",
                "0.1.0",
                "",
                "java_udf");
        return new SqlFunctionSpec(NAME, info, builder());
    }

    private static Function1<Seq<Expression>, Expression> builder() {
        return (Function1<Seq<Expression>, Expression> & Serializable) KMeansPredictFunction::build;
    }

    /** Builds the expression for resolved arguments; errors are AnalysisExceptions. */
    static Expression build(Seq<Expression> args) {
        if (args.size() != 2) {
            throw SqlErrors.sneakyThrow(SqlErrors.wrongNumArgs(NAME, 2, args.size()));
        }
        Expression pathArg = args.apply(0);
        Expression features = args.apply(1);
        if (!pathArg.foldable()) {
            throw SqlErrors.sneakyThrow(SqlErrors.nonFoldable(NAME, args, "model_path", "STRING", pathArg));
        }
        if (!(pathArg.dataType() instanceof StringType)) {
            throw SqlErrors.sneakyThrow(SqlErrors.unexpectedType(NAME, args, "first", "STRING", pathArg));
        }
        Object v = pathArg.eval(null);
        if (v == null) {
            throw SqlErrors.sneakyThrow(SqlErrors.nullString(NAME, "model_path"));
        }
        String path = v.toString();
        return new KMeansPredictExpression(features, path, model(SparkSession.active(), path));
    }

    /** The broadcast model for {@code path}, loading it when it is not cached or its files changed. */
    static KMeansModelRef model(SparkSession spark, String path) {
        SparkContext sc = spark.sparkContext();
        String key;
        String fingerprint;
        try {
            Path p = new Path(path);
            FileSystem fs = p.getFileSystem(sc.hadoopConfiguration());
            if (!fs.exists(p)) {
                throw SqlErrors.sneakyThrow(SqlErrors.pathNotFound(path));
            }
            key = fs.makeQualified(p).toString();
            fingerprint = fingerprint(fs, p);
        } catch (IOException e) {
            throw SqlErrors.sneakyThrow(SqlErrors.failedCall(NAME, e));
        }
        synchronized (CACHE) {
            Entry e = CACHE.get(key);
            if (e != null && e.sc == sc && !sc.isStopped() && e.fingerprint.equals(fingerprint)) {
                return e.ref;
            }
            KMeansModelRef ref = load(spark, path);
            CACHE.put(key, new Entry(sc, fingerprint, ref));
            while (CACHE.size() > MAX_CACHED) {
                CACHE.remove(CACHE.keySet().iterator().next());
            }
            return ref;
        }
    }

    private static KMeansModelRef load(SparkSession spark, String path) {
        KMeansPredictor predictor;
        try {
            GpuKMeansModel m = GpuKMeansModel.read().session(spark).load(path);
            predictor = m.predictor();
        } catch (RuntimeException e) {
            AnalysisException ae = SqlErrors.failedCall(NAME, new IllegalArgumentException(
                    "cannot load a GpuKMeansModel from '" + path + "': " + e.getMessage(), e));
            throw SqlErrors.sneakyThrow(ae);
        }
        LOADS.incrementAndGet();
        Broadcast<KMeansPredictor> b = JavaSparkContext.fromSparkContext(spark.sparkContext()).broadcast(predictor);
        return new KMeansModelRef(b, predictor.k(), predictor.numFeatures());
    }

    /** Names, sizes and times of the files of the model's metadata and data directories. */
    private static String fingerprint(FileSystem fs, Path root) throws IOException {
        List<String> parts = new ArrayList<>();
        for (String sub : new String[] {"metadata", "data"}) {
            try {
                for (FileStatus s : fs.listStatus(new Path(root, sub))) {
                    parts.add(sub + "/" + s.getPath().getName() + ":" + s.getLen() + ":" + s.getModificationTime());
                }
            } catch (FileNotFoundException e) {
                parts.add(sub + ": missing");
            }
        }
        parts.sort(null);
        return String.join(";", parts);
    }

    /** Forgets every cached model (their broadcasts are cleaned up by Spark once unreferenced). */
    public static void clearCache() {
        synchronized (CACHE) {
            CACHE.clear();
        }
    }

    /** How many times a model was loaded (for tests). */
    static long loadCount() {
        return LOADS.get();
    }

    private static final class Entry {
        final SparkContext sc;
        final String fingerprint;
        final KMeansModelRef ref;

        Entry(SparkContext sc, String fingerprint, KMeansModelRef ref) {
            this.sc = sc;
            this.fingerprint = fingerprint;
            this.ref = ref;
        }
    }
}
