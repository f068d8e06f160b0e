package io.sparkgpu.jobs;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.kmeans.GpuKMeansSummary;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.ml.util.MLWritable;

/**
 * The model directory written by {@code kmeans --model-out DIR}: a {@link GpuKMeansModel} saved with the Spark
 * ML writer (so {@code GpuKMeansModel.load(DIR)} and the SQL function {@code sparkgpu_kmeans_predict(DIR, ...)}
 * read it), plus {@code DIR/summary.json}, a human-readable record of the job (input, feature columns,
 * settings, cost, sizes, backend, centres).
 */
final class ModelOutput {
    static final String SUMMARY = "summary.json";

    private ModelOutput() {
    }

    /** Writes {@code model} and {@code DIR/summary.json} (holding {@code summary}) safely to {@code target}. */
    static void write(SafeOutput target, MLWritable model, Map<String, Object> summary) throws IOException {
        target.writeModel(model, toJson(summary) + "\n");
    }

    static void writeKMeans(SafeOutput target, GpuKMeansModel model, Map<String, Object> params) throws IOException {
        GpuKMeansSummary r = model.summary();
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("algorithm", "k-means");
        summary.putAll(params);
        summary.put("k", model.getK());
        summary.put("numFeatures", model.numFeatures());
        summary.put("numPoints", r.numPoints());
        summary.put("iterations", r.numIter());
        summary.put("converged", r.converged());
        summary.put("trainingCost", r.trainingCost());
        summary.put("cost", r.finalCost());
        summary.put("clusterSizes", r.clusterSizes());
        summary.put("backend", r.backend());
        summary.put("centers", model.clusterCentersArray());
        write(target, model, summary);
    }

    /** Two-space indented objects, {@code "key": value}, arrays on one line as {@code [1, 2]}. */
    private static final DefaultPrettyPrinter PRINTER = new DefaultPrettyPrinter(Separators.createDefaultInstance()
            .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
            .withArrayValueSpacing(Separators.Spacing.AFTER)
            .withObjectEmptySeparator("")
            .withArrayEmptySeparator(""))
            .withObjectIndenter(new DefaultIndenter("  ", "\n"))
            .withArrayIndenter(new DefaultPrettyPrinter.NopIndenter());
    private static final ObjectWriter WRITER = new ObjectMapper().writer(PRINTER);

    /**
     * The JSON text of {@code v}: maps (in their iteration order, so a LinkedHashMap gives a fixed key order),
     * strings, numbers, booleans, lists and arrays (primitive or not); non-finite numbers become null and any
     * other object its {@code toString()}.
     */
    static String toJson(Object v) {
        try {
            return WRITER.writeValueAsString(node(v));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON: " + e.getMessage(), e);
        }
    }

    /** {@code v} as a Jackson tree (see {@link #toJson}). */
    static JsonNode node(Object v) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        if (v == null) {
            return f.nullNode();
        }
        if (v instanceof Map) {
            ObjectNode o = f.objectNode();
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                o.set(String.valueOf(e.getKey()), node(e.getValue()));
            }
            return o;
        }
        if (v instanceof String) {
            return f.textNode((String) v);
        }
        if (v instanceof Boolean) {
            return f.booleanNode((Boolean) v);
        }
        if (v instanceof Integer || v instanceof Long) {
            return f.numberNode(((Number) v).longValue());
        }
        if (v instanceof Number) {
            double d = ((Number) v).doubleValue();
            return Double.isFinite(d) ? f.numberNode(d) : f.nullNode();
        }
        ArrayNode a = f.arrayNode();
        if (v instanceof double[]) {
            for (double d : (double[]) v) {
                a.add(node(d));
            }
        } else if (v instanceof long[]) {
            for (long d : (long[]) v) {
                a.add(d);
            }
        } else if (v instanceof int[]) {
            for (int d : (int[]) v) {
                a.add(d);
            }
        } else if (v instanceof Object[]) {
            for (Object o : (Object[]) v) {
                a.add(node(o));
            }
        } else if (v instanceof Iterable) {
            for (Object o : (Iterable<?>) v) {
                a.add(node(o));
            }
        } else {
            return f.textNode(v.toString());
        }
        return a;
    }
}
