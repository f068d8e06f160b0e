package io.sparkgpu.kmeans;

import java.math.BigDecimal;

/**
 * A Java replica of the decision logic of the FP32 screening kernels (kmeans_filt_* in kmeans.cu), for
 * CPU-only tests of the error bound and of the recheck logic: the same FP32 operations (Math.fma on floats
 * is IEEE fusedMultiplyAdd with one rounding, like __fmaf_rn), and the kernel's directed roundings
 * (__fmaf_ru, __fsqrt_ru, __fadd_ru, __fsub_rd) emulated exactly with BigDecimal.
 */
final class KMeansFilterEmulator {
    long rechecks;
    /** Largest |e_c - T_c| / B seen (B without the safety factor), over the points checked by {@link #checkBound}. */
    double worstRatio;

    private KMeansFilterEmulator() {
    }

    static KMeansFilterEmulator create() {
        return new KMeansFilterEmulator();
    }

    private static BigDecimal bd(float f) {
        return new BigDecimal(f);
    }

    /** The float nearest to exact in the given direction (up: smallest float >= exact; down: largest <=). */
    static float round(BigDecimal exact, boolean up) {
        float f = exact.floatValue();
        if (Float.isInfinite(f)) {
            return up ? (f > 0 ? f : -Float.MAX_VALUE) : (f < 0 ? f : Float.MAX_VALUE);
        }
        if (up) {
            while (bd(f).compareTo(exact) < 0) {
                f = Math.nextUp(f);
            }
            while (!Float.isInfinite(Math.nextDown(f)) && bd(Math.nextDown(f)).compareTo(exact) >= 0) {
                f = Math.nextDown(f);
            }
        } else {
            while (bd(f).compareTo(exact) > 0) {
                f = Math.nextDown(f);
            }
            while (!Float.isInfinite(Math.nextUp(f)) && bd(Math.nextUp(f)).compareTo(exact) <= 0) {
                f = Math.nextUp(f);
            }
        }
        return f;
    }

    static boolean finite(float... v) {
        for (float f : v) {
            if (!Float.isFinite(f)) {
                return false;
            }
        }
        return true;
    }

    static float fmaRu(float a, float b, float c) {
        if (!finite(a, b, c)) {
            return Math.fma(a, b, c);
        }
        return round(bd(a).multiply(bd(b)).add(bd(c)), true);
    }

    static float addRu(float a, float b) {
        return finite(a, b) ? round(bd(a).add(bd(b)), true) : a + b;
    }

    static float subRd(float a, float b) {
        return finite(a, b) ? round(bd(a).subtract(bd(b)), false) : a - b;
    }

    static float sqrtRu(float a) {
        if (!(a > 0) || Float.isInfinite(a)) {
            return (float) Math.sqrt(a);
        }
        float r = (float) Math.sqrt(a);
        BigDecimal ea = bd(a);
        while (bd(r).multiply(bd(r)).compareTo(ea) < 0) {
            r = Math.nextUp(r);
        }
        while (bd(Math.nextDown(r)).multiply(bd(Math.nextDown(r))).compareTo(ea) >= 0) {
            r = Math.nextDown(r);
        }
        return r;
    }

    static float f(int bits) {
        return Float.intBitsToFloat(bits);
    }

    /** x' of point i, as the kernel computes it. */
    static float[] xPrime(KMeansGpu.Filter fl, double[] x, int base, int d) {
        float[] xp = new float[d];
        for (int j = 0; j < d; j++) {
            xp[j] = (float) ((x[base + j] - fl.origin[j]) * fl.s);
        }
        return xp;
    }

    /** e_c of the kernel: fnc_c + sum_j x'_j * fc_cj, an FP32 fma chain in dimension order. */
    static float screen(KMeansGpu.Filter fl, float[] xp, int c, int d) {
        final int dp = KMeansGpu.paddedDim(d);
        float e = f(fl.fncBits[c]);
        for (int j = 0; j < d; j++) {
            e = Math.fma(xp[j], f(fl.fcBits[c * dp + j]), e);
        }
        return e;
    }

    /** R of the kernel (X + C rounded up). */
    static float radius(KMeansGpu.Filter fl, float[] xp) {
        float nx = 0f;
        for (float v : xp) {
            nx = fmaRu(v, v, nx);
        }
        return addRu(sqrtRu(nx), fl.cn);
    }

    static float bound(KMeansGpu.Filter fl, float r) {
        return fmaRu(fmaRu(fl.c2, r, fl.c1), r, fl.c0);
    }

    /**
     * The kernel's nearest centre of point i (labels must equal KMeansCpu's); counts rechecks.
     */
    int nearest(KMeansGpu.Filter fl, double[] x, int i, double[] centres, int k, int d) {
        final int base = i * d;
        float[] xp = xPrime(fl, x, base, d);
        float r = radius(fl, xp);
        boolean ok = r <= fl.rlim;
        float b = bound(fl, r);
        float e1 = Float.POSITIVE_INFINITY;
        float e2 = Float.POSITIVE_INFINITY;
        int i1 = 0;
        final int k2 = (k + 1) & ~1;
        for (int c = 0; c < k2; c++) {
            float e = screen(fl, xp, c, d);
            if (e < e1) {
                e2 = e1;
                e1 = e;
                i1 = c;
            } else {
                if (!Float.isNaN(e)) { // fminf(e2, NaN) = e2
                    e2 = Math.min(e2, e);
                }
            }
        }
        if (ok && subRd(e2, b) > addRu(e1, b)) {
            return i1;
        }
        rechecks++;
        float u = ok ? addRu(e1, b) : Float.NaN;
        int best = 0;
        double bestD = 0;
        boolean first = true;
        for (int c = 0; c < k; c++) {
            float e = screen(fl, xp, c, d);
            if (!(subRd(e, b) > u)) {
                double dc = KMeansCpu.fullSquared(x, base, centres, c * d, d);
                if (first || dc < bestD) {
                    bestD = dc;
                    best = c;
                }
                first = false;
            }
        }
        return best;
    }

    /**
     * Checks |e_c - T_c| <= B / SAFETY for every centre (T_c = s^2 D_c - ||x'||^2 exactly, D_c the twin's
     * FP64 distance) when R <= Rlim; records the worst ratio. Returns false if the bound is violated.
     */
    boolean checkBound(KMeansGpu.Filter fl, double[] x, int i, double[] centres, int k, int d) {
        final int base = i * d;
        float[] xp = xPrime(fl, x, base, d);
        float r = radius(fl, xp);
        if (!(r <= fl.rlim)) {
            return true;
        }
        float b = bound(fl, r);
        BigDecimal nx = BigDecimal.ZERO;
        for (float v : xp) {
            nx = nx.add(bd(v).multiply(bd(v)));
        }
        BigDecimal s2 = new BigDecimal(fl.s).multiply(new BigDecimal(fl.s));
        BigDecimal lim = new BigDecimal(b / KMeansGpu.Filter.SAFETY);
        for (int c = 0; c < k; c++) {
            double dc = KMeansCpu.fullSquared(x, base, centres, c * d, d);
            BigDecimal t = s2.multiply(new BigDecimal(dc)).subtract(nx);
            BigDecimal err = bd(screen(fl, xp, c, d)).subtract(t).abs();
            if (err.compareTo(lim) > 0) {
                return false;
            }
            if (lim.signum() > 0) {
                worstRatio = Math.max(worstRatio, err.doubleValue() / lim.doubleValue());
            }
        }
        return true;
    }
}
