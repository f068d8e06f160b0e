package io.sparkgpu.common;

import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one progress reporter of long jobs (k-means iterations, isotonic phases, scan replicas, t-SNE checkpoints):
 * one line per step, on the driver, through the SLF4J logger {@value #LOGGER} at INFO, each with the elapsed time
 * and, when the number of steps is known, an estimate of what remains (elapsed / done x left: the steps are taken
 * to cost alike). The CLI prints these lines on its console ({@link #setSink}) unless {@code --quiet}; in a library
 * or under spark-submit without the CLI they follow the log configuration (turn them off with {@code logger.progress.name = io.sparkgpu.progress},
 * {@code logger.progress.level = warn}). Not for executors: a task's steps are not the job's.
 */
public final class Progress {
    /** The logger every progress line goes to. */
    public static final String LOGGER = "io.sparkgpu.progress";
    private static final Logger LOG = LoggerFactory.getLogger(LOGGER);
    /** Where the lines go instead of the logger (the CLI's console, or nowhere under --quiet); null: the logger. */
    private static volatile Consumer<String> sink;

    private final String task;
    private final long total;
    private final LongSupplier nanos;
    private final long t0;

    /**
     * Sends every progress line of this JVM to {@code to} instead of the logger ({@code line -> { }} silences them);
     * null restores the logger. The CLI uses it for its console and {@code --quiet}.
     */
    public static void setSink(Consumer<String> to) {
        sink = to;
    }

    /**
     * Starts reporting {@code task} (e.g. "k-means") of {@code total} steps (0: unknown) from now.
     */
    public static Progress start(String task, long total) {
        return start(task, total, System::nanoTime);
    }

    /** {@link #start} with a given clock, for tests. */
    static Progress start(String task, long total, LongSupplier nanos) {
        return new Progress(task, total, nanos, nanos.getAsLong());
    }

    /**
     * Reports that {@code done} of the steps are finished; {@code what} names the kind of step (e.g. "iteration",
     * "phase"), {@code detail} adds what was done or its numbers (may be empty). Returns the line, also sent to the
     * sink, else logged at INFO: {@code task: what done/total (detail), E elapsed, about L left} (", done" at the
     * last step; without a total: {@code task: what done (detail), E elapsed}).
     */
    public String step(long done, String what, String detail) {
        double elapsed = elapsedSeconds();
        StringBuilder sb = new StringBuilder(task).append(": ").append(what);
        if (total > 0) {
            sb.append(' ').append(done).append('/').append(total);
        } else if (done > 0) {
            sb.append(' ').append(done);
        }
        if (detail != null && !detail.isEmpty()) {
            sb.append(" (").append(detail).append(')');
        }
        sb.append(", ").append(seconds(elapsed)).append(" elapsed");
        if (total > 0 && done > 0 && done <= total) {
            sb.append(done == total ? ", done" : ", about " + seconds(elapsed / done * (total - done)) + " left");
        }
        String line = sb.toString();
        Consumer<String> to = sink;
        if (to != null) {
            to.accept(line);
        } else {
            LOG.info(line);
        }
        return line;
    }

    /** This reporter with {@code total} steps (when the number becomes known after a start); same start time. */
    public Progress withTotal(long total) {
        return new Progress(task, total, nanos, t0);
    }

    private Progress(String task, long total, LongSupplier nanos, long t0) {
        this.task = task;
        this.total = total;
        this.nanos = nanos;
        this.t0 = t0;
    }

    /** Seconds since {@link #start}. */
    public double elapsedSeconds() {
        return (nanos.getAsLong() - t0) / 1e9;
    }

    static String seconds(double s) {
        if (s < 59.95) { // what %.1f would print as 60.0 is a minute
            return String.format(Locale.ROOT, "%.1f s", s);
        }
        long m = (long) (s / 60);
        return String.format(Locale.ROOT, "%d min %02d s", m, Math.round(s - 60 * m) % 60);
    }
}
