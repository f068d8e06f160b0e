package io.sparkgpu.jobs.bench;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.sort.SortEngine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Counting sort of int keys in [0, m), one Markdown table: keys-only sort and stable key-value order (the
 * permutation), ours on the GPU (kernels alone, timed with CUDA events on keys already on the device; and the whole
 * call with its transfers from and to Java arrays) and ours on the CPU (all cores), for uniform, Zipf and one-hot
 * keys. Needs no Spark (runs in the GPU bundle). Usage: {@code --help}. scripts/peers/sort_peers.py prints the same
 * table for PyTorch's torch.sort (CUB radix sort) on the same shapes.
 *
 * <p>Where both ran, the GPU's output must equal the CPU twin's element for element, else the exit status is 3.
 */
public final class SortBenchmark {
    static final List<String> ALL_IMPLS = List.of("kernel", "gpu", "cpu");
    static final List<String> ALL_OPS = List.of("keys", "kv");
    static final List<String> ALL_DISTS = List.of("uniform", "zipf", "hot");

    private final Options o;

    SortBenchmark(Options o) {
        this.o = o;
    }

    public static void main(String[] args) throws Exception {
        BenchArgs.main(args, Options::new, Options::parse, x -> x.help, x -> x.markdown, o -> {
            Report report = new SortBenchmark(o).run();
            return new BenchArgs.Outcome(report.markdown(), report.mismatch ? 3 : 0);
        });
    }

    // ------------------------------------------------------------------------------------------ options

    @Command(name = "SortBenchmark", sortOptions = false,
            description = {"counting sort of int keys in [0, m), keys-only and stable key-value, one Markdown table."})
    static final class Options {
        List<Integer> ns = List.of(1_000_000, 10_000_000, 100_000_000);
        List<Integer> ms = List.of(1 << 8, 1 << 12, 1 << 16, 1 << 20, 1 << 24);
        Set<String> dists = new LinkedHashSet<>(ALL_DISTS);
        @Option(order = 4, names = "--zipf-s", paramLabel = "S", description = "Zipf exponent  [1.2]")
        double zipfS = 1.2;
        Set<String> ops = new LinkedHashSet<>(ALL_OPS);
        Set<String> impls = new LinkedHashSet<>(ALL_IMPLS);
        boolean longIndex;
        String keysKernel = "auto";
        List<String> stableKernels = List.of("onesweep");
        @Option(order = 9, names = "--reps", converter = BenchArgs.IntCount.class, paramLabel = "R",
                description = {"timed GPU runs after a warm-up (median reported)  [5]"})
        int reps = 5;
        @Option(order = 10, names = "--cpu-reps", converter = BenchArgs.IntCount.class, paramLabel = "R",
                description = {"timed CPU runs after a warm-up (median reported)  [3]"})
        int cpuReps = 3;
        @Option(order = 11, names = "--threads", converter = BenchArgs.IntCount.class, paramLabel = "T",
                description = "CPU threads  [available cores]")
        int threads = Runtime.getRuntime().availableProcessors();
        @Option(order = 12, names = "--cpu-max-n", converter = BenchArgs.Count.class, paramLabel = "N",
                description = "run the CPU twin only up to N keys  [1e8]")
        long cpuMaxN = 100_000_000L;
        @Option(order = 13, names = "--seed", paramLabel = "S", description = "data seed  [42]")
        long seed = 42;
        double maxSeconds = 540;
        @Option(order = 15, names = "--device", paramLabel = "G", description = "CUDA device ordinal  [0]")
        int device = 0;
        @Option(order = 16, names = "--markdown", paramLabel = "FILE", description = "also write the report to FILE")
        String markdown;
        @Option(order = 17, names = "--wide", description = {"also time, at each n, the GPU kernels' stable order of "
            + "uniform full-range 32-bit keys (the general radix path, m = 2^32)"})
        boolean wide;
        boolean help;
        String[] argv = new String[0];

        @Option(order = 1, names = "--n", paramLabel = "LIST",
                description = {"key counts, comma-separated (1e6, 1_000_000)  [1e6,1e7,1e8]"})
        void setN(String v) {
            this.ns = counts("--n", v, 1, Integer.MAX_VALUE);
        }

