package io.sparkgpu.cuda;

/** A CUDA driver error, or a GPU that cannot be used when the backend policy requires one. */
public class CudaException extends RuntimeException {
    public CudaException(String message) {
        super(message);
    }

    public CudaException(String message, Throwable cause) {
        super(message, cause);
    }
}
