package io.sparkgpu.spark;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkgpu.cuda.CudaRuntime;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.SparkSession;

/**
 * An embedded Spark on one host whose tasks get the host's GPUs as the Spark resource {@code gpu}, so that
 * {@code TaskContext.resources()} names each task's GPU and several tasks share one GPU.
 *
 * <p><b>Why not {@code local[N]}.</b> In Spark 4.1 local mode the driver discovers resources
 * ({@code spark.driver.resource.gpu.*} fill {@code SparkContext.resources()}), but the local scheduler
 * backend offers only CPU cores to the task scheduler: a job whose tasks ask for
 * {@code spark.task.resource.gpu.amount} is never scheduled and waits forever (checked by experiment), and
 * without that setting tasks get no resources. {@link #checkMaster} refuses that combination.
 *
 * <p><b>What works: {@code local-cluster[1,C,M]}.</b> An in-process standalone master and one worker; the
 * worker runs the GPU discovery script ({@code spark.worker.resource.gpu.*}) and starts one executor JVM
 * with C cores, M MiB and all discovered GPUs ({@code spark.executor.resource.gpu.amount}); the task
 * scheduler then hands each task an address, with {@code 1/tasksPerGpu} of a GPU per task. The worker
 * launches the executor with plain {@code java} (no Spark scripts) but wants {@code $SPARK_HOME} to be set
 * and to contain {@code jars/} and {@code launcher/target/scala-2.13/} (both may be empty); the executor's
 * class path is this JVM's class path ({@code spark.executor.extraClassPath}). This class creates those
 * directories, writes the discovery script and sets everything else. The environment variable SPARK_HOME
 * must be set (the worker reads it from the environment only; without it the worker would use the current
 * directory).
 *
 * <p><b>Several executors: {@code local-cluster[W,C,M]}</b> ({@link #executors(int)}): W workers, each with one
 * executor of C cores, M MiB and {@code GPUs/W} GPUs that no other worker has (the discovery script claims them),
 * the layout of a multi-GPU cluster node with one executor per GPU. With {@code spark.sparkgpu.gpu.addressMap}
 * (e.g. {@code 0:0,1:0}) two scheduled addresses can be one device, so a one-GPU host (or CI, without a GPU)
 * runs the same several-executor code path.
 *
 * <p>Executor JVM logs go to {@code $SPARK_HOME/work/app-.../0/stderr}. Extra executor JVM options (e.g. a
 * class-load trace) come from the system property {@value #EXECUTOR_JAVA_OPTIONS} or the environment
 * variable {@code SPARKGPU_EXECUTOR_JAVA_OPTS}.
 */
public final class LocalGpuSpark {
    /** System property with extra JVM options for the executor. */
    public static final String EXECUTOR_JAVA_OPTIONS = "sparkgpu.executor.javaOptions";
    /** Spark's key for the GPU share of one task. */
    public static final String TASK_GPU_AMOUNT = "spark.task.resource.gpu.amount";

    private static final Pattern LOCAL = Pattern.compile("local(\\[.*\\])?");

    private final int cores;
    private final int tasksPerGpu;
    private final List<String> addresses;
    private final long executorMemoryMb;
    private final Map<String, String> conf = new LinkedHashMap<>();
    private String appName = "spark-gpu";
    private int executors = 1;

    private LocalGpuSpark(int cores, int tasksPerGpu, List<String> addresses, long executorMemoryMb) {
        this.cores = cores;
        this.tasksPerGpu = tasksPerGpu;
        this.addresses = addresses;
        this.executorMemoryMb = executorMemoryMb;
    }

