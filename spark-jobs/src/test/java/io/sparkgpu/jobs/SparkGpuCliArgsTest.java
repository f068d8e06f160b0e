package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Argument parsing and usage errors of the CLI; none of these runs start Spark. */
class SparkGpuCliArgsTest {
    @TempDir
    Path tmp;

    private static void assertUsageError(CliRun r, String... fragments) {
        assertEquals(SparkGpuCli.EXIT_USAGE, r.exitCode, r::toString);
        for (String f : fragments) {
            assertTrue(r.err.contains(f), () -> "stderr should contain '" + f + "'\n" + r);
        }
        assertTrue(r.err.contains("--help"), () -> "stderr should point to --help\n" + r);
        assertFalse(r.err.contains("\tat "), () -> "no stack trace expected\n" + r);
    }

    @Test
    void unknownOptionIsNamedWithExitCode2() {
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a,b", "--bogus-option", "3"),
                "Unknown option", "--bogus-option");
    }

    @Test
    void unknownOptionWinsOverMissingRequiredOptions() {
        // a misspelt --input must be reported as such, not as "--input is missing"
        assertUsageError(CliRun.of("kmeans", "--inptu", "x.csv", "--features", "a"), "--inptu");
    }

    @Test
    void missingInputIsNamed() {
        assertUsageError(CliRun.of("kmeans", "--features", "a,b", "-k", "3"), "Missing required option", "--input");
    }

    @Test
    void missingFeaturesIsNamed() {
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv"), "Missing required option", "--features");
    }

    @Test
    void nonNumericKIsNamed() {
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "-k", "three"), "'-k'", "three");
    }

    @Test
    void tooSmallKIsNamed() {
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "-k", "1"), "'-k'", ">= 2");
    }

    @Test
    void otherBadValuesNameTheirOption() {
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "--max-iter", "-1"), "--max-iter");
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "--tol", "-0.5"), "--tol");
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "--init", "kmeans++"),
                "--init", "kmeans++");
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "--init-steps", "0"), "--init-steps");
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "--distance", "manhattan"),
                "--distance", "manhattan");
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "--backend", "tpu"),
                "--backend", "tpu");
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "--format", "json"), "--format");
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "--output-format", "orc"),
                "--output-format");
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "--plot", "clusters.jpg"), "--plot");
        assertUsageError(CliRun.of("demo", "--points", "10"), "--points");
        assertUsageError(CliRun.of("demo", "--backend", "fpga"), "--backend", "fpga");
    }

    @Test
    void enumValuesAreCaseInsensitive() {
        // accepted by the parser; fails later only because -k is bad, which proves --distance/--format parsed
        assertUsageError(CliRun.of("kmeans", "--input", "x.csv", "--features", "a", "--distance", "COSINE",
                "--format", "CSV", "-k", "0"), "'-k'");
    }

    @Test
    void missingOrUnknownCommand() {
        assertUsageError(CliRun.of(), "Missing command");
        assertUsageError(CliRun.of("kmenas"), "kmenas");
    }

    @Test
    void helpOnEveryCommand() {
        CliRun top = CliRun.of("--help");
        assertEquals(0, top.exitCode, top::toString);
        assertTrue(top.out.contains("kmeans") && top.out.contains("demo"), top::toString);

        CliRun km = CliRun.of("kmeans", "--help");
        assertEquals(0, km.exitCode, km::toString);
        for (String opt : List.of("--input", "--format", "--features", "--weight", "-k", "--max-iter", "--tol", "--seed",
                "--init", "--init-steps", "--distance", "--backend", "--output", "--output-format", "--model-out",
                "--plot", "--master", "--verbose")) {
            assertTrue(km.out.contains(opt), () -> "kmeans --help should list " + opt + "\n" + km);
        }
        CliRun demo = CliRun.of("demo", "--help");
        assertEquals(0, demo.exitCode, demo::toString);
        assertTrue(demo.out.contains("--out-dir") && demo.out.contains("--points"), demo::toString);
        CliRun helpCmd = CliRun.of("help", "kmeans");
        assertEquals(0, helpCmd.exitCode, helpCmd::toString);
        assertTrue(helpCmd.out.contains("--features"), helpCmd::toString);
    }

    @Test
    void masterDefaultsToLocalOnlyWhenSparkHasNone() {
        SparkConf none = new SparkConf(false);
        assertEquals("local[*]", SparkSessions.masterToSet(null, none));
        assertEquals("local[2]", SparkSessions.masterToSet("local[2]", none));
        SparkConf submitted = new SparkConf(false).set("spark.master", "yarn");
        assertNull(SparkSessions.masterToSet(null, submitted), "spark-submit's master must not be overridden");
        assertEquals("local[3]", SparkSessions.masterToSet("local[3]", submitted), "an explicit --master wins");
    }

    @Test
    void sessionSettingsKeepExistingConfiguration() {
        Map<String, String> plain = SparkSessions.builder("t").settings(new SparkConf(false));
        assertNull(plain.get("spark.ui.enabled"), "the web UI is Spark's (on) by default");
        assertEquals("true", plain.get("spark.ui.showConsoleProgress"), "Spark's progress bar is on by default");
        Map<String, String> quiet = SparkSessions.builder("t").quiet(true).settings(
                new SparkConf(false).set("spark.ui.showConsoleProgress", "true"));
        assertEquals("false", quiet.get("spark.ui.showConsoleProgress"), "--quiet wins");
        assertFalse(SparkSessions.builder("t").settings(new SparkConf(false).set("spark.ui.showConsoleProgress",
                "false")).containsKey("spark.ui.showConsoleProgress"), "a configured bar is kept");
        assertEquals("local[*]", plain.get("spark.master"));
        // the extensions class is not part of this branch: it must then not be configured
        assertEquals(SparkSessions.extensionsAvailable(), plain.containsKey("spark.sql.extensions"));

        Map<String, String> noUi = SparkSessions.builder("t").ui(false).settings(new SparkConf(false));
        assertEquals("false", noUi.get("spark.ui.enabled"));

        SparkConf configured = new SparkConf(false).set("spark.master", "spark://h:7077")
                .set("spark.sql.extensions", "com.example.Ext");
        Map<String, String> s = SparkSessions.builder("t").settings(configured);
        assertFalse(s.containsKey("spark.master"));
        assertFalse(s.containsKey("spark.sql.extensions"));
    }

    @Test
    void modelSummaryJsonIsWellFormed() {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("name", "a\"b\\c\n");
        m.put("k", 3);
        m.put("cost", 1.5);
        m.put("bad", Double.NaN);
        m.put("sizes", new long[] {1, 2});
        m.put("centers", new double[][] {{1.0, 2.0}, {3.0, 4.0}});
        m.put("none", null);
        m.put("nested", java.util.Map.of("a", List.of("x", 2.5e-300)));
        m.put("empty", List.of());
        String json = ModelOutput.toJson(m);
        assertEquals("{\n  \"name\": \"a\\\"b\\\\c\\n\",\n  \"k\": 3,\n  \"cost\": 1.5,\n  \"bad\": null,\n"
                + "  \"sizes\": [1, 2],\n  \"centers\": [[1.0, 2.0], [3.0, 4.0]],\n  \"none\": null,\n"
                + "  \"nested\": {\n    \"a\": [\"x\", 2.5E-300]\n  },\n  \"empty\": []\n}", json);
    }

    /**
     * The template must carry the same JVM options as the parent pom (the single source of the list), followed by the
     * template's own heap advice (transparent huge pages).
     */
    @Test
    void sparkDefaultsTemplateHasThePomJvmOptions() throws IOException {
        Path root = Paths.get("..").toAbsolutePath().normalize();
        String pom = Files.readString(root.resolve("pom.xml"), StandardCharsets.UTF_8);
        Matcher m = Pattern.compile("<spark\\.jvm\\.opens>([^<]+)</spark\\.jvm\\.opens>").matcher(pom);
        assertTrue(m.find(), "parent pom defines spark.jvm.opens");
        String opens = m.group(1).trim();
        List<String> lines = Files.readAllLines(root.resolve("conf/spark-defaults.conf.template"), StandardCharsets.UTF_8);
        for (String key : List.of("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")) {
            String line = lines.stream().filter(l -> l.startsWith(key + " ")).findFirst().orElse("");
            assertEquals(opens + " -XX:+UseTransparentHugePages", line.substring(Math.min(line.length(),
                    key.length())).trim(), key);
        }
        for (String key : List.of("spark.executor.resource.gpu.amount", "spark.task.resource.gpu.amount",
                "spark.executor.resource.gpu.discoveryScript", "spark.sql.extensions", "spark.sparkgpu.backend")) {
            assertTrue(lines.stream().anyMatch(l -> l.startsWith(key + " ")), key + " is set in the template");
        }
    }

    @Test
    void gpuDiscoveryScriptListsNvidiaSmiIndices() throws Exception {
        Path script = Paths.get("..", "conf", "getGpusResources.sh").toAbsolutePath().normalize();
        assertTrue(Files.isExecutable(script), script + " is executable");
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Path smi = bin.resolve("nvidia-smi");
        Files.writeString(smi, "#!/bin/sh\nprintf '0\\n1\\n2\\n'\n");
        assertTrue(smi.toFile().setExecutable(true));
        assertEquals("{\"name\": \"gpu\", \"addresses\": [\"0\",\"1\",\"2\"]}", runScript(script, bin + ":/usr/bin:/bin"));
        Files.delete(smi);
        // no nvidia-smi on PATH (the script itself needs only bash builtins)
        assertEquals("{\"name\": \"gpu\", \"addresses\": []}", runScript(script, bin.toString()));
    }

    private static String runScript(Path script, String path) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("/bin/bash", script.toString()).redirectErrorStream(true);
        pb.environment().put("PATH", path);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}
