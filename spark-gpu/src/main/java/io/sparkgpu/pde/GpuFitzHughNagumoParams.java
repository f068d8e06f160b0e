package io.sparkgpu.pde;

import io.sparkgpu.ml.HasBackend;
import io.sparkgpu.ml.ParamChecks;
import java.util.Arrays;
import org.apache.spark.ml.param.DoubleArrayParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;

/**
 * The params of {@link GpuFitzHughNagumo}: the grid, scheme and stimulus shared by every row ({@link FhnConfig}'s
 * settings, with its rules as validators and its initial values as defaults), the five input columns of the
 * per-row parameters and their values for rows of a DataFrame without that column.
 */
public interface GpuFitzHughNagumoParams<T extends GpuFitzHughNagumoParams<T>> extends HasBackend<T> {

    default IntParam cells() {
        return slot("cells", o -> new IntParam(o, "cells", "Grid nodes of each axon (>= 3).",
                ParamChecks.intValidator(FhnConfig::checkCells)));
    }

    default DoubleParam length() {
        return slot("length", o -> new DoubleParam(o, "length", "Axon length (> 0).",
                ParamChecks.doubleValidator(FhnConfig::checkLength)));
    }

    default DoubleParam dt() {
        return slot("dt", o -> new DoubleParam(o, "dt", "Time step (> 0; explicit and adaptive: <= the FTCS limit, "
                + "dx^2 / (2 D) lowered by the reaction).",
                ParamChecks.doubleValidator(FhnConfig::checkDt)));
    }

    default DoubleParam tEnd() {
        return slot("tEnd", o -> new DoubleParam(o, "tEnd", "Simulated time (>= 0; ceil(tEnd / dt) steps).",
                ParamChecks.doubleValidator(FhnConfig::checkTEnd)));
    }

    default Param<String> scheme() {
        return slot("scheme", o -> new Param<>(o, "scheme", "explicit, crank-nicolson or adaptive (CPU only).",
                ParamChecks.validator(FhnConfig::checkScheme)));
    }

    default Param<String> solver() {
        return slot("solver", o -> new Param<>(o, "solver", "Tridiagonal solver of crank-nicolson: thomas or cr.",
                ParamChecks.validator(FhnConfig::checkSolver)));
    }

    default Param<String> boundary() {
        return slot("boundary", o -> new Param<>(o, "boundary", "dirichlet, neumann (no flux) or periodic.",
                ParamChecks.validator(FhnConfig::checkBoundary)));
    }

    default Param<String> initial() {
        return slot("initial", o -> new Param<>(o, "initial", "Initial v: rest or gaussian (an impulse).",
                ParamChecks.validator(FhnConfig::checkInitial)));
    }

    default DoubleParam pulseAmplitude() {
        return slot("pulseAmplitude", o -> new DoubleParam(o, "pulseAmplitude", "Height of the Gaussian impulse.",
                ParamChecks.doubleValidator(FhnConfig::checkPulseAmplitude)));
    }

    default DoubleParam pulseCenter() {
        return slot("pulseCenter", o -> new DoubleParam(o, "pulseCenter", "Centre of the impulse (fraction of length).",
                ParamChecks.doubleValidator(FhnConfig::checkPulseCenter)));
    }

    default DoubleParam pulseWidth() {
        return slot("pulseWidth", o -> new DoubleParam(o, "pulseWidth", "Width of the impulse (> 0).",
                ParamChecks.doubleValidator(FhnConfig::checkPulseWidth)));
    }

    default Param<String> stimulus() {
        return slot("stimulus", o -> new Param<>(o, "stimulus", "Current at the left end: none, constant or series.",
                ParamChecks.validator(FhnConfig::checkStimulus)));
    }

    default DoubleParam stimulusWidth() {
        return slot("stimulusWidth", o -> new DoubleParam(o, "stimulusWidth", "Width of the current's profile (> 0).",
                ParamChecks.doubleValidator(FhnConfig::checkStimulusWidth)));
    }

    default DoubleArrayParam series() {
        return slot("series", o -> new DoubleArrayParam(this, "series", "Signal of the series stimulus (finite values).",
                ParamChecks.validator(FhnConfig::checkSeries)));
    }

