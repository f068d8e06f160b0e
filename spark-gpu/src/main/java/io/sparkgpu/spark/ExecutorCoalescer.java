package io.sparkgpu.spark;

import java.io.Serializable;
import org.apache.spark.Partition;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.PartitionCoalescer;
import org.apache.spark.rdd.PartitionGroup;
import org.apache.spark.rdd.RDD;

/**
 * Coalesces the cached partitions of an RDD into fewer partitions grouped by the executor that caches them
 * ({@link BarrierStages#byExecutor}): each coalesced task reads its blocks in place, and at most the groups that
 * straddle two executors fetch a few blocks remotely. Unlike {@link BarrierStages#groups} (for barrier stages,
 * which cannot narrow-depend on a coalesce) this keeps the lineage: a lost block is recomputed from its parents.
 * Spark's own coalescer balances groups by locality only loosely (and with one group takes everything, wherever
 * it is cached).
 */
public final class ExecutorCoalescer implements PartitionCoalescer, Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * {@code rdd} (cached and computed, else the grouping falls back to ids) in {@code groups} partitions, one per
     * group of its blocks by executor.
     */
    public static <T> JavaRDD<T> coalesce(JavaRDD<T> rdd, int groups) {
        RDD<T> r = rdd.rdd();
        return JavaRDD.fromRDD(r.coalesce(Math.max(1, Math.min(groups, r.getNumPartitions())), false,
                scala.Option.apply(new ExecutorCoalescer()), null), rdd.classTag());
    }

    @Override
    public PartitionGroup[] coalesce(int maxPartitions, RDD<?> parent) {
        Partition[] parts = parent.partitions();
        java.util.List<BarrierStages.Group> groups = BarrierStages.byExecutor(parent.id(), parts.length,
                Math.min(maxPartitions, parts.length));
        PartitionGroup[] out = new PartitionGroup[groups.size()];
        for (int g = 0; g < out.length; g++) {
            BarrierStages.Group grp = groups.get(g);
            // the preferred location in TaskLocation's form ("executor_<host>_<id>"): process-local scheduling
            out[g] = new PartitionGroup(scala.Option.apply(grp.executor));
            for (int p : grp.ids) {
                out[g].partitions().addOne(parts[p]);
            }
        }
        return out;
    }
}