        @Option(order = 2, names = "--m", paramLabel = "LIST",
                description = {"key ranges (2^k or numbers, <= 2^24)  [2^8,2^12,2^16,2^20,2^24]"})
        void setM(String v) {
            this.ms = counts("--m", v, 1, SortEngine.MAX_RANGE);
        }

        @Option(order = 3, names = "--dists", paramLabel = "LIST",
                description = {"any of uniform,zipf,hot  [all]",
                    "(zipf: Zipf(s) over the m keys; hot: one key holds half of the keys)"})
        void setDists(String v) {
            this.dists = new LinkedHashSet<>(BenchArgs.choices("--dists", v, ALL_DISTS));
        }

        @Option(order = 5, names = "--ops", paramLabel = "LIST",
                description = "any of keys (keys only), kv (stable order)  [all]")
        void setOps(String v) {
            this.ops = new LinkedHashSet<>(BenchArgs.choices("--ops", v, ALL_OPS));
        }

        @Option(order = 6, names = "--impls", paramLabel = "LIST",
                description = {"any of kernel (GPU kernels, CUDA events), gpu (with transfers), cpu  [all]"})
        void setImpls(String v) {
            this.impls = new LinkedHashSet<>(BenchArgs.choices("--impls", v, ALL_IMPLS));
        }

        @Option(order = 7, names = "--index", paramLabel = "int|long",
                description = "index type of the stable order  [int]")
        void setIndex(String v) {
            this.longIndex = BenchArgs.choice("--index", v, List.of("int", "long")).equals("long");
        }

        @Option(order = 8, names = "--keys-kernel", paramLabel = "K",
                description = {"keys-only output kernel: auto, runs, descent, radix (onesweep passes, m > 2^8),",
                    "both (runs and descent) or all (runs, descent, radix)  [auto]"})
        void setKeysKernel(String v) {
            this.keysKernel = BenchArgs.choice("--keys-kernel", v,
                    List.of("auto", "runs", "descent", "radix", "both", "all"));
        }

        @Option(order = 18, names = "--stable-kernel", paramLabel = "LIST",
                description = {"stable order's kernels (2+ passes): any of onesweep, classic  [onesweep]"})
        void setStableKernel(String v) {
            this.stableKernels = List.copyOf(BenchArgs.choices("--stable-kernel", v, List.of("onesweep", "classic")));
        }

        @Option(order = 14, names = "--max-seconds", paramLabel = "S",
                description = {"start no new case after S seconds (its rows say so), so one call of",
                    "the GPU host's 600 s limit always ends with a table; 0: no limit  [540]"})
        void setMaxSeconds(String v) {
            this.maxSeconds = Double.parseDouble(v.trim());
            if (!(this.maxSeconds >= 0)) {
                throw new IllegalArgumentException("--max-seconds must be >= 0, got " + v);
            }
        }

        static Options parse(String[] args) {
            Options o = new Options();
            o.argv = args.clone();
            o.help = BenchArgs.parse(o, args);
            if (o.reps < 1 || o.cpuReps < 1 || o.threads < 1) {
                throw new IllegalArgumentException("--reps, --cpu-reps and --threads must be >= 1");
            }
            if (!(o.zipfS > 0)) {
                throw new IllegalArgumentException("--zipf-s must be > 0, got " + o.zipfS);
            }
            return o;
        }

        /** Comma-separated whole numbers (1e6, 1_000, 2^16) within [min, max]. */
        static List<Integer> counts(String option, String list, long min, long max) {
            List<Integer> out = new ArrayList<>();
            for (String s : list.split(",")) {
                String t = s.trim();
                if (t.isEmpty()) {
                    continue;
                }
                long v;
                if (t.startsWith("2^")) {
                    int e = Integer.parseInt(t.substring(2).trim());
                    if (e < 0 || e > 62) {
                        throw new IllegalArgumentException(option + ": exponent out of range in '" + t + "'");
                    }
                    v = 1L << e;
                } else {
                    v = KMeansBenchmark.Options.count(t);
                }
                if (v < min || v > max) {
                    throw new IllegalArgumentException(option + ": " + t + " is outside [" + min + ", " + max + "]");
                }
                out.add((int) v);
            }
            if (out.isEmpty()) {
                throw new IllegalArgumentException(option + " is empty");
            }
            return out;
        }
    }

