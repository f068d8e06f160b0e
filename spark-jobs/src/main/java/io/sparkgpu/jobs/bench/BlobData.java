package io.sparkgpu.jobs.bench;

import java.io.Serializable;
import java.util.LinkedHashSet;
import java.util.SplittableRandom;
import java.util.stream.IntStream;

/**
 * Seeded Gaussian blobs for benchmarks: {@code blobs} true centres drawn uniformly from [-5, 5)^d, and
 * each point one of them (chosen uniformly) plus N(0, sigma^2) noise per dimension.
 *
 * <p>Every row is generated from its own random stream, seeded from (seed, row index) alone, so any
 * range of rows can be produced independently and in any order: the benchmark's packed arrays and the
 * Spark partitions built for MLlib hold the same values bit for bit, however they are split. Serializable
 * so Spark tasks can generate their own partitions. Does not need Spark.
 */
public final class BlobData implements Serializable {
    private static final long serialVersionUID = 1L;
    /** Rows per unit of parallel work when filling a whole array. */
    static final int FILL_BLOCK_ROWS = 1 << 15;

    public final long seed;
    public final int d;
    public final int blobs;
    public final double sigma;
    private final double[] blobCentres;

    public BlobData(long seed, int d, int blobs, double sigma) {
        if (d <= 0 || blobs <= 0 || !(sigma >= 0)) {
            throw new IllegalArgumentException("need d > 0, blobs > 0, sigma >= 0: d=" + d + " blobs=" + blobs
                    + " sigma=" + sigma);
        }
        this.seed = seed;
        this.d = d;
        this.blobs = blobs;
        this.sigma = sigma;
        SplittableRandom r = new SplittableRandom(mix(seed ^ 0x6A09E667F3BCC909L));
        blobCentres = new double[blobs * d];
        for (int i = 0; i < blobCentres.length; i++) {
            blobCentres[i] = r.nextDouble(-5.0, 5.0);
        }
    }

    /** Writes row {@code row} (d values) to {@code out[off .. off+d)}. */
    public void row(long row, double[] out, int off) {
        SplittableRandom r = new SplittableRandom(mix(seed + mix(row + 0x3C6EF372FE94F82BL)));
        int b = r.nextInt(blobs);
        int cb = b * d;
        for (int j = 0; j < d; j++) {
            out[off + j] = blobCentres[cb + j] + sigma * r.nextGaussian();
        }
    }

    /** Rows [first, first+count) into {@code out} from {@code off}, row-major. */
    public void fill(long first, int count, double[] out, int off) {
        for (int i = 0; i < count; i++) {
            row(first + i, out, off + i * d);
        }
    }

    /** All n rows, row-major, generated in parallel (same values as any other split). */
    public double[] generate(int n) {
        long len = (long) n * d;
        if (len > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("n*d = " + len + " does not fit in one Java array");
        }
        double[] x = new double[(int) len];
        int blocks = (n + FILL_BLOCK_ROWS - 1) / FILL_BLOCK_ROWS;
        IntStream.range(0, blocks).parallel().forEach(b -> {
            int first = b * FILL_BLOCK_ROWS;
            int count = Math.min(FILL_BLOCK_ROWS, n - first);
            fill(first, count, x, first * d);
        });
        return x;
    }

    /** k distinct row indices in [0, n), in the order drawn from {@code seed}. */
    public static int[] sampleRows(int n, int k, long seed) {
        if (k > n) {
            throw new IllegalArgumentException("cannot sample k=" + k + " distinct rows from n=" + n);
        }
        SplittableRandom r = new SplittableRandom(mix(seed ^ 0xBB67AE8584CAA73BL));
        LinkedHashSet<Integer> picked = new LinkedHashSet<>();
        while (picked.size() < k) {
            picked.add(r.nextInt(n));
        }
        return picked.stream().mapToInt(Integer::intValue).toArray();
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }
}
