package io.sparkgpu.jobs.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.spark.ml.linalg.VectorUDT;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java block of README.md compiles and runs, read from the README itself so that the samples cannot drift
 * from the code. The README's first Java block holds the imports the samples need; each other block is the body
 * of a method with {@code spark} (the SparkSession) and {@code df} (the user's DataFrame) in scope, and runs
 * against a small DataFrame with the columns its text names (the fixture is chosen by the estimator the block
 * uses; a block using none of them fails the test until it gets a fixture here). Paths under {@code /models/}
 * are redirected to a temporary directory.
 */
class ReadmeSamplesTest {
    private static SparkSession spark;

    @TempDir
    Path tmp;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder()
                .master("local[2]")
                .appName("ReadmeSamplesTest")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.sql.codegen.wholeStage", "false")
                .getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
    }

    /** The DataFrame a sample runs on, by the estimator class it uses (first match wins). */
    private static final Map<String, Function<SparkSession, Dataset<Row>>> FIXTURES = new LinkedHashMap<>();

    static {
        // before GpuIsotonicRegression: the spline sample also fits an isotonic model on its x, y
        FIXTURES.put("GpuMonotoneSpline", ReadmeSamplesTest::curve);
        FIXTURES.put("GpuMonotoneCdf", ReadmeSamplesTest::latencies);
        FIXTURES.put("GpuKMeans", ReadmeSamplesTest::points);
        FIXTURES.put("GpuIsotonicRegression", ReadmeSamplesTest::scores);
        FIXTURES.put("GpuScanStatistic", ReadmeSamplesTest::cells);
        FIXTURES.put("GpuTsne", ReadmeSamplesTest::points);
        FIXTURES.put("GpuSort", ReadmeSamplesTest::events);
        FIXTURES.put("GpuFitzHughNagumo", ReadmeSamplesTest::fhnParams);
    }

    /**
     * Blocks that are compiled but not run, with the reason (keyed like {@link #FIXTURES}). None today: t-SNE's
     * sample (300 points, 1000 iterations) runs in seconds on the CPU twin since its repulsion is chosen from the
     * data (exact sums for small n) instead of a grid sized for a GPU.
     */
    private static final Map<String, String> COMPILE_ONLY = Map.of();

    record Block(int line, String code) {
    }

    static List<Block> javaBlocks() throws Exception {
        List<String> lines = Files.readAllLines(Paths.get("..", "README.md"), StandardCharsets.UTF_8);
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).trim().equals("```java")) {
                int start = i + 1;
                StringBuilder sb = new StringBuilder();
                for (i = start; i < lines.size() && !lines.get(i).trim().startsWith("```"); i++) {
                    sb.append(lines.get(i)).append('\n');
                }
                blocks.add(new Block(start + 1, sb.toString()));
            }
        }
        return blocks;
    }

    @Test
    void everyJavaBlockCompilesAndRuns() throws Exception {
        List<Block> blocks = javaBlocks();
        assertTrue(blocks.size() >= 5, "README has its Java samples: " + blocks.size());
        Block imports = blocks.get(0);
        for (String l : imports.code().split("\n")) {
            assertTrue(l.isBlank() || l.startsWith("import ") || l.startsWith("//"),
                    "README's first Java block holds only the samples' imports; line: " + l);
        }
        Path src = Files.createDirectories(tmp.resolve("src"));
        Path classes = Files.createDirectories(tmp.resolve("classes"));
        String models = tmp.resolve("models").toString();
        List<String> names = new ArrayList<>();
        List<Path> files = new ArrayList<>();
        for (Block b : blocks.subList(1, blocks.size())) {
            String name = "ReadmeSampleLine" + b.line();
            String body = b.code().replace("\"/models/", "\"" + models + "/");
            String java = "package readme;\n" + imports.code()
                    + "public class " + name + " {\n"
                    + "  public static void run(org.apache.spark.sql.SparkSession spark,"
                    + " org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> df) throws Exception {\n"
                    + body + "  }\n}\n";
            Path f = src.resolve(name + ".java");
            Files.writeString(f, java);
            files.add(f);
            names.add(name);
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> args = new ArrayList<>(List.of("-d", classes.toString(), "-cp",
                System.getProperty("java.class.path"), "-proc:none", "-Xlint:none", "-nowarn"));
        files.forEach(f -> args.add(f.toString()));
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        int rc = javac.run(null, null, err, args.toArray(new String[0]));
        assertEquals(0, rc, "README Java samples must compile as written (README line numbers are in the class names):\n"
                + err.toString(StandardCharsets.UTF_8));
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                ReadmeSamplesTest.class.getClassLoader())) {
            for (int i = 0; i < names.size(); i++) {
                Block b = blocks.get(i + 1);
                Function<SparkSession, Dataset<Row>> fixture = FIXTURES.entrySet().stream()
                        .filter(e -> b.code().contains(e.getKey())).map(Map.Entry::getValue).findFirst()
                        .orElse(null);
                if (fixture == null) {
                    fail("README line " + b.line() + ": no fixture for this Java block; add one to ReadmeSamplesTest "
                            + "(keys: " + FIXTURES.keySet() + ")");
                }
                if (COMPILE_ONLY.keySet().stream().anyMatch(k -> b.code().contains(k))) {
                    System.out.println("README line " + b.line() + ": compiled, not run: "
                            + COMPILE_ONLY.entrySet().stream().filter(e -> b.code().contains(e.getKey()))
                                    .findFirst().get().getValue());
                    continue;
                }
                Method run = loader.loadClass("readme." + names.get(i)).getMethod("run", SparkSession.class,
                        Dataset.class);
                try {
                    long t0 = System.nanoTime();
                    run.invoke(null, spark, fixture.apply(spark));
                    System.out.printf(java.util.Locale.ROOT, "README line %d: ran in %.1f s%n", b.line(),
                            (System.nanoTime() - t0) / 1e9);
                } catch (InvocationTargetException e) {
                    throw new AssertionError("README Java block at line " + b.line() + " failed: " + e.getCause(),
                            e.getCause());
                }
            }
        }
    }

    /** 300 points in three blobs: features (vector), id; for k-means and t-SNE. */
    static Dataset<Row> points(SparkSession s) {
        Random r = new Random(7);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            int c = i % 3;
            rows.add(RowFactory.create((long) i, Vectors.dense(c * 5 + r.nextGaussian(), c * 3 + r.nextGaussian(),
                    r.nextGaussian())));
        }
        StructType schema = new StructType(new StructField[] {
            new StructField("id", DataTypes.LongType, false, Metadata.empty()),
            new StructField("features", new VectorUDT(), false, Metadata.empty())});
        return s.createDataFrame(rows, schema);
    }

    /** Noisy monotone scores in [0, 1]: label, features (double), w, score. */
    static Dataset<Row> scores(SparkSession s) {
        Random r = new Random(11);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            double x = r.nextDouble();
            double y = Math.min(1, Math.max(0, x * x + 0.1 * r.nextGaussian()));
            rows.add(RowFactory.create(y, x, 1 + r.nextInt(3) * 0.5, x));
        }
        StructType schema = new StructType(new StructField[] {
            new StructField("label", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("features", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("w", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("score", DataTypes.DoubleType, false, Metadata.empty())});
        return s.createDataFrame(rows, schema);
    }

    /** A 20 x 15 grid of cells with a doubled rate in one rectangle: x, y, cases, pop. */
    static Dataset<Row> cells(SparkSession s) {
        Random r = new Random(3);
        List<Row> rows = new ArrayList<>();
        for (int x = 0; x < 20; x++) {
            for (int y = 0; y < 15; y++) {
                double pop = 500 + r.nextInt(500);
                double rate = (x >= 12 && x <= 15 && y >= 3 && y <= 6) ? 0.02 : 0.01;
                long cases = Math.round(pop * rate + Math.sqrt(pop * rate) * r.nextGaussian());
                rows.add(RowFactory.create(x, y, Math.max(0L, cases), pop));
            }
        }
        StructType schema = new StructType(new StructField[] {
            new StructField("x", DataTypes.IntegerType, false, Metadata.empty()),
            new StructField("y", DataTypes.IntegerType, false, Metadata.empty()),
            new StructField("cases", DataTypes.LongType, false, Metadata.empty()),
            new StructField("pop", DataTypes.DoubleType, false, Metadata.empty())});
        return s.createDataFrame(rows, schema);
    }

    /** 400 events: hour of the week (int in [0, 168), some null), value. */
    static Dataset<Row> events(SparkSession s) {
        Random r = new Random(5);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            rows.add(RowFactory.create(i % 37 == 0 ? null : r.nextInt(168), r.nextDouble()));
        }
        StructType schema = new StructType(new StructField[] {
            new StructField("hour", DataTypes.IntegerType, true, Metadata.empty()),
            new StructField("value", DataTypes.DoubleType, false, Metadata.empty())});
        return s.createDataFrame(rows, schema).repartition(3);
    }

    /** Two FitzHugh-Nagumo parameter sets: a, eps, gamma, I, D (one above threshold, one below). */
    static Dataset<Row> fhnParams(SparkSession s) {
        List<Row> rows = List.of(RowFactory.create(0.1, 0.01, 0.5, 0.5, 1.0), RowFactory.create(0.1, 0.01, 0.5, 0.0, 1.0));
        StructType schema = new StructType(new StructField[] {
            new StructField("a", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("eps", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("gamma", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("I", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("D", DataTypes.DoubleType, false, Metadata.empty())});
        return s.createDataFrame(rows, schema);
    }

    /** 200 points of an increasing curve with flats: x, y, slope (its derivative), w. */
    static Dataset<Row> curve(SparkSession s) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            double x = i * 0.05;
            double y = x < 3 ? x * x / 9 : x < 5 ? 1 : 1 + Math.log(x - 4);
            double slope = x < 3 ? 2 * x / 9 : x < 5 ? 0 : 1 / (x - 4);
            rows.add(RowFactory.create(x, y, slope, 1.0 + (i % 3)));
        }
        StructType schema = new StructType(new StructField[] {
            new StructField("x", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("y", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("slope", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("w", DataTypes.DoubleType, false, Metadata.empty())});
        return s.createDataFrame(rows, schema);
    }

    /** 2,000 lognormal latencies (ms) with ties from rounding, and weights w. */
    static Dataset<Row> latencies(SparkSession s) {
        Random r = new Random(9);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            rows.add(RowFactory.create(Math.round(20 * Math.exp(r.nextGaussian())) / 1.0, 1.0 + (i % 3)));
        }
        StructType schema = new StructType(new StructField[] {
            new StructField("latency", DataTypes.DoubleType, false, Metadata.empty()),
            new StructField("w", DataTypes.DoubleType, false, Metadata.empty())});
        return s.createDataFrame(rows, schema);
    }
}
