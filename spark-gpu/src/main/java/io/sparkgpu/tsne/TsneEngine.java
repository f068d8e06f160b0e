package io.sparkgpu.tsne;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.tsne.affinity.JointProbabilities;
import io.sparkgpu.tsne.affinity.KnnGraph;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.affinity.TsneAffinities;
import io.sparkgpu.tsne.init.TsneInit;
import io.sparkgpu.tsne.optimize.ExactTsne;
import io.sparkgpu.tsne.optimize.TsneOptimizer;
import io.sparkgpu.tsne.repulsion.G2GGpu;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import io.sparkgpu.tsne.repulsion.Repulsion;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The internal surface of the t-SNE engine for the benchmarks and jobs of spark-jobs (TsneBenchmark,
 * TsneG2GBenchmark): the phases one by one, below the Spark trainer ({@link TsneTrainer}) and the estimator
 * ({@link GpuTsne}). <b>Not a user API</b>: it may change with the engine at any time; users call {@link GpuTsne}.
 * Every method delegates to the phase's dispatcher in the sub-packages (affinity, init, optimize, repulsion), so the
 * benchmarks time exactly the code a fit runs.
 */
public final class TsneEngine {
    private TsneEngine() {
    }

    // ------------------------------------------------------------------ affinities

    /** Exact kNN of all rows of x (row-major n x d floats), self excluded ({@link TsneAffinities#knn}). */
    public static KnnGraph knn(float[] x, int n, int d, int k, Backend backend) {
        return TsneAffinities.knn(x, n, d, k, backend);
    }

    /**
     * The approximate kNN searching {@code probes} cells per point ({@link TsneAffinities#knnApproximate}); the GPU and
     * the CPU twin give the same bits.
     */
    public static KnnGraph knnApproximate(float[] x, int n, int d, int k, int probes, Backend backend) {
        return TsneAffinities.knnApproximate(x, n, d, k, probes, backend, null);
    }

    /**
     * The brute-force kNN of the query rows (global indices queryOffset..) among the reference rows
     * ({@link TsneAffinities#knnBlock}: every pair, no cells); with the whole set as both, {@link #knn}'s lists.
     */
    public static KnnGraph knnBlock(float[] query, int queryOffset, int nq, float[] ref, int refOffset, int nr, int d,
            int k, int n, Backend backend) {
        return TsneAffinities.knnBlock(query, queryOffset, nq, ref, refOffset, nr, d, k, n, backend);
    }

    /**
     * Pairs of points the last exact kNN over cells scanned in its two rounds (the brute force scans n (n - 1)):
     * {round 1, round 2}; zeros before the first.
     */
    public static long[] lastKnnCellPairs() {
        return TsneAffinities.lastKnnCellPairs();
    }

    /** Perplexity-calibrated conditional affinities p_{j|i} of the graph ({@link TsneAffinities#conditional}). */
    public static double[] conditional(KnnGraph g, double perplexity, Backend backend) {
        return TsneAffinities.conditional(g, perplexity, backend);
    }

    /** P of the whole graph, calibration and symmetrisation in one step ({@link TsneAffinities#joint}; same bits). */
    public static SparseRows joint(KnnGraph g, double perplexity, Backend backend) {
        return TsneAffinities.joint(g, perplexity, backend, null);
    }

    /** P = (P_cond + P_cond^T) / (2n) ({@link JointProbabilities#symmetrize}). */
    public static SparseRows symmetrize(KnnGraph g, double[] pcond) {
        return JointProbabilities.symmetrize(g, pcond);
    }

    /** P = (P_cond + P_cond^T) / (2n) on the chosen backend ({@link TsneAffinities#symmetrize}; same bits). */
    public static SparseRows symmetrize(KnnGraph g, double[] pcond, Backend backend) {
        return TsneAffinities.symmetrize(g, pcond, backend, null);
    }

    // ------------------------------------------------------------------ initialisation and optimiser

    /** The seeded random initial embedding (n x dim, {@link TsneInit#random}). */
    public static double[] randomInit(int n, int dim, long seed) {
        return TsneInit.random(n, dim, seed);
    }

    /** Single-device t-SNE on P from y0 ({@link TsneOptimizer#optimize}). */
    public static TsneResult optimize(SparseRows p, double[] y0, TsneConfig cfg, TsneProgress progress) {
        return TsneOptimizer.optimize(p, y0, cfg, progress);
    }

    // ------------------------------------------------------------------ repulsion

