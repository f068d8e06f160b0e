package io.sparkgpu.ml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.scan.GpuScanStatistic;
import io.sparkgpu.spline.GpuMonotoneCdf;
import io.sparkgpu.spline.GpuMonotoneCdfModel;
import io.sparkgpu.spline.GpuMonotoneSpline;
import io.sparkgpu.spline.GpuMonotoneSplineModel;
import io.sparkgpu.spline.SplineCdf;
import io.sparkgpu.spline.SplineConfig;
import io.sparkgpu.spline.SplineEngine;
import io.sparkgpu.tsne.GpuTsne;
import org.apache.spark.ml.param.Params;
import org.junit.jupiter.api.Test;

/**
 * Metadata written before the params moved into the shared mixins still applies: the param names are the saved
 * format, and the old defaults (backend "auto", seeds) load as defaults. A loaded "auto" default of backend is a
 * default, not a setting, so spark.sparkgpu.backend still decides.
 */
class SavedParamsCompatibilityTest {
    private static void apply(Params target, String paramMap, String defaultParamMap) {
        String json = "{\"class\":\"" + target.getClass().getName() + "\",\"timestamp\":1,\"sparkVersion\":\"4.1.0\","
                + "\"uid\":\"" + target.uid() + "\",\"paramMap\":" + paramMap + ",\"defaultParamMap\":"
                + defaultParamMap + "}";
        ParamsIO.parseMetadata(json, "test", target.getClass().getName()).applyTo(target);
    }

    @Test
    void kmeansEstimatorAndModel() {
        GpuKMeans e = new GpuKMeans("gpukmeans_old");
        apply(e, "{\"k\":3,\"weightCol\":\"w\",\"featuresCol\":\"vec\",\"initialCenters\":[[0,0],[1,1],[2,2]]}",
                "{\"k\":2,\"maxIter\":20,\"tol\":1.0E-4,\"seed\":-1050774661,\"initMode\":\"k-means||\","
                        + "\"initSteps\":2,\"distanceMeasure\":\"euclidean\",\"featuresCol\":\"features\","
                        + "\"predictionCol\":\"prediction\",\"backend\":\"auto\"}");
        assertEquals(3, e.getK());
        assertEquals("w", e.getWeightCol());
        assertEquals("vec", e.getFeaturesCol());
        assertEquals(-1050774661L, e.getSeed());
        assertEquals(3, e.getInitialCenters().length);
        assertFalse(e.isSet(e.backend()), "a saved default is not a setting");
        GpuKMeansModel m = new GpuKMeansModel("m", new double[][] {{0}, {1}});
        apply(m, "{\"featuresCol\":\"vec\",\"distanceMeasure\":\"cosine\",\"backend\":\"cpu\"}",
                "{\"featuresCol\":\"features\",\"predictionCol\":\"prediction\",\"distanceMeasure\":\"euclidean\","
                        + "\"backend\":\"auto\"}");
        assertEquals("cosine", m.getDistanceMeasure());
        assertEquals("cpu", m.getBackend());
    }

    @Test
    void isotonicScanAndTsneEstimators() {
        GpuIsotonicRegression iso = new GpuIsotonicRegression("iso_old");
        apply(iso, "{\"loss\":\"l1\",\"increasing\":\"auto\",\"yMin\":0.0,\"weightCol\":\"w\"}",
                "{\"isotonic\":true,\"featureIndex\":0,\"featuresCol\":\"features\",\"labelCol\":\"label\","
                        + "\"predictionCol\":\"prediction\",\"loss\":\"l2\",\"algorithm\":\"pava\","
                        + "\"outOfBounds\":\"clip\",\"backend\":\"auto\"}");
        assertEquals("l1", iso.getLoss());
        assertEquals("auto", iso.getIncreasing());
        assertEquals(0.0, iso.getYMin());
        GpuIsotonicRegressionModel im = new GpuIsotonicRegressionModel("im", new double[] {0, 1},
                new double[] {0, 1}, true);
        apply(im, "{\"isotonic\":true,\"outOfBounds\":\"nan\"}", "{\"backend\":\"auto\",\"featureIndex\":0}");
        assertTrue(Double.isNaN(im.predict(5)));

        GpuScanStatistic scan = new GpuScanStatistic("scan_old");
        apply(scan, "{\"coordinateCols\":[\"x\",\"y\"],\"gridSize\":[4,5],\"numReplicas\":9,\"maxCells\":6}",
                "{\"inputType\":\"cells\",\"casesCol\":\"cases\",\"baselineCol\":\"baseline\",\"statistic\":\"poisson\","
                        + "\"direction\":\"high\",\"minCells\":1,\"maxCells\":0,\"maxBaselineFraction\":1.0,"
                        + "\"numClusters\":5,\"numReplicas\":999,\"seed\":123,\"numPartitions\":0,\"backend\":\"auto\","
                        + "\"clusterCol\":\"cluster\"}");
        assertEquals(9, scan.getNumReplicas());
        assertEquals(123L, scan.getSeed());
        assertEquals(5, scan.getGridSize()[1]);

        GpuTsne tsne = new GpuTsne("tsne_old");
        apply(tsne, "{\"perplexity\":5.0,\"idCol\":\"name\",\"mode\":\"distributed\",\"init\":\"random\","
                        + "\"gridMaxIntervals\":40}",
                "{\"featuresCol\":\"features\",\"dimension\":2,\"perplexity\":30.0,\"k\":0,\"earlyExaggeration\":12.0,"
                        + "\"exaggerationIterations\":250,\"learningRate\":0.0,\"initialMomentum\":0.5,"
                        + "\"finalMomentum\":0.8,\"minGain\":0.01,\"maxIter\":1000,\"init\":\"pca\",\"pcaDimension\":0,"
                        + "\"mode\":\"auto\",\"singleModeMaxEntries\":134217728,\"gridNodesPerInterval\":4,"
                        + "\"gridIntervalsPerUnit\":2.0,\"gridMinIntervals\":20,\"gridMaxIntervals\":0,"
                        + "\"distributedPartitions\":0,\"convolution\":\"auto\",\"klEvery\":50,\"qualitySampleSize\":1000,"
                        + "\"seed\":-1185282009,\"outputCol\":\"embedding\",\"backend\":\"auto\"}");
        assertEquals(5.0, tsne.getPerplexity());
        assertEquals("name", tsne.getIdCol());
        assertEquals("distributed", tsne.toConfig().validate().mode);
        assertEquals(40, tsne.getGridMaxIntervals());
        assertEquals("auto", tsne.getRepulsion(), "saved before the repulsion param: the default");
    }

