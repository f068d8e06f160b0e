package io.sparkgpu.tsne.affinity;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.DeviceMemoryBudget;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import java.util.Arrays;
import java.util.function.BiFunction;
import java.util.stream.IntStream;

/**
 * kNN of all n points over cells: the exact kNN pruned by cells (the brute force's bits, faster when the data has
 * structure) and the approximate kNN that scans a fixed number of nearby cells (its recall is measured by the
 * benchmark and by {@code TsneKnnCellsTest}).
 *
 * <h2>Cells</h2>
 * {@code nc = clamp(n / 2048, 1, 4096)} centres: the rows {@code floor((c + 1/2) n / nc)}, then one Lloyd step (every
 * point to its nearest centre by the kNN arithmetic with ties to the smaller centre, then each centre the double
 * mean of its points in row order, rounded to float; an empty cell keeps its centre), then every point to its
 * nearest new centre. The assignments are the k = 1 kNN of the points against the centres ({@link TsneAffinities}'s
 * kernels and twin, so the same bits on both backends), the means {@link Means} (tsne_knn_cell_means on the GPU); the
 * rest runs here, in Java, for both. Points are ordered by
 * cell (stable by index); a cell's squared radius is the largest kNN-arithmetic distance of its points to its
 * centre.
 *
 * <h2>Probes</h2>
 * Cells are ranked for each cell a by the double distance of the centres (ties by index), a itself first. Round 1
 * scans for every point of cell a the points of a and of the nearest cells until they hold at least 2k + 2 points
 * (exact) or the {@code probes} nearest cells (approximate; at least enough for k neighbours). The approximate kNN
 * stops there. The exact kNN takes T_a, the largest k-th distance of a's points after round 1, and scans in round 2
 * every other cell b that the bound below cannot exclude:
 * <pre>{@code
 *   LB = D_ab (1 - 1e-12) - R_a - R_b,  R = sqrt(radius2 / (1 - eps)) (1 + 1e-12),  eps = 2 (d + 4) 2^-24
 *   b is excluded when LB > 0 and LB^2 (1 - eps) > T_a (1 + 1e-12)
 * }</pre>
 * By the triangle inequality every pair (q in a, r in b) is at least LB apart; the float distance of the kNN
 * arithmetic is at least (1 - eps) times the true square (d + 2 roundings of relative size 2^-24 at most), so it
 * exceeds T_a, which is at least q's k-th distance: r cannot be among q's neighbours, not even by a tie of distance.
 * So the exact kNN's lists are the brute force's ({@link TsneAffinitiesCpu#knnBlock}) bit for bit, whatever the data;
 * only its time depends on how many cells the bound excludes.
 */
final class KnnCells {
    /** Points per cell aimed at, and the most cells. */
    static volatile int cellPoints = 2048;
    static final int MAX_CELLS = 4096;
    /** The whole-set kNN uses the exact pruned path from this many points on (system property to tune or disable). */
    static volatile int minPoints = Integer.getInteger("sparkgpu.tsne.knnCellsMinPoints", 50_000);
    /** Counters of the last exact pruned call: pairs scanned in round 1 and 2 (tests, benchmarks, logs). */
    static volatile long lastPairsRound1;
    static volatile long lastPairsRound2;

    private KnnCells() {
    }

    /** The cells of a point set: their order, boundaries, centres, radii and the centre ranking. */
    static final class Cells {
        final int n;
        final int d;
        final int nc;
        /** perm[r]: the point at row r of the cell order; start[c]..start[c+1]: the rows of cell c. */
        final int[] perm;
        final int[] start;
        final float[] centres;
        /** Largest squared distance (kNN arithmetic) of a cell's points to its centre; 0 for an empty cell. */
        final float[] radius2;
        /** rank[a * nc + j]: the j-th nearest cell to a (a first); dist[a * nc + j]: its centre distance. */
        final int[] rank;
        final double[] dist;

        Cells(int n, int d, int nc, int[] perm, int[] start, float[] centres, float[] radius2, int[] rank,
                double[] dist) {
            this.n = n;
            this.d = d;
            this.nc = nc;
            this.perm = perm;
            this.start = start;
            this.centres = centres;
            this.radius2 = radius2;
            this.rank = rank;
            this.dist = dist;
        }