    default DoubleParam seriesInterval() {
        return slot("seriesInterval", o -> new DoubleParam(o, "seriesInterval", "Time between series values (> 0).",
                ParamChecks.doubleValidator(FhnConfig::checkSeriesInterval)));
    }

    default DoubleParam newtonTol() {
        return slot("newtonTol", o -> new DoubleParam(o, "newtonTol", "Newton stops at max |delta| <= newtonTol.",
                ParamChecks.doubleValidator(FhnConfig::checkNewtonTol)));
    }

    default IntParam maxNewton() {
        return slot("maxNewton", o -> new IntParam(o, "maxNewton", "Newton iterations per step at most (1..1000).",
                ParamChecks.intValidator(FhnConfig::checkMaxNewton)));
    }

    default DoubleParam threshold() {
        return slot("threshold", o -> new DoubleParam(o, "threshold", "v level that counts as excited at a probe.",
                ParamChecks.doubleValidator(FhnConfig::checkThreshold)));
    }

    default DoubleParam probeNear() {
        return slot("probeNear", o -> new DoubleParam(o, "probeNear", "Near probe (fraction of length).",
                ParamChecks.doubleValidator(FhnConfig::checkProbeNear)));
    }

    default DoubleParam probeFar() {
        return slot("probeFar", o -> new DoubleParam(o, "probeFar", "Far probe (fraction of length, > probeNear).",
                ParamChecks.doubleValidator(FhnConfig::checkProbeFar)));
    }

    default IntParam recordEvery() {
        return slot("recordEvery", o -> new IntParam(o, "recordEvery", "Keep v every recordEvery steps as the "
                + "array column 'field' (frames x cells); 0: no field.",
                ParamChecks.intValidator(FhnConfig::checkRecordEvery)));
    }

    /** Input column of a per-row parameter (a, eps, gamma, I, D). */
    default Param<String> colParam(String name) {
        return slot(name + "Col", o -> new Param<>(o, name + "Col", "Column of " + name + " (absent: the " + name
                + "Value param for every row).", ParamChecks.validator(v -> ParamChecks.require(v != null
                && !v.isEmpty(), name + "Col", "a non-empty column name", v))));
    }

    default Param<String> aCol() {
        return colParam("a");
    }

    default Param<String> epsCol() {
        return colParam("eps");
    }

    default Param<String> gammaCol() {
        return colParam("gamma");
    }

    default Param<String> currentCol() {
        return colParam("I");
    }

    default Param<String> diffusionCol() {
        return colParam("D");
    }

    default DoubleParam valueParam(String name, ParamChecks.DoubleRule rule) {
        return slot(name + "Value", o -> new DoubleParam(o, name + "Value", "Value of " + name + " for rows "
                + "without a " + name + " column.", ParamChecks.doubleValidator(rule)));
    }

    default DoubleParam aValue() {
        return valueParam("a", FhnParams::checkA);
    }

    default DoubleParam epsValue() {
        return valueParam("eps", FhnParams::checkEps);
    }

    default DoubleParam gammaValue() {
        return valueParam("gamma", FhnParams::checkGamma);
    }

    default DoubleParam currentValue() {
        return valueParam("I", FhnParams::checkCurrent);
    }

    default DoubleParam diffusionValue() {
        return valueParam("D", FhnParams::checkDiffusion);
    }

