package io.sparkgpu.tsne.optimize;

import io.sparkgpu.common.ParallelScan;
import io.sparkgpu.tsne.affinity.SparseRows;
import java.util.Arrays;

/**
 * A {@link SparseRows} slice in sliced ELLPACK with local sorting, SELL-C-sigma with C = 32 and sigma = 256
 * (Kreutzer, Hager, Wellein, Fehske and Bishop, "A unified sparse matrix data format for efficient general sparse
 * matrix-vector multiplication on modern processors with wide SIMD units", SIAM J. Sci. Comput. 36, 2014), the
 * layout of the GPU attractive kernel (see the tsne.cu section "attractive, S2G, G2S, Z" for the arrays).
 *
 * <p>Why this layout: the kernel needs one thread per row, summing its entries in CSR order, so that it gives the
 * CPU twin's bits (a warp per row would reorder the sum into a tree). With CSR a warp's 32 threads read 32 unrelated
 * cache lines per step; with ELL the loads of a warp are contiguous (coalesced) but every row is padded to the
 * longest row of the whole slice, and symmetrised kNN rows range from k to well over 2k, so ELL would store (and
 * a warp would idle on) up to twice the entries. HYB moves the overflow to COO, whose per-entry atomics make the
 * row sums order-dependent. SELL-32 pads only to the longest row of each warp's 32 rows, and sorting rows by length
 * inside windows of 256 makes those 32 nearly equal, so padding stays a few per cent while every load coalesces.
 * Building is O(nnz + rows log 256), once per slice; the arrays then stay resident on the device.
 *
 * <p><b>Hub rows.</b> A warp runs as long as its longest row, one dependent load pair per entry batch, and the
 * symmetrised kNN graph of high-dimensional data has hubs: rows with thousands of entries (points that are among
 * the k nearest of many others). A row longer than {@link #HUB_LEN} therefore leaves the SELL part (its slot is
 * padding) and is stored after it in CSR order; the GPU gives each hub row a whole block, whose threads compute the
 * entries' terms in parallel while one thread per axis adds them in CSR order, so the bits stay the twin's.
 */
final class SellRows {
    static final int C = 32;
    static final int SIGMA = 256;
    /** Rows with more entries than this are hub rows (CSR part, one GPU block each). */
    static final int HUB_LEN = 512;

    final int nSlices;
    /** Hub rows (CSR part). */
    final int nHubs;
    /**
     * sliceOff (nSlices + 1) | slotRow (slots) | slotLen (slots) | hubRow (nHubs) | hubPtr (nHubs + 1); hub row h
     * has entries [hubPtr[h], hubPtr[h + 1]) of col/val, after the SELL part (hubPtr[0] = sliceOff[nSlices]).
     */
    final int[] meta;
    /** Entries of col/val: the padded SELL part, then the hub rows. */
    final int entries;
    /** The entries, or null for a layout alone ({@link #layout}: the GPU fills them, tsne_sell_fill). */
    final int[] col;
    final double[] val;

    private SellRows(int nSlices, int nHubs, int[] meta, int entries, int[] col, double[] val) {
        this.nSlices = nSlices;
        this.nHubs = nHubs;
        this.meta = meta;
        this.entries = entries;
        this.col = col;
        this.val = val;
    }

    private static boolean isHub(SparseRows p, int r) {
        return p.rowPtr[r + 1] - p.rowPtr[r] > HUB_LEN;
    }

    /**
     * The SELL layout of p with its entries (col, val) filled on the host: the reference that the device fill
     * (tsne_sell_fill, AttractiveForcesGpu) is tested against.
     */
    static SellRows of(SparseRows p) {
        SellRows l = layout(p);
        final int nSlices = l.nSlices;
        final int slots = nSlices * C;
        final int[] meta = l.meta;
        int[] col = new int[l.entries];
        double[] val = new double[l.entries];
        // slices own disjoint ranges of col/val: filled in parallel, the same arrays as in any order
        java.util.stream.IntStream.range(0, nSlices).parallel().forEach(g -> {
            for (int s = g * C; s < (g + 1) * C; s++) {
                int r = meta[nSlices + 1 + s];
                if (r < 0) {
                    continue;
                }
                int len = meta[nSlices + 1 + slots + s];
                int base = meta[g] + (s % C);
                int from = p.rowPtr[r];
                for (int e = 0; e < len; e++) {
                    col[base + C * e] = p.col[from + e];
                    val[base + C * e] = p.val[from + e];
                }
            }
        });
        int hubRow0 = nSlices + 1 + 2 * slots;
        int hubPtr0 = hubRow0 + l.nHubs;
        for (int h = 0; h < l.nHubs; h++) {
            int r = meta[hubRow0 + h];
            System.arraycopy(p.col, p.rowPtr[r], col, meta[hubPtr0 + h], p.rowPtr[r + 1] - p.rowPtr[r]);
            System.arraycopy(p.val, p.rowPtr[r], val, meta[hubPtr0 + h], p.rowPtr[r + 1] - p.rowPtr[r]);
        }
        return new SellRows(nSlices, l.nHubs, meta, l.entries, col, val);
    }

