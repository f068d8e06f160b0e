package io.sparkgpu.tsne;

import io.sparkgpu.tsne.affinity.SparseRows;
import java.util.Random;

/** Test inputs: Gaussian clusters and a brute-force dense P (test-only reference, independent of TsneAffinities). */
public final class TsneTestData {
    public final int n;
    public final int d;
    public final double[] x;
    public final int[] labels;

    private TsneTestData(int n, int d, double[] x, int[] labels) {
        this.n = n;
        this.d = d;
        this.x = x;
        this.labels = labels;
    }

    /** clusters well-separated Gaussian blobs (centres 20 apart on the axes, unit spread), perCluster points each. */
    public static TsneTestData clusters(int clusters, int perCluster, int d, long seed) {
        Random rnd = new Random(seed);
        int n = clusters * perCluster;
        double[] x = new double[n * d];
        int[] labels = new int[n];
        for (int i = 0; i < n; i++) {
            int c = i % clusters;
            labels[i] = c;
            for (int a = 0; a < d; a++) {
                double centre = (a == c % d) ? 20.0 * (1 + c / d) : 0.0;
                x[i * d + a] = centre + rnd.nextGaussian();
            }
        }
        return new TsneTestData(n, d, x, labels);
    }

    public float[] floats() {
        float[] f = new float[x.length];
        for (int t = 0; t < f.length; t++) {
            f[t] = (float) x[t];
        }
        return f;
    }

    /** Dense brute-force P: Gaussian conditionals calibrated by bisection to the perplexity, symmetrised / 2n. */
    public SparseRows densePerplexityP(double perplexity) {
        double[] cond = new double[n * n];
        double target = Math.log(perplexity);
        for (int i = 0; i < n; i++) {
            double[] d2 = new double[n];
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int a = 0; a < d; a++) {
                    double diff = x[i * d + a] - x[j * d + a];
                    s += diff * diff;
                }
                d2[j] = s;
            }
            double lo = 0;
            double hi = Double.POSITIVE_INFINITY;
            double beta = 1;
            for (int iter = 0; iter < 200; iter++) {
                double sum = 0;
                double sumDP = 0;
                for (int j = 0; j < n; j++) {
                    if (j != i) {
                        double pj = Math.exp(-beta * d2[j]);
                        sum += pj;
                        sumDP += beta * d2[j] * pj;
                    }
                }
                double h = Math.log(sum) + sumDP / sum;
                if (h > target) {
                    lo = beta;
                    beta = hi == Double.POSITIVE_INFINITY ? beta * 2 : (beta + hi) / 2;
                } else {
                    hi = beta;
                    beta = (beta + lo) / 2;
                }
            }
            double sum = 0;
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    sum += Math.exp(-beta * d2[j]);
                }
            }
            for (int j = 0; j < n; j++) {
                cond[i * n + j] = j == i ? 0 : Math.exp(-beta * d2[j]) / sum;
            }
        }
        int[] ptr = new int[n + 1];
        int[] col = new int[n * (n - 1)];
        double[] val = new double[n * (n - 1)];
        int e = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (j != i) {
                    col[e] = j;
                    val[e] = (cond[i * n + j] + cond[j * n + i]) / (2.0 * n);
                    e++;
                }
            }
            ptr[i + 1] = e;
        }
        return new SparseRows(n, 0, n, ptr, col, val);
    }
}
