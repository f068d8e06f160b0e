package io.sparkgpu.scan;

import io.sparkgpu.cuda.CudaDevice;
import java.util.concurrent.ExecutorService;

/**
 * The internal surface of the scan-statistics engine for the benchmarks and jobs of spark-jobs (ScanBenchmark): the
 * range search and the replicas on a chosen twin, and the naive reference, below the Spark trainer and the estimator
 * ({@link GpuScanStatistic}). <b>Not a user API</b>: it may change with the engine at any time; users call
 * {@link GpuScanStatistic} (or the SQL functions). Every method delegates to the engine class a fit runs (the CPU
 * twin {@code ScanCpu}, the GPU wrapper {@code ScanGpu}, the replica generator {@code ScanReplicas}) or to the
 * reference {@code NaiveScan}, so the benchmarks time exactly the code a fit runs. The data it takes and returns is
 * public: {@link ScanGrid}, {@link ScanTables}, {@link ScanShape}, {@link ScanSpec}, {@link ScanBest}.
 */
public final class ScanEngine {
    /** The CUDA module of the scan kernels (for reports). */
    public static final String MODULE = ScanGpu.MODULE;

    private ScanEngine() {
    }

    /** Loads the scan kernels on {@code dev} (throws what loading throws). */
    public static void load(CudaDevice dev) {
        dev.function(ScanGpu.MODULE, ScanGpu.PROBE_KERNEL);
    }

    /**
     * The CPU twin's best range among global indices [lo, hi) for the cases prefix table {@code casesPrefix} (the
     * data's, {@link ScanTables#casesPrefix}, or a replica's, {@link #replicaPrefix}), split into {@code parts}
     * shares run on {@code pool} (null: in the calling thread).
     */
    public static ScanBest cpuScan(ScanTables t, long[] casesPrefix, ScanSpec spec, long lo, long hi, int parts,
            ExecutorService pool) {
        return ScanCpu.scanParallel(t, casesPrefix, spec, lo, hi, parts, pool);
    }

    /** The cases prefix table of replica {@code replica} of the null model (the replicas of a fit). */
    public static long[] replicaPrefix(ScanTables t, long seed, long replica) {
        return ScanReplicas.prefix(t, seed, replica);
    }

    /** The textbook O(range size) scan of every box: the independent reference and the benchmarks' baseline. */
    public static ScanBest naiveScan(ScanGrid grid, ScanSpec spec) {
        return NaiveScan.scan(grid, spec);
    }

    /** Uploads the tables of one grid to {@code dev} for GPU scans and replicas (close it to free the device). */
    public static GpuSession gpuSession(CudaDevice dev, ScanTables t) {
        return new GpuSession(new ScanGpu.Session(dev, t));
    }

    /** One grid's tables on one device, for scans and replicas without fallback. Not thread-safe. */
    public static final class GpuSession implements AutoCloseable {
        private final ScanGpu.Session s;

        private GpuSession(ScanGpu.Session s) {
            this.s = s;
        }

        /** The best range among global indices [lo, hi): the CPU twin's answer and bits. */
        public ScanBest best(ScanSpec spec, long lo, long hi) {
            return s.best(spec, lo, hi);
        }

        /** Maximum LLR of each replica r0 .. r1-1 (every range): the CPU twin's bits. */
        public double[] replicaMaxima(ScanSpec spec, long seed, int r0, int r1) {
            return s.replicaMaxima(spec, seed, r0, r1);
        }

        /** Blocks of the scan kernel that fit on the device at once (its grid size, for reports). */
        public int residentBlocks() {
            return s.residentBlocks();
        }

        @Override
        public void close() {
            s.close();
        }
    }
}
