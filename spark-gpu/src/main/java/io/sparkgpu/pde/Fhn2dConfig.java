package io.sparkgpu.pde;

import static io.sparkgpu.ml.ParamChecks.require;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.ml.ParamChecks;
import java.io.Serializable;

/**
 * Settings of the 2-D FitzHugh-Nagumo system on the rectangle [0, lengthX] x [0, lengthY] with no-flux (Neumann)
 * edges, solved by Peaceman-Rachford ADI ({@link Fhn2d}): {@code cellsX} x {@code cellsY} nodes, both edges of each
 * axis being nodes (dx = lengthX / (cellsX - 1), likewise dy). No stimulus current: the initial state drives the
 * dynamics. Each setting has one rule, a static {@code check*}; {@link #validate()} runs them.
 *
 * <p><b>Initial states</b> (w = 0 unless said):
 * <ul>
 *   <li>{@code plane}: v = pulseAmplitude exp(-((x - pulseCenter lengthX) / pulseWidth)^2) for every y, the 1-D
 *       Gaussian impulse extruded along y (a plane wave pair: the 2-D run equals the 1-D one);</li>
 *   <li>{@code gaussian}: the radial bump pulseAmplitude exp(-(r / pulseWidth)^2) around (pulseCenter lengthX,
 *       pulseCenter lengthY);</li>
 *   <li>{@code spiral}: a broken wave front: v = 1 on the strip |x - lengthX / 2| <= pulseWidth for y <= lengthY /
 *       2, and w = {@link #SPIRAL_W} (refractory) on the strip's left side of the same width, so the front runs to
 *       the right only and its free end curls into a spiral.</li>
 * </ul>
 */
public final class Fhn2dConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String PLANE = "plane";
    public static final String GAUSSIAN = "gaussian";
    public static final String SPIRAL = "spiral";
    /** w behind the broken front of the spiral initial state (refractory for the textbook set). */
    public static final double SPIRAL_W = 0.15;
    /** The most nodes of one 2-D simulation. */
    public static final int MAX_NODES = 1 << 26;

    public int cellsX = 101;
    public int cellsY = 101;
    public double lengthX = 100;
    public double lengthY = 100;
    public double dt = 0.05;
    public double tEnd = 50;
    public String initial = SPIRAL;
    public double pulseAmplitude = 1.0;
    public double pulseCenter = 0.5;
    public double pulseWidth = 5.0;
    /** Keep v every recordEvery steps (and the initial state); 0: none. */
    public int recordEvery = 0;
    /** null: the setting spark.sparkgpu.backend, else auto (resolved by {@link #validate()}). */
    public Backend backend;

    public static void checkCells(String name, int cells) {
        require(cells >= 3, name, ">= 3", cells);
    }

    public static void checkLength(String name, double length) {
        require(length > 0 && !Double.isInfinite(length), name, "a finite number > 0", length);
    }

    public static void checkInitial(String initial) {
        ParamChecks.oneOf("initial", PLANE, GAUSSIAN, SPIRAL).check(initial);
    }

    /** Every rule; resolves a null backend. Errors name the setting. */
    public Fhn2dConfig validate() {
        checkCells("cellsX", cellsX);
        checkCells("cellsY", cellsY);
        require((long) cellsX * cellsY <= MAX_NODES, "cellsX * cellsY", "<= " + MAX_NODES,
                (long) cellsX * cellsY);
        checkLength("lengthX", lengthX);
        checkLength("lengthY", lengthY);
        FhnConfig.checkDt(dt);
        FhnConfig.checkTEnd(tEnd);
        checkInitial(initial);
        FhnConfig.checkPulseAmplitude(pulseAmplitude);
        FhnConfig.checkPulseCenter(pulseCenter);
        FhnConfig.checkPulseWidth(pulseWidth);
        FhnConfig.checkRecordEvery(recordEvery);
        long steps = FhnConfig.steps(tEnd, dt);
        require(steps <= FhnConfig.MAX_STEPS, "tEnd / dt", "<= " + FhnConfig.MAX_STEPS + " time steps", steps);
        if (recordEvery > 0) {
            long frames = 1 + steps / recordEvery;
            require(frames * cellsX * cellsY <= Integer.MAX_VALUE - 8, "recordEvery",
                    "large enough to keep the field under 2^31 values (" + frames + " frames of " + cellsX + " x "
                            + cellsY + ")", recordEvery);
        }
        backend = SparkGpuConf.backend(backend);
        return this;
    }

    public double dx() {
        return lengthX / (cellsX - 1);
    }

    public double dy() {
        return lengthY / (cellsY - 1);
    }
}
