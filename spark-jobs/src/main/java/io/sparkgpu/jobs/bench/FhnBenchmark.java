package io.sparkgpu.jobs.bench;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.pde.Fhn2d;
import io.sparkgpu.pde.Fhn2dConfig;
import io.sparkgpu.pde.FhnConfig;
import io.sparkgpu.pde.FhnParams;
import io.sparkgpu.pde.FhnResult;
import io.sparkgpu.pde.GpuFitzHughNagumo;
import io.sparkgpu.pde.PdeEngine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * FitzHugh-Nagumo kernels and sweep, one Markdown table: explicit cell updates per second (fp64, kernels alone, CUDA
 * events) for single axons of 10^3..10^7 cells and a batch of axons; batched Thomas and the partitioned batched solver
 * (Thomas/PCR hybrid, for each chunk size of {@code --tridiag-r} and systems per block of {@code --tridiag-sb}) side
 * by side in unknowns/s and % of the HBM bandwidth measured by a copy kernel in the same run (traffic counted as 5
 * doubles per unknown: a, b, c, d read, x written); one long system by cyclic reduction; a sweep of parameter sets as a Spark job (GpuFitzHughNagumo,
 * backend gpu) against the CPU twin on all cores; a 2-D ADI spiral run, GPU against the twin. Where both ran, the sweep's GPU results must equal the twin's
 * (exit status 3 otherwise). Usage: {@code --help}.
 */
public final class FhnBenchmark {

    @Command(name = "FhnBenchmark", sortOptions = false,
            description = {"FitzHugh-Nagumo kernels and parameter sweep, one Markdown table."})
    static final class Options {
        List<Long> cells = List.of(1_000L, 10_000L, 100_000L, 1_000_000L, 10_000_000L);
        int[] batch = {10_000, 1_000};
        @Option(order = 3, names = "--steps", converter = BenchArgs.IntCount.class, paramLabel = "K",
                description = "explicit steps per timed run  [200]")
        int steps = 200;
        @Option(order = 6, names = "--per-launch", converter = BenchArgs.IntCount.class, paramLabel = "K",
                description = {"explicit: steps per launch of the temporally blocked kernel, also timed (1 skips) [16]"})
        int perLaunch = 16;
        List<int[]> tridiag = List.of(new int[] {10_000, 128}, new int[] {10_000, 4096}, new int[] {100_000, 128},
                new int[] {1_000_000, 128}, new int[] {100_000, 1024});
        @Option(order = 5, names = "--long", converter = BenchArgs.Count.class, paramLabel = "N",
                description = "one system by cyclic reduction (0 skips)  [1e7]")
        long longN = 10_000_000L;
        @Option(order = 7, names = "--adi", converter = BenchArgs.IntCount.class, paramLabel = "N",
                description = "2-D ADI on N x N nodes, GPU vs twin (0 skips)[1024]")
        int adi = 1024;
        @Option(order = 8, names = "--adi-steps", converter = BenchArgs.IntCount.class, paramLabel = "K",
                description = "2-D ADI steps  [100]")
        int adiSteps = 100;
        @Option(order = 9, names = "--sweep", converter = BenchArgs.IntCount.class, paramLabel = "R",
                description = "Spark sweep rows, GPU vs CPU twin (0 skips) [1e5]")
        int sweep = 100_000;
        @Option(order = 10, names = "--sweep-cells", converter = BenchArgs.IntCount.class, paramLabel = "N",
                description = "cells of each swept axon  [101]")
        int sweepCells = 101;
        @Option(order = 11, names = "--sweep-tend", paramLabel = "T",
                description = "simulated time of each swept axon  [20]")
        double sweepTEnd = 20;
        @Option(order = 12, names = "--partitions", converter = BenchArgs.IntCount.class, paramLabel = "P",
                description = "Spark partitions of the sweep  [GPUs: 1]")
        int partitions = 1;
        @Option(order = 12, names = "--sweep-lanes", paramLabel = "LIST",
                description = {"device batch of the sweep, each kernel timed: lanes per axon of the register kernel, "
                    + "0 = the shared-memory kernel, auto = the default choice  [auto,0]"})
        void setSweepLanes(String v) {
            List<Integer> l = new ArrayList<>();
            for (String s : v.split(",")) {
                String t = s.trim().toLowerCase(Locale.ROOT);
                l.add(t.equals("auto") ? -1 : Integer.parseInt(t));
            }
            this.sweepLanes = l;
        }

