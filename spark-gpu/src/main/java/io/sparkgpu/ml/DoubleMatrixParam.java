package io.sparkgpu.ml;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.io.Serializable;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.util.Identifiable;
import scala.Function1;

/**
 * A {@link Param} holding a rectangular matrix of doubles ({@code double[][]}, one row per entry), saved in
 * ML metadata as a JSON array of arrays. Non-finite entries are written as the strings {@code "NaN"},
 * {@code "Infinity"} and {@code "-Infinity"} so that encoding never fails; the default validator rejects them.
 */
public class DoubleMatrixParam extends Param<double[][]> {
    private static final long serialVersionUID = 1L;
    private static final ObjectMapper JSON = new ObjectMapper();

    public DoubleMatrixParam(Identifiable parent, String name, String doc, Function1<double[][], Object> isValid) {
        super(parent, name, doc, isValid);
    }

    /** A param whose values must be non-empty, rectangular and finite (see {@link #check}). */
    public DoubleMatrixParam(Identifiable parent, String name, String doc) {
        this(parent, name, doc, finiteRectangular(name));
    }

    /**
     * Validator accepting non-empty rectangular matrices of finite values; it throws an
     * {@link IllegalArgumentException} naming {@code name} and the offending row instead of returning false,
     * so that the caller sees why a value was refused.
     */
    public static Function1<double[][], Object> finiteRectangular(String name) {
        return (Function1<double[][], Object> & Serializable) m -> {
            check(m, name);
            return Boolean.TRUE;
        };
    }

    /** Throws an {@link IllegalArgumentException} unless {@code m} is non-empty, rectangular and finite. */
    public static void check(double[][] m, String name) {
        if (m == null || m.length == 0) {
            throw new IllegalArgumentException(name + " must hold at least one row");
        }
        int d = -1;
        for (int i = 0; i < m.length; i++) {
            if (m[i] == null || m[i].length == 0) {
                throw new IllegalArgumentException(name + "[" + i + "] is " + (m[i] == null ? "null" : "empty"));
            }
            if (d < 0) {
                d = m[i].length;
            } else if (m[i].length != d) {
                throw new IllegalArgumentException(name + " must be rectangular: row 0 has " + d + " values but row "
                        + i + " has " + m[i].length);
            }
            for (int j = 0; j < d; j++) {
                if (!Double.isFinite(m[i][j])) {
                    throw new IllegalArgumentException(name + "[" + i + "][" + j + "] is " + m[i][j]
                            + "; values must be finite");
                }
            }
        }
    }

    /** Deep copy (null stays null). */
    public static double[][] copy(double[][] m) {
        if (m == null) {
            return null;
        }
        double[][] c = new double[m.length][];
        for (int i = 0; i < m.length; i++) {
            c[i] = m[i] == null ? null : m[i].clone();
        }
        return c;
    }

    @Override
    public String jsonEncode(double[][] value) {
        ArrayNode rows = JSON.createArrayNode();
        for (double[] row : value) {
            ArrayNode r = rows.addArray();
            for (double v : row) {
                if (Double.isFinite(v)) {
                    r.add(v);
                } else {
                    r.add(Double.toString(v));
                }
            }
        }
        try {
            return JSON.writeValueAsString(rows);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode param " + name() + " as JSON", e);
        }
    }

    @Override
    public double[][] jsonDecode(String json) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("param " + name() + ": cannot parse JSON " + json, e);
        }
        if (root == null || !root.isArray()) {
            throw new IllegalArgumentException("param " + name() + ": expected a JSON array of arrays, got " + json);
        }
        double[][] out = new double[root.size()][];
        for (int i = 0; i < out.length; i++) {
            JsonNode row = root.get(i);
            if (!row.isArray()) {
                throw new IllegalArgumentException("param " + name() + ": row " + i + " is not a JSON array in " + json);
            }
            out[i] = new double[row.size()];
            for (int j = 0; j < out[i].length; j++) {
                JsonNode v = row.get(j);
                if (v.isNumber()) {
                    out[i][j] = v.doubleValue();
                } else if (v.isTextual()) {
                    out[i][j] = parseSpecial(v.textValue(), json);
                } else {
                    throw new IllegalArgumentException("param " + name() + ": entry [" + i + "][" + j
                            + "] is not a number in " + json);
                }
            }
        }
        return out;
    }

    private double parseSpecial(String s, String json) {
        switch (s) {
            case "NaN": return Double.NaN;
            case "Infinity": return Double.POSITIVE_INFINITY;
            case "-Infinity": return Double.NEGATIVE_INFINITY;
            default:
                throw new IllegalArgumentException("param " + name() + ": unexpected string '" + s + "' in " + json);
        }
    }
}
