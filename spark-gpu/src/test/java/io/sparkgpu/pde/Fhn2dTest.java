package io.sparkgpu.pde;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import org.junit.jupiter.api.Test;

/**
 * The 2-D ADI scheme on the CPU twin: second order in space against a refined reference, a plane wave equals the 1-D
 * solution, the spiral initial state curls around its free end, bad settings name themselves.
 */
class Fhn2dTest {
    static Fhn2dConfig config(int nx, int ny, double lx, double ly, double dt, double tEnd, String initial) {
        Fhn2dConfig c = new Fhn2dConfig();
        c.cellsX = nx;
        c.cellsY = ny;
        c.lengthX = lx;
        c.lengthY = ly;
        c.dt = dt;
        c.tEnd = tEnd;
        c.initial = initial;
        c.backend = Backend.CPU;
        return c;
    }

    static final FhnParams P = new FhnParams(0.1, 0.05, 0.5, 0, 1.0);

    /** Max |coarse - fine| over the coarse nodes (fine node r i, r j). */
    static double error(Fhn2d.Result coarse, Fhn2d.Result fine) {
        int r = (fine.cellsX - 1) / (coarse.cellsX - 1);
        double e = 0;
        for (int j = 0; j < coarse.cellsY; j++) {
            for (int i = 0; i < coarse.cellsX; i++) {
                e = Math.max(e, Math.abs(coarse.v(i, j) - fine.v(r * i, r * j)));
            }
        }
        return e;
    }

    @Test
    void secondOrderInSpace() {
        // a radial bump off-centre (so both axes and the edges matter), the same dt on every grid: the difference to
        // the refined reference is the spatial error alone
        int[] n = {11, 21, 41};
        Fhn2d.Result ref = run(161);
        double[] e = new double[n.length];
        for (int q = 0; q < n.length; q++) {
            e[q] = error(run(n[q]), ref);
        }
        double order1 = Math.log(e[0] / e[1]) / Math.log(2);
        double order2 = Math.log(e[1] / e[2]) / Math.log(2);
        assertTrue(order1 > 1.8 && order2 > 1.8 && order2 < 2.3, "orders " + order1 + ", " + order2 + " (errors "
                + java.util.Arrays.toString(e) + ")");
    }

    private static Fhn2d.Result run(int nodes) {
        Fhn2dConfig c = config(nodes, nodes, 20, 20, 0.05, 2, Fhn2dConfig.GAUSSIAN);
        c.pulseCenter = 0.4;
        c.pulseWidth = 4;
        return Fhn2d.cpu(c.validate(), P);
    }

    @Test
    void aPlaneWaveEqualsTheOneDimensionalSolution() {
        Fhn2dConfig c = config(101, 4, 50, 3, 0.01, 20, Fhn2dConfig.PLANE);
        c.pulseWidth = 2;
        Fhn2d.Result two = Fhn2d.cpu(c.validate(), FhnParams.excitable(0));
        FhnConfig one = new FhnConfig();
        one.cells = 101;
        one.length = 50;
        one.dt = 0.01;
        one.tEnd = 20;
        one.scheme = FhnConfig.CRANK_NICOLSON;
        one.initial = FhnConfig.GAUSSIAN;
        one.pulseWidth = 2;
        one.stimulus = FhnConfig.NONE;
        one.backend = Backend.CPU;
        FhnResult r1 = FhnStep.run(one, new FhnParams[] {FhnParams.excitable(0)}, 1).value[0];
        double spread = 0;
        double diff = 0;
        double peak = 0;
        for (int i = 0; i < 101; i++) {
            for (int j = 0; j < 4; j++) {
                spread = Math.max(spread, Math.abs(two.v(i, j) - two.v(i, 0)));
            }
            diff = Math.max(diff, Math.abs(two.v(i, 0) - r1.v[i]));
            peak = Math.max(peak, r1.v[i]);
        }
        assertTrue(peak > 0.5, "the 1-D pulses are alive: max v " + peak);
        assertTrue(spread <= 1e-12, "the plane stays plane: spread " + spread);
        // the two schemes differ in time discretisation only (first order with dt = 0.01)
        assertTrue(diff < 5e-3, "max |v_2d - v_1d| = " + diff);
    }

    /** Largest v of frame f over the nodes i < iTo, jFrom <= j < jTo. */
    static double maxV(Fhn2d.Result r, int f, int iTo, int jFrom, int jTo) {
        double m = Double.NEGATIVE_INFINITY;
        for (int j = jFrom; j < jTo; j++) {
            for (int i = 0; i < iTo; i++) {
                m = Math.max(m, r.field[(f * r.cellsY + j) * r.cellsX + i]);
            }
        }
        return m;
    }

    @Test
    void theBrokenFrontCurlsIntoASpiral() {
        // a low threshold (a = 0.02), so the free end's curvature does not stop it; dx = 0.5, frames every 10
        Fhn2dConfig c = config(81, 81, 40, 40, 0.1, 80, Fhn2dConfig.SPIRAL);
        c.pulseWidth = 3;
        c.recordEvery = 100;
        Fhn2d.Result r = Fhn2d.cpu(c.validate(), new FhnParams(0.02, 0.01, 0.5, 0, 1));
        double max = Double.NEGATIVE_INFINITY;
        double min = Double.POSITIVE_INFINITY;
        for (double v : r.field) {
            max = Math.max(max, v);
            min = Math.min(min, v);
        }
        assertTrue(max < 1.5 && min > -0.6, "bounded: v in [" + min + ", " + max + "]");
        // t = 20: the refractory strip kept the front from running left (x < 12.5, lower half)
        assertTrue(maxV(r, 2, 25, 0, 40) < 0.5, "ran left: " + maxV(r, 2, 25, 0, 40));
        // t = 40: the free end has turned into the upper half, which the initial front never touched
        assertTrue(maxV(r, 4, 81, 48, 81) > 0.5, "no curl: " + maxV(r, 4, 81, 48, 81));
        // t = 80: the wave has come round into the left, lower region it could not enter at first: it rotates
        assertTrue(maxV(r, 8, 30, 30, 41) > 0.5, "no rotation: " + maxV(r, 8, 30, 30, 41));
    }

    @Test
    void badSettingsNameTheSetting() {
        String[][] cases = {{"cellsX", "cellsX must be >= 3"}, {"initial", "initial must be one of"},
            {"dt", "dt must be"}, {"lengthY", "lengthY must be"}};
        for (String[] k : cases) {
            Fhn2dConfig c = config(11, 11, 10, 10, 0.1, 1, Fhn2dConfig.SPIRAL);
            switch (k[0]) {
                case "cellsX" -> c.cellsX = 2;
                case "initial" -> c.initial = "vortex";
                case "dt" -> c.dt = Double.NaN;
                default -> c.lengthY = 0;
            }
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> FhnStep.run2d(c, P));
            assertTrue(e.getMessage().contains(k[1]), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> FhnStep.run2d(config(11, 11, 10, 10, 0.1, 1,
                Fhn2dConfig.SPIRAL), new FhnParams(0.1, 0.01, 0.5, 0, -1)));
        assertEquals("cpu", FhnStep.run2d(config(11, 11, 10, 10, 0.1, 1, Fhn2dConfig.SPIRAL), P).backend());
    }
}