        List<Integer> sweepLanes = List.of(-1, 0);

        @Option(order = 13, names = "--threads", converter = BenchArgs.IntCount.class, paramLabel = "T",
                description = "CPU twin threads  [available cores]")
        int threads = Runtime.getRuntime().availableProcessors();
        @Option(order = 14, names = "--reps", converter = BenchArgs.IntCount.class, paramLabel = "R",
                description = "timed GPU runs after a warm-up (median)  [5]")
        int reps = 5;
        @Option(order = 15, names = "--device", paramLabel = "G", description = "CUDA device ordinal  [0]")
        int device;
        @Option(order = 16, names = "--markdown", paramLabel = "FILE", description = "also write the report to FILE")
        String markdown;
        boolean help;
        String[] argv = new String[0];

        static int[] shape(String s) {
            String[] p = s.trim().toLowerCase(Locale.ROOT).split("x");
            if (p.length != 2) {
                throw new IllegalArgumentException("a shape must be SxN, got '" + s + "'");
            }
            return new int[] {(int) KMeansBenchmark.Options.count(p[0]), (int) KMeansBenchmark.Options.count(p[1])};
        }

        @Option(order = 1, names = "--cells", paramLabel = "LIST",
                description = {"explicit: cells of one axon  [1e3,1e4,1e5,1e6,1e7]"})
        void setCells(String v) {
            List<Long> l = new ArrayList<>();
            for (String s : v.split(",")) {
                l.add(KMeansBenchmark.Options.count(s));
            }
            this.cells = l;
        }

        @Option(order = 2, names = "--batch", paramLabel = "SxN",
                description = {"explicit: S axons of N cells (0 skips)  [10000x1000]"})
        void setBatch(String v) {
            this.batch = v.trim().equals("0") ? null : shape(v);
        }

        @Option(order = 4, names = "--tridiag", paramLabel = "LIST",
                description = {"batched tridiagonal SxN shapes (Thomas, partitioned)  "
                    + "[10000x128,10000x4096,100000x128,1000000x128,100000x1024]"})
        void setTridiag(String v) {
            List<int[]> l = new ArrayList<>();
            for (String s : v.split(",")) {
                l.add(shape(s));
            }
            this.tridiag = l;
        }

        @Option(order = 4, names = "--tridiag-r", paramLabel = "LIST",
                description = {"partitioned batched solver of each --tridiag shape: chunk sizes R to time (4, 8, 16; "
                    + "auto = the default choice for S, n and the device's SMs; none skips)  [auto]"})
        void setTridiagR(String v) {
            List<String> allowed = new ArrayList<>(List.of("auto", "none"));
            Arrays.stream(PdeEngine.PARTITION_R).forEach(r -> allowed.add(Integer.toString(r)));
            List<Integer> l = new ArrayList<>();
            for (String t : BenchArgs.choices("--tridiag-r", v, allowed)) {
                if (!t.equals("none")) {
                    l.add(t.equals("auto") ? 0 : Integer.parseInt(t));
                }
            }
            this.tridiagR = l;
        }

        /** Chunk sizes of the partitioned solver to time, 0 = {@code PdeEngine.partitionR(S, n, SMs)}. */
        List<Integer> tridiagR = List.of(0);

