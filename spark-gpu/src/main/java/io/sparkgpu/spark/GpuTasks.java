package io.sparkgpu.spark;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.SparkGpuConf;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;

/**
 * How many tasks a GPU fit should run, shared by the capabilities that give each GPU one task (k-means'
 * single-stage fit, the scan statistic's scans and replicas): one per GPU that Spark schedules, unless
 * {@value #TASKS} says otherwise; and whether a fit with a given backend policy runs on GPUs at all.
 */
public final class GpuTasks {
    /** Setting: number of tasks of a GPU fit (default: one per GPU that Spark schedules, else 1). */
    public static final String TASKS = "spark.sparkgpu.fit.gpuTasks";

    private GpuTasks() {
    }

    /** {@value #TASKS} when set (a positive integer, else an error naming the setting), else {@link #scheduledGpus}. */
    public static int count(SparkContext sc) {
        String set = SparkGpuConf.get(TASKS, "");
        if (set.isBlank()) {
            return scheduledGpus(sc);
        }
        int t;
        try {
            t = Integer.parseInt(set.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(TASKS + " must be a positive integer, got '" + set + "'");
        }
        if (t < 1) {
            throw new IllegalArgumentException(TASKS + " must be a positive integer, got '" + set + "'");
        }
        return t;
    }

    /** GPUs Spark schedules as the resource {@code gpu}: executors x gpus per executor; 1 when none are scheduled. */
    public static int scheduledGpus(SparkContext sc) {
        SparkConf conf = sc.getConf();
        double perExecutor = conf.getDouble("spark.executor.resource.gpu.amount", 0);
        if (perExecutor <= 0 || sc.isLocal()) {
            return 1; // local mode: every task uses spark.sparkgpu.device
        }
        int executors = Math.max(1, sc.statusTracker().getExecutorInfos().length - 1); // minus the driver
        return (int) Math.max(1, Math.floor(executors * perExecutor));
    }

    /**
     * True when the GPU is the backend a task would use on this cluster, decided on the driver: {@code gpu}
     * yes, {@code cpu} no; {@code auto} in local mode when the module's kernels load on the driver's device,
     * else when executors are given GPUs.
     */
    public static boolean gpuFit(SparkContext sc, Backend backend, String module, String probeKernel) {
        if (backend == Backend.GPU) {
            return true;
        }
        if (backend == Backend.CPU) {
            return false;
        }
        if (sc.isLocal()) {
            return BackendChooser.gpuUsable(module, probeKernel);
        }
        return sc.getConf().getDouble("spark.executor.resource.gpu.amount", 0) > 0;
    }

    /**
     * The rule of {@code backend=gpu} at {@code fit}, on the driver, before any Spark job: passes when the backend is
     * not {@code gpu}, when executors of a cluster are given GPUs ({@code spark.executor.resource.gpu.amount > 0};
     * they are checked by their tasks), or when the driver's JVM loads the module (local mode runs the tasks there,
     * and a GPU host's driver sees its GPUs); otherwise a {@link io.sparkgpu.cuda.CudaException} says why and what
     * to set.
     */
    public static void checkGpuBackend(SparkContext sc, Backend backend, String module, String probeKernel,
                                       String what) {
        if (backend != Backend.GPU) {
            return;
        }
        if (!sc.isLocal() && sc.getConf().getDouble("spark.executor.resource.gpu.amount", 0) > 0) {
            return;
        }
        BackendChooser.checkGpuUsable(module, probeKernel, what);
    }
}
