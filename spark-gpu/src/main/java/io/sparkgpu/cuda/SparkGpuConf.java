package io.sparkgpu.cuda;

import java.util.Optional;
import java.util.function.Function;

/**
 * Configuration keys of the package. Values come from the Spark configuration of the running
 * executor or driver (SparkEnv) when Spark is present, otherwise from JVM system properties of the same
 * name, otherwise the defaults below.
 */
public final class SparkGpuConf {
    /** {@code auto|gpu|cpu}: default backend of every capability (estimators may override). */
    public static final String BACKEND = "spark.sparkgpu.backend";
    /** GPU ordinal used when Spark did not assign a {@code gpu} resource to the task. */
    public static final String DEVICE = "spark.sparkgpu.device";
    /** Directory for unpacked native libraries (default: a private per-user cache directory). */
    public static final String NATIVE_DIR = "spark.sparkgpu.native.dir";
    /** Fraction of a device's total memory that partitions may keep resident across iterations. */
    public static final String RESIDENT_FRACTION = "spark.sparkgpu.gpu.residentFraction";
    /**
     * {@code true|false}: k-means packing tasks copy each full 16 MiB chunk to the GPU while they pack the next
     * (default false: in A/B runs on the H100 host it gained nothing consistent over uploading each block after
     * packing, see BENCHMARKS.md).
     */
    public static final String UPLOAD_WHILE_PACKING = "spark.sparkgpu.ingest.uploadWhilePacking";

    /**
     * Maps the {@code gpu} resource addresses Spark hands to tasks onto CUDA ordinals, as
     * {@code address:ordinal} pairs separated by commas (e.g. {@code 0:0,1:0}: two scheduled "GPUs" that are one
     * device). Unset: an address is the ordinal. Lets a one-GPU host exercise the several-GPU scheduling (two
     * executors, two addresses) and lets a site oversubscribe a device by address; an address missing from a set
     * map is an error, never silently device 0.
     */
    public static final String ADDRESS_MAP = "spark.sparkgpu.gpu.addressMap";

    private static volatile Function<String, Optional<String>> sparkLookup;

    private SparkGpuConf() {
    }

    public static String get(String key, String dflt) {
        Optional<String> fromSpark = sparkValue(key);
        if (fromSpark.isPresent()) {
            return fromSpark.get();
        }
        String sys = System.getProperty(key);
        return sys != null ? sys : dflt;
    }

    /** {@value #UPLOAD_WHILE_PACKING}, default false. */
    public static boolean uploadWhilePacking() {
        String v = get(UPLOAD_WHILE_PACKING, "false").trim();
        if (!v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException(UPLOAD_WHILE_PACKING + " must be true or false, got '" + v + "'");
        }
        return Boolean.parseBoolean(v);
    }

    /** The configured default backend: {@value #BACKEND}, else auto. */
    public static Backend backend() {
        return Backend.parse(get(BACKEND, "auto"), BACKEND);
    }

    /**
     * The one rule of every surface (estimator param, trainer config, CLI option, SQL): an explicit backend wins,
     * else the setting {@value #BACKEND}, else auto.
     *
     * @param explicit the backend asked for, or null when none was
     */
    public static Backend backend(Backend explicit) {
        // every surface resolves its backend here on the driver when a fit starts: the device settings' rules too
        DeviceMemoryBudget.bytes();
        checkAddressMap();
        return explicit != null ? explicit : backend();
    }

    public static int configuredDevice() {
        String v = get(DEVICE, "0");
        try {
            int d = Integer.parseInt(v.trim());
            if (d < 0) {
                throw new IllegalArgumentException(DEVICE + " must be >= 0, got " + v);
            }
            return d;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(DEVICE + " must be an integer GPU ordinal, got '" + v + "'", e);
        }
    }

    /**
     * The CUDA ordinal of the task's {@code gpu} resource address under {@value #ADDRESS_MAP} (the address itself
     * when the map is unset or blank).
     */
    public static int ordinalOfAddress(String address) {
        return ordinalOfAddress(address, get(ADDRESS_MAP, ""));
    }

    static int ordinalOfAddress(String address, String map) {
        String a = address.trim();
        if (map == null || map.isBlank()) {
            return parseOrdinal(a, "Spark assigned gpu resource address '" + a
                    + "' to this task; expected an integer CUDA device ordinal (check the GPU discovery script, or map "
                    + "addresses to ordinals with " + ADDRESS_MAP + ")");
        }
        Integer o = addressMap(map).get(a);
        if (o == null) {
            throw new IllegalArgumentException(ADDRESS_MAP + " must name every gpu address Spark assigns; address '" + a
                    + "' is not in '" + map + "'");
        }
        return o;
    }

    /**
     * Checks the syntax of {@value #ADDRESS_MAP} where it is set ({@link #backend(Backend)}, on the driver when a fit
     * starts), so a mistyped map is an error naming the key before any task runs rather than in every task; an unset
     * map passes.
     */
    public static void checkAddressMap() {
        String map = get(ADDRESS_MAP, "");
        if (!map.isBlank()) {
            addressMap(map);
        }
    }

    private static java.util.Map<String, Integer> addressMap(String map) {
        java.util.Map<String, Integer> m = new java.util.HashMap<>();
        for (String pair : map.split(",")) {
            String[] kv = pair.trim().split(":", -1);
            if (kv.length != 2 || kv[0].isBlank()) {
                throw new IllegalArgumentException(ADDRESS_MAP + " must be address:ordinal pairs separated by commas "
                        + "(e.g. 0:0,1:0), got '" + map + "'");
            }
            int ord = parseOrdinal(kv[1].trim(), ADDRESS_MAP + " must map each address to an ordinal >= 0, got '"
                    + pair.trim() + "' in '" + map + "'");
            if (m.put(kv[0].trim(), ord) != null) {
                throw new IllegalArgumentException(ADDRESS_MAP + " must name each address once, got '" + kv[0].trim()
                        + "' twice in '" + map + "'");
            }
        }
        return m;
    }

    private static int parseOrdinal(String v, String message) {
        try {
            int d = Integer.parseInt(v);
            if (d >= 0) {
                return d;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(message);
    }

    public static double residentFraction() {
        String v = get(RESIDENT_FRACTION, "0.5");
        double f;
        try {
            f = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(RESIDENT_FRACTION + " must be a number in [0, 0.9], got '" + v + "'", e);
        }
        if (!(f >= 0 && f <= 0.9)) {
            throw new IllegalArgumentException(RESIDENT_FRACTION + " must be in [0, 0.9], got " + v);
        }
        return f;
    }

    private static Optional<String> sparkValue(String key) {
        Function<String, Optional<String>> lookup = sparkLookup;
        if (lookup == null) {
            lookup = SparkBridge.available() ? SparkBridge::confValue : k -> Optional.empty();
            sparkLookup = lookup;
        }
        return lookup.apply(key);
    }
}
