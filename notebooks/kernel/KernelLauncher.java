import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * jars on the classpath) the kernel binds its sockets and the client connects, but the thread that polls the
 * shell socket never sees a message: Jupyter keeps sending {@code kernel_info_request}, the kernel never
 * answers, and after 60 seconds nbconvert gives up with "Kernel didn't respond". A thread dump shows the shell
 * loop alive and polling; the messages are stuck below it, in the kernel's bundled ZeroMQ. A variant of the same
 * start-up window makes the shell thread die with a NullPointerException in {@code Channels.getHandler} when a
 * request arrives before the kernel has created its handler map.
 *
 * <p>Every Jupyter client asks for {@code kernel_info} as soon as it connects and repeats the request every
 * second until it gets a reply, so a shell channel that has handled nothing a few seconds after binding is
 * stuck. The watchdog then closes the kernel's sockets and binds them again (the client reconnects by itself);
 * the kernel, with its JShell state, is kept. It stops watching after the first shell message.
 *
 * <p>Run by start-kernel.sh in Java's source-file mode ({@code java ... KernelLauncher.java CONNECTION_FILE}), so
 * it needs no build step. It uses only public classes of the kernel.
 */
public class KernelLauncher {
    private static final Logger LOG = Logger.getLogger("KernelLauncher");
    private static final long WATCHDOG_SECONDS = Long.getLong("sparkgpu.kernel.watchdogSeconds", 5);
    private static final int MAX_REBINDS = Integer.getInteger("sparkgpu.kernel.maxRebinds", 10);

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
        for (int rebinds = 0; rebinds < MAX_REBINDS; rebinds++) {
            if (probe.seen.await(WATCHDOG_SECONDS, TimeUnit.SECONDS) || channels.isMarkedForShutdown()) {
                break;
            }
            LOG.warning("the shell channel handled no message " + WATCHDOG_SECONDS + " s after binding; "
                    + "binding the kernel's sockets again (" + (rebinds + 1) + " of at most " + MAX_REBINDS + ")");
            channels.close();
            channels = new Channels(props);
            channels.connect(kernel);
        }
        Logger.getLogger("").removeHandler(probe);
        channels.joinUntilClose();
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
