package io.sparkgpu.scan;

import java.util.Locale;

/**
 * The probability model of a scan, which fixes the meaning of a cell's two values, the log-likelihood
 * ratio (LLR) of a range and how Monte Carlo replicas are drawn under the null hypothesis.
 *
 * <ul>
 *   <li>{@link #POISSON}: Kulldorff's Poisson model (M. Kulldorff, "A spatial scan statistic", Comm. Statist.
 *       Theory Methods 26(6), 1997). Cases (finite, >= 0, whole or fractional) and a baseline (population or
 *       expected count, >= 0); expected cases of a range E = C * b / B. Replicas: N cases allocated
 *       multinomially in proportion to the baseline, N = C for whole counts; for a fractional total C, N is C
 *       rounded half up (at least 1) and each case carries C / N, so every replica's total is C exactly
 *       ({@link ScanTables}, {@link ScanReplicas}).</li>
 *   <li>{@link #BERNOULLI}: Kulldorff's Bernoulli model (same paper). Cases and population, both
 *       non-negative integers, cases <= population in every cell ({@link #WHOLE_CASES_REASON}). Replicas:
 *       the C cases placed on C of the N individuals chosen uniformly without replacement (a random
 *       permutation of the case labels).</li>
 *   <li>{@link #NORMAL}: Kulldorff's normal model (M. Kulldorff, Z. Huang, L. Konty, "A scan statistic for
 *       continuous data based on the normal probability model", Int. J. Health Geographics 8:58, 2009).
 *       The cell value is the sum of its observations, the baseline the number of observations (integer),
 *       an optional third value the sum of squares. Replicas: the values permuted among the non-empty cells,
 *       which needs the same number of observations in each of them.</li>
 *   <li>{@link #EBP}: the expectation-based Poisson statistic (D. B. Neill, A. W. Moore, M. Sabhnani, K. Daniel,
 *       "Detection of emerging space-time clusters", KDD 2005). The baseline is the expected count itself
 *       (not rescaled to the observed total); cases finite, >= 0, whole or fractional. Replicas: independent
 *       Poisson counts with those means (a Poisson total, then a multinomial allocation), whole counts whatever the
 *       observed cases are, since this null does not depend on them.</li>
 * </ul>
 */
public enum ScanModel {
    POISSON("poisson", 0),
    BERNOULLI("bernoulli", 1),
    NORMAL("normal", 2),
    EBP("ebp", 3);

    private final String id;
    private final int code;

    ScanModel(String id, int code) {
        this.id = id;
        this.code = code;
    }

    /** Name used by params, SQL and the CLI. */
    public String id() {
        return id;
    }

    /** Code shared with the CUDA kernels. */
    int code() {
        return code;
    }

    /** True when cell cases are integer counts (all models but {@link #NORMAL}). */
    public boolean countCases() {
        return this != NORMAL;
    }

    /**
     * True for the models whose likelihood is defined for real case counts >= 0 (Poisson and expectation-based
     * Poisson: c ln(c / e) and its relatives need no integer c), so fractional counts (e.g. cases allocated to
     * areas by population shares) are accepted as they are.
     */
    public boolean fractionalCases() {
        return this == POISSON || this == EBP;
    }

    /** Why the Bernoulli model refuses fractional case counts (and populations), in its error messages. */
    public static final String WHOLE_CASES_REASON = "the bernoulli model counts individuals: each case is one of "
            + "the cell's individuals, so cases and population must be whole numbers (statistic=poisson or ebp "
            + "accepts fractional case counts)";

    /** Parses poisson | bernoulli | normal | ebp (also "expectation-poisson"); {@code what} names the parameter. */
    public static ScanModel parse(String value, String what) {
        if (value != null) {
            String v = value.trim().toLowerCase(Locale.ROOT);
            for (ScanModel m : values()) {
                if (m.id.equals(v)) {
                    return m;
                }
            }
            if (v.equals("expectation-poisson") || v.equals("expectation-based-poisson")) {
                return EBP;
            }
        }
        throw new IllegalArgumentException(what + " must be one of poisson|bernoulli|normal|ebp, got "
                + (value == null ? "null" : "'" + value + "'"));
    }
}