        int size(int c) {
            return start[c + 1] - start[c];
        }
    }

    /** Number of cells for n points. */
    static int cellCount(int n) {
        return Math.max(1, Math.min(MAX_CELLS, n / cellPoints));
    }

    /**
     * The cells of x (n x d); {@code assign.apply(centres, nc)} is the k = 1 kNN of every point against the nc
     * centres (global indices n.. n + nc - 1).
     */
    static Cells build(float[] x, int n, int d, BiFunction<float[], Integer, KnnGraph> assign, Means means) {
        final int nc = cellCount(n);
        float[] cen = new float[nc * d];
        for (int c = 0; c < nc; c++) {
            int row = (int) (((2L * c + 1) * n) / (2L * nc));
            System.arraycopy(x, row * d, cen, c * d, d);
        }
        int[] cell = cellsOf(assign.apply(cen, nc), n);
        // one Lloyd step: double means in row order, per cell (cells in parallel, each over its rows in order)
        int[] start = new int[nc + 1];
        int[] perm = new int[n];
        cellOrder(cell, nc, start, perm);
        means.into(cen, nc, start, perm);
        KnnGraph g = assign.apply(cen, nc);
        cell = cellsOf(g, n);
        cellOrder(cell, nc, start, perm);
        float[] radius2 = new float[nc];
        for (int i = 0; i < n; i++) {
            int c = cell[i];
            radius2[c] = Math.max(radius2[c], g.dist2[i]);
        }
        // centre ranking per cell: (double distance, index), the cell itself first
        int[] rank = new int[nc * nc];
        double[] dist = new double[nc * nc];
        IntStream.range(0, nc).parallel().forEach(a -> {
            double[] da = new double[nc];
            for (int b = 0; b < nc; b++) {
                double s = 0;
                for (int t = 0; t < d; t++) {
                    double diff = (double) cen[a * d + t] - cen[b * d + t];
                    s += diff * diff;
                }
                da[b] = a == b ? -1 : Math.sqrt(s); // -1: a first, even before a cell with the same centre
            }
            int[] order = sortedByValue(da);
            for (int j = 0; j < nc; j++) {
                rank[a * nc + j] = order[j];
                dist[a * nc + j] = Math.max(0, da[order[j]]);
            }
        });
        return new Cells(n, d, nc, perm, start, cen, radius2, rank, dist);
    }

    /**
     * The Lloyd step's means: each non-empty cell c's centre (cen, nc x d) becomes the double sum of its points
     * x[perm[r]] over its rows start[c] <= r < start[c + 1], in row order, divided by their count, rounded to float.
     * {@link #meansCpu}; on the GPU tsne_knn_cell_means (the same sums in the same order).
     */
    interface Means {
        void into(float[] cen, int nc, int[] start, int[] perm);
    }

    /** {@link Means} in Java: the cells in parallel, each over its rows in order. */
    static Means meansCpu(float[] x, int d) {
        return (cen, nc, start, perm) -> IntStream.range(0, nc).parallel().forEach(c -> {
            int cnt = start[c + 1] - start[c];
            if (cnt == 0) {
                return;
            }
            double[] sum = new double[d];
            for (int r = start[c]; r < start[c + 1]; r++) {
                int xa = perm[r] * d;
                for (int t = 0; t < d; t++) {
                    sum[t] += x[xa + t];
                }
            }
            for (int t = 0; t < d; t++) {
                cen[c * d + t] = (float) (sum[t] / cnt);
            }
        });
    }

    /**
     * The indices 0..m-1 ordered by (Double.compare of v, index): a stable merge sort of the identity (primitive
     * ints, no boxing; the ranking runs once per cell).
     */
    static int[] sortedByValue(double[] v) {
        final int m = v.length;
        int[] a = new int[m];
        int[] b = new int[m];
        for (int i = 0; i < m; i++) {
            a[i] = i;
        }
        for (int w = 1; w < m; w *= 2) {
            for (int lo = 0; lo < m; lo += 2 * w) {
                int mid = Math.min(m, lo + w);
                int hi = Math.min(m, lo + 2 * w);
                int i = lo;
                int j = mid;
                int o = lo;
                while (i < mid && j < hi) {
                    b[o++] = Double.compare(v[a[j]], v[a[i]]) < 0 ? a[j++] : a[i++];
                }
                while (i < mid) {
                    b[o++] = a[i++];
                }
                while (j < hi) {
                    b[o++] = a[j++];
                }
            }
            int[] t = a;
            a = b;
            b = t;
        }
        return a;
    }

