package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.ml.HasBackend;
import io.sparkgpu.ml.HasSeed;
import io.sparkgpu.scan.GpuScanStatistic;
import io.sparkgpu.tsne.GpuTsne;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.Params;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * The CLI's options are the estimators' params: the same defaults (seed and backend included), and every boundary
 * accepted or refused as the estimator does, the refusal being a usage error that names the option and carries the
 * rule's own message (compare SettingBoundariesTest in spark-gpu for the estimator and trainer surfaces). The rules
 * that need the data run in the fit, as for the estimator: exit code 1 with the same message.
 */
class SparkGpuCliSettingsTest {
    @TempDir
    Path tmp;

    /** The command the arguments select, parsed but not run (no Spark). */
    private static Object parse(String... args) {
        CommandLine.ParseResult pr = SparkGpuCli.commandLine().parseArgs(args);
        return pr.subcommand().commandSpec().userObject();
    }

    private static Params estimator(Object command) {
        if (command instanceof KMeansCommand) {
            return ((KMeansCommand) command).estimator();
        }
        if (command instanceof IsotonicCommand) {
            return ((IsotonicCommand) command).estimator();
        }
        if (command instanceof ScanCommand) {
            return ((ScanCommand) command).estimator();
        }
        return ((TsneCommand) command).estimator();
    }

    private static final String[] KMEANS = {"kmeans", "--input", "x.csv", "--features", "a,b"};
    private static final String[] ISOTONIC = {"isotonic", "--input", "x.csv", "--feature", "f", "--label", "l"};
    private static final String[] SCAN = {"scan", "--input", "x.csv", "--coords", "x"};
    private static final String[] SCAN_NO_COORDS = {"scan", "--input", "x.csv"};
    private static final String[] TSNE = {"tsne", "--input", "x.csv", "--features", "a,b"};

