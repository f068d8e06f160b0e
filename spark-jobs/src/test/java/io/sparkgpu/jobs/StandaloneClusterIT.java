package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.sparkgpu.spark.BarrierStages;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 item 6: a real standalone cluster. A master and two workers (Spark's own {@code Master} and
 * {@code Worker} main classes, each its own JVM, on the loopback) run every job submitted through
 * {@code SparkSubmit} (its own JVM) with the packaged spark-submit jar running {@link SparkGpuCli}; each result is
 * compared, bit for bit, with the same command on {@code local[2]}. For k-means (Spark path forced, one job per
 * pass), the scan's replicas (Spark path forced) and distributed t-SNE (two Spark jobs per iteration), one executor is killed by pid (SIGKILL) as
 * soon as the driver prints a progress line of the fit, and the result must still be the same bits; the test
 * checks that the executor really died and that Spark noticed the loss. The k-means and t-SNE cases then run the
 * same fit as one barrier stage of two tasks (k-means {@code single-stage}, t-SNE's one-stage optimiser) held by
 * the test-only {@link BarrierStages#PAUSE_KEY} at a chosen pass, kill the executor whose task logged the pause
 * (so the kill lands inside the running barrier stage, which at this size lasts well under a second otherwise),
 * check that Spark failed and resubmitted the whole stage, and expect the local bits again.
 *
 * <p>The cluster's JVMs get this JVM's class path without spark-jobs' own classes and jars (so the CLI comes from
 * the submitted jar, as for a user) and Spark's default logging (INFO, into files under
 * {@code target/cluster-it/}). Every JVM started here is stopped in {@link #stopCluster} and by a shutdown hook.
 */
@Tag("cluster")
class StandaloneClusterIT {
    /** A submit that runs longer than this fails with the logs' tails. */
    static final long SUBMIT_LIMIT_SECONDS = 240;
    static final long START_LIMIT_SECONDS = 90;
    static final String EXECUTOR_MAIN = "CoarseGrainedExecutorBackend";
    /** Written into a driver's log right after its line that triggered the kill. */
    static final String KILL_MARK = "[StandaloneClusterIT] killed executor pid ";

    static Path root;
    static Path work;
    static Path appJar;
    static String classPath;
    static List<String> jvmOpens;
    static Path sparkHome;
    static String masterUrl;
    static final List<Process> STARTED = new CopyOnWriteArrayList<>();
    static final List<Process> WORKERS = new CopyOnWriteArrayList<>();
    static final Map<String, Path> LOGS = new LinkedHashMap<>();
    static Thread hook;

    @BeforeAll
    static void startCluster() throws Exception {
        root = Paths.get(System.getProperty("sparkgpu.root", "..")).toAbsolutePath().normalize();
        work = root.resolve("spark-jobs/target/cluster-it");
        deleteTree(work);
        Files.createDirectories(work);
        String version = System.getProperty("sparkgpu.version", "0.1.0-SNAPSHOT");
        appJar = root.resolve("spark-jobs/target/spark-jobs-" + version + "-spark-submit.jar");
        assertTrue(Files.isRegularFile(appJar), "the spark-submit jar is packaged: " + appJar);
        classPath = clusterClassPath(System.getProperty("java.class.path"), root.resolve("spark-jobs/target"));
        assertTrue(classPath.contains("spark-core"), "Spark is on the test class path: " + classPath);
        jvmOpens = Arrays.asList(System.getProperty("sparkgpu.jvmOpens", ConsumerProjectIT.DEFAULT_OPENS).trim()
                .split("\\s+"));
        // the worker builds each executor's class path from $SPARK_HOME/jars (may be empty) and needs the Scala
        // build directory when SPARK_SCALA_VERSION is unset (as LocalGpuSpark.sparkHome prepares it)
        sparkHome = work.resolve("spark-home");
        Files.createDirectories(sparkHome.resolve("jars"));
        Files.createDirectories(sparkHome.resolve("launcher/target/scala-2.13"));
        hook = new Thread(StandaloneClusterIT::stopAll, "stop standalone cluster");
        Runtime.getRuntime().addShutdownHook(hook);

        int port = freePort();
        masterUrl = "spark://127.0.0.1:" + port;
        Process master = startJvm("master", "-Xmx256m", List.of("org.apache.spark.deploy.master.Master",
                "--host", "127.0.0.1", "--port", Integer.toString(port), "--webui-port", Integer.toString(freePort())));
        awaitLog("master", master, "I have been elected leader");
        for (int i = 1; i <= 2; i++) {
            Path dir = Files.createDirectories(work.resolve("worker" + i));
            Process w = startJvm("worker" + i, "-Xmx256m", List.of("org.apache.spark.deploy.worker.Worker",
                    "--host", "127.0.0.1", "--port", Integer.toString(freePort()),
                    "--webui-port", Integer.toString(freePort()), "--cores", "1", "--memory", "1g",
                    "--work-dir", dir.toString(), masterUrl));
            WORKERS.add(w);
        }
        for (int i = 1; i <= 2; i++) {
            awaitLog("worker" + i, WORKERS.get(i - 1), "Successfully registered with master");
        }
    }

    @AfterAll
    static void stopCluster() {
        stopAll();
        if (hook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // already shutting down: the hook runs anyway
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // the cases

    @Test
    void kmeansOnTheClusterGivesTheLocalBitsEvenWhenAnExecutorIsKilledMidFit() throws Exception {
        Path input = work.resolve("kmeans-points.csv");
        writeUniformPoints(input, 10_000, 11);
        Map<String, String> conf = Map.of("spark.sparkgpu.kmeans.localValues", "0",
                "spark.sparkgpu.kmeans.mode", "job-per-pass");
        // uniform points: Lloyd's iterations keep moving the centres, so the fit spans all max-iter passes
        String[] outs = {"pred", "model"};
        java.util.function.Function<Path, List<String>> args = dir -> List.of("kmeans",
                "--input", input.toString(), "--features", "x,y", "-k", "12", "--max-iter", "12", "--tol", "0",
                "--seed", "7", "--output", dir.resolve("pred").toString(), "--output-format", "csv",
                "--model-out", dir.resolve("model").toString());
        CaseRun local = sameBitsOnTheCluster("kmeans", conf, "k-means: iteration ", outs, args);
        // the same fit as one barrier stage of two tasks (one per executor), an executor killed inside it at pass 3:
        // Spark fails the whole stage; its reruns cannot read the blocks cached on the dead executor, so the trainer
        // recomputes them and runs the stage again. The bits are those of one job per pass on local[2].
        sameBitsWhenKilledInsideTheBarrierStage(local, Map.of("spark.sparkgpu.kmeans.localValues", "0",
                "spark.sparkgpu.kmeans.mode", "single-stage", "spark.sparkgpu.fit.gpuTasks", "2"), 3,
                "recomputing the lost blocks and running the single stage again", args);
    }

    @Test
    void scanReplicasOnTheClusterGiveTheLocalBitsEvenWhenAnExecutorIsKilled() throws Exception {
        Map<String, String> conf = Map.of("spark.sparkgpu.scan.localWork", "0");
        String[] outs = {"scan.json", "clusters.csv"};
        sameBitsOnTheCluster("scan", conf, "scan: replicas ", outs, dir -> List.of("scan",
                "--input", root.resolve("examples/cells.csv").toString(), "--coords", "x,y", "--cases", "cases",
                "--baseline", "pop", "--replicas", "999", "--seed", "7", "--clusters", "2",
                "--report", dir.resolve("scan.json").toString(), "--csv", dir.resolve("clusters.csv").toString()));
    }

    @Test
    void isotonicOnTheClusterGivesTheLocalBits() throws Exception {
        Map<String, String> conf = Map.of("spark.sparkgpu.isotonic.localRows", "0");
        String[] outs = {"pred", "model"};
        sameBitsOnTheCluster("isotonic", conf, null, outs, dir -> List.of("isotonic",
                "--input", root.resolve("examples/dose.csv").toString(), "--feature", "dose", "--label", "response",
                "--output", dir.resolve("pred").toString(), "--output-format", "csv",
                "--model-out", dir.resolve("model").toString()));
    }

    @Test
    void distributedTsneOnTheClusterGivesTheLocalBitsEvenWhenAnExecutorIsKilled() throws Exception {
        Path input = work.resolve("digits-400.csv");
        writeDigitsWithIds(input, 400);
        String[] outs = {"embedding", "model"};
        // two Spark jobs per iteration rather than every iteration in one barrier stage, whose progress lines come
        // only when the stage has ended (under a second here): the kill then lands between iterations
        Map<String, String> conf = Map.of("spark.sparkgpu.tsne.distributedStage", "false");
        java.util.function.Function<Path, List<String>> args = dir -> List.of("tsne",
                "--input", input.toString(), "--features", "p0..p63", "--id", "id", "--label", "digit",
                "--mode", "distributed", "--distributed-partitions", "2", "--pca", "16", "--max-iter", "60",
                "--seed", "7", "--output", dir.resolve("embedding").toString(), "--output-format", "csv",
                "--model-out", dir.resolve("model").toString());
        CaseRun local = sameBitsOnTheCluster("tsne", conf, "t-SNE: iteration ", outs, args);
        // the one-stage optimiser (every iteration in one barrier stage of two tasks), an executor killed inside it
        // at the 20th force evaluation: Spark fails the whole stage; its reruns cannot read the P slices cached on
        // the dead executor, so the fit runs two Spark jobs per iteration from the start. Same bits as local[2],
        // although the input is read in two partitions here (one there): a small open cost splits the small file,
        // so that P has two slices and the stage two tasks
        sameBitsWhenKilledInsideTheBarrierStage(local, Map.of("spark.sparkgpu.tsne.distributedStage", "true",
                "spark.sparkgpu.fit.gpuTasks", "2", "spark.sql.files.openCostInBytes", "1024"), 20,
                "running two Spark jobs per iteration instead", args);
    }

    // ---------------------------------------------------------------------------------------------------------
    // one submitted command

    /**
     * Runs {@code args} on {@code local[2]}, then on the cluster (killing an executor at the first driver line
     * holding {@code killAt}, unless null), and asserts that {@code outputs} are the same bits.
     */
    static CaseRun sameBitsOnTheCluster(String capability, Map<String, String> conf, String killAt, String[] outputs,
                                        java.util.function.Function<Path, List<String>> args) throws Exception {
        CaseRun local = runCase(capability, "local[2]", conf, null, outputs, args);
        CaseRun cluster = runCase(capability, masterUrl, conf, killAt, outputs, args);
        assertSameOutputs(local, cluster);
        return local;
    }

    /** The outcome of one submit: its directory (outputs, driver log), its outputs and the executor killed. */
    static final class CaseRun {
        final String name;
        final Path dir;
        final String[] outputs;
        Long killedPid;

        CaseRun(String name, Path dir, String[] outputs) {
            this.name = name;
            this.dir = dir;
            this.outputs = outputs;
        }
    }

    /**
     * Submits {@code args(dir)} to {@code master} with {@code conf} and waits for it (at most
     * {@link #SUBMIT_LIMIT_SECONDS}); with {@code killWhen}, kills one of the application's executors by pid the
     * first time a driver line contains it (a progress line of the fit), and asserts that it died, that Spark
     * logged the loss and that the fit went on (a Spark job, then the same progress line, after the kill).
     */
    static CaseRun runCase(String capability, String master, Map<String, String> conf, String killWhen,
                           String[] outputs, java.util.function.Function<Path, List<String>> args) throws Exception {
        boolean cluster = master.startsWith("spark://");
        String name = capability + (cluster ? killWhen != null ? "-cluster-kill" : "-cluster" : "-local");
        CaseRun run = new CaseRun(name, Files.createDirectories(work.resolve(name)), outputs);
        Path log = run.dir.resolve("driver.log");
        Process p = submit(run, master, conf, args, killWhen == null ? null : line -> {
            if (run.killedPid == null && line.contains(killWhen)) {
                run.killedPid = killOneExecutor();
                return KILL_MARK + run.killedPid;
            }
            return null;
        });
        awaitSubmit(run, p);
        if (killWhen != null) {
            String driver = Files.readString(log, StandardCharsets.UTF_8);
            assertKilled(run, driver);
            // mid-fit: a Spark job of the fit started after the kill, and only then came its next progress line
            // (lines printed after a stage that had already run every step would not show a job in between)
            String after = driver.substring(driver.indexOf(KILL_MARK));
            int job = after.indexOf("Starting job:");
            assertTrue(job >= 0 && after.indexOf(killWhen, job) > job, name + ": the kill was not mid-fit (no Spark "
                    + "job, then a '" + killWhen + "' line, after it)\n" + tail(log));
        }
        return run;
    }

    /**
     * {@link #runBarrierKillCase} of {@code local}'s capability and outputs: the driver logged {@code rerunLine} (how
     * the fit went on after the stage failed) and the outputs are {@code local}'s bits.
     */
    static void sameBitsWhenKilledInsideTheBarrierStage(CaseRun local, Map<String, String> conf, int pauseAt,
            String rerunLine, java.util.function.Function<Path, List<String>> args) throws Exception {
        String capability = local.name.substring(0, local.name.lastIndexOf("-local"));
        CaseRun killed = runBarrierKillCase(capability, conf, pauseAt, local.outputs, args);
        assertDriverLogged(killed, rerunLine);
        assertSameOutputs(local, killed);
    }

    /**
     * Submits {@code args(dir)} to the cluster with {@code conf} and {@link BarrierStages#PAUSE_KEY} holding task 0
     * of the fit's barrier stage at step {@code pauseAt}; as soon as an executor's log shows that pause, kills that
     * executor by pid (inside the running barrier stage), and asserts that it died, that Spark failed the whole
     * barrier stage and resubmitted it, and that the submit still succeeded.
     */
    static CaseRun runBarrierKillCase(String capability, Map<String, String> conf, int pauseAt, String[] outputs,
                                      java.util.function.Function<Path, List<String>> args) throws Exception {
        String name = capability + "-cluster-barrier-kill";
        CaseRun run = new CaseRun(name, Files.createDirectories(work.resolve(name)), outputs);
        Map<String, String> all = new LinkedHashMap<>(conf);
        // paused far longer than the kill takes: a run that is not killed fails the test below
        all.put(BarrierStages.PAUSE_KEY, pauseAt + ":60000");
        java.util.Set<Path> before = appDirs();
        Path log = run.dir.resolve("driver.log");
        Process p = submit(run, masterUrl, all, args, null);
        long killedAt = -1;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(SUBMIT_LIMIT_SECONDS);
        while (p.isAlive() && run.killedPid == null && System.nanoTime() < end) {
            for (Path app : appDirs()) {
                Optional<Path> paused = before.contains(app) ? Optional.empty() : pausedExecutorLog(app);
                if (paused.isPresent()) {
                    killedAt = Files.size(log);
                    run.killedPid = killExecutor(app.getFileName().toString(),
                            paused.get().getParent().getFileName().toString());
                }
            }
            Thread.sleep(100);
        }
        awaitSubmit(run, p);
        String driver = Files.readString(log, StandardCharsets.UTF_8);
        assertKilled(run, driver);
        String after = driver.substring((int) Math.min(killedAt, driver.length()));
        assertTrue(after.contains("as failed due to a barrier task failed") && after.contains("due to barrier stage "
                + "failure"), name + ": Spark did not fail and resubmit the whole barrier stage after the kill\n"
                + tail(log));
        return run;
    }

    /** The application directories under the workers' work directories. */
    static java.util.Set<Path> appDirs() throws IOException {
        java.util.Set<Path> out = new java.util.TreeSet<>();
        for (int i = 1; i <= 2; i++) {
            try (Stream<Path> s = Files.list(work.resolve("worker" + i))) {
                s.filter(d -> d.getFileName().toString().startsWith("app-")).forEach(out::add);
            }
        }
        return out;
    }

    /** The stderr of an executor of {@code app} that logged {@link BarrierStages#PAUSE_MARK}, if one did. */
    static Optional<Path> pausedExecutorLog(Path app) throws IOException {
        try (Stream<Path> s = Files.list(app)) {
            for (Path exec : (Iterable<Path>) s::iterator) {
                Path err = exec.resolve("stderr");
                if (Files.isRegularFile(err)
                        && Files.readString(err, StandardCharsets.ISO_8859_1).contains(BarrierStages.PAUSE_MARK)) {
                    return Optional.of(err);
                }
            }
        }
        return Optional.empty();
    }

    static void assertDriverLogged(CaseRun run, String text) throws IOException {
        Path log = run.dir.resolve("driver.log");
        assertTrue(Files.readString(log, StandardCharsets.UTF_8).contains(text),
                run.name + ": the driver did not log '" + text + "'\n" + tail(log));
    }

    /** The killed executor died and Spark noticed. */
    static void assertKilled(CaseRun run, String driver) {
        Path log = run.dir.resolve("driver.log");
        assertTrue(run.killedPid != null, run.name + ": no point came to kill an executor at\n" + tail(log));
        assertFalse(ProcessHandle.of(run.killedPid).map(ProcessHandle::isAlive).orElse(false),
                run.name + ": executor pid " + run.killedPid + " is still alive");
        assertTrue(driver.contains("Lost executor") || driver.contains("Command exited with code 137"),
                run.name + ": Spark logged no executor loss after pid " + run.killedPid + " was killed\n" + tail(log));
    }

    /** Waits for a submit (at most {@link #SUBMIT_LIMIT_SECONDS}) and asserts that it succeeded. */
    static void awaitSubmit(CaseRun run, Process p) throws Exception {
        if (!p.waitFor(SUBMIT_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            stop(p);
            fail(run.name + " did not finish within " + SUBMIT_LIMIT_SECONDS + " s\n" + tails());
        }
        readerOf(p).join(10_000);
        assertEquals(0, p.exitValue(), run.name + " failed\n" + tails());
    }

    /** Starts {@code SparkSubmit} of the CLI with {@code args(run.dir)} on {@code master}, logging to driver.log. */
    static Process submit(CaseRun run, String master, Map<String, String> conf,
                          java.util.function.Function<Path, List<String>> args,
                          java.util.function.Function<String, String> onLine) throws IOException {
        String name = run.name;
        List<String> cmd = new ArrayList<>(List.of("org.apache.spark.deploy.SparkSubmit", "--master", master,
                "--deploy-mode", "client", "--name", "cluster-it-" + name, "--class", SparkGpuCli.class.getName()));
        Map<String, String> all = new LinkedHashMap<>();
        all.put("spark.driver.host", "127.0.0.1");
        all.put("spark.driver.bindAddress", "127.0.0.1");
        all.put("spark.ui.enabled", "false");
        all.put("spark.ui.showConsoleProgress", "false");
        all.put("spark.sparkgpu.backend", "cpu");
        all.put("spark.default.parallelism", "2");
        all.put("spark.sql.shuffle.partitions", "2");
        all.put("spark.executor.memory", "512m");
        all.put("spark.executor.cores", "1");
        all.put("spark.cores.max", "2");
        all.put("spark.executor.extraClassPath", classPath);
        all.put("spark.executor.extraJavaOptions", String.join(" ", jvmOpens));
        all.putAll(conf);
        all.forEach((k, v) -> {
            cmd.add("--conf");
            cmd.add(k + "=" + v);
        });
        cmd.add(appJar.toString());
        cmd.addAll(args.apply(run.dir));
        cmd.add("--no-ui");
        return startJvmLogged("driver " + name, "-Xmx768m", cmd, run.dir.resolve("driver.log"), onLine);
    }

    /** Kills (SIGKILL) one executor JVM started by our workers and waits for it to die; returns its pid. */
    static long killOneExecutor() {
        Optional<ProcessHandle> exec = WORKERS.stream().flatMap(w -> w.toHandle().descendants())
                .filter(h -> commandLineOf(h).contains(EXECUTOR_MAIN)).findFirst();
        if (exec.isEmpty()) {
            throw new IllegalStateException("no " + EXECUTOR_MAIN + " process under the workers to kill");
        }
        return kill(exec.get());
    }

    /** Kills (SIGKILL) executor {@code executorId} of application {@code appId}; returns its pid. */
    static long killExecutor(String appId, String executorId) {
        Optional<ProcessHandle> exec = WORKERS.stream().flatMap(w -> w.toHandle().descendants())
                .filter(h -> {
                    String c = commandLineOf(h) + " ";
                    return c.contains(EXECUTOR_MAIN) && c.contains(" --executor-id " + executorId + " ")
                            && c.contains(" --app-id " + appId + " ");
                }).findFirst();
        if (exec.isEmpty()) {
            throw new IllegalStateException("no executor " + executorId + " of " + appId + " to kill");
        }
        return kill(exec.get());
    }

    /** SIGKILL, then waits for the process to die; its pid. */
    static long kill(ProcessHandle h) {
        h.destroyForcibly();
        try {
            h.onExit().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("executor " + h.pid() + " did not die within 30 s", e);
        }
        return h.pid();
    }

    /**
     * The whole command line of {@code h}: from /proc where there is one, since {@code ProcessHandle.Info} cuts it
     * at 4096 characters on Linux, before the main class of a JVM with a long class path.
     */
    static String commandLineOf(ProcessHandle h) {
        Path proc = Paths.get("/proc", Long.toString(h.pid()), "cmdline");
        try {
            if (Files.isReadable(proc)) {
                return new String(Files.readAllBytes(proc), StandardCharsets.UTF_8).replace('\0', ' ');
            }
        } catch (IOException e) {
            // gone, or not Linux: ask the JDK
        }
        ProcessHandle.Info i = h.info();
        return i.commandLine().orElse(i.command().orElse("") + " " + String.join(" ", i.arguments().orElse(new String[0])));
    }

    // ---------------------------------------------------------------------------------------------------------
    // comparing outputs bit for bit

    static void assertSameOutputs(CaseRun expected, CaseRun actual) throws IOException {
        for (String o : expected.outputs) {
            String e = canonical(expected.dir.resolve(o));
            String a = canonical(actual.dir.resolve(o));
            assertFalse(e.isBlank(), expected.name + " wrote " + o);
            if (!e.equals(a)) {
                fail(actual.name + ": " + o + " differs from " + expected.name + "'s: " + firstDifference(e, a));
            }
        }
    }

    /**
     * A text holding every bit of an output that is a function of the fit: part files of a directory by content
     * (CSV rows sorted, since partition boundaries are not part of the result; Parquet files as their records,
     * since the footer's encodings list is a set whose order differs between JVMs), part-file
     * names without their random UUID, JSON without run-specific fields (timestamp, uid, seconds). Hidden and
     * {@code _} files (checksums, _SUCCESS) and {@code integrity.json} (digests keyed by part-file names) are left out.
     */
    static String canonical(Path p) throws IOException {
        StringBuilder sb = new StringBuilder();
        canonical(p, p.getFileName().toString(), sb);
        return sb.toString();
    }

    private static void canonical(Path p, String label, StringBuilder sb) throws IOException {
        if (!Files.exists(p)) {
            sb.append(label).append(": missing\n");
            return;
        }
        if (!Files.isDirectory(p)) {
            sb.append(label).append(":\n").append(fileContent(p)).append('\n');
            return;
        }
        List<Path> children;
        try (Stream<Path> s = Files.list(p)) {
            children = s.sorted().collect(Collectors.toList());
        }
        List<String> csvRows = new ArrayList<>();
        List<String> parts = new ArrayList<>();
        for (Path c : children) {
            String n = c.getFileName().toString();
            if (n.startsWith(".") || n.startsWith("_") || n.equals(io.sparkgpu.ml.ParamsIO.INTEGRITY)) {
                continue;
            }
            if (n.startsWith("part-") && n.endsWith(".csv")) {
                csvRows.addAll(Files.readAllLines(c, StandardCharsets.UTF_8));
            } else if (n.startsWith("part-") && !n.endsWith(".txt") && !n.endsWith(".json")) {
                parts.add(parquetText(c));
            } else {
                canonical(c, label + "/" + n.replaceAll("-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", ""), sb);
            }
        }
        if (!csvRows.isEmpty()) {
            csvRows.sort(Comparator.naturalOrder());
            sb.append(label).append("/part-*.csv rows:\n").append(String.join("\n", csvRows)).append('\n');
        }
        if (!parts.isEmpty()) {
            parts.sort(Comparator.naturalOrder());
            sb.append(label).append("/part-* records:\n").append(String.join("\n", parts)).append('\n');
        }
    }

    private static String fileContent(Path f) throws IOException {
        String n = f.getFileName().toString();
        if (n.endsWith(".json") || n.endsWith(".csv") || n.endsWith(".txt")) {
            return Files.readString(f, StandardCharsets.UTF_8)
                    .replaceAll("\"timestamp\"\\s*:\\s*\\d+", "\"timestamp\":_")
                    .replaceAll("\"uid\"\\s*:\\s*\"[^\"]*\"", "\"uid\":_")
                    .replaceAll("\"seconds\"\\s*:\\s*([-0-9.eE+]+|\\{[^}]*\\})", "\"seconds\":_");
        }
        return sha256(f);
    }

    /** The records of a Parquet file, in file order, with every double in Java's exact shortest form. */
    @SuppressWarnings("deprecation")
    static String parquetText(Path f) throws IOException {
        StringBuilder sb = new StringBuilder();
        try (org.apache.parquet.hadoop.ParquetReader<org.apache.parquet.example.data.Group> r =
                     org.apache.parquet.hadoop.ParquetReader.builder(
                             new org.apache.parquet.hadoop.example.GroupReadSupport(),
                             new org.apache.hadoop.fs.Path(f.toUri())).build()) {
            org.apache.parquet.example.data.Group g;
            while ((g = r.read()) != null) {
                groupText(g, "", sb);
                sb.append("--\n");
            }
        }
        return sb.toString();
    }

    /** The fields of a record, one value a line; measured run times (t-SNE's summary) are not the result. */
    static void groupText(org.apache.parquet.example.data.Group g, String indent, StringBuilder sb) {
        org.apache.parquet.schema.GroupType t = g.getType();
        for (int f = 0; f < t.getFieldCount(); f++) {
            String name = t.getFieldName(f);
            if (RUN_TIMES.contains(name)) {
                sb.append(indent).append(name).append(": (run time, not compared)\n");
                continue;
            }
            for (int i = 0; i < g.getFieldRepetitionCount(f); i++) {
                if (t.getType(f).isPrimitive()) {
                    sb.append(indent).append(name).append(": ").append(g.getValueToString(f, i)).append('\n');
                } else {
                    sb.append(indent).append(name).append('\n');
                    groupText(g.getGroup(f, i), indent + "  ", sb);
                }
            }
        }
    }

    /** Saved fields holding measured times. */
    static final java.util.Set<String> RUN_TIMES = java.util.Set.of("timingSeconds");

    static String sha256(Path f) throws IOException {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static String firstDifference(String e, String a) {
        String[] el = e.split("\n", -1);
        String[] al = a.split("\n", -1);
        for (int i = 0; i < Math.max(el.length, al.length); i++) {
            String x = i < el.length ? el[i] : "<end>";
            String y = i < al.length ? al[i] : "<end>";
            if (!x.equals(y)) {
                return "line " + (i + 1) + "\n  expected: " + abbreviate(x) + "\n  actual:   " + abbreviate(y);
            }
        }
        return "(none)";
    }

    private static String abbreviate(String s) {
        return s.length() > 400 ? s.substring(0, 400) + "..." : s;
    }

    // ---------------------------------------------------------------------------------------------------------
    // inputs

    /** {@code n} seeded uniform points in the unit square, written with Java's shortest exact decimal form. */
    static void writeUniformPoints(Path file, int n, long seed) throws IOException {
        Random r = new Random(seed);
        StringBuilder sb = new StringBuilder("x,y\n");
        for (int i = 0; i < n; i++) {
            sb.append(r.nextDouble()).append(',').append(r.nextDouble()).append('\n');
        }
        Files.writeString(file, sb, StandardCharsets.UTF_8);
    }

    /** The first {@code n} rows of examples/digits.csv with an id column (t-SNE numbers rows by id). */
    static void writeDigitsWithIds(Path file, int n) throws IOException {
        List<String> lines = Files.readAllLines(root.resolve("examples/digits.csv"), StandardCharsets.UTF_8);
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8))) {
            w.println("id," + lines.get(0));
            for (int i = 1; i <= n; i++) {
                w.println(i + "," + lines.get(i));
            }
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // JVMs

    /**
     * This JVM's class path, every entry absolute, without spark-jobs' own build outputs (its classes, test
     * classes and jars), so that the cluster runs the CLI from the submitted jar.
     */
    static String clusterClassPath(String cp, Path jobsTarget) {
        List<String> out = new ArrayList<>();
        for (String e : cp.split(File.pathSeparator)) {
            if (e.isEmpty()) {
                continue;
            }
            Path abs = Paths.get(e).toAbsolutePath().normalize();
            if (!abs.startsWith(jobsTarget)) {
                out.add(abs.toString());
            }
        }
        return String.join(File.pathSeparator, out);
    }

    static Process startJvm(String name, String heap, List<String> mainAndArgs) throws IOException {
        return startJvmLogged(name, heap, mainAndArgs, work.resolve(name.replace(' ', '-') + ".log"), null);
    }

    private static final Map<Process, Thread> READERS = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Starts {@code java heap opens -cp <cluster class path> main args} with SPARK_HOME and SPARK_LOCAL_IP set,
     * copying its output (stdout and stderr) to {@code log} and handing each line to {@code onLine} (may be null),
     * whose answer, when not null, is written into the log after the line.
     */
    static Process startJvmLogged(String name, String heap, List<String> mainAndArgs, Path log,
                                  java.util.function.Function<String, String> onLine) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmOpens);
        cmd.add(heap);
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.addAll(mainAndArgs);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).directory(work.toFile());
        pb.environment().put("SPARK_HOME", sparkHome.toString());
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        pb.environment().put("SPARK_SCALA_VERSION", "2.13");
        Process p = pb.start();
        STARTED.add(p);
        synchronized (LOGS) {
            LOGS.put(name, log);
        }
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                 PrintWriter w = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8), true)) {
                String line;
                while ((line = r.readLine()) != null) {
                    w.println(line);
                    if (onLine != null) {
                        try {
                            String note = onLine.apply(line);
                            if (note != null) {
                                w.println(note);
                            }
                        } catch (RuntimeException e) {
                            w.println("[StandaloneClusterIT] " + e);
                        }
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
        }, "log " + name);
        reader.setDaemon(true);
        reader.start();
        READERS.put(p, reader);
        return p;
    }

    static Thread readerOf(Process p) {
        return READERS.get(p);
    }

    /** Waits until {@code name}'s log holds {@code text}; fails with the logs' tails if the JVM exits or is late. */
    static void awaitLog(String name, Process p, String text) throws Exception {
        Path log = LOGS.get(name);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_LIMIT_SECONDS);
        while (System.nanoTime() < end) {
            if (Files.exists(log) && Files.readString(log, StandardCharsets.UTF_8).contains(text)) {
                return;
            }
            if (!p.isAlive()) {
                fail(name + " exited (" + p.exitValue() + ") before logging '" + text + "'\n" + tails());
            }
            Thread.sleep(200);
        }
        fail(name + " did not log '" + text + "' within " + START_LIMIT_SECONDS + " s\n" + tails());
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Stops a process and every process it started (the workers' executors, a driver's children). */
    static void stop(Process p) {
        List<ProcessHandle> kids = p.toHandle().descendants().collect(Collectors.toList());
        p.destroy();
        kids.forEach(ProcessHandle::destroy);
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
        }
        kids.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
    }

    /** Stops every JVM this class started, the newest first (drivers, workers and their executors, the master). */
    static synchronized void stopAll() {
        List<Process> all = new ArrayList<>(STARTED);
        java.util.Collections.reverse(all);
        for (Process p : all) {
            stop(p);
        }
        STARTED.clear();
    }

    static String tails() {
        StringBuilder sb = new StringBuilder();
        synchronized (LOGS) {
            for (Map.Entry<String, Path> e : LOGS.entrySet()) {
                sb.append("--- ").append(e.getKey()).append(" (").append(e.getValue()).append(")\n")
                        .append(tail(e.getValue()));
            }
        }
        return sb.toString();
    }

    static String tail(Path log) {
        try {
            if (!Files.exists(log)) {
                return "(no log)\n";
            }
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())) + "\n";
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read: " + e + ")\n";
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
                Files.delete(p);
            }
        }
    }
}