    /** Counting sort of the points by cell, stable by index: start (nc + 1 entries) and perm are overwritten. */
    private static void cellOrder(int[] cell, int nc, int[] start, int[] perm) {
        Arrays.fill(start, 0);
        for (int c : cell) {
            start[c + 1]++;
        }
        for (int c = 0; c < nc; c++) {
            start[c + 1] += start[c];
        }
        int[] fill = Arrays.copyOf(start, nc);
        for (int i = 0; i < cell.length; i++) {
            perm[fill[cell[i]]++] = i;
        }
    }

    private static int[] cellsOf(KnnGraph g, int n) {
        int[] cell = new int[n];
        for (int i = 0; i < n; i++) {
            cell[i] = g.index[i] - n;
        }
        return cell;
    }

    /** Probe lists in CSR form: cells probe[probeStart[a]..probeStart[a+1]) for the points of cell a. */
    record Probes(int[] probeStart, int[] probe) {
        long pairs(Cells cells) {
            long p = 0;
            for (int a = 0; a < cells.nc; a++) {
                long refs = 0;
                for (int j = probeStart[a]; j < probeStart[a + 1]; j++) {
                    refs += cells.size(probe[j]);
                }
                p += refs * cells.size(a);
            }
            return p;
        }
    }

    /**
     * Round 1: for each cell, itself and its nearest cells until they hold at least {@code minPoints} points and
     * number at least {@code minCells} (fewer when there are not that many cells).
     */
    static Probes round1(Cells cells, long minPoints, int minCells) {
        final int nc = cells.nc;
        int[] count = new int[nc];
        for (int a = 0; a < nc; a++) {
            long pts = 0;
            int j = 0;
            while (j < nc && (pts < minPoints || j < minCells)) {
                pts += cells.size(cells.rank[a * nc + j]);
                j++;
            }
            count[a] = j;
        }
        int[] ps = new int[nc + 1];
        for (int a = 0; a < nc; a++) {
            ps[a + 1] = ps[a] + count[a];
        }
        int[] probe = new int[ps[nc]];
        for (int a = 0; a < nc; a++) {
            System.arraycopy(cells.rank, a * nc, probe, ps[a], count[a]);
        }
        return new Probes(ps, probe);
    }

    /** Round 2 of the exact kNN: every cell past a's round-1 probes that the bound cannot exclude (see the class). */
    static Probes round2(Cells cells, Probes r1, float[] kthByRow) {
        final int nc = cells.nc;
        final double eps = 2.0 * (cells.d + 4) * 0x1p-24;
        double[] radius = new double[nc];
        for (int c = 0; c < nc; c++) {
            radius[c] = Math.sqrt(cells.radius2[c] / (1 - eps)) * (1 + 1e-12);
        }
        int[][] lists = new int[nc][];
        IntStream.range(0, nc).parallel().forEach(a -> {
            double t = 0;
            for (int r = cells.start[a]; r < cells.start[a + 1]; r++) {
                t = Math.max(t, kthByRow[r]); // +inf (a list not full) keeps every cell
            }
            int done = r1.probeStart[a + 1] - r1.probeStart[a];
            int[] out = new int[nc - done];
            int m = 0;
            for (int j = done; j < nc; j++) {
                int b = cells.rank[a * nc + j];
                if (cells.size(b) == 0) {
                    continue;
                }
                double lb = cells.dist[a * nc + j] * (1 - 1e-12) - radius[a] - radius[b];
                boolean excluded = lb > 0 && lb * lb * (1 - eps) > t * (1 + 1e-12);
                if (!excluded) {
                    out[m++] = b;
                }
            }
            lists[a] = Arrays.copyOf(out, m);
        });
        int[] ps = new int[nc + 1];
        for (int a = 0; a < nc; a++) {
            ps[a + 1] = ps[a] + lists[a].length;
        }
        int[] probe = new int[ps[nc]];
        for (int a = 0; a < nc; a++) {
            System.arraycopy(lists[a], 0, probe, ps[a], lists[a].length);
        }
        return new Probes(ps, probe);
    }

