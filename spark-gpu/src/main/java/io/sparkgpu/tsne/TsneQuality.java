package io.sparkgpu.tsne;

import java.util.Arrays;

/**
 * Quality of an embedding on m points (usually a seeded sample): trustworthiness (J. Venna, S. Kaski, "Neighborhood
 * preservation in nonlinear projection methods: an experimental study", ICANN 2001), k-nearest-neighbour
 * preservation and leave-one-out kNN label accuracy. Brute force, O(m^2 (d + log m)); ties broken by index.
 */
public final class TsneQuality {
    private TsneQuality() {
    }

    /**
     * T(k) = 1 - 2 / (m k (2m - 3k - 1)) sum_i sum_{j in U_k(i)} (r(i, j) - k), U_k(i) the embedding's k nearest
     * neighbours of i that are not among its k nearest in the input, r(i, j) the input-space rank of j (1-based).
     * 1 means no false neighbours. Needs 1 <= k < m / 2 roughly (the normalisation assumes 2m - 3k - 1 > 0).
     *
     * @param x input points (m x d row-major)
     * @param y embedded points (m x dim row-major), same order
     */
    public static double trustworthiness(double[] x, int d, double[] y, int dim, int m, int k) {
        checkK(m, k);
        double penalty = 0;
        for (int i = 0; i < m; i++) {
            int[] orderX = order(x, d, m, i);
            int[] rankX = new int[m];
            for (int r = 0; r < orderX.length; r++) {
                rankX[orderX[r]] = r + 1;
            }
            int[] orderY = order(y, dim, m, i);
            for (int r = 0; r < k; r++) {
                int j = orderY[r];
                if (rankX[j] > k) {
                    penalty += rankX[j] - k;
                }
            }
        }
        return 1.0 - 2.0 / ((double) m * k * (2.0 * m - 3.0 * k - 1.0)) * penalty;
    }

    /** Mean over the m points of |kNN_input(i) intersect kNN_embedding(i)| / k. */
    public static double knnPreservation(double[] x, int d, double[] y, int dim, int m, int k) {
        checkK(m, k);
        double sum = 0;
        for (int i = 0; i < m; i++) {
            int[] nx = Arrays.copyOf(order(x, d, m, i), k);
            int[] ny = Arrays.copyOf(order(y, dim, m, i), k);
            Arrays.sort(nx);
            int common = 0;
            for (int j : ny) {
                if (Arrays.binarySearch(nx, j) >= 0) {
                    common++;
                }
            }
            sum += (double) common / k;
        }
        return sum / m;
    }

    /** Leave-one-out accuracy of a k-nearest-neighbour majority vote (ties: smallest label) in the embedding. */
    public static double knnLabelAccuracy(double[] y, int dim, int[] labels, int k) {
        int m = labels.length;
        checkK(m, k);
        int maxLabel = 0;
        for (int l : labels) {
            if (l < 0) {
                throw new IllegalArgumentException("labels must be >= 0, got " + l);
            }
            maxLabel = Math.max(maxLabel, l);
        }
        int correct = 0;
        for (int i = 0; i < m; i++) {
            int[] nb = order(y, dim, m, i);
            int[] votes = new int[maxLabel + 1];
            for (int r = 0; r < k; r++) {
                votes[labels[nb[r]]]++;
            }
            int best = 0;
            for (int l = 1; l < votes.length; l++) {
                if (votes[l] > votes[best]) {
                    best = l;
                }
            }
            if (best == labels[i]) {
                correct++;
            }
        }
        return (double) correct / m;
    }

    /** The other m - 1 points ordered by (squared distance to i, index). */
    static int[] order(double[] p, int d, int m, int i) {
        double[] dist = new double[m];
        for (int j = 0; j < m; j++) {
            double s = 0;
            for (int a = 0; a < d; a++) {
                double diff = p[i * d + a] - p[j * d + a];
                s += diff * diff;
            }
            dist[j] = s;
        }
        Integer[] idx = new Integer[m - 1];
        for (int j = 0, t = 0; j < m; j++) {
            if (j != i) {
                idx[t++] = j;
            }
        }
        Arrays.sort(idx, (a, b) -> {
            int c = Double.compare(dist[a], dist[b]);
            return c != 0 ? c : Integer.compare(a, b);
        });
        int[] out = new int[m - 1];
        for (int t = 0; t < out.length; t++) {
            out[t] = idx[t];
        }
        return out;
    }

    private static void checkK(int m, int k) {
        if (k < 1 || k >= m) {
            throw new IllegalArgumentException("quality k must be in 1.." + (m - 1) + " for " + m + " points, got " + k);
        }
    }
}
