package io.sparkgpu.pde;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.testutil.KernelHeader;
import org.junit.jupiter.api.Test;

/**
 * The host side of the partitioned tridiagonal solver (PdeEngine's plans) agrees with the kernels' thread budgets and
 * shared-memory layouts (native-kernels/src/main/cuda/include/layout/pde.cuh).
 */
class PdeKernelLayoutTest {

    @Test
    void layoutMatchesTheKernels() {
        KernelHeader h = KernelHeader.load("include/layout/pde.cuh");
        h.assertValue("PDE_PARTITION_MAXT_R4", PdeEngine.partitionMaxThreads(4));
        h.assertValue("PDE_PARTITION_MAXT_R8", PdeEngine.partitionMaxThreads(8));
        h.assertValue("PDE_PARTITION_MAXT_R16", PdeEngine.partitionMaxThreads(16));
        int sms = 132;
        // a plain or cluster block: the PCR buffers alone
        for (int n : new int[] {17, 128, 1000, 1024, 2048, 4096}) {
            int[] plain = PdeEngine.partitionPlan(1000, n, 0, 0, sms);
            assertEquals(8 * h.value("PDE_PCR_DOUBLES") * plain[3], plain[5], "plain plan, n = " + n);
            int[] cluster = PdeEngine.partitionClusterPlan(1000, n, 0, 4, sms);
            assertEquals(8 * h.value("PDE_PCR_DOUBLES") * cluster[3], cluster[5], "cluster plan, n = " + n);
            assertEquals(h.eval("PDE_CHUNKS", n, plain[0]), plain[1], "K, n = " + n + ", R = " + plain[0]);
        }
        // a staged block: the PCR buffers, the four staged arrays and the output
        for (int r : PdeEngine.PARTITION_STAGED_R) {
            for (int n : new int[] {1, 16, 17, 513, 1000, 2048, 4096}) {
                for (int sb : new int[] {1, 2, 4, 32}) {
                    assertEquals(h.eval("PDE_STAGED_SHARED_BYTES", n, r, sb),
                            PdeEngine.partitionStagedShared(n, r, sb), "R = " + r + ", n = " + n + ", SB = " + sb);
                    assertEquals(h.eval("PDE_STAGED_ROWS", n, r, sb), (long) sb * (n + (n + r - 1) / r),
                            "rows, R = " + r + ", n = " + n + ", SB = " + sb);
                }
            }
        }
        h.assertAllCompared();
    }
}
