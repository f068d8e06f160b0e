package io.sparkgpu.tsne.repulsion;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.tsne.TsneGridOptions;
import org.junit.jupiter.api.Test;

/** InterpGrid is public: it must refuse what the kernels cannot hold (p above TSNE_MAX_P) with the setting's rule. */
class InterpGridRulesTest {
    @Test
    void nodesPerIntervalFollowTheOneRule() {
        assertDoesNotThrow(() -> new InterpGrid(2, 4, TsneGridOptions.MAX_P, new double[] {0, 0}, 1.0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new InterpGrid(2, 4, TsneGridOptions.MAX_P + 1, new double[] {0, 0}, 1.0));
        assertTrue(e.getMessage().contains("gridNodesPerInterval must be in 1..8, got 9"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new InterpGrid(2, 4, 0, new double[] {0, 0}, 1.0));
    }
}