    /** The spline's and the CDF's saved names and defaults (as their first release wrote them) still apply. */
    @Test
    void splineAndCdfEstimatorsAndModels() {
        String splineDefaults = "{\"xCol\":\"x\",\"yCol\":\"y\",\"kind\":\"schumaker\",\"smoothing\":\"none\","
                + "\"extrapolate\":\"clip\",\"predictionCol\":\"prediction\"}";
        GpuMonotoneSpline e = new GpuMonotoneSpline("spline_old");
        apply(e, "{\"xCol\":\"t\",\"yCol\":\"v\",\"slopeCol\":\"dv\",\"weightCol\":\"w\",\"kind\":\"rational\","
                + "\"smoothing\":\"isotonic\",\"backend\":\"cpu\"}", splineDefaults);
        assertEquals("t", e.getXCol());
        assertEquals("v", e.getYCol());
        assertEquals("dv", e.getSlopeCol());
        assertEquals("w", e.getWeightCol());
        assertEquals(SplineConfig.Kind.RATIONAL, e.toConfig().validate().kind);
        assertEquals(SplineConfig.Smoothing.ISOTONIC, e.toConfig().validate().smoothing);
        assertEquals("cpu", e.getBackend());
        assertEquals("clip", e.getExtrapolate());

        GpuMonotoneSplineModel m = new GpuMonotoneSplineModel("spline_m", SplineEngine.buildCpu(
                SplineConfig.Kind.SCHUMAKER, new double[] {0, 1, 2}, new double[] {0, 1, 3}, null));
        apply(m, "{\"xCol\":\"t\",\"extrapolate\":\"nan\",\"derivativeCol\":\"slope\"}", splineDefaults);
        assertEquals("t", m.getXCol());
        assertEquals("slope", m.getDerivativeCol());
        assertTrue(Double.isNaN(m.predict(5.0)), "the loaded extrapolate applies");
        assertEquals(3.0, m.predict(2.0));
        assertFalse(m.isSet(m.backend()), "no saved backend: the setting decides");

        GpuMonotoneCdf c = new GpuMonotoneCdf("cdf_old");
        apply(c, "{\"inputCol\":\"latency\",\"numKnots\":257,\"sampleSize\":100000,\"kind\":\"schumaker\","
                + "\"densityCol\":\"pdf\",\"weightCol\":\"w\"}",
                "{\"inputCol\":\"value\",\"numKnots\":1025,\"sampleSize\":0,\"kind\":\"rational\","
                        + "\"outputCol\":\"cdf\",\"seed\":12345}");
        assertEquals("latency", c.getInputCol());
        assertEquals(257, c.getNumKnots());
        assertEquals(100000L, c.getSampleSize());
        assertEquals("schumaker", c.getKind());
        assertEquals("pdf", c.getDensityCol());
        assertEquals("cdf", c.getOutputCol());
        assertEquals(12345L, c.getSeed());
        assertFalse(c.isSet(c.seed()), "a saved default is not a setting");

        double[] q = {0, 1, 2};
        GpuMonotoneCdfModel cm = new GpuMonotoneCdfModel("cdf_m", SplineCdf.build(q, SplineConfig.Kind.RATIONAL,
                io.sparkgpu.cuda.Backend.CPU, "value"), q);
        apply(cm, "{\"inputCol\":\"latency\",\"outputCol\":\"F\",\"backend\":\"cpu\"}",
                "{\"inputCol\":\"value\",\"numKnots\":1025,\"sampleSize\":0,\"kind\":\"rational\","
                        + "\"outputCol\":\"cdf\",\"seed\":12345}");
        assertEquals("latency", cm.getInputCol());
        assertEquals("F", cm.getOutputCol());
        assertEquals("cpu", cm.getBackend());
        assertEquals(2.0, cm.quantile(1.0));
        assertEquals(0.0, cm.quantile(0.0));
    }
}
