package io.sparkgpu.scan;

/**
 * Monte Carlo replicas under the null hypothesis, CPU twin of the replica kernels of {@code scan.cu}. Replica
 * r of seed s is a pure function of (s, r) through {@link ScanRandom}, so it is identical on the GPU and the
 * CPU and whichever task draws it.
 * <ul>
 *   <li>Poisson: each of the N cases independently falls into cell i with probability q_i / Q (quantized
 *       baselines): item k draws a uniform integer u in [0, Q) and takes the first cell whose running baseline
 *       sum exceeds u. This is the multinomial allocation of the N cases. Whole counts: N = C, each case one
 *       unit. Fractional counts (total C): N = C rounded half up (at least 1), each case carrying C / N (its
 *       share of the quantized total, {@link ScanTables#replicaUnit}), so the replica's total is C exactly and a
 *       cell's count is (C / N) times a Multinomial(N, b_i / B) count: mean C b_i / B, variance C / N times the
 *       conditional Poisson one, a factor within 1 +- 1 / (2N) of 1 once C &gt;= 1.</li>
 *   <li>Expectation-based Poisson: a Poisson total N_r with mean B (host draw), then the same allocation of
 *       N_r cases, which makes the cell counts independent Poisson(b_i): whole counts, also for fractional
 *       observed counts (in the observed data's fixed-point units).</li>
 *   <li>Bernoulli: case k is individual pi(k) of the N individuals, pi a keyed permutation of [0, N), so the C
 *       cases are C distinct individuals; each maps to its cell through the running population sum.</li>
 *   <li>Normal: the value of non-empty cell j becomes the value of non-empty cell pi(j).</li>
 * </ul>
 * Cost: O(C log cells) for the count models, O(cells) for the normal model, plus the O(cells) prefix build.
 */
final class ScanReplicas {
    /** Offset of the stream used for the EBP Poisson totals, so they never share words with the allocation. */
    static final long TOTAL_STREAM = 0x632BE59BD9B4E019L;

    private ScanReplicas() {
    }

    /** Checks that the model's replicas can be drawn (normal model: equal observations per non-empty cell). */
    public static void checkSupported(ScanTables t) {
        if (t.model == ScanModel.NORMAL && t.equalObservations < 0) {
            throw new IllegalArgumentException("Monte Carlo replicas of the normal model permute the cell values, "
                    + "which needs the same number of observations in every non-empty cell; this grid's cells hold "
                    + "different numbers (set numReplicas = 0 to scan without p-values)");
        }
    }

    /**
     * Number of cases replica r allocates: N ({@link ScanTables#replicaCases}: C for whole counts), or for the
     * expectation-based model a Poisson(B) draw.
     */
    public static long casesOf(ScanTables t, long seed, long replica) {
        if (t.model == ScanModel.EBP) {
            long n = ScanRandom.poisson(ScanRandom.streamKey(seed ^ TOTAL_STREAM, replica), t.totalBase);
            if (n > t.replicaCasesLimit) { // probability below e^-500 (ScanTables.ebpReplicaBound)
                throw new IllegalStateException("replica " + replica + " drew " + n + " cases, more than the "
                        + t.replicaCasesLimit + " its fixed-point units hold; please report this");
            }
            return n;
        }
        return t.replicaCases;
    }

    /** Table units replica case k adds to its cell. */
    static long unitOf(ScanTables t, long k) {
        return k < t.replicaExtra ? t.replicaUnit + 1 : t.replicaUnit;
    }

    /** First cell whose running baseline sum exceeds u (u < the total). */
    static int cellOf(long[] cum, long u) {
        int lo = 0;
        int hi = cum.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cum[mid] > u) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /** Per-cell values (counts, or fixed-point values for the normal model) of replica r. */
    public static long[] cells(ScanTables t, long seed, long replica) {
        checkSupported(t);
        long key = ScanRandom.streamKey(seed, replica);
        int cells = t.shape.cells();
        long[] out = new long[cells];
        switch (t.model) {
            case NORMAL: {
                int l = t.valueCells.length;
                for (int j = 0; j < l; j++) {
                    out[t.valueCells[j]] = t.valueQ[(int) ScanRandom.permute(key, j, l)];
                }
                break;
            }
            case BERNOULLI: {
                long c = t.casesTotalQ;
                long n = t.baseTotalQ;
                for (long k = 0; k < c; k++) {
                    out[cellOf(t.baseCum, ScanRandom.permute(key, k, n))]++;
                }
                break;
            }
            default: {
                long c = casesOf(t, seed, replica);
                long q = t.baseTotalQ;
                for (long k = 0; k < c; k++) {
                    out[cellOf(t.baseCum, ScanRandom.uniformBelow(key, k, q))] += unitOf(t, k);
                }
                break;
            }
        }
        return out;
    }

    /** The cases prefix table of replica r. */
    public static long[] prefix(ScanTables t, long seed, long replica) {
        return ScanTables.prefix(t.shape, cells(t, seed, replica));
    }
}
