package io.sparkgpu.jobs.notebooks;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.apache.spark.sql.functions.array;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.exp;
import static org.apache.spark.sql.functions.rand;
import static org.apache.spark.sql.functions.randn;
import static org.apache.spark.sql.functions.round;
import static org.apache.spark.sql.functions.tanh;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.spline.GpuMonotoneCdf;
import io.sparkgpu.sql.SplineCdfFunction;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.sql.IsotonicPredictFunction;
import io.sparkgpu.sql.KMeansPredictFunction;
import io.sparkgpu.sql.TsneEmbeddingFunction;
import io.sparkgpu.tsne.GpuTsne;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs every {@code %sql} paragraph of every Zeppelin note under notebooks/zeppelin against a local SparkSession
 * with the spark-gpu SQL extensions, after preparing what the note's {@code %spark} (Scala) paragraphs create:
 * this test has no Scala interpreter, so it builds the same temporary views and saves the same k-means model, at
 * the names and the model path it reads from the note ({@code createOrReplaceTempView("...")} and
 * {@code val modelPath = "..."}): the views {@code iris} (kmeans.zpln), {@code iso_data} (isotonic.zpln),
 * {@code scan_cells} (scan.zpln), {@code digits} (tsne.zpln), {@code events} (sort.zpln), {@code fhn_sweep}
 * (fhn.zpln) and {@code spline_values} (spline.zpln), and a k-means, isotonic, t-SNE or CDF model, whichever
 * estimator the note fits. It also checks the {@code %spark.conf} paragraph and that no {@code %sql}
 * paragraph uses Zeppelin's {@code ${...}} dynamic forms, which plain Spark SQL would not understand.
 */
class ZeppelinNotesTest {
    static final String EXTENSIONS = "io.sparkgpu.sql.SparkGpuExtensions";
    private static final Pattern MODEL_PATH = Pattern.compile("val\\s+modelPath\\s*=\\s*\"([^\"]+)\"");
    private static final Pattern VIEW = Pattern.compile("createOrReplaceTempView\\(\\s*\"(\\w+)\"\\s*\\)");
    /** Zeppelin's SQL interpreter runs the statements of a paragraph one by one, split at ';'. */
    private static final Pattern STATEMENT_END = Pattern.compile(";\\s*(?:\\n|$)");

    private static SparkSession spark;
    private static final List<Path> createdDirs = new ArrayList<>();

    record Paragraph(int index, String id, String interpreter, String body) {
        String name() {
            return "paragraph #" + index + " " + interpreter + " (" + id + ")";
        }
    }

    @BeforeAll
    static void start() {
        spark = SparkSession.builder()
                .master("local[2]")
                .appName("ZeppelinNotesTest")
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.sql.extensions", EXTENSIONS)
                .getOrCreate();
    }

    @AfterAll
    static void stop() throws IOException {
        KMeansPredictFunction.clearCache();
        IsotonicPredictFunction.clearCache();
        TsneEmbeddingFunction.clearCache();
        SplineCdfFunction.clearCache();
        if (spark != null) {
            spark.stop();
        }
        for (Path dir : createdDirs) {
            if (Files.exists(dir)) {
                try (Stream<Path> s = Files.walk(dir)) {
                    s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
                }
            }
        }
    }

    static List<Paragraph> paragraphs(Path note) {
        JsonNode json = NotebookPaths.read(note);
        String defaultInterpreter = "%" + json.path("defaultInterpreterGroup").asText("spark");
        List<Paragraph> out = new ArrayList<>();
        JsonNode ps = json.path("paragraphs");
        for (int i = 0; i < ps.size(); i++) {
            String text = ps.get(i).path("text").asText("");
            String trimmed = text.stripLeading();
            String interpreter = defaultInterpreter;
            String body = text;
            if (trimmed.startsWith("%")) {
                int end = 0;
                while (end < trimmed.length() && !Character.isWhitespace(trimmed.charAt(end))) {
                    end++;
                }
                interpreter = trimmed.substring(0, end);
                body = trimmed.substring(end);
            }
            out.add(new Paragraph(i, ps.get(i).path("id").asText(""), interpreter, body.strip()));
        }
        return out;
    }

    @TestFactory
    Stream<DynamicNode> everySqlParagraphRuns() {
        List<Path> notes = NotebookPaths.files(NotebookPaths.ZEPPELIN_DIR, ".zpln");
        assertFalse(notes.isEmpty(), "no Zeppelin notes under " + NotebookPaths.ZEPPELIN_DIR);
        return notes.stream().map(note -> {
            List<Paragraph> ps = paragraphs(note);
            List<DynamicNode> tests = new ArrayList<>();
            tests.add(DynamicTest.dynamicTest("%spark.conf sets spark.jars and the SQL extensions",
                    () -> checkConf(note, ps)));
            tests.add(DynamicTest.dynamicTest("prepare what the %spark paragraphs create",
                    () -> prepare(note, ps)));
            for (Paragraph p : ps) {
                if (p.interpreter().equals("%sql") || p.interpreter().equals("%spark.sql")) {
                    tests.add(DynamicTest.dynamicTest(p.name(), () -> runSql(note, ps, p)));
                }
            }
            return DynamicContainer.dynamicContainer(NotebookPaths.rel(note), tests);
        });
    }

