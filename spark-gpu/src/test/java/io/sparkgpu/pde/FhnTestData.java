package io.sparkgpu.pde;

/** Small cases shared by the FitzHugh-Nagumo tests (public for the device-memory budget's GPU test). */
public final class FhnTestData {
    private FhnTestData() {
    }

    /** A handful of parameter sets around the excitable one (sub- and supra-threshold stimuli, several D). */
    public static FhnParams[] sweep(int count) {
        FhnParams[] out = new FhnParams[count];
        for (int j = 0; j < count; j++) {
            out[j] = new FhnParams(0.05 + 0.02 * (j % 5), 0.01 + 0.002 * (j % 3), 0.5, 0.05 * j, 0.5 + 0.25 * (j % 4));
        }
        return out;
    }

    /** A short run exercising a stimulus, an impulse, both probes and the field. */
    public static FhnConfig small(String scheme, String solver, String boundary, String stimulus) {
        FhnConfig c = new FhnConfig();
        c.scheme = scheme;
        c.solver = solver;
        c.boundary = boundary;
        c.stimulus = stimulus;
        c.series = new double[] {0.0, 1.0, 0.5, 0.0};
        c.seriesInterval = 0.5;
        c.cells = 61;
        c.length = 30;
        c.dt = 0.05;
        c.tEnd = 12;
        c.initial = FhnConfig.GAUSSIAN;
        c.pulseCenter = 0.3;
        c.pulseWidth = 1.5;
        c.probeNear = 0.4;
        c.probeFar = 0.6;
        c.recordEvery = 40;
        return c;
    }
}
