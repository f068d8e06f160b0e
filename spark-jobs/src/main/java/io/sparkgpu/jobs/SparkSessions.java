package io.sparkgpu.jobs;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;

/**
 * Builds the SparkSession of a job the same way for every command.
 *
 * <p>Settings that spark-submit (or spark-defaults.conf) already made are kept: the master is only defaulted
 * to {@code local[*]} when {@code spark.master} is unset, the web UI is Spark's (on unless configured off or
 * {@code --no-ui}), Spark's console progress bar is on unless configured or {@code --quiet}, and the spark-gpu SQL
 * extensions are registered only when their class is on the classpath.
 */
public final class SparkSessions {
    public static final String DEFAULT_MASTER = "local[*]";
    public static final String EXTENSIONS_CLASS = "io.sparkgpu.sql.SparkGpuExtensions";

    private SparkSessions() {
    }

    public static Builder builder(String appName) {
        return new Builder(appName);
    }

    /** The master to set: an explicit one, else none when Spark already has one (spark-submit), else local[*]. */
    static String masterToSet(String requested, SparkConf existing) {
        if (requested != null && !requested.isBlank()) {
            return requested.trim();
        }
        return existing.contains("spark.master") ? null : DEFAULT_MASTER;
    }

    /** True when the spark-gpu SQL extensions class can be loaded. */
    public static boolean extensionsAvailable() {
        try {
            Class.forName(EXTENSIONS_CLASS, false, SparkSessions.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    public static final class Builder {
        private final String appName;
        private String master;
        private boolean ui = true;
        private boolean quiet;
        private final Map<String, String> conf = new LinkedHashMap<>();

        private Builder(String appName) {
            this.appName = appName;
        }

        /** Explicit master URL; null means "spark.master if configured, else local[*]". */
        public Builder master(String master) {
            this.master = master;
            return this;
        }

        /** false turns the Spark web UI off; true (default) leaves it as configured (Spark's default: on). */
        public Builder ui(boolean ui) {
            this.ui = ui;
            return this;
        }

        /** true turns Spark's console progress bar off (default: on unless configured). */
        public Builder quiet(boolean quiet) {
            this.quiet = quiet;
            return this;
        }

        /** Any other setting; applied last, so it wins over the defaults of this class. */
        public Builder config(String key, String value) {
            conf.put(key, value);
            return this;
        }

        /** The settings this builder would apply on top of {@code existing} (spark.* system properties). */
        Map<String, String> settings(SparkConf existing) {
            Map<String, String> s = new LinkedHashMap<>();
            String m = masterToSet(master, existing);
            if (m != null) {
                s.put("spark.master", m);
            }
            if (!ui) {
                s.put("spark.ui.enabled", "false");
            }
            // Spark's stage bar (stderr) is off by default outside its shells: on here, as issue 21 asks
            if (quiet) {
                s.put("spark.ui.showConsoleProgress", "false");
            } else if (!existing.contains("spark.ui.showConsoleProgress")) {
                s.put("spark.ui.showConsoleProgress", "true");
            }
            if (!existing.contains("spark.sql.extensions") && extensionsAvailable()) {
                s.put("spark.sql.extensions", EXTENSIONS_CLASS);
            }
            s.putAll(conf);
            return s;
        }

        public SparkSession getOrCreate() {
            SparkSession.Builder b = SparkSession.builder().appName(appName);
            settings(new SparkConf()).forEach(b::config);
            return b.getOrCreate();
        }
    }
}
