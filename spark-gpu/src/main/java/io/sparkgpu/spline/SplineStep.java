package io.sparkgpu.spline;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import java.util.function.Supplier;

/**
 * Runs a spline phase on the backend the policy picks ({@link BackendChooser#run}, the project's one policy): the
 * GPU ({@link SplineGpu}) or the CPU twin ({@link SplineCpu}), which give the same bits, so with {@code auto} a GPU
 * failure is logged once and the call recomputed on the CPU without changing the answer. Input errors are the same
 * IllegalArgumentException on both backends and are never retried. Each call returns where it ran.
 */
final class SplineStep {
    /** Phase names of the backend policy (logs, errors, injected test faults). */
    public static final String BUILD = "spline build";
    public static final String EVAL = "spline eval";
    public static final String INVERSE = "spline inverse";

    private SplineStep() {
    }

    /** The spline of (x, y) with slopes p (rational only; null: Butland's). */
    public static BackendChooser.Ran<Spline> build(Backend backend, SplineConfig.Kind kind, double[] x, double[] y,
                                                   double[] p) {
        SplineCpu.checkShape(x, y, p);
        return run(backend, BUILD, dev -> SplineGpu.build(dev, kind, x, y, p), () -> SplineCpu.build(kind, x, y, p));
    }

    /** Values (and derivatives when deriv is not null) at the queries z. */
    public static BackendChooser.Ran<Void> eval(Backend backend, Spline s, double[] z, SplineConfig.Extrapolate mode,
                                                double[] value, double[] deriv) {
        checkOutputs(z, value, deriv);
        return run(backend, EVAL, dev -> {
            SplineGpu.eval(dev, s, z, mode, value, deriv);
            return null;
        }, () -> {
            SplineCpu.eval(s, z, mode, value, deriv);
            return null;
        });
    }

    /** The inverse at the values v into out. */
    public static BackendChooser.Ran<Void> inverse(Backend backend, Spline s, double[] v,
                                                   SplineConfig.Extrapolate mode, double[] out) {
        checkOutputs(v, out, null);
        return run(backend, INVERSE, dev -> {
            SplineGpu.inverse(dev, s, v, mode, out);
            return null;
        }, () -> {
            SplineCpu.inverse(s, v, mode, out);
            return null;
        });
    }

    static void checkOutputs(double[] q, double[] out, double[] deriv) {
        if (q == null || out == null || out.length < q.length || (deriv != null && deriv.length < q.length)) {
            throw new IllegalArgumentException("output arrays must hold one entry per query (" + (q == null ? 0
                    : q.length) + ")");
        }
    }

    private static <T> BackendChooser.Ran<T> run(Backend backend, String phase, BackendChooser.OnGpu<T> gpu,
                                                 Supplier<T> cpu) {
        return BackendChooser.run(backend, SplineGpu.MODULE, SplineGpu.PROBE_KERNEL, phase, gpu, cpu::get);
    }
}
