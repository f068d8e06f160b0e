package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.common.DetMath;

/**
 * The heavy-tailed similarity kernel of t-SNE, w(d2) = (1 + d2 / dof)^-dof (Kobak, Linderman, Steinerberger, Kluger,
 * Berens, "Heavy-tailed kernels reveal a finer cluster structure in t-SNE visualisations", ECML PKDD 2019), dof > 0
 * the degrees of freedom; dof = 1 is standard t-SNE's 1 / (1 + d2), smaller dof gives heavier tails. Java twin of
 * include/tsne/kernel.cuh. With t = 1 + d2 / dof the KL gradient is
 * dC/dy_i = 4 (sum_j p_ij (y_i - y_j) / t_ij - (1/Z) sum_j w_ij (y_i - y_j) / t_ij), Z = sum_{i != j} w_ij: the
 * attractive weight is p / t, the repulsive force weight w / t = t^-(dof + 1).
 *
 * <p>dof == 1 keeps the operations of the standard kernel (w = 1 / t, w / t = w * w), so its bits did not change
 * when the option came; any other dof uses the deterministic power t^-a = e^-(a ln t) of {@link DetMath}.
 */
public final class TsneKernel {
    /** The standard t-SNE kernel's degrees of freedom. */
    public static final double STANDARD = 1.0;

    private TsneKernel() {
    }

    /** t = 1 + d2 / dof (tsne_kernel_base). */
    public static double base(double d2, double dof) {
        return 1.0 + (dof == 1.0 ? d2 : d2 / dof);
    }

    /** t^-a for t >= 1, a > 0 (tsne_kernel_pow). */
    public static double pow(double t, double a) {
        return DetMath.exp(-(a * DetMath.log(t)));
    }

    /** w = (1 + d2 / dof)^-dof. */
    public static double weight(double d2, double dof) {
        double t = base(d2, dof);
        return dof == 1.0 ? 1.0 / t : pow(t, dof);
    }

    /** The repulsive force weight w / t = (1 + d2 / dof)^-(dof + 1). */
    public static double forceWeight(double d2, double dof) {
        double t = base(d2, dof);
        if (dof == 1.0) {
            double w = 1.0 / t;
            return w * w;
        }
        return pow(t, dof) / t;
    }

    /** -ln w = dof ln(1 + d2 / dof) (the KL's per-pair term; {@link DetMath#log}, as tsne_kl_sell_d*). */
    public static double negLogWeight(double d2, double dof) {
        return dof == 1.0 ? DetMath.log(1.0 + d2) : dof * DetMath.log(base(d2, dof));
    }
}
