package io.sparkgpu.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.scan.GpuScanStatistic;
import io.sparkgpu.testutil.SparkTestSession;
import java.util.Locale;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The scan settings the SQL functions take (statistic, direction, max_baseline_fraction) are accepted or refused as
 * the estimator's params are, with the rule's own message (ScanConfig's checks, which ScanSpec applies).
 */
class ScanSqlSettingsTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkTestSession.get();
    }

    /** Null when accepted, else every message of the cause chain. */
    private static String error(Runnable r) {
        try {
            r.run();
            return null;
        } catch (Exception e) {
            StringBuilder all = new StringBuilder();
            for (Throwable c = e; c != null; c = c.getCause()) {
                all.append(c.getMessage()).append(" | ");
            }
            return all.toString();
        }
    }

    /** The estimator's refusal (the rule's message), or null. */
    private static String rule(Runnable r) {
        try {
            r.run();
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    private static void same(String what, String estimator, String sql) {
        assertEquals(estimator == null, sql == null, what + ": estimator " + estimator + " / SQL " + sql);
        if (estimator != null) {
            assertTrue(sql.contains(estimator), what + ": SQL reports the rule's message '" + estimator + "', got "
                    + sql);
        }
    }

    @Test
    void maxBaselineFractionBoundaries() {
        for (double f : new double[] {0, Double.MIN_VALUE, 0.5, 1, Math.nextUp(1.0), -1}) {
            String lit = String.format(Locale.ROOT, "%sD", Double.toString(f));
            String sql = error(() -> spark.sql("SELECT sparkgpu_scan_best(array(1, 9, 1), array(10, 10, 10), 'poisson', "
                    + "'high', " + lit + ")").collect());
            same("maxBaselineFraction=" + f, rule(() -> new GpuScanStatistic().setMaxBaselineFraction(f)), sql);
        }
    }

    @Test
    void statisticAndDirectionNames() {
        for (String s : new String[] {"poisson", "EBP", "Bernoulli", "gauss"}) {
            String sql = error(() -> spark.sql("SELECT sparkgpu_scan_best(array(1, 9, 1), array(10, 10, 10), '" + s
                    + "')").collect());
            same("statistic=" + s, rule(() -> new GpuScanStatistic().setStatistic(s)), sql);
            // scan_llr takes the same names; the normal model is beyond a single range's statistics (not a rule)
            String llr = error(() -> spark.sql("SELECT sparkgpu_scan_llr(1, 5, 10, 20, '" + s + "')").collect());
            same("statistic=" + s + " (scan_llr)", rule(() -> new GpuScanStatistic().setStatistic(s)), llr);
        }
        for (String d : new String[] {"high", "LOW", "both", "up"}) {
            String sql = error(() -> spark.sql("SELECT sparkgpu_scan_best(array(1, 9, 1), array(10, 10, 10), 'poisson', '"
                    + d + "')").collect());
            same("direction=" + d, rule(() -> new GpuScanStatistic().setDirection(d)), sql);
            String llr = error(() -> spark.sql("SELECT sparkgpu_scan_llr(1, 5, 10, 20, 'poisson', '" + d + "')")
                    .collect());
            same("direction=" + d + " (scan_llr)", rule(() -> new GpuScanStatistic().setDirection(d)), llr);
        }
    }
}
