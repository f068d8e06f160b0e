package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.cuda.KernelTimer;
import io.sparkgpu.sort.PairRadixSort;
import java.util.ArrayList;
import java.util.List;

/**
 * The GPU twin of {@link IsoPoints#pool} (without {@code keepRows}): validation, sorting and pooling of one
 * partition's raw rows on the device, optionally followed by PAVA-merge ({@link IsotonicGpu}) on the
 * device-resident sums, so that only the rows go up and only the blocks come down.
 *
 * <p>Steps ({@code isotonic.cu}, section "sort and pool"): a validation flag and the order-preserving 64-bit key
 * of every row ({@link IsoPoints#sortKey}; rows of weight 0 get a key above every finite one and so sort last);
 * the sort engine's stable LSD radix sort of (key, row) pairs on the device ({@link PairRadixSort#sortResident},
 * kernels of {@code sort.cu}), skipping the passes whose digit is the same for every key (one global histogram of
 * all eight digits, computed with the keys, decides);
 * group heads where the key changes and their exclusive scan (each sorted row's distinct-feature index); then per
 * distinct feature the exact 128-bit fixed-point sums of w*y and w ({@link io.sparkgpu.common.FixedPoint}, the
 * same quantization operation for operation), added with 128-bit atomics: integer sums do not depend on the
 * order, so the result equals the CPU twin's bit for bit (same features with +0.0 normalisation, same sums,
 * same counts).
 *
 * <p>Cost: O(len) work per radix pass (at most 8), O(len) for the heads, scans and pooling; three host
 * synchronisations (the digit counts and flags, the number of distinct features, the blocks). Device memory
 * about 48 bytes per row plus 40 per distinct feature (PAVA-merge adds about 40 more per distinct feature): some
 * 13 GB at 10^8 distinct rows; allocated once per call and freed before returning.
 *
 * <p>Bad input: a device flag; when it is set the host check is rerun, so NaN/infinite values and negative
 * weights give exactly {@link IsoPoints#pool}'s IllegalArgumentException, and so does a point whose summed
 * weight is too small to be represented at the fit's scale.
 */
final class IsoPoolGpu {
    // sizes the kernels share (include/layout/isotonic.cuh: ISO_SP_*; IsotonicKernelLayoutTest)
    static final int THREADS = 256;
    static final int SCAN_TILE = THREADS * 8;
    /**
     * Device bytes per raw row of {@link #solve}, rounded up: 48 per row, 40 per distinct feature and PAVA-merge's
     * 40 more per distinct feature, every row taken as distinct.
     */
    static final long BUDGET_BYTES_PER_ROW = 128;

    /**
     * Whether {@code len} rows pooled and solved on the device exceed the device-memory budget (then the host pools
     * them and PAVA-merge runs on the device in chunks of points, with the same bits).
     */
    static boolean overBudget(long len) {
        return !io.sparkgpu.cuda.DeviceMemoryBudget.fits(4096, BUDGET_BYTES_PER_ROW, len,
                io.sparkgpu.cuda.DeviceMemoryBudget.bytes());
    }
    static final int RUN = 8;
    /** Radix sort of 64-bit keys (the sort engine's): PASSES passes of DIGIT_BITS-bit digits. */
    static final int DIGIT_BITS = PairRadixSort.DIGIT_BITS;
    static final int DIGITS = PairRadixSort.DIGITS;
    static final int PASSES = PairRadixSort.PASSES;
    /** The kernels' counters: invalid rows, rows of weight 0, distinct features, weights quantized to 0. */
    static final int C_INVALID = 0;
    static final int C_ZERO_WEIGHT = 1;
    static final int C_DISTINCT = 2;
    static final int C_WEIGHT_TOO_SMALL = 3;
    static final int COUNTERS = 4;
    private static final String M = IsotonicGpu.MODULE;

    private IsoPoolGpu() {
    }