    /** Sets the defaults (FhnConfig's initial values; a = 0.1, eps = 0.01, gamma = 0.5, I = 0.5, D = 1). */
    default void setFhnDefaults() {
        FhnConfig c = new FhnConfig();
        setDefault(cells(), c.cells);
        setDefault(length(), c.length);
        setDefault(dt(), c.dt);
        setDefault(tEnd(), c.tEnd);
        setDefault(scheme(), c.scheme);
        setDefault(solver(), c.solver);
        setDefault(boundary(), c.boundary);
        setDefault(initial(), c.initial);
        setDefault(pulseAmplitude(), c.pulseAmplitude);
        setDefault(pulseCenter(), c.pulseCenter);
        setDefault(pulseWidth(), c.pulseWidth);
        setDefault(stimulus(), c.stimulus);
        setDefault(stimulusWidth(), c.stimulusWidth);
        setDefault(series(), c.series);
        setDefault(seriesInterval(), c.seriesInterval);
        setDefault(newtonTol(), c.newtonTol);
        setDefault(maxNewton(), c.maxNewton);
        setDefault(threshold(), c.threshold);
        setDefault(probeNear(), c.probeNear);
        setDefault(probeFar(), c.probeFar);
        setDefault(recordEvery(), c.recordEvery);
        setDefault(aCol(), "a");
        setDefault(epsCol(), "eps");
        setDefault(gammaCol(), "gamma");
        setDefault(currentCol(), "I");
        setDefault(diffusionCol(), "D");
        FhnParams p = FhnParams.excitable(0.5);
        setDefault(aValue(), p.a);
        setDefault(epsValue(), p.eps);
        setDefault(gammaValue(), p.gamma);
        setDefault(currentValue(), p.current);
        setDefault(diffusionValue(), p.diffusion);
    }

    default T setCells(int v) {
        return with(cells(), v);
    }

    default T setLength(double v) {
        return with(length(), v);
    }

    default T setDt(double v) {
        return with(dt(), v);
    }

    default T setTEnd(double v) {
        return with(tEnd(), v);
    }

    default T setScheme(String v) {
        return with(scheme(), v);
    }

    default T setSolver(String v) {
        return with(solver(), v);
    }

    default T setBoundary(String v) {
        return with(boundary(), v);
    }

    default T setInitial(String v) {
        return with(initial(), v);
    }

    default T setPulseAmplitude(double v) {
        return with(pulseAmplitude(), v);
    }

    default T setPulseCenter(double v) {
        return with(pulseCenter(), v);
    }

    default T setPulseWidth(double v) {
        return with(pulseWidth(), v);
    }

    default T setStimulus(String v) {
        return with(stimulus(), v);
    }

    default T setStimulusWidth(double v) {
        return with(stimulusWidth(), v);
    }

    default T setSeries(double[] v) {
        return with(series(), v == null ? null : Arrays.copyOf(v, v.length));
    }

    default T setSeriesInterval(double v) {
        return with(seriesInterval(), v);
    }

    default T setNewtonTol(double v) {
        return with(newtonTol(), v);
    }

    default T setMaxNewton(int v) {
        return with(maxNewton(), v);
    }

    default T setThreshold(double v) {
        return with(threshold(), v);
    }

    default T setProbeNear(double v) {
        return with(probeNear(), v);
    }

    default T setProbeFar(double v) {
        return with(probeFar(), v);
    }

    default T setRecordEvery(int v) {
        return with(recordEvery(), v);
    }

    default int getCells() {
        return (Integer) getOrDefault(cells());
    }

    default int getRecordEvery() {
        return (Integer) getOrDefault(recordEvery());
    }

    /** The settings these params describe (validated by {@link FhnStep#run}). */
    default FhnConfig toConfig() {
        FhnConfig c = new FhnConfig();
        c.cells = getCells();
        c.length = (Double) getOrDefault(length());
        c.dt = (Double) getOrDefault(dt());
        c.tEnd = (Double) getOrDefault(tEnd());
        c.scheme = getOrDefault(scheme());
        c.solver = getOrDefault(solver());
        c.boundary = getOrDefault(boundary());
        c.initial = getOrDefault(initial());
        c.pulseAmplitude = (Double) getOrDefault(pulseAmplitude());
        c.pulseCenter = (Double) getOrDefault(pulseCenter());
        c.pulseWidth = (Double) getOrDefault(pulseWidth());
        c.stimulus = getOrDefault(stimulus());
        c.stimulusWidth = (Double) getOrDefault(stimulusWidth());
        c.series = getOrDefault(series()).clone();
        c.seriesInterval = (Double) getOrDefault(seriesInterval());
        c.newtonTol = (Double) getOrDefault(newtonTol());
        c.maxNewton = (Integer) getOrDefault(maxNewton());
        c.threshold = (Double) getOrDefault(threshold());
        c.probeNear = (Double) getOrDefault(probeNear());
        c.probeFar = (Double) getOrDefault(probeFar());
        c.recordEvery = getRecordEvery();
        c.backend = backendSetting();
        return c;
    }
}