    /** The points in cell order (row r = point perm[r]). */
    static float[] ordered(float[] x, Cells cells) {
        final int d = cells.d;
        float[] xs = new float[cells.n * d];
        IntStream.range(0, (cells.n + 4095) / 4096).parallel().forEach(b -> {
            int end = Math.min(cells.n, (b + 1) * 4096);
            for (int r = b * 4096; r < end; r++) {
                System.arraycopy(x, cells.perm[r] * d, xs, r * d, d);
            }
        });
        return xs;
    }

    /** Lists of the cell order (row r = point perm[r]) back to point order, as a whole-set graph. */
    static KnnGraph unordered(Cells cells, int k, float[] listD, int[] listI) {
        int n = cells.n;
        int[] index = new int[n * k];
        float[] dist2 = new float[n * k];
        IntStream.range(0, (n + 4095) / 4096).parallel().forEach(b -> {
            int end = Math.min(n, (b + 1) * 4096);
            for (int r = b * 4096; r < end; r++) {
                int p = cells.perm[r];
                System.arraycopy(listI, r * k, index, p * k, k);
                System.arraycopy(listD, r * k, dist2, p * k, k);
            }
        });
        return new KnnGraph(n, 0, n, k, index, dist2);
    }

    /** Round 1's points per cell: enough for k neighbours besides the point itself, twice over. */
    static long round1Points(int k) {
        return 2L * k + 2;
    }

    // ------------------------------------------------------------------------------------------ CPU twin

    /** The exact kNN by cells on the CPU: {@link TsneAffinitiesCpu#knnBlock}'s bits. */
    static KnnGraph exactCpu(float[] x, int n, int d, int k) {
        return cpu(x, n, d, k, 0);
    }

    /** The approximate kNN on the CPU: each point scans its cell and the probes - 1 nearest cells. */
    static KnnGraph approximateCpu(float[] x, int n, int d, int k, int probes) {
        return cpu(x, n, d, k, probes);
    }

    /** probes 0: exact (two rounds), else approximate (round 1 with that many cells); the GPU side's steps. */
    private static KnnGraph cpu(float[] x, int n, int d, int k, int probes) {
        Cells cells = build(x, n, d, (cen, nc) -> TsneAffinitiesCpu.knnBlock(x, 0, n, cen, n, nc, d, 1, n + nc),
                meansCpu(x, d));
        float[] xs = ordered(x, cells);
        float[] listD = new float[n * k];
        int[] listI = new int[n * k];
        Arrays.fill(listD, Float.POSITIVE_INFINITY);
        Arrays.fill(listI, -1);
        Probes r1 = probes > 0 ? round1(cells, k + 1, probes) : round1(cells, round1Points(k), 2);
        scanCpu(cells, xs, r1, d, k, listD, listI);
        if (probes == 0) {
            Probes r2 = round2(cells, r1, kth(listD, n, k));
            lastPairsRound1 = r1.pairs(cells);
            lastPairsRound2 = r2.pairs(cells);
            scanCpu(cells, xs, r2, d, k, listD, listI);
        }
        return unordered(cells, k, listD, listI);
    }

    static float[] kth(float[] listD, int n, int k) {
        float[] t = new float[n];
        for (int r = 0; r < n; r++) {
            t[r] = listD[r * k + k - 1];
        }
        return t;
    }

    /** Twin of tsne_knn_cells: the rows of every cell against the rows of its probe cells, merged into the lists. */
    static void scanCpu(Cells cells, float[] xs, Probes pr, int d, int k, float[] listD, int[] listI) {
        IntStream.range(0, cells.nc).parallel().forEach(a -> {
            for (int r = cells.start[a]; r < cells.start[a + 1]; r++) {
                for (int j = pr.probeStart[a]; j < pr.probeStart[a + 1]; j++) {
                    int c = pr.probe[j];
                    scanRow(xs, r, cells.perm[r], cells.perm, cells.start[c], cells.start[c + 1], d, k, listD, listI);
                }
            }
        });
    }

