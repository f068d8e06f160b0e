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
            for (Map.Entry<String, ?> e : extra.entrySet()) {
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
