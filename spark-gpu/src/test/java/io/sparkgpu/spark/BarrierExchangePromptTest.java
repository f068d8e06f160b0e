package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import java.util.List;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;

/**
 * {@link BarrierExchange#promptAllGather}: the gathers of a barrier stage return every task's message in partition
 * order without Spark's one-second poll (Spark 4.1's runBarrier sleeps a second until the reply is there, so 10
 * plain gathers take at least 10 s), and leave the task thread's interrupt flag clear.
 */
class BarrierExchangePromptTest {
    @Test
    void gathersAreCorrectAndDoNotWaitForSparksPoll() {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
        int rounds = 10;
        long t0 = System.nanoTime();
        scala.Function1<scala.collection.Iterator<Integer>, scala.collection.Iterator<String>> f =
                (scala.Function1<scala.collection.Iterator<Integer>, scala.collection.Iterator<String>>
                        & java.io.Serializable) it -> {
                    BarrierTaskContext ctx = BarrierTaskContext.get();
                    StringBuilder sb = new StringBuilder();
                    for (int r = 0; r < rounds; r++) {
                        String[] got = BarrierExchange.promptAllGather(ctx, ctx.partitionId() + ":" + r);
                        sb.append(String.join(",", got)).append(Thread.currentThread().isInterrupted() ? "!" : "")
                                .append(';');
                    }
                    return scala.jdk.javaapi.CollectionConverters.asScala(List.of(sb.toString()).iterator());
                };
        List<String> out = jsc.parallelize(List.of(0, 1), 2).rdd().barrier()
                .mapPartitions(f, false, scala.reflect.ClassTag$.MODULE$.apply(String.class)).toJavaRDD().collect();
        double seconds = (System.nanoTime() - t0) / 1e9;
        StringBuilder want = new StringBuilder();
        for (int r = 0; r < rounds; r++) {
            want.append("0:").append(r).append(",1:").append(r).append(';');
        }
        assertEquals(List.of(want.toString(), want.toString()), out, "every task's message, in partition order, and "
                + "no interrupt flag left set");
        assertTrue(seconds < rounds / 2.0, rounds + " gathers took " + seconds + " s: Spark's one-second poll is back");
    }
}