    /**
     * The pooled points of {@code len} rows, computed on {@code dev} and downloaded; equal to
     * {@code IsoPoints.pool(x, y, w, len, negate, sc, false, cols)} (same features, sums and counts).
     *
     * @param w null for weight 1
     * @throws IllegalArgumentException as {@link IsoPoints#pool}
     */
    public static IsoPoints pool(CudaDevice dev, double[] x, double[] y, double[] w, int len, boolean negate,
                                 IsoScales sc, IsoColumns cols) {
        if (len == 0) {
            return IsoPoints.pool(x, y, w, 0, negate, sc, false, cols);
        }
        return download(new Pooled(dev, List.of(new IsoBlock(x, y, w, len)), negate, sc, cols, null, true));
    }

    /**
     * The pooled points of the rows of several blocks together, computed on {@code dev} (each block uploaded in
     * place, no host copy) and downloaded; equal to {@code IsoPoints.poolPart} of their concatenation: a part of the
     * fit's rows, so a feature's summed weight is not checked here ({@link IsoPoints#merge} checks the totals).
     *
     * @throws IllegalArgumentException as {@link IsoPoints#pool} for an invalid row
     */
    static IsoPoints poolPart(CudaDevice dev, List<IsoBlock> blocks, boolean negate, IsoScales sc, IsoColumns cols) {
        if (IsoBlock.rows(blocks) == 0) {
            return IsoPoints.poolPart(new double[0], new double[0], null, 0, negate, sc, cols);
        }
        return download(new Pooled(dev, blocks, negate, sc, cols, null, false));
    }

    /** The pooled points of {@code pooled}, downloaded; closes it. */
    private static IsoPoints download(Pooled pooled) {
        try (Pooled p = pooled) {
            double[] ux = new double[p.n];
            long[] acc = new long[4 * p.n];
            if (p.n > 0) {
                p.ux.download(ux, p.n, p.s);
                p.acc.download(acc, 4 * p.n, p.s);
                p.s.synchronize("download of pooled isotonic points (" + p.n + ")");
            }
            return new IsoPoints(p.n, ux, acc, p.rows, p.zero, null, null, null);
        }
    }

    /**
     * Sort, pool and PAVA-merge of {@code len} rows on {@code dev}: the same blocks ({@link L2Blocks}) and bits as
     * {@code IsotonicCpu.pava(IsoPoints.pool(x, y, w, len, negate, sc, false, cols))}, with the pooling's row
     * counts ({@code gpu} is false only when no row has a positive weight: nothing was solved).
     *
     * @param kernelMillis if not null, element 0 receives the device time from the first kernel to the last
     *                     (CUDA events; the uploads of the rows and the download of the blocks excluded)
     * @throws IllegalArgumentException as {@link IsoPoints#pool}, or for chunk < 1
     */
    public static IsotonicSolver.Solved solve(CudaDevice dev, double[] x, double[] y, double[] w, int len,
                                              boolean negate, IsoScales sc, IsoColumns cols, int chunk,
                                              double[] kernelMillis) {
        return solve(dev, List.of(new IsoBlock(x, y, w, len)), negate, sc, cols, chunk, kernelMillis);
    }

    /**
     * {@link #solve(CudaDevice, double[], double[], double[], int, boolean, IsoScales, IsoColumns, int, double[])}
     * of the rows of several blocks together, each uploaded in place (no host concatenation).
     */
    static IsotonicSolver.Solved solve(CudaDevice dev, List<IsoBlock> blocks, boolean negate, IsoScales sc,
                                       IsoColumns cols, int chunk, double[] kernelMillis) {
        IsotonicConfig.checkChunk(chunk); // the setting's one rule
        if (IsoBlock.rows(blocks) == 0) {
            return new IsotonicSolver.Solved(L2Blocks.EMPTY, 0, 0, false);
        }
        try (KernelTimer ev = kernelMillis != null ? new KernelTimer(dev) : null;
             Pooled p = new Pooled(dev, blocks, negate, sc, cols, ev, true)) {
            if (p.n == 0) {
                if (ev != null) {
                    ev.stop(p.s);
                    p.s.synchronize("isotonic sort and pool");
                    kernelMillis[0] = ev.millis();
                }
                return new IsotonicSolver.Solved(L2Blocks.EMPTY, p.rows, p.zero, false);
            }
            L2Blocks b = IsotonicGpu.pavaMergeResident(dev, p.s, p.acc, p.n, chunk, ev, kernelMillis, null, p.ux);
            return new IsotonicSolver.Solved(b, p.rows, p.zero, true);
        }
    }

