package io.sparkgpu.sql;

import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.isotonic.IsotonicPredictor;
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
 * The SQL function {@code sparkgpu_isotonic_predict(model_path, x)}.
 *
 * <p>When Catalyst resolves a call, the builder requires {@code model_path} to be a constant string, loads
 * the {@code GpuIsotonicRegressionModel} saved there on the driver and broadcasts its boundaries and predictions. Loaded models are
 * cached by path (at most {@value #MAX_CACHED}, least recently used first out), so a query, and later queries,
 * reuse the model and its broadcast; an entry is reloaded when the files under the path change (a save with
 * {@code overwrite()} writes new part files) or the SparkContext changed.
 */
public final class IsotonicPredictFunction {
    public static final String NAME = "sparkgpu_isotonic_predict";
    static final int MAX_CACHED = 32;

    private static final Map<String, Entry> CACHE = new LinkedHashMap<>(16, 0.75f, true);
    private static final AtomicLong LOADS = new AtomicLong();

    private IsotonicPredictFunction() {
    }

    static SqlFunctionSpec spec() {
        ExpressionInfo info = new ExpressionInfo(
                IsotonicPredictExpression.class.getName(),
                null,
                NAME,
                "_FUNC_(model_path, x) - Returns the prediction (DOUBLE) of the GpuIsotonicRegressionModel saved at "
                        + "model_path at feature x, or NULL when x is NULL.",
                "\n    Arguments:\n"
                        + "      * model_path - a constant STRING: the directory written by GpuIsotonicRegressionModel.save(path).\n"
                        + "          The model is loaded once on the driver and broadcast to the executors.\n"
                        + "      * x - a number, or an ml VECTOR (the model's featureIndex picks the element).\n"
                        + "          Between boundaries the prediction is interpolated linearly; outside them the\n"
                        + "          model's outOfBounds policy applies (clip, nan or error). NaN gives NaN.\n",
                "\n    Examples:\n"
                        + "      > SELECT _FUNC_('/models/iso', 2.5D);\n"
                        + "      > SELECT id, _FUNC_('/models/iso', score) AS calibrated FROM scores;\n",
                "\n    Note: evaluated on the CPU per row with the arithmetic of GpuIsotonicRegressionModel.predict.\n  ",
                "misc_funcs",
                "0.1.0",
                "",
                "java_udf");
        return new SqlFunctionSpec(NAME, info, builder());
    }

    private static Function1<Seq<Expression>, Expression> builder() {
        return (Function1<Seq<Expression>, Expression> & Serializable) IsotonicPredictFunction::build;
    }

    /** Builds the expression for resolved arguments; errors are AnalysisExceptions. */
    static Expression build(Seq<Expression> args) {
        if (args.size() != 2) {
            throw SqlErrors.sneakyThrow(SqlErrors.wrongNumArgs(NAME, 2, args.size()));
        }
        Expression pathArg = args.apply(0);
        Expression x = args.apply(1);
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
        return new IsotonicPredictExpression(x, path, model(SparkSession.active(), path));
    }

    /** The broadcast model for {@code path}, loading it when it is not cached or its files changed. */
    static IsotonicModelRef model(SparkSession spark, String path) {
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
            IsotonicModelRef ref = load(spark, path);
            CACHE.put(key, new Entry(sc, fingerprint, ref));
            while (CACHE.size() > MAX_CACHED) {
                CACHE.remove(CACHE.keySet().iterator().next());
            }
            return ref;
        }
    }

    private static IsotonicModelRef load(SparkSession spark, String path) {
        IsotonicPredictor predictor;
        int featureIndex;
        try {
            GpuIsotonicRegressionModel m = GpuIsotonicRegressionModel.read().session(spark).load(path);
            predictor = m.predictor();
            featureIndex = m.getFeatureIndex();
        } catch (RuntimeException e) {
            AnalysisException ae = SqlErrors.failedCall(NAME, new IllegalArgumentException(
                    "cannot load a GpuIsotonicRegressionModel from '" + path + "': " + e.getMessage(), e));
            throw SqlErrors.sneakyThrow(ae);
        }
        LOADS.incrementAndGet();
        Broadcast<IsotonicPredictor> b = JavaSparkContext.fromSparkContext(spark.sparkContext()).broadcast(predictor);
        return new IsotonicModelRef(b, featureIndex);
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
        final IsotonicModelRef ref;

        Entry(SparkContext sc, String fingerprint, IsotonicModelRef ref) {
            this.sc = sc;
            this.fingerprint = fingerprint;
            this.ref = ref;
        }
    }
}
