package io.sparkgpu.jobs;

import io.sparkgpu.common.Features;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.kmeans.GpuKMeansSummary;
import io.sparkgpu.kmeans.KMeansConfig;
import io.sparkgpu.kmeans.KMeansProgress;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.knowm.xchart.XYChart;

/** Console output and plots of a k-means run, shared by the kmeans and demo commands. */
final class KMeansReport {
    private KMeansReport() {
    }

    /** The summary of a fitted model (k, iterations, cost, sizes, backend) and the times. */
    static void summary(PrintWriter out, GpuKMeansModel model, double trainSeconds, double wallSeconds) {
        GpuKMeansSummary r = model.summary();
        boolean cosine = KMeansConfig.COSINE.equals(model.getDistanceMeasure());
        out.printf(Locale.ROOT, "  points        %,d (d=%d)%n", r.numPoints(), model.numFeatures());
        out.printf(Locale.ROOT, "  k             %d%n", r.k());
        out.printf(Locale.ROOT, "  iterations    %d (%s)%n", r.numIter(), r.converged() ? "converged" : "not converged");
        out.printf(Locale.ROOT, "  cost          %.6e (sum of %s to the nearest centre)%n", r.finalCost(),
                cosine ? "cosine distances" : "squared distances");
        out.printf(Locale.ROOT, "  cluster sizes %s%n", Arrays.toString(r.clusterSizes()));
        out.printf(Locale.ROOT, "  backend       %s%n", r.backend());
        out.printf(Locale.ROOT, "  train time    %.2f s%n", trainSeconds);
        out.printf(Locale.ROOT, "  wall time     %.2f s%n", wallSeconds);
        out.flush();
    }

    /** Two coordinates of sampled points with their cluster. */
    static final class Sample {
        final double[] x;
        final double[] y;
        final int[] cluster;

        Sample(double[] x, double[] y, int[] cluster) {
            this.x = x;
            this.y = y;
            this.cluster = cluster;
        }
    }

    /**
     * Takes about {@code maxPoints} rows of {@code df} (seeded), predicts their cluster with {@code model} and returns
     * feature dimensions {@code jx} and {@code jy}. Only the sample is predicted, so this costs one cheap pass.
     */
    static Sample sample(Dataset<Row> df, GpuKMeansModel model, int maxPoints, long seed, int jx, int jy) {
        long numPoints = model.summary().numPoints();
        String featuresCol = model.getFeaturesCol();
        Dataset<Row> s = df;
        if (numPoints > maxPoints) {
            double fraction = Math.min(1.0, 1.1 * maxPoints / numPoints);
            s = df.sample(false, fraction, seed).limit(maxPoints);
        }
        String pred = InputData.freshName(df.schema(), "prediction");
        List<Row> rows = model.copy(ParamMap.empty()).setPredictionCol(pred)
                .transform(s.select(InputData.quote(featuresCol))).collectAsList();
        double[] x = new double[rows.size()];
        double[] y = new double[rows.size()];
        int[] c = new int[rows.size()];
        for (int i = 0; i < rows.size(); i++) {
            double[] p = Features.read(rows.get(i), 0, featuresCol);
            x[i] = p[jx];
            y[i] = p[jy];
            c[i] = rows.get(i).getInt(1);
        }
        return new Sample(x, y, c);
    }

    /** Scatter of the sample coloured by cluster, with the centres (dimensions jx, jy) marked. */
    static XYChart clustersChart(String title, String xName, String yName, Sample s, double[][] centers, int jx,
                                 int jy) {
        int k = centers.length;
        List<String> names = new ArrayList<>();
        for (int c = 0; c < k; c++) {
            names.add("cluster " + c);
        }
        XYChart chart = Plots.scatter(title, xName, yName, s.x, s.y, s.cluster, names);
        double[] cx = new double[k];
        double[] cy = new double[k];
        for (int c = 0; c < k; c++) {
            cx[c] = centers[c][jx];
            cy[c] = centers[c][jy];
        }
        Plots.addCentres(chart, "centres", cx, cy);
        return chart;
    }

    /** Cost per iteration (log scale when every cost is positive). */
    static XYChart costChart(String title, GpuKMeansSummary r) {
        double[] cost = r.costHistory();
        double[] it = new double[cost.length];
        boolean positive = true;
        for (int i = 0; i < it.length; i++) {
            it[i] = i + 1;
            positive &= cost[i] > 0;
        }
        double lo = Double.POSITIVE_INFINITY;
        double hi = 0;
        for (double c : cost) {
            lo = Math.min(lo, c);
            hi = Math.max(hi, c);
        }
        // a log axis only helps when the cost falls by orders of magnitude
        XYChart chart = Plots.lines(title, "iteration", "cost (before the update)", positive && hi > 100 * lo);
        chart.getStyler().setYAxisDecimalPattern("0.000E0");
        if (it.length > 0) {
            Plots.addLine(chart, "cost", it, cost);
        }
        return chart;
    }
}