    /**
     * @param cores            executor cores (concurrent tasks at most)
     * @param tasksPerGpu      tasks that share one GPU at a time (task amount {@code 1/tasksPerGpu})
     * @param addresses        GPU addresses the discovery script reports (CUDA ordinals as strings); null:
     *                         "0".."n-1" for the n devices CUDA sees in this JVM
     * @param executorMemoryMb heap of the executor JVM
     */
    public static LocalGpuSpark of(int cores, int tasksPerGpu, List<String> addresses, long executorMemoryMb) {
        if (cores < 1) {
            throw new IllegalArgumentException("cores must be >= 1, got " + cores);
        }
        if (tasksPerGpu < 1) {
            throw new IllegalArgumentException("tasksPerGpu must be >= 1, got " + tasksPerGpu);
        }
        if (executorMemoryMb < 512) {
            throw new IllegalArgumentException("executor memory must be >= 512 MiB, got " + executorMemoryMb);
        }
        List<String> addr = addresses != null ? List.copyOf(addresses) : cudaAddresses();
        if (addr.isEmpty()) {
            throw new IllegalArgumentException("no GPU addresses to schedule");
        }
        for (String a : addr) {
            if (!a.matches("[0-9]+")) {
                throw new IllegalArgumentException("GPU address '" + a + "' is not a CUDA device ordinal");
            }
        }
        return new LocalGpuSpark(cores, tasksPerGpu, addr, executorMemoryMb);
    }

    /** "0".."n-1" for the devices the CUDA driver reports here; fails with the driver's reason when none. */
    public static List<String> cudaAddresses() {
        CudaRuntime.Status s = CudaRuntime.status();
        if (!s.available) {
            throw new IllegalStateException("cannot schedule GPUs as Spark resources: " + s.reason);
        }
        List<String> a = new ArrayList<>();
        for (int i = 0; i < s.deviceCount; i++) {
            a.add(Integer.toString(i));
        }
        return a;
    }

