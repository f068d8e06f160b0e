package io.sparkgpu.scan;

import io.sparkgpu.common.DetMath;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import java.util.Locale;

/**
 * GPU implementation of {@link ScanCpu} and of the replica loop of {@link ScanCpu#replicaMaxima}, through the
 * {@code scan} module ({@code scan.cu}). A {@link Session} uploads a grid's tables once and then answers any
 * number of scans and replica batches on one stream. Results equal the CPU twin's bit for bit (same LLR
 * arithmetic, same tie-break), which the GPU tests check.
 *
 * <p>Per scan: one launch of the scan kernel over the items of the index slice (grid from occupancy) and one
 * reduction launch; per replica: zero the replica's table, allocate the cases (one thread per case, integer
 * atomics adding each case's units, so the counts do not depend on the order), d running-sum passes, scan, reduce; the replica maxima
 * stay on the device until the batch ends.
 */
final class ScanGpu {
    public static final String MODULE = "scan";
    public static final String PROBE_KERNEL = "scan_reduce";
    static final int BLOCK = 256;
    /** Largest shared-memory strip a 1-D grid uses; larger 1-D grids read the tables from global memory. */
    static final int SHARED_STRIP_LIMIT = 96 * 1024;

    // layout of the kernels' parameter arrays (include/layout/scan.cuh: SCAN_P_*, SCAN_D_*; ScanKernelLayoutTest)
    static final int P_DIMS = 0;
    static final int P_NX = 1;
    static final int P_NY = 2;
    static final int P_NZ = 3;
    static final int P_TX = 4;
    static final int P_TY = 5;
    static final int P_WX = 6;
    static final int P_SY = 7;
    static final int P_SZ = 8;
    static final int P_LO = 9;
    static final int P_HI = 10;
    static final int P_K = 11;
    static final int P_Q = 12;
    static final int P_U0 = 13;
    static final int P_U1 = 14;
    static final int P_MINC = 15;
    static final int P_MAXC = 16;
    static final int P_MAXBQ = 17;
    static final int P_BQTOT = 18;
    static final int P_DIR = 19;
    static final int P_NEXCL = 20;
    static final int P_COUNT = 21;
    static final int D_C = 0;
    static final int D_B = 1;
    static final int D_F = 2;
    static final int D_G = 3;
    static final int D_V0 = 4;
    static final int D_HALFN = 5;
    static final int D_CSCALE = 6;
    static final int D_COUNT = 7;

    private ScanGpu() {
    }

    /** Name of the scan kernel for a model and memory path. */
    static String kernel(ScanModel m, boolean shared) {
        return "scan_best_" + m.name().toLowerCase(Locale.ROOT) + (shared ? "_s" : "_g");
    }

    /** Whether a strip's x prefix arrays go to shared memory (always for 2-D and 3-D). */
    static boolean sharedStrip(ScanShape sh) {
        return sh.dims() > 1 || stripBytes(sh.size(0)) <= SHARED_STRIP_LIMIT;
    }

    /**
     * Dynamic shared memory of the SHARED scan kernels: the strip's case and baseline prefix arrays, nx + 1 longs each.
     */
    static long stripBytes(long nx) {
        return 16 * (nx + 1);
    }

    static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    /**
     * The kernel's integer parameters for the slice [lo, hi), with work items of K consecutive x-interval
     * indices of one strip: K is a whole strip when that leaves at least 16 items per resident block, else
     * smaller (at least 1024), so blocks finish together.
     */
    static long[] params(ScanTables t, ScanSpec spec, long lo, long hi, int resident) {
        ScanShape sh = t.shape;
        long tx = sh.intervals(0);
        long k = Math.min(tx, Math.max(1024, ceilDiv(Math.max(1, hi - lo), 16L * resident)));
        long q = ceilDiv(tx, k);
        long[] p = new long[P_COUNT];
        p[P_DIMS] = sh.dims();
        p[P_NX] = sh.size(0);
        p[P_NY] = sh.size(1);
        p[P_NZ] = sh.size(2);
        p[P_TX] = tx;
        p[P_TY] = sh.intervals(1);
        p[P_WX] = RangeMapping.width(sh.size(0));
        p[P_SY] = sh.tableStride(1);
        p[P_SZ] = sh.tableStride(2);
        p[P_LO] = lo;
        p[P_HI] = hi;
        p[P_K] = k;
        p[P_Q] = q;
        if (hi > lo) {
            p[P_U0] = (lo / tx) * q + (lo % tx) / k;
            p[P_U1] = ((hi - 1) / tx) * q + ((hi - 1) % tx) / k + 1;
        }
        p[P_MINC] = spec.minCells;
        p[P_MAXC] = spec.maxCells;
        p[P_MAXBQ] = spec.maxBaseQ(t);
        p[P_BQTOT] = t.baseTotalQ;
        p[P_DIR] = spec.direction.code();
        p[P_NEXCL] = spec.excludedCount();
        return p;
    }

