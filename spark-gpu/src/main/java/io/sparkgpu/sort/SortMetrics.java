package io.sparkgpu.sort;

import java.io.Serializable;
import org.apache.spark.SparkContext;
import org.apache.spark.util.LongAccumulator;

/**
 * Where the time of a DataFrame sort goes, summed over its tasks (Spark accumulators, so the values are complete
 * once an action on the result has finished): rows sorted; nanoseconds reading a partition's rows and keys (on
 * the reduce side of a global sort this includes fetching the shuffled rows) and sorting (counting or radix sort,
 * including a global sort's input-order pass); the sorts run on each backend; and, on the driver, the sampling job
 * of a global sort. Emitting the rows in order is not counted apart: each row leaves from where it was kept as the
 * consumer asks for it, so that time is the consumer's.
 */
public final class SortMetrics implements Serializable {
    private static final long serialVersionUID = 1L;
    public final LongAccumulator rows;
    public final LongAccumulator readNanos;
    public final LongAccumulator sortNanos;
    public final LongAccumulator gpuSorts;
    public final LongAccumulator cpuSorts;
    public final LongAccumulator countingSorts;
    public final LongAccumulator radixSorts;
    /** Driver: seconds of the sampling job and the boundaries (global sort). */
    public volatile double sampleSeconds;

    public SortMetrics(SparkContext sc) {
        rows = sc.longAccumulator("sparkgpu sort rows");
        readNanos = sc.longAccumulator("sparkgpu sort read ns");
        sortNanos = sc.longAccumulator("sparkgpu sort sort ns");
        gpuSorts = sc.longAccumulator("sparkgpu sort gpu sorts");
        cpuSorts = sc.longAccumulator("sparkgpu sort cpu sorts");
        countingSorts = sc.longAccumulator("sparkgpu sort counting sorts");
        radixSorts = sc.longAccumulator("sparkgpu sort radix sorts");
    }

    void record(SortKeys.Ordered o) {
        if ("gpu".equals(o.backend)) {
            gpuSorts.add(1);
        } else if ("cpu".equals(o.backend)) {
            cpuSorts.add(1);
        }
        if ("counting".equals(o.path)) {
            countingSorts.add(1);
        } else if ("radix".equals(o.path)) {
            radixSorts.add(1);
        }
    }

    /** "gpu", "cpu", "mixed" or "none" (no sort of two or more keys ran). */
    public String backend() {
        long g = gpuSorts.value();
        long c = cpuSorts.value();
        return g > 0 && c > 0 ? "mixed" : g > 0 ? "gpu" : c > 0 ? "cpu" : "none";
    }

    @Override
    public String toString() {
        return String.format(java.util.Locale.ROOT,
                "rows=%d sample=%.3fs read=%.3fs sort=%.3fs (task seconds) backend=%s counting=%d radix=%d",
                rows.value(), sampleSeconds, readNanos.value() / 1e9, sortNanos.value() / 1e9,
                backend(), countingSorts.value(), radixSorts.value());
    }
}
