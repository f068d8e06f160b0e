package io.sparkgpu.kmeans;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Numbers describing one {@link GpuKMeans#fit} run, and, like MLlib's {@code KMeansSummary}, the training data
 * with its predictions ({@link #predictions()}, {@link #cluster()}, {@link #featuresCol()},
 * {@link #predictionCol()}). The numbers are small, serializable, and saved with the model; the predictions are a
 * lazy {@code Dataset} (no Spark job until used) that is neither serialized nor saved, so a loaded model's
 * summary has none ({@link #hasPredictions()}).
 */
public final class GpuKMeansSummary implements Serializable {
    private static final long serialVersionUID = 1L;

    private final int k;
    private final long numPoints;
    private final double trainingCost;
    private final double finalCost;
    private final int numIter;
    private final boolean converged;
    private final String backend;
    private final long[] clusterSizes;
    private final double[] costHistory;
    private final double[] maxShiftHistory;
    /** Not saved with the model: a loaded summary has an empty mode and no timings. */
    private String mode = "";
    private Map<String, Double> timings = new LinkedHashMap<>();
    private double[] iterationSeconds = new double[0];
    /** The training data with predictionCol appended, as MLlib's summary; null when loaded or deserialized. */
    private transient Dataset<Row> predictions;
    private String featuresCol = "";
    private String predictionCol = "";

    /**
     * @param trainingCost    cost of the last Lloyd iteration's assignment (MLlib's {@code trainingCost})
     * @param finalCost       cost of the returned centres
     * @param costHistory     cost per iteration (length {@code numIter})
     * @param maxShiftHistory largest centre movement per iteration (length {@code numIter})
     */
    public GpuKMeansSummary(int k, long numPoints, double trainingCost, double finalCost, int numIter, boolean converged,
                            String backend, long[] clusterSizes, double[] costHistory, double[] maxShiftHistory) {
        if (clusterSizes.length != k) {
            throw new IllegalArgumentException("clusterSizes has " + clusterSizes.length + " entries but k=" + k);
        }
        if (costHistory.length != numIter || maxShiftHistory.length != numIter) {
            throw new IllegalArgumentException("costHistory and maxShiftHistory must have numIter=" + numIter
                    + " entries, got " + costHistory.length + " and " + maxShiftHistory.length);
        }
        this.k = k;
        this.numPoints = numPoints;
        this.trainingCost = trainingCost;
        this.finalCost = finalCost;
        this.numIter = numIter;
        this.converged = converged;
        this.backend = backend;
        this.clusterSizes = clusterSizes.clone();
        this.costHistory = costHistory.clone();
        this.maxShiftHistory = maxShiftHistory.clone();
    }

    static GpuKMeansSummary from(KMeansResult r) {
        int n = r.history.size();
        double[] cost = new double[n];
        double[] shift = new double[n];
        for (int i = 0; i < n; i++) {
            cost[i] = r.history.get(i)[0];
            shift[i] = r.history.get(i)[1];
        }
        GpuKMeansSummary s = new GpuKMeansSummary(r.centers.length, r.numPoints, r.trainingCost, r.finalCost,
                r.iterations, r.converged, r.backend, r.clusterSizes, cost, shift);
        s.mode = r.mode;
        s.timings = new LinkedHashMap<>(r.timings);
        s.iterationSeconds = r.iterationSeconds.clone();
        return s;
    }

    /** Attaches the training data's predictions (called by {@link GpuKMeans#fit}); returns this summary. */
    GpuKMeansSummary withPredictions(Dataset<Row> predictions, String featuresCol, String predictionCol) {
        this.predictions = predictions;
        this.featuresCol = featuresCol;
        this.predictionCol = predictionCol;
        return this;
    }

    /** Whether {@link #predictions()} is available: true after a fit, false for a loaded model's summary. */
    public boolean hasPredictions() {
        return predictions != null;
    }

    /**
     * The training data with {@link #predictionCol()} appended (MLlib's {@code KMeansSummary.predictions}); lazy,
     * computed when used.
     *
     * @throws IllegalStateException for a loaded model's summary (predictions are not saved)
     */
    public Dataset<Row> predictions() {
        if (predictions == null) {
            throw new IllegalStateException("this k-means summary has no predictions: they are not saved with the "
                    + "model; call model.transform(data) instead (check hasPredictions() first)");
        }
        return predictions;
    }

    /** The predicted cluster of every training row: {@link #predictions()}' predictionCol (as MLlib). */
    public Dataset<Row> cluster() {
        return predictions().select(predictionCol);
    }

    /** The features column of the fit; empty for a loaded model's summary. */
    public String featuresCol() {
        return featuresCol;
    }

    /** The prediction column of {@link #predictions()}; empty for a loaded model's summary. */
    public String predictionCol() {
        return predictionCol;
    }

    /**
     * Where the iterations ran: {@code local} (the driver's threads, small data), {@code single-stage} (one barrier
     * stage, one task per GPU) or {@code job-per-pass}; empty for a loaded model.
     */
    public String mode() {
        return mode;
    }

    /** Seconds per phase of the fit (pack, initialisation, iterations, final pass, GPU time, ...); empty when loaded. */
    public Map<String, Double> timings() {
        return new LinkedHashMap<>(timings);
    }

    /** Wall seconds of each Lloyd iteration, measured where the loop ran; empty when loaded. */
    public double[] iterationSeconds() {
        return iterationSeconds.clone();
    }

    /** Number of clusters. */
    public int k() {
        return k;
    }

    /** Number of training rows. */
    public long numPoints() {
        return numPoints;
    }

    /** Weighted cost (sum of w * distance to the nearest centre) of the last iteration's assignment. */
    public double trainingCost() {
        return trainingCost;
    }

    /** Weighted cost of the final centres. */
    public double finalCost() {
        return finalCost;
    }

    /** Number of rows nearest to each final centre. */
    public long[] clusterSizes() {
        return clusterSizes.clone();
    }

    /** Number of Lloyd iterations run. */
    public int numIter() {
        return numIter;
    }

    /** Whether training stopped because no centre moved by more than tol (rather than at maxIter). */
    public boolean converged() {
        return converged;
    }

    /** "gpu" when every pass ran on a GPU, "cpu" when none did, "mixed" otherwise. */
    public String backend() {
        return backend;
    }

    /** Cost per iteration. */
    public double[] costHistory() {
        return costHistory.clone();
    }

    /** Largest centre movement per iteration (Euclidean norm, or cosine distance). */
    public double[] maxShiftHistory() {
        return maxShiftHistory.clone();
    }

    @Override
    public String toString() {
        return "GpuKMeansSummary(k=" + k + ", numPoints=" + numPoints + ", trainingCost=" + trainingCost
                + ", numIter=" + numIter + ", converged=" + converged + ", backend=" + backend
                + ", clusterSizes=" + Arrays.toString(clusterSizes) + ")";
    }

    // ------------------------------------------------------------------ persistence (one row)

    static final StructType SCHEMA = new StructType()
            .add("k", DataTypes.IntegerType, false)
            .add("numPoints", DataTypes.LongType, false)
            .add("trainingCost", DataTypes.DoubleType, false)
            .add("finalCost", DataTypes.DoubleType, false)
            .add("numIter", DataTypes.IntegerType, false)
            .add("converged", DataTypes.BooleanType, false)
            .add("backend", DataTypes.StringType, false)
            .add("clusterSizes", DataTypes.createArrayType(DataTypes.LongType, false), false)
            .add("costHistory", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
            .add("maxShiftHistory", DataTypes.createArrayType(DataTypes.DoubleType, false), false);

    Row toRow() {
        return RowFactory.create(k, numPoints, trainingCost, finalCost, numIter, converged, backend,
                boxed(clusterSizes), boxed(costHistory), boxed(maxShiftHistory));
    }

    static GpuKMeansSummary fromRow(Row r) {
        return new GpuKMeansSummary(r.getInt(r.fieldIndex("k")), r.getLong(r.fieldIndex("numPoints")),
                r.getDouble(r.fieldIndex("trainingCost")), r.getDouble(r.fieldIndex("finalCost")),
                r.getInt(r.fieldIndex("numIter")), r.getBoolean(r.fieldIndex("converged")),
                r.getString(r.fieldIndex("backend")),
                r.<Long>getList(r.fieldIndex("clusterSizes")).stream().mapToLong(Long::longValue).toArray(),
                r.<Double>getList(r.fieldIndex("costHistory")).stream().mapToDouble(Double::doubleValue).toArray(),
                r.<Double>getList(r.fieldIndex("maxShiftHistory")).stream().mapToDouble(Double::doubleValue).toArray());
    }

    private static List<Long> boxed(long[] a) {
        List<Long> l = new ArrayList<>(a.length);
        for (long v : a) {
            l.add(v);
        }
        return l;
    }

    private static List<Double> boxed(double[] a) {
        List<Double> l = new ArrayList<>(a.length);
        for (double v : a) {
            l.add(v);
        }
        return l;
    }
}