    static double[] doubleParams(ScanTables t) {
        double[] d = new double[D_COUNT];
        d[D_C] = t.totalCases;
        d[D_B] = t.totalBase;
        d[D_F] = t.f;
        d[D_G] = t.g;
        d[D_V0] = t.v0;
        d[D_HALFN] = t.halfN;
        d[D_CSCALE] = t.casesScale;
        return d;
    }

    /** One grid's tables on one device, with the buffers for scans and replicas. Not thread-safe. */
    public static final class Session implements AutoCloseable {
        private final CudaDevice dev;
        private final ScanTables t;
        private final GpuStream stream;
        private final String kernel;
        private final boolean shared;
        private final int sharedBytes;
        private final int resident;
        private final DeviceBuffer dCases;
        private final DeviceBuffer dBase;
        private final DeviceBuffer dLog;
        private final DeviceBuffer dParams;
        private final DeviceBuffer dDParams;
        private final DeviceBuffer dExcl;
        private final DeviceBuffer dPartLlr;
        private final DeviceBuffer dPartIdx;
        private DeviceBuffer dCum;
        private DeviceBuffer dValueCells;
        private DeviceBuffer dValueQ;
        private DeviceBuffer dReplica;

        /**
         * Device bytes of a session over {@code t}: the cases and baseline prefix tables, a replica's table with its
         * draw tables, the log table, parameters, exclusions and the per-block partial results.
         */
        static long deviceBytes(ScanTables t, long resident) {
            long len = t.shape.tableLength();
            long draw = t.model == ScanModel.NORMAL ? 4L * Math.max(1, t.valueCells.length)
                    + 8L * Math.max(1, t.valueQ.length) : 8L * (t.baseCum == null ? 0 : t.baseCum.length);
            return 24 * len + draw + 16L * DetMath.LOG_TABLE_ENTRIES + 8L * P_COUNT + 8L * D_COUNT
                    + 24L * ScanSpec.MAX_EXCLUDED + 16 * resident;
        }

        public Session(CudaDevice dev, ScanTables t) {
            this.dev = dev;
            this.t = t;
            shared = sharedStrip(t.shape);
            kernel = kernel(t.model, shared);
            sharedBytes = shared ? (int) stripBytes(t.shape.size(0)) : 0;
            resident = KernelLauncher.residentBlocks(dev, MODULE, kernel, BLOCK, sharedBytes);
            // every range reads the whole prefix tables, so they cannot be chunked: over the device-memory budget the
            // policy recomputes on the CPU twin (auto) or reports the budget (gpu)
            io.sparkgpu.cuda.DeviceMemoryBudget.check("scan of " + t.shape, deviceBytes(t, resident));
            GpuStream s = new GpuStream(dev);
            DeviceBuffer[] bufs = new DeviceBuffer[8];
            try {
                long len = t.shape.tableLength();
                bufs[0] = DeviceBuffer.allocate(dev, 8 * len);
                bufs[1] = DeviceBuffer.allocate(dev, 8 * len);
                bufs[2] = DeviceBuffer.ofDoubles(dev, 2 * DetMath.LOG_TABLE_ENTRIES);
                bufs[3] = DeviceBuffer.allocate(dev, 8L * P_COUNT);
                bufs[4] = DeviceBuffer.ofDoubles(dev, D_COUNT);
                bufs[5] = DeviceBuffer.allocate(dev, 4L * 6 * ScanSpec.MAX_EXCLUDED);
                bufs[6] = DeviceBuffer.ofDoubles(dev, resident);
                bufs[7] = DeviceBuffer.allocate(dev, 8L * resident);
                bufs[0].upload(t.casesPrefix, s);
                bufs[1].upload(t.basePrefix, s);
                bufs[2].upload(DetMath.logTable(), s);
                bufs[4].upload(doubleParams(t), s);
                s.synchronize("upload of scan tables (" + t.shape + ")");
            } catch (RuntimeException e) {
                for (DeviceBuffer b : bufs) {
                    if (b != null) {
                        b.close();
                    }
                }
                s.close();
                throw e;
            }
            stream = s;
            dCases = bufs[0];
            dBase = bufs[1];
            dLog = bufs[2];
            dParams = bufs[3];
            dDParams = bufs[4];
            dExcl = bufs[5];
            dPartLlr = bufs[6];
            dPartIdx = bufs[7];
        }

