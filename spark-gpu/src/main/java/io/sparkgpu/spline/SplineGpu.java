package io.sparkgpu.spline;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.cuda.KernelTimer;

/**
 * GPU implementation of {@link SplineCpu} through the {@code spline} module ({@code spline.cu}; its header describes
 * the kernels): one launch builds a spline, one evaluates (value and derivative) or inverts any number of queries.
 * Outputs equal the twin's bits. Input errors are detected on the device (the smallest bad interval or query index)
 * and thrown with the twin's own message for that index. Device problems throw {@code CudaException}; this class
 * never falls back ({@link SplineStep} applies the policy).
 */
final class SplineGpu {
    public static final String MODULE = "spline";
    public static final String PROBE_KERNEL = "spline_eval";

    static final int THREADS = 256;
    static final int GUIDE = 4096;
    static final int NO_BAD = Integer.MAX_VALUE;

    private SplineGpu() {
    }

    static int grid(CudaDevice dev, String kernel, long work) {
        long blocks = Math.max(1, (work + THREADS - 1) / THREADS);
        return (int) Math.min(blocks, KernelLauncher.residentBlocks(dev, MODULE, kernel, THREADS, 0));
    }

    static int readBad(DeviceBuffer bad, GpuStream s, String what) {
        int[] b = new int[1];
        bad.download(b, 1, s);
        s.synchronize(what);
        return b[0];
    }

    /** Device bytes of a build of n knots into T pieces (x, y, slopes, tables, the bad flag). */
    static long buildBytes(long n, long T, boolean slopes) {
        return 8L * (2 * n + (slopes ? n : 1) + 3 * T) + 4;
    }

    /** {@link SplineCpu#build} on the device. */
    public static Spline build(CudaDevice dev, SplineConfig.Kind kind, double[] x, double[] y, double[] p) {
        return build(dev, kind, x, y, p, 0, null);
    }