    /** Radix passes to run ({@link PairRadixSort#passes}: a pass where one digit holds all keys is skipped). */
    static int[] passes(int[] digits, int len) {
        return PairRadixSort.passes(digits, len);
    }

    /**
     * Sizes of the block-total buffers of a multi-level exclusive scan of up to {@code n} ints: level k holds one
     * total per {@link #SCAN_TILE} entries of level k-1 (level -1 being the data), down to a single total.
     */
    static int[] scanLevels(long n) {
        List<Integer> sizes = new ArrayList<>();
        long m = Math.max(1, n);
        do {
            m = (m + SCAN_TILE - 1) / SCAN_TILE;
            sizes.add((int) m);
        } while (m > 1);
        return sizes.stream().mapToInt(Integer::intValue).toArray();
    }

    /** The device state of one sort and pool: stream, buffers, and the pooled points ux, acc of n features. */
    private static final class Pooled implements AutoCloseable {
        final GpuStream s;
        private final List<AutoCloseable> owned = new ArrayList<>();
        final int n;
        final long rows;
        final long zero;
        DeviceBuffer ux;
        DeviceBuffer acc;
        private DeviceBuffer[] levels;

        /**
         * Sorts and pools the rows of {@code blocks} (uploaded one after the other) on {@code dev}.
         *
         * @param checkWeights whether a feature whose summed weight quantizes to 0 is an error (false for a part
         *                     of the fit's rows, whose totals are checked after the parts are merged)
         */
        Pooled(CudaDevice dev, List<IsoBlock> blocks, boolean negate, IsoScales sc, IsoColumns cols, KernelTimer ev,
               boolean checkWeights) {
            s = new GpuStream(dev);
            owned.add(s);
            try {
                int len = IsoBlock.arrayRows(blocks);
                boolean weighted = IsoBlock.weighted(blocks);
                DeviceBuffer xd = alloc(dev, 8L * len);
                DeviceBuffer yd = alloc(dev, 8L * len);
                DeviceBuffer wd = weighted ? alloc(dev, 8L * len) : null;
                long at = 0;
                for (IsoBlock b : blocks) {
                    xd.upload(b.x, 0, b.n, at, s);
                    yd.upload(b.y, 0, b.n, at, s);
                    if (wd != null) {
                        double[] bw = b.w;
                        if (bw == null) { // an unweighted block among weighted ones: weight 1, as IsoBlock.concat
                            bw = new double[b.n];
                            java.util.Arrays.fill(bw, 1.0);
                        }
                        wd.upload(bw, 0, b.n, at, s);
                    }
                    at += b.n;
                }
                Object wArg = KernelLauncher.nullable(wd);
                DeviceBuffer[] keys = {alloc(dev, 8L * len), alloc(dev, 8L * len)};
                DeviceBuffer[] idx = {alloc(dev, 4L * len), alloc(dev, 4L * len)};
                DeviceBuffer counts = alloc(dev, PairRadixSort.countsBytes(len));
                DeviceBuffer rowTotals = alloc(dev, PairRadixSort.rowTotalsBytes());
                DeviceBuffer digits = alloc(dev, 4L * PASSES * DIGITS);
                DeviceBuffer counters = alloc(dev, 4L * COUNTERS);
                int[] sizes = scanLevels(len);
                levels = new DeviceBuffer[sizes.length];
                for (int k = 0; k < sizes.length; k++) {
                    levels[k] = alloc(dev, 4L * sizes[k]);
                }
                digits.zero(s);
                counters.zero(s);
                if (ev != null) {
                    ev.start(s);
                }
                int keyGrid = Math.min(grid(len, THREADS), 8 * dev.multiprocessors());
                KernelLauncher.launch(s, M, "iso_sp_keys", keyGrid, THREADS, 0, xd, yd, wArg, len, keys[0], idx[0],
                        digits, counters);
                int[] dc = new int[PASSES * DIGITS];
                int[] cnt = new int[COUNTERS];
                digits.download(dc, dc.length, s);
                counters.download(cnt, COUNTERS, s);
                s.synchronize("isotonic sort keys (" + len + " rows)");
                if (cnt[C_INVALID] != 0) {
                    hostCheck(blocks, cols);
                }
                zero = cnt[C_ZERO_WEIGHT];
                int kept = len - cnt[C_ZERO_WEIGHT];
                rows = kept;
                if (kept == 0) {
                    n = 0;
                    return;
                }
                int cur = PairRadixSort.sortResident(s, keys, idx, len, passes(dc, len), counts, rowTotals);
                DeviceBuffer g = idx[1 - cur]; // free after the sort
                ux = alloc(dev, 8L * kept);
                acc = alloc(dev, 32L * kept);
                acc.zero(s);
                KernelLauncher.launch(s, M, "iso_sp_heads", grid(kept, THREADS), THREADS, 0, keys[cur], kept, g);
                scan(g, kept, 0);
                KernelLauncher.launch(s, M, "iso_sp_pool", grid((kept + (long) RUN - 1) / RUN, THREADS), THREADS, 0,
                        keys[cur], idx[cur], g, xd, yd, wArg, kept, negate ? 1 : 0, sc.labelMul[0], sc.labelMul[1],
                        sc.weightMul[0], sc.weightMul[1], ux, acc, counters);
                if (checkWeights) {
                    KernelLauncher.launch(s, M, "iso_sp_check_w", grid(kept, THREADS), THREADS, 0, acc, counters);
                }
                counters.download(cnt, COUNTERS, s);
                s.synchronize("isotonic pooling (" + kept + " rows)");
                if (checkWeights && cnt[C_WEIGHT_TOO_SMALL] != 0) {
                    throw IsoPoints.tooSmall(Double.NaN, cols);
                }
                n = cnt[C_DISTINCT];
            } catch (RuntimeException | Error e) {
                close();
                throw e;
            }
        }

