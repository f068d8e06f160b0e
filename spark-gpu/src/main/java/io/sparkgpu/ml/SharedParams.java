package io.sparkgpu.ml;

import java.util.function.Function;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.util.Identifiable;

/**
 * Base of the Params mixins ({@link HasBackend}, {@link HasSeed}, {@link HasFeaturesCol}, {@link HasWeightCol},
 * {@link HasPredictionCol}) and of each capability's params interface: Java interfaces whose default methods declare
 * Spark ML params, so that an estimator and its model share one declaration (name, doc, rule) of each param instead
 * of repeating it. {@code T} is the implementing class, which the setters return.
 *
 * <p>An implementation keeps the table in one field and sets the defaults in its constructor:
 * <pre>{@code
 * public class GpuX extends Estimator<GpuXModel> implements HasSeed<GpuX>, HasBackend<GpuX> {
 *     private final ParamSlots slots = new ParamSlots();
 *     public ParamSlots paramSlots() { return slots; }
 *     public GpuX(String uid) { this.uid = uid; setDefault(seed(), HasSeed.defaultSeed(GpuX.class)); }
 * }
 * }</pre>
 * Spark finds the params by reflection (public no-argument methods returning a {@code Param}), which includes these
 * default methods; names are unchanged from the explicit declarations they replace, so saved metadata still loads.
 */
public interface SharedParams<T extends SharedParams<T>> extends Params {
    /** The owner's param table (one field). */
    ParamSlots paramSlots();

    /** The param {@code name} of this owner, made by {@code make} on first use. */
    default <P extends Param<?>> P slot(String name, Function<Identifiable, P> make) {
        return paramSlots().get(name, () -> make.apply(this));
    }

    /** Sets {@code p} (validated by its rule) and returns this. */
    @SuppressWarnings("unchecked")
    default <V> T with(Param<V> p, V value) {
        set(p, value);
        return (T) this;
    }

    /** Sets {@code p}, or clears it when {@code value} is null; returns this. */
    @SuppressWarnings("unchecked")
    default <V> T withOrClear(Param<V> p, V value) {
        if (value == null) {
            clear(p);
        } else {
            set(p, value);
        }
        return (T) this;
    }

    /** The value of {@code p} (set or default), or null when it has neither. */
    default <V> V valueOrNull(Param<V> p) {
        return isDefined(p) ? getOrDefault(p) : null;
    }
}
