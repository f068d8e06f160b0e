package io.sparkgpu.jobs;

import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.kmeans.GpuKMeansSummary;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
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
        target.writeModel(model, toJson(summary, "") + "\n");
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

    private static List<Double> toList(double[] a) {
        List<Double> l = new ArrayList<>(a.length);
        for (double v : a) {
            l.add(v);
        }
        return l;
    }

    /** Minimal JSON for maps, strings, numbers, booleans and primitive arrays (non-finite numbers become null). */
    static String toJson(Object v, String indent) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Map) {
            StringBuilder sb = new StringBuilder("{\n");
            String inner = indent + "  ";
            int i = 0;
            Map<?, ?> m = (Map<?, ?>) v;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                sb.append(inner).append(quote(String.valueOf(e.getKey()))).append(": ").append(toJson(e.getValue(), inner));
                sb.append(++i < m.size() ? ",\n" : "\n");
            }
            return sb.append(indent).append('}').toString();
        }
        if (v instanceof String) {
            return quote((String) v);
        }
        if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
            return v.toString();
        }
        if (v instanceof Number) {
            double d = ((Number) v).doubleValue();
            return Double.isFinite(d) ? Double.toString(d) : "null";
        }
        List<Object> items = new ArrayList<>();
        if (v instanceof double[]) {
            for (double d : (double[]) v) {
                items.add(d);
            }
        } else if (v instanceof long[]) {
            for (long d : (long[]) v) {
                items.add(d);
            }
        } else if (v instanceof int[]) {
            for (int d : (int[]) v) {
                items.add(d);
            }
        } else if (v instanceof Object[]) {
            items.addAll(List.of((Object[]) v));
        } else if (v instanceof List) {
            items.addAll((List<?>) v);
        } else {
            return quote(v.toString());
        }
        List<String> parts = new ArrayList<>();
        for (Object o : items) {
            parts.add(toJson(o, indent + "  "));
        }
        return "[" + String.join(", ", parts) + "]";
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (ch < 0x20) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
                    } else {
                        sb.append(ch);
                    }
            }
        }
        return sb.append('"').toString();
    }
}
