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

    /**
     * {@code listener} (may be null) plus one {@link io.sparkgpu.common.Progress} line per KL checkpoint, with the
     * elapsed time and an estimate of what remains of {@code maxIter} iterations. The final, centred embedding is
     * reported at maxIter again (after the last checkpoint, also at maxIter): its line says "final embedding".
     */
    static TsneProgress logged(TsneProgress listener, int maxIter) {
        io.sparkgpu.common.Progress p = io.sparkgpu.common.Progress.start("spark-gpu t-SNE", maxIter);
        int[] last = {-1};
        return (iteration, kl) -> {
            boolean again = iteration <= last[0];
            last[0] = iteration;
            p.step(iteration, again ? "final embedding, iteration" : "iteration",
                    String.format(java.util.Locale.ROOT, "KL %.6f", kl));
            if (listener != null) {
                listener.onKl(iteration, kl);
            }
        };
    }
}
