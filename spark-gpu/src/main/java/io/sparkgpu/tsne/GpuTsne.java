package io.sparkgpu.tsne;

import io.sparkgpu.tsne.optimize.TsneTransform;

import io.sparkgpu.ml.HasFeaturesCol;
import io.sparkgpu.ml.ParamSlots;
import io.sparkgpu.ml.ParamsIO;
import io.sparkgpu.tsne.optimize.TsneOptimizer;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.types.StructType;

/**
 * t-distributed stochastic neighbour embedding as a Spark ML {@link Estimator}: the rows of a DataFrame (dense
 * feature vectors, or the vertices of a weighted graph) are embedded in 1, 2 or 3 dimensions.
 *
 * <p><b>Algorithm.</b> t-SNE (L. van der Maaten, G. Hinton, "Visualizing Data using t-SNE", JMLR 9:2579-2605,
 * 2008) on the sparse kNN affinities of L. van der Maaten, "Accelerating t-SNE using Tree-Based Algorithms", JMLR
 * 15:3221-3245, 2014 (exact k nearest neighbours, k = 3 perplexity, bandwidths by bisection to the perplexity,
 * P = (P_cond + P_cond^T) / 2n), or, in graph mode, on a given sparse stochastic graph as in SG-t-SNE-Pi
 * (N. Pitsianis, A.-S. Iliopoulos, D. Floros, X. Sun, "Spaceland Embedding of Sparse Stochastic Graphs", IEEE
 * HPEC 2019). The attractive term is a sparse product over P; the repulsive term and Z use polynomial
 * interpolation on a regular grid with a convolution between grid nodes, as in FIt-SNE (G. C. Linderman, M. Rachh,
 * J. G. Hoskins, S. Steinerberger, Y. Kluger, "Fast interpolation-based t-SNE for improved visualization of
 * single-cell RNA-seq data", Nature Methods 16:243-245, 2019) and SG-t-SNE-Pi, instead of the Barnes-Hut tree of
 * the 2014 paper; for small data ({@code repulsion} auto and n <= {@link TsneConfig#EXACT_MAX_POINTS}, or
 * {@code repulsion=exact}) the repulsive term and Z are summed exactly over all pairs instead. The choice reads only
 * n and the setting, and the grid's size only the embedding's extent, never the backend. The optimiser
 * ({@link TsneOptimizer}) uses early exaggeration, momentum and gains.
 *
 * <p><b>Cost.</b> kNN O(n^2 d / devices) (exact, tiled), affinities O(n k), per iteration O(n k dim) for the
 * attractive term, O(n p^dim) for the interpolation and O(G log G) (FFT) or O(G^2) (direct) for the G-node grid, or
 * O(n^2 dim) for the exact repulsion.
 *
 * <p><b>Execution and exactness.</b> {@code mode=single} keeps P and Y on the driver and its device;
 * {@code mode=distributed} keeps P as row slices on the executors and runs all iterations in one barrier stage
 * (one task per scheduled GPU, each holding Y: one task runs the single-device loop, several exchange their rows'
 * forces and exact partial sums of Z, O(n dim) per iteration; KL history and progress reach the driver at the end);
 * its fallback ({@link TsneTrainer#DISTRIBUTED_STAGE} false, dynamic allocation) broadcasts Y per iteration, the
 * executors return partial grids in exact 128-bit fixed point (O(grid) each), the driver sums and convolves them and
 * broadcasts the potentials, and the executors return their rows' forces and exact partial sums of Z. Every sum
 * that mixes slices is exact and every other value is computed per row with the same operations, so the embedding
 * is bit-for-bit the same in both modes, for any partitioning, and on GPU or CPU twin; it differs from the exact
 * O(n^2) gradient only by the interpolation error (about 1e-4 relative with the defaults; none with the exact
 * repulsion).
 *
 * <p>The fitted {@link GpuTsneModel} holds the embedding of the training rows (by id) and a {@link GpuTsneSummary}
 * (KL history, trustworthiness and kNN preservation on a seeded sample, time per phase). Persistence uses MLlib's
 * metadata layout ({@link ParamsIO}).
 *
 * <p>The params and their accessors are declared once in {@link GpuTsneParams}; their rules are those of
 * {@link TsneConfig}.
 */
public class GpuTsne extends Estimator<GpuTsneModel> implements GpuTsneParams<GpuTsne>, MLWritable {
    private static final long serialVersionUID = 1L;

    private final String uid;
    private final ParamSlots slots = new ParamSlots();
    private transient TsneProgress progress;

    public GpuTsne() {
        this(Identifiable.randomUID("gputsne"));
    }

