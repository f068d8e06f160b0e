package io.sparkgpu.cuda;

/**
 * Test driver of {@link BackendChooser}'s fault injection: while open, the GPU "fails" in one phase (a phase name
 * given to {@link BackendChooser#run}, e.g. {@code "t-SNE kNN"}) or in every phase of a module (e.g. {@code "tsne"}),
 * on any machine, with or without a GPU. Faults are global to the JVM (Spark tasks of a local master see them),
 * so use it in try-with-resources in tests that do not run concurrently with others.
 */
public final class BackendFaults implements AutoCloseable {
    private final String key;
    private final BackendChooser.Injection injection;

    private BackendFaults(String key, BackendChooser.Fault fault, int skip) {
        this.key = key;
        this.injection = BackendChooser.injectFault(key, fault, skip);
    }

    /** Device resolution fails, as if there were no GPU or its module did not load. */
    public static BackendFaults unusable(String phaseOrModule) {
        return new BackendFaults(phaseOrModule, BackendChooser.Fault.UNUSABLE, 0);
    }

    /** A device is taken to have resolved, and the GPU call fails (the GPU twin is not run). */
    public static BackendFaults midCall(String phaseOrModule) {
        return midCall(phaseOrModule, 0);
    }

    /** As {@link #midCall(String)} from the {@code skip + 1}-th check of the phase on (earlier ones run normally). */
    public static BackendFaults midCall(String phaseOrModule, int skip) {
        return new BackendFaults(phaseOrModule, BackendChooser.Fault.MID_CALL, skip);
    }

    /** The GPU twin runs on a fake device and fails at its first driver call, after its host part. */
    public static BackendFaults fakeDevice(String phaseOrModule) {
        return new BackendFaults(phaseOrModule, BackendChooser.Fault.FAKE_DEVICE, 0);
    }

    /** The kinds of fault, for parameterised tests: {@link #of}. */
    public static final String[] KINDS = {"unusable", "mid-call", "fake-device"};

    /** A fault of kind "unusable", "mid-call" or "fake-device" (see the factories of the same names). */
    public static BackendFaults of(String kind, String phaseOrModule) {
        switch (kind) {
            case "unusable":
                return unusable(phaseOrModule);
            case "mid-call":
                return midCall(phaseOrModule);
            case "fake-device":
                return fakeDevice(phaseOrModule);
            default:
                throw new IllegalArgumentException("unknown fault kind " + kind);
        }
    }

    /** How often the fault struck (a test whose fault never struck proves nothing). */
    public int fired() {
        return injection.fired.get();
    }

    /** How often the phase was checked (struck or not). */
    public int checks() {
        return injection.checks.get();
    }

    @Override
    public void close() {
        BackendChooser.clearFault(key, injection);
    }
}
