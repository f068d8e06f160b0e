package io.sparkgpu.pde;

import static io.sparkgpu.ml.ParamChecks.require;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.ml.ParamChecks;
import java.io.Serializable;
import java.util.Arrays;

/**
 * Settings shared by every simulation of one run or sweep of the 1-D FitzHugh-Nagumo system
 * <pre>
 *   v_t = D v_xx + v (a - v) (v - 1) - w + I(x, t),      w_t = eps (v - gamma w)
 * </pre>
 * on [0, length] with {@code cells} nodes. The per-simulation parameters (a, eps, gamma, I, D) are {@link FhnParams};
 * everything here is the grid, the scheme, the boundary, the initial state and the stimulus shape, the same for all
 * rows of a sweep. Each setting has one rule, a static {@code check*} below; {@link #validate()} runs them all (and
 * the cross-setting ones) at the entry of {@link FhnStep}, whoever built the config. The initial values are the
 * defaults of every surface.
 *
 * <p><b>Grid.</b> Dirichlet and Neumann: x_i = i dx, dx = length / (cells - 1) (both ends are nodes). Periodic:
 * dx = length / cells (node cells - 1 neighbours node 0).
 *
 * <p><b>Stimulus.</b> I(x, t) = I * p(x) * s(t), with I the row's amplitude, p(x) = exp(-(x / stimulusWidth)^2) (a
 * smooth current injected at the left end, so the spatial order is not spoiled by a jump; periodic: x is the
 * distance to node 0 around the ring) and s(t) = 1 for
 * {@code constant}, the linear interpolation of {@code series} at interval {@code seriesInterval} (held at its last
 * value) for {@code series}, and I = 0 for {@code none}.
 *
 * <p><b>Initial state.</b> w = 0 everywhere; v = 0 ({@code rest}) or a Gaussian impulse pulseAmplitude exp(-((x -
 * pulseCenter length) / pulseWidth)^2) ({@code gaussian}). Dirichlet holds v at the two end nodes at its initial
 * value.
 */
