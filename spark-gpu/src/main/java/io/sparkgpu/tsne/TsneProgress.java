package io.sparkgpu.tsne;

/** Receives t-SNE progress on the driver. */
@FunctionalInterface
public interface TsneProgress {
    /**
     * @param iteration 1-based gradient iteration whose starting positions were evaluated (maxIter for the final,
     *                  centred embedding)
     * @param kl        KL(P || Q) of those positions (P without exaggeration)
     */
    void onKl(int iteration, double kl);
}
