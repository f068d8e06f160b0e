package io.sparkgpu.pde;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sweep transformer on local[2]: each row equals the twin's simulation of its parameters, whatever the
 * partitioning; missing columns take the Value params; the field column; save/load of the params; errors that name
 * the column or the setting.
 */
class GpuFitzHughNagumoTest {
    @TempDir
    Path tmp;

    static Dataset<Row> sweep(SparkSession spark, FhnParams[] ps) {
        StructType schema = new StructType().add("id", DataTypes.IntegerType).add("a", DataTypes.DoubleType)
                .add("eps", DataTypes.DoubleType).add("I", DataTypes.DoubleType).add("D", DataTypes.FloatType);
        List<Row> rows = new ArrayList<>();
        for (int j = 0; j < ps.length; j++) {
            rows.add(RowFactory.create(j, ps[j].a, ps[j].eps, ps[j].current, (float) ps[j].diffusion));
        }
        return spark.createDataFrame(rows, schema);
    }

    static GpuFitzHughNagumo transformer() {
        return new GpuFitzHughNagumo().setCells(41).setLength(20).setDt(0.05).setTEnd(6)
                .setScheme(FhnConfig.CRANK_NICOLSON).setInitial(FhnConfig.GAUSSIAN).setRecordEvery(30)
                .setBackend("cpu");
    }

    @Test
    void everyRowIsItsOwnSimulationWhateverThePartitioning() {
        SparkSession spark = SparkTestSession.get();
        FhnParams[] given = FhnTestData.sweep(6);
        FhnParams[] ps = new FhnParams[given.length];
        for (int j = 0; j < ps.length; j++) { // gamma from gammaValue; D through a float column
            ps[j] = new FhnParams(given[j].a, given[j].eps, 0.5, given[j].current, (float) given[j].diffusion);
        }
        GpuFitzHughNagumo t = transformer();
        FhnResult[] ref = FhnCpu.run(new FhnSetup(t.toConfig().validate()), ps, 1);
        Dataset<Row> in = sweep(spark, given);
        for (int parts : new int[] {1, 3}) {
            List<Row> out = t.transform(in.repartition(parts)).orderBy("id").collectAsList();
            assertEquals(ps.length, out.size());
            for (Row r : out) {
                int j = r.getInt(0);
                assertEquals(Double.doubleToLongBits(ref[j].maxV), Double.doubleToLongBits(r.getDouble(r.fieldIndex(
                        "maxV"))), "row " + j);
                assertEquals(ref[j].pulseCount, r.getInt(r.fieldIndex("pulseCount")));
                assertEquals(ref[j].propagated, r.getBoolean(r.fieldIndex("propagated")));
                assertEquals(ref[j].newtonIterations, r.getLong(r.fieldIndex("newtonIterations")));
                assertEquals("cpu", r.getString(r.fieldIndex("backend")));
                List<Double> f = r.getList(r.fieldIndex("field"));
                double[] fa = new double[f.size()];
                for (int q = 0; q < fa.length; q++) {
                    fa[q] = f.get(q);
                }
                assertArrayEquals(ref[j].field, fa);
            }
        }
    }

    /**
     * The sweep reads Spark's internal rows: every numeric column type gives the value {@code Row}'s
     * {@code ((Number) get(i)).doubleValue()} gives (byte, short, long, float, decimal, double columns; input columns
     * are passed through unchanged).
     */
    @Test
    void everyNumericColumnTypeIsReadAsItsDoubleValue() {
        SparkSession spark = SparkTestSession.get();
        StructType schema = new StructType().add("id", DataTypes.LongType).add("a", DataTypes.createDecimalType(10, 7))
                .add("eps", DataTypes.FloatType).add("I", DataTypes.ShortType).add("D", DataTypes.ByteType)
                .add("gamma", DataTypes.DoubleType);
        List<Row> rows = new ArrayList<>();
        for (int j = 0; j < 4; j++) {
            rows.add(RowFactory.create((long) j << 40, new java.math.BigDecimal("0.0" + (5 + j) + "12345"),
                    0.01f + 0.001f * j, (short) (j % 2), (byte) (1 + j % 2), 0.5 + 0.125 * j));
        }
        Dataset<Row> in = spark.createDataFrame(rows, schema);
        GpuFitzHughNagumo t = transformer().setRecordEvery(0).setTEnd(1);
        FhnSetup setup = new FhnSetup(t.toConfig().validate());
        List<Row> out = t.transform(in.repartition(2)).orderBy("id").collectAsList();
        assertEquals(rows.size(), out.size());
        for (int j = 0; j < rows.size(); j++) {
            Row r = rows.get(j);
            FhnParams p = new FhnParams(((Number) r.get(1)).doubleValue(), ((Number) r.get(2)).doubleValue(),
                    ((Number) r.get(5)).doubleValue(), ((Number) r.get(3)).doubleValue(),
                    ((Number) r.get(4)).doubleValue());
            FhnResult ref = FhnCpu.run(setup, new FhnParams[] {p}, 1)[0];
            Row o = out.get(j);
            for (int q = 0; q < 6; q++) {
                assertEquals(r.get(q), o.get(q), "input column " + q + " passes through, row " + j);
            }
            assertEquals(Double.doubleToLongBits(ref.maxV), Double.doubleToLongBits(o.getDouble(o.fieldIndex("maxV"))),
                    "row " + j);
            assertEquals(ref.finalTime, o.getDouble(o.fieldIndex("finalTime")), 0.0);
        }
    }

