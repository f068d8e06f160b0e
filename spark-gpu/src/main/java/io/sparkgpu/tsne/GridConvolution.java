package io.sparkgpu.tsne;

import io.sparkgpu.cuda.Backend;

/**
 * G2G: the potentials phi_c(a) = sum_b K(a - b) q_c(b) on the interpolation lattice, K(delta) = (1 + h^2
 * |delta|^2)^-2, h the node spacing, for every charge c. CONTRACT STUB: bodies are filled in by the G2G work;
 * signatures are shared with the optimiser and must stay.
 */
public final class GridConvolution {
    /** Direct summation, FFT, or the faster one for the grid's size. */
    public enum Method { AUTO, DIRECT, FFT }

    private GridConvolution() {
    }

    /** charges and result laid out [charge][node] as in {@link InterpGrid}. */
    public static double[] convolve(InterpGrid grid, double[] charges, Method method, Backend backend) {
        throw new UnsupportedOperationException("GridConvolution.convolve: not implemented yet");
    }
}