        @Option(order = 4, names = "--tridiag-sb", paramLabel = "LIST",
                description = {"partitioned batched solver: systems per block SB to time for each R (1..32; 0 or "
                    + "auto = the default choice)  [0]"})
        void setTridiagSb(String v) {
            List<String> allowed = new ArrayList<>(List.of("auto"));
            for (int sb = 0; sb <= 32; sb++) {
                allowed.add(Integer.toString(sb));
            }
            List<Integer> l = new ArrayList<>();
            for (String t : BenchArgs.choices("--tridiag-sb", v, allowed)) {
                l.add(t.equals("auto") ? 0 : Integer.parseInt(t));
            }
            this.tridiagSb = l;
        }

        /** Systems per block of the partitioned solver to time, 0 = {@code PdeEngine.partitionPlan}'s choice. */
        List<Integer> tridiagSb = List.of(0);

        @Option(order = 4, names = "--tridiag-cluster", paramLabel = "LIST",
                description = {"partitioned batched solver, R = 16: also time the cluster kernels with these blocks "
                    + "a cluster (2, 4, 8; each SB of --tridiag-sb; compute capability 9.x; none skips)  [none]"})
        void setTridiagCluster(String v) {
            List<String> allowed = new ArrayList<>(List.of("none"));
            Arrays.stream(PdeEngine.PARTITION_CLUSTERS).forEach(c -> allowed.add(Integer.toString(c)));
            List<Integer> l = new ArrayList<>();
            for (String t : BenchArgs.choices("--tridiag-cluster", v, allowed)) {
                if (!t.equals("none")) {
                    l.add(Integer.parseInt(t));
                }
            }
            this.tridiagCluster = l;
        }

        /** Cluster sizes of the partitioned solver's cluster kernels to time (none by default). */
        List<Integer> tridiagCluster = List.of();

        @Option(order = 4, names = "--tridiag-staged", paramLabel = "LIST",
                description = {"partitioned batched solver: also time the staged kernels (persistent blocks, rows "
                    + "copied into shared memory while the group before is solved; each R of --tridiag-r, R = 8 or 16)"
                    + " with these systems per block (auto or a power of two 1..32; none skips)  [none]"})
        void setTridiagStaged(String v) {
            List<String> allowed = new ArrayList<>(List.of("none", "auto"));
            for (int sb = 1; sb <= 32; sb *= 2) {
                allowed.add(Integer.toString(sb));
            }
            this.tridiagStaged = BenchArgs.choices("--tridiag-staged", v, allowed).stream()
                    .filter(t -> !t.equals("none")).map(t -> t.equals("auto") ? 0 : Integer.parseInt(t)).toList();
        }

        /** Systems per block of the staged kernels to time, 0 = automatic (none by default). */
        List<Integer> tridiagStaged = List.of();

        @Option(order = 4, names = "--tridiag-layout", paramLabel = "LIST",
                description = {"partitioned batched solver: layouts to time, interleaved (row i of system j at i S + j),"
                    + " tiled (tiles of 32 interleaved systems, each contiguous) and/or tiled-sb (tiles of the plan's"
                    + " SB systems)  [interleaved]"})
        void setTridiagLayout(String v) {
            this.tridiagTiles = BenchArgs.choices("--tridiag-layout", v, List.of("interleaved", "tiled", "tiled-sb"))
                    .stream().map(t -> t.equals("interleaved") ? 0 : t.equals("tiled") ? PdeEngine.PARTITION_TILE
                            : -1).distinct().toList();
        }

        /** Layouts of the partitioned solver to time: 0 interleaved, 32 tiled, -1 tiles of the plan's SB. */
        List<Integer> tridiagTiles = List.of(0);

        static Options parse(String[] args) {
            Options o = new Options();
            o.argv = args.clone();
            o.help = BenchArgs.parse(o, args);
            if (o.reps < 1 || o.threads < 1 || o.steps < 1 || o.partitions < 1) {
                throw new IllegalArgumentException("--reps, --threads, --steps and --partitions must be >= 1");
            }
            return o;
        }
    }

    public static void main(String[] args) throws Exception {
        BenchArgs.main(args, Options::new, Options::parse, x -> x.help, x -> x.markdown, FhnBenchmark::run);
    }