    /** An estimator with the defaults of {@link TsneConfig} (backend: unset, see {@link #getBackend()}). */
    public GpuTsne(String uid) {
        this.uid = uid;
        TsneConfig d = new TsneConfig();
        TsneGridOptions g = TsneGridOptions.defaults();
        setDefault(featuresCol(), HasFeaturesCol.DEFAULT);
        setDefault(dimension(), d.dimension);
        setDefault(perplexity(), d.perplexity);
        setDefault(k(), d.k);
        setDefault(knnProbes(), d.knnProbes);
        setDefault(earlyExaggeration(), d.earlyExaggeration);
        setDefault(exaggerationIterations(), d.exaggerationIterations);
        setDefault(lateExaggeration(), d.lateExaggeration);
        setDefault(lateExaggerationIter(), d.lateExaggerationIter);
        TsneTransform.Settings ts = new TsneTransform.Settings(); // the params shared with the model
        setDefault(dof(), new TsneConfig().dof);
        setDefault(transformMaxIter(), ts.maxIter);
        setDefault(transformLearningRate(), ts.learningRate);
        setDefault(learningRate(), d.learningRate);
        setDefault(initialMomentum(), d.initialMomentum);
        setDefault(finalMomentum(), d.finalMomentum);
        setDefault(minGain(), d.minGain);
        setDefault(maxIter(), d.maxIter);
        setDefault(init(), d.init);
        setDefault(pcaDimension(), d.pcaDimension);
        setDefault(mode(), d.mode);
        setDefault(singleModeMaxEntries(), d.singleModeMaxEntries);
        setDefault(gridNodesPerInterval(), g.p);
        setDefault(gridIntervalsPerUnit(), g.intervalsPerUnit);
        setDefault(gridMinIntervals(), g.minIntervals);
        setDefault(gridMaxIntervals(), 0);
        setDefault(distributedPartitions(), d.distributedPartitions);
        setDefault(convolution(), "auto");
        setDefault(repulsion(), d.repulsion);
        setDefault(klEvery(), d.klEvery);
        setDefault(qualitySampleSize(), d.qualitySampleSize);
        setDefault(seed(), d.seed);
        setDefault(outputCol(), DEFAULT_OUTPUT);
    }

    @Override
    public String uid() {
        return uid;
    }

    @Override
    public ParamSlots paramSlots() {
        return slots;
    }

    /** Listener of the KL reports (not a Param: neither copied to models nor saved). */
    public GpuTsne setProgress(TsneProgress listener) {
        this.progress = listener;
        return this;
    }

    public TsneProgress getProgress() {
        return progress;
    }

    // ------------------------------------------------------------------ fitting

    /**
     * Embeds the rows of {@code dataset}: checks the columns, then runs {@link TsneTrainer} on {@link #toConfig()},
     * whose {@link TsneConfig#validate()} (and, once the rows are counted, {@link TsneConfig#validate(long)}) checks
     * every setting; errors ({@link IllegalArgumentException}) name the param or column. Returns a model with the
     * embedding and a summary.
     */
    @Override
    public GpuTsneModel fit(Dataset<?> dataset) {
        TsneConfig cfg = toConfig();
        transformSchema(dataset.schema());
        TsneFit f;
        TsneProgress progress = TsneProgress.logged(this.progress, cfg.maxIter); // one progress line per checkpoint
        if (graphMode()) {
            if (getDstCol() == null) {
                throw new IllegalArgumentException("dstCol must be set in graph mode (srcCol is set)");
            }
            f = TsneTrainer.fitGraph(dataset, getSrcCol(), getDstCol(), weightColOrNull(), cfg, progress);
        } else {
            f = TsneTrainer.fitFeatures(dataset, getFeaturesCol(), getIdCol(), cfg, progress);
        }
        String idName = GpuTsneModelParams.idName(getIdCol());
        GpuTsneModel model = new GpuTsneModel(uid, f.ids, f.idType, f.result.embedding, f.result.dim);
        copyValues(model, ParamMap.empty());
        if (!isDefined(idCol())) {
            model.setIdCol(idName);
        }
        model.setSummary(GpuTsneSummary.from(f));
        model.setReference(f.reference);
        model.setTrainingFit(f);
        return model.setParent(this);
    }

    /** Checks the input columns; the schema of {@link GpuTsneModel#embedding()}-joined rows is returned. */
    @Override
    public StructType transformSchema(StructType schema) {
        if (graphMode()) {
            io.sparkgpu.common.SchemaColumns.index(schema, getSrcCol(), "srcCol");
            io.sparkgpu.common.SchemaColumns.index(schema, getDstCol(), "dstCol");
            if (weightColOrNull() != null) {
                io.sparkgpu.common.SchemaColumns.numeric(schema, getWeightCol(), "weightCol");
            }
            return schema;
        }
        io.sparkgpu.common.Features.checkFeatures(schema, getFeaturesCol());
        String id = getIdCol();
        if (id != null) {
            int i = io.sparkgpu.common.SchemaColumns.index(schema, id, "idCol");
            if (!TsneTrainer.isIdType(schema.fields()[i].dataType())) {
                throw new IllegalArgumentException("idCol '" + id + "' must be numeric or string, but has type "
                        + schema.fields()[i].dataType().simpleString());
            }
        }
        return GpuTsneModelParams.appendOutput(schema, getOutputCol());
    }

    @Override
    public GpuTsne copy(ParamMap extra) {
        GpuTsne c = defaultCopy(extra);
        c.progress = progress;
        return c;
    }

    // ------------------------------------------------------------------ persistence

    @Override
    public MLWriter write() {
        return new Writer(this);
    }

    public static MLReader<GpuTsne> read() {
        return new Reader();
    }

    public static GpuTsne load(String path) {
        return read().load(path);
    }

    private static final class Writer extends MLWriter {
        private final GpuTsne instance;

        Writer(GpuTsne instance) {
            this.instance = instance;
        }

        @Override
        public void saveImpl(String path) {
            ParamsIO.saveMetadata(instance, path, sparkSession(), null);
            ParamsIO.seal(instance, path, sparkSession());
        }
    }

    private static final class Reader extends MLReader<GpuTsne> {
        @Override
        public GpuTsne load(String path) {
            ParamsIO.Metadata md = ParamsIO.loadMetadata(path, sparkSession(), GpuTsne.class.getName());
            GpuTsne e = new GpuTsne(md.uid());
            md.applyTo(e);
            return e;
        }
    }
}