    /** The interpolation grid covering [min, max] per axis ({@link GridRepulsion#plan}). */
    public static InterpGrid plan(double[] min, double[] max, int dim, TsneGridOptions options) {
        return GridRepulsion.plan(min, max, dim, options);
    }

    /** S2G: exact fixed-point charges of the rows ({@link GridRepulsion#s2g}). */
    public static long[] s2g(InterpGrid grid, long nTotal, double[] yRows, int rows, Backend backend) {
        return GridRepulsion.s2g(grid, nTotal, yRows, rows, backend);
    }

    /** Fixed-point charges to doubles ({@link GridRepulsion#chargesToDouble}). */
    public static double[] chargesToDouble(InterpGrid grid, long nTotal, long[] fixed) {
        return GridRepulsion.chargesToDouble(grid, nTotal, fixed);
    }

    /** G2G: the potentials of the charges ({@link GridConvolution#convolve}). */
    public static double[] convolve(InterpGrid grid, double[] charges, GridConvolution.Method method,
            Backend backend) {
        return GridConvolution.convolve(grid, charges, method, backend);
    }

    /** G2S and Phi2Force: unnormalised repulsive forces, exact partial sum of z_i ({@link GridRepulsion#g2s}). */
    public static Repulsion g2s(InterpGrid grid, long nTotal, double[] potentials, double[] yRows, int rows,
            Backend backend) {
        return GridRepulsion.g2s(grid, nTotal, potentials, yRows, rows, backend);
    }

    /** The exact O(n^2) unnormalised repulsive term ({@link ExactTsne#repulsive}). */
    public static double[] exactRepulsive(double[] y, int n, int dim) {
        return ExactTsne.repulsive(y, n, dim);
    }

    /** The exact O(n^2) Z ({@link ExactTsne#z}). */
    public static double exactZ(double[] y, int n, int dim) {
        return ExactTsne.z(y, n, dim);
    }

    // ------------------------------------------------------------------ G2G in detail (TsneG2GBenchmark)

    /** Loads the G2G kernels on {@code dev} (throws what loading throws). */
    public static void loadG2G(CudaDevice dev) {
        dev.function(G2GGpu.MODULE, G2GGpu.PROBE_KERNEL);
    }

    /** Frees the G2G plans and buffers cached on the devices. */
    public static void clearG2GCache() {
        G2GGpu.clearCache();
    }

    /** G2G on {@code dev} (null: the CPU twin) without fallback ({@link GridConvolution#convolveOn}). */
    public static double[] convolveOn(CudaDevice dev, InterpGrid grid, double[] charges, GridConvolution.Method method,
            double[] kernelMillis) {
        return GridConvolution.convolveOn(dev, grid, charges, method, kernelMillis);
    }

    /** Largest relative difference of two potential grids ({@link GridConvolution#maxRelativeDifference}). */
    public static double maxRelativeDifference(InterpGrid grid, double[] a, double[] b) {
        return GridConvolution.maxRelativeDifference(grid, a, b);
    }

    /** What {@code AUTO} picks for the grid on the GPU or the CPU ({@link GridConvolution#autoChoice}). */
    public static GridConvolution.Method autoChoice(InterpGrid grid, boolean gpu) {
        return GridConvolution.autoChoice(grid, gpu);
    }

    /** The FFT shape of the grid, for reports ({@link GridConvolution#fftShape}). */
    public static String fftShape(InterpGrid grid) {
        return GridConvolution.fftShape(grid);
    }

    /** {FFT work units, launches} of the grid ({@link GridConvolution#fftWorkAndLaunches}). */
    public static double[] fftWorkAndLaunches(InterpGrid grid) {
        return GridConvolution.fftWorkAndLaunches(grid);
    }

    /** The cost-model constants of {@link GridConvolution} in use (ns per unit), by name. */
    public static Map<String, Double> g2gCostModel() {
        Map<String, Double> m = new LinkedHashMap<>();
        m.put("DIRECT_NS_GPU", GridConvolution.DIRECT_NS_GPU);
        m.put("DIRECT_SOURCE_NS_GPU", GridConvolution.DIRECT_SOURCE_NS_GPU);
        m.put("FFT_NS_GPU", GridConvolution.FFT_NS_GPU);
        m.put("LAUNCH_NS_GPU", GridConvolution.LAUNCH_NS_GPU);
        m.put("DIRECT_NS_CPU", GridConvolution.DIRECT_NS_CPU);
        m.put("FFT_NS_CPU", GridConvolution.FFT_NS_CPU);
        m.put("PHASE_NS_CPU", GridConvolution.PHASE_NS_CPU);
        return m;
    }
}
