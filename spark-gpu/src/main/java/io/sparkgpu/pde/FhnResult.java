package io.sparkgpu.pde;

import java.io.Serializable;

/**
 * The outcome of one simulation: observables at the two probes (first upward crossing of the threshold at each, the
 * number of upward crossings at the far probe), the largest v, the final state and solver statistics.
 */
public final class FhnResult implements Serializable {
    private static final long serialVersionUID = 1L;

    /** (x_far - x_near) / (t_far - t_near) from the first crossings, or NaN when either probe never fired. */
    public final double waveSpeed;
    /** Upward crossings of the threshold at the far probe. */
    public final int pulseCount;
    public final double maxV;
    /** Whether the far probe crossed the threshold. */
    public final boolean propagated;
    public final double finalTime;
    public final long steps;
    /** Newton iterations over all steps (0 for the explicit schemes). */
    public final long newtonIterations;
    /** Steps whose Newton iteration stopped at maxNewton without meeting newtonTol. */
    public final long unconvergedSteps;
    /** Mean nodes per step (cells, but for the adaptive scheme). */
    public final double meanNodes;
    public final double tNear;
    public final double tFar;
    public final double[] v;
    public final double[] w;
    /** v at every recorded step, frame-major (frames x cells), or null. */
    public final double[] field;
    public final int frames;

    public FhnResult(double tNear, double tFar, int pulseCount, double maxV, double finalTime, long steps,
                     long newtonIterations, long unconvergedSteps, double meanNodes, double xNear, double xFar,
                     double[] v, double[] w, double[] field, int frames) {
        this.tNear = tNear;
        this.tFar = tFar;
        this.pulseCount = pulseCount;
        this.maxV = maxV;
        this.propagated = !Double.isNaN(tFar);
        this.waveSpeed = !Double.isNaN(tNear) && !Double.isNaN(tFar) && tFar > tNear
                ? (xFar - xNear) / (tFar - tNear) : Double.NaN;
        this.finalTime = finalTime;
        this.steps = steps;
        this.newtonIterations = newtonIterations;
        this.unconvergedSteps = unconvergedSteps;
        this.meanNodes = meanNodes;
        this.v = v;
        this.w = w;
        this.field = field;
        this.frames = frames;
    }
}
