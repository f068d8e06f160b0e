package io.sparkgpu.ml;

import org.apache.spark.ml.param.LongParam;

/**
 * Param {@code seed}.
 *
 * <p><b>Convention</b> (MLlib's {@code HasSeed}): the default seed of a capability is the hash code of its
 * estimator's class name, {@link #defaultSeed(Class)}, e.g. {@code "io.sparkgpu.kmeans.GpuKMeans".hashCode()}. It is
 * the same on every surface: the estimator's param default, the initial value of the trainer's config
 * ({@code KMeansConfig.seed}, ...) and the CLI, which leaves the param unset when {@code --seed} is not given. So a
 * fit gives the same bits whichever way it is started, and an estimator fit keeps the seed it always had.
 */
public interface HasSeed<T extends HasSeed<T>> extends SharedParams<T> {
    /** The default seed of the capability whose estimator is {@code estimator}: its class name's hash code. */
    static long defaultSeed(Class<?> estimator) {
        return estimator.getName().hashCode();
    }

    default LongParam seed() {
        return slot("seed", o -> new LongParam(o, "seed", "Random seed (default: the hash code of the estimator's "
                + "class name, as MLlib's)."));
    }

    default long getSeed() {
        return (Long) getOrDefault(seed());
    }

    default T setSeed(long value) {
        return with(seed(), value);
    }
}