    private static String[] args(String[] base, String... more) {
        String[] a = Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, a, base.length, more.length);
        return a;
    }

    private static String rule(Runnable r) {
        try {
            r.run();
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /**
     * The options {@code more} on {@code base}: accepted when {@code estimatorRule} (the same setting on the
     * estimator, or its config's validate) accepts, else a usage error "Invalid value for option 'OPT': RULE".
     */
    private static void same(String[] base, String option, Runnable estimatorRule, boolean ok, String... more) {
        String what = String.join(" ", more);
        String expected = rule(estimatorRule);
        assertEquals(ok, expected == null, what + " on the estimator: " + expected);
        String cli;
        try {
            estimator(parse(args(base, more)));
            cli = null;
        } catch (ParameterException e) {
            cli = e.getMessage();
        }
        if (ok) {
            assertNull(cli, what + " is accepted by the CLI");
        } else {
            assertEquals("Invalid value for option '" + option + "': " + expected, cli, what);
        }
    }

    @Test
    void kmeansBoundaries() {
        Supplier<GpuKMeans> e = GpuKMeans::new;
        same(KMEANS, "-k", () -> e.get().setK(1), false, "-k", "1");
        same(KMEANS, "-k", () -> e.get().setK(2), true, "-k", "2");
        same(KMEANS, "--max-iter", () -> e.get().setMaxIter(-1), false, "--max-iter", "-1");
        same(KMEANS, "--max-iter", () -> e.get().setMaxIter(0), true, "--max-iter", "0");
        same(KMEANS, "--tol", () -> e.get().setTol(-Double.MIN_VALUE), false, "--tol", "-4.9E-324");
        same(KMEANS, "--tol", () -> e.get().setTol(0), true, "--tol", "0");
        same(KMEANS, "--tol", () -> e.get().setTol(Double.POSITIVE_INFINITY), false, "--tol", "Infinity");
        same(KMEANS, "--init-steps", () -> e.get().setInitSteps(0), false, "--init-steps", "0");
        same(KMEANS, "--init-steps", () -> e.get().setInitSteps(1), true, "--init-steps", "1");
        same(KMEANS, "--init", () -> e.get().setInitMode("kmeans++"), false, "--init", "kmeans++");
        same(KMEANS, "--init", () -> e.get().setInitMode("random"), true, "--init", "random");
        same(KMEANS, "--backend", () -> e.get().setBackend("tpu"), false, "--backend", "tpu");
        same(KMEANS, "--backend", () -> e.get().setBackend("CPU"), true, "--backend", "CPU");
    }

    @Test
    void isotonicBoundaries() {
        Supplier<GpuIsotonicRegression> e = GpuIsotonicRegression::new;
        same(ISOTONIC, "--feature-index", () -> e.get().setFeatureIndex(-1), false, "--feature-index", "-1");
        same(ISOTONIC, "--feature-index", () -> e.get().setFeatureIndex(0), true, "--feature-index", "0");
        same(ISOTONIC, "--loss", () -> e.get().setLoss("l3"), false, "--loss", "l3");
        same(ISOTONIC, "--loss", () -> e.get().setLoss("L1"), true, "--loss", "L1");
        same(ISOTONIC, "--algorithm", () -> e.get().setAlgorithm("tree"), false, "--algorithm", "tree");
        same(ISOTONIC, "--increasing", () -> e.get().setIncreasing("maybe"), false, "--increasing", "maybe");
        same(ISOTONIC, "--increasing", () -> e.get().setIncreasing("auto"), true, "--increasing", "auto");
        same(ISOTONIC, "--out-of-bounds", () -> e.get().setOutOfBounds("wrap"), false, "--out-of-bounds", "wrap");
        same(ISOTONIC, "--out-of-bounds", () -> e.get().setOutOfBounds("raise"), true, "--out-of-bounds", "raise");
        same(ISOTONIC, "--y-min", () -> e.get().setYMin(Double.POSITIVE_INFINITY), false, "--y-min", "Infinity");
        same(ISOTONIC, "--y-max", () -> e.get().setYMax(Double.NEGATIVE_INFINITY), false, "--y-max", "-Infinity");
        same(ISOTONIC, "--partitions", () -> e.get().setNumPartitions(-1), false, "--partitions", "-1");
        same(ISOTONIC, "--partitions", () -> e.get().setNumPartitions(0), true, "--partitions", "0");
        // between settings (the config's validate)
        same(ISOTONIC, "--y-min", () -> e.get().setYMin(2).setYMax(1).toConfig().validate(), false,
                "--y-min", "2", "--y-max", "1");
        same(ISOTONIC, "--y-min", () -> e.get().setYMin(1).setYMax(1).toConfig().validate(), true,
                "--y-min", "1", "--y-max", "1");
        same(ISOTONIC, "--algorithm", () -> e.get().setLoss("l1").setAlgorithm("mls").toConfig().validate(), false,
                "--loss", "l1", "--algorithm", "mls");
    }

    @Test
    void scanBoundaries() {
        Supplier<GpuScanStatistic> e = () -> new GpuScanStatistic().setCoordinateCols("x");
        same(SCAN, "--min-cells", () -> e.get().setMinCells(0), false, "--min-cells", "0");
        same(SCAN, "--min-cells", () -> e.get().setMinCells(1), true, "--min-cells", "1");
        same(SCAN, "--max-cells", () -> e.get().setMaxCells(-1), false, "--max-cells", "-1");
        same(SCAN, "--max-cells", () -> e.get().setMinCells(5).setMaxCells(4).toConfig().validate(), false,
                "--min-cells", "5", "--max-cells", "4");
        same(SCAN, "--max-cells", () -> e.get().setMinCells(5).setMaxCells(5).toConfig().validate(), true,
                "--min-cells", "5", "--max-cells", "5");
        same(SCAN, "--max-fraction", () -> e.get().setMaxBaselineFraction(0), false, "--max-fraction", "0");
        same(SCAN, "--max-fraction", () -> e.get().setMaxBaselineFraction(Double.MIN_VALUE), true, "--max-fraction",
                "4.9E-324");
        same(SCAN, "--max-fraction", () -> e.get().setMaxBaselineFraction(1), true, "--max-fraction", "1");
        same(SCAN, "--max-fraction", () -> e.get().setMaxBaselineFraction(Math.nextUp(1.0)), false, "--max-fraction",
                "1.0000000000000002");
        same(SCAN, "--clusters", () -> e.get().setNumClusters(0), false, "--clusters", "0");
        same(SCAN, "--clusters", () -> e.get().setNumClusters(65), true, "--clusters", "65");
        same(SCAN, "--clusters", () -> e.get().setNumClusters(66), false, "--clusters", "66");
        same(SCAN, "--replicas", () -> e.get().setNumReplicas(-1), false, "--replicas", "-1");
        same(SCAN, "--replicas", () -> e.get().setNumReplicas(0), true, "--replicas", "0");
        same(SCAN, "--replicas", () -> e.get().setNumReplicas(2_000_000_000), false, "--replicas", "2000000000");
        same(SCAN, "--partitions", () -> e.get().setNumPartitions(-1), false, "--partitions", "-1");
        same(SCAN, "--grid", () -> e.get().setGridSize(0), false, "--grid", "0");
        same(SCAN, "--grid", () -> e.get().setGridSize(1 << 20), true, "--grid", "1048576");
        same(SCAN, "--grid", () -> e.get().setGridSize((1 << 20) + 1), false, "--grid", "1048577");
        same(SCAN_NO_COORDS, "--coords", () -> e.get().setCoordinateCols("x", "x"), false, "--coords", "x,x");
        same(SCAN_NO_COORDS, "--coords", () -> e.get().setCoordinateCols("x", "y", "z", "w"), false, "--coords",
                "x,y,z,w");
        same(SCAN_NO_COORDS, "--coords", () -> e.get().setCoordinateCols("x", "y", "z"), true, "--coords", "x,y,z");
        same(SCAN, "--input-type", () -> e.get().setInputType("grid"), false, "--input-type", "grid");
        same(SCAN, "--input-type", () -> e.get().setInputType("POINTS").setGridSize(4).toInput(), true,
                "--input-type", "POINTS", "--grid", "4");
        same(SCAN, "--grid", () -> e.get().setInputType("points").toInput(), false, "--input-type", "points");
        same(SCAN, "--statistic", () -> e.get().setStatistic("gauss"), false, "--statistic", "gauss");
        same(SCAN, "--statistic", () -> e.get().setStatistic("EBP"), true, "--statistic", "EBP");
        same(SCAN, "--direction", () -> e.get().setDirection("up"), false, "--direction", "up");
    }

    @Test
    void tsneBoundaries() {
        Supplier<GpuTsne> e = GpuTsne::new;
        same(TSNE, "--dimension", () -> e.get().setDimension(0), false, "--dimension", "0");
        same(TSNE, "--dimension", () -> e.get().setDimension(3), true, "--dimension", "3");
        same(TSNE, "--dimension", () -> e.get().setDimension(4), false, "--dimension", "4");
        same(TSNE, "--perplexity", () -> e.get().setPerplexity(1), false, "--perplexity", "1");
        same(TSNE, "--perplexity", () -> e.get().setPerplexity(Math.nextUp(1.0)), true, "--perplexity",
                "1.0000000000000002");
        same(TSNE, "--neighbors", () -> e.get().setK(-1), false, "--neighbors", "-1");
        same(TSNE, "--neighbors", () -> e.get().setK(5).setPerplexity(5).toConfig().validate(), false,
                "--neighbors", "5", "--perplexity", "5");
        same(TSNE, "--neighbors", () -> e.get().setK(6).setPerplexity(5).toConfig().validate(), true,
                "--neighbors", "6", "--perplexity", "5");
        same(TSNE, "--knn-probes", () -> e.get().setKnnProbes(-1), false, "--knn-probes", "-1");
        same(TSNE, "--knn-probes", () -> e.get().setKnnProbes(16), true, "--knn-probes", "16");
        same(TSNE, "--max-iter", () -> e.get().setMaxIter(-1), false, "--max-iter", "-1");
        same(TSNE, "--max-iter", () -> e.get().setMaxIter(0), true, "--max-iter", "0");
        same(TSNE, "--learning-rate", () -> e.get().setLearningRate(-1), false, "--learning-rate", "-1");
        same(TSNE, "--learning-rate", () -> e.get().setLearningRate(0), true, "--learning-rate", "0");
        same(TSNE, "--learning-rate", () -> e.get().setLearningRate(Double.POSITIVE_INFINITY), false,
                "--learning-rate", "Infinity");
        same(TSNE, "--early-exaggeration", () -> e.get().setEarlyExaggeration(0), false, "--early-exaggeration", "0");
        same(TSNE, "--exaggeration-iter", () -> e.get().setExaggerationIterations(-1), false, "--exaggeration-iter",
                "-1");
        same(TSNE, "--dof", () -> e.get().setDof(0), false, "--dof", "0");
        same(TSNE, "--dof", () -> e.get().setDof(2), true, "--dof", "2");
        same(TSNE, "--dof", () -> e.get().setDof(2.5), false, "--dof", "2.5");
        same(TSNE, "--late-exaggeration", () -> e.get().setLateExaggeration(0.5), false, "--late-exaggeration", "0.5");
        same(TSNE, "--late-exaggeration", () -> e.get().setLateExaggeration(1), true, "--late-exaggeration", "1");
        same(TSNE, "--late-exaggeration-iter", () -> e.get().setLateExaggerationIter(-1), false,
                "--late-exaggeration-iter", "-1");
        same(TSNE, "--init", () -> e.get().setInit("spectral"), false, "--init", "spectral");
        same(TSNE, "--init", () -> e.get().setInit("RANDOM"), true, "--init", "RANDOM");
        same(TSNE, "--pca", () -> e.get().setPcaDimension(-1), false, "--pca", "-1");
        same(TSNE, "--mode", () -> e.get().setMode("cluster"), false, "--mode", "cluster");
        same(TSNE, "--repulsion", () -> e.get().setRepulsion("barnes-hut"), false, "--repulsion", "barnes-hut");
        same(TSNE, "--repulsion", () -> e.get().setRepulsion("Exact"), true, "--repulsion", "Exact");
        same(TSNE, "--distributed-partitions", () -> e.get().setDistributedPartitions(-1), false,
                "--distributed-partitions", "-1");
        same(TSNE, "--grid-per-unit", () -> e.get().setGridIntervalsPerUnit(0), false, "--grid-per-unit", "0");
        same(TSNE, "--grid-min-intervals", () -> e.get().setGridMinIntervals(0), false, "--grid-min-intervals", "0");
        same(TSNE, "--grid-max-intervals", () -> e.get().setGridMaxIntervals(-1), false, "--grid-max-intervals", "-1");
        same(TSNE, "--grid-max-intervals", () -> e.get().setGridMinIntervals(10).setGridMaxIntervals(9).toConfig()
                .validate(), false, "--grid-min-intervals", "10", "--grid-max-intervals", "9");
        same(TSNE, "--grid-max-intervals", () -> e.get().setDimension(3).setGridMaxIntervals(128).toConfig()
                .validate(), false, "--dimension", "3", "--grid-max-intervals", "128");
        same(TSNE, "--grid-max-intervals", () -> e.get().setDimension(3).setGridMaxIntervals(125).toConfig()
                .validate(), true, "--dimension", "3", "--grid-max-intervals", "125");
        same(TSNE, "--quality-sample", () -> e.get().setQualitySampleSize(-1), false, "--quality-sample", "-1");
    }

    /** A refused value is a usage error (exit 2) before Spark starts, on every command. */
    @Test
    void refusalsExitWithUsageErrors() {
        for (String[] a : new String[][] {args(KMEANS, "--tol", "-1"), args(ISOTONIC, "--feature-index", "-1"),
            args(SCAN, "--max-fraction", "0"), args(TSNE, "--perplexity", "1")}) {
            CliRun r = CliRun.of(a);
            assertEquals(SparkGpuCli.EXIT_USAGE, r.exitCode, r::toString);
            assertTrue(r.err.contains("Invalid value for option '" + a[a.length - 2] + "'"), r::toString);
        }
    }

    // ------------------------------------------------------------------ defaults

    /** Every option that is a param has the estimator's default; the backend stays unset. */
    @Test
    void defaultsAreTheEstimators() {
        Object[][] commands = {{KMEANS, KMeansCommand.PARAMS, new GpuKMeans()},
            {ISOTONIC, IsotonicCommand.PARAMS, new GpuIsotonicRegression()},
            {SCAN, ScanCommand.PARAMS, new GpuScanStatistic()}, {TSNE, TsneCommand.PARAMS, new GpuTsne()}};
        for (Object[] c : commands) {
            Params est = estimator(parse((String[]) c[0]));
            Params defaults = (Params) c[2];
            @SuppressWarnings("unchecked")
            Map<String, String> params = (Map<String, String>) c[1];
            int compared = 0;
            for (Map.Entry<String, String> o : params.entrySet()) {
                if (!defaults.hasParam(o.getValue())) {
                    continue; // isotonic's numPartitions is a setter, not a param
                }
                Param<Object> mine = est.getParam(o.getValue());
                Param<Object> theirs = defaults.getParam(o.getValue());
                if (o.getValue().equals("backend")) {
                    assertFalse(est.isSet(mine), "--backend absent: the param stays unset");
                    continue;
                }
                if (!defaults.isDefined(theirs)) {
                    assertFalse(est.isDefined(mine), o.getKey());
                    continue;
                }
                assertEquals(defaults.getOrDefault(theirs), est.getOrDefault(mine), c[0] + " " + o.getKey());
                compared++;
            }
            assertTrue(compared >= 5, "compared " + compared + " defaults of " + ((String[]) c[0])[0]);
        }
    }

    @Test
    void defaultSeedIsTheEstimatorsAndHelpPrintsIt() {
        long kmeans = HasSeed.defaultSeed(GpuKMeans.class);
        assertEquals(kmeans, ((GpuKMeans) estimator(parse(KMEANS))).getSeed());
        assertEquals(HasSeed.defaultSeed(GpuScanStatistic.class), ((GpuScanStatistic) estimator(parse(SCAN))).getSeed());
        assertEquals(HasSeed.defaultSeed(GpuTsne.class), ((GpuTsne) estimator(parse(TSNE))).getSeed());
        assertEquals(7L, ((GpuKMeans) estimator(parse(args(KMEANS, "--seed", "7")))).getSeed());
        CliRun help = CliRun.of("kmeans", "--help");
        assertTrue(help.out.contains(String.valueOf(kmeans)), help::toString);
        assertTrue(help.out.contains("Default: 2.") && help.out.contains("Default: k-means||."), help::toString);
    }

    @Test
    void backendIsTheSettingUnlessGiven() {
        String old = System.getProperty(SparkGpuConf.BACKEND);
        try {
            System.setProperty(SparkGpuConf.BACKEND, "cpu");
            for (String[] base : new String[][] {KMEANS, ISOTONIC, SCAN, TSNE}) {
                HasBackend<?> est = (HasBackend<?>) estimator(parse(base));
                assertEquals("cpu", est.getBackend(), base[0]);
                assertEquals("gpu", ((HasBackend<?>) estimator(parse(args(base, "--backend", "gpu")))).getBackend());
            }
        } finally {
            if (old == null) {
                System.clearProperty(SparkGpuConf.BACKEND);
            } else {
                System.setProperty(SparkGpuConf.BACKEND, old);
            }
        }
    }

    // ------------------------------------------------------------------ rules that need the data

    private Path tenPoints() throws Exception {
        Random r = new Random(11);
        StringBuilder sb = new StringBuilder("a,b,c\n");
        for (int i = 0; i < 10; i++) {
            sb.append(r.nextGaussian()).append(',').append(r.nextGaussian()).append(',').append(r.nextGaussian())
                    .append('\n');
        }
        Path f = tmp.resolve("ten.csv");
        Files.writeString(f, sb.toString(), StandardCharsets.UTF_8);
        return f;
    }

    /** n = 10: the default k is min(ceil(3 perplexity), 9); perplexity must stay below it, k at most 9. */
    @Test
    void tsneNeighbourRulesOnTenRows() throws Exception {
        String in = tenPoints().toString();
        List<String[]> ok = new ArrayList<>();
        ok.add(new String[] {"--perplexity", "8.9"});
        ok.add(new String[] {"--perplexity", "5", "--neighbors", "9"});
        for (String[] extra : ok) {
            CliRun r = CliRun.of(args(new String[] {"tsne", "--input", in, "--features", "a,b,c", "--backend", "cpu",
                "--max-iter", "2", "--exaggeration-iter", "1", "--quality-sample", "0", "--init", "random",
                "--master", "local[1]"}, extra));
            assertEquals(SparkGpuCli.EXIT_OK, r.exitCode, r::toString);
        }
        String[][] bad = {{"--perplexity", "9"}, {"--perplexity", "5", "--neighbors", "10"}};
        String[] messages = {"perplexity=9.0 must be < n - 1 = 9", "k=10 must be in 1..n - 1 = 9"};
        for (int i = 0; i < bad.length; i++) {
            CliRun r = CliRun.of(args(new String[] {"tsne", "--input", in, "--features", "a,b,c", "--backend", "cpu",
                "--max-iter", "2", "--master", "local[1]"}, bad[i]));
            assertEquals(SparkGpuCli.EXIT_ERROR, r.exitCode, r::toString);
            assertTrue(r.err.contains(messages[i]), r::toString);
        }
    }
}