public final class FhnConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String EXPLICIT = "explicit";
    public static final String CRANK_NICOLSON = "crank-nicolson";
    public static final String ADAPTIVE = "adaptive";
    public static final String THOMAS = "thomas";
    public static final String CYCLIC_REDUCTION = "cr";
    public static final String DIRICHLET = "dirichlet";
    public static final String NEUMANN = "neumann";
    public static final String PERIODIC = "periodic";
    public static final String REST = "rest";
    public static final String GAUSSIAN = "gaussian";
    public static final String NONE = "none";
    public static final String CONSTANT = "constant";
    public static final String SERIES = "series";
    /** The most nodes of one simulation (arrays are indexed by int). */
    public static final int MAX_CELLS = 1 << 28;
    /** The most time steps of one run. */
    public static final long MAX_STEPS = 1L << 31;

    public int cells = 501;
    public double length = 100;
    public double dt = 0.01;
    public double tEnd = 100;
    public String scheme = EXPLICIT;
    public String solver = THOMAS;
    public String boundary = NEUMANN;
    public String initial = REST;
    public double pulseAmplitude = 1.0;
    public double pulseCenter = 0.5;
    public double pulseWidth = 1.0;
    public String stimulus = CONSTANT;
    public double stimulusWidth = 1.0;
    public double[] series = {1.0};
    public double seriesInterval = 1.0;
    public double newtonTol = 1e-10;
    public int maxNewton = 20;
    public double threshold = 0.5;
    public double probeNear = 0.6;
    public double probeFar = 0.9;
    /** Keep v every recordEvery steps (and the initial state) as the space-time field; 0: no field. */
    public int recordEvery = 0;
    /** Adaptive scheme: stride (in underlying nodes) of the coarse grid laid everywhere. */
    public int coarseStride = 8;
    /** Adaptive scheme: |v_x| above which the medium grid (stride 2) is laid. */
    public double gradientTol = 0.02;
    /** Adaptive scheme: |v_t| above which every underlying node is used. */
    public double changeTol = 0.002;
    /** Adaptive scheme: underlying nodes kept on each side of an inflection point (zero of v_xx) of a front. */
    public int inflectionRadius = 6;
    /** null: the setting spark.sparkgpu.backend, else auto (resolved by {@link #validate()}). */
    public Backend backend;

    public static void checkCells(int cells) {
        require(cells >= 3 && cells <= MAX_CELLS, "cells", "in [3, " + MAX_CELLS + "]", cells);
    }

    public static void checkLength(double length) {
        require(length > 0 && !Double.isInfinite(length), "length", "a finite number > 0", length);
    }

    public static void checkDt(double dt) {
        require(dt > 0 && !Double.isInfinite(dt), "dt", "a finite number > 0", dt);
    }

    public static void checkTEnd(double tEnd) {
        require(tEnd >= 0 && !Double.isInfinite(tEnd), "tEnd", "a finite number >= 0", tEnd);
    }

    public static void checkScheme(String scheme) {
        ParamChecks.oneOf("scheme", EXPLICIT, CRANK_NICOLSON, ADAPTIVE).check(scheme);
    }

    public static void checkSolver(String solver) {
        ParamChecks.oneOf("solver", THOMAS, CYCLIC_REDUCTION).check(solver);
    }

    public static void checkBoundary(String boundary) {
        ParamChecks.oneOf("boundary", DIRICHLET, NEUMANN, PERIODIC).check(boundary);
    }

    public static void checkInitial(String initial) {
        ParamChecks.oneOf("initial", REST, GAUSSIAN).check(initial);
    }

    public static void checkStimulus(String stimulus) {
        ParamChecks.oneOf("stimulus", NONE, CONSTANT, SERIES).check(stimulus);
    }

    public static void checkPulseAmplitude(double v) {
        require(Double.isFinite(v), "pulseAmplitude", "finite", v);
    }

    public static void checkPulseCenter(double v) {
        require(v >= 0 && v <= 1, "pulseCenter", "in [0, 1] (a fraction of length)", v);
    }

    public static void checkPulseWidth(double v) {
        require(v > 0 && !Double.isInfinite(v), "pulseWidth", "a finite number > 0", v);
    }

    public static void checkStimulusWidth(double v) {
        require(v > 0 && !Double.isInfinite(v), "stimulusWidth", "a finite number > 0", v);
    }

    public static void checkSeries(double[] series) {
        require(series != null && series.length >= 1, "series", "at least one value", series);
        for (double s : series) {
            require(Double.isFinite(s), "series", "finite values", series);
        }
    }

    public static void checkSeriesInterval(double v) {
        require(v > 0 && !Double.isInfinite(v), "seriesInterval", "a finite number > 0", v);
    }

    public static void checkNewtonTol(double v) {
        require(v >= 0 && !Double.isInfinite(v), "newtonTol", "a finite number >= 0", v);
    }

    public static void checkMaxNewton(int v) {
        require(v >= 1 && v <= 1000, "maxNewton", "in [1, 1000]", v);
    }

    public static void checkThreshold(double v) {
        require(Double.isFinite(v), "threshold", "finite", v);
    }

    public static void checkProbeNear(double v) {
        require(v >= 0 && v <= 1, "probeNear", "in [0, 1] (a fraction of length)", v);
    }

    public static void checkProbeFar(double v) {
        require(v >= 0 && v <= 1, "probeFar", "in [0, 1] (a fraction of length)", v);
    }

    public static void checkRecordEvery(int v) {
        require(v >= 0, "recordEvery", ">= 0 (0: no field)", v);
    }

    public static void checkCoarseStride(int v) {
        require(v >= 1, "coarseStride", ">= 1", v);
    }

    public static void checkGradientTol(double v) {
        require(v >= 0 && !Double.isInfinite(v), "gradientTol", "a finite number >= 0", v);
    }

    public static void checkChangeTol(double v) {
        require(v >= 0 && !Double.isInfinite(v), "changeTol", "a finite number >= 0", v);
    }

    public static void checkInflectionRadius(int v) {
        require(v >= 0, "inflectionRadius", ">= 0", v);
    }

    /** The number of time steps: ceil(tEnd / dt) (the final time is steps dt, reported). */
    public static long steps(double tEnd, double dt) {
        double q = tEnd / dt;
        long s = (long) Math.ceil(q - 1e-9 * Math.max(1.0, q));
        return Math.max(0, s);
    }

    /** The node spacing of this grid. */
    public double dx() {
        return PERIODIC.equals(boundary) ? length / cells : length / (cells - 1);
    }

    /** Every rule, the cross-setting ones included; resolves a null backend. Errors name the setting. */
    public FhnConfig validate() {
        checkCells(cells);
        checkLength(length);
        checkDt(dt);
        checkTEnd(tEnd);
        checkScheme(scheme);
        checkSolver(solver);
        checkBoundary(boundary);
        checkInitial(initial);
        checkStimulus(stimulus);
        checkPulseAmplitude(pulseAmplitude);
        checkPulseCenter(pulseCenter);
        checkPulseWidth(pulseWidth);
        checkStimulusWidth(stimulusWidth);
        checkSeries(series);
        checkSeriesInterval(seriesInterval);
        checkNewtonTol(newtonTol);
        checkMaxNewton(maxNewton);
        checkThreshold(threshold);
        checkProbeNear(probeNear);
        checkProbeFar(probeFar);
        checkRecordEvery(recordEvery);
        checkCoarseStride(coarseStride);
        checkGradientTol(gradientTol);
        checkChangeTol(changeTol);
        checkInflectionRadius(inflectionRadius);
        require(probeNear < probeFar, "probeFar", "> probeNear = " + probeNear, probeFar);
        long steps = steps(tEnd, dt);
        require(steps <= MAX_STEPS, "tEnd / dt", "<= " + MAX_STEPS + " time steps", steps);
        require(!(CYCLIC_REDUCTION.equals(solver) && PERIODIC.equals(boundary) && CRANK_NICOLSON.equals(scheme)),
                "solver", "thomas with the periodic boundary (cyclic reduction solves the non-periodic systems; "
                        + "thomas handles the periodic corner by Sherman-Morrison)", solver);
        require(!(ADAPTIVE.equals(scheme) && PERIODIC.equals(boundary)), "boundary",
                "dirichlet or neumann with the adaptive scheme", boundary);
        backend = SparkGpuConf.backend(backend);
        return this;
    }

    /** A copy (the series array included). */
    public FhnConfig copy() {
        FhnConfig c = new FhnConfig();
        c.cells = cells;
        c.length = length;
        c.dt = dt;
        c.tEnd = tEnd;
        c.scheme = scheme;
        c.solver = solver;
        c.boundary = boundary;
        c.initial = initial;
        c.pulseAmplitude = pulseAmplitude;
        c.pulseCenter = pulseCenter;
        c.pulseWidth = pulseWidth;
        c.stimulus = stimulus;
        c.stimulusWidth = stimulusWidth;
        c.series = series == null ? null : Arrays.copyOf(series, series.length);
        c.seriesInterval = seriesInterval;
        c.newtonTol = newtonTol;
        c.maxNewton = maxNewton;
        c.threshold = threshold;
        c.probeNear = probeNear;
        c.probeFar = probeFar;
        c.recordEvery = recordEvery;
        c.coarseStride = coarseStride;
        c.gradientTol = gradientTol;
        c.changeTol = changeTol;
        c.inflectionRadius = inflectionRadius;
        c.backend = backend;
        return c;
    }
}