    private static void checkConf(Path note, List<Paragraph> ps) {
        Paragraph conf = ps.stream().filter(p -> p.interpreter().equals("%spark.conf")).findFirst()
                .orElseThrow(() -> new AssertionError(NotebookPaths.rel(note) + " has no %spark.conf paragraph"));
        assertTrue(conf.body().lines().anyMatch(l -> l.trim().matches("spark\\.sql\\.extensions\\s+"
                        + Pattern.quote(EXTENSIONS))),
                "%spark.conf must set spark.sql.extensions " + EXTENSIONS + ":\n" + conf.body());
        assertTrue(conf.body().lines().anyMatch(l -> l.trim().matches("spark\\.jars\\s+\\S*-spark-submit\\.jar")),
                "%spark.conf must put the spark-submit jar on spark.jars:\n" + conf.body());
        assertTrue(ps.indexOf(conf) < ps.stream().filter(p -> p.interpreter().startsWith("%spark")
                        && !p.interpreter().equals("%spark.conf")).mapToInt(ps::indexOf).min().orElse(ps.size()),
                "%spark.conf must come before the first Spark paragraph (it only applies before the interpreter starts)");
    }

    /** Names of the views the note's %spark paragraphs create, and its model path (null when it has none). */
    private static Set<String> views(List<Paragraph> ps) {
        Set<String> views = new LinkedHashSet<>();
        for (Paragraph p : ps) {
            if (p.interpreter().equals("%spark") || p.interpreter().equals("%spark.spark")) {
                Matcher m = VIEW.matcher(p.body());
                while (m.find()) {
                    views.add(m.group(1));
                }
            }
        }
        return views;
    }

    private static String modelPath(List<Paragraph> ps) {
        for (Paragraph p : ps) {
            if (p.interpreter().startsWith("%spark")) {
                Matcher m = MODEL_PATH.matcher(p.body());
                if (m.find()) {
                    return m.group(1);
                }
            }
        }
        return null;
    }

    /**
     * Mirrors the %spark paragraphs: the views they register (the data generated exactly as the note does) and,
     * when the note saves a model at modelPath, the same model (k-means on iris, isotonic regression on iso_data).
     */
    private static void prepare(Path note, List<Paragraph> ps) throws IOException {
        Set<String> views = views(ps);
        for (String v : views) {
            Dataset<Row> df = switch (v) {
                case "iris" -> iris();
                case "iso_data" -> isotonicData();
                case "scan_cells" -> scanCells();
                case "digits" -> digits();
                case "events" -> sortEvents();
                case "fhn_sweep" -> fhnSweep();
                case "spline_values" -> splineValues();
                default -> throw new AssertionError(NotebookPaths.rel(note) + " creates the view '" + v + "', which "
                        + "this test cannot build yet: teach ZeppelinNotesTest.prepare to create it like the note's "
                        + "%spark paragraph does");
            };
            df.createOrReplaceTempView(v);
        }
        String modelPath = modelPath(ps);
        if (modelPath == null) {
            return;
        }
        Path dir = Path.of(modelPath);
        Path top = dir.getParent() != null ? dir.getParent() : dir;
        if (!Files.exists(top)) {
            createdDirs.add(top);
        }
        String scala = ps.stream().filter(p -> p.interpreter().startsWith("%spark")).map(Paragraph::body)
                .reduce("", (a, b) -> a + "\n" + b);
        if (scala.contains("new GpuKMeans()") && views.contains("iris")) {
            GpuKMeansModel model = new GpuKMeans().setK(3).setSeed(1L).setMaxIter(50).setBackend("auto")
                    .fit(spark.table("iris"));
            model.write().overwrite().save(modelPath);
            KMeansPredictFunction.clearCache();
        } else if (scala.contains("new GpuIsotonicRegression()") && views.contains("iso_data")) {
            new GpuIsotonicRegression().setFeaturesCol("x").setLabelCol("y").setWeightCol("w").setBackend("auto")
                    .fit(spark.table("iso_data")).write().overwrite().save(modelPath);
            IsotonicPredictFunction.clearCache();
        } else if (scala.contains("new GpuTsne()") && views.contains("digits")) {
            // the note's params, but only 50 iterations and no quality sample: the %sql paragraphs look the
            // coordinates up by id, and the ids are the same for any number of iterations
            new GpuTsne().setFeaturesCol("features").setIdCol("id").setPerplexity(30.0).setMaxIter(50)
                    .setGridMaxIntervals(40).setSeed(1L).setQualitySampleSize(0).setBackend("auto")
                    .fit(spark.table("digits")).write().overwrite().save(modelPath);
            TsneEmbeddingFunction.clearCache();
        } else if (scala.contains("new GpuMonotoneCdf()") && views.contains("spline_values")) {
            new GpuMonotoneCdf().setInputCol("v").setNumKnots(1025).setBackend("auto")
                    .fit(spark.table("spline_values")).write().overwrite().save(modelPath);
            SplineCdfFunction.clearCache();
        } else {
            fail(NotebookPaths.rel(note) + " saves a model at " + modelPath + " that this test cannot build yet: "
                    + "teach ZeppelinNotesTest.prepare to fit it like the note's %spark paragraph does");
        }
    }

