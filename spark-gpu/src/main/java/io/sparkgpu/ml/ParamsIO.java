package io.sparkgpu.ml;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.Option;

/**
 * Params metadata in the layout of MLlib's {@code DefaultParamsWriter}: {@code path/metadata} is a text
 * file with one line of JSON holding {@code class}, {@code timestamp}, {@code sparkVersion}, {@code uid},
 * {@code paramMap} (explicitly set params) and {@code defaultParamMap} (default values), each value being
 * the JSON that {@link Param#jsonEncode} produced, plus optional extra top-level fields. Because the layout
 * matches, MLlib's {@code Pipeline} persistence can find our stages (it reads {@code class} and calls the
 * class's static {@code read()}).
 */
public final class ParamsIO {
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * Version of the saved layout written by this code, recorded in the metadata ({@value #FORMAT_FIELD}) and in
     * {@value #INTEGRITY}. A reader refuses a higher one; metadata without it is a model saved before it existed
     * (format 0) and loads as before.
     */
    public static final int FORMAT_VERSION = 1;
    public static final String FORMAT_FIELD = "sparkgpuFormat";
    public static final String CAPABILITY_FIELD = "capability";
    /**
     * The integrity record {@link #seal} writes last: format, capability and the size and SHA-256 digest of every
     * file in the saved object's sub-directories (files at the top level, such as the CLI's summary.json, and
     * hidden ones, such as Hadoop's .crc and _SUCCESS, are not part of it).
     */
    public static final String INTEGRITY = "integrity.json";

    private ParamsIO() {
    }

    /** Location of the metadata directory of an object saved at {@code path}. */
    public static String metadataPath(String path) {
        return new Path(path, "metadata").toString();
    }

    /** Child directory {@code name} of {@code path}. */
    public static String child(String path, String name) {
        return new Path(path, name).toString();
    }

    /** Writes {@code path/metadata}; {@code extra} (may be null) adds top-level fields (numbers, strings, booleans). */
    public static void saveMetadata(Params instance, String path, SparkSession spark, Map<String, ?> extra) {
        String json = metadataJson(instance, spark.version(), extra);
        spark.createDataset(Collections.singletonList(json), Encoders.STRING()).coalesce(1)
                .write().text(metadataPath(path));
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static String metadataJson(Params instance, String sparkVersion, Map<String, ?> extra) {
        ObjectNode root = JSON.createObjectNode();
        root.put("class", instance.getClass().getName());
        root.put("timestamp", System.currentTimeMillis());
        root.put("sparkVersion", sparkVersion);
        root.put("uid", instance.uid());
        root.put(FORMAT_FIELD, FORMAT_VERSION);
        root.put(CAPABILITY_FIELD, capability(instance.getClass().getName()));
        ObjectNode set = root.putObject("paramMap");
        ObjectNode defaults = root.putObject("defaultParamMap");
        for (Param p : instance.params()) {
            Option value = instance.get(p);
            if (value.isDefined()) {
                set.set(p.name(), parse(p.jsonEncode(value.get()), p.name()));
            }
            Option dflt = instance.getDefault(p);
            if (dflt.isDefined()) {
                defaults.set(p.name(), parse(p.jsonEncode(dflt.get()), p.name()));
            }
        }
        if (extra != null) {
            // in key order: callers pass Map.of, whose iteration order changes from one JVM to the next, and the
            // same model must be saved as the same bytes (StandaloneClusterIT compares them)
            for (Map.Entry<String, ?> e : new java.util.TreeMap<String, Object>(extra).entrySet()) {
                root.set(e.getKey(), JSON.valueToTree(e.getValue()));
            }
        }
        try {
            return JSON.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write metadata of " + instance.uid(), e);
        }
    }

    private static JsonNode parse(String json, String what) {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("param " + what + " produced invalid JSON: " + json, e);
        }
    }

    /**
     * What a saved class is, in words that survive a class rename: its package's last name and whether it is a
     * model, e.g. {@code "kmeans model"} for {@code io.sparkgpu.kmeans.GpuKMeansModel}.
     */
    public static String capability(String className) {
        String pkg = className.contains(".") ? className.substring(0, className.lastIndexOf('.')) : "";
        String simple = className.substring(className.lastIndexOf('.') + 1);
        return pkg.substring(pkg.lastIndexOf('.') + 1) + (simple.endsWith("Model") ? " model" : " estimator");
    }

    /**
     * Writes {@code path/}{@value #INTEGRITY}: call it last in {@code saveImpl}, after every file of the object.
     * {@link #loadMetadata} then refuses the object if a recorded file is missing, changed (size or digest) or
     * joined by another one.
     */
    public static void seal(Params instance, String path, SparkSession spark) {
        Path root = new Path(path);
        try {
            FileSystem fs = root.getFileSystem(spark.sparkContext().hadoopConfiguration());
            ObjectNode rec = JSON.createObjectNode();
            rec.put(FORMAT_FIELD, FORMAT_VERSION);
            rec.put(CAPABILITY_FIELD, capability(instance.getClass().getName()));
            rec.put("class", instance.getClass().getName());
            rec.put("digest", "SHA-256");
            ObjectNode files = rec.putObject("files");
            for (Map.Entry<String, Path> f : sealedFiles(fs, root).entrySet()) {
                ObjectNode e = files.putObject(f.getKey());
                e.put("bytes", fs.getFileStatus(f.getValue()).getLen());
                e.put("sha256", sha256(fs, f.getValue()));
            }
            try (java.io.OutputStream os = fs.create(new Path(root, INTEGRITY), false)) {
                os.write(JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(rec));
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + INTEGRITY + " of " + path + ": " + e.getMessage(), e);
        }
    }

    /** The files {@link #seal} covers, by path relative to {@code root}, sorted. */
    private static java.util.TreeMap<String, Path> sealedFiles(FileSystem fs, Path root) throws IOException {
        String base = fs.makeQualified(root).toUri().getPath().replaceAll("/+$", "") + "/";
        java.util.TreeMap<String, Path> out = new java.util.TreeMap<>();
        org.apache.hadoop.fs.RemoteIterator<org.apache.hadoop.fs.LocatedFileStatus> it = fs.listFiles(root, true);
        while (it.hasNext()) {
            Path p = it.next().getPath();
            String full = p.toUri().getPath();
            if (!full.startsWith(base)) {
                continue;
            }
            String rel = full.substring(base.length());
            boolean hidden = false;
            for (String part : rel.split("/")) {
                hidden |= part.startsWith(".") || part.startsWith("_");
            }
            if (rel.contains("/") && !hidden) {
                out.put(rel, p);
            }
        }
        return out;
    }

    private static String sha256(FileSystem fs, Path p) throws IOException {
        java.security.MessageDigest md;
        try {
            md = java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] buf = new byte[1 << 16];
        try (java.io.InputStream in = fs.open(p)) {
            for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                md.update(buf, 0, n);
            }
        }
        StringBuilder sb = new StringBuilder();
        for (byte b : md.digest()) {
            sb.append(String.format(java.util.Locale.ROOT, "%02x", b));
        }
        return sb.toString();
    }

    /**
     * Checks {@code path/}{@value #INTEGRITY} when present (objects saved before it existed have none): its format
     * is one this code reads, it describes {@code expectedClass}'s capability, and every file is as recorded.
     */
    static void verify(FileSystem fs, String path, String expectedClass) throws IOException {
        Path root = new Path(path);
        Path recPath = new Path(root, INTEGRITY);
        if (!fs.exists(recPath)) {
            return;
        }
        String where = recPath.toString();
        JsonNode rec;
        try (java.io.InputStream in = fs.open(recPath)) {
            rec = JSON.readTree(in);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(where + " is not valid JSON (corrupted?): " + e.getOriginalMessage(), e);
        }
        if (rec == null || !rec.path(FORMAT_FIELD).canConvertToInt() || !rec.path("files").isObject()) {
            throw new IllegalArgumentException(where + " has no " + FORMAT_FIELD + " or files (corrupted?)");
        }
        checkFormat(rec.path(FORMAT_FIELD).asInt(), where);
        checkCapability(rec.path(CAPABILITY_FIELD).asText(null), rec.path("class").asText("?"), expectedClass, path);
        java.util.TreeMap<String, Path> actual = sealedFiles(fs, root);
        for (Iterator<Map.Entry<String, JsonNode>> it = rec.get("files").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            Path p = actual.remove(e.getKey());
            String file = "model at " + path + ": file " + e.getKey();
            if (p == null) {
                throw new IllegalArgumentException(file + " is missing (the saved object is incomplete)");
            }
            long len = fs.getFileStatus(p).getLen();
            long recorded = e.getValue().path("bytes").asLong(-1);
            if (len != recorded) {
                throw new IllegalArgumentException(file + " holds " + len + " bytes, " + recorded + " were saved "
                        + "(truncated or replaced)");
            }
            if (!sha256(fs, p).equals(e.getValue().path("sha256").asText())) {
                throw new IllegalArgumentException(file + " does not match the SHA-256 digest recorded in "
                        + INTEGRITY + " (corrupted)");
            }
        }
        if (!actual.isEmpty()) {
            throw new IllegalArgumentException("model at " + path + ": file " + actual.firstKey() + " was not "
                    + "part of the saved object (added after the save)");
        }
    }

    private static void checkFormat(int format, String where) {
        if (format > FORMAT_VERSION) {
            throw new IllegalArgumentException(where + " is in format " + format + " of spark-gpu's saved models; "
                    + "this version reads formats up to " + FORMAT_VERSION + ": load it with a newer spark-gpu");
        }
        if (format < 0) {
            throw new IllegalArgumentException(where + " has an invalid " + FORMAT_FIELD + " " + format);
        }
    }

    private static String article(String noun) {
        return ("aeiou".indexOf(Character.toLowerCase(noun.charAt(0))) >= 0 ? "an " : "a ") + noun;
    }

    private static void checkCapability(String capability, String cls, String expectedClass, String path) {
        if (expectedClass == null) {
            return;
        }
        String want = capability(expectedClass);
        String have = capability != null ? capability : capability(cls);
        if (!want.equals(have) || (capability == null && !expectedClass.equals(cls))) {
            String simple = cls.substring(cls.lastIndexOf('.') + 1);
            throw new IllegalArgumentException("'" + path + "' holds " + article(have) + " (" + cls + "), not "
                    + article(want)
                    + " (" + expectedClass + ")" + (simple.startsWith("Gpu") ? ": load it with " + simple + ".load"
                    : ""));
        }
    }

    /** The writer of a stage whose state is its params alone (an estimator or a transformer): metadata, sealed. */
    public static MLWriter paramsWriter(Params instance) {
        return new MLWriter() {
            @Override
            public void saveImpl(String path) {
                saveMetadata(instance, path, sparkSession(), null);
                seal(instance, path, sparkSession());
            }
        };
    }

    /** The reader of such a stage: checks the metadata against {@code cls}, makes it by uid and sets its params. */
    public static <T extends Params> MLReader<T> paramsReader(Class<T> cls, java.util.function.Function<String, T> byUid) {
        return new MLReader<T>() {
            @Override
            public T load(String path) {
                Metadata md = loadMetadata(path, sparkSession(), cls.getName());
                T e = byUid.apply(md.uid());
                md.applyTo(e);
                return e;
            }
        };
    }

    /**
     * Reads {@code path/metadata}. If {@code expectedClass} is not null the stored class must equal it.
     *
     * @throws IllegalArgumentException when the metadata is missing, unreadable or of another class
     */
    public static Metadata loadMetadata(String path, SparkSession spark, String expectedClass) {
        String mdPath = metadataPath(path);
        try {
            FileSystem fs = new Path(mdPath).getFileSystem(spark.sparkContext().hadoopConfiguration());
            if (!fs.exists(new Path(mdPath))) {
                throw new IllegalArgumentException("no ML metadata at " + mdPath + "; is '" + path
                        + "' a directory written by save()?");
            }
            verify(fs, path, expectedClass);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot access " + mdPath + ": " + e.getMessage(), e);
        }
        List<Row> lines = spark.read().text(mdPath).takeAsList(2);
        if (lines.size() != 1) {
            throw new IllegalArgumentException("metadata at " + mdPath + " must hold exactly one line of JSON, found "
                    + (lines.isEmpty() ? "none" : "several"));
        }
        return parseMetadata(lines.get(0).getString(0), mdPath, expectedClass);
    }

    static Metadata parseMetadata(String json, String where, String expectedClass) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("metadata at " + where + " is not valid JSON", e);
        }
        for (String key : new String[] {"class", "uid", "paramMap"}) {
            if (root == null || !root.hasNonNull(key)) {
                throw new IllegalArgumentException("metadata at " + where + " has no '" + key + "' field");
            }
        }
        String cls = root.get("class").asText();
        if (root.has(FORMAT_FIELD)) {
            checkFormat(root.get(FORMAT_FIELD).asInt(-1), "metadata at " + where);
        }
        checkCapability(root.path(CAPABILITY_FIELD).asText(null), cls, expectedClass, where);
        if (expectedClass != null && !expectedClass.equals(cls)) {
            throw new IllegalArgumentException("metadata at " + where + " describes a " + cls + ", expected " + expectedClass);
        }
        return new Metadata(root, where);
    }

