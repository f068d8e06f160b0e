package io.sparkgpu.tsne.affinity;

/**
 * The error bound of the tensor-core kNN filter (kernels tsne_knn_prep, tsne_knn_tc, tsne_knn_final) and the
 * certificate that makes the filtered kNN exact.
 *
 * <h2>What the filter computes</h2>
 * For float rows x and a float centre mu: y = fl(x - mu), N = ||y||^2 (real), n = (float) N summed in double,
 * the 3xTF32 split h = tf32(y) (rounded to nearest, v = 2^-11), l = tf32(y - h), m = fl(n * cm), and for a query
 * i and a reference j the key {@code key = fl(fl(n_i + m_j) - 2 P)} with P the tensor-core value of
 * h_i.l_j + l_i.h_j + h_i.h_j, summed per chunk of 32 dimensions and the chunks added in float.
 *
 * <h2>Bound</h2>
 * Let T = ||x_i - x_j||^2 (real) and D the twin's float squared distance (fl(a - b), fma accumulation in dimension
 * order), so D &gt;= (1 - gamma_{d+2}) T with gamma_m = m u / (1 - m u), u = 2^-24.
 * <ul>
 * <li>Split: y = h + r exactly, |l - r| &lt;= v |r| &lt;= v^2 |y|; the dropped l.l and the rounding of l leave
 * |h_i.l_j + l_i.h_j + h_i.h_j - y_i.y_j| &lt;= (3 + 2v) v^2 ||y_i|| ||y_j||. (One TF32 product alone would
 * leave 2v ||y_i|| ||y_j||: with cluster centres far apart, ||y||^2 is tens of times the neighbour distances and
 * that bound could certify almost no query.)</li>
 * <li>Tensor-core accumulation (products of TF32 values are exact; sums aligned and truncated in blocks of at
 * most 8 products, Fasi et al.'s measurements): a chunk of p = 3 * 32 products is off by at most
 * 0.75 p 2^-22 of the sum of their magnitudes; we take a = p 2^-21 = 3 * 32 * 2^-21 (dp &lt; 32: 3 dp 2^-21), plus
 * one float rounding per chunk added; the magnitudes sum to at most (1 + 3v) ||y_i|| ||y_j||. Subnormals flushed
 * to zero add at most dp 2^-125 (N_i + N_j) plus an absolute term covered by {@link #absSlack}.</li>
 * <li>n and m: |n - N| &lt;= 1.01 u N; the two float operations of the key: 5.04 u (N_i + N_j) in all.</li>
 * <li>Centring: ||(x_i - x_j) - (y_i - y_j)|| &lt;= u'(||y_i|| + ||y_j||), hence T &gt;= S - 4u'(N_i + N_j) with
 * S = ||y_i - y_j||^2.</li>
 * </ul>
 * With 2 ||y_i|| ||y_j|| &lt;= N_i + N_j these give |key - (N_i + cm N_j - 2 y_i.y_j)| &lt;= c1 (N_i + N_j), and so
 * T &gt;= key - c2 N_i + (1 - cm - c2) N_j with c2 = c1 + 4.01 u. Taking cm &lt;= 1 - c2 (we take c2 with a factor
 * {@link #SLACK} more): <b>T &gt;= key - c2 N_i</b>, a lower bound that for one query orders the references as the
 * key does. So when a query's list holds the C smallest keys (ties by index), every reference left out has
 * D &gt;= (1 - gamma_{d+2}) (key_C - c2 (1 + 1.02 u) n_i) - abs. If the k-th exact neighbour among the candidates
 * is strictly nearer than that ({@link #certified}), no reference left out can enter the top k, and the re-ranked
 * candidates are the exact neighbours (bits included: the re-rank uses the twin's arithmetic). Otherwise the
 * query is re-run with the exact kernel. The certificate is evaluated in double with c3 = 1.01 c2 (1 + 1.02 u) and
 * g = (1 - gamma)(1 - 2^-40), which absorb its own three roundings.
 */
final class TsneKnnBound {
    static final double U = 0x1p-24;
    static final double V = 0x1p-11;
    /** Extra factor on the derived constant (the tensor-core accumulation model is measured, not documented). */
    static final double SLACK = 1.25;

    final int d;
    final int dp;
    /** Key error constant (with {@link #SLACK}). */
    final double c2;
    /** Float factor of the reference norms in the key, &lt;= 1 - c2. */
    final float cm;
    /** Certificate constants. */
    final double c3;
    final double g;
    final double absSlack;

    TsneKnnBound(int d) {
        this.d = d;
        this.dp = (d + 7) / 8 * 8;
        double acc = 3 * Math.min(dp, 32) * 0x1p-21 + ((dp + 31) / 32) * 1.01 * U;
        double c1 = (3 + 2 * V) * V * V + acc * (1 + 3 * V) + 5.04 * U + dp * 0x1p-125;
        this.c2 = (c1 + 4.01 * U) * SLACK;
        float m = (float) (1.0 - c2);
        if (m > 1.0 - c2) {
            m = Math.nextDown(m);
        }
        this.cm = m;
        this.c3 = 1.01 * c2 * (1 + 1.02 * U);
        double gamma = (d + 2) * U / (1 - (d + 2) * U);
        this.g = (1 - gamma) * (1 - 0x1p-40);
        this.absSlack = (dp + d + 8) * 0x1p-120;
    }

    /** The lower bound of the squared distance of every reference whose key is &gt;= keyC (device: tsne_knn_final). */
    double lowerBound(float keyC, float nrmQ) {
        return g * ((double) keyC - c3 * (double) nrmQ) - absSlack;
    }

    /** Whether the k-th exact distance kth proves the candidates complete. */
    boolean certified(float kth, float keyC, float nrmQ) {
        return (double) kth < lowerBound(keyC, nrmQ);
    }

    /** TF32 rounding to nearest, ties away from zero (cvt.rna.tf32.f32), for the host-side tests. */
    static float tf32(float x) {
        if (!Float.isFinite(x)) {
            return x;
        }
        int b = Float.floatToRawIntBits(x);
        return Float.intBitsToFloat((b + 0x1000) & 0xFFFFE000);
    }
}