        /** Blocks of the scan kernel that fit on the device at once (its grid size). */
        public int residentBlocks() {
            return resident;
        }

        /** Uploads the parameters of a scan; returns its grid size. */
        private int setParams(long[] p) {
            dParams.upload(p, stream);
            return (int) Math.max(1, Math.min(resident, p[P_U1] - p[P_U0]));
        }

        /** Scan kernel then reduction into slot {@code slot} of (resLlr, resIdx). */
        private void launchScan(DeviceBuffer cases, int grid, DeviceBuffer resLlr, DeviceBuffer resIdx, int slot) {
            KernelLauncher.launch(stream, MODULE, kernel, grid, BLOCK, sharedBytes, dParams, dDParams, cases, dBase,
                    dLog, dExcl, dPartLlr, dPartIdx);
            KernelLauncher.launch(stream, MODULE, "scan_reduce", 1, BLOCK, 0, dPartLlr, dPartIdx, grid, resLlr,
                    resIdx, slot);
        }

        private void uploadExclusions(ScanSpec spec) {
            int[] ex = spec.excludedFlat();
            if (ex.length > 0) {
                dExcl.upload(ex, stream);
            }
        }

        /** The best range among the indices [lo, hi) of the observed data (same contract as {@link ScanCpu#scan}). */
        public ScanBest best(ScanSpec spec, long lo, long hi) {
            ScanCpu.checkRange(t, lo, hi);
            if (lo == hi) {
                return ScanBest.NONE;
            }
            try (DeviceBuffer resLlr = DeviceBuffer.ofDoubles(dev, 1);
                 DeviceBuffer resIdx = DeviceBuffer.allocate(dev, 8)) {
                uploadExclusions(spec);
                launchScan(dCases, setParams(params(t, spec, lo, hi, resident)), resLlr, resIdx, 0);
                double[] l = new double[1];
                long[] i = new long[1];
                resLlr.download(l, 1, stream);
                resIdx.download(i, stream);
                stream.synchronize("scan " + kernel + " (" + t.shape + ", ranges [" + lo + ", " + hi + "))");
                return i[0] < 0 ? ScanBest.NONE : new ScanBest(l[0], i[0]);
            }
        }

        private void prepareReplicas() {
            if (dReplica != null) {
                return;
            }
            GpuStream s = stream;
            dReplica = DeviceBuffer.allocate(dev, 8L * t.shape.tableLength());
            if (t.model == ScanModel.NORMAL) {
                dValueCells = DeviceBuffer.allocate(dev, 4L * Math.max(1, t.valueCells.length));
                dValueQ = DeviceBuffer.allocate(dev, 8L * Math.max(1, t.valueQ.length));
                dValueCells.upload(t.valueCells, s);
                dValueQ.upload(t.valueQ, s);
            } else {
                dCum = DeviceBuffer.allocate(dev, 8L * t.baseCum.length);
                dCum.upload(t.baseCum, s);
            }
        }

