package io.sparkgpu.sql;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.StringType;
import scala.collection.immutable.Seq;

/**
 * What every "predict with the model saved at a path" SQL function shares: the check that the first argument
 * is a constant, non-null string, and a driver-side cache of loaded models (usually holding a broadcast) keyed
 * by the qualified path. At most {@value #MAX_CACHED} models are kept, least recently used first out; an entry
 * is reloaded when the files under the path's {@code metadata} and {@code data} directories change (a save with
 * {@code overwrite()} writes new part files) or the SparkContext changed.
 *
 * @param <R> what a function keeps per model (e.g. a broadcast predictor plus its shape)
 */
final class SavedModelCache<R> {
    static final int MAX_CACHED = 32;

    private final String function;
    private final BiFunction<SparkSession, String, R> loader;
    private final Map<String, Entry<R>> cache = new LinkedHashMap<>(16, 0.75f, true);
    private final AtomicLong loads = new AtomicLong();

    /** @param loader loads the model at a path; throws an AnalysisException (via SqlErrors) when it cannot */
    SavedModelCache(String function, BiFunction<SparkSession, String, R> loader) {
        this.function = function;
        this.loader = loader;
    }

    /**
     * The constant string path of {@code args.apply(0)} for a call with exactly {@code arity} arguments; any
     * other call is an AnalysisException naming the function.
     */
    String literalPath(Seq<Expression> args, int arity) {
        if (args.size() != arity) {
            throw SqlErrors.sneakyThrow(SqlErrors.wrongNumArgs(function, arity, args.size()));
        }
        Expression pathArg = args.apply(0);
        if (!pathArg.foldable()) {
            throw SqlErrors.sneakyThrow(SqlErrors.nonFoldable(function, args, "model_path", "STRING", pathArg));
        }
        if (!(pathArg.dataType() instanceof StringType)) {
            throw SqlErrors.sneakyThrow(SqlErrors.unexpectedType(function, args, "first", "STRING", pathArg));
        }
        Object v = pathArg.eval(null);
        if (v == null) {
            throw SqlErrors.sneakyThrow(SqlErrors.nullString(function, "model_path"));
        }
        return v.toString();
    }

    /** The cached model for {@code path}, loading it when it is not cached or its files changed. */
    R get(SparkSession spark, String path) {
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
        } catch (IOException | IllegalArgumentException e) { // e.g. '' or a malformed URI: Hadoop's Path refuses it
            throw SqlErrors.sneakyThrow(SqlErrors.failedCall(function, new IllegalArgumentException("model_path '"
                    + path + "': " + e.getMessage(), e)));
        }
        synchronized (cache) {
            Entry<R> e = cache.get(key);
            if (e != null && e.sc == sc && !sc.isStopped() && e.fingerprint.equals(fingerprint)) {
                return e.ref;
            }
            R ref = loader.apply(spark, path);
            loads.incrementAndGet();
            cache.put(key, new Entry<>(sc, fingerprint, ref));
            while (cache.size() > MAX_CACHED) {
                cache.remove(cache.keySet().iterator().next());
            }
            return ref;
        }
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
    void clear() {
        synchronized (cache) {
            cache.clear();
        }
    }

    /** How many times a model was loaded (for tests). */
    long loads() {
        return loads.get();
    }

    private static final class Entry<R> {
        final SparkContext sc;
        final String fingerprint;
        final R ref;

        Entry(SparkContext sc, String fingerprint, R ref) {
            this.sc = sc;
            this.fingerprint = fingerprint;
            this.ref = ref;
        }
    }
}
