package io.sparkgpu.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.scan.LocalScan;
import io.sparkgpu.scan.ScanCluster;
import io.sparkgpu.scan.ScanDirection;
import io.sparkgpu.scan.ScanGrid;
import io.sparkgpu.scan.ScanMath;
import io.sparkgpu.scan.ScanModel;
import io.sparkgpu.scan.ScanShape;
import io.sparkgpu.scan.ScanSpec;
import io.sparkgpu.scan.ScanTables;
import io.sparkgpu.testutil.SparkTestSession;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** sparkgpu_scan_llr and sparkgpu_scan_best through the session extension. */
class ScanSqlFunctionsTest {
    private static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkTestSession.get(); // has the spark-gpu extensions
    }

    private static String allMessages(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable c = e; c != null; c = c.getCause()) {
            all.append(c.getMessage()).append(" | ");
        }
        return all.toString();
    }

    @Test
    void llrMatchesHandComputedValues() {
        Row r = spark.sql("SELECT sparkgpu_scan_llr(10, 5, 20, 20) AS a, "
                + "sparkgpu_scan_llr(8, 10, 20, 100, 'bernoulli') AS b, "
                + "sparkgpu_scan_llr(2, 5, 20, 20, 'poisson', 'low') AS c, "
                + "sparkgpu_scan_llr(2, 5, 20, 20) AS d, "
                + "sparkgpu_scan_llr(10, 4, 0, 0, 'ebp') AS e, "
                + "sparkgpu_scan_llr(CAST(NULL AS INT), 5, 20, 20) AS f, "
                + "sparkgpu_scan_llr(10.0BD, CAST(5 AS FLOAT), 20L, 20) AS g").first();
        assertEquals(DataTypes.DoubleType, r.schema().apply("a").dataType());
        assertEquals(2.8768207245178083, r.getDouble(0), 1e-14); // 10 ln(4/3)
        assertEquals(9.695516067957206, r.getDouble(1), 1e-13);
        assertEquals(1.4492065585428728, r.getDouble(2), 1e-14);
        assertEquals(0.0, r.getDouble(3));
        assertEquals(3.162907318741551, r.getDouble(4), 1e-14);
        assertTrue(r.isNullAt(5));
        assertEquals(r.getDouble(0), r.getDouble(6));
        // the same bits as the scan's own arithmetic
        assertEquals(ScanMath.poisson(10, 5, 15, 20, 0), r.getDouble(0));
    }

    /**
     * The function's Poisson LLR of a range has the bits of the scan's own LLR for that range (the expected count
     * is baseline * (total_cases / total_baseline), the scan's order of operations), not just a close value.
     */
    @Test
    void llrHasTheBitsOfTheScansMostLikelyCluster() {
        Random rnd = new Random(5);
        int differing = 0;
        for (int trial = 0; trial < 40; trial++) {
            ScanShape shape = new ScanShape(9, 7);
            double[] cases = new double[shape.cells()];
            double[] pop = new double[shape.cells()];
            for (int c = 0; c < cases.length; c++) {
                pop[c] = 200 + rnd.nextInt(800);
                cases[c] = rnd.nextInt((int) (pop[c] / 25)) + (c % 9 >= 5 && c / 9 <= 2 ? 12 : 0);
            }
            ScanCluster best = LocalScan.mostLikely(ScanTables.of(ScanGrid.of(ScanModel.POISSON, shape, cases, pop,
                    null, null)), new ScanSpec(ScanDirection.HIGH, 1, Long.MAX_VALUE, 0.5));
            double tc = java.util.Arrays.stream(cases).sum();
            double tb = java.util.Arrays.stream(pop).sum();
            double sql = ScanLlrExpression.llr(ScanModel.POISSON, ScanDirection.HIGH.code(), best.observed(),
                    best.baseline(), tc, tb);
            assertEquals(best.llr(), sql, 0.0, "trial " + trial + ": " + best);
            double otherOrder = ScanMath.poisson(best.observed(), tc * (best.baseline() / tb),
                    tc * ((tb - best.baseline()) / tb), tc, ScanDirection.HIGH.code());
            differing += otherOrder != best.llr() ? 1 : 0;
            if (trial == 0) {
                Row r = spark.sql("SELECT sparkgpu_scan_llr(" + best.observed() + "D, " + best.baseline() + "D, " + tc
                        + "D, " + tb + "D) AS llr").first();
                assertEquals(best.llr(), r.getDouble(0), 0.0, "through SQL");
            }
        }
        assertTrue(differing > 0, "the data should include ranges where the order of operations matters");
    }

    @Test
    void llrOverATableAndItsErrors() {
        StructType s = new StructType().add("c", DataTypes.LongType).add("b", DataTypes.DoubleType);
        List<Row> rows = List.of(RowFactory.create(30L, 10.0), RowFactory.create(5L, 20.0), RowFactory.create(15L, 70.0));
        spark.createDataFrame(rows, s).createOrReplaceTempView("zones");
        List<Row> out = spark.sql("SELECT c, sparkgpu_scan_llr(c, b, SUM(c) OVER (), SUM(b) OVER ()) AS llr FROM zones "
                + "ORDER BY c").collectAsList();
        assertEquals(0.0, out.get(0).getDouble(1));                      // 5 cases where 10 expected
        assertTrue(out.get(2).getDouble(1) > 10, out.toString());         // 30 cases where 5 expected

        AnalysisException e = assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_scan_llr(1, 2, 3)"));
        assertEquals("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", e.getCondition(), e.getMessage());
        e = assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_scan_llr(1, 2, 3, 4, 'gauss')"));
        assertEquals("FAILED_FUNCTION_CALL", e.getCondition());
        assertEquals("38000", e.getSqlState());
        // the reason in the top-level message, not only in the cause chain
        assertTrue(e.getMessage().contains("statistic must be one of poisson|bernoulli|normal|ebp"), e.getMessage());
        e = assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_scan_llr(1, 2, 3, 4, 'normal')"));
        assertTrue(allMessages(e).contains("the normal model needs the variance"), allMessages(e));
        e = assertThrows(AnalysisException.class,
                () -> spark.sql("SELECT sparkgpu_scan_llr(c, b, 3, 4, CAST(c AS STRING)) FROM zones"));
        assertEquals("DATATYPE_MISMATCH.NON_FOLDABLE_INPUT", e.getCondition());
        e = assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_scan_llr('x', 2, 3, 4)"));
        assertTrue(e.getMessage().contains("NUMERIC"), e.getMessage());
        Exception x = assertThrows(Exception.class, () -> spark.sql("SELECT sparkgpu_scan_llr(-1, 2, 3, 4)").collect());
        assertTrue(allMessages(x).contains("sparkgpu_scan_llr: cases must be a finite number >= 0"), allMessages(x));
        x = assertThrows(Exception.class, () -> spark.sql("SELECT sparkgpu_scan_llr(9, 2, 3, 4)").collect());
        assertTrue(allMessages(x).contains("exceed total_cases"), allMessages(x));
        for (String stat : new String[] {"poisson", "ebp"}) { // the estimator refuses cases where the baseline is 0
            x = assertThrows(Exception.class,
                    () -> spark.sql("SELECT sparkgpu_scan_llr(10, 0, 20, 20, '" + stat + "')").collect());
            assertTrue(allMessages(x).contains("with baseline 0"), stat + ": " + allMessages(x));
        }
        assertTrue(spark.sql("SELECT sparkgpu_scan_llr(0, 0, 20, 20)").collectAsList().get(0).getDouble(0) >= 0,
                "no cases where the baseline is 0 is allowed, as in the estimator");
    }

    /** Fractional case counts (issue 18 item 4): poisson and ebp take them as the estimator does; bernoulli says why not. */
    @Test
    void fractionalCasesAsInTheEstimator() {
        Row r = spark.sql("SELECT sparkgpu_scan_best(array(0.25D, 4.5D, 3.75D, 0.5D, 0.125D), "
                + "array(2D, 1.5D, 1D, 2D, 2.5D)) AS best, sparkgpu_scan_llr(8.25D, 2.5D, 9.125D, 9D) AS llr, "
                + "sparkgpu_scan_llr(8.25D, 2.5D, 0, 0, 'ebp') AS ebp").first();
        Row best = r.getStruct(0);
        assertEquals(1, best.getInt(0));
        assertEquals(2, best.getInt(1));
        assertEquals(8.25, best.getDouble(best.fieldIndex("observed")), 0.0);
        assertEquals(best.getDouble(best.fieldIndex("llr")), r.getDouble(1), 0.0, "the scan's bits");
        double e = 9.125 * 2.5 / 9;
        assertEquals(8.25 * Math.log(8.25 / e) + 0.875 * Math.log(0.875 / (9.125 - e)), r.getDouble(1), 1e-13);
        assertEquals(8.25 * Math.log(8.25 / 2.5) + 2.5 - 8.25, r.getDouble(2), 1e-13);

        Exception x = assertThrows(Exception.class,
                () -> spark.sql("SELECT sparkgpu_scan_llr(2.5D, 10, 20, 100, 'bernoulli')").collect());
        assertTrue(allMessages(x).contains("sparkgpu_scan_llr: cases must be a whole number for the bernoulli model, "
                + "got 2.5 (the bernoulli model counts individuals"), allMessages(x));
        x = assertThrows(Exception.class,
                () -> spark.sql("SELECT sparkgpu_scan_best(array(0.5D, 2), array(1, 2), 'bernoulli')").collect());
        assertTrue(allMessages(x).contains("fractional case count; the bernoulli model counts individuals"),
                allMessages(x));
        for (String bad : new String[] {"CAST('NaN' AS DOUBLE)", "CAST('Infinity' AS DOUBLE)", "-0.5D"}) {
            x = assertThrows(Exception.class,
                    () -> spark.sql("SELECT sparkgpu_scan_llr(1.5D, 2, " + bad + ", 4)").collect());
            assertTrue(allMessages(x).contains("sparkgpu_scan_llr: total_cases must be a finite number >= 0"),
                    bad + ": " + allMessages(x));
        }
    }

    @Test
    void bestIntervalOfArraysMatchesTheScan() {
        Row r = spark.sql("SELECT sparkgpu_scan_best(array(1, 1, 9, 8, 1, 1), array(10, 10, 10, 10, 10, 10)) AS b")
                .first();
        Row b = r.getStruct(0);
        assertEquals(2, b.getInt(b.fieldIndex("start")));
        assertEquals(3, b.getInt(b.fieldIndex("end")));
        assertEquals(17.0, b.getDouble(b.fieldIndex("observed")));
        assertEquals(7.0, b.getDouble(b.fieldIndex("expected")), 1e-12);
        assertTrue(b.getDouble(b.fieldIndex("relative_risk")) > 4);

        // per group, against the local engine
        StructType s = new StructType().add("region", DataTypes.StringType).add("week", DataTypes.IntegerType)
                .add("cases", DataTypes.IntegerType).add("pop", DataTypes.DoubleType);
        List<Row> rows = new ArrayList<>();
        Random rnd = new Random(1);
        for (String region : new String[] {"north", "south"}) {
            for (int w = 0; w < 30; w++) {
                rows.add(RowFactory.create(region, w, rnd.nextInt(region.equals("north") && w > 20 ? 20 : 6),
                        50.0 + rnd.nextInt(10)));
            }
        }
        spark.createDataFrame(rows, s).createOrReplaceTempView("weekly");
        List<Row> out = spark.sql("SELECT region, sparkgpu_scan_best(transform(s, x -> x.cases), transform(s, x -> x.pop), "
                + "'poisson', 'high', 0.5) AS best FROM (SELECT region, array_sort(collect_list(struct(week, cases, pop))) "
                + "AS s FROM weekly GROUP BY region) ORDER BY region").collectAsList();
        for (Row row : out) {
            String region = row.getString(0);
            double[] c = rows.stream().filter(x -> x.getString(0).equals(region)).mapToDouble(x -> x.getInt(2)).toArray();
            double[] p = rows.stream().filter(x -> x.getString(0).equals(region)).mapToDouble(x -> x.getDouble(3)).toArray();
            ScanCluster want = LocalScan.mostLikely(ScanTables.of(ScanGrid.of(ScanModel.POISSON, new ScanShape(30), c, p,
                    null, null)), new ScanSpec(ScanDirection.HIGH, 1, Long.MAX_VALUE, 0.5));
            Row got = row.getStruct(1);
            assertEquals(want.lo(0), got.getInt(0), region);
            assertEquals(want.hi(0), got.getInt(1), region);
            assertEquals(want.llr(), got.getDouble(2), 0.0, region);
        }
        assertTrue(out.get(0).getStruct(1).getInt(0) >= 18, "north's outbreak is late: " + out.get(0));
    }

    @Test
    void bestHandlesNullsNoClusterAndBadArrays() {
        Row r = spark.sql("SELECT sparkgpu_scan_best(CAST(NULL AS ARRAY<INT>), array(1)) AS a, "
                + "sparkgpu_scan_best(array(1, 1, 1), array(1, 1, 1)) AS b").first();
        assertTrue(r.isNullAt(0));
        assertTrue(r.isNullAt(1), "a flat series has no interval with a positive LLR");
        Exception x = assertThrows(Exception.class,
                () -> spark.sql("SELECT sparkgpu_scan_best(array(1, 2), array(1, 2, 3))").collect());
        assertTrue(allMessages(x).contains("cases has 2 elements but baseline has 3"), allMessages(x));
        x = assertThrows(Exception.class,
                () -> spark.sql("SELECT sparkgpu_scan_best(array(1, -2), array(1, 2))").collect());
        assertTrue(allMessages(x).contains("negative case count"), allMessages(x));
        x = assertThrows(Exception.class,
                () -> spark.sql("SELECT sparkgpu_scan_best(array(5, 2), array(1, 2), 'bernoulli')").collect());
        assertTrue(allMessages(x).contains("more cases than the population"), allMessages(x));
        AnalysisException e = assertThrows(AnalysisException.class,
                () -> spark.sql("SELECT sparkgpu_scan_best(array(1, 2), 3)"));
        assertTrue(e.getMessage().contains("ARRAY<NUMERIC>"), e.getMessage());
        e = assertThrows(AnalysisException.class,
                () -> spark.sql("SELECT sparkgpu_scan_best(array(1, 2), array(1, 2), 'poisson', 'high', 2.0)"));
        assertTrue(allMessages(e).contains("maxBaselineFraction must be in (0, 1]"), allMessages(e));
    }

    @Test
    void functionsAreRegisteredAndDescribed() {
        List<String> names = new ArrayList<>();
        for (SqlFunctionSpec f : SparkGpuFunctions.all()) {
            names.add(f.name());
        }
        assertTrue(names.contains("sparkgpu_scan_llr") && names.contains("sparkgpu_scan_best"), names.toString());
        StringBuilder text = new StringBuilder();
        for (Row row : spark.sql("DESCRIBE FUNCTION EXTENDED sparkgpu_scan_best").collectAsList()) {
            text.append(row.getString(0)).append('\n');
        }
        assertTrue(text.toString().contains("most likely cluster"), text.toString());
    }
}
