package io.sparkgpu.cuda;

/** Closing several GPU resources (buffers, events, streams, pinned memory) at once, e.g. on a constructor's failure. */
public final class GpuResources {
    private GpuResources() {
    }

    /**
     * Closes every resource that is not null, in order, all of them even when one throws; the first exception is
     * rethrown at the end (later ones are added to it as suppressed).
     */
    public static void closeAll(AutoCloseable... rs) {
        RuntimeException first = null;
        for (AutoCloseable r : rs) {
            if (r == null) {
                continue;
            }
            try {
                r.close();
            } catch (Exception e) {
                RuntimeException re = e instanceof RuntimeException ? (RuntimeException) e : new IllegalStateException(e);
                if (first == null) {
                    first = re;
                } else {
                    first.addSuppressed(re);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * Closes every resource that is not null after {@code cause} made the caller give up: a failure to close is added
     * to {@code cause} as suppressed, so the original failure stays the one reported.
     */
    public static void closeAfter(Throwable cause, AutoCloseable... rs) {
        try {
            closeAll(rs);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
    }
}
