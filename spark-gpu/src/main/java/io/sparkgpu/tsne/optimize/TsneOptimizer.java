package io.sparkgpu.tsne.optimize;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneProgress;
import io.sparkgpu.tsne.TsneResult;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.repulsion.ExactRepulsion;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gradient descent of t-SNE (L. van der Maaten, G. Hinton, "Visualizing Data using t-SNE", JMLR 9:2579-2605, 2008):
 * with the unnormalised terms attr_i = sum_j p_ij w_ij (y_i - y_j) and rep_i = sum_j w_ij^2 (y_i - y_j),
 * w_ij = 1 / (1 + |y_i - y_j|^2), the gradient is g = 4 (alpha attr - rep / Z), alpha the early exaggeration during
 * the first {@code exaggerationIterations} iterations, {@code lateExaggeration} from {@code lateExaggerationIter} on
 * (after the early phase), 1 otherwise. The step uses per-coordinate gains (delta-bar-delta:
 * gain + 0.2 when the gradient's sign differs from the previous update's, gain * 0.8 otherwise, floored at
 * {@code minGain}) and momentum (initialMomentum, then finalMomentum once the exaggeration ends):
 * u = mu u - eta gain g, y = y + u. After the last iteration the exact mean (128-bit fixed-point sums) is subtracted.
 *
 * <p>The forces come from a {@link GradientSource}; this class is the only place where positions change, so the
 * single-device and the distributed mode share every floating-point operation of the update and give the same
 * bits when their sources do. The update is O(n dim) per iteration on the host, negligible next to the forces.
 * KL(P || Q) is evaluated every {@code klEvery} iterations (at the positions the iteration starts from) and for the
 * final embedding (after the last update and the centring: iteration {@code maxIter}), logged through slf4j and
 * passed to the {@link TsneProgress} listener. The final KL is exact, its Z summed over every pair
 * ({@link ExactRepulsion#z}), for n up to {@link TsneConfig#EXACT_KL_MAX_POINTS} and whenever the repulsion is exact;
 * the periodic ones use the Z of the iteration's repulsion (interpolated on the grid).
 */
public final class TsneOptimizer {
    private static final Logger LOG = LoggerFactory.getLogger(TsneOptimizer.class);
    /**
     * Phase name of the single-device optimisation on the GPU (the device-resident iteration: forces and update),
     * in logs, errors, {@link TsneTimings#backends()} and injected test faults.
     */
    public static final String PHASE = "t-SNE optimizer";

    private TsneOptimizer() {
    }

    /**
     * Single-device t-SNE on P (one slice of all n rows, symmetric, summing to 1) from the starting positions y0
     * (n x dim, not modified). When {@code cfg.backend} resolves to a GPU the whole iteration stays on it
     * ({@link TsneDeviceState}); otherwise the interpolation pieces run on the CPU twins. Both give the same bits.
     */
    public static TsneResult optimize(SparseRows p, double[] y0, TsneConfig cfg, TsneProgress progress) {
        cfg.validate(); // P is given: the kNN rules (perplexity, k) do not apply
        TsneConfig.checkPoints(p.n);
        return single(p, y0, cfg, progress, new TsneTimings());
    }

    /**
     * Single-device mode: the device-resident iteration when {@code cfg.backend} resolves to a GPU; with backend
     * {@code auto}, a GPU failure at any point of the run (in any phase) is logged once and the whole run is
     * repeated from y0 on the CPU twins, which give the same embedding, so a GPU problem never changes the answer
     * ({@link BackendChooser#run}). Without a usable device the host loop runs, each phase on {@code cfg.backend}.
     * Phase times and backends are added to {@code timings}.
     */
    public static TsneResult single(SparseRows p, double[] y0, TsneConfig cfg, TsneProgress progress,
            TsneTimings timings) {
        ExactTsne.requireWhole(p);
        checkStart(y0, p.n, cfg.dimension);
        if (p.n == 0) {
            return host(p, y0, cfg, progress, timings, cfg.backend);
        }
        BackendChooser.Ran<TsneResult> ran = BackendChooser.run(cfg.backend, AttractiveForces.MODULE,
                TsneDeviceState.PROBE_KERNEL, PHASE, dev -> {
                    TsneTimings gpu = new TsneTimings();
                    TsneResult r;
                    try (State st = new TsneDeviceState(dev, p, y0, cfg)) {
                        r = run(st, cfg, progress, gpu, TsneConfig.MODE_SINGLE, null);
                    }
                    timings.addAll(gpu);
                    return new TsneResult(r.n, r.dim, r.embedding, r.klIterations, r.klValues, r.mode, timings);
                },
                // after a failure part-way every phase stays on the CPU; without a device (an old module may lack
                // the device-resident kernels) each phase tries the GPU on its own
                afterGpuFailure -> host(p, y0, cfg, progress, timings, afterGpuFailure ? Backend.CPU : cfg.backend));
        if (ran.onGpu()) {
            recordDeviceResident(timings, cfg, p.n);
        } else {
            timings.backends().record(PHASE, ran);
        }
        return ran.value;
    }

    /** Records the phases of the device-resident iteration of n points as run on the GPU. */
    static void recordDeviceResident(TsneTimings timings, TsneConfig cfg, int n) {
        for (String phase : cfg.exactRepulsion(n) ? DEVICE_RESIDENT_EXACT_PHASES : DEVICE_RESIDENT_PHASES) {
            timings.backends().record(phase, true, null);
        }
    }

    /** The phases the device-resident iteration runs on the GPU. */
    private static final String[] DEVICE_RESIDENT_PHASES = {AttractiveForces.ATTRACTIVE_PHASE, GridRepulsion.S2G_PHASE,
        GridConvolution.PHASE, GridRepulsion.G2S_PHASE, PHASE};
    /** The phases the device-resident iteration runs on the GPU with the exact repulsion. */
    private static final String[] DEVICE_RESIDENT_EXACT_PHASES = {AttractiveForces.ATTRACTIVE_PHASE,
        ExactRepulsion.PHASE, PHASE};

    /** The host loop around the interpolation pieces, each on {@code backend}. */
    private static TsneResult host(SparseRows p, double[] y0, TsneConfig cfg, TsneProgress progress,
            TsneTimings timings, Backend backend) {
        try (GradientSource src = new LocalGradientSource(p, cfg, backend)) {
            return run(src, y0, cfg, progress, timings, TsneConfig.MODE_SINGLE, null);
        }
    }

    /** As {@link #optimize} with the exact O(n^2) forces of {@link ExactTsne} (tiny n: tests and references). */
    public static TsneResult optimizeExact(SparseRows p, double[] y0, TsneConfig cfg, TsneProgress progress) {
        cfg.validate();
        TsneConfig.checkPoints(p.n);
        try (GradientSource src = new ExactGradientSource(p, cfg.dimension, cfg.dof)) {
            return run(src, y0, cfg, progress, new TsneTimings(), TsneConfig.MODE_SINGLE, null);
        }
    }

    /** Called before each iteration with the 1-based iteration (the Spark mode sets job descriptions with it). */
    interface IterationHook {
        void before(int iteration, int maxIter);
    }

    /**
     * The positions and optimiser state of one run and where its iterations execute: on the host around a
     * {@link GradientSource} ({@link HostState}), or on one GPU ({@link TsneDeviceState}).
     */
    interface State extends AutoCloseable {
        int n();

        int dim();

        /**
         * Forces at the current positions, the Z check ({@link #checkZ}), then the update {@link #step}. Returns Z
         * and, when {@code withKl}, the exact KL partial sums of the positions before the update (possibly still
         * being computed on another thread).
         */
        Step iterate(int iteration, double alpha, double mu, double eta, double minGain, boolean withKl,
                TsneTimings timings);

        /** A host copy of the current positions. */
        double[] positions();

        /** Z and the KL partial sums at positions y (n x dim, host). */
        GradientSource.Forces evaluate(double[] y);

        /** The exact Z at positions y (n x dim, host): every pair summed ({@link ExactRepulsion#z}). */
        double exactZ(double[] y);

        @Override
        void close();
    }

    /** Z of one iteration and its pending KL partial sums (null when not requested). */
    static final class Step {
        final double z;
        final CompletableFuture<long[]> kl;

        Step(double z, CompletableFuture<long[]> kl) {
            this.z = z;
            this.kl = kl;
        }
    }

    /** Positions on the host, forces from a {@link GradientSource} (exact, local or distributed). */
    static final class HostState implements State {
        private final GradientSource src;
        private final double[] y;
        private final double[] update;
        private final double[] gains;

        HostState(GradientSource src, double[] y0) {
            this.src = src;
            this.y = y0.clone();
            this.update = new double[y.length];
            this.gains = new double[y.length];
            java.util.Arrays.fill(gains, 1.0);
        }

        @Override
        public int n() {
            return src.n();
        }

        @Override
        public int dim() {
            return src.dim();
        }

        @Override
        public Step iterate(int iteration, double alpha, double mu, double eta, double minGain, boolean withKl,
                TsneTimings timings) {
            GradientSource.Forces f = src.forces(y, withKl, timings);
            checkZ(f.z, iteration);
            long t0 = System.nanoTime();
            step(y, update, gains, f, alpha, mu, eta, minGain);
            timings.add(TsneTimings.Phase.UPDATE, System.nanoTime() - t0);
            return new Step(f.z, withKl ? CompletableFuture.completedFuture(f.kl) : null);
        }

        @Override
        public double[] positions() {
            return y.clone();
        }

        @Override
        public GradientSource.Forces evaluate(double[] pos) {
            return src.forces(pos, true, new TsneTimings());
        }

        @Override
        public double exactZ(double[] pos) {
            return ExactRepulsion.z(pos, src.n(), src.dim(), src.dof(), src.backend(), null);
        }

        @Override
        public void close() {
            // the source belongs to the caller
        }
    }

    /** Throws unless the starting positions hold n x dim values. */
    static void checkStart(double[] y0, int n, int dim) {
        if (y0.length != (long) n * dim) {
            throw new IllegalArgumentException("initial positions hold " + y0.length + " values, expected n * dim = "
                    + n + " * " + dim);
        }
    }

    /** Throws when Z is not a positive finite number (the embedding collapsed or diverged). */
    static void checkZ(double z, int iteration) {
        if (!(z > 0) || Double.isInfinite(z)) {
            throw new ArithmeticException("t-SNE normalisation Z=" + z + " at iteration " + iteration);
        }
    }

    static TsneResult run(GradientSource src, double[] y0, TsneConfig cfg, TsneProgress progress, TsneTimings timings,
            String mode, IterationHook hook) {
        checkStart(y0, src.n(), src.dim());
        return run(new HostState(src, y0), cfg, progress, timings, mode, hook);
    }

    static TsneResult run(State st, TsneConfig cfg, TsneProgress progress, TsneTimings timings, String mode,
            IterationHook hook) {
        final int n = st.n();
        final int dim = st.dim();
        long start = System.nanoTime();
        double eta = cfg.effectiveLearningRate(n);
        List<double[]> kls = new ArrayList<>();
        ArrayDeque<Object[]> pending = new ArrayDeque<>();
        LOG.info("spark-gpu t-SNE: n={} dim={} learningRate={} maxIter={} mode={}", n, dim, eta, cfg.maxIter, mode);
        for (int it = 0; it < cfg.maxIter; it++) {
            if (hook != null) {
                hook.before(it + 1, cfg.maxIter);
            }
            boolean exaggerate = it < cfg.exaggerationIterations;
            double alpha = cfg.exaggeration(it);
            double mu = exaggerate ? cfg.initialMomentum : cfg.finalMomentum;
            // the KL after the last iteration is the final one (below), not a periodic one at the same number
            boolean withKl = cfg.klEvery > 0 && (it + 1) % cfg.klEvery == 0 && it + 1 < cfg.maxIter;
            Step s = st.iterate(it + 1, alpha, mu, eta, cfg.minGain, withKl, timings);
            if (withKl) {
                pending.add(new Object[] {it + 1, s});
            }
            drain(pending, kls, progress, false);
        }
        long k0 = System.nanoTime();
        drain(pending, kls, progress, true);
        timings.add(TsneTimings.Phase.KL, System.nanoTime() - k0);
        timings.setIterations(cfg.maxIter);
        double[] y = st.positions();
        center(y, n, dim);
        GradientSource.Forces last = st.evaluate(y);
        double z = last.z;
        if (cfg.exactFinalKl(n) && !cfg.exactRepulsion(n)) { // the grid's Z is interpolated: sum every pair once
            z = st.exactZ(y);
        }
        report(kls, cfg.maxIter, TsneKl.value(last.kl, z), progress);
        timings.add(TsneTimings.Phase.TOTAL, System.nanoTime() - start);
        int[] its = new int[kls.size()];
        double[] vals = new double[kls.size()];
        for (int i = 0; i < its.length; i++) {
            its[i] = (int) kls.get(i)[0];
            vals[i] = kls.get(i)[1];
        }
        return new TsneResult(n, dim, y, its, vals, mode, timings);
    }

    /** Reports the pending KL values in iteration order: those already computed, or all when {@code wait}. */
    private static void drain(ArrayDeque<Object[]> pending, List<double[]> kls, TsneProgress progress, boolean wait) {
        while (!pending.isEmpty()) {
            Step s = (Step) pending.peek()[1];
            if (!wait && !s.kl.isDone()) {
                return;
            }
            int iteration = (Integer) pending.poll()[0];
            long[] acc;
            try {
                acc = s.kl.join();
            } catch (java.util.concurrent.CompletionException e) {
                throw e.getCause() instanceof RuntimeException ? (RuntimeException) e.getCause() : e;
            }
            report(kls, iteration, TsneKl.value(acc, s.z), progress);
        }
    }

    /**
     * One update of all coordinates (identical arithmetic in both modes). The step uses the gradient without its
     * constant factor 4 (dC/dy_i / 4 = alpha * attr_i - rep_i / Z), the convention of FIt-SNE and openTSNE that the
     * automatic learning rate max(n / earlyExaggeration, 200) of Belkina et al. (Nat. Commun. 10, 2019) is stated
     * in; with the factor kept, that rate is 4x too large and large embeddings (10^6 points) diverge.
     */
    static void step(double[] y, double[] update, double[] gains, GradientSource.Forces f, double alpha, double mu,
            double eta, double minGain) {
        double[] attr = f.attr;
        double[] rep = f.rep;
        double z = f.z;
        for (int t = 0; t < y.length; t++) {
            double g = alpha * attr[t] - rep[t] / z;
            double gain = Math.signum(g) != Math.signum(update[t]) ? gains[t] + 0.2 : gains[t] * 0.8;
            gain = Math.max(gain, minGain);
            gains[t] = gain;
            update[t] = mu * update[t] - eta * gain * g;
            y[t] += update[t];
        }
    }

    private static void report(List<double[]> kls, int iteration, double kl, TsneProgress progress) {
        kls.add(new double[] {iteration, kl});
        LOG.info("spark-gpu t-SNE iteration {}: KL divergence {}", iteration, kl);
        if (progress != null) {
            progress.onKl(iteration, kl);
        }
    }

    /** Subtracts the per-axis mean, summed exactly (fixed point) so the result does not depend on summation order. */
    static void center(double[] y, int n, int dim) {
        for (int a = 0; a < dim; a++) {
            double bound = 0;
            for (int i = 0; i < n; i++) {
                bound = Math.max(bound, Math.abs(y[i * dim + a]));
            }
            int shift = FixedPoint.shiftFor(bound * n);
            double[] mul = FixedPoint.multipliers(shift);
            long[] acc = new long[2];
            for (int i = 0; i < n; i++) {
                FixedPoint.add(acc, 0, y[i * dim + a], mul[0], mul[1]);
            }
            double mean = FixedPoint.toDouble(acc, 0, shift) / n;
            for (int i = 0; i < n; i++) {
                y[i * dim + a] -= mean;
            }
        }
    }
}
