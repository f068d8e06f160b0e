package io.sparkgpu.scan;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The scan in one JVM without Spark: the GPU when the backend policy gives one, else the CPU twin on
 * {@code threads} threads (index shares for a scan, whole replicas for the Monte Carlo loop). Same results
 * as the Spark estimator, whatever the backend or thread count.
 */
public final class LocalScan implements ScanResult.Runner {
    private final ScanTables t;
    private final Backend backend;
    private final ExecutorService pool;
    private final int threads;
    private final ScanResult.Tally tally = new ScanResult.Tally();
    private double gpuSeconds;

    private LocalScan(ScanTables t, Backend backend, ExecutorService pool, int threads) {
        this.t = t;
        this.backend = backend;
        this.pool = pool;
        this.threads = threads;
    }

    /** Scans {@code t}: see {@link ScanResult#compute}. */
    public static ScanResult run(ScanTables t, ScanSpec spec, int numClusters, int numReplicas, long seed,
                                 Backend backend, int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, got " + threads);
        }
        ExecutorService pool = threads > 1 ? Executors.newFixedThreadPool(threads, r -> {
            Thread th = new Thread(r, "sparkgpu-scan");
            th.setDaemon(true);
            return th;
        }) : null;
        long t0 = System.nanoTime();
        try {
            ScanResult r = ScanResult.compute(t, spec, numClusters, numReplicas, seed,
                    new LocalScan(t, backend, pool, threads));
            return r.withOuterPhases(java.util.Map.of(), java.util.Map.of(), (System.nanoTime() - t0) / 1e9);
        } finally {
            if (pool != null) {
                pool.shutdownNow();
            }
        }
    }

    /**
     * The most likely cluster of {@code t} on the CPU in this thread (no replicas, so no p-value), or null when no
     * range has a positive LLR. O(M).
     */
    public static ScanCluster mostLikely(ScanTables t, ScanSpec spec) {
        ScanBest b = ScanCpu.scan(t, spec, 0, t.shape.ranges());
        return b.found() && b.llr > 0 ? ScanResult.cluster(t, 1, b) : null;
    }

    private <T> T record(BackendChooser.Ran<T> ran) {
        String b = ran.backend();
        tally.record(b, ran.onGpu() ? "on the driver" : "on the driver (" + threads + " thread"
                + (threads == 1 ? "" : "s") + ")");
        gpuSeconds += ran.gpuSeconds();
        return ran.value;
    }

    @Override
    public ScanBest best(ScanSpec spec) {
        return record(ScanStep.best(backend, t, spec, 0, t.shape.ranges(), pool, 4 * threads));
    }

    @Override
    public double[] replicaMaxima(ScanSpec spec, long seed, int from, int count) {
        return record(ScanStep.replicaMaxima(backend, t, spec, seed, from, from + count, pool));
    }

    @Override
    public String backend() {
        return tally.backend();
    }

    @Override
    public String takePhaseBackend() {
        return tally.takePhase();
    }

    @Override
    public double gpuSeconds() {
        return gpuSeconds;
    }
}
