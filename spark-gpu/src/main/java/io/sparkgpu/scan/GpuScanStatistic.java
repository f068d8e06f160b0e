package io.sparkgpu.scan;

import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.types.StructType;

/**
 * The scan statistic as a Spark ML {@link Estimator}: finds the most anomalous axis-aligned ranges
 * (intervals, rectangles or boxes) of a 1-, 2- or 3-D grid by the likelihood-ratio test over every range,
 * with Monte Carlo p-values.
 *
 * <p><b>Method.</b> Kulldorff's spatial scan statistic (M. Kulldorff, "A spatial scan statistic", Comm.
 * Statist. Theory Methods 26(6), 1997) with the Poisson and Bernoulli models, the normal model (Kulldorff,
 * Huang, Konty, Int. J. Health Geographics 8:58, 2009) and the expectation-based Poisson statistic (Neill et
 * al., KDD 2005), over all M = prod_k n_k(n_k+1)/2 boxes of the grid. The boxes are enumerated through the
 * range mapping of G. Beliakov et al. ("Fast LRT implementation on parallel computer architectures"): each
 * axis's triangle of intervals is folded onto a rectangle, composed across axes in mixed radix, so that equal
 * index ranges are equal work for Spark tasks and GPU threads; each box costs O(1) from exact 64-bit prefix
 * tables (inclusion/exclusion). Secondary clusters are the best boxes overlapping no earlier cluster.
 * p = (1 + #replicas with max LLR >= LLR) / (R + 1), replicas drawn under the null hypothesis with
 * counter-based random numbers keyed by (seed, replica).
 *
 * <p><b>Cost.</b> Building the grid: two passes over the data. Each reported cluster: one scan, O(M) range
 * evaluations plus O(strips * n_x) table reads, split over {@code numPartitions} tasks. Replicas: R scans plus
 * O(cases log cells) drawing each.
 *
 * <p><b>Exactness of the combiner.</b> Tasks return (LLR, index) of their best range and the driver keeps the
 * largest LLR, then the smallest index: a total order, so the result is identical for any number of tasks and
 * any backend (the GPU kernels and the CPU twin compute the same LLR bits). Per-cell sums are exact (integers,
 * or DECIMAL), so the grid does not depend on the input's partitioning either.
 *
 * <p>Persistence uses MLlib's metadata layout ({@link ParamsIO}).
 */
public class GpuScanStatistic extends Estimator<GpuScanModel> implements GpuScanParams<GpuScanStatistic>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final ParamSlots slots = new ParamSlots();

    public GpuScanStatistic() {
        this(Identifiable.randomUID("gpuscan"));
    }

    /** An estimator with the defaults of {@link ScanConfig} (backend: unset, see {@link #getBackend()}). */
    public GpuScanStatistic(String uid) {
        this.uid = uid;
        ScanConfig d = new ScanConfig();
        setDefault(inputType(), ScanGridInfo.CELLS);
        setDefault(casesCol(), DEFAULT_CASES);
        setDefault(baselineCol(), DEFAULT_BASELINE);
        setDefault(statistic(), d.model.id());
        setDefault(direction(), d.direction.id());
        setDefault(minCells(), d.minCells);
        setDefault(maxCells(), d.maxCells);
        setDefault(maxBaselineFraction(), d.maxBaselineFraction);
        setDefault(numClusters(), d.numClusters);
        setDefault(numReplicas(), d.numReplicas);
        setDefault(seed(), d.seed);
        setDefault(numPartitions(), d.numPartitions);
        setDefault(clusterCol(), DEFAULT_CLUSTER);
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    // ------------------------------------------------------------------ fitting

    /** A fitted model with what the fit read: the grid (for reports and heat maps; the model does not keep it). */
    public static final class Fitted {
        public final GpuScanModel model;
        public final ScanInput.Built input;

        Fitted(GpuScanModel model, ScanInput.Built input) {
            this.model = model;
            this.input = input;
        }
    }

    /** Builds the grid, scans it (clusters and replicas) and returns the model with the result. */
    @Override
    public GpuScanModel fit(Dataset<?> dataset) {
        return fitWithGrid(dataset).model;
    }

    /**
     * {@link #fit}, also returning the grid that was scanned. Settings are checked by {@link ScanConfig#validate()}
     * at {@link ScanTrainer#fit}'s entry and by {@link ScanInput}; errors name the param or column.
     */
    public Fitted fitWithGrid(Dataset<?> dataset) {
        ScanConfig cfg = toConfig();
        ScanInput in = toInput();
        transformSchema(dataset.schema());
        ScanTrainer.Fitted f = ScanTrainer.fit(dataset, in, cfg);
        GpuScanModel m = copyValues(new GpuScanModel(uid, f.input.info, f.result), ParamMap.empty());
        return new Fitted(m.setParent(this), f.input);
    }

    /** Checks the coordinate columns and appends clusterCol (the model's transform output). */
    @Override
    public StructType transformSchema(StructType schema) {
        return GpuScanModelParams.appendCluster(schema, getCoordinateCols(), getClusterCol());
    }

    @Override
    public GpuScanStatistic copy(ParamMap extra) {
        return defaultCopy(extra);
    }

    // ------------------------------------------------------------------ persistence

    @Override
    public MLWriter write() {
        return new Writer(this);
    }

    public static MLReader<GpuScanStatistic> read() {
        return new Reader();
    }

    public static GpuScanStatistic load(String path) {
        return read().load(path);
    }

    private static final class Writer extends MLWriter {
        private final GpuScanStatistic instance;

        Writer(GpuScanStatistic instance) {
            this.instance = instance;
        }

        @Override
        public void saveImpl(String path) {
            ParamsIO.saveMetadata(instance, path, sparkSession(), null);
            ParamsIO.seal(instance, path, sparkSession());
        }
    }

    private static final class Reader extends MLReader<GpuScanStatistic> {
        @Override
        public GpuScanStatistic load(String path) {
            ParamsIO.Metadata md = ParamsIO.loadMetadata(path, sparkSession(), GpuScanStatistic.class.getName());
            GpuScanStatistic e = new GpuScanStatistic(md.uid());
            md.applyTo(e);
            return e;
        }
    }
}