    /**
     * The build, and with {@code reps} > 0 the best kernel time in milliseconds of that many further launches into
     * {@code millis[0]} (benchmarks: the data stays on the device).
     */
    static Spline build(CudaDevice dev, SplineConfig.Kind kind, double[] x, double[] y, double[] p, int reps,
                        double[] millis) {
        if (kind == SplineConfig.Kind.SCHUMAKER && p != null) {
            throw new IllegalArgumentException("slopes apply to kind=rational only (kind=schumaker uses Butland's "
                    + "slopes)");
        }
        double sign = SplineCpu.checkShape(x, y, p);
        int n = x.length;
        int T = kind == SplineConfig.Kind.SCHUMAKER ? 2 * n - 1 : n;
        // every knot at once (slopes read neighbours): over the device-memory budget, the CPU twin builds it
        DeviceMemoryBudget.check("spline build of " + n + " knots", buildBytes(n, T, p != null));
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dx = DeviceBuffer.ofDoubles(dev, n);
             DeviceBuffer dy = DeviceBuffer.ofDoubles(dev, n);
             DeviceBuffer dp = DeviceBuffer.ofDoubles(dev, p == null ? 1 : n);
             DeviceBuffer dt = DeviceBuffer.ofDoubles(dev, kind == SplineConfig.Kind.SCHUMAKER ? T : 1);
             DeviceBuffer da = DeviceBuffer.ofDoubles(dev, T);
             DeviceBuffer db = DeviceBuffer.ofDoubles(dev, T);
             DeviceBuffer bad = DeviceBuffer.allocate(dev, 4)) {
            dx.upload(x, s);
            dy.upload(y, s);
            if (p != null) {
                dp.upload(p, s);
            }
            bad.upload(new int[] {NO_BAD}, s);
            int grid = grid(dev, "spline_build", n);
            Object[] args = {dx, dy, KernelLauncher.nullable(p == null ? null : dp), n, sign, kind.code, dt, da, db,
                bad};
            KernelLauncher.launch(s, MODULE, "spline_build", grid, THREADS, 0, args);
            int b = readBad(bad, s, "spline build");
            if (b != NO_BAD) {
                throw SplineCpu.badInterval(x, y, p, sign, b);
            }
            if (reps > 0) {
                millis[0] = bestOf(dev, s, reps, () -> KernelLauncher.launch(s, MODULE, "spline_build", grid, THREADS,
                        0, args));
            }
            double[] t = kind == SplineConfig.Kind.SCHUMAKER ? new double[T] : x.clone();
            double[] a = new double[T];
            double[] bb = new double[T];
            if (kind == SplineConfig.Kind.SCHUMAKER) {
                dt.download(t, T, s);
            }
            da.download(a, T, s);
            db.download(bb, T, s);
            s.synchronize("spline build download");
            return new Spline(kind, sign, t, a, bb);
        }
    }

    private static double bestOf(CudaDevice dev, GpuStream s, int reps, Runnable launch) {
        double best = Double.MAX_VALUE;
        try (KernelTimer timer = new KernelTimer(dev)) {
            for (int r = 0; r < reps; r++) {
                timer.start(s);
                launch.run();
                timer.stop(s);
                s.synchronize("spline timing");
                best = Math.min(best, timer.millis());
            }
        }
        return best;
    }

    /** {@link SplineCpu#eval} on the device (deriv may be null). */
    public static void eval(CudaDevice dev, Spline sp, double[] z, SplineConfig.Extrapolate mode, double[] value,
                            double[] deriv) {
        queries(dev, sp, z, mode, value, deriv, false, 0, null);
    }

    /** {@link SplineCpu#inverse} on the device. */
    public static void inverse(CudaDevice dev, Spline sp, double[] v, SplineConfig.Extrapolate mode, double[] out) {
        queries(dev, sp, v, mode, out, null, true, 0, null);
    }

    /**
     * Evaluation or inverse; with reps > 0 also the best kernel milliseconds of that many launches (millis[0], over
     * the first chunk). Queries are independent, so over the device-memory budget they run in chunks of the planner
     * ({@link DeviceMemoryBudget#chunks}; the spline's tables are the fixed part) with the same bits; the smallest bad
     * index is found in the first chunk that has one, as one launch over all queries would find it.
     */
    static void queries(CudaDevice dev, Spline sp, double[] q, SplineConfig.Extrapolate mode, double[] out,
                        double[] deriv, boolean inverse, int reps, double[] millis) {
        int k = q.length;
        if (k == 0) {
            return;
        }
        // a Schumaker evaluation reads the data knots only (every other knot; spline_eval_schumaker_data recomputes
        // the extra knots as the build did): half the bytes for its random searches, the same bits
        boolean data = !inverse && sp.kind == SplineConfig.Kind.SCHUMAKER;
        double[] kt = data ? everyOther(sp.t) : sp.t;
        double[] ka = data ? everyOther(sp.a) : sp.a;
        double[] kb = data ? everyOther(sp.b) : sp.b;
        int T = kt.length;
        String kernel = inverse ? "spline_inverse" : data ? "spline_eval_schumaker_data" : "spline_eval";
        long[] plan = DeviceMemoryBudget.chunks("spline " + (inverse ? "inverse" : "evaluation"), k, 24L * T + 4,
                deriv == null ? 16 : 24, DeviceMemoryBudget.bytes());
        int c = (int) (plan[1] - plan[0]);
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dt = DeviceBuffer.ofDoubles(dev, T);
             DeviceBuffer da = DeviceBuffer.ofDoubles(dev, T);
             DeviceBuffer db = DeviceBuffer.ofDoubles(dev, T);
             DeviceBuffer dq = DeviceBuffer.ofDoubles(dev, c);
             DeviceBuffer dv = DeviceBuffer.ofDoubles(dev, c);
             DeviceBuffer dd = DeviceBuffer.ofDoubles(dev, deriv == null ? 1 : c);
             DeviceBuffer bad = DeviceBuffer.allocate(dev, 4)) {
            dt.upload(kt, s);
            da.upload(ka, s);
            db.upload(kb, s);
            boolean whole = plan.length == 2;
            double[] tv = whole ? out : new double[c];
            double[] td = whole || deriv == null ? deriv : new double[c];
            for (int i = 0; i + 1 < plan.length; i++) {
                int from = (int) plan[i];
                int m = (int) (plan[i + 1] - from);
                dq.upload(q, from, m, 0, s);
                bad.upload(new int[] {NO_BAD}, s);
                int grid = grid(dev, kernel, m);
                Object[] args = inverse
                        ? new Object[] {dt, da, db, T, sp.kind.code, sp.sign, dq, (long) m, mode.code, dv, bad}
                        : new Object[] {dt, da, db, T, sp.kind.code, sp.sign, dq, (long) m, mode.code, dv,
                            KernelLauncher.nullable(deriv == null ? null : dd), bad};
                KernelLauncher.launch(s, MODULE, kernel, grid, THREADS, 0, args);
                int b = readBad(bad, s, kernel);
                if (b != NO_BAD) {
                    throw inverse ? SplineCpu.outsideValues(sp, q, from + b) : SplineCpu.outsideKnots(sp, q, from + b);
                }
                if (reps > 0 && i == 0) {
                    millis[0] = bestOf(dev, s, reps, () -> KernelLauncher.launch(s, MODULE, kernel, grid, THREADS, 0,
                            args));
                }
                dv.download(tv, m, s);
                if (deriv != null) {
                    dd.download(td, m, s);
                }
                s.synchronize(kernel + " download");
                if (!whole) {
                    System.arraycopy(tv, 0, out, from, m);
                    if (deriv != null) {
                        System.arraycopy(td, 0, deriv, from, m);
                    }
                }
            }
        }
    }

    /** Entries 0, 2, 4, ... of a Schumaker table of 2n - 1 knots: its n data knots. */
    static double[] everyOther(double[] v) {
        double[] out = new double[(v.length + 1) / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = v[2 * i];
        }
        return out;
    }
}