    private static void scanRow(float[] xs, int q, int self, int[] perm, int from, int to, int d, int k,
            float[] dist2, int[] index) {
        final int at = q * k;
        final int last = at + k - 1;
        for (int r = from; r < to; r++) {
            int gi = perm[r];
            if (gi == self) {
                continue;
            }
            float acc = TsneAffinitiesCpu.dist2Within(xs, q * d, xs, r * d, d, dist2[last]);
            if (TsneAffinitiesCpu.before(acc, gi, dist2[last], index[last])) {
                TsneAffinitiesCpu.insert(dist2, index, at, k, acc, gi);
            }
        }
    }

    // ------------------------------------------------------------------------------------------ GPU

    /**
     * Device bytes per point of the GPU path: its row in point order (the assignments; freed before the scan) or
     * its list in point order (after the scan), its row in cell order, its list in cell order, its index entries.
     */
    private static long bytesPerPoint(int d, int k) {
        return 4L * Math.max(d, 2L * k) + 4L * d + 8L * k + 16;
    }

    /** Device bytes of the GPU path that do not grow with the points (probe lists, cell boundaries). */
    private static long fixedBytes(int nc) {
        return 4L * nc * (long) nc + (1L << 20);
    }

    /** Device bytes of the GPU path: the points, the lists, the index arrays. */
    static long deviceBytes(int n, int d, int k, int nc) {
        return DeviceMemoryBudget.add(fixedBytes(nc), DeviceMemoryBudget.times(bytesPerPoint(d, k), n));
    }

    /**
     * Whether the GPU path fits: the whole set stays on the device, within the memory budget (when set) and 80% of
     * the device; otherwise the caller runs the brute force, which chunks.
     */
    static boolean fitsDevice(CudaDevice dev, int n, int d, int k) {
        return DeviceMemoryBudget.fits(fixedBytes(cellCount(n)), bytesPerPoint(d, k), n,
                Math.min(DeviceMemoryBudget.bytes(), dev.totalMemory() / 10 * 8));
    }

    static KnnGraph exactGpu(CudaDevice dev, float[] x, int n, int d, int k) {
        return gpu(dev, x, n, d, k, 0);
    }

    static KnnGraph approximateGpu(CudaDevice dev, float[] x, int n, int d, int k, int probes) {
        return gpu(dev, x, n, d, k, probes);
    }

