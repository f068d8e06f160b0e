package io.sparkgpu.scan;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * CPU twin of the {@code scan_*} kernels: the best range among the global range indices [lo, hi) of a
 * {@link ScanShape}, with the same LLR arithmetic ({@link ScanTables#llr}), the same constraints and the same
 * tie-break (larger LLR, then smaller index), so it returns what the GPU returns, bit for bit.
 *
 * <p>Work: strips (fixed y- and z-intervals) are visited in order; each strip's x prefix arrays are formed
 * once from the 2^(d-1) corner rows of the prefix tables (O(n_x)), then each of the strip's T_x intervals
 * costs O(1): two differences and one LLR. Total O(M) for M ranges, plus O(strips * n_x).
 */
final class ScanCpu {
    private ScanCpu() {
    }

    /** Per-call state: the strip arrays and the running best. */
    private static final class Walker {
        final ScanTables t;
        final long[] cases;
        final ScanShape sh;
        final int nx;
        final long tx;
        final int dir;
        final long minCells;
        final long maxCells;
        final long maxBq;
        final int[] excl;
        final long[] sc;
        final long[] sb;
        final int[] stripExcl;
        int stripExclCount;
        double best = Double.NEGATIVE_INFINITY;
        long bestIdx = -1;

        Walker(ScanTables t, long[] cases, ScanSpec spec) {
            this.t = t;
            this.cases = cases;
            sh = t.shape;
            nx = sh.size(0);
            tx = sh.intervals(0);
            dir = spec.direction.code();
            minCells = spec.minCells;
            maxCells = spec.maxCells;
            maxBq = spec.maxBaseQ(t);
            excl = spec.excludedFlat();
            sc = new long[nx + 1];
            sb = new long[nx + 1];
            stripExcl = new int[2 * spec.excludedCount()];
        }

        /** Builds the x prefix arrays of strip s; returns {@code sizeYZ} (cells of the y/z part). */
        long strip(long s) {
            int ay = 0;
            int by = 0;
            int az = 0;
            int bz = 0;
            if (sh.dims() > 1) {
                long ty = sh.intervals(1);
                int[] y = RangeMapping.decode(sh.size(1), s % ty);
                ay = y[0];
                by = y[1];
                if (sh.dims() > 2) {
                    int[] z = RangeMapping.decode(sh.size(2), s / ty);
                    az = z[0];
                    bz = z[1];
                }
            }
            int sy = sh.tableStride(1);
            int sz = sh.tableStride(2);
            for (int x = 0; x <= nx; x++) {
                if (sh.dims() == 1) {
                    sc[x] = cases[x];
                    sb[x] = t.basePrefix[x];
                } else if (sh.dims() == 2) {
                    int hiRow = x + sy * (by + 1);
                    int loRow = x + sy * ay;
                    sc[x] = cases[hiRow] - cases[loRow];
                    sb[x] = t.basePrefix[hiRow] - t.basePrefix[loRow];
                } else {
                    int p11 = x + sy * (by + 1) + sz * (bz + 1);
                    int p01 = x + sy * ay + sz * (bz + 1);
                    int p10 = x + sy * (by + 1) + sz * az;
                    int p00 = x + sy * ay + sz * az;
                    sc[x] = (cases[p11] - cases[p01]) - (cases[p10] - cases[p00]);
                    sb[x] = (t.basePrefix[p11] - t.basePrefix[p01]) - (t.basePrefix[p10] - t.basePrefix[p00]);
                }
            }
            stripExclCount = 0;
            for (int e = 0; e < excl.length; e += 6) {
                boolean yz = excl[e + 2] <= by && ay <= excl[e + 3] && excl[e + 4] <= bz && az <= excl[e + 5];
                if (yz) {
                    stripExcl[stripExclCount++] = excl[e];
                    stripExcl[stripExclCount++] = excl[e + 1];
                }
            }
            return (long) (by - ay + 1) * (bz - az + 1);
        }

        boolean excludedX(int a, int b) {
            for (int e = 0; e < stripExclCount; e += 2) {
                if (a <= stripExcl[e + 1] && stripExcl[e] <= b) {
                    return true;
                }
            }
            return false;
        }

        void consider(long s, int a, int b) {
            long dc = sc[b + 1] - sc[a];
            long db = sb[b + 1] - sb[a];
            if (db > maxBq || (stripExclCount > 0 && excludedX(a, b))) {
                return;
            }
            double llr = t.llr(dc, db, dir);
            if (llr >= best) {
                long idx = s * tx + RangeMapping.encode(nx, a, b);
                if (ScanBest.better(llr, idx, best, bestIdx)) {
                    best = llr;
                    bestIdx = idx;
                }
            }
        }

        void walk(long lo, long hi) {
            if (lo >= hi) {
                return;
            }
            long s0 = lo / tx;
            long s1 = (hi - 1) / tx;
            int w = RangeMapping.width(nx);
            for (long s = s0; s <= s1; s++) {
                long sizeYZ = strip(s);
                long i0 = Math.max(lo - s * tx, 0);
                long i1 = Math.min(hi - s * tx, tx);
                // interval lengths allowed by the cell limits
                long lenMin = (minCells + sizeYZ - 1) / sizeYZ;
                long lenMax = Math.min(maxCells / sizeYZ, nx);
                if (lenMin > nx || lenMax < 1 || lenMin > lenMax) {
                    continue;
                }
                if (i0 == 0 && i1 == tx) {
                    for (int a = 0; a < nx; a++) {
                        long bEnd = Math.min(nx - 1L, a + lenMax - 1);
                        for (long b = a + lenMin - 1; b <= bEnd; b++) {
                            consider(s, a, (int) b);
                        }
                    }
                } else {
                    int row = (int) (i0 / w);
                    int col = (int) (i0 - (long) row * w);
                    for (long i = i0; i < i1; i++) {
                        int a = RangeMapping.lo(nx, row, col);
                        int b = RangeMapping.hi(nx, row, col);
                        long len = b - a + 1;
                        if (len >= lenMin && len <= lenMax) {
                            consider(s, a, b);
                        }
                        if (++col == w) {
                            col = 0;
                            row++;
                        }
                    }
                }
            }
        }
    }

    /**
     * The best range among the indices [lo, hi) for the given cases prefix table (the observed one,
     * {@code t.casesPrefix()}, or a replica's).
     */
    public static ScanBest scan(ScanTables t, long[] casesPrefix, ScanSpec spec, long lo, long hi) {
        checkRange(t, lo, hi);
        Walker w = new Walker(t, casesPrefix, spec);
        w.walk(lo, hi);
        return w.bestIdx < 0 ? ScanBest.NONE : new ScanBest(w.best, w.bestIdx);
    }

    /** The observed data's best range among [lo, hi). */
    public static ScanBest scan(ScanTables t, ScanSpec spec, long lo, long hi) {
        return scan(t, t.casesPrefix, spec, lo, hi);
    }

    /**
     * {@link #scan} split into {@code parts} equal index shares run on {@code pool} (null: in the calling
     * thread), combined with {@link ScanBest#max}.
     */
    public static ScanBest scanParallel(ScanTables t, long[] casesPrefix, ScanSpec spec, long lo, long hi, int parts,
                                        ExecutorService pool) {
        checkRange(t, lo, hi);
        if (pool == null || parts <= 1) {
            return scan(t, casesPrefix, spec, lo, hi);
        }
        List<Future<ScanBest>> fs = new ArrayList<>();
        for (int p = 0; p < parts; p++) {
            long[] sh = ScanShape.share(hi - lo, p, parts);
            fs.add(pool.submit(() -> scan(t, casesPrefix, spec, lo + sh[0], lo + sh[1])));
        }
        ScanBest best = ScanBest.NONE;
        for (Future<ScanBest> f : fs) {
            best = ScanBest.max(best, get(f));
        }
        return best;
    }

    /** Maximum LLR of each replica r0 .. r1-1 (every range, no exclusions), optionally in parallel by replica. */
    public static double[] replicaMaxima(ScanTables t, ScanSpec spec, long seed, int r0, int r1, ExecutorService pool) {
        ScanReplicas.checkSupported(t);
        ScanSpec all = spec.withoutExclusions();
        double[] out = new double[r1 - r0];
        long m = t.shape.ranges();
        if (pool == null) {
            for (int r = r0; r < r1; r++) {
                out[r - r0] = scan(t, ScanReplicas.prefix(t, seed, r), all, 0, m).llr;
            }
            return out;
        }
        List<Future<Double>> fs = new ArrayList<>();
        for (int r = r0; r < r1; r++) {
            final int rr = r;
            fs.add(pool.submit(() -> scan(t, ScanReplicas.prefix(t, seed, rr), all, 0, m).llr));
        }
        for (int i = 0; i < fs.size(); i++) {
            out[i] = get(fs.get(i));
        }
        return out;
    }

    static void checkRange(ScanTables t, long lo, long hi) {
        if (lo < 0 || hi > t.shape.ranges() || lo > hi) {
            throw new IllegalArgumentException("range index slice [" + lo + ", " + hi + ") is not inside [0, "
                    + t.shape.ranges() + ")");
        }
    }

    private static <T> T get(Future<T> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException) {
                throw (RuntimeException) c;
            }
            throw new IllegalStateException(c);
        }
    }
}
