import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.rapaio.jupyter.kernel.MainApp;
import org.rapaio.jupyter.kernel.channels.Channels;
import org.rapaio.jupyter.kernel.core.ConnectionProperties;
import org.rapaio.jupyter.kernel.core.RapaioKernel;
import org.rapaio.jupyter.kernel.core.Transform;

/**
 * Starts the rapaio Java kernel (3.0.1) the way its {@code MainApp} does, plus a watchdog for a start-up hang.
 *
 * <p>In roughly one start out of five (seen with nbconvert on Debian's jupyter-client 7.4, with and without our
 * jars on the classpath, and also when the client connects seconds after the kernel is up) the client's shell
 * connection is established but the thread that polls the kernel's shell socket never sees a message: Jupyter
 * keeps sending {@code kernel_info_request}, the kernel never answers, and after 60 seconds nbconvert gives up
 * with "Kernel didn't respond". A thread dump shows the shell loop alive and polling; the messages are stuck
 * below it, in the kernel's bundled ZeroMQ (JeroMQ 0.6.0). A variant makes the shell thread die with a
 * NullPointerException in {@code Channels.getHandler} when a request arrives before the kernel has created its
 * handler map.
 *
 * <p>Every Jupyter client asks for {@code kernel_info} right after it connects and, while it waits for the
 * kernel, repeats the request every second. So until the shell channel has handled its first message, the
 * watchdog checks every second whether a client is connected to the shell port (Linux: /proc/net/tcp6 and
 * /proc/net/tcp); when one has been connected for {@link #STUCK_SECONDS} seconds without a message getting
 * through, it closes the kernel's sockets and binds them again, and the client reconnects by itself. The kernel,
 * with its JShell state, is kept. Where /proc cannot be read it rebinds whenever no message came for that long.
 * Once a message got through it stops watching: a later connection that hits the same problem (a browser tab
 * reopened on a running kernel) needs a kernel restart.
 *
 * <p>Run by start-kernel.sh in Java's source-file mode ({@code java ... KernelLauncher.java CONNECTION_FILE}), so
 * it needs no build step. It uses only public classes of the kernel.
 */
public class KernelLauncher {
    private static final Logger LOG = Logger.getLogger("KernelLauncher");
    static final long STUCK_SECONDS = Long.getLong("sparkgpu.kernel.stuckSeconds", 5);
    static final int MAX_REBINDS = Integer.getInteger("sparkgpu.kernel.maxRebinds", 20);

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            throw new IllegalArgumentException("usage: KernelLauncher CONNECTION_FILE");
        }
        // MainApp's static initialiser builds the kernel (and its JShell); Global.display() uses MainApp.kernel.
        RapaioKernel kernel = MainApp.kernel;
        try (InputStream in = MainApp.class.getClassLoader().getResourceAsStream("logging.properties")) {
            if (in != null) {
                LogManager.getLogManager().readConfiguration(in);
            }
        }
        Path file = Path.of(args[0]);
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("connection file " + file + " is not a file");
        }
        ConnectionProperties props = Transform.fromJson(Files.readString(file), ConnectionProperties.class);
        if ("ipc".equals(props.transport())) {
            LOG.severe("ipc transport is not supported by the rapaio kernel");
        }

        ShellProbe probe = new ShellProbe();
        Logger.getLogger("").addHandler(probe);
        Channels channels = new Channels(props);
        channels.connect(kernel);
        int rebinds = 0;
        long stuckSince = System.nanoTime();
        while (!probe.seen.await(1, TimeUnit.SECONDS) && !channels.isMarkedForShutdown() && rebinds < MAX_REBINDS) {
            int clients = connectionsTo(props.shellPort());
            if (clients == 0) {
                stuckSince = System.nanoTime();  // nobody is talking to the kernel yet: nothing can be stuck
                continue;
            }
            if (System.nanoTime() - stuckSince < TimeUnit.SECONDS.toNanos(STUCK_SECONDS)) {
                continue;
            }
            rebinds++;
            LOG.warning("the shell channel handled no message although a client has been connected for "
                    + STUCK_SECONDS + " s; binding the kernel's sockets again (" + rebinds + " of at most "
                    + MAX_REBINDS + ")");
            channels.close();
            channels = new Channels(props);
            channels.connect(kernel);
            stuckSince = System.nanoTime();
        }
        Logger.getLogger("").removeHandler(probe);
        channels.joinUntilClose();
    }

    /**
     * Established TCP connections whose local port is {@code port}, from /proc/net/tcp6 and /proc/net/tcp; 1 when
     * those cannot be read (then the watchdog assumes a client is there).
     */
    static int connectionsTo(int port) {
        String localPort = String.format(":%04X", port);
        int n = 0;
        boolean read = false;
        for (String table : new String[] {"/proc/net/tcp6", "/proc/net/tcp"}) {
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(table));
            } catch (IOException | RuntimeException e) {
                continue;
            }
            read = true;
            for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                String[] f = line.trim().split("\\s+");
                // sl local_address rem_address st ...; state 01 is ESTABLISHED
                if (f.length > 3 && f[1].endsWith(localPort) && f[3].equals("01")) {
                    n++;
                }
            }
        }
        return read ? n : 1;
    }

    /** Notices the shell channel's log line for the first message it takes ("Handling"/"Unhandled message"). */
    static final class ShellProbe extends Handler {
        final CountDownLatch seen = new CountDownLatch(1);

        ShellProbe() {
            setLevel(Level.ALL);
        }

        @Override
        public void publish(LogRecord r) {
            String m = r.getMessage();
            if (m != null && m.startsWith("[ShellChannel]") && m.contains(" message")) {
                seen.countDown();
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }
}
