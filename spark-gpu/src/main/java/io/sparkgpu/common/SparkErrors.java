package io.sparkgpu.common;

import io.sparkgpu.cuda.CudaException;

/**
 * Spark wraps an exception thrown inside a task in a {@code SparkException} (a checked exception that
 * Scala code throws undeclared) whose message is a long task failure report. Input errors detected on
 * executors (e.g. a NaN feature) should reach the user as the {@link IllegalArgumentException} that names
 * the column, so entry points call {@code throw SparkErrors.unwrap(e)} in a {@code catch (Exception e)}.
 */
public final class SparkErrors {
    private SparkErrors() {
    }

    /**
     * The first IllegalArgumentException in the cause chain (re-created with the original as cause); else the
     * first {@link CudaException} (backend {@code gpu} and a GPU that failed in a task: it names
     * the phase), likewise; otherwise {@code e} itself, rethrown unchanged even when it is a checked exception.
     */
    public static RuntimeException unwrap(Exception e) {
        Throwable t = e;
        for (int depth = 0; t != null && depth < 20; depth++, t = t.getCause()) {
            if (t instanceof IllegalArgumentException) {
                return t == e ? (IllegalArgumentException) e : new IllegalArgumentException(t.getMessage(), e);
            }
        }
        t = e;
        for (int depth = 0; t != null && depth < 20; depth++, t = t.getCause()) {
            if (t instanceof CudaException) {
                return t == e ? (CudaException) e : new CudaException(t.getMessage(), e);
            }
        }
        if (e instanceof RuntimeException) {
            return (RuntimeException) e;
        }
        throw SparkErrors.<RuntimeException>sneaky(e);
    }

    @SuppressWarnings("unchecked")
    private static <T extends Exception> T sneaky(Exception e) throws T {
        throw (T) e;
    }
}