        /** Fills the replica table with replica r's per-cell values and turns it into a prefix table. */
        private void drawReplica(long seed, long r) {
            ScanShape sh = t.shape;
            long key = ScanRandom.streamKey(seed, r);
            int nx = sh.size(0);
            int ny = sh.size(1);
            int sy = sh.tableStride(1);
            int sz = sh.tableStride(2);
            dReplica.zero(stream);
            switch (t.model) {
                case NORMAL: {
                    int l = t.valueCells.length;
                    int grid = (int) Math.max(1, Math.min(4096, ceilDiv(l, BLOCK)));
                    KernelLauncher.launch(stream, MODULE, "scan_place_values", grid, BLOCK, 0, dValueCells, dValueQ, l,
                            key, ScanRandom.feistelHalfBits(l), nx, ny, sy, sz, dReplica);
                    break;
                }
                case BERNOULLI: {
                    long c = t.casesTotalQ;
                    int grid = (int) Math.max(1, Math.min(8192, ceilDiv(c, BLOCK)));
                    KernelLauncher.launch(stream, MODULE, "scan_alloc_bernoulli", grid, BLOCK, 0, dCum, sh.cells(),
                            t.baseTotalQ, c, key, ScanRandom.feistelHalfBits(t.baseTotalQ), nx, ny, sy, sz, dReplica);
                    break;
                }
                default: {
                    long c = ScanReplicas.casesOf(t, seed, r);
                    if (c > 0) {
                        int grid = (int) Math.max(1, Math.min(8192, ceilDiv(c, BLOCK)));
                        KernelLauncher.launch(stream, MODULE, "scan_alloc_multinomial", grid, BLOCK, 0, dCum,
                                sh.cells(), t.baseTotalQ, c, t.replicaUnit, t.replicaExtra, key, nx, ny, sy, sz,
                                dReplica);
                    }
                    break;
                }
            }
            long len = sh.tableLength();
            for (int k = 0; k < sh.dims(); k++) {
                int extent = sh.size(k) + 1;
                long lines = len / extent;
                int grid = (int) Math.max(1, Math.min(65535, lines));
                KernelLauncher.launch(stream, MODULE, "scan_prefix_axis", grid, BLOCK, 0, dReplica, len,
                        sh.tableStride(k), extent);
            }
        }

        /**
         * The maximum LLR of each replica r0 .. r1-1 of seed {@code seed} (every range, exclusions ignored), the
         * same numbers as {@link ScanCpu#replicaMaxima}; -Infinity for a replica where no range qualifies.
         */
        public double[] replicaMaxima(ScanSpec spec, long seed, int r0, int r1) {
            ScanReplicas.checkSupported(t);
            int count = r1 - r0;
            double[] out = new double[count];
            if (count <= 0) {
                return out;
            }
            ScanSpec all = spec.withoutExclusions();
            prepareReplicas();
            try (DeviceBuffer resLlr = DeviceBuffer.ofDoubles(dev, count);
                 DeviceBuffer resIdx = DeviceBuffer.allocate(dev, 8L * count)) {
                int grid = setParams(params(t, all, 0, t.shape.ranges(), resident));
                for (int r = r0; r < r1; r++) {
                    drawReplica(seed, r);
                    launchScan(dReplica, grid, resLlr, resIdx, r - r0);
                }
                resLlr.download(out, count, stream);
                stream.synchronize("scan replicas " + r0 + ".." + (r1 - 1) + " (" + kernel + ", " + t.shape + ")");
            }
            return out;
        }

        /** Replica r's prefix table as the GPU drew it (for tests: must equal {@link ScanReplicas#prefix}). */
        public long[] replicaPrefix(long seed, long r) {
            ScanReplicas.checkSupported(t);
            prepareReplicas();
            drawReplica(seed, r);
            long[] out = new long[t.shape.tableLength()];
            dReplica.download(out, stream);
            stream.synchronize("replica table " + r);
            return out;
        }

        @Override
        public void close() {
            for (DeviceBuffer b : new DeviceBuffer[] {dCases, dBase, dLog, dParams, dDParams, dExcl, dPartLlr, dPartIdx,
                    dCum, dValueCells, dValueQ, dReplica}) {
                if (b != null) {
                    b.close();
                }
            }
            stream.close();
        }
    }
}
