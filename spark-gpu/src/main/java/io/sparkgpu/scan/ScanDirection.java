package io.sparkgpu.scan;

import java.util.Locale;

/** Which ranges count as clusters: higher rate (mean) inside than outside, lower, or either. */
public enum ScanDirection {
    HIGH("high", 0),
    LOW("low", 1),
    BOTH("both", 2);

    private final String id;
    private final int code;

    ScanDirection(String id, int code) {
        this.id = id;
        this.code = code;
    }

    public String id() {
        return id;
    }

    /** Code shared with the CUDA kernels and {@link ScanMath}: 0 high, 1 low, 2 both. */
    public int code() {
        return code;
    }

    /** Parses high | low | both; {@code what} names the parameter. */
    public static ScanDirection parse(String value, String what) {
        if (value != null) {
            String v = value.trim().toLowerCase(Locale.ROOT);
            for (ScanDirection d : values()) {
                if (d.id.equals(v)) {
                    return d;
                }
            }
        }
        throw new IllegalArgumentException(what + " must be one of high|low|both, got "
                + (value == null ? "null" : "'" + value + "'"));
    }
}
