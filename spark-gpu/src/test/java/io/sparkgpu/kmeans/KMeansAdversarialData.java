package io.sparkgpu.kmeans;

import java.util.Random;

/**
 * Data sets that stress the FP32 screening of the k-means kernels: exact ties, duplicate centres, severe
 * cancellation far from the origin, huge and tiny magnitudes, near-ties, zero weights; and well-separated
 * blobs on which almost nothing should need a recheck. Each holds the points and the centres.
 */
final class KMeansAdversarialData {
    final String name;
    final KMeansData data;
    final double[] centres;
    final int k;

    KMeansAdversarialData(String name, KMeansData data, double[] centres, int k) {
        this.name = name;
        this.data = data;
        this.centres = centres;
        this.k = k;
    }

    @Override
    public String toString() {
        return name + " (n=" + data.n + " d=" + data.d + " k=" + k + ")";
    }

    /** The adversarial kinds, see {@link #make}. */
    static final String[] KINDS = {"ties", "duplicates", "far", "huge", "tiny", "mixed", "neartie", "gauss"};

    private static double[] weights(Random r, int n) {
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            w[i] = r.nextInt(4) == 0 ? 0.0 : r.nextInt(3) == 0 ? 1.0 : r.nextDouble() * 3;
        }
        return w;
    }

    /**
     * kind: ties (integer grid points and integer centres, many points exactly equidistant from two centres),
     * duplicates (centres repeated, also as neighbours c, c+1), far (1e6 + noise 1e-3: severe cancellation),
     * huge (1e30 scale), tiny (1e-30 scale), mixed (dimensions of scale 1e-20 .. 1e20), neartie (points on the
     * bisector of two centres, nudged by one ulp), gauss (plain Gaussian points, centres from the data).
     */
    static KMeansAdversarialData make(String kind, Random r, int n, int d, int k) {
        double[] x = new double[n * d];
        double[] c = new double[k * d];
        switch (kind) {
            case "ties": {
                for (int i = 0; i < x.length; i++) {
                    x[i] = r.nextInt(3) - 1;
                }
                for (int i = 0; i < c.length; i++) {
                    c[i] = r.nextInt(3) - 1;
                }
                break;
            }
            case "duplicates": {
                for (int i = 0; i < x.length; i++) {
                    x[i] = r.nextGaussian();
                }
                for (int q = 0; q < k; q++) {
                    if (q > 0 && r.nextBoolean()) {
                        int from = r.nextBoolean() ? q - 1 : r.nextInt(q);
                        System.arraycopy(c, from * d, c, q * d, d);
                    } else {
                        System.arraycopy(x, r.nextInt(n) * d, c, q * d, d);
                    }
                }
                break;
            }
            case "far": {
                for (int i = 0; i < x.length; i++) {
                    x[i] = 1e6 + r.nextGaussian() * 1e-3;
                }
                for (int i = 0; i < c.length; i++) {
                    c[i] = 1e6 + r.nextGaussian() * 1e-3;
                }
                break;
            }
            case "huge":
            case "tiny": {
                double scale = kind.equals("huge") ? 1e30 : 1e-30;
                for (int i = 0; i < x.length; i++) {
                    x[i] = scale * r.nextGaussian();
                }
                for (int q = 0; q < k; q++) {
                    System.arraycopy(x, r.nextInt(n) * d, c, q * d, d);
                    c[q * d] += scale * 1e-3;
                }
                break;
            }
            case "mixed": {
                for (int i = 0; i < n; i++) {
                    for (int j = 0; j < d; j++) {
                        x[i * d + j] = Math.pow(10, (j * 7) % 41 - 20) * r.nextGaussian();
                    }
                }
                for (int q = 0; q < k; q++) {
                    System.arraycopy(x, r.nextInt(n) * d, c, q * d, d);
                }
                break;
            }
            case "neartie": {
                for (int i = 0; i < c.length; i++) {
                    c[i] = r.nextGaussian() * 3;
                }
                for (int i = 0; i < n; i++) {
                    int a = r.nextInt(k);
                    int b = k > 1 ? (a + 1 + r.nextInt(k - 1)) % k : a;
                    for (int j = 0; j < d; j++) {
                        double mid = 0.5 * (c[a * d + j] + c[b * d + j]);
                        int ulps = r.nextInt(5) - 2;
                        x[i * d + j] = ulps == 0 ? mid : ulps > 0 ? Math.nextUp(mid) : Math.nextDown(mid);
                    }
                }
                break;
            }
            default: {
                for (int i = 0; i < x.length; i++) {
                    x[i] = r.nextGaussian() * (1 + i % 5) - 2;
                }
                for (int q = 0; q < k; q++) {
                    System.arraycopy(x, r.nextInt(n) * d, c, q * d, d);
                }
            }
        }
        return new KMeansAdversarialData(kind, new KMeansData(x, weights(r, n), n, d, null), c, k);
    }

    /** k Gaussian blobs (centres uniform in [-5,5)^d, noise sigma) and centres = the blob centres + small noise. */
    static KMeansAdversarialData blobs(Random r, int n, int d, int k, double sigma) {
        double[] truth = new double[k * d];
        for (int i = 0; i < truth.length; i++) {
            truth[i] = r.nextDouble() * 10 - 5;
        }
        double[] x = new double[n * d];
        for (int i = 0; i < n; i++) {
            int b = r.nextInt(k);
            for (int j = 0; j < d; j++) {
                x[i * d + j] = truth[b * d + j] + sigma * r.nextGaussian();
            }
        }
        double[] c = truth.clone();
        for (int i = 0; i < c.length; i++) {
            c[i] += 0.05 * sigma * r.nextGaussian();
        }
        double[] w = new double[n];
        java.util.Arrays.fill(w, 1.0);
        return new KMeansAdversarialData("blobs", new KMeansData(x, w, n, d, null), c, k);
    }

    /** Fixed-point scales covering this data (as the estimator derives them). */
    KMeansScales scales() {
        return KMeansCpuTest.scalesFor(data, false);
    }
}
