package io.sparkgpu.cuda;

import java.util.Locale;

/** Where a capability runs: {@code auto} (GPU when usable, else CPU twin), {@code gpu} (GPU or fail), {@code cpu}. */
public enum Backend {
    AUTO, GPU, CPU;

    /** Parses a backend name; {@code what} names the parameter or config key in the error message. */
    public static Backend parse(String value, String what) {
        if (value == null) {
            throw new IllegalArgumentException(what + " must be one of auto|gpu|cpu, got null");
        }
        switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "auto": return AUTO;
            case "gpu": return GPU;
            case "cpu": return CPU;
            default:
                throw new IllegalArgumentException(what + " must be one of auto|gpu|cpu, got '" + value + "'");
        }
    }

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
