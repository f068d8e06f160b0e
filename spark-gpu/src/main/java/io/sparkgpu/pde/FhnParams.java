package io.sparkgpu.pde;

import static io.sparkgpu.ml.ParamChecks.require;

import java.io.Serializable;

/**
 * The parameters of one simulation (one row of a sweep): excitability {@code a}, recovery rate {@code eps},
 * recovery decay {@code gamma}, stimulus amplitude {@code I} and diffusion {@code D} of
 * v_t = D v_xx + v (a - v) (v - 1) - w + I p(x) s(t), w_t = eps (v - gamma w).
 */
public final class FhnParams implements Serializable {
    private static final long serialVersionUID = 1L;

    public final double a;
    public final double eps;
    public final double gamma;
    public final double current;
    public final double diffusion;

    public FhnParams(double a, double eps, double gamma, double current, double diffusion) {
        this.a = a;
        this.eps = eps;
        this.gamma = gamma;
        this.current = current;
        this.diffusion = diffusion;
    }

    /** The seed's textbook excitable set: a = 0.1, eps = 0.01, gamma = 0.5, with stimulus amplitude I and D = 1. */
    public static FhnParams excitable(double current) {
        return new FhnParams(0.1, 0.01, 0.5, current, 1.0);
    }

    public static void checkA(double a) {
        require(Double.isFinite(a), "a", "finite", a);
    }

    public static void checkEps(double eps) {
        require(eps >= 0 && !Double.isInfinite(eps), "eps", "a finite number >= 0", eps);
    }

    public static void checkGamma(double gamma) {
        require(gamma >= 0 && !Double.isInfinite(gamma), "gamma", "a finite number >= 0", gamma);
    }

    public static void checkCurrent(double current) {
        require(Double.isFinite(current), "I", "finite", current);
    }

    public static void checkDiffusion(double d) {
        require(d > 0 && !Double.isInfinite(d), "D", "a finite number > 0", d);
    }

    /** Every rule; {@code where} (e.g. "row 12") prefixes the message, or null. */
    public FhnParams check(String where) {
        return checkLazily(() -> where);
    }

    /** {@link #check(String)} with the prefix built only for an error (a sweep checks every row). */
    public FhnParams checkLazily(java.util.function.Supplier<String> where) {
        try {
            checkA(a);
            checkEps(eps);
            checkGamma(gamma);
            checkCurrent(current);
            checkDiffusion(diffusion);
        } catch (IllegalArgumentException e) {
            String w = where.get();
            throw w == null ? e : new IllegalArgumentException(w + ": " + e.getMessage(), e);
        }
        return this;
    }

    @Override
    public String toString() {
        return "a=" + a + ", eps=" + eps + ", gamma=" + gamma + ", I=" + current + ", D=" + diffusion;
    }
}
