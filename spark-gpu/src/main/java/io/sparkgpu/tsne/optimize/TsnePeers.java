package io.sparkgpu.tsne.optimize;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.spark.BarrierExchange;
import io.sparkgpu.spark.BarrierStages;
import io.sparkgpu.tsne.affinity.SparseRows;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUipcMemHandle;
import jcuda.driver.CUipcMem_flags;
import jcuda.driver.JCudaDriver;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkEnv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The link among the barrier tasks of one distributed t-SNE stage that each run the device-resident iteration on
 * their own rows ({@link TsneDeviceState} with a task's slices of P): exact sums of the tasks' fixed-point partial
 * sums (z, KL) and, after each update, the other tasks' new rows of Y into this task's device copy.
 *
 * <p>Rows travel device to device when every task can reach every other task's Y: through CUDA IPC
 * ({@code cuIpcGetMemHandle}/{@code cuIpcOpenMemHandle}: each task maps the others' Y buffers and copies their rows
 * over NVLink or PCIe) between executors of one host, and as a peer copy ({@code cuMemcpyPeerAsync}) between tasks of
 * one executor. Otherwise (executors on several hosts, a driver without IPC, {@value #ROW_EXCHANGE}{@code =host})
 * they go through the host: each task downloads its rows and {@link BarrierExchange} gathers them over TCP. The tasks
 * agree on the way at set-up (all device or all host), so every task ends each iteration with the same bits in Y.
 *
 * <p>Order per iteration (the same in every task): the z sum (and the KL sum), the task's own update, a gather that
 * says every task has updated, then the copies. A task reads another's rows only between that gather and the next
 * iteration's z sum, while the owner only reads them, so no copy ever sees rows being written.
 */
final class TsnePeers implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TsnePeers.class);
    /** Setting: {@code auto} (default; rows device to device where possible) or {@code host} (always via the host). */
    static final String ROW_EXCHANGE = "spark.sparkgpu.tsne.rowExchange";
    private static final byte[] NOTHING = new byte[0];
    /** The positions of the tasks linked in this process, by stage key and partition id (for peer copies). */
    private static final java.util.Map<String, DeviceBuffer> LOCAL = new java.util.concurrent.ConcurrentHashMap<>();

    private final BarrierExchange ex;
    private final BarrierTaskContext ctx;
    private final int me;
    private final int dim;
    /** Per task (partition id): its slices as {rowOffset, rows} pairs. */
    private final int[][] ranges;
    /** Device copies: each other task's Y as this context sees it (null for this task), or null through the host. */
    private final CUdeviceptr[] source;
    /** Device copies: the other task's context for a peer copy in this process, or null for an IPC mapping. */
    private final CUcontext[] sourceContext;
    /** The IPC mappings this task opened (closed with it). */
    private final boolean[] ipcOpened;
    private final CudaDevice dev;
    /** This task's key in {@link #LOCAL}. */
    private final String localKey;
    private int evaluations;
    private long sums;
    private long sumNanos;
    private long shares;
    private long shareNanos;

    private TsnePeers(BarrierExchange ex, BarrierTaskContext ctx, int dim, int[][] ranges, CUdeviceptr[] source,
            CUcontext[] sourceContext, boolean[] ipcOpened, CudaDevice dev, String localKey) {
        this.ex = ex;
        this.ctx = ctx;
        this.me = ctx.partitionId();
        this.dim = dim;
        this.ranges = ranges;
        this.source = source;
        this.sourceContext = sourceContext;
        this.ipcOpened = ipcOpened;
        this.dev = dev;
        this.localKey = localKey;
    }

    /** Whether rows go device to device (else through the host). */
    boolean deviceCopies() {
        return source != null;
    }

    /**
     * {@value #ROW_EXCHANGE}: auto or host (else an error naming the setting), from the job's local property when set
     * ({@code SparkContext.setLocalProperty}), else the Spark or system setting.
     */
    static boolean deviceCopiesAllowed(BarrierTaskContext ctx) {
        String local = ctx.getLocalProperty(ROW_EXCHANGE);
        String v = (local != null ? local : SparkGpuConf.get(ROW_EXCHANGE, "auto")).trim().toLowerCase(Locale.ROOT);
        if (v.equals("auto")) {
            return true;
        }
        if (v.equals("host")) {
            return false;
        }
        throw new IllegalArgumentException(ROW_EXCHANGE + " must be auto or host, got '" + v + "'");
    }

    /**
     * Links the state {@code st} (Y on its device, this task's slices) to the other tasks of the stage: two gathers
     * (what each task has and can share; whether every device link opened). Every task of the stage must call it.
     *
     * @param key unique to the stage (the same in all its tasks)
     */
    static TsnePeers connect(BarrierExchange ex, BarrierTaskContext ctx, TsneDeviceState st, String key) {
        int tasks = ctx.getTaskInfos().length;
        int me = ctx.partitionId();
        CudaDevice dev = st.device();
        DeviceBuffer y = st.positionsBuffer();
        byte[] handle = deviceCopiesAllowed(ctx) ? ipcHandle(dev, y) : NOTHING;
        long pid = ProcessHandle.current().pid();
        String host = hostKey();
        String localKey = key + ":" + me;
        LOCAL.put(localKey, y);
        try {
            return connect(ex, ctx, st, key, tasks, me, dev, y, handle, pid, host, localKey);
        } catch (RuntimeException | Error e) {
            LOCAL.remove(localKey);
            throw e;
        }
    }

    private static TsnePeers connect(BarrierExchange ex, BarrierTaskContext ctx, TsneDeviceState st, String key,
            int tasks, int me, CudaDevice dev, DeviceBuffer y, byte[] handle, long pid, String host, String localKey) {
        // what this task has: its rows, and how the others can reach its Y
        byte[][] all = ex.allGather(describe(host, pid, dev.ordinal(), handle, st.slices()));
        int[][] ranges = new int[tasks][];
        String[] hosts = new String[tasks];
        long[] pids = new long[tasks];
        int[] ordinals = new int[tasks];
        byte[][] handles = new byte[tasks][];
        for (int t = 0; t < tasks; t++) {
            try (DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(all[t]))) {
                hosts[t] = in.readUTF();
                pids[t] = in.readLong();
                ordinals[t] = in.readInt();
                handles[t] = new byte[in.readInt()];
                in.readFully(handles[t]);
                int k = in.readInt();
                ranges[t] = new int[2 * k];
                for (int i = 0; i < 2 * k; i++) {
                    ranges[t][i] = in.readInt();
                }
            } catch (IOException e) {
                throw new IllegalStateException("t-SNE barrier task " + t + " sent a malformed description", e);
            }
        }
        boolean tryDevice = handle.length > 0;
        for (int t = 0; t < tasks; t++) {
            tryDevice &= handles[t].length > 0 && hosts[t].equals(host);
        }
        CUdeviceptr[] source = null;
        CUcontext[] contexts = null;
        boolean[] opened = new boolean[tasks];
        String why = tryDevice ? null : "not every task can share its device memory on one host";
        if (tryDevice) {
            source = new CUdeviceptr[tasks];
            contexts = new CUcontext[tasks];
            try {
                for (int t = 0; t < tasks; t++) {
                    if (t == me) {
                        continue;
                    }
                    if (pids[t] == pid) { // a task of this executor: copy peer to peer from its buffer
                        DeviceBuffer theirs = LOCAL.get(key + ":" + t);
                        if (theirs == null) {
                            throw new IllegalStateException("task " + t + " of this process has not registered");
                        }
                        source[t] = theirs.pointer();
                        contexts[t] = CudaRuntime.device(ordinals[t]).context();
                    } else {
                        source[t] = openIpc(dev, handles[t]);
                        opened[t] = true;
                    }
                }
            } catch (RuntimeException | LinkageError e) {
                why = "this task could not map another task's memory (" + e + ")";
            }
        }
        // every task must take the same way
        byte[][] verdicts = ex.allGather(new byte[] {(byte) (why == null ? 1 : 0)});
        boolean device = true;
        for (byte[] v : verdicts) {
            device &= v.length == 1 && v[0] == 1;
        }
        if (!device) {
            if (source != null) {
                closeIpc(dev, source, opened);
            }
            LOG.info("spark-gpu t-SNE: task {} of {}: rows of Y through the host ({})", me, tasks,
                    why == null ? "another task could not map this task's memory" : why);
            return new TsnePeers(ex, ctx, st.dim(), ranges, null, null, new boolean[tasks], dev, localKey);
        }
        LOG.info("spark-gpu t-SNE: task {} of {}: rows of Y device to device (GPU {}, peers on GPUs {})", me, tasks,
                dev.ordinal(), java.util.Arrays.toString(ordinals));
        return new TsnePeers(ex, ctx, st.dim(), ranges, source, contexts, opened, dev, localKey);
    }

    /** The test pause of {@link BarrierStages#pauseForTests} before each force evaluation. */
    void beforeEvaluation() {
        BarrierStages.pauseForTests(ctx, "t-SNE force evaluation", ++evaluations);
    }

    /** The exact sums over all tasks of {@code mine}: (lo, hi) pairs of 128-bit fixed-point partial sums. */
    long[] sum(long[] mine) {
        long t0 = System.nanoTime();
        ByteBuffer b = ByteBuffer.allocate(8 * mine.length);
        for (long v : mine) {
            b.putLong(v);
        }
        byte[][] all = ex.allGather(b.array());
        long[] total = new long[mine.length];
        for (byte[] m : all) {
            ByteBuffer in = ByteBuffer.wrap(m);
            if (m.length != 8 * mine.length) {
                throw new IllegalStateException("t-SNE barrier tasks disagree on the partial sums they exchange");
            }
            for (int i = 0; i < mine.length; i += 2) {
                FixedPoint.addPair(total, i, in.getLong(), in.getLong());
            }
        }
        sums++;
        sumNanos += System.nanoTime() - t0;
        return total;
    }

    /**
     * After this task's update of its own rows (its stream synchronised): waits for every task's update, then brings
     * the other tasks' rows into {@code st}'s Y and synchronises.
     */
    void shareRows(TsneDeviceState st) {
        long t0 = System.nanoTime();
        DeviceBuffer y = st.positionsBuffer();
        GpuStream s = st.stream();
        if (source != null) {
            ex.allGather(NOTHING); // every task has updated its rows
            dev.bind();
            for (int t = 0; t < ranges.length; t++) {
                if (t == me) {
                    continue;
                }
                for (int i = 0; i < ranges[t].length; i += 2) {
                    long off = 8L * dim * ranges[t][i];
                    long bytes = 8L * dim * ranges[t][i + 1];
                    if (bytes == 0) {
                        continue;
                    }
                    CUdeviceptr dst = y.pointer().withByteOffset(off);
                    if (sourceContext[t] != null) {
                        JCudaDriver.cuMemcpyPeerAsync(dst, dev.context(), source[t].withByteOffset(off),
                                sourceContext[t], bytes, s.handle());
                    } else {
                        JCudaDriver.cuMemcpyAsync(dst, source[t].withByteOffset(off), bytes, s.handle());
                    }
                }
            }
            s.synchronize("t-SNE rows of the other barrier tasks (device to device)");
        } else {
            int[] own = ranges[me];
            int values = 0;
            for (int i = 0; i < own.length; i += 2) {
                values += own[i + 1] * dim;
            }
            double[] mine = new double[values];
            int at = 0;
            for (int i = 0; i < own.length; i += 2) {
                int len = own[i + 1] * dim;
                y.download(mine, at, len, (long) own[i] * dim, s);
                at += len;
            }
            s.synchronize("t-SNE rows of this barrier task (download)");
            ByteBuffer out = ByteBuffer.allocate(8 * values);
            out.asDoubleBuffer().put(mine);
            byte[][] all = ex.allGather(out.array());
            for (int t = 0; t < all.length; t++) {
                if (t == me) {
                    continue;
                }
                int[] r = ranges[t];
                int expect = 0;
                for (int i = 0; i < r.length; i += 2) {
                    expect += r[i + 1] * dim;
                }
                if (all[t].length != 8 * expect) {
                    throw new IllegalStateException("t-SNE barrier task " + t + " sent " + all[t].length / 8
                            + " coordinates, expected " + expect);
                }
                double[] theirs = new double[expect];
                ByteBuffer.wrap(all[t]).asDoubleBuffer().get(theirs);
                int from = 0;
                for (int i = 0; i < r.length; i += 2) {
                    int len = r[i + 1] * dim;
                    y.upload(theirs, from, len, (long) r[i] * dim, s);
                    from += len;
                }
                s.synchronize("t-SNE rows of barrier task " + t + " (upload)"); // before theirs is collected
            }
        }
        shares++;
        shareNanos += System.nanoTime() - t0;
    }

    /** Closes the IPC mappings this task opened. */
    @Override
    public void close() {
        LOCAL.remove(localKey);
        LOG.info("spark-gpu t-SNE: task {}: {} exact sums in {} s, {} row exchanges ({}) in {} s", me, sums,
                sumNanos / 1e9, shares, source != null ? "device to device" : "through the host", shareNanos / 1e9);
        if (source != null) {
            closeIpc(dev, source, ipcOpened);
        }
    }

    private static byte[] describe(String host, long pid, int ordinal, byte[] handle, List<SparseRows> slices) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeUTF(host);
            out.writeLong(pid);
            out.writeInt(ordinal);
            out.writeInt(handle.length);
            out.write(handle);
            out.writeInt(slices.size());
            for (SparseRows p : slices) {
                out.writeInt(p.rowOffset);
                out.writeInt(p.rows);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return bytes.toByteArray();
    }

    /** This host's identity: the boot id where Linux gives one (one per machine boot), else the host name. */
    private static String hostKey() {
        String name = SparkEnv.get() != null ? SparkEnv.get().blockManager().blockManagerId().host() : "";
        try {
            return Files.readString(Path.of("/proc/sys/kernel/random/boot_id"), StandardCharsets.US_ASCII).trim();
        } catch (IOException | RuntimeException e) {
            return name;
        }
    }

    /** The IPC handle of y's allocation (its bytes), or none when the driver or JCuda cannot give one. */
    private static byte[] ipcHandle(CudaDevice dev, DeviceBuffer y) {
        try {
            dev.bind();
            CUipcMemHandle h = new CUipcMemHandle();
            JCudaDriver.cuIpcGetMemHandle(h, y.pointer());
            byte[] b = (byte[]) handleBytes().get(h);
            return b == null ? NOTHING : b.clone();
        } catch (RuntimeException | ReflectiveOperationException | LinkageError e) {
            LOG.info("spark-gpu t-SNE: no IPC handle for the positions ({}); rows go through the host", e.toString());
            return NOTHING;
        }
    }

    private static CUdeviceptr openIpc(CudaDevice dev, byte[] handle) {
        try {
            dev.bind();
            CUipcMemHandle h = new CUipcMemHandle();
            handleBytes().set(h, handle.clone());
            CUdeviceptr p = new CUdeviceptr();
            JCudaDriver.cuIpcOpenMemHandle(p, h, CUipcMem_flags.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
            return p;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("JCuda's IPC handle is not accessible: " + e, e);
        }
    }

    private static void closeIpc(CudaDevice dev, CUdeviceptr[] source, boolean[] opened) {
        for (int t = 0; t < source.length; t++) {
            if (opened[t] && source[t] != null) {
                try {
                    dev.bind();
                    JCudaDriver.cuIpcCloseMemHandle(source[t]);
                } catch (RuntimeException e) {
                    LOG.warn("spark-gpu t-SNE: closing the IPC mapping of task {} failed: {}", t, e.toString());
                }
                opened[t] = false;
            }
        }
    }

    /** JCuda keeps the handle's 64 bytes in a private field; the driver reads and writes them there. */
    private static Field handleBytes() throws NoSuchFieldException {
        Field f = CUipcMemHandle.class.getDeclaredField("reserved");
        f.setAccessible(true);
        return f;
    }
}
