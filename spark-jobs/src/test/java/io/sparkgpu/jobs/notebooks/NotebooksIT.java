package io.sparkgpu.jobs.notebooks;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Executes every Jupyter notebook under notebooks/jupyter with {@code jupyter nbconvert --execute} and the project's
 * Java kernel, as a user would run it top to bottom, and fails on any cell error or time-out. Every cell tagged
 * {@code plot} must have produced an {@code image/png} output. The executed copies and nbconvert's log go to
 * spark-jobs/target/notebooks/ (never to the repository).
 *
 * <p>An integration test (maven-failsafe-plugin, {@code integration-test} phase of {@code mvn verify}), because the
 * kernel needs the packaged jars and spark-jobs/target/classpath.txt, which {@code package} writes. When Jupyter or
 * the kernel is missing it runs scripts/setup-notebooks.sh (an existing Jupyter from pip, conda or Debian when
 * one works, else Debian packages through apt-get when it can; the kernel through Maven) and fails with that
 * script's output if the set-up fails, which names the exact command that installs Jupyter; it never skips. {@code -Dnotebooks.include=a,b}
 * runs only the notebooks a.ipynb and b.ipynb.
 */
class NotebooksIT {
    /** Per cell, as the issue asks; a whole notebook gets {@link #NOTEBOOK_LIMIT}. */
    static final int CELL_TIMEOUT_SECONDS = 600;
    static final Duration NOTEBOOK_LIMIT = Duration.ofMinutes(20);
    static final Duration SETUP_LIMIT = Duration.ofMinutes(15);
    /** The kernel prints two lines per classpath entry at start-up; they only hide the interesting lines. */
    private static final List<String> NOISE = List.of("Parsing classpath: ", "Add /");
    /** The kernel colours its error reports. */
    private static final Pattern ANSI = Pattern.compile("\\x1b\\[[0-9;]*m");
    /** How nbconvert starts the report of a cell that failed. */
    private static final String CELL_ERROR = "An error occurred while executing the following cell";
    /** System property: run only these notebooks (see {@link #selected}); unset: all. */
    static final String INCLUDE_PROPERTY = "notebooks.include";

    private static Path root;
    private static Path outDir;

    @BeforeAll
    static void setUp() throws Exception {
        root = NotebookPaths.root();
        outDir = Path.of(System.getProperty("notebooks.outputDir",
                root.resolve("spark-jobs/target/notebooks").toString())).toAbsolutePath();
        Files.createDirectories(outDir);
        Path classpath = root.resolve("spark-jobs/target/classpath.txt");
        assertTrue(Files.isRegularFile(classpath), classpath + " is missing: the notebook kernel needs the packaged "
                + "jars; run this test through `mvn verify` (integration-test runs after package)");

        Result check = run(List.of("bash", "scripts/setup-notebooks.sh", "--check"), outDir.resolve("setup-check.log"),
                Duration.ofMinutes(2));
        if (check.rc != 0) {
            System.out.println("[NotebooksIT] Jupyter or the kernel is not ready, running scripts/setup-notebooks.sh:\n"
                    + check.tail(20));
            Result setup = run(List.of("bash", "scripts/setup-notebooks.sh"), outDir.resolve("setup.log"), SETUP_LIMIT);
            if (setup.rc != 0) {
                fail("scripts/setup-notebooks.sh failed (" + setup.status() + "), so the notebooks cannot run:\n"
                        + setup.tail(40));
            }
        }
    }

    @TestFactory
    Stream<DynamicTest> everyNotebookRunsAndPlots() {
        List<Path> notebooks = selected(NotebookPaths.files(NotebookPaths.JUPYTER_DIR, ".ipynb"),
                System.getProperty(INCLUDE_PROPERTY, ""));
        assertFalse(notebooks.isEmpty(), "no notebooks under " + NotebookPaths.JUPYTER_DIR);
        return notebooks.stream().map(nb -> DynamicTest.dynamicTest(NotebookPaths.rel(nb), () -> execute(nb)));
    }

    /**
     * The notebooks named in {@code include} (comma-separated names without .ipynb, e.g. "isotonic,scan"), or all
     * of them when it is blank; a name that matches no notebook fails, so a typo cannot pass as a green run.
     */
    static List<Path> selected(List<Path> notebooks, String include) {
        if (include.isBlank()) {
            return notebooks;
        }
        List<Path> out = new ArrayList<>();
        for (String name : include.split(",")) {
            String stem = name.strip();
            Path match = notebooks.stream().filter(nb -> nb.getFileName().toString().equals(stem + ".ipynb"))
                    .findFirst().orElse(null);
            if (match == null) {
                fail("-D" + INCLUDE_PROPERTY + " names '" + stem + "', which is not one of "
                        + notebooks.stream().map(nb -> nb.getFileName().toString()).collect(Collectors.toList()));
            }
            out.add(match);
        }
        return out;
    }

