package io.sparkgpu.ml;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import org.apache.spark.ml.param.Param;

/**
 * Param {@code backend} ({@code auto|gpu|cpu}) of every estimator and model.
 *
 * <p><b>Default.</b> The param has no default value: when it is not set, the backend is the Spark setting
 * {@value SparkGpuConf#BACKEND}, else {@code auto} ({@link SparkGpuConf#backend(Backend)}, the one resolution rule,
 * which the trainers' configs and the CLI share). {@link #getBackend()} returns the resolved value.
 */
public interface HasBackend<T extends HasBackend<T>> extends SharedParams<T> {
    String DOC = "Where the work runs: 'auto' (GPU when usable, else the bitwise-identical CPU twin), 'gpu' (fail "
            + "without a usable GPU) or 'cpu'. Unset: the Spark setting " + SparkGpuConf.BACKEND + ", else auto.";

    /** The rule of the setting (any case; stored in lower case by {@link #setBackend}). */
    static void checkBackend(String v) {
        Backend.parse(v, "backend");
    }

    default Param<String> backend() {
        return slot("backend", o -> new Param<>(o, "backend", DOC, ParamChecks.validator(HasBackend::checkBackend)));
    }

    /** The backend in effect: the param when set, else {@value SparkGpuConf#BACKEND}, else "auto". */
    default String getBackend() {
        return backendSetting().id();
    }

    /** {@link #getBackend()} as an enum. */
    default Backend backendSetting() {
        return SparkGpuConf.backend(isSet(backend()) ? Backend.parse(getOrDefault(backend()), "backend") : null);
    }

    /** "auto", "gpu" or "cpu" (case-insensitive; stored in lower case); null clears it (back to the setting). */
    default T setBackend(String value) {
        return withOrClear(backend(), value == null ? null : Backend.parse(value, "backend").id());
    }
}
