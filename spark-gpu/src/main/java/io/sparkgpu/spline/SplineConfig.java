package io.sparkgpu.spline;

import static io.sparkgpu.ml.ParamChecks.require;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import java.io.Serializable;
import java.util.Locale;

/**
 * Settings of one monotone spline (or CDF) fit, and the one place of their rules: the parse and check methods are
 * the validators of the params ({@link GpuMonotoneSplineParams}), {@link #validate()} runs them all at the entry of
 * {@link SplineEngine#fit}; messages read {@code <setting> must be <rule>, got <value>}. The initial values are the
 * defaults of every surface.
 */
public final class SplineConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Schumaker's monotone quadratic (Butland slopes) or Gregory-Delbourgo's monotone rational quadratic Hermite. */
    public enum Kind {
        SCHUMAKER(0), RATIONAL(1);

        /** The kernel's code (SPLINE_KIND_* in include/layout/spline.cuh). */
        public final int code;

        Kind(int code) {
            this.code = code;
        }

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What to do with data that is not monotone: refuse it, or make it monotone by isotonic regression first. */
    public enum Smoothing { NONE, ISOTONIC }

    /** Queries outside the knots (values outside the knot values for the inverse). */
    public enum Extrapolate {
        CLIP(0), LINEAR(1), NAN(2), ERROR(3);

        /** The kernel's code (SPLINE_EXTRAP_* in include/layout/spline.cuh). */
        public final int code;

        Extrapolate(int code) {
            this.code = code;
        }

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Most knots of a CDF fit. */
    public static final int MAX_CDF_KNOTS = 1 << 24;

    public Kind kind = Kind.SCHUMAKER;
    public Smoothing smoothing = Smoothing.NONE;
    public Extrapolate extrapolate = Extrapolate.CLIP;
    /** null: the setting spark.sparkgpu.backend, else auto (resolved by {@link #validate()}). */
    public Backend backend;

    public static Kind parseKind(String v) {
        switch (lower(v, "kind")) {
            case "schumaker": case "quadratic": return Kind.SCHUMAKER;
            case "rational": case "gregory-delbourgo": return Kind.RATIONAL;
            default: throw new IllegalArgumentException("kind must be schumaker or rational, got '" + v + "'");
        }
    }

    public static Smoothing parseSmoothing(String v) {
        switch (lower(v, "smoothing")) {
            case "none": return Smoothing.NONE;
            case "isotonic": return Smoothing.ISOTONIC;
            default: throw new IllegalArgumentException("smoothing must be none or isotonic, got '" + v + "'");
        }
    }

    public static Extrapolate parseExtrapolate(String v) {
        switch (lower(v, "extrapolate")) {
            case "clip": return Extrapolate.CLIP;
            case "linear": return Extrapolate.LINEAR;
            case "nan": return Extrapolate.NAN;
            case "error": return Extrapolate.ERROR;
            default: throw new IllegalArgumentException("extrapolate must be clip, linear, nan or error, got '" + v
                    + "'");
        }
    }

    private static String lower(String v, String what) {
        if (v == null) {
            throw new IllegalArgumentException(what + " must be set, got null");
        }
        return v.trim().toLowerCase(Locale.ROOT);
    }

    /** A probability of {@code quantile(p)}: in [0, 1]. */
    public static void checkProbability(double p) {
        require(p >= 0 && p <= 1, "p", "in [0, 1]", p);
    }

    /** Knots of a CDF fit (the number of quantiles): in [2, 2^24]. */
    public static void checkNumKnots(int numKnots) {
        require(numKnots >= 2 && numKnots <= MAX_CDF_KNOTS, "numKnots", "in [2, " + MAX_CDF_KNOTS + "]",
                numKnots);
    }

    /** Rows of the sample a CDF fit takes: 0 (the whole column) or &gt;= 2. */
    public static void checkSampleSize(long sampleSize) {
        require(sampleSize == 0 || sampleSize >= 2, "sampleSize", "0 (the whole column) or >= 2", sampleSize);
    }

    /** Partitions of the quantile range partitioner: in [1, 2^20]. */
    public static void checkNumPartitions(int numPartitions) {
        require(numPartitions >= 1 && numPartitions <= (1 << 20), "numPartitions", "in [1, 1048576]", numPartitions);
    }

    /** Every rule; resolves a null backend. */
    public SplineConfig validate() {
        require(kind != null, "kind", "schumaker or rational", null);
        require(smoothing != null, "smoothing", "none or isotonic", null);
        require(extrapolate != null, "extrapolate", "clip, linear, nan or error", null);
        backend = SparkGpuConf.backend(backend);
        return this;
    }

    public SplineConfig copy() {
        SplineConfig c = new SplineConfig();
        c.kind = kind;
        c.smoothing = smoothing;
        c.extrapolate = extrapolate;
        c.backend = backend;
        return c;
    }
}