    // ------------------------------------------------------------------------------------------ report

    static final class Row {
        final long n;
        final String m;
        final String dist;
        final String op;
        final String impl;
        final double seconds;
        final String notes;

        Row(long n, String m, String dist, String op, String impl, double seconds, String notes) {
            this.n = n;
            this.m = m;
            this.dist = dist;
            this.op = op;
            this.impl = impl;
            this.seconds = seconds;
            this.notes = notes;
        }
    }

    static final class Report {
        final List<String> header = new ArrayList<>();
        final List<Row> rows = new ArrayList<>();
        final List<String> agreement = new ArrayList<>();
        boolean mismatch;

        String markdown() {
            StringBuilder sb = new StringBuilder("## counting sort benchmark\n\n");
            for (String h : header) {
                sb.append("- ").append(h).append('\n');
            }
            sb.append('\n');
            sb.append(tableHeader());
            for (Row r : rows) {
                sb.append(tableRow(r.n, r.m, r.dist, r.op, r.impl, r.seconds, r.notes));
            }
            if (!agreement.isEmpty()) {
                sb.append("\nAgreement:\n\n");
                for (String a : agreement) {
                    sb.append("- ").append(a).append('\n');
                }
            }
            sb.append("\nms: median of the timed runs after one warm-up. kernels: every launch of the operation on keys "
                    + "already on the device, between two CUDA events (keys-only: zeroing the histogram, histogram, "
                    + "pyramid, output; kv: all LSD passes), no allocation or copy. with transfers: the whole call from "
                    + "a Java int[] to the Java output array (device allocation, copies in 64M-element chunks from "
                    + "pageable memory, kernels, result download). G keys/s = n / time. kv = the stable sorting "
                    + "permutation (int or long indices), so rows can be permuted.\n");
            return sb.toString();
        }
    }

    /** The table's column line and separator (the peer script prints the same). */
    static String tableHeader() {
        return "| n | m | keys | op | implementation | ms | G keys/s | notes |\n"
                + "| ---: | ---: | --- | --- | --- | ---: | ---: | --- |\n";
    }

    static String tableRow(long n, String m, String dist, String op, String impl, double seconds, String notes) {
        String ms = Double.isNaN(seconds) ? "n/a" : String.format(Locale.ROOT, "%.3f", seconds * 1e3);
        String g = Double.isNaN(seconds) ? "n/a" : String.format(Locale.ROOT, "%.3f", n / seconds / 1e9);
        return "| " + n + " | " + m + " | " + dist + " | " + op + " | " + impl + " | " + ms + " | " + g + " | "
                + notes.replace("|", "\\|") + " |\n";
    }

    static String rangeName(int m) {
        return Integer.bitCount(m) == 1 ? "2^" + Integer.numberOfTrailingZeros(m) : String.valueOf(m);
    }

    // ------------------------------------------------------------------------------------------ data

    static final int GEN_BLOCK = 1 << 20;

    /** Deterministic keys for a distribution: blocks of 2^20 generated in parallel, each from its own seed. */
    static int[] keys(String dist, int n, int m, double zipfS, long seed) {
        int[] k = new int[n];
        double[] cdf = dist.equals("zipf") ? zipfCdf(m, zipfS) : null;
        int hot = new SplittableRandom(seed ^ 0x5DEECE66DL).nextInt(m);
        boolean pow2 = Integer.bitCount(m) == 1;
        int blocks = (n + GEN_BLOCK - 1) / GEN_BLOCK;
        IntStream.range(0, blocks).parallel().forEach(b -> {
            SplittableRandom r = new SplittableRandom(seed * 1_000_003L + b);
            int from = b * GEN_BLOCK;
            int to = (int) Math.min(n, (long) from + GEN_BLOCK);
            for (int i = from; i < to; i++) {
                switch (dist) {
                    case "uniform":
                        k[i] = r.nextInt(m);
                        break;
                    case "hot":
                        k[i] = r.nextBoolean() ? hot : r.nextInt(m);
                        break;
                    default:
                        int rank = zipfRank(cdf, r.nextDouble() * cdf[m - 1]);
                        k[i] = pow2 ? (int) ((rank * 0x9E3779B1L) & (m - 1)) : rank;
                        break;
                }
            }
        });
        return k;
    }

