package io.sparkgpu.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * sparkgpu_sort_array, registered as SparkGpuExtensions registers it, against Spark's own sort_array on the shared
 * test session: the same elements in the same order (Row equality: -0.0 differs from 0.0, NaN equals NaN), for
 * every element type class, ascending and descending, with null elements, null and empty arrays, ties, NaN and
 * signed zeros, and key ranges on both sides of the counting sort's 2^24 (counting and radix paths).
 */
class SortArraySqlFunctionTest {
    private static SparkSession session() {
        SparkSession spark = SparkTestSession.get();
        SqlFunctionSpec spec = SparkGpuFunctions.all().stream()
                .filter(f -> f.name().equals(SortArrayFunction.NAME)).findFirst().orElseThrow();
        spark.sessionState().functionRegistry().registerFunction(FunctionIdentifier.apply(spec.name()), spec.info(),
                spec.builder());
        return spark;
    }

    /** 120 arrays of up to 30 elements from {@code gen} (every 7th element null, one null and one empty array). */
    private static List<Row> arrays(SplittableRandom r, Function<SplittableRandom, Object> gen) {
        List<Row> rows = new ArrayList<>();
        rows.add(RowFactory.create((Object) null));
        rows.add(RowFactory.create(List.of()));
        for (int i = 0; i < 120; i++) {
            int n = r.nextInt(31);
            List<Object> a = new ArrayList<>();
            for (int j = 0; j < n; j++) {
                a.add(r.nextInt(7) == 0 ? null : gen.apply(r));
            }
            rows.add(RowFactory.create(a));
        }
        return rows;
    }

    private static void sameAsSortArray(SparkSession spark, DataType element, List<Row> rows) {
        StructType schema = new StructType(new StructField[] {
            new StructField("a", DataTypes.createArrayType(element, true), true, org.apache.spark.sql.types.Metadata.empty())});
        Dataset<Row> df = spark.createDataFrame(rows, schema);
        List<Row> got = df.selectExpr("sparkgpu_sort_array(a)", "sort_array(a)", "sparkgpu_sort_array(a, false)",
                "sort_array(a, false)", "sparkgpu_sort_array(a, true)").collectAsList();
        for (int i = 0; i < got.size(); i++) {
            Row g = got.get(i);
            assertEquals(list(g, 1), list(g, 0), element + " ascending, row " + i);
            assertEquals(list(g, 3), list(g, 2), element + " descending, row " + i);
            assertEquals(list(g, 0), list(g, 4), element + " explicit ascending, row " + i);
        }
    }

    /** Column k as a Java list (element equals: NaN equals NaN, -0.0 differs from 0.0), null for NULL. */
    private static List<Object> list(Row r, int k) {
        return r.isNullAt(k) ? null : new ArrayList<>(r.getList(k));
    }

    @Test
    void equalsSparkSortArrayForEveryElementType() {
        SparkSession spark = session();
        SplittableRandom r = new SplittableRandom(16);
        double[] specials = {0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1.5, -1.5,
            Double.MIN_VALUE, -Double.MAX_VALUE};
        sameAsSortArray(spark, DataTypes.IntegerType, arrays(r, x -> x.nextInt(-5, 6))); // ties: counting sort
        sameAsSortArray(spark, DataTypes.IntegerType, arrays(r, SplittableRandom::nextInt)); // full range: radix
        sameAsSortArray(spark, DataTypes.LongType, arrays(r, SplittableRandom::nextLong));
        sameAsSortArray(spark, DataTypes.LongType, arrays(r, x -> Long.MIN_VALUE + x.nextInt(3)));
        sameAsSortArray(spark, DataTypes.ShortType, arrays(r, x -> (short) x.nextInt(-40000, 40000)));
        sameAsSortArray(spark, DataTypes.ByteType, arrays(r, x -> (byte) x.nextInt(256)));
        sameAsSortArray(spark, DataTypes.BooleanType, arrays(r, SplittableRandom::nextBoolean));
        sameAsSortArray(spark, DataTypes.DoubleType, arrays(r, x -> x.nextInt(2) == 0
                ? specials[x.nextInt(specials.length)] : x.nextGaussian()));
        sameAsSortArray(spark, DataTypes.FloatType, arrays(r, x -> x.nextInt(2) == 0
                ? (float) specials[x.nextInt(specials.length)] : (float) x.nextGaussian()));
        sameAsSortArray(spark, DataTypes.createDecimalType(12, 3), arrays(r,
                x -> BigDecimal.valueOf(x.nextLong(-1_000_000_000L, 1_000_000_000L), 3)));
        sameAsSortArray(spark, DataTypes.DateType, arrays(r, x -> java.sql.Date.valueOf(
                java.time.LocalDate.ofEpochDay(x.nextInt(-1000, 30000)))));
    }

    @Test
    void literalsAndExamples() {
        SparkSession spark = session();
        Row row = spark.sql("SELECT sparkgpu_sort_array(array(3, NULL, 1, 2)), sparkgpu_sort_array(array(3.0D, "
                + "CAST('NaN' AS DOUBLE), 1.0D, -0.0D, 0.0D), false), sparkgpu_sort_array(CAST(NULL AS ARRAY<INT>))")
                .first();
        assertEquals(Arrays.asList(null, 1, 2, 3), row.getList(0));
        assertEquals(Arrays.asList(Double.NaN, 3.0, 1.0, -0.0, 0.0), row.getList(1), "-0.0 == 0.0: input order");
        assertTrue(row.isNullAt(2));
    }

    @Test
    void analysisErrors() {
        SparkSession spark = session();
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_sort_array(array('a', 'b'))").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_sort_array(1)").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_sort_array(array(1), 'yes')").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_sort_array(array(1), "
                + "CAST(NULL AS BOOLEAN))").collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_sort_array(array(1), true, 1)")
                .collect());
        assertThrows(AnalysisException.class, () -> spark.sql("SELECT sparkgpu_sort_array(a, a[0] > 0) FROM "
                + "VALUES (array(1)) AS t(a)").collect());
        AnalysisException e = assertThrows(AnalysisException.class,
                () -> spark.sql("SELECT sparkgpu_sort_array(array(array(1)))").collect());
        assertTrue(e.getMessage().contains("sparkgpu_sort_array"), e.getMessage());
    }
}
