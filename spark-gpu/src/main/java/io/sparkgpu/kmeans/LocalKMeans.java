package io.sparkgpu.kmeans;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Weighted k-means++ (Arthur and Vassilvitskii, SODA 2007) followed by Lloyd iterations on a small
 * candidate set on the driver: the last stage of k-means||. Deterministic for a given seed and candidate
 * order. O(iterations * m * k * d) for m candidates.
 */
final class LocalKMeans {
    private LocalKMeans() {
    }

    static double[] kMeansPlusPlus(double[] pts, double[] w, int m, int d, int k, boolean cosine, long seed, int iters) {
        SplittableRandom rnd = new SplittableRandom(seed ^ 0x5DEECE66DL);
        double[] centres = new double[k * d];
        boolean[] taken = new boolean[m];
        int first = pickWeighted(w, null, taken, rnd);
        System.arraycopy(pts, first * d, centres, 0, d);
        taken[first] = true;
        double[] dist = new double[m];
        for (int i = 0; i < m; i++) {
            dist[i] = distance(pts, i * d, centres, 0, d, cosine);
        }
        for (int c = 1; c < k; c++) {
            int pick = pickWeighted(w, dist, taken, rnd);
            taken[pick] = true;
            System.arraycopy(pts, pick * d, centres, c * d, d);
            for (int i = 0; i < m; i++) {
                dist[i] = Math.min(dist[i], distance(pts, i * d, centres, c * d, d, cosine));
            }
        }
        int[] label = new int[m];
        for (int it = 0; it < iters; it++) {
            boolean moved = false;
            for (int i = 0; i < m; i++) {
                int best = KMeansCpu.nearest(Arrays.copyOfRange(pts, i * d, i * d + d), centres, k, d, cosine);
                moved |= best != label[i] || it == 0;
                label[i] = best;
            }
            if (!moved) {
                break;
            }
            double[] sums = new double[k * d];
            double[] ws = new double[k];
            for (int i = 0; i < m; i++) {
                ws[label[i]] += w[i];
                for (int j = 0; j < d; j++) {
                    sums[label[i] * d + j] += w[i] * pts[i * d + j];
                }
            }
            for (int c = 0; c < k; c++) {
                if (ws[c] <= 0) {
                    continue;
                }
                double ss = 0;
                for (int j = 0; j < d; j++) {
                    double v = sums[c * d + j] / ws[c];
                    sums[c * d + j] = v;
                    ss += v * v;
                }
                if (cosine && ss == 0) {
                    continue;
                }
                double norm = cosine ? Math.sqrt(ss) : 1.0;
                for (int j = 0; j < d; j++) {
                    centres[c * d + j] = sums[c * d + j] / norm;
                }
            }
        }
        return centres;
    }

    private static double distance(double[] a, int ab, double[] b, int bb, int d, boolean cosine) {
        return cosine ? Math.max(0.0, KMeansCpu.cosineDistance(a, ab, b, bb, d)) : KMeansCpu.fullSquared(a, ab, b, bb, d);
    }

    /** Index drawn with probability proportional to w (times dist when given) among untaken candidates. */
    private static int pickWeighted(double[] w, double[] dist, boolean[] taken, SplittableRandom rnd) {
        double total = 0;
        for (int i = 0; i < w.length; i++) {
            if (!taken[i]) {
                total += w[i] * (dist == null ? 1.0 : dist[i]);
            }
        }
        if (total > 0) {
            double r = rnd.nextDouble() * total;
            double acc = 0;
            int last = -1;
            for (int i = 0; i < w.length; i++) {
                if (taken[i]) {
                    continue;
                }
                double p = w[i] * (dist == null ? 1.0 : dist[i]);
                if (p <= 0) {
                    continue;
                }
                last = i;
                acc += p;
                if (r < acc) {
                    return i;
                }
            }
            if (last >= 0) {
                return last;
            }
        }
        for (int i = 0; i < w.length; i++) { // every remaining candidate has zero weight or distance
            if (!taken[i]) {
                return i;
            }
        }
        throw new IllegalStateException("no candidate left for k-means++");
    }
}