    @Test
    void paramsSaveAndLoad() throws Exception {
        GpuFitzHughNagumo t = transformer().setBoundary(FhnConfig.PERIODIC).setSeries(new double[] {1, 0.5});
        String dir = tmp.resolve("fhn").toString();
        SparkTestSession.get();
        t.write().save(dir);
        GpuFitzHughNagumo back = GpuFitzHughNagumo.load(dir);
        assertEquals(t.uid(), back.uid());
        FhnConfig a = t.toConfig();
        FhnConfig b = back.toConfig();
        assertEquals(a.boundary, b.boundary);
        assertEquals(a.cells, b.cells);
        assertEquals(a.scheme, b.scheme);
        assertArrayEquals(a.series, b.series);
        assertEquals(a.recordEvery, b.recordEvery);
        assertEquals("cpu", back.getBackend());
        // sealed like the models: the record names the capability, and another capability's loader refuses it
        assertTrue(java.nio.file.Files.readString(Path.of(dir, io.sparkgpu.ml.ParamsIO.INTEGRITY))
                .contains("\"pde estimator\""));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> io.sparkgpu.kmeans.GpuKMeansModel.load(dir));
        assertTrue(e.getMessage().contains("holds a pde estimator") && e.getMessage().contains("GpuFitzHughNagumo.load"),
                e.getMessage());
        // a changed params file is refused
        Path md;
        try (var s = java.nio.file.Files.list(Path.of(dir, "metadata"))) {
            md = s.filter(f -> f.getFileName().toString().startsWith("part-")).findFirst().orElseThrow();
        }
        java.nio.file.Files.writeString(md, java.nio.file.Files.readString(md).replace("\"cells\":41", "\"cells\":43"));
        java.nio.file.Files.deleteIfExists(md.resolveSibling("." + md.getFileName() + ".crc"));
        e = assertThrows(IllegalArgumentException.class, () -> GpuFitzHughNagumo.load(dir));
        assertTrue(e.getMessage().contains("SHA-256"), e.getMessage());
    }

    @Test
    void badInputNamesTheColumnOrTheSetting() {
        SparkSession spark = SparkTestSession.get();
        assertEquals("cells must be in [3, 268435456], got 1",
                assertThrows(IllegalArgumentException.class, () -> new GpuFitzHughNagumo().setCells(1)).getMessage());
        assertEquals("scheme must be one of explicit|crank-nicolson|adaptive, got 'implicit'",
                assertThrows(IllegalArgumentException.class, () -> new GpuFitzHughNagumo().setScheme("implicit"))
                        .getMessage());
        Dataset<Row> in = sweep(spark, FhnTestData.sweep(2));
        GpuFitzHughNagumo t = transformer();
        t.set(t.gammaCol(), "g");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> t.transform(in)).getMessage()
                .startsWith("gammaCol 'g' is not a column of the input"));
        Dataset<Row> text = in.withColumn("gamma", org.apache.spark.sql.functions.lit("x"));
        assertEquals("column 'gamma' (gammaCol) must be numeric, got string",
                assertThrows(IllegalArgumentException.class, () -> transformer().transform(text)).getMessage());
        Dataset<Row> nan = in.withColumn("a", org.apache.spark.sql.functions.lit(Double.NaN));
        Exception e = assertThrows(Exception.class, () -> transformer().transform(nan).collectAsList());
        Throwable c = e;
        while (c.getCause() != null && !(c instanceof IllegalArgumentException)) {
            c = c.getCause();
        }
        assertTrue(c.getMessage().contains("a must be finite, got NaN"), c.getMessage());
        // a row's bad value names its column, not only the parameter (found by fuzzing, issue 18 item 8)
        GpuFitzHughNagumo renamed = transformer();
        renamed.set(renamed.aCol(), "thr");
        Exception r = assertThrows(Exception.class, () -> renamed.transform(nan.withColumnRenamed("a", "thr"))
                .collectAsList());
        assertTrue(r.getMessage().contains("column 'thr': a must be finite, got NaN"), r.getMessage());
        // the row as Spark's Row prints it (the sweep reads Spark's internal rows; their own text is bytes in hex)
        assertTrue(r.getMessage().matches("(?s).*\\(row \\[[01],NaN,0\\.0\\d*,[0-9.E-]+,0\\.[57]5?\\].*"), r.getMessage());
        GpuFitzHughNagumo exp = transformer().setScheme(FhnConfig.EXPLICIT).setDt(0.5);
        Throwable s = assertThrows(Exception.class, () -> exp.transform(in).collectAsList());
        while (s.getCause() != null && !(s instanceof IllegalArgumentException)) {
            s = s.getCause();
        }
        assertTrue(s.getMessage().contains("dx^2 / (2 D) = "), s.getMessage());
    }
}