    private static void execute(Path notebook) throws Exception {
        String name = notebook.getFileName().toString();
        String stem = name.substring(0, name.length() - ".ipynb".length());
        Path executed = outDir.resolve(name);
        Files.deleteIfExists(executed);
        long start = System.nanoTime();
        Result r = run(List.of("bash", "notebooks/jupyter.sh", "nbconvert", "--to", "notebook", "--execute",
                "--ExecutePreprocessor.timeout=" + CELL_TIMEOUT_SECONDS,
                "--ExecutePreprocessor.startup_timeout=180",
                "--output-dir", outDir.toString(), notebook.toString()), outDir.resolve(stem + ".log"), NOTEBOOK_LIMIT);
        System.out.printf("[NotebooksIT] %s: %s in %.1f s (log: %s)%n", NotebookPaths.rel(notebook), r.status(),
                (System.nanoTime() - start) / 1e9, r.log);
        if (r.rc != 0) {
            fail(NotebookPaths.rel(notebook) + " did not run (" + r.status() + "); nbconvert and kernel said:\n"
                    + r.cellError().orElseGet(() -> r.tail(60)));
        }
        assertTrue(Files.isRegularFile(executed), "nbconvert wrote no " + executed);
        checkExecuted(NotebookPaths.rel(notebook), NotebookPaths.read(executed));
    }

    /** Every code cell ran without an error output, and every plot cell shows a PNG. */
    static void checkExecuted(String name, JsonNode nb) {
        JsonNode cells = nb.path("cells");
        List<String> problems = new ArrayList<>();
        int plots = 0;
        for (int i = 0; i < cells.size(); i++) {
            JsonNode cell = cells.get(i);
            if (!"code".equals(cell.path("cell_type").asText())) {
                continue;
            }
            String what = NotebookPaths.describe(cell, i);
            if (cell.path("execution_count").isNull() || cell.path("execution_count").isMissingNode()) {
                problems.add(what + " did not run");
            }
            boolean png = false;
            for (JsonNode out : cell.path("outputs")) {
                if ("error".equals(out.path("output_type").asText())) {
                    problems.add(what + " raised " + out.path("ename").asText() + ": " + out.path("evalue").asText());
                }
                JsonNode data = out.path("data").path("image/png");
                if (!data.isMissingNode() && isPng(NotebookPaths.text(data))) {
                    png = true;
                }
            }
            if (NotebookPaths.tags(cell).contains(NotebookPaths.PLOT_TAG)) {
                plots++;
                if (!png) {
                    problems.add(what + " is tagged '" + NotebookPaths.PLOT_TAG + "' but has no image/png output");
                }
            }
        }
        if (plots == 0) {
            problems.add("no cell is tagged '" + NotebookPaths.PLOT_TAG + "' (each capability notebook shows a plot)");
        }
        if (!problems.isEmpty()) {
            fail(name + ":\n  " + String.join("\n  ", problems));
        }
    }

    private static boolean isPng(String base64) {
        try {
            byte[] b = Base64.getMimeDecoder().decode(base64);
            return b.length > 100 && (b[0] & 0xff) == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G';
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    record Result(int rc, boolean timedOut, Path log) {
        String status() {
            return timedOut ? "timed out" : "exit " + rc;
        }

        /** The last {@code n} lines of the log, without the kernel's classpath listing. */
        String tail(int n) {
            List<String> lines = lines();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
        }

        /** nbconvert's report of a failed cell (the cell's source and the kernel's error), without its traceback. */
        Optional<String> cellError() {
            List<String> lines = lines();
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).contains(CELL_ERROR)) {
                    List<String> report = lines.subList(i, Math.min(lines.size(), i + 80));
                    return Optional.of(String.join("\n", report));
                }
            }
            return Optional.empty();
        }

        private List<String> lines() {
            try {
                return Files.readAllLines(log, StandardCharsets.UTF_8).stream()
                        .filter(l -> NOISE.stream().noneMatch(l::startsWith))
                        .map(l -> ANSI.matcher(l).replaceAll(""))
                        .collect(Collectors.toList());
            } catch (IOException e) {
                return List.of("(cannot read " + log + ": " + e + ")");
            }
        }
    }

    /** Runs {@code cmd} in the project root, output to {@code log}; kills it and its children after {@code limit}. */
    static Result run(List<String> cmd, Path log, Duration limit) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(
                        new File("/dev/null")));
        Map<String, String> env = pb.environment();
        // the kernel runs on the JDK that runs the build, like the rest of the tests
        env.put("JAVA_HOME", System.getProperty("java.home"));
        env.putIfAbsent("SPARK_LOCAL_IP", "127.0.0.1");
        Process p = pb.start();
        if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
            return new Result(-1, true, log);
        }
        return new Result(p.exitValue(), false, log);
    }
}
