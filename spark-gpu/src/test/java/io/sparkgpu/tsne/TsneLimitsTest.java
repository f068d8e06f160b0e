package io.sparkgpu.tsne;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Limits of t-SNE checked up front, naming the column and the limit (issue 18 item 4); no data needed. */
class TsneLimitsTest {
    @Test
    void singleModeRefusesMoreFeatureValuesThanOneDriverArrayHolds() {
        long max = TsneTrainer.SINGLE_MODE_MAX_VALUES;
        assertDoesNotThrow(() -> TsneTrainer.checkSingleModeSize(max, 1, "f"));
        assertDoesNotThrow(() -> TsneTrainer.checkSingleModeSize(1_000_000, 2000, "f"));
        // 1,000,000 x 3,000 overflowed an int (a NegativeArraySizeException) before this check
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TsneTrainer.checkSingleModeSize(1_000_000, 3000, "f"));
        assertTrue(e.getMessage().startsWith("featuresCol 'f': 1000000 rows x 3000 dimensions = 3000000000 values, "
                + "more than single mode's " + max) && e.getMessage().contains("mode=distributed"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> TsneTrainer.checkSingleModeSize(max + 1, 1, "f"));
    }
}
