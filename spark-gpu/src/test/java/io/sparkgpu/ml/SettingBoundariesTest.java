package io.sparkgpu.ml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.isotonic.IsotonicConfig;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.KMeansConfig;
import io.sparkgpu.scan.GpuScanStatistic;
import io.sparkgpu.scan.ScanConfig;
import io.sparkgpu.scan.ScanInput;
import io.sparkgpu.scan.ScanSpec;
import io.sparkgpu.spline.GpuMonotoneCdf;
import io.sparkgpu.spline.GpuMonotoneCdfModel;
import io.sparkgpu.spline.GpuMonotoneSpline;
import io.sparkgpu.spline.GpuMonotoneSplineModel;
import io.sparkgpu.spline.Spline;
import io.sparkgpu.spline.SplineCdf;
import io.sparkgpu.spline.SplineConfig;
import io.sparkgpu.spline.SplineEngine;
import io.sparkgpu.spline.SplineRangePartitioner;
import io.sparkgpu.tsne.GpuTsne;
import io.sparkgpu.tsne.TsneConfig;
import java.util.function.Consumer;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.Params;
import org.junit.jupiter.api.Test;

/**
 * Every setting with a boundary is accepted or refused the same way, with the same message, on the estimator (its
 * param refuses the value when set; a value it takes passes the validation of the config the params describe, as
 * {@code fit} runs it) and at the trainer's entry (the config built directly, as benchmarks and inner callers do,
 * validated). Values sit on both sides of each boundary; whether each is accepted is written here, not derived from
 * the code under test. The CLI's side is SparkGpuCliSettingsTest, SQL's ScanSqlSettingsTest, the rules that need the number of
 * points TsneNeighboursTest.
 */