    /** Parsed metadata. */
    public static final class Metadata {
        private final JsonNode root;
        private final String where;

        Metadata(JsonNode root, String where) {
            this.root = root;
            this.where = where;
        }

        public String className() {
            return root.get("class").asText();
        }

        public String uid() {
            return root.get("uid").asText();
        }

        public String sparkVersion() {
            return root.path("sparkVersion").asText("");
        }

        public long timestamp() {
            return root.path("timestamp").asLong(0L);
        }

        /** A top-level field (possibly a missing node). */
        public JsonNode field(String name) {
            return root.path(name);
        }

        /**
         * Sets every param of {@code paramMap} on {@code instance} (explicitly) and every param of
         * {@code defaultParamMap} as its default, decoding values with {@link Param#jsonDecode}.
         */
        @SuppressWarnings({"unchecked", "rawtypes"})
        public void applyTo(Params instance) {
            JsonNode defaults = root.path("defaultParamMap");
            if (defaults.isObject()) {
                for (Iterator<Map.Entry<String, JsonNode>> it = defaults.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    Param p = param(instance, e.getKey());
                    instance.setDefault(p, decode(p, e.getValue()));
                }
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = root.get("paramMap").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                Param p = param(instance, e.getKey());
                instance.set(p, decode(p, e.getValue()));
            }
        }

        private Param<?> param(Params instance, String name) {
            if (!instance.hasParam(name)) {
                throw new IllegalArgumentException("metadata at " + where + " sets param '" + name + "', which "
                        + instance.getClass().getSimpleName() + " does not have");
            }
            return instance.getParam(name);
        }

        private Object decode(Param<?> p, JsonNode value) {
            try {
                return p.jsonDecode(JSON.writeValueAsString(value));
            } catch (JsonProcessingException | RuntimeException e) {
                throw new IllegalArgumentException("metadata at " + where + ": cannot decode param '" + p.name()
                        + "' from " + value + ": " + e.getMessage(), e);
            }
        }
    }
}