    /** spline.zpln's data: 100,000 lognormal values v = exp(1.5 N(0, 1)), 4 partitions, seed 5. */
    static Dataset<Row> splineValues() {
        return spark.range(0, 100000, 1, 4).select(col("id"), exp(randn(5L).multiply(1.5)).as("v")).cache();
    }

    /** isotonic.zpln's data: 20,000 rows, x on [0, 10] in steps of 0.01, an increasing curve plus noise, weights. */
    static Dataset<Row> isotonicData() {
        return spark.range(0, 20000, 1, 4)
                .withColumn("x", round(rand(11L).multiply(10.0), 2))
                .withColumn("truth", tanh(col("x").minus(5.0)).multiply(3.0).plus(col("x").multiply(0.4)))
                .withColumn("y", col("truth").plus(randn(12L).multiply(0.8)))
                .withColumn("w", col("id").mod(3).plus(1).cast("double"));
    }

    /** sort.zpln's events: 100,000 rows, hour of the week in [0, 168) (1 in 50 null), latency in ms (a few NaN). */
    static Dataset<Row> sortEvents() {
        return spark.range(0, 100000, 1, 4)
                .withColumn("hour", org.apache.spark.sql.functions.when(rand(1L).lt(0.02),
                        org.apache.spark.sql.functions.lit(null))
                        .otherwise(org.apache.spark.sql.functions.floor(rand(2L).multiply(168)).cast("int")))
                .withColumn("latency", org.apache.spark.sql.functions.when(rand(3L).lt(0.001),
                        org.apache.spark.sql.functions.lit(Double.NaN))
                        .otherwise(org.apache.spark.sql.functions.exp(randn(4L).multiply(0.7).plus(3.0))));
    }

    /** fhn.zpln's sweep: I x eps through GpuFitzHughNagumo on the note's grid. */
    static Dataset<Row> fhnSweep() {
        List<Row> sets = new ArrayList<>();
        for (double eps : new double[] {0.005, 0.01, 0.02}) {
            for (double current : new double[] {0, 0.05, 0.2, 0.5, 1}) {
                sets.add(RowFactory.create(current, eps));
            }
        }
        StructType schema = new StructType().add("I", DataTypes.DoubleType).add("eps", DataTypes.DoubleType);
        return new io.sparkgpu.pde.GpuFitzHughNagumo().setCells(201).setLength(40).setDt(0.01).setTEnd(100)
                .setStimulus(io.sparkgpu.pde.FhnConfig.CONSTANT).setBackend("auto")
                .transform(spark.createDataFrame(sets, schema).repartition(3)).cache();
    }

    /** scan.zpln's map: 40 x 30 cells, Poisson cases, twice the rate in x 24..29, y 6..10 (same draws). */
    static Dataset<Row> scanCells() {
        Random rnd = new Random(42L);
        List<Row> rows = new ArrayList<>();
        for (int y = 0; y < 30; y++) {
            for (int x = 0; x < 40; x++) {
                int population = 200 + rnd.nextInt(800);
                boolean inside = x >= 24 && x <= 29 && y >= 6 && y <= 10;
                double mean = population * 0.02 * (inside ? 2.0 : 1.0);
                double limit = Math.exp(-mean);
                double p = rnd.nextDouble();
                int cases = 0;
                while (p > limit) {
                    cases++;
                    p *= rnd.nextDouble();
                }
                rows.add(RowFactory.create(x, y, population, cases));
            }
        }
        StructType schema = new StructType().add("x", DataTypes.IntegerType).add("y", DataTypes.IntegerType)
                .add("population", DataTypes.IntegerType).add("cases", DataTypes.IntegerType);
        return spark.createDataFrame(rows, schema);
    }

