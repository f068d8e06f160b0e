package io.sparkgpu.isotonic;

import java.io.Serializable;
import java.util.Arrays;

/**
 * A weighted multiset of labels that reports its lower weighted median, the smallest label v with
 * 2 * W(labels <= v) >= W(all), exactly: weights are the 128-bit fixed-point integers of {@link IsoScales}.
 * Two heaps (labels at or below the median in a max-heap, the others in a min-heap) keep the median at the top
 * of the lower heap; inserting one label costs O(log n) plus the rebalancing moves it causes.
 *
 * <p>The lower median is a Cauchy mean: the median of the union of two sets lies between their medians. That
 * is the property under which pooling adjacent violators solves the L1 problem (Robertson, Wright and Dykstra,
 * "Order Restricted Statistical Inference", 1988, Sections 1.3-1.4).
 */
final class MedianSet implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Min-heap of keys with (lo, hi) weights and their exact total. The lower half stores negated labels. */
    static final class Heap implements Serializable {
        private static final long serialVersionUID = 1L;
        double[] key = new double[4];
        long[] w = new long[8];
        int n;
        long totLo;
        long totHi;

        void push(double k, long w0, long w1) {
            if (n == key.length) {
                key = Arrays.copyOf(key, 2 * n);
                w = Arrays.copyOf(w, 4 * n);
            }
            int i = n++;
            while (i > 0) {
                int p = (i - 1) >>> 1;
                if (!(k < key[p])) {
                    break;
                }
                key[i] = key[p];
                w[2 * i] = w[2 * p];
                w[2 * i + 1] = w[2 * p + 1];
                i = p;
            }
            key[i] = k;
            w[2 * i] = w0;
            w[2 * i + 1] = w1;
            long lo = totLo + w0;
            totHi += w1 + (Long.compareUnsigned(lo, totLo) < 0 ? 1 : 0);
            totLo = lo;
        }

        /** Removes the top; its key and weight must have been read first. */
        void pop() {
            long w0 = w[0];
            long w1 = w[1];
            long lo = totLo - w0;
            totHi = totHi - w1 - (Long.compareUnsigned(totLo, w0) < 0 ? 1 : 0);
            totLo = lo;
            n--;
            if (n == 0) {
                return;
            }
            double k = key[n];
            long l0 = w[2 * n];
            long l1 = w[2 * n + 1];
            int i = 0;
            while (true) {
                int c = 2 * i + 1;
                if (c >= n) {
                    break;
                }
                if (c + 1 < n && key[c + 1] < key[c]) {
                    c++;
                }
                if (!(key[c] < k)) {
                    break;
                }
                key[i] = key[c];
                w[2 * i] = w[2 * c];
                w[2 * i + 1] = w[2 * c + 1];
                i = c;
            }
            key[i] = k;
            w[2 * i] = l0;
            w[2 * i + 1] = l1;
        }
    }

    final Heap lower = new Heap(); // negated labels: its top is the largest label of the lower half
    final Heap upper = new Heap();

    int size() {
        return lower.n + upper.n;
    }

    /** Adds one label (weight (w0, w1) > 0) and restores the median invariant. */
    void add(double label, long w0, long w1) {
        insert(label, w0, w1);
        rebalance();
    }

    private void insert(double label, long w0, long w1) {
        if (lower.n == 0 || label <= -lower.key[0]) {
            lower.push(-label, w0, w1);
        } else {
            upper.push(label, w0, w1);
        }
    }

    /** Adds every label of {@code other} (which is left unchanged). */
    void addAll(MedianSet other) {
        for (Heap h : new Heap[] {other.lower, other.upper}) {
            boolean negated = h == other.lower;
            for (int i = 0; i < h.n; i++) {
                insert(negated ? -h.key[i] : h.key[i], h.w[2 * i], h.w[2 * i + 1]);
            }
        }
        rebalance();
    }

    private static int cmpU(long aLo, long aHi, long bLo, long bHi) {
        int c = Long.compareUnsigned(aHi, bHi);
        return c != 0 ? c : Long.compareUnsigned(aLo, bLo);
    }

    /** Moves tops between the heaps until 2*W(lower) >= W and 2*(W(lower) - w(top of lower)) < W. */
    private void rebalance() {
        while (true) {
            if (cmpU(lower.totLo, lower.totHi, upper.totLo, upper.totHi) < 0) { // 2 W(lower) < W
                double k = upper.key[0];
                long w0 = upper.w[0];
                long w1 = upper.w[1];
                upper.pop();
                lower.push(-k, w0, w1);
                continue;
            }
            if (lower.n > 0) {
                long t0 = lower.w[0];
                long t1 = lower.w[1];
                long x0 = lower.totLo - t0; // W(lower) - w(top)
                long x1 = lower.totHi - t1 - (Long.compareUnsigned(lower.totLo, t0) < 0 ? 1 : 0);
                long y0 = upper.totLo + t0; // W(upper) + w(top)
                long y1 = upper.totHi + t1 + (Long.compareUnsigned(y0, upper.totLo) < 0 ? 1 : 0);
                if (cmpU(x0, x1, y0, y1) >= 0) { // 2 (W(lower) - w(top)) >= W
                    double k = -lower.key[0];
                    lower.pop();
                    upper.push(k, t0, t1);
                    continue;
                }
            }
            return;
        }
    }

    /** The lower weighted median (NaN for an empty set). */
    double median() {
        return lower.n == 0 ? Double.NaN : -lower.key[0] + 0.0;
    }

    /** Total weight (lo, hi). */
    long weightLo() {
        long lo = lower.totLo + upper.totLo;
        return lo;
    }

    long weightHi() {
        long lo = lower.totLo + upper.totLo;
        return lower.totHi + upper.totHi + (Long.compareUnsigned(lo, lower.totLo) < 0 ? 1 : 0);
    }

    /** Every (label, weight lo, weight hi) of the set, in no particular order. */
    void forEach(LabelConsumer c) {
        for (int i = 0; i < lower.n; i++) {
            c.accept(-lower.key[i] + 0.0, lower.w[2 * i], lower.w[2 * i + 1]);
        }
        for (int i = 0; i < upper.n; i++) {
            c.accept(upper.key[i], upper.w[2 * i], upper.w[2 * i + 1]);
        }
    }

    interface LabelConsumer {
        void accept(double label, long w0, long w1);
    }
}
