package io.sparkgpu.pde;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import java.util.Arrays;

/**
 * The dispatcher of the FitzHugh-Nagumo simulations: the only caller of {@link BackendChooser#run} for this
 * capability. A batch of simulations on one grid runs as one GPU launch series (split into device batches of at most
 * {@link #MAX_BATCH_CELLS} cells), else on the CPU twin, with the same bits either way. The adaptive scheme has no
 * kernel: it runs on the CPU twin under {@code auto} and {@code cpu}, and {@code gpu} refuses it.
 */
public final class FhnStep {
    /** Phase name of the backend policy (logs, errors, injected test faults). */
    public static final String SIMULATE = "fhn simulate";
    /** Phase name of the 2-D simulations. */
    public static final String SIMULATE_2D = "fhn simulate 2-D";
    /** Cells of one device batch (each array of the batch is 8 bytes per cell). */
    public static final int MAX_BATCH_CELLS = 1 << 25;

    private FhnStep() {
    }

    /**
     * Every simulation of {@code params} under {@code config} (validated here; a row's bad value is an error naming
     * the row). {@code cpuThreads}: threads of the CPU twin.
     */
    public static BackendChooser.Ran<FhnResult[]> run(FhnConfig config, FhnParams[] params, int cpuThreads) {
        return run(config, params, cpuThreads, true);
    }

    /**
     * As {@link #run(FhnConfig, FhnParams[], int)}; without {@code withState} the GPU may leave the final v and w on
     * the device (the results' v and w are then null): a sweep that reports observables only.
     */
    public static BackendChooser.Ran<FhnResult[]> run(FhnConfig config, FhnParams[] params, int cpuThreads,
                                                      boolean withState) {
        FhnConfig cfg = config.copy().validate();
        FhnSetup s = new FhnSetup(cfg);
        for (int j = 0; j < params.length; j++) {
            final int row = j;
            params[j].checkLazily(() -> "row " + row);
            if (!FhnConfig.CRANK_NICOLSON.equals(cfg.scheme) && !(cfg.dt <= s.explicitLimit(params[j]))) {
                // the row's text only for an error
                FhnSetup.checkExplicitStable(s, params[j], "row " + j + " (" + params[j] + ")");
            }
        }
        FhnCpu.frames(s); // the field's size rule, before any work
        Backend backend = cfg.backend;
        if (FhnConfig.ADAPTIVE.equals(cfg.scheme)) {
            if (backend == Backend.GPU) {
                throw new IllegalArgumentException("backend must be cpu or auto with scheme adaptive (it has no GPU "
                        + "kernel), got 'gpu'");
            }
            backend = Backend.CPU;
        }
        return BackendChooser.run(backend, FhnGpu.MODULE, FhnGpu.PROBE_KERNEL, SIMULATE,
                dev -> {
                    int per = FhnGpu.batchSize(s, params.length, MAX_BATCH_CELLS,
                            io.sparkgpu.cuda.DeviceMemoryBudget.bytes());
                    FhnResult[] out = new FhnResult[params.length];
                    for (int from = 0; from < params.length; from += per) {
                        int to = Math.min(params.length, from + per);
                        FhnResult[] part = FhnGpu.run(dev, s, Arrays.copyOfRange(params, from, to), withState);
                        System.arraycopy(part, 0, out, from, part.length);
                    }
                    return out;
                },
                () -> FhnCpu.run(s, params, cpuThreads));
    }

    /**
     * One 2-D simulation (Peaceman-Rachford ADI, {@link Fhn2d}) of {@code params} under {@code config} (validated
     * here), on the GPU or the CPU twin with the same bits.
     */
    public static BackendChooser.Ran<Fhn2d.Result> run2d(Fhn2dConfig config, FhnParams params) {
        config.validate();
        params.check("params");
        return BackendChooser.run(config.backend, FhnGpu.MODULE, FhnGpu.PROBE_KERNEL, SIMULATE_2D,
                dev -> Fhn2dGpu.run(dev, config, params), () -> Fhn2d.cpu(config, params));
    }
}
