package io.sparkgpu.ml;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.ml.param.Param;

/**
 * The Param objects of one owner, created on first use: what lets the mixins of this package ({@link HasBackend},
 * {@link HasSeed}, ...) declare a param in an interface. A Param belongs to one owner (its parent uid), so every
 * estimator and model holds its own table, in one field: {@code private final ParamSlots slots = new ParamSlots();}.
 */
public final class ParamSlots implements Serializable {
    private static final long serialVersionUID = 1L;

    private final Map<String, Param<?>> params = new HashMap<>();

    /** The param called {@code name}, made by {@code make} the first time (the same object ever after). */
    @SuppressWarnings("unchecked")
    public synchronized <P extends Param<?>> P get(String name, Supplier<P> make) {
        Param<?> p = params.get(name);
        if (p == null) {
            p = make.get();
            if (!p.name().equals(name)) {
                throw new IllegalStateException("param slot '" + name + "' holds a param named '" + p.name() + "'");
            }
            params.put(name, p);
        }
        return (P) p;
    }
}
