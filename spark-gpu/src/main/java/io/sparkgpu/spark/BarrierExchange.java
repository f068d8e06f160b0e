package io.sparkgpu.spark;

import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkEnv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Per-iteration all-gather of byte arrays among the tasks of one barrier stage. {@link BarrierTaskContext#allGather}
 * polls its RPC future once a second (Spark 3 and 4: {@code Thread.sleep(1000)} until the reply is there), so an
 * iteration that exchanges through it costs about a second whatever its size. {@link #promptAllGather} wakes that
 * sleep every {@value #POKE_MS} ms instead (the setup of every several-task fit cost a second: 1.15 s of a 5.8 s
 * k-means fit on 2 H200s). This class uses allGather once,
 * at setup, to pass task 0's address (task 0 then tells every task over its socket whether all connected); then
 * each gather is one round trip
 * over plain TCP through task 0 (a star: the others send their bytes, task 0 sends back all of them), which costs
 * the transfer time only. Task 0 listens on an ephemeral port of its block manager's host; a connection proves
 * itself with the stage's random token (passed in the task closure). When a task cannot connect, or Spark's RPC
 * encryption is on (this channel is not encrypted), every gather goes through allGather instead (same result,
 * about a second each). Reads wake once a second to honour a kill of the task; a peer that fails closes its
 * sockets, so the others fail too and Spark reruns the stage.
 */
public final class BarrierExchange implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BarrierExchange.class);
    /** Longest wait for a peer's bytes (an iteration of the slowest task), ms. */
    static final long READ_TIMEOUT_MS = 30L * 60 * 1000;
    private static final int CONNECT_TIMEOUT_MS = 30_000;

    private final BarrierTaskContext ctx;
    private final int tasks;
    private final int me;
    private final boolean sockets;
    /** Task 0: the socket of each other task (index = partition id); others: [0] = the socket to task 0. */
    private final Socket[] peers;
    private final DataOutputStream[] outs;

    private BarrierExchange(BarrierTaskContext ctx, int tasks, int me, boolean sockets, Socket[] peers) throws IOException {
        this.ctx = ctx;
        this.tasks = tasks;
        this.me = me;
        this.sockets = sockets;
        this.peers = peers;
        this.outs = new DataOutputStream[peers.length];
        if (sockets) {
            for (int i = 0; i < peers.length; i++) {
                if (peers[i] != null) {
                    outs[i] = new DataOutputStream(new BufferedOutputStream(peers[i].getOutputStream(), 1 << 20));
                }
            }
        }
    }

    /**
     * Sets up the exchange of the calling barrier task; every task of the stage must call it (it gathers once).
     *
     * @param token random, unique to the stage (e.g. a UUID in the task closure)
     */
    public static BarrierExchange open(BarrierTaskContext ctx, String token) {
        int tasks = ctx.getTaskInfos().length;
        int me = ctx.partitionId();
        if (tasks == 1) {
            return create(ctx, 1, 0, false, new Socket[0]);
        }
        boolean crypto = SparkEnv.get() != null && SparkEnv.get().conf().getBoolean("spark.network.crypto.enabled", false);
        ServerSocket server = null;
        String address = "";
        if (me == 0 && !crypto) {
            try {
                server = new ServerSocket();
                server.bind(new InetSocketAddress(0), tasks);
                server.setSoTimeout(CONNECT_TIMEOUT_MS);
                address = SparkEnv.get().blockManager().blockManagerId().host() + ":" + server.getLocalPort();
            } catch (IOException e) {
                LOG.warn("spark-gpu barrier exchange: cannot listen ({}); using allGather", e.toString());
                closeQuietly(server);
                server = null;
            }
        }
        String[] addresses = promptAllGather(ctx, address);
        Socket[] peers = new Socket[me == 0 ? tasks : 1];
        boolean ok = !addresses[0].isEmpty();
        if (ok) {
            try {
                if (me == 0) { // a task that cannot connect makes this accept time out: then all use allGather
                    for (int c = 1; c < tasks; c++) {
                        Socket s = server.accept();
                        s.setTcpNoDelay(true);
                        s.setSoTimeout(1000);
                        byte[] hello = readFully(ctx, s.getInputStream(), new byte[4 + token.length()]);
                        int who = ((hello[0] & 0xff) << 24) | ((hello[1] & 0xff) << 16) | ((hello[2] & 0xff) << 8)
                                | (hello[3] & 0xff);
                        String got = new String(hello, 4, hello.length - 4, StandardCharsets.US_ASCII);
                        if (!got.equals(token) || who < 1 || who >= tasks || peers[who] != null) {
                            s.close();
                            c--; // not one of ours: wait for the next connection
                            continue;
                        }
                        peers[who] = s;
                    }
                } else {
                    int colon = addresses[0].lastIndexOf(':');
                    Socket s = new Socket();
                    s.connect(new InetSocketAddress(addresses[0].substring(0, colon),
                            Integer.parseInt(addresses[0].substring(colon + 1))), CONNECT_TIMEOUT_MS);
                    s.setTcpNoDelay(true);
                    s.setSoTimeout(1000);
                    DataOutputStream o = new DataOutputStream(s.getOutputStream());
                    o.writeInt(me);
                    o.write(token.getBytes(StandardCharsets.US_ASCII));
                    o.flush();
                    peers[0] = s;
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("spark-gpu barrier exchange: task {} could not connect ({}); using allGather", me, e.toString());
                ok = false;
            }
        }
        closeQuietly(server);
        // the verdict: task 0 tells every connected task whether all connected; a task that could not connect
        // knows it already (so only one allGather is spent on the setup, each costing about a second)
        boolean all = ok;
        try {
            if (me == 0) {
                for (int t = 1; t < tasks; t++) {
                    if (peers[t] != null) {
                        peers[t].getOutputStream().write(ok ? 1 : 0);
                        peers[t].getOutputStream().flush();
                    }
                }
            } else if (ok) {
                all = readFully(ctx, peers[0].getInputStream(), new byte[1])[0] == 1;
            }
        } catch (IOException e) {
            LOG.warn("spark-gpu barrier exchange: task {} lost its connection at setup ({})", me, e.toString());
            // this task cannot go on: it fails, as will the stage (Spark reruns it)
            for (Socket s : peers) {
                closeQuietly(s);
            }
            throw new IllegalStateException("spark-gpu barrier exchange: setup failed in task " + me + ": " + e, e);
        }
        if (!all) {
            for (Socket s : peers) {
                closeQuietly(s);
            }
        }
        return create(ctx, tasks, me, all, peers);
    }

    private static BarrierExchange create(BarrierTaskContext ctx, int tasks, int me, boolean sockets, Socket[] peers) {
        try {
            return new BarrierExchange(ctx, tasks, me, sockets, peers);
        } catch (IOException e) {
            for (Socket s : peers) {
                closeQuietly(s);
            }
            throw new IllegalStateException("spark-gpu barrier exchange: " + e, e);
        }
    }

    /** Whether gathers use the task sockets (else allGather). */
    public boolean usesSockets() {
        return sockets;
    }

    /** Every task's bytes, indexed by partition id; every task must call it equally often. */
    public byte[][] allGather(byte[] mine) {
        byte[][] all = new byte[tasks][];
        if (tasks == 1) {
            all[0] = mine;
            return all;
        }
        if (!sockets) {
            String[] got = promptAllGather(ctx, Base64.getEncoder().encodeToString(mine));
            for (int t = 0; t < tasks; t++) {
                all[t] = Base64.getDecoder().decode(got[t]);
            }
            return all;
        }
        try {
            if (me == 0) {
                all[0] = mine;
                for (int t = 1; t < tasks; t++) {
                    all[t] = readMessage(peers[t].getInputStream());
                }
                for (int t = 1; t < tasks; t++) {
                    for (byte[] m : all) {
                        outs[t].writeInt(m.length);
                        outs[t].write(m);
                    }
                    outs[t].flush();
                }
            } else {
                outs[0].writeInt(mine.length);
                outs[0].write(mine);
                outs[0].flush();
                InputStream in = peers[0].getInputStream();
                for (int t = 0; t < tasks; t++) {
                    all[t] = readMessage(in);
                }
            }
            return all;
        } catch (IOException e) {
            throw new IllegalStateException("spark-gpu barrier exchange failed in task " + me + ": " + e, e);
        }
    }

    /** How often {@link #promptAllGather} wakes Spark's polling sleep, ms. */
    static final long POKE_MS = 2;

    /**
     * {@code ctx.allGather(message)} without its one-second poll. Spark's {@code runBarrier} sends the request, then
     * loops {@code while (!future.isCompleted) Thread.sleep(1000)}, catching {@link InterruptedException} and then
     * checking whether the task was killed (its kill flag, not the thread's interrupt flag). A helper thread
     * interrupts the calling thread every {@value #POKE_MS} ms while the call lasts, so the loop sees the reply within
     * a few ms. The request is sent asynchronously (nothing in the caller blocks on I/O), and the caller's interrupt
     * flag is cleared when the call returns, then set again if the task was in fact killed meanwhile.
     */
    static String[] promptAllGather(BarrierTaskContext ctx, String message) {
        Thread caller = Thread.currentThread();
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        Thread poker = new Thread(() -> {
            try {
                while (!done.get()) {
                    Thread.sleep(POKE_MS);
                    if (!done.get()) {
                        caller.interrupt();
                    }
                }
            } catch (InterruptedException e) {
                // stopped
            }
        }, "spark-gpu barrier poke " + ctx.partitionId());
        poker.setDaemon(true);
        poker.start();
        try {
            return ctx.allGather(message);
        } finally {
            done.set(true);
            poker.interrupt();
            boolean joined = false;
            while (!joined) {
                try {
                    poker.join();
                    joined = true;
                } catch (InterruptedException e) {
                    // a late poke: the flag is cleared below
                }
            }
            Thread.interrupted();
            if (ctx.isInterrupted()) {
                caller.interrupt(); // the task was killed: keep the interrupt for whoever checks it next
            }
        }
    }

    private byte[] readMessage(InputStream in) throws IOException {
        byte[] h = readFully(ctx, in, new byte[4]);
        int len = ((h[0] & 0xff) << 24) | ((h[1] & 0xff) << 16) | ((h[2] & 0xff) << 8) | (h[3] & 0xff);
        if (len < 0) {
            throw new IOException("bad message length " + len);
        }
        return readFully(ctx, in, new byte[len]);
    }

    /** Reads b fully, waking every second (socket timeout) to let a killed task stop. */
    private static byte[] readFully(BarrierTaskContext ctx, InputStream in, byte[] b) throws IOException {
        long deadline = System.currentTimeMillis() + READ_TIMEOUT_MS;
        int off = 0;
        while (off < b.length) {
            try {
                int r = in.read(b, off, b.length - off);
                if (r < 0) {
                    throw new EOFException("a peer task closed its connection");
                }
                off += r;
            } catch (SocketTimeoutException e) {
                ctx.killTaskIfInterrupted();
                if (System.currentTimeMillis() > deadline) {
                    throw new IOException("no data from a peer task for " + READ_TIMEOUT_MS / 1000 + " s");
                }
            }
        }
        return b;
    }

    @Override
    public void close() {
        for (Socket s : peers) {
            closeQuietly(s);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.debug("close failed", e);
            }
        }
    }
}