    /**
     * Runs {@code n} workers, each with one executor of {@link #cores()} cores, {@code addresses/n} GPUs and the
     * executor memory (default 1: one executor with every GPU). With one GPU per executor this is the usual
     * multi-GPU layout of a cluster (one executor per GPU); the GPUs are split between the workers by the
     * discovery script, which hands each worker addresses no other worker took.
     */
    public LocalGpuSpark executors(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("executors must be >= 1, got " + n);
        }
        if (addresses.size() % n != 0) {
            throw new IllegalArgumentException("executors must divide the " + addresses.size() + " GPU address(es) "
                    + addresses + " evenly, got " + n);
        }
        this.executors = n;
        return this;
    }

    public int executors() {
        return executors;
    }

    /** GPUs of one executor. */
    public int gpusPerExecutor() {
        return addresses.size() / executors;
    }

    public LocalGpuSpark appName(String name) {
        this.appName = name;
        return this;
    }

    /** Any further Spark setting (applied last). */
    public LocalGpuSpark config(String key, String value) {
        conf.put(key, value);
        return this;
    }

    public int cores() {
        return cores;
    }

    public int tasksPerGpu() {
        return tasksPerGpu;
    }

    public List<String> addresses() {
        return addresses;
    }

    /** The master URL: {@link #executors()} workers, each with the executor's cores and memory. */
    public String master() {
        return "local-cluster[" + executors + "," + cores + "," + executorMemoryMb + "]";
    }

    /** The GPU share of one task, as Spark wants it written. */
    public String taskAmount() {
        return tasksPerGpu == 1 ? "1" : Double.toString(1.0 / tasksPerGpu);
    }

    /** Every setting of the session (without the directories, which {@link #getOrCreate()} prepares). */
    public Map<String, String> settings(Path discoveryScript) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("spark.master", master());
        s.put("spark.app.name", appName);
        s.put("spark.ui.enabled", "false");
        s.put("spark.ui.showConsoleProgress", "false");
        s.put("spark.driver.host", "127.0.0.1");
        s.put("spark.driver.bindAddress", "127.0.0.1");
        s.put("spark.executor.memory", executorMemoryMb + "m");
        s.put("spark.default.parallelism", Integer.toString(cores * executors));
        s.put("spark.sql.shuffle.partitions", Integer.toString(cores * executors));
        s.put("spark.worker.resource.gpu.amount", Integer.toString(gpusPerExecutor()));
        s.put("spark.worker.resource.gpu.discoveryScript", discoveryScript.toString());
        s.put("spark.executor.resource.gpu.amount", Integer.toString(gpusPerExecutor()));
        s.put(TASK_GPU_AMOUNT, taskAmount());
        // the session starts once every executor has registered (at most Spark's 30 s; the standalone backend
        // counts against spark.cores.max, which is all the workers' cores anyway): otherwise the first executor up
        // can take most of the first job, and data a user caches in it is spread unevenly over the GPUs
        s.put("spark.cores.max", Integer.toString(cores * executors));
        s.put("spark.scheduler.minRegisteredResourcesRatio", "1.0");
        s.put("spark.executor.extraClassPath", absoluteClassPath(System.getProperty("java.class.path")));
        String extra = executorJavaOptions();
        if (!extra.isEmpty()) {
            s.put("spark.executor.extraJavaOptions", extra);
        }
        s.putAll(conf);
        return s;
    }

    /**
     * The class path with every entry made absolute: the executor runs in its own work directory, where a
     * relative entry would name nothing (and a missing class then surfaces as an obscure lambda
     * deserialisation error).
     */
    static String absoluteClassPath(String cp) {
        List<String> out = new ArrayList<>();
        for (String e : cp.split(java.io.File.pathSeparator)) {
            if (e.isEmpty()) {
                continue;
            }
            boolean wildcard = e.endsWith("*");
            String base = wildcard ? e.substring(0, e.length() - 1) : e;
            String abs = Paths.get(base.isEmpty() ? "." : base).toAbsolutePath().normalize().toString();
            out.add(wildcard ? abs + java.io.File.separator + "*" : abs);
        }
        return String.join(java.io.File.pathSeparator, out);
    }

    static String executorJavaOptions() {
        List<String> parts = new ArrayList<>();
        String prop = System.getProperty(EXECUTOR_JAVA_OPTIONS, "");
        String env = System.getenv("SPARKGPU_EXECUTOR_JAVA_OPTS");
        // JCuda's private native directory: the executor's user is ours, so the same directory serves
        String nativeDir = System.getProperty("spark.sparkgpu.native.dir");
        if (nativeDir != null && !nativeDir.isBlank()) {
            parts.add("-Dspark.sparkgpu.native.dir=" + nativeDir);
        }
        if (env != null && !env.isBlank()) {
            parts.add(env.trim());
        }
        if (!prop.isBlank()) {
            parts.add(prop.trim());
        }
        return String.join(" ", parts);
    }

    /**
     * Prepares {@code $SPARK_HOME} and the discovery script, then starts (or returns the running) session.
     * A session that is already running with other settings is returned as it is, as
     * {@code SparkSession.Builder.getOrCreate} does; stop it first to change the GPU sharing.
     */
    public SparkSession getOrCreate() {
        Path home = sparkHome();
        Path script = executors == 1 ? writeDiscoveryScript(home.resolve("conf"), addresses)
                : writeClaimingDiscoveryScript(home.resolve("conf"), addresses, gpusPerExecutor());
        SparkSession.Builder b = SparkSession.builder();
        settings(script).forEach(b::config);
        return b.getOrCreate();
    }

    /**
     * {@code $SPARK_HOME} with the two directories the standalone worker looks for; fails when the variable
     * is unset (the worker would otherwise treat the current directory as Spark's home).
     */
    public static Path sparkHome() {
        String env = System.getenv("SPARK_HOME");
        if (env == null || env.isBlank()) {
            throw new IllegalStateException("SPARK_HOME must be set for an embedded local-cluster Spark: the standalone "
                    + "worker reads it from the environment to start executors (any writable directory will do; "
                    + "its jars/ may stay empty, the executor class path is this JVM's)");
        }
        Path home = Paths.get(env).toAbsolutePath();
        try {
            Files.createDirectories(home.resolve("jars"));
            // AbstractCommandBuilder.getScalaVersion() looks for this build directory when
            // SPARK_SCALA_VERSION is unset
            Files.createDirectories(home.resolve("launcher/target/scala-2.13"));
            Files.createDirectories(home.resolve("conf"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare SPARK_HOME " + home + " for local-cluster Spark", e);
        }
        return home;
    }

    /** Writes an executable script printing {@code {"name":"gpu","addresses":[...]}} and returns its path. */
    public static Path writeDiscoveryScript(Path dir, List<String> addresses) {
        ObjectNode resource = JsonNodeFactory.instance.objectNode().put("name", "gpu");
        addresses.forEach(resource.putArray("addresses")::add);
        String json = resource.toString();
        String text = "#!/bin/sh\n# GPU discovery script written by io.sparkgpu.spark.LocalGpuSpark\necho '" + json + "'\n";
        try {
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, "gpu-discovery", ".sh");
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
            return tmp;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write a GPU discovery script in " + dir, e);
        }
    }

    /**
     * Writes a discovery script for several workers on one host: each run claims {@code perWorker} addresses no
     * earlier run claimed (an atomic {@code mkdir} per address in a fresh claims directory) and prints them, so
     * the workers of one local-cluster get disjoint GPUs; a run that finds too few free addresses fails with a
     * message, which Spark reports as the worker's start failure.
     */
    public static Path writeClaimingDiscoveryScript(Path dir, List<String> addresses, int perWorker) {
        try {
            Files.createDirectories(dir);
            Path claims = Files.createTempDirectory(dir, "gpu-claims");
            StringBuilder text = new StringBuilder("#!/bin/sh\n# GPU discovery script written by "
                    + "io.sparkgpu.spark.LocalGpuSpark: each worker claims " + perWorker + " of the addresses\n");
            text.append("claims='").append(claims).append("'\nout=''\nn=0\n");
            text.append("for a in ").append(String.join(" ", addresses)).append("; do\n");
            text.append("  [ $n -ge ").append(perWorker).append(" ] && break\n");
            text.append("  if mkdir \"$claims/$a\" 2>/dev/null; then\n");
            text.append("    if [ -z \"$out\" ]; then out=\"\\\"$a\\\"\"; else out=\"$out,\\\"$a\\\"\"; fi\n");
            text.append("    n=$((n + 1))\n  fi\ndone\n");
            text.append("if [ $n -lt ").append(perWorker).append(" ]; then\n");
            text.append("  echo \"no free GPU address left for this worker (claimed in $claims)\" >&2\n  exit 1\nfi\n");
            text.append("echo \"{\\\"name\\\":\\\"gpu\\\",\\\"addresses\\\":[$out]}\"\n");
            Path tmp = Files.createTempFile(dir, "gpu-discovery", ".sh");
            Files.writeString(tmp, text.toString(), StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
            return tmp;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write a GPU discovery script in " + dir, e);
        }
    }

    /**
     * Fails fast on a setting that would hang: a {@code local} master with {@code spark.task.resource.gpu.amount}
     * set (local mode never offers custom resources, so such tasks are never scheduled).
     */
    public static void checkMaster(String master, String taskGpuAmount) {
        if (master == null || taskGpuAmount == null || taskGpuAmount.isBlank()) {
            return;
        }
        Matcher m = LOCAL.matcher(master.trim().toLowerCase(Locale.ROOT));
        if (m.matches()) {
            throw new IllegalArgumentException("master " + master + " with " + TASK_GPU_AMOUNT + "=" + taskGpuAmount
                    + " would never run a task: Spark's local mode does not offer custom resources to the task "
                    + "scheduler. Use local-cluster (io.sparkgpu.spark.LocalGpuSpark) for GPU task resources, or "
                    + "drop " + TASK_GPU_AMOUNT + " (tasks then use " + "spark.sparkgpu.device" + ", default 0)");
        }
    }

    @Override
    public String toString() {
        return master() + " with GPU(s) " + addresses + (executors > 1 ? " over " + executors + " executors" : "") + ", "
                + tasksPerGpu + " task(s) per GPU (amount " + taskAmount() + ")";
    }
}