    /**
     * probes 0: exact (two rounds), else approximate (round 1 with that many cells). The points are uploaded once:
     * they are checked for non-finite values there (the error {@link TsneAffinities#checkBlock} gives), the two
     * assignments and the Lloyd step's means read them on the device, the cell order is gathered there, and the lists
     * go back to point order there (tsne_knn_gather, tsne_knn_scatter), so the host only downloads the final graph.
     */
    private static KnnGraph gpu(CudaDevice dev, float[] x, int n, int d, int k, int probes) {
        final boolean resident = TsneAffinitiesGpu.queryResident(dev, d, k);
        final int shared = TsneAffinitiesGpu.knnSharedBytes(k, d, resident);
        final int nc = cellCount(n);
        try (GpuStream s = new GpuStream(dev);
             DeviceBuffer dxs = DeviceBuffer.allocate(dev, 4L * n * d);
             DeviceBuffer dperm = DeviceBuffer.allocate(dev, 4L * n);
             DeviceBuffer dstart = DeviceBuffer.allocate(dev, 4L * (nc + 1));
             DeviceBuffer dD = DeviceBuffer.allocate(dev, 4L * n * k);
             DeviceBuffer dI = DeviceBuffer.allocate(dev, 4L * n * k)) {
            Cells cells;
            try (DeviceBuffer dx = DeviceBuffer.allocate(dev, 4L * n * d)) {
                TsneAffinitiesGpu.upload(dx, x, 0, (long) n * d, s);
                requireFinite(s, dx, x, n, d);
                cells = build(x, n, d, (cen, c) -> assignGpu(s, dx, n, cen, c, d),
                        (cen, c, start, perm) -> meansGpu(s, dx, d, dperm, dstart, cen, c, start, perm));
                dperm.upload(cells.perm, s);
                KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_gather", TsneAffinitiesGpu.gridFor(dev,
                        (long) n * d), 256, 0, dx, dperm, n, d, dxs);
                s.synchronize("tsne_knn_gather"); // dx is freed next
            }
            dstart.upload(cells.start, s);
            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_fill", TsneAffinitiesGpu.gridFor(dev,
                    (long) n * k), 256, 0, dD, dI, (long) n * k);
            Probes r1 = probes > 0 ? round1(cells, k + 1, probes) : round1(cells, round1Points(k), 2);
            scanGpu(dev, s, cells, r1, dxs, dperm, dstart, d, k, resident, shared, dD, dI);
            if (probes == 0) {
                float[] kth = new float[n];
                try (DeviceBuffer dk = DeviceBuffer.allocate(dev, 4L * n)) {
                    KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_kth", TsneAffinitiesGpu.gridFor(dev,
                            n), 256, 0, dD, n, k, dk);
                    dk.download(kth, n, s);
                    s.synchronize("tsne_knn_kth");
                }
                Probes r2 = round2(cells, r1, kth);
                lastPairsRound1 = r1.pairs(cells);
                lastPairsRound2 = r2.pairs(cells);
                scanGpu(dev, s, cells, r2, dxs, dperm, dstart, d, k, resident, shared, dD, dI);
            }
            int[] index = new int[n * k];
            float[] dist2 = new float[n * k];
            try (DeviceBuffer oD = DeviceBuffer.allocate(dev, 4L * n * k);
                 DeviceBuffer oI = DeviceBuffer.allocate(dev, 4L * n * k)) {
                KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_scatter", TsneAffinitiesGpu.gridFor(dev,
                        (long) n * k), 256, 0, dD, dI, dperm, n, k, oD, oI);
                oD.download(dist2, n * k, s);
                oI.download(index, n * k, s);
                s.synchronize("tsne_knn_scatter");
            }
            return new KnnGraph(n, 0, n, k, index, dist2);
        }
    }

    /** Throws {@link TsneAffinities#nonFinite}'s error for the first non-finite value of the n x d points dx (of x). */
    private static void requireFinite(GpuStream s, DeviceBuffer dx, float[] x, int n, int d) {
        long count = (long) n * d;
        long[] first = {count};
        try (DeviceBuffer df = DeviceBuffer.allocate(s.device(), 8)) {
            df.upload(first, s);
            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_first_nonfinite", TsneAffinitiesGpu.gridFor(
                    s.device(), count), 256, 0, dx, count, df);
            df.download(first, s);
            s.synchronize("t-SNE kNN input check");
        }
        if (first[0] < count) {
            throw TsneAffinities.nonFinite(x, 0, d, (int) first[0]);
        }
    }

    /** {@link Means} by tsne_knn_cell_means on the points dx (start and perm go up through dstart and dperm). */
    private static void meansGpu(GpuStream s, DeviceBuffer dx, int d, DeviceBuffer dperm, DeviceBuffer dstart,
            float[] cen, int nc, int[] start, int[] perm) {
        dperm.upload(perm, s);
        dstart.upload(start, s);
        try (DeviceBuffer dc = DeviceBuffer.allocate(s.device(), 4L * nc * d)) {
            dc.upload(cen, s); // an empty cell keeps its centre
            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_cell_means", TsneAffinitiesGpu.gridFor(
                    s.device(), (long) nc * d), 256, 0, dx, dperm, dstart, nc, d, dc);
            dc.download(cen, cen.length, s);
            s.synchronize("t-SNE kNN cell means");
        }
    }

    /**
     * The k = 1 kNN of the n points already on the device (dx) against the nc centres (global indices n..), by the
     * exact kernel of {@link TsneAffinitiesGpu#knnBlock}: the same bits as the CPU side's assignment.
     */
    private static KnnGraph assignGpu(GpuStream s, DeviceBuffer dx, int n, float[] cen, int nc, int d) {
        CudaDevice dev = s.device();
        final boolean resident = TsneAffinitiesGpu.queryResident(dev, d, 1);
        final int shared = TsneAffinitiesGpu.knnSharedBytes(1, d, resident);
        int[] index = new int[n];
        float[] dist2 = new float[n];
        try (DeviceBuffer dr = DeviceBuffer.allocate(dev, 4L * nc * d);
             DeviceBuffer dd = DeviceBuffer.allocate(dev, 4L * n);
             DeviceBuffer di = DeviceBuffer.allocate(dev, 4L * n)) {
            TsneAffinitiesGpu.upload(dr, cen, 0, (long) nc * d, s);
            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_fill", TsneAffinitiesGpu.gridFor(dev, n), 256,
                    0, dd, di, (long) n);
            KernelLauncher.launch(s, TsneAffinities.MODULE, TsneAffinitiesGpu.KNN_KERNEL,
                    (n + TsneAffinitiesGpu.KQ - 1) / TsneAffinitiesGpu.KQ, TsneAffinitiesGpu.KNN_THREADS, shared, dx, n,
                    0, dr, nc, n, d, 1, resident ? 1 : 0, dd, di);
            dd.download(dist2, n, s);
            di.download(index, n, s);
            s.synchronize("t-SNE kNN cell assignment");
        }
        return new KnnGraph(n + nc, 0, n, 1, index, dist2);
    }

    /**
     * One launch of tsne_knn_cells over every query tile (KQ rows of one cell) with probes; tiles in decreasing
     * order of the points they scan, so the longest start first.
     */
    private static void scanGpu(CudaDevice dev, GpuStream s, Cells cells, Probes pr, DeviceBuffer dxs,
            DeviceBuffer dperm, DeviceBuffer dstart, int d, int k, boolean resident, int shared, DeviceBuffer dD,
            DeviceBuffer dI) {
        final int nc = cells.nc;
        final int kq = TsneAffinitiesGpu.KQ;
        long[] work = new long[nc];
        int tiles = 0;
        for (int a = 0; a < nc; a++) {
            for (int j = pr.probeStart[a]; j < pr.probeStart[a + 1]; j++) {
                work[a] += cells.size(pr.probe[j]);
            }
            if (work[a] > 0) {
                tiles += (cells.size(a) + kq - 1) / kq;
            }
        }
        if (tiles == 0) {
            return;
        }
        Integer[] order = new Integer[nc];
        for (int a = 0; a < nc; a++) {
            order[a] = a;
        }
        Arrays.sort(order, (u, v) -> work[u] != work[v] ? Long.compare(work[v], work[u]) : Integer.compare(u, v));
        int[] tileCell = new int[tiles];
        int[] tileStart = new int[tiles];
        int[] tileCount = new int[tiles];
        int t = 0;
        for (int a : order) {
            if (work[a] == 0) {
                continue;
            }
            for (int r = cells.start[a]; r < cells.start[a + 1]; r += kq) {
                tileCell[t] = a;
                tileStart[t] = r;
                tileCount[t] = Math.min(kq, cells.start[a + 1] - r);
                t++;
            }
        }
        try (DeviceBuffer dtc = DeviceBuffer.allocate(dev, 4L * tiles);
             DeviceBuffer dts = DeviceBuffer.allocate(dev, 4L * tiles);
             DeviceBuffer dtn = DeviceBuffer.allocate(dev, 4L * tiles);
             DeviceBuffer dps = DeviceBuffer.allocate(dev, 4L * (nc + 1));
             DeviceBuffer dpr = DeviceBuffer.allocate(dev, 4L * Math.max(1, pr.probe.length))) {
            dtc.upload(tileCell, s);
            dts.upload(tileStart, s);
            dtn.upload(tileCount, s);
            dps.upload(pr.probeStart, s);
            if (pr.probe.length > 0) {
                dpr.upload(pr.probe, s);
            }
            KernelLauncher.launch(s, TsneAffinities.MODULE, "tsne_knn_cells", tiles, TsneAffinitiesGpu.KNN_THREADS,
                    shared, dxs, dperm, dstart, dtc, dts, dtn, dps, dpr, d, k, resident ? 1 : 0, dD, dI);
            s.synchronize("tsne_knn_cells"); // the host arrays above must outlive the copies
        }
    }
}