    /** Median of the timed runs after dropping the first (warm-up). */
    static double medianAfterWarmup(double[] ms) {
        double[] t = ms.length > 1 ? Arrays.copyOfRange(ms, 1, ms.length) : ms.clone();
        return IngestBenchmark.median(t);
    }

    static BenchArgs.Outcome run(Options o) {
        List<String> out = new ArrayList<>(BenchArgs.runHeader(o.argv));
        CudaDevice dev = CudaRuntime.device(o.device);
        out.add("Device: " + dev + "; CPU twin threads: " + o.threads);
        out.add("");
        double copyMs = medianAfterWarmup(PdeEngine.copyMillis(dev, 1L << 27, o.reps + 1));
        double bw = 2.0 * 8 * (1L << 27) / (copyMs / 1e3) / 1e9;
        out.add(String.format(Locale.ROOT, "Copy kernel bandwidth (read + write of 1 GiB): %.0f GB/s", bw));
        out.add("");
        out.add("| case | shape | median ms | rate | % of copy bandwidth |");
        out.add("| --- | --- | ---: | ---: | ---: |");
        List<int[]> shapes = new ArrayList<>();
        for (long n : o.cells) {
            shapes.add(new int[] {1, (int) n});
        }
        if (o.batch != null) {
            shapes.add(o.batch);
        }
        for (int[] sh : shapes) {
            double cells = (double) sh[0] * sh[1];
            for (int k : o.perLaunch > 1 ? new int[] {1, o.perLaunch} : new int[] {1}) {
                double ms = medianAfterWarmup(PdeEngine.explicitMillis(dev, sh[0], sh[1], o.steps, o.reps + 1, k));
                // traffic as if every step read and wrote v and w (the one-launch-per-step roofline): above 100%
                // with temporal blocking
                out.add(row(k == 1 ? "explicit (fp64)" : "explicit (fp64), " + k + " steps/launch", sh[0] + " x "
                        + sh[1] + ", " + o.steps + " steps", ms, cells * o.steps / (ms / 1e3), "cell updates/s",
                        32.0 * cells * o.steps / (ms / 1e3) / 1e9 / bw));
            }
        }
        for (int[] sh : o.tridiag) {
            double u = (double) sh[0] * sh[1];
            // the shared-memory variant (intermediate on chip) where a system fits it
            for (boolean shared : sh[1] <= PdeEngine.thomasSharedMaxUnknowns(dev) ? new boolean[] {false, true}
                    : new boolean[] {false}) {
                double ms = medianAfterWarmup(PdeEngine.thomasBatchMillis(dev, sh[0], sh[1], o.reps + 1, shared));
                out.add(row(shared ? "batched Thomas, c' d' in shared memory" : "batched Thomas", sh[0] + " x "
                        + sh[1], ms, u / (ms / 1e3), "unknowns/s", 40.0 * u / (ms / 1e3) / 1e9 / bw));
            }
            // the partitioned solver (a thread per chunk of R rows, PCR across chunks): same systems, same traffic
            for (int r : o.tridiagR) {
                if (sh[1] > PdeEngine.PARTITION_MAX_UNKNOWNS) {
                    out.add("| batched tridiagonal, partitioned | " + sh[0] + " x " + sh[1] + " | | n > "
                            + PdeEngine.PARTITION_MAX_UNKNOWNS + ": not supported | |");
                    break;
                }
                for (int sb : o.tridiagSb) {
                    for (int t : o.tridiagTiles) {
                        int[] plan;
                        try {
                            plan = r == 0 && sb == 0 ? PdeEngine.partitionAutoPlan(dev, sh[0], sh[1], t != 0)
                                    : PdeEngine.partitionPlan(dev, sh[0], sh[1], r, sb);
                        } catch (IllegalArgumentException e) {
                            // an explicit SB whose block exceeds the kernel's threads for this R and n
                            out.add("| batched tridiagonal, partitioned (R=" + (r == 0 ? "auto" : r) + ", SB=" + sb
                                    + ") | " + sh[0] + " x " + sh[1] + " | | not launchable: " + e.getMessage()
                                    + " | |");
                            break;
                        }
                        String auto = r == 0 && sb == 0 ? ", auto" : r == 0 ? ", auto R" : sb == 0 ? ", auto SB" : "";
                        partitionRow(out, dev, o, sh, plan, t, auto, bw);
                    }
                }
            }
        }
        for (int[] sh : o.tridiag) {
            for (int cl : o.tridiagCluster) {
                if (sh[1] > PdeEngine.PARTITION_MAX_UNKNOWNS || !PdeEngine.partitionClustersOn(dev)) {
                    out.add("| batched tridiagonal, partitioned, cluster of " + cl + " | " + sh[0] + " x " + sh[1]
                            + " | | not run: n > " + PdeEngine.PARTITION_MAX_UNKNOWNS + " or not compute capability"
                            + " 9.x | |");
                    continue;
                }
                for (int sb : o.tridiagSb) {
                    int[] plan;
                    try {
                        plan = PdeEngine.partitionClusterPlan(sh[0], sh[1], sb, cl, dev.multiprocessors());
                    } catch (IllegalArgumentException e) {
                        out.add("| batched tridiagonal, partitioned (cluster of " + cl + ", SB=" + sb + ") | " + sh[0]
                                + " x " + sh[1] + " | | not launchable: " + e.getMessage() + " | |");
                        continue;
                    }
                    for (int t : o.tridiagTiles) {
                        partitionRow(out, dev, o, sh, plan, t, sb == 0 ? ", auto SB" : "", bw);
                    }
                }
            }
        }
        for (int[] sh : o.tridiag) {
            for (int r : o.tridiagR) {
                for (int sb : o.tridiagStaged) {
                    int[] plan;
                    try {
                        plan = PdeEngine.partitionStagedPlan(sh[0], sh[1], r, sb, dev.multiprocessors(),
                                dev.maxSharedMemoryOptin());
                    } catch (IllegalArgumentException e) {
                        out.add("| batched tridiagonal, partitioned (staged, R=" + (r == 0 ? "auto" : r) + ", SB="
                                + sb + ") | " + sh[0] + " x " + sh[1] + " | | not launchable: " + e.getMessage()
                                + " | |");
                        continue;
                    }
                    for (int t : o.tridiagTiles) {
                        partitionRow(out, dev, o, sh, plan, t, (r == 0 ? ", auto R" : "") + (sb == 0 ? ", auto SB"
                                : ""), bw);
                    }
                }
            }
        }
        if (o.longN > 0) {
            double ms = medianAfterWarmup(PdeEngine.cyclicReductionMillis(dev, 1, (int) o.longN, o.reps + 1));
            out.add(row("cyclic reduction", "1 x " + o.longN, ms, o.longN / (ms / 1e3), "unknowns/s",
                    40.0 * o.longN / (ms / 1e3) / 1e9 / bw));
        }
        int status = 0;
        if (o.adi > 0) {
            status = adi(dev, o, out);
        }
        if (o.sweep > 0) {
            status = Math.max(status, sweep(o, out));
        }
        return new BenchArgs.Outcome(String.join("\n", out) + "\n", status);
    }