    /** Cumulative weights of Zipf(s): cdf[r] = sum over ranks 1..r+1 of rank^-s. */
    static double[] zipfCdf(int m, double s) {
        double[] cdf = new double[m];
        double acc = 0;
        for (int r = 0; r < m; r++) {
            acc += Math.pow(r + 1, -s);
            cdf[r] = acc;
        }
        return cdf;
    }

    /** The 0-based rank whose cumulative weight first reaches u. */
    static int zipfRank(double[] cdf, double u) {
        int i = Arrays.binarySearch(cdf, u);
        return i >= 0 ? i : Math.min(cdf.length - 1, -i - 1);
    }

    static String describe(String dist, double zipfS) {
        switch (dist) {
            case "zipf":
                return "zipf-" + zipfS;
            case "hot":
                return "one key 50%";
            default:
                return "uniform";
        }
    }

    // ------------------------------------------------------------------------------------------ run

    private static void progress(String fmt, Object... args) {
        System.err.println("[bench] " + String.format(Locale.ROOT, fmt, args));
        System.err.flush();
    }

    Report run() {
        Report rep = new Report();
        rep.header.addAll(BenchArgs.runHeader(o.argv));
        CudaDevice dev = null;
        String gpuWhy = "not requested";
        if (o.impls.contains("gpu") || o.impls.contains("kernel")) {
            try {
                CudaRuntime.Status st = CudaRuntime.status();
                if (!st.available) {
                    gpuWhy = KMeansBenchmark.shortReason(st.reason);
                } else {
                    dev = CudaRuntime.device(o.device);
                    SortEngine.load(dev);
                    rep.header.add(String.format(Locale.ROOT, "GPU: %s, CUDA driver %d.%d", dev,
                            st.driverVersion / 1000, (st.driverVersion % 1000) / 10));
                }
            } catch (RuntimeException | LinkageError e) {
                dev = null;
                gpuWhy = KMeansBenchmark.shortReason(e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
        if (dev == null) {
            rep.header.add("GPU: n/a: " + gpuWhy);
        }
        rep.header.add(String.format(Locale.ROOT, "keys: int32 in [0, m); uniform, Zipf(s = %s) over the m keys "
                + "(rank r to key r * 0x9E3779B1 mod m for power-of-two m), or one key holding half; seed %d; CPU "
                + "threads T = %d; stable order with %s indices", o.zipfS, o.seed, o.threads,
                o.longIndex ? "long" : "int"));
        long start = System.nanoTime();
        for (int n : o.ns) {
            if (o.wide && dev != null && o.impls.contains("kernel")) {
                int[] keys = new java.util.SplittableRandom(o.seed).ints(n).toArray();
                for (String k : o.stableKernels) {
                    double[] ms = SortEngine.gpuWideKernelMillis(dev, keys, k, o.reps + 1);
                    double s = median(Arrays.copyOfRange(ms, 1, ms.length)) / 1e3;
                    rep.rows.add(new Row(n, "2^32", "uniform", "kv (stable order, int)", "ours GPU, kernels", s,
                            "general path: 4 x 8-bit LSD passes, " + k));
                    progress("n=%d m=2^32 uniform kv: GPU kernels (%s) %.3f ms", n, k, s * 1e3);
                }
            }
            for (int m : o.ms) {
                for (String dist : o.dists) {
                    if (o.maxSeconds > 0 && (System.nanoTime() - start) / 1e9 > o.maxSeconds) {
                        skipped(n, m, dist, rep);
                    } else {
                        runOne(n, m, dist, dev, gpuWhy, rep);
                    }
                }
            }
        }
        return rep;
    }

    /** The rows of a case not started because --max-seconds had passed. */
    private void skipped(int n, int m, String dist, Report rep) {
        for (String op : o.ops) {
            String opName = op.equals("kv") ? "kv (stable order, " + (o.longIndex ? "long" : "int") + ")" : "keys only";
            rep.rows.add(new Row(n, rangeName(m), describe(dist, o.zipfS), opName, "all", Double.NaN,
                    "skipped: --max-seconds " + o.maxSeconds + " reached"));
        }
    }

    /** Median of the timed runs after one warm-up, in seconds. */
    private static double median(double[] t) {
        double[] c = t.clone();
        Arrays.sort(c);
        return c.length % 2 == 1 ? c[c.length / 2] : 0.5 * (c[c.length / 2 - 1] + c[c.length / 2]);
    }

    private interface Call<T> {
        T run();
    }

    /** Runs once untimed, then {@code reps} times; returns the last result and stores the median seconds. */
    private static <T> T timed(int reps, double[] seconds, Call<T> call) {
        T last = call.run();
        double[] t = new double[reps];
        for (int r = 0; r < reps; r++) {
            long t0 = System.nanoTime();
            last = call.run();
            t[r] = (System.nanoTime() - t0) / 1e9;
        }
        seconds[0] = median(t);
        return last;
    }

    private void runOne(int n, int m, String dist, CudaDevice dev, String gpuWhy, Report rep) {
        String name = describe(dist, o.zipfS);
        String mName = rangeName(m);
        long t0 = System.nanoTime();
        int[] keys = keys(dist, n, m, o.zipfS, o.seed);
        progress("n=%d m=%s %s: keys generated in %.2f s", n, mName, name, (System.nanoTime() - t0) / 1e9);
        for (String op : o.ops) {
            boolean kv = op.equals("kv");
            String opName = kv ? "kv (stable order, " + (o.longIndex ? "long" : "int") + ")" : "keys only";
            String plan = kv ? passPlan(m) : "";
            Object gpuOut = null;
            Object cpuOut = null;
            if (o.impls.contains("kernel")) {
                if (dev == null) {
                    rep.rows.add(new Row(n, mName, name, opName, "ours GPU, kernels", Double.NaN, "n/a: " + gpuWhy));
                } else {
                    List<String> kernels = new ArrayList<>();
                    if (kv && SortEngine.passBits(m).length > 1) {
                        kernels.addAll(o.stableKernels);
                    } else if (kv) {
                        kernels.add(null); // one pass: the classic kernels
                    } else if (o.keysKernel.equals("both") || o.keysKernel.equals("all")) {
                        kernels.add("sort_keys_runs");
                        kernels.add("sort_keys_descent");
                        if (o.keysKernel.equals("all") && SortEngine.passBits(m).length > 1) {
                            kernels.add(SortEngine.RADIX_KEYS);
                        }
                    } else if (o.keysKernel.equals("radix")) {
                        kernels.add(SortEngine.passBits(m).length > 1 ? SortEngine.RADIX_KEYS : null);
                    } else {
                        kernels.add(o.keysKernel.equals("auto") ? null : "sort_keys_" + o.keysKernel);
                    }
                    for (String k : kernels) {
                        SortEngine.KernelOp gop = !kv ? SortEngine.KernelOp.KEYS
                                : o.longIndex ? SortEngine.KernelOp.ORDER_LONG : SortEngine.KernelOp.ORDER;
                        try {
                            double[] ms = SortEngine.gpuKernelMillis(dev, keys, m, gop, k, o.reps + 1);
                            double s = median(Arrays.copyOfRange(ms, 1, ms.length)) / 1e3;
                            String used = kv ? null : k != null ? k : SortEngine.gpuKeysKernel(keys, m);
                            String note = kv ? plan + (k != null ? ", " + k : "")
                                    : SortEngine.RADIX_KEYS.equals(used)
                                    ? "radix: " + passPlan(m) + ", onesweep, keys only" + (k == null ? " (auto)" : "")
                                    : "output " + used + (k == null ? " (auto)" : "") + "; histogram in "
                                    + (m <= (1 << 15) ? "shared" : "global") + " memory";
                            rep.rows.add(new Row(n, mName, name, opName, "ours GPU, kernels", s, note));
                            progress("n=%d m=%s %s %s: GPU kernels %.3f ms (%s)", n, mName, name, op, s * 1e3, note);
                        } catch (RuntimeException e) {
                            progress("n=%d m=%s %s %s: GPU kernels failed: %s", n, mName, name, op, e);
                            rep.rows.add(new Row(n, mName, name, opName, "ours GPU, kernels", Double.NaN,
                                    "failed: " + e.getClass().getSimpleName() + ": " + e.getMessage()));
                        }
                    }
                }
            }
            if (o.impls.contains("gpu")) {
                if (dev == null) {
                    rep.rows.add(new Row(n, mName, name, opName, "ours GPU, with transfers", Double.NaN, "n/a: " + gpuWhy));
                } else {
                    final CudaDevice d = dev;
                    double[] s = new double[1];
                    try {
                        gpuOut = timed(o.reps, s, () -> !kv ? SortEngine.gpuSortKeys(d, keys, m)
                                : o.longIndex ? SortEngine.gpuOrderLong(d, keys, m, 0)
                                : SortEngine.gpuOrder(d, keys, m));
                        rep.rows.add(new Row(n, mName, name, opName, "ours GPU, with transfers", s[0], kv ? plan : ""));
                        progress("n=%d m=%s %s %s: GPU with transfers %.3f ms", n, mName, name, op, s[0] * 1e3);
                    } catch (RuntimeException e) {
                        progress("n=%d m=%s %s %s: GPU failed: %s", n, mName, name, op, e);
                        rep.rows.add(new Row(n, mName, name, opName, "ours GPU, with transfers", Double.NaN,
                                "failed: " + e.getClass().getSimpleName() + ": " + e.getMessage()));
                    }
                }
            }
            if (o.impls.contains("cpu")) {
                String impl = "ours CPU, " + o.threads + " threads";
                if (n > o.cpuMaxN) {
                    rep.rows.add(new Row(n, mName, name, opName, impl, Double.NaN, "skipped: n > --cpu-max-n"));
                } else {
                    double[] s = new double[1];
                    cpuOut = timed(o.cpuReps, s, () -> !kv ? SortEngine.sortKeys(keys, m, o.threads)
                            : o.longIndex ? SortEngine.orderLong(keys, m, 0, o.threads)
                            : SortEngine.order(keys, m, o.threads));
                    rep.rows.add(new Row(n, mName, name, opName, impl, s[0], kv ? cpuPlan(m) : ""));
                    progress("n=%d m=%s %s %s: CPU %.3f ms", n, mName, name, op, s[0] * 1e3);
                }
            }
            if (gpuOut != null && cpuOut != null) {
                boolean eq = gpuOut instanceof int[] ? Arrays.equals((int[]) gpuOut, (int[]) cpuOut)
                        : Arrays.equals((long[]) gpuOut, (long[]) cpuOut);
                rep.mismatch |= !eq;
                rep.agreement.add(String.format(Locale.ROOT, "n=%d m=%s %s %s: GPU output %s the CPU twin's", n, mName,
                        name, op, eq ? "equals" : "DIFFERS FROM"));
            }
        }
    }

    static String passPlan(int m) {
        int[] bits = SortEngine.passBits(m);
        StringBuilder sb = new StringBuilder().append(bits.length).append(bits.length == 1 ? " pass (" : " passes (");
        for (int i = 0; i < bits.length; i++) {
            sb.append(i > 0 ? "+" : "").append(bits[i]);
        }
        return sb.append(" bits)").toString();
    }

    static String cpuPlan(int m) {
        int bits = 32 - Integer.numberOfLeadingZeros(m - 1);
        return bits <= 16 ? "1 counting pass" : "2 LSD passes";
    }
}
