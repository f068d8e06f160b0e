package io.sparkgpu.spark;

/** For tests of other packages: {@link FeatureIngest}'s package-private chunk size. */
public final class IngestTestHooks {
    private IngestTestHooks() {
    }

    /** Sets {@link FeatureIngest#CHUNK_VALUES} (values per packing chunk) and returns the previous value. */
    public static long chunkValues(long values) {
        long old = FeatureIngest.CHUNK_VALUES;
        FeatureIngest.CHUNK_VALUES = values;
        return old;
    }
}