    /**
     * One timed row of the partitioned solver by {@code plan} on layout t (0 interleaved, 32 tiles of 32, -1 tiles of
     * the plan's SB; a tile that is not a power of two is skipped); {@code note} follows the plan in the row's name.
     */
    private static void partitionRow(List<String> out, CudaDevice dev, Options o, int[] sh, int[] plan, int t,
                                     String note, double bw) {
        int tile = t < 0 ? plan[2] : t;
        if (Integer.bitCount(tile) > 1) {
            return; // tiles of a power of two only
        }
        double u = (double) sh[0] * sh[1];
        double ms = medianAfterWarmup(PdeEngine.tridiagPartitionMillis(dev, sh[0], sh[1], o.reps + 1, plan, tile));
        out.add(row("batched tridiagonal, partitioned (" + PdeEngine.describePlan(plan) + note
                + (tile > 0 ? ", tiles of " + tile : "") + ")", sh[0] + " x " + sh[1], ms, u / (ms / 1e3),
                "unknowns/s", 40.0 * u / (ms / 1e3) / 1e9 / bw));
    }

    static String row(String what, String shape, double ms, double rate, String unit, double frac) {
        return String.format(Locale.ROOT, "| %s | %s | %.3f | %.3g %s | %.0f%% |", what, shape, ms, rate, unit,
                100 * frac);
    }

