package io.sparkgpu.jobs;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/** Data sets of the demo: Iris (shipped as a resource) and seeded Gaussian blobs generated in Spark. */
final class DemoData {
    static final String IRIS_RESOURCE = "/io/sparkgpu/jobs/data/iris.csv";
    static final String[] IRIS_FEATURES = {"sepal_length", "sepal_width", "petal_length", "petal_width"};
    static final String[] IRIS_SPECIES = {"setosa", "versicolor", "virginica"};

    /** Blob centres lie evenly on a circle of this radius; each blob has unit standard deviation per axis. */
    static final int BLOBS = 8;
    static final double BLOB_RADIUS = 10.0;
    static final double BLOB_SIGMA = 1.0;

    private DemoData() {
    }

    /** The 150 Iris rows: four double columns, {@code species}, and {@code features} (array of the four). */
    static Dataset<Row> iris(SparkSession spark) {
        StructType schema = new StructType();
        for (String f : IRIS_FEATURES) {
            schema = schema.add(f, DataTypes.DoubleType, false);
        }
        schema = schema.add("species", DataTypes.StringType, false);
        List<Row> rows = new ArrayList<>();
        try (InputStream in = DemoData.class.getResourceAsStream(IRIS_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("resource " + IRIS_RESOURCE + " is missing from the classpath");
            }
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String header = r.readLine();
            if (header == null || !header.startsWith("sepal_length,")) {
                throw new IllegalStateException(IRIS_RESOURCE + " has an unexpected header: " + header);
            }
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (line.isBlank()) {
                    continue;
                }
                String[] p = line.split(",");
                rows.add(RowFactory.create(Double.parseDouble(p[0]), Double.parseDouble(p[1]),
                        Double.parseDouble(p[2]), Double.parseDouble(p[3]), p[4]));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Dataset<Row> df = spark.createDataFrame(rows, schema).coalesce(1);
        return df.withColumn("features", functions.array(functions.col("sepal_length"), functions.col("sepal_width"),
                functions.col("petal_length"), functions.col("petal_width")));
    }

    static int speciesIndex(String name) {
        for (int i = 0; i < IRIS_SPECIES.length; i++) {
            if (IRIS_SPECIES[i].equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("unknown Iris species '" + name + "'");
    }

    /** True centre of blob {@code b}. */
    static double[] blobCentre(int b) {
        double a = 2 * Math.PI * b / BLOBS;
        return new double[] {BLOB_RADIUS * Math.cos(a), BLOB_RADIUS * Math.sin(a)};
    }

    /**
     * {@code n} points in 2-D (columns id, blob, x, y, features): point {@code id} belongs to blob {@code id % 8}
     * and its noise comes from a generator seeded by (seed, id) alone, so the data set is the same for any
     * partitioning and any machine.
     */
    static Dataset<Row> blobs(SparkSession spark, long n, long seed, int partitions) {
        StructType schema = new StructType()
                .add("id", DataTypes.LongType, false)
                .add("blob", DataTypes.IntegerType, false)
                .add("x", DataTypes.DoubleType, false)
                .add("y", DataTypes.DoubleType, false);
        final double[][] centres = new double[BLOBS][];
        for (int b = 0; b < BLOBS; b++) {
            centres[b] = blobCentre(b);
        }
        Dataset<Row> df = spark.range(0, n, 1, partitions).map((MapFunction<Long, Row>) id -> {
            SplittableRandom rnd = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + id);
            int b = (int) (id % BLOBS);
            double x = centres[b][0] + BLOB_SIGMA * rnd.nextGaussian();
            double y = centres[b][1] + BLOB_SIGMA * rnd.nextGaussian();
            return RowFactory.create(id, b, x, y);
        }, Encoders.row(schema));
        return df.withColumn("features", functions.array(functions.col("x"), functions.col("y")));
    }

    // ------------------------------------------------------------------ small CSV inputs of the other demos

    /** Iris as CSV (the shipped resource as it is). */
    static String irisCsv() {
        try (InputStream in = DemoData.class.getResourceAsStream(IRIS_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("resource " + IRIS_RESOURCE + " is missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code n} rows {@code dose,response}: a logistic dose-response curve plus Gaussian noise (sd 0.1). */
    static String doseCsv(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder sb = new StringBuilder("dose,response\n");
        for (int i = 0; i < n; i++) {
            double x = Math.round(r.nextDouble(0, 10) * 100) / 100.0;
            double y = 1 / (1 + Math.exp(-(x - 5))) + 0.1 * r.nextGaussian();
            sb.append(x).append(',').append(Math.round(y * 1e4) / 1e4).append('\n');
        }
        return sb.toString();
    }

    /**
     * A 32 x 24 grid {@code x,y,cases,pop}: populations of 200..399 per cell, cases Poisson with a rate of 2%, and
     * 6% in the hot rectangle x 20..23, y 4..7 that the scan should find.
     */
    static String cellsCsv(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder sb = new StringBuilder("x,y,cases,pop\n");
        for (int x = 0; x < 32; x++) {
            for (int y = 0; y < 24; y++) {
                int pop = 200 + r.nextInt(200);
                boolean hot = x >= 20 && x <= 23 && y >= 4 && y <= 7;
                sb.append(x).append(',').append(y).append(',').append(poisson(r, pop * (hot ? 0.06 : 0.02)))
                        .append(',').append(pop).append('\n');
            }
        }
        return sb.toString();
    }

    /** The hot rectangle of {@link #cellsCsv}: x0, x1, y0, y1. */
    static final int[] HOT = {20, 23, 4, 7};

    private static int poisson(SplittableRandom r, double mean) {
        double l = Math.exp(-mean);
        double p = r.nextDouble();
        int c = 0;
        while (p > l) {
            p *= r.nextDouble();
            c++;
        }
        return c;
    }

    /** {@code n} rows {@code hour,amount}: hours of a day (busier in the afternoon) and amounts. */
    static String hoursCsv(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder sb = new StringBuilder("hour,amount\n");
        for (int i = 0; i < n; i++) {
            int h = (int) Math.floorMod(Math.round(15 + 4 * r.nextGaussian()), 24);
            sb.append(h).append(',').append(Math.round(r.nextDouble(1, 100) * 100) / 100.0).append('\n');
        }
        return sb.toString();
    }

    /** {@code n} rows {@code latency}: log-normal response times (median 20 ms). */
    static String latencyCsv(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        StringBuilder sb = new StringBuilder("latency\n");
        for (int i = 0; i < n; i++) {
            sb.append(Math.round(20 * Math.exp(0.5 * r.nextGaussian()) * 1000) / 1000.0).append('\n');
        }
        return sb.toString();
    }
}
