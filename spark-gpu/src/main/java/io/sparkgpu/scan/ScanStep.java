package io.sparkgpu.scan;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import java.util.concurrent.ExecutorService;

/**
 * Runs a scan slice or a batch of replicas on the backend the policy picks. With {@code auto}, a GPU failure
 * is logged once and the work is redone by the CPU twin, whose results are bitwise identical, so a GPU problem
 * never changes an answer.
 */
final class ScanStep {
    /** The phase names of a scan and of a batch of replicas (in logs, errors and injected test faults). */
    public static final String SCAN = "scan search";
    public static final String REPLICAS = "scan replicas";

    private ScanStep() {
    }

    /** The best range among [lo, hi) of the observed data; on the CPU in this thread. */
    public static BackendChooser.Ran<ScanBest> best(Backend backend, ScanTables t, ScanSpec spec, long lo, long hi) {
        return best(backend, t, spec, lo, hi, null, 1);
    }

    /**
     * The best range among [lo, hi) of the observed data, with where it ran and its GPU seconds (session with the
     * table upload, launches, download); on the CPU split into {@code parts} index shares run on {@code pool}
     * (null: this thread).
     */
    public static BackendChooser.Ran<ScanBest> best(Backend backend, ScanTables t, ScanSpec spec, long lo, long hi,
                                                    ExecutorService pool, int parts) {
        return BackendChooser.run(backend, ScanGpu.MODULE, ScanGpu.PROBE_KERNEL, SCAN, dev -> {
            try (ScanGpu.Session s = new ScanGpu.Session(dev, t)) {
                return s.best(spec, lo, hi);
            }
        }, () -> ScanCpu.scanParallel(t, t.casesPrefix, spec, lo, hi, parts, pool));
    }

    /**
     * Maximum LLR of replicas r0 .. r1-1, with where they ran; on the CPU the replicas run on {@code pool} (null:
     * this thread).
     */
    public static BackendChooser.Ran<double[]> replicaMaxima(Backend backend, ScanTables t, ScanSpec spec, long seed,
                                                             int r0, int r1, ExecutorService pool) {
        ScanReplicas.checkSupported(t);
        return BackendChooser.run(backend, ScanGpu.MODULE, ScanGpu.PROBE_KERNEL, REPLICAS, dev -> {
            try (ScanGpu.Session s = new ScanGpu.Session(dev, t)) {
                return s.replicaMaxima(spec, seed, r0, r1);
            }
        }, () -> ScanCpu.replicaMaxima(t, spec, seed, r0, r1, pool));
    }
}