    /**
     * The SELL layout of p (meta and the entry count) without its entries; padding entries are 0 (col) and 0.0
     * (val) wherever they are filled. Checks that every column index is in 0..n-1.
     */
    static SellRows layout(SparseRows p) {
        final int rows = p.rows;
        final int nSlices = (rows + C - 1) / C;
        final int slots = nSlices * C;
        int nHubs = 0;
        long hubEntries = 0;
        for (int r = 0; r < rows; r++) {
            if (isHub(p, r)) {
                nHubs++;
                hubEntries += p.rowPtr[r + 1] - p.rowPtr[r];
            }
        }
        int[] slotRow = new int[slots];
        Arrays.fill(slotRow, -1);
        // sort each window by decreasing length, ties by row: key = (maxLen - len) << 32 | row; hubs last, as padding
        int maxLen = 0;
        for (int r = 0; r < rows; r++) {
            maxLen = Math.max(maxLen, p.rowPtr[r + 1] - p.rowPtr[r]);
        }
        long[] keys = new long[Math.min(SIGMA, Math.max(rows, 1))];
        for (int w0 = 0; w0 < rows; w0 += SIGMA) {
            int w1 = Math.min(rows, w0 + SIGMA);
            for (int r = w0; r < w1; r++) {
                long len = isHub(p, r) ? -1 : p.rowPtr[r + 1] - p.rowPtr[r];
                keys[r - w0] = ((maxLen - len) << 32) | r;
            }
            Arrays.sort(keys, 0, w1 - w0);
            for (int r = w0; r < w1; r++) {
                int row = (int) keys[r - w0];
                slotRow[r] = isHub(p, row) ? -1 : row;
            }
        }
        int[] meta = new int[nSlices + 1 + 2 * slots + 2 * nHubs + 1];
        long off = 0;
        for (int g = 0; g < nSlices; g++) {
            meta[g] = (int) off;
            int width = 0;
            for (int l = 0; l < C; l++) {
                int r = slotRow[g * C + l];
                if (r >= 0) {
                    width = Math.max(width, p.rowPtr[r + 1] - p.rowPtr[r]);
                }
            }
            off += (long) C * width;
            if (off > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("P slice too large for one GPU layout (" + off
                        + " padded entries); split it into more row slices");
            }
        }
        meta[nSlices] = (int) off;
        if (off + hubEntries > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("P slice too large for one GPU layout (" + (off + hubEntries)
                    + " entries); split it into more row slices");
        }
        final int sellEntries = (int) off;
        off += hubEntries;
        int bad = ParallelScan.firstIndex(p.nnz(), (from, to) -> {
            for (int e = from; e < to; e++) {
                if (p.col[e] < 0 || p.col[e] >= p.n) {
                    return e;
                }
            }
            return -1;
        });
        if (bad >= 0) {
            throw new IllegalArgumentException("P column index " + p.col[bad] + " at entry " + bad
                    + " is outside 0.." + (p.n - 1));
        }
        for (int s = 0; s < slots; s++) {
            int r = slotRow[s];
            meta[nSlices + 1 + s] = r;
            if (r >= 0) {
                meta[nSlices + 1 + slots + s] = p.rowPtr[r + 1] - p.rowPtr[r];
            }
        }
        int hubRow0 = nSlices + 1 + 2 * slots;
        int hubPtr0 = hubRow0 + nHubs;
        int h = 0;
        int at = sellEntries;
        for (int r = 0; r < rows; r++) {
            if (isHub(p, r)) {
                meta[hubRow0 + h] = r;
                meta[hubPtr0 + h] = at;
                at += p.rowPtr[r + 1] - p.rowPtr[r];
                h++;
            }
        }
        meta[hubPtr0 + nHubs] = at;
        return new SellRows(nSlices, nHubs, meta, (int) off, null, null);
    }
}
