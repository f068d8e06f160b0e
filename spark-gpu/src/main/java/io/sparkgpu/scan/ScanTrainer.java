package io.sparkgpu.scan;

import io.sparkgpu.common.SparkErrors;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import java.io.Serializable;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;

/**
 * The scan on Spark. The grid is built from the DataFrame ({@link ScanInput}, two jobs), its tables are
 * broadcast, and then every full scan is one job of P tasks, task p taking the p-th of P equal contiguous shares
 * of the M range indices (on its GPU, or the CPU twin); the driver keeps the best by (LLR, then smallest index),
 * which is exact and associative, so the answer does not depend on P. The Monte Carlo replicas are one job whose
 * tasks take contiguous shares of the replica numbers; replica r is a function of (seed, r) only, so the
 * p-values do not depend on P either.
 */
public final class ScanTrainer {
    private ScanTrainer() {
    }

    /** The grid, where it lies, and the scan result. */
    public static final class Fitted {
        public final ScanInput.Built input;
        public final ScanResult result;

        Fitted(ScanInput.Built input, ScanResult result) {
            this.input = input;
            this.result = result;
        }
    }

    /** Result of one task: its best range or replica maxima, and where it ran. */
    static final class TaskOut implements Serializable {
        private static final long serialVersionUID = 1L;
        final ScanBest best;
        final int from;
        final double[] maxima;
        final String backend;

        TaskOut(ScanBest best, int from, double[] maxima, String backend) {
            this.best = best;
            this.from = from;
            this.maxima = maxima;
            this.backend = backend;
        }
    }

    /** Runs scans and replicas as Spark jobs over a broadcast of the tables. */
    static final class SparkRunner implements ScanResult.Runner {
        private final JavaSparkContext jsc;
        private final Broadcast<ScanTables> tables;
        private final Backend backend;
        private final int parts;
        private String used;

        SparkRunner(JavaSparkContext jsc, Broadcast<ScanTables> tables, Backend backend, int parts) {
            this.jsc = jsc;
            this.tables = tables;
            this.backend = backend;
            this.parts = parts;
        }

        private void record(String b) {
            used = used == null || used.equals(b) ? b : "mixed";
        }

        @Override
        public ScanBest best(ScanSpec spec) {
            final Broadcast<ScanTables> bt = tables;
            final Backend be = backend;
            final int p = parts;
            final long m = bt.value().shape.ranges();
            List<Integer> ids = IntStream.range(0, p).boxed().collect(Collectors.toList());
            List<TaskOut> outs;
            try {
                outs = jsc.parallelize(ids, p).map(i -> {
                    long[] sh = ScanShape.share(m, i, p);
                    ScanBest b = ScanStep.best(be, bt.value(), spec, sh[0], sh[1]);
                    return new TaskOut(b, 0, null, ScanStep.lastBackend());
                }).collect();
            } catch (Exception e) {
                throw SparkErrors.unwrap(e);
            }
            ScanBest best = ScanBest.NONE;
            for (TaskOut o : outs) {
                best = ScanBest.max(best, o.best);
                record(o.backend);
            }
            return best;
        }

        @Override
        public double[] replicaMaxima(ScanSpec spec, long seed, int count) {
            final Broadcast<ScanTables> bt = tables;
            final Backend be = backend;
            final int p = Math.max(1, Math.min(parts, count));
            List<Integer> ids = IntStream.range(0, p).boxed().collect(Collectors.toList());
            List<TaskOut> outs;
            try {
                outs = jsc.parallelize(ids, p).map(i -> {
                    long[] sh = ScanShape.share(count, i, p);
                    double[] mx = ScanStep.replicaMaxima(be, bt.value(), spec, seed, (int) sh[0], (int) sh[1], null);
                    return new TaskOut(null, (int) sh[0], mx, ScanStep.lastBackend());
                }).collect();
            } catch (Exception e) {
                throw SparkErrors.unwrap(e);
            }
            double[] all = new double[count];
            for (TaskOut o : outs) {
                System.arraycopy(o.maxima, 0, all, o.from, o.maxima.length);
                if (o.maxima.length > 0) {
                    record(o.backend);
                }
            }
            return all;
        }

        @Override
        public String backend() {
            return used == null ? "none" : used;
        }
    }

    /** Builds the grid of {@code data} and scans it. */
    public static Fitted fit(Dataset<?> data, ScanInput input, ScanConfig cfg) {
        cfg.validate();
        ScanInput.Built built;
        try {
            built = input.build(data, cfg.model);
        } catch (Exception e) {
            throw SparkErrors.unwrap(e);
        }
        return new Fitted(built, scan(data.sparkSession(), ScanTables.of(built.grid), cfg));
    }

    /** Scans prepared tables with Spark tasks. */
    public static ScanResult scan(SparkSession spark, ScanTables tables, ScanConfig cfg) {
        cfg.validate();
        if (cfg.numReplicas > 0) {
            ScanReplicas.checkSupported(tables);
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        int parts = cfg.numPartitions > 0 ? cfg.numPartitions : Math.max(1, jsc.defaultParallelism());
        Backend backend = cfg.backend != null ? cfg.backend : SparkGpuConf.backend();
        Broadcast<ScanTables> bt = jsc.broadcast(tables);
        try {
            return ScanResult.compute(tables, cfg.spec(), cfg.numClusters, cfg.numReplicas, cfg.seed,
                    new SparkRunner(jsc, bt, backend, parts));
        } finally {
            bt.unpersist(false);
        }
    }
}