    /** tsne.zpln's digits: id (0-based line after the header), label, the 64 pixels as an ML vector. */
    static Dataset<Row> digits() throws IOException {
        List<String> lines;
        try (InputStream in = ZeppelinNotesTest.class.getResourceAsStream("/io/sparkgpu/jobs/data/digits.csv")) {
            assertTrue(in != null, "the digits resource is missing from the test classpath");
            lines = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
        }
        List<Row> rows = new ArrayList<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",");
            double[] pixels = new double[64];
            for (int j = 0; j < 64; j++) {
                pixels[j] = Double.parseDouble(f[j]);
            }
            rows.add(RowFactory.create(rows.size(), Integer.parseInt(f[64]), Vectors.dense(pixels)));
        }
        StructType schema = new StructType().add("id", DataTypes.IntegerType).add("label", DataTypes.IntegerType)
                .add("features", SQLDataTypes.VectorType());
        return spark.createDataFrame(rows, schema).repartition(4);
    }

    static Dataset<Row> iris() throws IOException {
        List<String> lines;
        try (InputStream in = ZeppelinNotesTest.class.getResourceAsStream("/io/sparkgpu/jobs/data/iris.csv")) {
            assertTrue(in != null, "the Iris resource is missing from the test classpath");
            lines = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
        }
        return spark.read().option("header", "true").option("inferSchema", "true")
                .csv(spark.createDataset(lines, Encoders.STRING()))
                .withColumn("features", array(col("sepal_length"), col("sepal_width"), col("petal_length"),
                        col("petal_width")));
    }

    private static void runSql(Path note, List<Paragraph> ps, Paragraph p) {
        String where = NotebookPaths.rel(note) + " " + p.name();
        assertFalse(p.body().contains("${"), where + " uses a Zeppelin dynamic form (${...}); keep the SQL plain");
        String modelPath = modelPath(ps);
        for (String fn : List.of("sparkgpu_kmeans_predict", "sparkgpu_isotonic_predict",
                "sparkgpu_tsne_embedding", "sparkgpu_cdf", "sparkgpu_quantile")) {
            if (p.body().contains(fn)) {
                assertTrue(modelPath != null && p.body().contains("'" + modelPath + "'"),
                        where + " must predict with the model the %spark paragraph saves (" + modelPath + ")");
            }
        }
        for (String statement : STATEMENT_END.split(p.body())) {
            if (statement.lines().allMatch(l -> l.isBlank() || l.trim().startsWith("--"))) {
                continue;
            }
            List<Row> rows;
            Dataset<Row> result;
            try {
                result = spark.sql(statement);
                rows = result.collectAsList();
            } catch (RuntimeException e) {
                throw new AssertionError(where + " fails:\n" + statement + "\n" + e, e);
            }
            assertFalse(rows.isEmpty(), where + " returns no rows:\n" + statement);
            List<String> columns = List.of(result.columns());
            if (statement.contains("sparkgpu_kmeans_predict") && columns.contains("cluster")) {
                for (Row r : rows) {
                    Object c = r.get(r.fieldIndex("cluster"));
                    assertTrue(c instanceof Integer && (Integer) c >= 0 && (Integer) c < 3,
                            where + ": cluster " + c + " is not one of 0, 1, 2 in " + r);
                }
            }
            if (statement.contains("sparkgpu_isotonic_predict") && columns.contains("prediction")) {
                for (Row r : rows) {
                    Object v = r.get(r.fieldIndex("prediction"));
                    assertTrue(v instanceof Double && Double.isFinite((Double) v),
                            where + ": prediction " + v + " is not a finite double in " + r);
                }
            }
            if (statement.contains("sparkgpu_tsne_embedding")) {
                for (String c : List.of("x", "y")) {
                    assertTrue(columns.contains(c), where + " should name the coordinates x and y: " + columns);
                    for (Row r : rows) {
                        Object v = r.get(r.fieldIndex(c));
                        assertTrue(v instanceof Double && Double.isFinite((Double) v),
                                where + ": " + c + " " + v + " is not a finite double in " + r);
                    }
                }
            }
            if (statement.contains("sparkgpu_cdf") && columns.contains("cdf")) {
                for (Row r : rows) {
                    Object v = r.get(r.fieldIndex("cdf"));
                    assertTrue(v instanceof Double && (Double) v >= 0 && (Double) v <= 1,
                            where + ": cdf " + v + " is not a double in [0, 1] in " + r);
                }
            }
            if (statement.contains("sparkgpu_scan_") && columns.contains("llr")) {
                for (Row r : rows) {
                    Object v = r.get(r.fieldIndex("llr"));
                    assertTrue(v instanceof Double && (Double) v >= 0,
                            where + ": llr " + v + " is not a double >= 0 in " + r);
                }
            }
        }
    }
}