        private DeviceBuffer alloc(CudaDevice dev, long bytes) {
            DeviceBuffer b = DeviceBuffer.allocate(dev, bytes);
            owned.add(b);
            return b;
        }

        /** In-place exclusive scan of data[0..n) with the level buffers from {@code level} on. */
        private void scan(DeviceBuffer data, int count, int level) {
            int blocks = (int) ((count + (long) SCAN_TILE - 1) / SCAN_TILE);
            KernelLauncher.launch(s, M, "iso_sp_scan", blocks, THREADS, 0, data, count, levels[level]);
            if (blocks > 1) {
                scan(levels[level], blocks, level + 1);
                KernelLauncher.launch(s, M, "iso_sp_scan_add", grid(count, THREADS), THREADS, 0, data, count,
                        levels[level]);
            }
        }

        @Override
        public void close() {
            for (int i = owned.size() - 1; i >= 0; i--) {
                try {
                    owned.get(i).close();
                } catch (Exception e) {
                    // freeing must go on; the first failure of the computation is what the caller sees
                }
            }
            owned.clear();
        }
    }

    /** The device saw an invalid row: the host check throws IsoPoints.pool's exception for the first one. */
    private static void hostCheck(List<IsoBlock> blocks, IsoColumns cols) {
        for (IsoBlock b : blocks) {
            for (int i = 0; i < b.n; i++) {
                IsoPoints.check(b.x[i], b.y[i], b.w == null ? 1.0 : b.w[i], cols);
            }
        }
        throw new IllegalStateException("the device flagged an invalid isotonic row that the host check accepts");
    }

    private static int grid(long items, int block) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (items + block - 1) / block));
    }
}