    /**
     * One 2-D spiral run by ADI on the GPU (wall time of the whole call: upload, steps, download; after a warm-up run)
     * and on the CPU twin (one thread); the final states must be equal (status 3 otherwise).
     */
    static int adi(CudaDevice dev, Options o, List<String> out) {
        Fhn2dConfig c = new Fhn2dConfig();
        c.cellsX = o.adi;
        c.cellsY = o.adi;
        c.lengthX = 0.5 * (o.adi - 1);
        c.lengthY = c.lengthX;
        c.dt = 0.1;
        c.tEnd = 0.1 * o.adiSteps;
        c.pulseWidth = 3;
        c.validate();
        FhnParams p = new FhnParams(0.02, 0.01, 0.5, 0, 1);
        PdeEngine.run2dGpu(dev, c, p);
        long g0 = System.nanoTime();
        Fhn2d.Result gpu = PdeEngine.run2dGpu(dev, c, p);
        double gpuS = (System.nanoTime() - g0) / 1e9;
        long c0 = System.nanoTime();
        Fhn2d.Result cpu = PdeEngine.run2dCpu(c, p);
        double cpuS = (System.nanoTime() - c0) / 1e9;
        double updates = (double) o.adi * o.adi * gpu.steps;
        boolean same = Arrays.equals(cpu.v, gpu.v) && Arrays.equals(cpu.w, gpu.w);
        out.add(String.format(Locale.ROOT, "| 2-D ADI (fp64, wall incl. transfers) | %d x %d, %d steps | %.1f | %.3g "
                + "node updates/s | |", o.adi, o.adi, gpu.steps, gpuS * 1e3, updates / gpuS));
        out.add(String.format(Locale.ROOT, "| 2-D ADI, CPU twin (1 thread) | same | %.1f | %.3g node updates/s (GPU: "
                + "%.1fx)%s | |", cpuS * 1e3, updates / cpuS, cpuS / gpuS, same ? "" : " **bits differ**"));
        return same ? 0 : 3;
    }

    static FhnParams[] sweepParams(int rows) {
        FhnParams[] ps = new FhnParams[rows];
        for (int j = 0; j < rows; j++) {
            ps[j] = new FhnParams(0.02 + 0.2 * ((j * 7919L) % 1000) / 1000.0, 0.005 + 0.02 * (j % 10) / 10.0, 0.5,
                    0.05 + 0.95 * ((j * 104729L) % 997) / 997.0, 1.0);
        }
        return ps;
    }

