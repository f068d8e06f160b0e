package io.sparkgpu.scan;

/**
 * Counter-based random numbers for Monte Carlo replicas: every number is a pure function of (seed, replica,
 * counter), so a replica is the same whichever Spark task, thread or GPU block draws it, and the CUDA kernels
 * ({@code scan.cu}) reproduce these functions bit for bit (integer arithmetic only).
 *
 * <p>The generator is SplitMix64 used in counter mode: the i-th word of stream {@code key} is
 * mix(key + (i + 1) * 0x9E3779B97F4A7C15), mix being SplitMix64's output function (G. L. Steele, D. Lea,
 * C. H. Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014). Bounded integers use
 * Lemire's multiply-shift with rejection, which is exactly uniform (D. Lemire, "Fast random integer
 * generation in an interval", ACM TOMACS 29(1), 2019). Sampling without replacement uses a keyed Feistel
 * permutation of [0, 2^m) restricted to [0, n) by cycle walking (J. Black, P. Rogaway, "Ciphers with
 * arbitrary finite domains", CT-RSA 2002).
 */
final class ScanRandom {
    static final long GOLDEN = 0x9E3779B97F4A7C15L;
    static final long STREAM = 0xD1B54A32D192ED03L;
    /** Draws per item reserved for rejection retries. */
    static final int ATTEMPTS = 64;
    static final int FEISTEL_ROUNDS = 6;

    private ScanRandom() {
    }

    /** SplitMix64's output function (a bijection of 64-bit words). */
    public static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** The key of replica {@code replica}'s stream for {@code seed}. */
    public static long streamKey(long seed, long replica) {
        return mix(mix(seed) + (replica + 1) * STREAM);
    }

    /** Word {@code counter} of stream {@code key}. */
    public static long word(long key, long counter) {
        return mix(key + (counter + 1) * GOLDEN);
    }

    /** High 64 bits of the unsigned product of {@code r} and {@code bound} (bound < 2^63). */
    static long mulHigh(long r, long bound) {
        return Math.multiplyHigh(r, bound) + ((r >> 63) & bound);
    }

    /**
     * A uniform integer in [0, bound) for item {@code item} of stream {@code key} (1 <= bound < 2^63, item <
     * 2^57): attempt j uses word item * 64 + j; a candidate is rejected when the low half of the product falls
     * below (2^64 - bound) mod bound. After 64 rejections (probability below 2^-128) the last candidate is kept.
     */
    public static long uniformBelow(long key, long item, long bound) {
        long hi = 0;
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            long r = word(key, item * ATTEMPTS + attempt);
            hi = mulHigh(r, bound);
            long lo = r * bound;
            if (Long.compareUnsigned(lo, bound) >= 0) {
                return hi;
            }
            long threshold = Long.remainderUnsigned(-bound, bound);
            if (Long.compareUnsigned(lo, threshold) >= 0) {
                return hi;
            }
        }
        return hi;
    }

    /** Half-width (bits) of the Feistel network used for a domain of n elements: ceil(log2 n) / 2, at least 1. */
    static int feistelHalfBits(long n) {
        int bits = 64 - Long.numberOfLeadingZeros(Math.max(1, n - 1));
        return Math.max(1, (bits + 1) / 2);
    }

    /** One pass of the keyed Feistel network on [0, 2^(2h)). */
    static long feistel(long key, long x, int h) {
        long mask = (1L << h) - 1;
        long left = x >>> h;
        long right = x & mask;
        for (int round = 0; round < FEISTEL_ROUNDS; round++) {
            long f = mix(key + right * GOLDEN + (round + 1) * STREAM) & mask;
            long t = left ^ f;
            left = right;
            right = t;
        }
        return (left << h) | right;
    }

    /** The image of x in [0, n) under the keyed permutation of [0, n) (cycle walking). */
    public static long permute(long key, long x, long n) {
        int h = feistelHalfBits(n);
        long y = feistel(key, x, h);
        while (y >= n) {
            y = feistel(key, y, h);
        }
        return y;
    }

    /** A uniform double in [0, 1) from word {@code counter} of stream {@code key} (53 random bits). */
    static double uniformDouble(long key, long counter) {
        return (word(key, counter) >>> 11) * 0x1p-53;
    }

    /**
     * A Poisson variate with the given mean, drawn from stream {@code key} (host only; the replicas of the
     * expectation-based Poisson model draw their total with it). Inversion for means below 10, otherwise
     * Hörmann's transformed rejection with squeeze, PTRS (W. Hörmann, "The transformed rejection method for
     * generating Poisson random variables", Insurance: Mathematics and Economics 12, 1993). Uses StrictMath,
     * so the result is the same on every JVM.
     */
    public static long poisson(long key, double mean) {
        if (!(mean >= 0) || Double.isInfinite(mean)) {
            throw new IllegalArgumentException("Poisson mean must be finite and >= 0, got " + mean);
        }
        if (mean == 0) {
            return 0;
        }
        long counter = 0;
        if (mean < 10) {
            double limit = StrictMath.exp(-mean);
            double prod = uniformDouble(key, counter++);
            long k = 0;
            while (prod > limit) {
                prod *= uniformDouble(key, counter++);
                k++;
            }
            return k;
        }
        double slam = StrictMath.sqrt(mean);
        double logLam = StrictMath.log(mean);
        double b = 0.931 + 2.53 * slam;
        double a = -0.059 + 0.02483 * b;
        double invAlpha = 1.1239 + 1.1328 / (b - 3.4);
        double vr = 0.9277 - 3.6224 / (b - 2);
        while (true) {
            double u = uniformDouble(key, counter++) - 0.5;
            double v = uniformDouble(key, counter++);
            double us = 0.5 - Math.abs(u);
            long k = (long) Math.floor((2 * a / us + b) * u + mean + 0.43);
            if (us >= 0.07 && v <= vr) {
                return k;
            }
            if (k < 0 || (us < 0.013 && v > us)) {
                continue;
            }
            if (StrictMath.log(v) + StrictMath.log(invAlpha) - StrictMath.log(a / (us * us) + b)
                    <= -mean + k * logLam - logFactorial(k)) {
                return k;
            }
        }
    }

    /** ln(k!) : exact products below 20, Stirling's series above (absolute error below 1e-13). */
    static double logFactorial(long k) {
        if (k < 20) {
            double p = 1;
            for (long i = 2; i <= k; i++) {
                p *= i;
            }
            return StrictMath.log(p);
        }
        double x = k + 1.0;
        double x2 = x * x;
        return (x - 0.5) * StrictMath.log(x) - x + 0.5 * StrictMath.log(2 * Math.PI)
                + (1.0 / 12 - (1.0 / 360 - 1.0 / (1260 * x2)) / x2) / x;
    }
}
