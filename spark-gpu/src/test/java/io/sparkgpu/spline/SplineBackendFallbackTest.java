package io.sparkgpu.spline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendFaults;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.spline.SplineConfig.Extrapolate;
import io.sparkgpu.spline.SplineConfig.Kind;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The backend policy for splines, on any machine: a device failure injected into a phase under {@code auto} gives
 * the CPU twin's bits and reports the CPU with the reason; under {@code gpu} it is an error naming the phase.
 */
class SplineBackendFallbackTest {

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void autoGivesTheCpuBitsAndGpuFails(String fault) {
        double[][] d = SplineCpuTest.smoothData(200, 1);
        double[] z = new java.util.Random(2).doubles(1000, d[0][0], d[0][199]).toArray();
        Spline ref = SplineCpu.build(Kind.RATIONAL, d[0], d[1], null);
        double[] refV = new double[z.length];
        SplineCpu.eval(ref, z, Extrapolate.CLIP, refV, null);
        double[] refI = new double[z.length];
        SplineCpu.inverse(ref, refV, Extrapolate.CLIP, refI);
        try (BackendFaults f = BackendFaults.of(fault, SplineGpu.MODULE)) {
            BackendChooser.Ran<Spline> b = SplineStep.build(Backend.AUTO, Kind.RATIONAL, d[0], d[1], null);
            assertEquals("cpu", b.backend());
            assertTrue(b.fallbackReason() != null && !b.fallbackReason().isEmpty());
            assertTrue(ref.sameBits(b.value));
            double[] v = new double[z.length];
            assertEquals("cpu", SplineStep.eval(Backend.AUTO, b.value, z, Extrapolate.CLIP, v, null).backend());
            assertArrayEquals(refV, v, 0.0);
            double[] inv = new double[z.length];
            assertEquals("cpu", SplineStep.inverse(Backend.AUTO, b.value, v, Extrapolate.CLIP, inv).backend());
            assertArrayEquals(refI, inv, 0.0);
            CudaException e = assertThrows(CudaException.class,
                    () -> SplineStep.eval(Backend.GPU, ref, z, Extrapolate.CLIP, new double[z.length], null));
            assertTrue(e.getMessage().contains(SplineStep.EVAL), e.getMessage());
            assertTrue(f.fired() >= 4);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"auto", "cpu"})
    void userErrorsAreNotRetried(String backend) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SplineStep.build(
                Backend.parse(backend, "backend"), Kind.SCHUMAKER, new double[] {0, 1, 2}, new double[] {0, 2, 1},
                null));
        assertTrue(e.getMessage().startsWith("y must be monotone"), e.getMessage());
    }
}