    static int sweep(Options o, List<String> out) {
        int mismatches = 0;
        FhnParams[] ps = sweepParams(o.sweep);
        GpuFitzHughNagumo t = new GpuFitzHughNagumo().setCells(o.sweepCells).setLength(0.2 * (o.sweepCells - 1))
                .setDt(0.01).setTEnd(o.sweepTEnd).setBackend("gpu");
        FhnConfig cfg = t.toConfig().validate();
        long c0 = System.nanoTime();
        FhnResult[] cpu = PdeEngine.runCpu(cfg, ps, o.threads);
        double cpuS = (System.nanoTime() - c0) / 1e9;
        SparkSession spark = SparkSession.builder().master("local[" + Math.max(o.partitions, o.threads) + "]")
                .appName("FhnBenchmark").config("spark.ui.enabled", "false").getOrCreate();
        StructType schema = new StructType().add("id", DataTypes.IntegerType).add("a", DataTypes.DoubleType)
                .add("eps", DataTypes.DoubleType).add("I", DataTypes.DoubleType);
        List<Row> rows = new ArrayList<>(ps.length);
        for (int j = 0; j < ps.length; j++) {
            rows.add(RowFactory.create(j, ps[j].a, ps[j].eps, ps[j].current));
        }
        // the Spark job on the GPU partitions (one task per GPU) and on one partition per core (the tasks share the
        // GPU, each its own batch): median of the timed runs after a warm-up on a slice
        java.util.LinkedHashMap<Integer, Double> jobS = new java.util.LinkedHashMap<>();
        java.util.LinkedHashMap<Integer, Double> oneStepS = new java.util.LinkedHashMap<>();
        java.util.LinkedHashMap<Integer, Double> collectS = new java.util.LinkedHashMap<>();
        java.util.LinkedHashMap<Integer, Double> cpuJobS = new java.util.LinkedHashMap<>();
        GpuFitzHughNagumo oneStep = t.copy(new org.apache.spark.ml.param.ParamMap()).setTEnd(0.01);
        for (int parts : new java.util.TreeSet<>(List.of(o.partitions, o.threads))) {
            Dataset<Row> in = spark.createDataFrame(rows, schema).repartition(parts).cache();
            in.count();
            // warm-up: the same job on a slice (Spark's code generation, the JIT, the module load), untimed
            t.transform(in.limit(Math.min(1000, ps.length))).select("id", "maxV").collectAsList();
            int reps = Math.max(1, Math.min(3, o.reps));
            double[] times = new double[reps];
            double[] one = new double[reps];
            double[] coll = new double[reps];
            List<Row> res = null;
            for (int r = 0; r < reps; r++) {
                long g0 = System.nanoTime();
                res = t.transform(in).select("id", "maxV", "newtonIterations", "pulseCount").collectAsList();
                times[r] = (System.nanoTime() - g0) / 1e9;
                // where the job's time goes: the same job with one step (Spark, rows, per-task GPU set-up), and
                // collecting the input's 4 columns (what any job returning 10^5 rows pays)
                g0 = System.nanoTime();
                oneStep.transform(in).select("id", "maxV", "newtonIterations", "pulseCount").collectAsList();
                one[r] = (System.nanoTime() - g0) / 1e9;
                g0 = System.nanoTime();
                in.select("id", "a", "eps", "I").collectAsList();
                coll[r] = (System.nanoTime() - g0) / 1e9;
            }
            if (parts == o.threads) {
                // the same Spark job on the CPU twin (one partition per core): the like-for-like comparison, once
                long c1 = System.nanoTime();
                t.copy(new org.apache.spark.ml.param.ParamMap()).setBackend("cpu").transform(in)
                        .select("id", "maxV", "newtonIterations", "pulseCount").collectAsList();
                cpuJobS.put(parts, (System.nanoTime() - c1) / 1e9);
            }
            Arrays.sort(times);
            Arrays.sort(one);
            Arrays.sort(coll);
            jobS.put(parts, times[times.length / 2]);
            oneStepS.put(parts, one[one.length / 2]);
            collectS.put(parts, coll[coll.length / 2]);
            for (Row r : res) {
                FhnResult c = cpu[r.getInt(0)];
                if (Double.doubleToLongBits(c.maxV) != Double.doubleToLongBits(r.getDouble(1))
                        || c.pulseCount != r.getInt(3)) {
                    mismatches++;
                }
            }
            in.unpersist();
        }
        // breakdown: the device batch alone (what one task does on the GPU: upload, every step, observables back),
        // for each kernel asked for (lanes per axon of the register kernel; 0: the shared-memory kernel)
        CudaDevice dev = CudaRuntime.device(o.device);
        java.util.LinkedHashMap<String, Double> devS = new java.util.LinkedHashMap<>();
        java.util.LinkedHashMap<String, Double> kernelS = new java.util.LinkedHashMap<>();
        for (int lanes : o.sweepLanes) {
            int l = lanes < 0 ? PdeEngine.lanesPerAxon(o.sweepCells) : lanes;
            String name = l == 0 ? "shared-memory kernel" : "register kernel, " + l + " lanes x "
                    + ((o.sweepCells + l - 1) / l) + " cells per axon";
            if (devS.containsKey(name)) {
                continue;
            }
            PdeEngine.runGpuObservables(dev, cfg, Arrays.copyOf(ps, Math.min(1000, ps.length)), l);
            double best = Double.MAX_VALUE;
            FhnResult[] dgpu = null;
            for (int r = 0; r < 3; r++) {
                long d0 = System.nanoTime();
                dgpu = PdeEngine.runGpuObservables(dev, cfg, ps, l);
                best = Math.min(best, (System.nanoTime() - d0) / 1e9);
            }
            devS.put(name, best);
            double kbest = Double.MAX_VALUE;
            for (int r = 0; r < 3; r++) {
                kbest = Math.min(kbest, PdeEngine.residentKernelMillis(dev, cfg, ps, l) / 1e3);
            }
            kernelS.put(name, kbest);
            for (int j = 0; j < ps.length; j++) {
                if (Double.doubleToLongBits(cpu[j].maxV) != Double.doubleToLongBits(dgpu[j].maxV)
                        || cpu[j].pulseCount != dgpu[j].pulseCount) {
                    mismatches++;
                }
            }
        }
        long steps = PdeEngine.steps(cfg);
        double updates = (double) ps.length * o.sweepCells * steps;
        for (var e : jobS.entrySet()) {
            out.add(String.format(Locale.ROOT, "| sweep, Spark job (gpu, %d partitions, local[%d]) | %d rows x %d cells x"
                    + " %d steps | %.1f | %.3g cell updates/s (%.1fx the CPU twin) | |", e.getKey(),
                    Math.max(o.partitions, o.threads), ps.length, o.sweepCells, steps, e.getValue() * 1e3,
                    updates / e.getValue(), cpuS / e.getValue()));
        }
        for (var e : cpuJobS.entrySet()) {
            out.add(String.format(Locale.ROOT, "| sweep, Spark job (CPU twin, %d partitions, local[%d]) | same | %.1f | "
                    + "%.3g cell updates/s (the GPU job: %.1fx) | |", e.getKey(), Math.max(o.partitions, o.threads),
                    e.getValue() * 1e3, updates / e.getValue(), e.getValue() / jobS.get(e.getKey())));
        }
        for (int parts : jobS.keySet()) {
            out.add(String.format(Locale.ROOT, "| sweep, Spark job with 1 step (%d partitions: Spark, rows, per-task GPU"
                    + " set-up) | %d rows x %d cells x 1 step | %.1f | | |", parts, ps.length, o.sweepCells,
                    oneStepS.get(parts) * 1e3));
            out.add(String.format(Locale.ROOT, "| collect of the input's 4 columns (%d partitions) | %d rows | %.1f | | |",
                    parts, ps.length, collectS.get(parts) * 1e3));
        }
        for (var e : devS.entrySet()) {
            out.add(String.format(Locale.ROOT, "| sweep, device batch alone (%s; upload, steps, observables back) "
                    + "| same | %.1f | %.3g cell updates/s (%.1fx the CPU twin; kernel alone %.1f ms, %.3g/s) | |",
                    e.getKey(), e.getValue() * 1e3, updates / e.getValue(), cpuS / e.getValue(),
                    kernelS.get(e.getKey()) * 1e3, updates / kernelS.get(e.getKey())));
        }
        out.add(String.format(Locale.ROOT, "| sweep, CPU twin (%d threads) | same | %.1f | %.3g cell updates/s | |",
                o.threads, cpuS * 1e3, updates / cpuS));
        out.add("");
        out.add(mismatches == 0 ? "Sweep: every row equals the CPU twin's bits."
                : "Sweep: " + mismatches + " rows differ from the CPU twin.");
        spark.stop();
        return mismatches == 0 ? 0 : 3;
    }
}