class SettingBoundariesTest {
    private static String error(Runnable r) {
        try {
            r.run();
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /** Both surfaces accept ({@code ok}) or both refuse with one message naming {@code setting}. */
    private static void same(String setting, Object value, boolean ok, Runnable estimator, Runnable trainer) {
        String what = setting + "=" + value;
        String a = error(estimator);
        String b = error(trainer);
        assertEquals(ok, a == null, what + " on the estimator: " + a);
        assertEquals(ok, b == null, what + " at the trainer's entry: " + b);
        assertEquals(a, b, what + ": one rule, one message");
        if (!ok) {
            assertTrue(a.contains(setting), what + ": the message names the setting: " + a);
        }
    }

    @SuppressWarnings("unchecked")
    private static void set(Params p, String name, Object value) {
        p.set((Param<Object>) p.getParam(name), value);
    }

    /**
     * One setting on the estimator: its param refuses a bad value when set (not only later in the fit), and a value
     * it takes passes the validation of the config the params describe.
     */
    private static <E extends Params> void param(String param, Object value, boolean ok,
                                                 java.util.function.Supplier<E> estimator,
                                                 java.util.function.Function<E, Object> toValidConfig,
                                                 Runnable trainer) {
        same(param, value, ok, () -> set(estimator.get(), param, value), trainer);
        if (ok) {
            E e = estimator.get();
            set(e, param, value);
            assertNull(error(() -> toValidConfig.apply(e)), param + "=" + value + " passes the config's validate()");
        }
    }

    // ------------------------------------------------------------------ k-means

    private static void kmeans(String param, Object value, boolean ok, Consumer<KMeansConfig> onConfig) {
        param(param, value, ok, GpuKMeans::new, e -> e.toConfig().validate(), () -> {
            KMeansConfig c = new KMeansConfig();
            onConfig.accept(c);
            c.validate();
        });
    }

    @Test
    void kmeansSettings() {
        for (int k : new int[] {1, 2}) {
            kmeans("k", k, k >= 2, c -> c.k = k);
        }
        for (int v : new int[] {-1, 0}) {
            kmeans("maxIter", v, v >= 0, c -> c.maxIter = v);
        }
        for (double v : new double[] {-Double.MIN_VALUE, 0.0, Double.MAX_VALUE, Double.POSITIVE_INFINITY, Double.NaN}) {
            kmeans("tol", v, v >= 0 && v < Double.POSITIVE_INFINITY, c -> c.tol = v);
        }
        for (int v : new int[] {0, 1}) {
            kmeans("initSteps", v, v >= 1, c -> c.initSteps = v);
        }
        for (String v : new String[] {"random", "k-means||", "RANDOM", "kmeans++"}) {
            kmeans("initMode", v, v.equals("random") || v.equals("k-means||"), c -> c.initMode = v);
        }
        // between settings: initialCenters must hold k centres
        for (int k : new int[] {2, 3}) {
            double[][] centres = {{0, 0}, {1, 1}};
            same("initialCenters", "2 centres, k=" + k, k == 2,
                () -> new GpuKMeans().setK(k).setInitialCenters(centres).toConfig().validate(),
                () -> {
                    KMeansConfig c = new KMeansConfig();
                    c.k = k;
                    c.initialCenters = centres;
                    c.validate();
                });
        }
        same("distanceMeasure", "manhattan", false, () -> new GpuKMeans().setDistanceMeasure("manhattan"),
            () -> KMeansConfig.checkDistanceMeasure("manhattan"));
    }

    // ------------------------------------------------------------------ isotonic

    private static void isotonic(String param, Object value, boolean ok, Consumer<IsotonicConfig> onConfig) {
        param(param, value, ok, GpuIsotonicRegression::new, e -> e.toConfig().validate(), () -> {
            IsotonicConfig c = new IsotonicConfig();
            onConfig.accept(c);
            c.validate();
        });
    }

    @Test
    void isotonicSettings() {
        for (double v : new double[] {Double.NEGATIVE_INFINITY, 0, Double.MAX_VALUE, Double.POSITIVE_INFINITY}) {
            isotonic("yMin", v, v < Double.POSITIVE_INFINITY, c -> c.yMin = v);
            isotonic("yMax", v, v > Double.NEGATIVE_INFINITY, c -> c.yMax = v);
        }
        for (String v : new String[] {"l2", "L1", "absolute", "l3"}) {
            isotonic("loss", v, !v.equals("l3"), c -> c.loss = IsotonicConfig.parseLoss(v));
        }
        for (String v : new String[] {"pava", "MLS", "tree"}) {
            isotonic("algorithm", v, !v.equals("tree"), c -> c.algorithm = IsotonicConfig.parseAlgorithm(v));
        }
        for (String v : new String[] {"true", "false", "auto", "maybe"}) {
            isotonic("increasing", v, !v.equals("maybe"), c -> c.direction = IsotonicConfig.parseDirection(v));
        }
        // between settings: yMin <= yMax; MLS solves least squares only
        for (double hi : new double[] {Math.nextDown(1.0), 1.0}) {
            same("yMin", "1.0, yMax=" + hi, hi >= 1.0,
                () -> new GpuIsotonicRegression().setYMin(1.0).setYMax(hi).toConfig().validate(),
                () -> {
                    IsotonicConfig c = new IsotonicConfig();
                    c.yMin = 1.0;
                    c.yMax = hi;
                    c.validate();
                });
        }
        same("algorithm", "mls, loss=l1", false,
            () -> new GpuIsotonicRegression().setLoss("l1").setAlgorithm("mls").toConfig().validate(),
            () -> {
                IsotonicConfig c = new IsotonicConfig();
                c.loss = IsotonicConfig.Loss.L1;
                c.algorithm = IsotonicConfig.Algorithm.MLS;
                c.validate();
            });
        for (int v : new int[] {-1, 0}) {
            same("numPartitions", v, v >= 0, () -> new GpuIsotonicRegression().setNumPartitions(v).toConfig().validate(),
                () -> {
                    IsotonicConfig c = new IsotonicConfig();
                    c.numPartitions = v;
                    c.validate();
                });
            // featureIndex is an argument of the trainer, checked at its entry by the same rule
            same("featureIndex", v, v >= 0, () -> new GpuIsotonicRegression().setFeatureIndex(v),
                () -> IsotonicConfig.checkFeatureIndex(v));
        }
        for (String v : new String[] {"clip", "NaN", "raise", "wrap"}) {
            same("outOfBounds", v, !v.equals("wrap"), () -> new GpuIsotonicRegression().setOutOfBounds(v),
                () -> IsotonicConfig.parseOutOfBounds(v));
        }
    }

    // ------------------------------------------------------------------ scan

    private static void scan(String param, Object value, boolean ok, Consumer<ScanConfig> onConfig) {
        param(param, value, ok, GpuScanStatistic::new, e -> e.toConfig().validate(), () -> {
            ScanConfig c = new ScanConfig();
            onConfig.accept(c);
            c.validate();
        });
    }

    /** The input's settings: the estimator's params and ScanInput (what the trainer gets) agree. */
    private static void scanInput(String setting, Object value, boolean ok, Consumer<GpuScanStatistic> onEstimator,
                                  Runnable input) {
        same(setting, value, ok, () -> onEstimator.accept(new GpuScanStatistic().setCoordinateCols("x")), input);
    }

    @Test
    void scanSettings() {
        for (long v : new long[] {0, 1}) {
            scan("minCells", v, v >= 1, c -> c.minCells = v);
        }
        for (long v : new long[] {-1, 0, 1}) {
            scan("maxCells", v, v >= 0, c -> c.maxCells = v);
        }
        for (double v : new double[] {0, Double.MIN_VALUE, 1, Math.nextUp(1.0), Double.NaN}) {
            scan("maxBaselineFraction", v, v > 0 && v <= 1, c -> c.maxBaselineFraction = v);
        }
        for (int v : new int[] {0, 1, ScanSpec.MAX_EXCLUDED + 1, ScanSpec.MAX_EXCLUDED + 2}) {
            scan("numClusters", v, v >= 1 && v <= ScanSpec.MAX_EXCLUDED + 1, c -> c.numClusters = v);
        }
        for (int v : new int[] {-1, 0}) {
            scan("numReplicas", v, v >= 0, c -> c.numReplicas = v);
            scan("numPartitions", v, v >= 0, c -> c.numPartitions = v);
        }
        for (int v : new int[] {ScanConfig.MAX_REPLICAS, ScanConfig.MAX_REPLICAS + 1, 2_000_000_000}) {
            scan("numReplicas", v, v <= ScanConfig.MAX_REPLICAS, c -> c.numReplicas = v);
        }
        // between settings: a cell limit must admit minCells (0: no limit)
        for (long max : new long[] {0, 4, 5}) {
            same("maxCells", max + ", minCells=5", max != 4,
                () -> new GpuScanStatistic().setMinCells(5).setMaxCells(max).toConfig().validate(),
                () -> {
                    ScanConfig c = new ScanConfig();
                    c.minCells = 5;
                    c.maxCells = max;
                    c.validate();
                });
        }
        int[][] grids = {{0}, {1}, {1 << 20}, {(1 << 20) + 1}, {4096, 4096}, {4097, 2}, {256, 256, 256},
            {256, 256, 257}};
        boolean[] gridOk = {false, true, true, false, true, false, true, false};
        for (int i = 0; i < grids.length; i++) {
            int[] g = grids[i];
            String[] cols = {"x", "y", "z"};
            String[] c = java.util.Arrays.copyOf(cols, g.length);
            same("gridSize", java.util.Arrays.toString(g), gridOk[i],
                () -> new GpuScanStatistic().setCoordinateCols(c).setGridSize(g).toInput(),
                () -> new ScanInput("cells", c, "cases", "baseline", null, g, null));
        }
        String[][] coords = {{}, {"x"}, {"x", "y", "z"}, {"x", "y", "z", "w"}, {"x", "x"}, {""}};
        boolean[] coordsOk = {false, true, true, false, false, false};
        for (int i = 0; i < coords.length; i++) {
            String[] c = coords[i];
            scanInput("coordinateCols", java.util.Arrays.toString(c), coordsOk[i], e -> e.setCoordinateCols(c),
                () -> new ScanInput("cells", c, "cases", "baseline", null, null, null));
        }
        for (String v : new String[] {"cells", "POINTS", "grid"}) {
            scanInput("inputType", v, !v.equals("grid"), e -> e.setInputType(v).setGridSize(4).toInput(),
                () -> new ScanInput(v, new String[] {"x"}, "cases", "baseline", null, new int[] {4}, null));
        }
        for (String v : new String[] {"poisson", "EBP", "bernoulli", "normal", "gauss"}) {
            same("statistic", v, !v.equals("gauss"), () -> new GpuScanStatistic().setStatistic(v),
                () -> ScanConfig.checkStatistic(v));
        }
        for (String v : new String[] {"high", "Low", "both", "up"}) {
            same("direction", v, !v.equals("up"), () -> new GpuScanStatistic().setDirection(v),
                () -> ScanConfig.checkDirection(v));
        }
    }

    // ------------------------------------------------------------------ t-SNE

    private static void tsne(String param, Object value, boolean ok, Consumer<TsneConfig> onConfig) {
        param(param, value, ok, GpuTsne::new, e -> e.toConfig().validate(), () -> {
            TsneConfig c = new TsneConfig();
            onConfig.accept(c);
            c.validate();
        });
    }

    @Test
    void tsneSettings() {
        for (int v : new int[] {0, 1, 3, 4}) {
            tsne("dimension", v, v >= 1 && v <= 3, c -> c.dimension = v);
        }
        for (double v : new double[] {0, Math.nextUp(0.0), 0.5, 1, 2, Math.nextUp(2.0), Double.NaN}) {
            tsne("dof", v, v > 0 && v <= 2, c -> c.dof = v);
        }
        for (double v : new double[] {0.5, Math.nextDown(1.0), 1, 4, Double.POSITIVE_INFINITY, Double.NaN}) {
            tsne("lateExaggeration", v, v >= 1 && v < Double.POSITIVE_INFINITY, c -> c.lateExaggeration = v);
        }
        for (int v : new int[] {-1, 0, 500}) {
            tsne("lateExaggerationIter", v, v >= 0, c -> c.lateExaggerationIter = v);
        }
        for (int v : new int[] {Integer.MIN_VALUE, -1, 0, 1, 64}) {
            tsne("knnProbes", v, v >= 0, c -> c.knnProbes = v);
        }
        // perplexity calibration needs 1 < perplexity (entropy ln 1 = 0 needs an infinite bandwidth)
        for (double v : new double[] {0.5, 1.0, Math.nextUp(1.0), 30, Double.POSITIVE_INFINITY, Double.NaN}) {
            tsne("perplexity", v, v > 1 && v < Double.POSITIVE_INFINITY, c -> c.perplexity = v);
        }
        for (int v : new int[] {-1, 0}) {
            tsne("k", v, v == 0, c -> c.k = v);
            tsne("exaggerationIterations", v, v >= 0, c -> c.exaggerationIterations = v);
            tsne("maxIter", v, v >= 0, c -> c.maxIter = v);
            tsne("klEvery", v, v >= 0, c -> c.klEvery = v);
            tsne("distributedPartitions", v, v >= 0, c -> c.distributedPartitions = v);
            tsne("pcaDimension", v, v >= 0, c -> c.pcaDimension = v);
            tsne("qualitySampleSize", v, v >= 0, c -> c.qualitySampleSize = v);
        }
        for (long v : new long[] {-1, 0}) {
            tsne("singleModeMaxEntries", v, v >= 0, c -> c.singleModeMaxEntries = v);
        }
        for (double v : new double[] {0, Double.MIN_VALUE, 12, Double.POSITIVE_INFINITY}) {
            tsne("earlyExaggeration", v, v > 0 && v < Double.POSITIVE_INFINITY, c -> c.earlyExaggeration = v);
        }
        for (double v : new double[] {-Double.MIN_VALUE, 0, 200, Double.POSITIVE_INFINITY}) {
            tsne("learningRate", v, v >= 0 && v < Double.POSITIVE_INFINITY, c -> c.learningRate = v);
        }
        for (double v : new double[] {-Double.MIN_VALUE, 0, Math.nextDown(1.0), 1}) {
            tsne("initialMomentum", v, v >= 0 && v < 1, c -> c.initialMomentum = v);
            tsne("finalMomentum", v, v >= 0 && v < 1, c -> c.finalMomentum = v);
        }
        for (double v : new double[] {0, Double.MIN_VALUE, 1, Math.nextUp(1.0)}) {
            tsne("minGain", v, v > 0 && v <= 1, c -> c.minGain = v);
        }
        for (String v : new String[] {"pca", "RANDOM", "spectral"}) {
            tsne("init", v, !v.equals("spectral"), c -> c.init = v);
        }
        for (String v : new String[] {"auto", "Single", "distributed", "cluster"}) {
            tsne("mode", v, !v.equals("cluster"), c -> c.mode = v);
        }
        for (String v : new String[] {"auto", "EXACT", "grid", "barnes-hut", ""}) {
            tsne("repulsion", v, !v.equals("barnes-hut") && !v.isEmpty(), c -> c.repulsion = v);
        }
        for (String v : new String[] {"auto", "DIRECT", "fft", "wavelet"}) {
            tsne("convolution", v, !v.equals("wavelet"), c -> c.convolution = TsneConfig.parseConvolution(v,
                    "convolution"));
        }
        // grid: nodes per box 1..8, boxes per unit > 0, fewest boxes >= 1, most boxes >= 0 (0: default)
        TsneGridCase[] grid = {
            new TsneGridCase("gridNodesPerInterval", 0, false), new TsneGridCase("gridNodesPerInterval", 1, true),
            new TsneGridCase("gridNodesPerInterval", 8, true), new TsneGridCase("gridNodesPerInterval", 9, false),
            new TsneGridCase("gridMinIntervals", 0, false), new TsneGridCase("gridMinIntervals", 1, true),
            new TsneGridCase("gridMaxIntervals", -1, false), new TsneGridCase("gridMaxIntervals", 0, true)};
        for (TsneGridCase g : grid) {
            tsne(g.param, g.value, g.ok, c -> c.grid = g.options());
        }
        for (double v : new double[] {0, Double.MIN_VALUE, Double.POSITIVE_INFINITY}) {
            tsne("gridIntervalsPerUnit", v, v > 0 && v < Double.POSITIVE_INFINITY,
                c -> c.grid = TsneConfig.gridOptions(4, v, 20, 0));
        }
    }

    /** One grid setting changed from the defaults (p 4, 2 boxes per unit, 20 to the default most boxes). */
    private static final class TsneGridCase {
        final String param;
        final int value;
        final boolean ok;
        final int p;
        final int min;
        final int max;

        TsneGridCase(String param, int value, boolean ok) {
            this.param = param;
            this.value = value;
            this.ok = ok;
            this.p = param.equals("gridNodesPerInterval") ? value : 4;
            this.min = param.equals("gridMinIntervals") ? value : 20;
            this.max = param.equals("gridMaxIntervals") ? value : 0;
        }

        io.sparkgpu.tsne.TsneGridOptions options() {
            return TsneConfig.gridOptions(p, 2.0, min, max);
        }
    }

    @Test
    void tsneRulesBetweenSettings() {
        // k must exceed the perplexity (the entropy of k affinities is below ln k): k == perplexity used to pass the
        // front checks (k >= perplexity) and fail in the bandwidth search
        double[][] kp = {{5, 5}, {6, 5}, {5, Math.nextDown(5.0)}, {2, 1.5}};
        for (double[] c : kp) {
            int k = (int) c[0];
            double p = c[1];
            same("k", k + ", perplexity=" + p, k > p,
                () -> new GpuTsne().setK(k).setPerplexity(p).toConfig().validate(),
                () -> {
                    TsneConfig t = new TsneConfig();
                    t.k = k;
                    t.perplexity = p;
                    t.validate();
                });
        }
        for (int[] mm : new int[][] {{10, 9}, {10, 10}, {10, 0}}) {
            same("gridMaxIntervals", mm[1] + ", gridMinIntervals=" + mm[0], mm[1] != 9,
                () -> new GpuTsne().setGridMinIntervals(mm[0]).setGridMaxIntervals(mm[1]).toConfig().validate(),
                () -> {
                    TsneConfig t = new TsneConfig();
                    t.grid = TsneConfig.gridOptions(4, 2.0, mm[0], mm[1]);
                    t.validate();
                });
        }
        // the largest grid, FFT-padded, must fit the convolution: 3-D 125 x 4 = 500 nodes per axis (5-smooth,
        // 1.25e8 nodes) fits, 128 x 4 = 512 (2^27 nodes) does not; 2-D 1440 x 8 = 11520 fits, 1449 x 8 pads to 11664
        int[][] sizes = {{3, 4, 125}, {3, 4, 128}, {2, 8, 1440}, {2, 8, 1449}, {1, 8, 1 << 20}};
        boolean[] sizeOk = {true, false, true, false, true};
        for (int i = 0; i < sizes.length; i++) {
            int[] s = sizes[i];
            same("gridMaxIntervals", s[2] + " x " + s[1] + " in " + s[0] + "-D", sizeOk[i],
                () -> new GpuTsne().setDimension(s[0]).setGridNodesPerInterval(s[1]).setGridMaxIntervals(s[2])
                        .toConfig().validate(),
                () -> {
                    TsneConfig t = new TsneConfig();
                    t.dimension = s[0];
                    t.grid = TsneConfig.gridOptions(s[1], 2.0, 20, s[2]);
                    t.validate();
                });
        }
    }

    /** The one formula of the default k, and its cap, are what every layer uses. */
    @Test
    void defaultNeighboursFormula() {
        assertEquals(90, TsneConfig.defaultK(30, 1000));
        assertEquals(91, TsneConfig.defaultK(30.1, 1000));
        assertEquals(49, TsneConfig.defaultK(30, 50));
        assertEquals(49, new TsneConfig().effectiveK(50));
        assertNull(error(() -> new TsneConfig().validate(50)));
    }

    // ------------------------------------------------------------------ spline and CDF

    private static void spline(String param, Object value, boolean ok, Consumer<SplineConfig> onConfig) {
        param(param, value, ok, GpuMonotoneSpline::new, e -> e.toConfig().validate(), () -> {
            SplineConfig c = new SplineConfig();
            onConfig.accept(c);
            c.validate();
        });
    }

    @Test
    void splineSettings() {
        for (String v : new String[] {"schumaker", "RATIONAL", "gregory-delbourgo", "cubic", ""}) {
            boolean ok = !v.equals("cubic") && !v.isEmpty();
            spline("kind", v, ok, c -> c.kind = SplineConfig.parseKind(v));
            // the CDF's kind has the same rule (its default is rational)
            same("kind", v + " (CDF)", ok, () -> new GpuMonotoneCdf().setKind(v), () -> SplineConfig.parseKind(v));
        }
        for (String v : new String[] {"none", "ISOTONIC", "lowess"}) {
            spline("smoothing", v, !v.equals("lowess"), c -> c.smoothing = SplineConfig.parseSmoothing(v));
        }
        for (String v : new String[] {"clip", "Linear", "nan", "error", "wrap"}) {
            spline("extrapolate", v, !v.equals("wrap"), c -> c.extrapolate = SplineConfig.parseExtrapolate(v));
            // a fitted model may change it: the same rule
            same("extrapolate", v + " (model)", !v.equals("wrap"),
                () -> new GpuMonotoneSplineModel("m", SplineEngine.buildCpu(SplineConfig.Kind.SCHUMAKER,
                        new double[] {0, 1}, new double[] {0, 1}, null)).setExtrapolate(v),
                () -> SplineConfig.parseExtrapolate(v));
        }
    }

    @Test
    void cdfSettings() {
        // numKnots: the param, and the entry of the quantiles' computation (an array of values here)
        int max = SplineConfig.MAX_CDF_KNOTS;
        for (int v : new int[] {1, 2, max + 1}) {
            same("numKnots", v, v >= 2 && v <= max, () -> new GpuMonotoneCdf().setNumKnots(v),
                () -> SplineCdf.quantileKnots(new double[] {0, 1, 2}, null, v, "value", null));
        }
        same("numKnots", max, true, () -> new GpuMonotoneCdf().setNumKnots(max),
            () -> SplineConfig.checkNumKnots(max));
        for (long v : new long[] {-1, 0, 1, 2}) {
            same("sampleSize", v, v == 0 || v >= 2, () -> new GpuMonotoneCdf().setSampleSize(v),
                () -> SplineConfig.checkSampleSize(v));
        }
        // p of quantile(p): the model's array and single calls, and the per-row path of SQL (SplineCdf.quantileAt)
        Spline s = SplineCdf.build(new double[] {0, 1, 2}, SplineConfig.Kind.RATIONAL, io.sparkgpu.cuda.Backend.CPU,
                "value");
        GpuMonotoneCdfModel m = new GpuMonotoneCdfModel("cdf", s, new double[] {0, 1, 2}).setBackend("cpu");
        for (double p : new double[] {-Double.MIN_VALUE, 0, 0.5, 1, Math.nextUp(1.0), Double.NaN}) {
            boolean ok = p >= 0 && p <= 1;
            same("p", p, ok, () -> m.quantile(p), () -> SplineCdf.quantileAt(s, p));
            same("p", p + " (array)", ok, () -> m.quantile(new double[] {0.5, p}), () -> SplineCdf.quantileAt(s, p));
        }
        // numPartitions of the quantile partitioner: from a fitted CDF, and the rule itself
        for (int v : new int[] {0, 1, 1 << 20, (1 << 20) + 1}) {
            boolean ok = v >= 1 && v <= (1 << 20);
            same("numPartitions", v, ok, () -> {
                if (!ok || v <= 2) { // the largest valid count costs 2^20 quantiles: the rule alone says yes
                    SplineRangePartitioner.fromCdf(m, v);
                }
            }, () -> SplineConfig.checkNumPartitions(v));
        }
    }

    // ------------------------------------------------------------------ shared params

    /** Explicit param, else spark.sparkgpu.backend (here a system property: no SparkEnv), else auto: everywhere. */
    @Test
    void backendResolvesOnceForEverySurface() {
        String key = io.sparkgpu.cuda.SparkGpuConf.BACKEND;
        String old = System.getProperty(key);
        try {
            System.clearProperty(key);
            assertEquals("auto", new GpuKMeans().getBackend());
            System.setProperty(key, "cpu");
            Params[] owners = {new GpuKMeans(), new GpuIsotonicRegression(), new GpuScanStatistic(), new GpuTsne(),
                new io.sparkgpu.kmeans.GpuKMeansModel("m", new double[][] {{0}, {1}})};
            for (Params p : owners) {
                assertEquals("cpu", ((HasBackend<?>) p).getBackend(), p.getClass().getSimpleName());
                assertTrue(!p.isSet(p.getParam("backend")) && !p.hasDefault(p.getParam("backend")),
                        "no default value: the setting decides when the param is unset");
            }
            io.sparkgpu.cuda.Backend cpu = io.sparkgpu.cuda.Backend.CPU;
            assertEquals(cpu, new GpuKMeans().toConfig().validate().backend);
            assertEquals(cpu, new KMeansConfig().validate().backend);
            assertEquals(cpu, new IsotonicConfig().validate().backend);
            assertEquals(cpu, new ScanConfig().validate().backend);
            assertEquals(cpu, new TsneConfig().validate().backend);
            assertEquals(cpu, new GpuTsne().toConfig().validate().backend);
            // an explicit value wins over the setting
            assertEquals("gpu", new GpuScanStatistic().setBackend("GPU").getBackend());
            assertEquals(io.sparkgpu.cuda.Backend.GPU, new GpuIsotonicRegression().setBackend("gpu").toConfig()
                    .validate().backend);
            KMeansConfig explicit = new KMeansConfig();
            explicit.backend = io.sparkgpu.cuda.Backend.AUTO;
            assertEquals(io.sparkgpu.cuda.Backend.AUTO, explicit.validate().backend);
            // clearing the param goes back to the setting
            assertEquals("cpu", new GpuTsne().setBackend("gpu").setBackend(null).getBackend());
        } finally {
            if (old == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, old);
            }
        }
    }

    /** One default seed per capability: the estimator's (MLlib's rule, its class name's hash) is the config's. */
    @Test
    void defaultSeedIsTheEstimatorsOnEverySurface() {
        assertEquals((long) "io.sparkgpu.kmeans.GpuKMeans".hashCode(), new GpuKMeans().getSeed());
        assertEquals(new GpuKMeans().getSeed(), new KMeansConfig().seed);
        assertEquals(new GpuScanStatistic().getSeed(), new ScanConfig().seed);
        assertEquals(new GpuTsne().getSeed(), new TsneConfig().seed);
        assertEquals(HasSeed.defaultSeed(GpuTsne.class), new GpuTsne().toConfig().seed);
    }

    @Test
    void mixinsDeclareOneParamPerOwnerWithTheSavedNames() {
        GpuKMeans a = new GpuKMeans();
        GpuKMeans b = new GpuKMeans();
        assertTrue(a.backend() == a.backend(), "one Param object per owner and name");
        assertTrue(a.backend() != b.backend(), "a Param belongs to one owner");
        assertEquals(a.uid(), a.seed().parent());
        for (Params p : new Params[] {a, new GpuIsotonicRegression(), new GpuScanStatistic(), new GpuTsne()}) {
            assertTrue(p.hasParam("backend"), p.getClass().getSimpleName());
            assertNotNull(p.getParam("backend"));
        }
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (Param<?> p : new GpuTsne().params()) {
            names.add(p.name());
        }
        assertEquals(new java.util.TreeSet<>(java.util.List.of("backend", "convolution", "dimension",
                "distributedPartitions", "dof", "dstCol", "earlyExaggeration", "exaggerationIterations", "featuresCol",
                "finalMomentum", "gridIntervalsPerUnit", "gridMaxIntervals", "gridMinIntervals", "gridNodesPerInterval",
                "idCol", "init", "initialMomentum", "k", "klEvery", "knnProbes", "learningRate", "maxIter", "minGain", "mode",
                "outputCol", "pcaDimension", "perplexity", "qualitySampleSize", "repulsion", "seed", "singleModeMaxEntries",
                "srcCol", "weightCol", "lateExaggeration", "lateExaggerationIter", "transformMaxIter",
                "transformLearningRate")), names, "GpuTsne's param names are part of the saved format");
        assertEquals(new java.util.TreeSet<>(java.util.List.of("backend", "derivativeCol", "extrapolate", "kind",
                "predictionCol", "slopeCol", "smoothing", "weightCol", "xCol", "yCol")),
                paramNames(new GpuMonotoneSpline()), "GpuMonotoneSpline's param names are part of the saved format");
        assertEquals(paramNames(new GpuMonotoneSpline()), paramNames(new GpuMonotoneSplineModel("m",
                SplineEngine.buildCpu(SplineConfig.Kind.SCHUMAKER, new double[] {0, 1}, new double[] {0, 1}, null))),
                "the spline model saves the estimator's params");
        assertEquals(new java.util.TreeSet<>(java.util.List.of("backend", "densityCol", "inputCol", "kind",
                "numKnots", "outputCol", "sampleSize", "seed", "weightCol")), paramNames(new GpuMonotoneCdf()),
                "GpuMonotoneCdf's param names are part of the saved format");
    }

    private static java.util.Set<String> paramNames(Params p) {
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (Param<?> q : p.params()) {
            names.add(q.name());
        }
        return names;
    }
}
